//! The buffer pool: reading blocks into shared buffers, pinning them,
//! locking their contents, writing dirty victims back, and flushing.
//!
//! # Reading a block (PostgreSQL's `ReadBuffer` / `BufferAlloc`)
//!
//! 1. Take the tag's mapping partition shared; if the tag is mapped, pin
//!    the buffer *while still holding the partition lock* (so it cannot be
//!    re-tagged in between), release, and wait for or perform the read-in
//!    if it is not yet `VALID`. That is a hit.
//! 2. Otherwise (a miss) get a victim: a buffer pinned only by us, clean
//!    and unmapped (`BufferPool::victim`): free list or clock sweep (or
//!    the caller's ring), a dirty one written back first, its old mapping
//!    entry removed under the old partition lock.
//! 3. Take the tag's partition exclusive: if someone mapped the tag
//!    meanwhile, use theirs and give the victim back; else insert
//!    `tag → victim`, re-tag it (`TAG_VALID`, not `VALID`) under its
//!    header lock, release.
//! 4. Read the page in under the buffer's I/O lock, verify its checksum,
//!    set `VALID`.
//!
//! # Lock order
//!
//! mapping partition → buffer header (the header lock is a spin bit held
//! for a few instructions, never across another lock acquisition). For a
//! write-out: content (shared) → I/O. For a read-in or a new page: I/O →
//! content, which cannot invert the former because content locks are
//! taken only on `VALID` buffers and a read-in happens only on buffers
//! that are not. At most one mapping partition is held at a time.
//!
//! # Exclusive mapping waits (seed 004)
//!
//! Every exclusive acquisition of a mapping partition — step 3 (a miss,
//! or a new block of an extension), the victim's old-entry removal in
//! step 2, and dropping a relation's buffers — goes through
//! `lock_mapping_exclusive`, which takes the partition with
//! [`LwLock::lock_exclusive_timed`](turnstile_sync::LwLock::lock_exclusive_timed).
//! It counts the acquisition in the pool's striped counters and, only if
//! the acquisition waited, records the wait in a histogram behind a mutex
//! ([`BufferPool::exclusive_mapping_waits`]). An uncontended acquisition
//! reads no clock and touches no shared line beyond its counter stripe.
//! These are the waits that starved under `barging` in seed 004: an
//! inserter evicting a victim or mapping a new block, queued behind a
//! stream of shared lookups on the same partition.

use super::clock::Clock;
use super::desc::{
    refcount, BufferDesc, BufferId, DIRTY, IO_ERROR, IO_IN_PROGRESS, REFCOUNT_ONE, TAG_VALID, USAGE_MASK, USAGE_ONE,
    VALID,
};
use super::mapping::{BufferMapping, Partition};
use super::ring::Ring;
use crate::error::{PageError, Result, StorageError};
use crate::fsm::FreeSpaceMap;
use crate::page::{self, PageBuf, VerifyFailure, PAGE_SIZE};
use crate::rel::{BlockNumber, BufferTag, Fork, RelFileId};
use crate::stats::{Counter, Counters, WaitHistogram};
use crate::store::PageStore;
// The store is a trait object, which loom's `Arc` cannot hold; no
// handshake lives in its reference count, so std's is used.
use hdrhistogram::Histogram;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use turnstile_sync::{
    tranche_stats, CachePadded, Config, LwLockExclusiveGuard, LwLockPolicy, LwLockSharedGuard, Tranche, TrancheStats,
};

/// How a [`BufferPool`] is sized.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolOptions {
    /// Buffers in the pool (`buffer.shared_buffers`).
    pub shared_buffers: usize,
    /// Mapping-table partitions (`buffer.mapping_partitions`).
    pub mapping_partitions: usize,
    /// Admission policy of the pool's `LwLock`s (`lwlock.policy`).
    pub policy: LwLockPolicy,
}

impl PoolOptions {
    /// The pool `config` describes.
    pub fn from_config(config: &Config) -> PoolOptions {
        PoolOptions {
            shared_buffers: config.buffer.shared_buffers as usize,
            mapping_partitions: config.buffer.mapping_partitions as usize,
            policy: config.lwlock.policy,
        }
    }
}

