//! The read path: pinning a block, reading it in on a miss, and mapping
//! the new blocks of an extension ([`BufferPool::install_new`]).
//!
//! # Reading a block (PostgreSQL's `ReadBuffer` / `BufferAlloc`)
//!
//! 0. With `buffer.lookup_hints`, first try the buffer the tag's hint
//!    names: pin it (one CAS, as step 1 does) and keep the pin if it is
//!    `TAG_VALID` with this tag — a hit that took no mapping-partition
//!    lock; else unpin, and go on to step 1. This is sound because a
//!    buffer is re-tagged only by a victim search, which pins it and then,
//!    under the mapping partition and the header lock, goes on only if its
//!    own pin is the only one (`victim.rs`): a pin taken before that check
//!    makes the search give the buffer up, a pin taken after it sees the
//!    buffer not `TAG_VALID` (or, after step 3, holding the new tag, which
//!    the pin's `Acquire` read makes visible). PostgreSQL 14's
//!    `ReadRecentBuffer` checks under the header lock instead; a spinlock
//!    that every hot lookup took would stall whoever needs it behind a
//!    preempted holder. A passing pin on a stale buffer can make a victim
//!    search skip that buffer once, and raises its usage count as any pin
//!    does — it never returns a wrong page.
//! 1. Take the tag's mapping partition shared; if the tag is mapped, pin
//!    the buffer *while still holding the partition lock* (so it cannot be
//!    re-tagged in between), release, and wait for or perform the read-in
//!    if it is not yet `VALID`. That is a hit.
//! 2. Otherwise (a miss) get a victim: a buffer pinned only by us, clean
//!    and unmapped ([`BufferPool::victim`], in `victim.rs`): free list or clock sweep (or
//!    the caller's ring), a dirty one written back first, its old mapping
//!    entry removed under the old partition lock.
//! 3. Take the tag's partition exclusive: if someone mapped the tag
//!    meanwhile, use theirs and give the victim back; else insert
//!    `tag → victim`, re-tag it (`TAG_VALID`, not `VALID`) under its
//!    header lock, release.
//! 4. Read the page in under the buffer's I/O lock, verify its checksum,
//!    set `VALID`.

use super::desc::{refcount, BufferId, DIRTY, IO_ERROR, IO_IN_PROGRESS, TAG_VALID, USAGE_MASK, USAGE_ONE, VALID};
use super::guard::{NewBuffer, PinnedBuffer, Victim};
use super::pool::BufferPool;
use super::ring::Ring;
use crate::error::{PageError, Result, StorageError};
use crate::page::{self, PageBuf, VerifyFailure};
use crate::rel::{BlockNumber, BufferTag, Fork, RelFileId};
use crate::stats::Counter;