/// Counters of one pool (`buffer_stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct BufferPoolStats {
    /// Lookups that found the block in a buffer.
    pub hits: u64,
    /// Lookups that had to allocate a buffer for it.
    pub misses: u64,
    /// Buffers whose old page was evicted to make room.
    pub evictions: u64,
    /// Dirty victims written back before reuse.
    pub dirty_writebacks: u64,
    /// Pages read from the store.
    pub reads: u64,
    /// Pages written to the store (write-backs and flushes).
    pub writes: u64,
    /// `BufferMapping` partition-lock acquisitions since the pool was made
    /// (process-wide tranche counters: exact when one pool is active).
    pub mapping_acquisitions: u64,
    /// `BufferMapping` acquisitions that had to wait.
    pub mapping_waits: u64,
    /// Time spent waiting for `BufferMapping` locks, in nanoseconds.
    pub mapping_wait_ns: u64,
    /// Mapping partitions this pool took exclusive: to map a missed or new
    /// block, to remove a victim's old entry, to drop a relation's buffers.
    /// Counted by this pool alone (unlike the `mapping_*` tranche figures).
    pub exclusive_mapping_acquisitions: u64,
    /// Of those, the ones that had to wait (seed 004's starved requests);
    /// their distribution is [`BufferPool::exclusive_mapping_waits`].
    pub exclusive_mapping_waits: u64,
    /// Total time of those waits, in nanoseconds.
    pub exclusive_mapping_wait_ns: u64,
}

impl BufferPoolStats {
    /// `hits / (hits + misses)`, 1.0 before the first lookup.
    pub fn hit_ratio(&self) -> f64 {
        let total = self.hits + self.misses;
        if total == 0 {
            1.0
        } else {
            self.hits as f64 / total as f64
        }
    }
}

/// The shared buffer pool. See the module documentation.
#[derive(Debug)]
pub struct BufferPool {
    descs: Box<[CachePadded<BufferDesc>]>,
    /// Buffers one backend may pin at once for a multi-block operation.
    proportional_pins: usize,
    mapping: BufferMapping,
    clock: Clock,
    store: Arc<dyn PageStore>,
    fsm: FreeSpaceMap,
    counters: Counters,
    mapping_base: TrancheStats,
    /// Waits of exclusive mapping-partition acquisitions that waited.
    exclusive_mapping_waits: WaitHistogram,
}

/// How a write-back gets its checksums onto the pages it writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Checksums {
    /// The caller holds the content locks exclusive and stamped them in
    /// place: write the pages as they are.
    Stamped,
    /// The caller holds the content locks shared: write checksummed copies.
    Copy,
}

/// The most pages one write-back `pwritev` carries (512 kB).
pub const MAX_WRITE_RUN: usize = 16;

/// The share of the pool one backend may pin for a multi-block operation
/// when the pool does not know the backend count (`with_options`).
const DEFAULT_PIN_SHARE: usize = 16;

/// How many times [`BufferPool::victim`] may find its candidate re-pinned,
/// re-dirtied or content-locked before it gives up, per pool buffer.
const VICTIM_RETRIES_PER_BUFFER: usize = 4;

impl BufferPool {
    /// A pool sized by `config` over `store`.
    pub fn new(config: &Config, store: Arc<dyn PageStore>) -> Result<BufferPool> {
        let mut pool = BufferPool::with_options(PoolOptions::from_config(config), store)?;
        let backends = (config.lock.max_backends as usize).max(1);
        pool.proportional_pins = (pool.shared_buffers() / backends).max(1);
        Ok(pool)
    }

    /// A pool with explicit options.
    pub fn with_options(options: PoolOptions, store: Arc<dyn PageStore>) -> Result<BufferPool> {
        if options.shared_buffers == 0 || options.shared_buffers > (1 << 30) {
            return Err(StorageError::Config(format!(
                "shared_buffers must be between 1 and 2^30, got {}",
                options.shared_buffers
            )));
        }
        if options.mapping_partitions == 0 {
            return Err(StorageError::Config("mapping_partitions must be at least 1".into()));
        }
        Ok(BufferPool {
            proportional_pins: (options.shared_buffers / DEFAULT_PIN_SHARE).max(1),
            descs: (0..options.shared_buffers).map(|_| CachePadded::new(BufferDesc::new(options.policy))).collect(),
            mapping: BufferMapping::new(options.mapping_partitions, options.shared_buffers, options.policy),
            clock: Clock::new(options.shared_buffers),
            store,
            fsm: FreeSpaceMap::new(options.policy),
            counters: Counters::new(),
            mapping_base: tranche_stats(Tranche::BufferMapping),
            exclusive_mapping_waits: WaitHistogram::new(),
        })
    }

    /// Buffers in the pool.
    pub fn shared_buffers(&self) -> usize {
        self.descs.len()
    }

    /// How many buffers one backend may pin at once for a multi-block
    /// operation such as a bulk extension: its fair share of the pool,
    /// `shared_buffers / lock.max_backends` (at least 1), as PostgreSQL's
    /// `LimitAdditionalPins` allows `NBuffers / MaxBackends`. So every
    /// backend can extend at once without pinning the whole pool. A pool
    /// made by [`BufferPool::with_options`] (no backend count) allows a
    /// sixteenth.
    pub fn proportional_pins(&self) -> usize {
        self.proportional_pins
    }

    /// Mapping-table partitions.
    pub fn mapping_partitions(&self) -> usize {
        self.mapping.len()
    }

    /// The store under the pool.
    pub fn store(&self) -> &Arc<dyn PageStore> {
        &self.store
    }

    /// The free-space map of the relations this pool serves.
    pub fn fsm(&self) -> &FreeSpaceMap {
        &self.fsm
    }

    /// The pool's counters.
    pub fn stats(&self) -> BufferPoolStats {
        let mapping = tranche_stats(Tranche::BufferMapping).since(&self.mapping_base);
        BufferPoolStats {
            hits: self.counters.get(Counter::Hits),
            misses: self.counters.get(Counter::Misses),
            evictions: self.counters.get(Counter::Evictions),
            dirty_writebacks: self.counters.get(Counter::DirtyWritebacks),
            reads: self.counters.get(Counter::Reads),
            writes: self.counters.get(Counter::Writes),
            mapping_acquisitions: mapping.acquisitions,
            mapping_waits: mapping.waits,
            mapping_wait_ns: mapping.wait_ns,
            exclusive_mapping_acquisitions: self.counters.get(Counter::ExclusiveMapping),
            exclusive_mapping_waits: self.counters.get(Counter::ExclusiveMappingWaits),
            exclusive_mapping_wait_ns: self.counters.get(Counter::ExclusiveMappingWaitNs),
        }
    }

    /// The waits of every exclusive mapping-partition acquisition that had
    /// to wait, since the pool was made, in nanoseconds (1 ns to 2 h, 3
    /// significant digits; longer waits count as 2 h). Acquisitions that
    /// did not wait are not in it: they are
    /// `exclusive_mapping_acquisitions - exclusive_mapping_waits` of
    /// [`BufferPool::stats`]. This is a copy: to measure one phase,
    /// subtract the copy taken at its start from the one taken at its end.
    ///
    /// ```
    /// use hdrhistogram::Histogram;
    /// use turnstile_storage::BufferPool;
    ///
    /// /// Exclusive mapping waits of `pool` while `phase` runs.
    /// fn waits_during(pool: &BufferPool, phase: impl FnOnce()) -> Histogram<u64> {
    ///     let before = pool.exclusive_mapping_waits();
    ///     phase();
    ///     let mut waits = pool.exclusive_mapping_waits();
    ///     waits.subtract(&before).expect("an earlier copy of the same pool's waits");
    ///     waits
    /// }
    /// ```
    pub fn exclusive_mapping_waits(&self) -> Histogram<u64> {
        self.exclusive_mapping_waits.snapshot()
    }