impl BufferPool {
    /// Pins block `tag`, reading it in if needed.
    pub fn read_buffer(&self, tag: BufferTag) -> Result<PinnedBuffer<'_>> {
        self.read_buffer_with(tag, None)
    }

    /// Pins block `tag`; a miss takes its victim from `ring` when given.
    pub fn read_buffer_with(&self, tag: BufferTag, ring: Option<&mut Ring>) -> Result<PinnedBuffer<'_>> {
        let with_ring = ring.is_some();
        if let Some(buf) = self.lookup(tag, with_ring) {
            self.counters.add(Counter::Hits, 1);
            self.make_valid(&buf)?;
            return Ok(buf);
        }
        self.counters.add(Counter::Misses, 1);
        let nblocks = self.store.nblocks(tag.rel, tag.fork)?;
        if tag.block >= nblocks {
            return Err(StorageError::BlockOutOfRange { rel: tag.rel, fork: tag.fork, block: tag.block, nblocks });
        }
        let victim = self.victim(ring)?;
        let buf = match self.install(victim, tag, TAG_VALID) {
            Ok(buf) => buf,
            Err(existing) => existing,
        };
        self.make_valid(&buf)?;
        Ok(buf)
    }

    /// Pins `tag`'s buffer if the tag is mapped (steps 0 and 1).
    fn lookup(&self, tag: BufferTag, with_ring: bool) -> Option<PinnedBuffer<'_>> {
        if let Some(id) = self.mapping.hint(&tag) {
            if let Some(buf) = self.pin_recent(tag, id, with_ring) {
                self.counters.add(Counter::HintHits, 1);
                return Some(buf);
            }
        }
        let map = self.mapping.partition(&tag).lock_shared();
        let id = *map.get(&tag)?;
        self.mapping.remember(&tag, id);
        let desc = &self.descs[id as usize];
        let _state = desc.pin(with_ring);
        // Paired with the check in `PinnedBuffer::drop`: the pin is taken on
        // a buffer mapped to `tag`, and it keeps it so until the unpin.
        debug_assert!(
            _state & TAG_VALID != 0 && desc.tag() == tag,
            "mapping names buffer {id}, which holds another block"
        );
        drop(map);
        Some(PinnedBuffer { pool: self, id, tag })
    }

    /// Step 0: pins buffer `id` and keeps the pin if the buffer holds
    /// `tag` (`TAG_VALID`); otherwise unpins it again: `None`, the hint
    /// was stale.
    #[inline]
    fn pin_recent(&self, tag: BufferTag, id: BufferId, with_ring: bool) -> Option<PinnedBuffer<'_>> {
        let desc = self.descs.get(id as usize)?;
        let state = desc.pin(with_ring);
        // The pin's CAS read the state (Acquire) after the header unlock
        // that published the tag; from now on the tag cannot change.
        if state & TAG_VALID != 0 && desc.tag() == tag {
            return Some(PinnedBuffer { pool: self, id, tag });
        }
        desc.unpin();
        None
    }

    /// Maps `tag` to `victim` and re-tags it with `flags` (step 3); if the
    /// tag got mapped meanwhile, pins that buffer instead and frees the
    /// victim (`Err`).
    pub(super) fn install<'a>(
        &'a self,
        victim: Victim<'a>,
        tag: BufferTag,
        flags: u32,
    ) -> Result<PinnedBuffer<'a>, PinnedBuffer<'a>> {
        let mut map = self.lock_mapping_exclusive(&tag);
        if let Some(&id) = map.get(&tag) {
            self.descs[id as usize].pin(false);
            drop(map);
            drop(victim);
            return Err(PinnedBuffer { pool: self, id, tag });
        }
        map.insert(tag, victim.id);
        self.mapping.remember(&tag, victim.id);
        let desc = &self.descs[victim.id as usize];
        let mut h = desc.lock_header();
        debug_assert_eq!(h.state & (TAG_VALID | VALID | DIRTY), 0, "installing a mapped buffer");
        // A lookup following a stale hint may hold a passing pin on the
        // victim (it sees it not `TAG_VALID`, or holding another tag, and
        // unpins): at least our own.
        debug_assert!(refcount(h.state) >= 1, "a victim that is not pinned");
        h.set_tag(tag);
        h.state = (h.state & !(USAGE_MASK | IO_ERROR | VALID | DIRTY)) | flags | USAGE_ONE;
        drop(h);
        drop(map);
        Ok(victim.into_pinned(tag))
    }

    /// Waits for, or performs, the read-in of a pinned buffer (step 4).
    #[inline]
    pub(super) fn make_valid(&self, buf: &PinnedBuffer<'_>) -> Result<()> {
        if self.descs[buf.id as usize].load() & VALID != 0 {
            return Ok(());
        }
        self.make_valid_slow(buf)
    }

    #[cold]
    fn make_valid_slow(&self, buf: &PinnedBuffer<'_>) -> Result<()> {
        let desc = &self.descs[buf.id as usize];
        // Whoever does I/O on the buffer holds `io`: queueing on it is
        // waiting for that I/O; getting it with the buffer still not valid
        // means the I/O is ours to do (the previous one failed, or none ran).
        let _io = desc.io.lock_exclusive();
        if desc.load() & VALID != 0 {
            return Ok(());
        }
        desc.lock_header().state |= IO_IN_PROGRESS;
        let mut content = desc.content.lock_exclusive();
        let tag = buf.tag;
        let result = self.store.read_page(tag, &mut content).and_then(|()| self.verify(tag, &content));
        drop(content);
        let mut h = desc.lock_header();
        debug_assert!(h.state & IO_IN_PROGRESS != 0, "IO_IN_PROGRESS cleared under the I/O lock's holder");
        h.state &= !IO_IN_PROGRESS;
        match result {
            Ok(()) => {
                h.state = (h.state & !IO_ERROR) | VALID;
                drop(h);
                self.counters.add(Counter::Reads, 1);
                Ok(())
            }
            Err(e) => {
                h.state |= IO_ERROR;
                Err(e)
            }
        }
    }

    fn verify(&self, tag: BufferTag, page: &PageBuf) -> Result<()> {
        page::verify(page, tag.block).map_err(|failure| {
            let file = self.store.file_name(tag);
            let (rel, fork, block) = (tag.rel, tag.fork, tag.block);
            StorageError::Page(match failure {
                VerifyFailure::Checksum { stored, computed } => {
                    PageError::ChecksumMismatch { rel, fork, block, file, stored, computed }
                }
                VerifyFailure::Header(reason) => PageError::BadHeader { rel, fork, block, file, reason },
            })
        })
    }

    /// Maps each victim to the next block from `first`, marked
    /// `IO_IN_PROGRESS` with its I/O lock held by the returned
    /// [`NewBuffer`] until the page is initialised, so a concurrent reader
    /// of the new block waits for that. A reader that saw the new length
    /// may have mapped one of the blocks first (it read a zero page): that
    /// buffer is used instead and the victim given back.
    pub(crate) fn install_new<'a>(
        &'a self,
        victims: Vec<Victim<'a>>,
        rel: RelFileId,
        fork: Fork,
        first: BlockNumber,
    ) -> Vec<NewBuffer<'a>> {
        let mut out = Vec::with_capacity(victims.len());
        for (i, victim) in victims.into_iter().enumerate() {
            let tag = BufferTag::new(rel, fork, first + i as BlockNumber);
            let desc = &self.descs[victim.id as usize];
            let io = desc.io.lock_exclusive();
            match self.install(victim, tag, TAG_VALID | IO_IN_PROGRESS) {
                Ok(buf) => out.push(NewBuffer { buf, io: Some(io) }),
                Err(existing) => {
                    drop(io);
                    out.push(NewBuffer { buf: existing, io: None });
                }
            }
        }
        out
    }
}