    /// Takes `tag`'s mapping partition exclusive, counting the acquisition
    /// and recording its wait if it had one (see the module documentation).
    #[inline]
    fn lock_mapping_exclusive(&self, tag: &BufferTag) -> LwLockExclusiveGuard<'_, Partition> {
        let (map, wait_ns) = self.mapping.partition(tag).lock_exclusive_timed();
        self.counters.add(Counter::ExclusiveMapping, 1);
        if wait_ns > 0 {
            self.record_exclusive_mapping_wait(wait_ns);
        }
        map
    }

    /// The contended half of [`Self::lock_mapping_exclusive`].
    #[cold]
    #[inline(never)]
    fn record_exclusive_mapping_wait(&self, wait_ns: u64) {
        self.counters.add(Counter::ExclusiveMappingWaits, 1);
        self.counters.add(Counter::ExclusiveMappingWaitNs, wait_ns);
        self.exclusive_mapping_waits.record(wait_ns);
    }

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

    /// Pins `tag`'s buffer if the tag is mapped (step 1).
    fn lookup(&self, tag: BufferTag, with_ring: bool) -> Option<PinnedBuffer<'_>> {
        let map = self.mapping.partition(&tag).lock_shared();
        let id = *map.get(&tag)?;
        self.descs[id as usize].pin(with_ring);
        drop(map);
        Some(PinnedBuffer { pool: self, id, tag })
    }

    /// Maps `tag` to `victim` and re-tags it with `flags` (step 3); if the
    /// tag got mapped meanwhile, pins that buffer instead and frees the
    /// victim (`Err`).
    fn install<'a>(
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
        let desc = &self.descs[victim.id as usize];
        let mut h = desc.lock_header();
        debug_assert_eq!(h.state & (TAG_VALID | VALID | DIRTY), 0, "installing a mapped buffer");
        h.set_tag(tag);
        h.state = (h.state & !(USAGE_MASK | IO_ERROR | VALID | DIRTY)) | flags | USAGE_ONE;
        drop(h);
        drop(map);
        Ok(victim.into_pinned(tag))
    }

    /// Waits for, or performs, the read-in of a pinned buffer (step 4).
    #[inline]
    fn make_valid(&self, buf: &PinnedBuffer<'_>) -> Result<()> {
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

    /// A victim buffer: pinned only by the caller, clean, unmapped (step 2).
    /// A dirty candidate is written back alone, as PostgreSQL's
    /// `FlushBuffer` does.
    pub(crate) fn victim(&self, mut ring: Option<&mut Ring>) -> Result<Victim<'_>> {
        for _ in 0..self.descs.len() * VICTIM_RETRIES_PER_BUFFER {
            let (victim, state) = self.candidate(ring.as_deref_mut())?;
            let desc = &self.descs[victim.id as usize];
            if state & DIRTY != 0 {
                // Someone holding the content lock is using the page: pick
                // another victim rather than wait (PostgreSQL does the same).
                let Some(content) = desc.content.try_lock_shared() else { continue };
                if self.write_back(desc, &content)? {
                    self.counters.add(Counter::DirtyWritebacks, 1);
                }
            }
            if self.unmap(&victim, state) {
                return Ok(victim);
            }
        }
        Err(StorageError::AllBuffersPinned { shared_buffers: self.descs.len() })
    }

    /// `n` victims (see [`BufferPool::victim`]), all or none. Dirty
    /// candidates holding consecutive blocks of one relation are written
    /// back together, one `pwritev` per run of up to [`MAX_WRITE_RUN`]
    /// pages (seed 001: 16 × 8 kB per call instead of 16 calls) — with a
    /// bulk-write ring they are exactly that: the pages of an earlier bulk
    /// extension.
    pub(crate) fn victims(&self, n: usize, mut ring: Option<&mut Ring>) -> Result<Vec<Victim<'_>>> {
        let mut out = Vec::with_capacity(n);
        let mut attempts = 0;
        while out.len() < n {
            let wanted = n - out.len();
            attempts += wanted;
            if attempts > self.descs.len() * VICTIM_RETRIES_PER_BUFFER + n {
                return Err(StorageError::AllBuffersPinned { shared_buffers: self.descs.len() });
            }
            let mut candidates = Vec::with_capacity(wanted);
            for _ in 0..wanted {
                candidates.push(self.candidate(ring.as_deref_mut())?);
            }
            // Clean the dirty ones whose content lock is free, in runs.
            // Only we pin them, so nobody else wants their content lock:
            // take it exclusive and stamp the checksum in place, which
            // saves the copy a shared-lock write-back needs.
            let mut busy = vec![false; candidates.len()];
            let mut dirty = Vec::new();
            for (i, (victim, state)) in candidates.iter().enumerate() {
                if state & DIRTY == 0 {
                    continue;
                }
                let desc: &BufferDesc = &self.descs[victim.id as usize];
                match desc.content.try_lock_exclusive() {
                    Some(mut content) => {
                        let tag = desc.tag();
                        page::set_checksum(&mut content, tag.block);
                        dirty.push((tag, desc, content));
                    }
                    None => busy[i] = true,
                }
            }
            dirty.sort_by_key(|(tag, _, _)| *tag);
            let written = {
                let items: Vec<(&BufferDesc, &PageBuf)> = dirty.iter().map(|(_, d, c)| (*d, &***c)).collect();
                self.write_back_runs(&items, Checksums::Stamped)
            };
            drop(dirty);
            self.counters.add(Counter::DirtyWritebacks, written? as u64);
            for ((victim, state), busy) in candidates.into_iter().zip(busy) {
                if !busy && self.unmap(&victim, state) {
                    out.push(victim);
                }
            }
        }
        Ok(out)
    }

    /// Picks a candidate from `ring` or the clock sweep and pins it under
    /// its header lock (PostgreSQL's `PinBuffer_Locked`); returns it with
    /// the state it had then.
    fn candidate(&self, ring: Option<&mut Ring>) -> Result<(Victim<'_>, u32)> {
        let (id, mut h) = match ring {
            Some(r) => match r.next(&self.descs) {
                Some(found) => found,
                None => {
                    let found = self.clock.victim(&self.descs)?;
                    r.put(found.0);
                    found
                }
            },
            None => self.clock.victim(&self.descs)?,
        };
        debug_assert_eq!(refcount(h.state), 0);
        h.state += REFCOUNT_ONE;
        let state = h.state;
        drop(h);
        Ok((Victim { pool: self, id }, state))
    }

    /// Removes a clean candidate's old mapping entry. `false` if it was
    /// pinned or dirtied again meanwhile: not a victim after all.
    fn unmap(&self, victim: &Victim<'_>, state: u32) -> bool {
        if state & TAG_VALID == 0 {
            return true;
        }
        let desc = &self.descs[victim.id as usize];
        let old = desc.tag();
        let mut map = self.lock_mapping_exclusive(&old);
        let mut h = desc.lock_header();
        if refcount(h.state) != 1 || h.state & DIRTY != 0 {
            return false;
        }
        h.state &= !(TAG_VALID | VALID | IO_ERROR | USAGE_MASK);
        drop(h);
        let removed = map.remove(&old);
        debug_assert_eq!(removed, Some(victim.id), "mapping and TAG_VALID disagree");
        drop(map);
        self.counters.add(Counter::Evictions, 1);
        true
    }

    /// Writes back the dirty buffers among `items` (sorted by tag; each
    /// pinned by the caller with its content lock held shared), one
    /// `pwritev` per run of consecutive blocks. Returns the pages written.
    fn write_back_runs(&self, items: &[(&BufferDesc, &PageBuf)], checksums: Checksums) -> Result<usize> {
        let mut written = 0;
        let mut start = 0;
        while start < items.len() {
            let first = items[start].0.tag();
            let mut end = start + 1;
            while end < items.len() && end - start < MAX_WRITE_RUN {
                let tag = items[end].0.tag();
                if (tag.rel, tag.fork) != (first.rel, first.fork) || tag.block != first.block + (end - start) as u32 {
                    break;
                }
                end += 1;
            }
            written += self.write_back_run(&items[start..end], checksums)?;
            start = end;
        }
        Ok(written)
    }

    /// Writes one run of consecutive dirty buffers. Buffers someone else
    /// cleaned first split the run.
    fn write_back_run(&self, run: &[(&BufferDesc, &PageBuf)], checksums: Checksums) -> Result<usize> {
        // I/O locks in buffer order; nobody else holds several.
        let mut order: Vec<usize> = (0..run.len()).collect();
        order.sort_by_key(|&i| run[i].0 as *const BufferDesc as usize);
        let mut ios: Vec<Option<LwLockExclusiveGuard<'_, ()>>> = (0..run.len()).map(|_| None).collect();
        for i in order {
            ios[i] = Some(run[i].0.io.lock_exclusive());
        }
        let mut still_dirty = vec![false; run.len()];
        for (i, (desc, _)) in run.iter().enumerate() {
            let mut h = desc.lock_header();
            if h.state & DIRTY != 0 {
                h.state |= IO_IN_PROGRESS;
                still_dirty[i] = true;
            }
        }
        let mut result = Ok(0);
        let mut i = 0;
        while i < run.len() {
            if !still_dirty[i] {
                i += 1;
                continue;
            }
            let mut j = i;
            while j < run.len() && still_dirty[j] {
                j += 1;
            }
            let first = run[i].0.tag();
            let outcome = match checksums {
                Checksums::Stamped => {
                    let refs: Vec<&PageBuf> = run[i..j].iter().map(|(_, p)| *p).collect();
                    self.store.write_pages(first, &refs)
                }
                Checksums::Copy => with_scratch_run(j - i, |copies| {
                    for (k, copy) in copies.iter_mut().enumerate() {
                        copy.copy_from_slice(run[i + k].1);
                        page::set_checksum(copy, first.block + k as u32);
                    }
                    let refs: Vec<&PageBuf> = copies.iter().map(|c| &**c).collect();
                    self.store.write_pages(first, &refs)
                }),
            };
            for (desc, _) in &run[i..j] {
                let mut h = desc.lock_header();
                h.state &= !IO_IN_PROGRESS;
                if outcome.is_ok() {
                    h.state &= !(DIRTY | IO_ERROR);
                } else {
                    h.state |= IO_ERROR;
                }
            }
            match outcome {
                Ok(()) => {
                    self.counters.add(Counter::Writes, (j - i) as u64);
                    if let Ok(n) = &mut result {
                        *n += j - i;
                    }
                }
                Err(e) => {
                    // Clear IO_IN_PROGRESS on the rest before reporting.
                    for (k, (desc, _)) in run.iter().enumerate().skip(j) {
                        if still_dirty[k] {
                            desc.lock_header().state &= !IO_IN_PROGRESS;
                        }
                    }
                    return Err(e);
                }
            }
            i = j;
        }
        drop(ios);
        result
    }

    /// Writes a dirty buffer's page out (PostgreSQL's `FlushBuffer`): the
    /// caller pins it and holds its content lock shared, so the page
    /// cannot change while its checksummed copy is written. Returns
    /// whether a write happened (the buffer may have been cleaned by
    /// someone else first).
    fn write_back(&self, desc: &BufferDesc, content: &PageBuf) -> Result<bool> {
        let _io = desc.io.lock_exclusive();
        {
            let mut h = desc.lock_header();
            if h.state & DIRTY == 0 {
                return Ok(false);
            }
            h.state |= IO_IN_PROGRESS;
        }
        let tag = desc.tag();
        let result = with_scratch(|copy| {
            copy.copy_from_slice(content);
            page::set_checksum(copy, tag.block);
            self.store.write_pages(tag, &[copy])
        });
        let mut h = desc.lock_header();
        h.state &= !IO_IN_PROGRESS;
        match result {
            Ok(()) => {
                h.state &= !(DIRTY | IO_ERROR);
                drop(h);
                self.counters.add(Counter::Writes, 1);
                Ok(true)
            }
            Err(e) => {
                h.state |= IO_ERROR;
                Err(e)
            }
        }
    }

    /// Writes every dirty buffer back, then makes the store durable
    /// (`fsync`): a checkpoint without a WAL. Dirty buffers are taken in
    /// batches, sorted by block and written in runs (one `pwritev` per run
    /// of consecutive blocks), as PostgreSQL's checkpointer sorts its
    /// writes; a buffer whose content lock is busy is written alone
    /// afterwards, waiting for the lock while holding no other.
    pub fn flush_all(&self) -> Result<()> {
        const BATCH: usize = 1024;
        let mut next = 0;
        while next < self.descs.len() {
            let mut pinned = Vec::new();
            while next < self.descs.len() && pinned.len() < BATCH {
                let desc: &BufferDesc = &self.descs[next];
                next += 1;
                if desc.load() & (VALID | DIRTY) != (VALID | DIRTY) {
                    continue;
                }
                let mut h = desc.lock_header();
                if h.state & (VALID | DIRTY) != (VALID | DIRTY) {
                    continue;
                }
                h.state += REFCOUNT_ONE;
                drop(h);
                pinned.push(PinGuard(desc));
            }
            let mut locked = Vec::with_capacity(pinned.len());
            let mut busy = Vec::new();
            for pin in &pinned {
                match pin.0.content.try_lock_shared() {
                    Some(content) => locked.push((pin.0.tag(), pin.0, content)),
                    None => busy.push(pin.0),
                }
            }
            locked.sort_by_key(|(tag, _, _)| *tag);
            let items: Vec<(&BufferDesc, &PageBuf)> = locked.iter().map(|(_, d, c)| (*d, &***c)).collect();
            self.write_back_runs(&items, Checksums::Copy)?;
            drop(items);
            drop(locked);
            for desc in busy {
                let content = desc.content.lock_shared();
                self.write_back(desc, &content)?;
            }
            drop(pinned);
        }
        self.store.sync_all()
    }

    /// Discards every buffer of `rel`'s `fork` holding block `from` or a
    /// later one, dirty or not (before a truncation or a drop). Fails if
    /// one of them is pinned.
    pub fn drop_relation_buffers(&self, rel: RelFileId, fork: Fork, from: BlockNumber) -> Result<()> {
        let matches = |tag: &BufferTag| tag.rel == rel && tag.fork == fork && tag.block >= from;
        for (id, desc) in self.descs.iter().enumerate() {
            let tag = {
                let h = desc.lock_header();
                if h.state & TAG_VALID == 0 {
                    continue;
                }
                desc.tag()
            };
            if !matches(&tag) {
                continue;
            }
            let mut map = self.lock_mapping_exclusive(&tag);
            let mut h = desc.lock_header();
            if h.state & TAG_VALID == 0 || desc.tag() != tag {
                continue;
            }
            if refcount(h.state) != 0 {
                return Err(StorageError::BufferPinned { tag: tag.to_string() });
            }
            h.state &= !(TAG_VALID | VALID | DIRTY | IO_ERROR | USAGE_MASK);
            drop(h);
            map.remove(&tag);
            drop(map);
            self.clock.free(id as BufferId);
        }
        Ok(())
    }

    /// Truncates `rel`'s `fork` to `nblocks` blocks: drops the buffers of
    /// the cut blocks (failing if one is pinned), forgets them in the
    /// free-space map, then cuts the files. The caller holds a lock that
    /// keeps everyone else off the relation (AccessExclusive).
    pub fn truncate_relation(
        &self,
        smgr: &crate::Smgr,
        rel: RelFileId,
        fork: Fork,
        nblocks: BlockNumber,
    ) -> Result<()> {
        self.drop_relation_buffers(rel, fork, nblocks)?;
        if fork == Fork::Main {
            self.fsm.truncate(rel, nblocks);
        }
        smgr.truncate(rel, fork, nblocks)
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

thread_local! {
    static SCRATCH: std::cell::RefCell<Box<PageBuf>> = std::cell::RefCell::new(Box::new([0; PAGE_SIZE]));
}

thread_local! {
    static SCRATCH_RUN: std::cell::RefCell<Vec<Box<PageBuf>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `f` on `n` scratch pages of this thread (the checksummed copies
/// of a write-back run).
fn with_scratch_run<R>(n: usize, f: impl FnOnce(&mut [Box<PageBuf>]) -> R) -> R {
    SCRATCH_RUN.with(|s| match s.try_borrow_mut() {
        Ok(mut pages) => {
            while pages.len() < n {
                pages.push(Box::new([0; PAGE_SIZE]));
            }
            f(&mut pages[..n])
        }
        Err(_) => f(&mut (0..n).map(|_| Box::new([0; PAGE_SIZE])).collect::<Vec<_>>()),
    })
}

/// Runs `f` on this thread's scratch page (the checksummed copy written
/// out, so the shared page is never modified by a write-out).
fn with_scratch<R>(f: impl FnOnce(&mut PageBuf) -> R) -> R {
    SCRATCH.with(|s| match s.try_borrow_mut() {
        Ok(mut page) => f(&mut page),
        Err(_) => f(&mut Box::new([0; PAGE_SIZE])),
    })
}

/// A pin taken directly under the header lock; dropped by unpinning.
struct PinGuard<'a>(&'a BufferDesc);

impl Drop for PinGuard<'_> {
    fn drop(&mut self) {
        self.0.unpin();
    }
}

/// A buffer pinned only by its owner, clean and unmapped: the result of a
/// victim search. Dropping it unpins it and puts it on the free list.
#[must_use = "a victim is given back to the free list when dropped"]
#[derive(Debug)]
pub(crate) struct Victim<'a> {
    pool: &'a BufferPool,
    pub(crate) id: BufferId,
}

impl<'a> Victim<'a> {
    /// Zeroes the victim's page (PostgreSQL's `MemSet` of a new buffer
    /// before `smgrextend`). Nobody else can hold its content lock: it is
    /// pinned only by us and unmapped.
    pub(crate) fn zero_page(&self) {
        self.pool.descs[self.id as usize].content.lock_exclusive().fill(0);
    }

    fn into_pinned(self, tag: BufferTag) -> PinnedBuffer<'a> {
        let me = std::mem::ManuallyDrop::new(self);
        PinnedBuffer { pool: me.pool, id: me.id, tag }
    }
}

impl Drop for Victim<'_> {
    fn drop(&mut self) {
        let desc = &self.pool.descs[self.id as usize];
        let unmapped = desc.load() & TAG_VALID == 0;
        desc.unpin();
        if unmapped {
            self.pool.clock.free(self.id);
        }
    }
}

/// A newly mapped block whose page is not initialised yet (see
/// [`BufferPool::install_new`]).
pub(crate) struct NewBuffer<'a> {
    pub(crate) buf: PinnedBuffer<'a>,
    /// The I/O lock of a fresh buffer; `None` when a reader mapped the
    /// block first.
    io: Option<LwLockExclusiveGuard<'a, ()>>,
}

impl<'a> NewBuffer<'a> {
    /// Initialises the page (an empty page with no special space), marks
    /// the buffer `VALID` and releases its I/O lock.
    pub(crate) fn init(self) -> Result<PinnedBuffer<'a>> {
        let pool = self.buf.pool;
        let desc = &pool.descs[self.buf.id as usize];
        match self.io {
            Some(io) => {
                page::init(&mut desc.content.lock_exclusive(), 0);
                {
                    let mut h = desc.lock_header();
                    h.state = (h.state & !IO_IN_PROGRESS) | VALID;
                }
                drop(io);
            }
            None => {
                pool.make_valid(&self.buf)?;
                let mut content = desc.content.lock_exclusive();
                if page::is_new(&content) {
                    page::init(&mut content, 0);
                }
            }
        }
        Ok(self.buf)
    }
}

/// A pin on a buffer holding a valid page: while it lives the buffer is
/// never evicted or re-tagged. Dropping it unpins.
#[must_use = "the buffer is unpinned when dropped"]
#[derive(Debug)]
pub struct PinnedBuffer<'a> {
    pool: &'a BufferPool,
    id: BufferId,
    tag: BufferTag,
}

impl<'a> PinnedBuffer<'a> {
    /// The block this buffer holds.
    pub fn tag(&self) -> BufferTag {
        self.tag
    }

    /// The block number.
    pub fn block(&self) -> BlockNumber {
        self.tag.block
    }

    /// The buffer's index in the pool.
    pub fn buffer_id(&self) -> BufferId {
        self.id
    }

    fn desc(&self) -> &'a BufferDesc {
        &self.pool.descs[self.id as usize]
    }

    /// Locks the page for reading.
    pub fn lock_shared(&self) -> PageReadGuard<'_> {
        PageReadGuard { guard: self.desc().content.lock_shared() }
    }

    /// Locks the page for writing.
    pub fn lock_exclusive(&self) -> PageWriteGuard<'_> {
        PageWriteGuard { guard: self.desc().content.lock_exclusive(), desc: self.desc() }
    }

    /// Locks the page for writing if nobody holds its lock.
    pub fn try_lock_exclusive(&self) -> Option<PageWriteGuard<'_>> {
        Some(PageWriteGuard { guard: self.desc().content.try_lock_exclusive()?, desc: self.desc() })
    }
}

impl Drop for PinnedBuffer<'_> {
    #[inline]
    fn drop(&mut self) {
        self.desc().unpin();
    }
}

/// Shared access to a pinned page; released on drop.
#[must_use = "the content lock is released when the guard is dropped"]
pub struct PageReadGuard<'b> {
    guard: LwLockSharedGuard<'b, Box<PageBuf>>,
}

impl Deref for PageReadGuard<'_> {
    type Target = PageBuf;
    fn deref(&self) -> &PageBuf {
        &self.guard
    }
}

/// Exclusive access to a pinned page; released on drop. Call
/// [`PageWriteGuard::mark_dirty`] after changing the page.
#[must_use = "the content lock is released when the guard is dropped"]
pub struct PageWriteGuard<'b> {
    guard: LwLockExclusiveGuard<'b, Box<PageBuf>>,
    desc: &'b BufferDesc,
}

impl PageWriteGuard<'_> {
    /// Marks the buffer dirty (PostgreSQL's `MarkBufferDirty`): it will be
    /// written back before reuse and by [`BufferPool::flush_all`].
    pub fn mark_dirty(&mut self) {
        self.desc.set_flags(DIRTY);
    }
}

impl Deref for PageWriteGuard<'_> {
    type Target = PageBuf;
    fn deref(&self) -> &PageBuf {
        &self.guard
    }
}

impl DerefMut for PageWriteGuard<'_> {
    fn deref_mut(&mut self) -> &mut PageBuf {
        &mut self.guard
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Every block reads as an empty, checksummed page.
    #[derive(Debug)]
    struct EmptyPages;

    impl PageStore for EmptyPages {
        fn read_page(&self, tag: BufferTag, p: &mut PageBuf) -> Result<()> {
            page::init(p, 0);
            page::set_checksum(p, tag.block);
            Ok(())
        }
        fn write_pages(&self, _first: BufferTag, _pages: &[&PageBuf]) -> Result<()> {
            Ok(())
        }
        fn nblocks(&self, _rel: RelFileId, _fork: Fork) -> Result<BlockNumber> {
            Ok(64)
        }
        fn extend(&self, _rel: RelFileId, _fork: Fork, _n: u32) -> Result<BlockNumber> {
            Ok(64)
        }
        fn sync_all(&self) -> Result<()> {
            Ok(())
        }
        fn file_name(&self, tag: BufferTag) -> String {
            tag.to_string()
        }
    }

    /// A miss behind a shared holder of its (only) mapping partition waits
    /// for it in `install`; that wait, and only that one, is recorded.
    #[test]
    fn an_exclusive_mapping_wait_is_recorded_and_an_uncontended_one_is_not() {
        const HELD: Duration = Duration::from_millis(20);
        for policy in [LwLockPolicy::Fair, LwLockPolicy::Barging] {
            let options = PoolOptions { shared_buffers: 4, mapping_partitions: 1, policy };
            let pool = BufferPool::with_options(options, Arc::new(EmptyPages)).unwrap();
            let rel = RelFileId::new(1, 1);
            drop(pool.read_buffer(BufferTag::new(rel, Fork::Main, 0)).unwrap());
            let s = pool.stats();
            assert_eq!((s.exclusive_mapping_acquisitions, s.exclusive_mapping_waits), (1, 0), "{policy}");
            assert!(pool.exclusive_mapping_waits().is_empty(), "{policy}: an uncontended acquisition was recorded");

            let tag = BufferTag::new(rel, Fork::Main, 1);
            let partition = pool.mapping.partition(&tag);
            let held_ns = std::thread::scope(|scope| {
                let reader = partition.lock_shared();
                let miss = scope.spawn(|| drop(pool.read_buffer(tag).unwrap()));
                while !partition.has_exclusive_waiter() {
                    std::thread::sleep(Duration::from_millis(1));
                }
                let queued = Instant::now();
                std::thread::sleep(HELD);
                let held_ns = queued.elapsed().as_nanos() as u64;
                drop(reader);
                miss.join().unwrap();
                held_ns
            });
            let s = pool.stats();
            assert_eq!((s.exclusive_mapping_acquisitions, s.exclusive_mapping_waits), (2, 1), "{policy}");
            assert!(s.exclusive_mapping_wait_ns >= held_ns, "{policy}: {s:?}, held {held_ns} ns");
            let waits = pool.exclusive_mapping_waits();
            assert_eq!(waits.len(), 1, "{policy}");
            // The histogram keeps 3 significant digits.
            assert!(
                waits.max() as f64 >= held_ns as f64 * 0.999,
                "{policy}: max {} ns, held {held_ns} ns",
                waits.max()
            );
        }
    }
}
