//! Relation extension (seed 001): giving an inserter a page with room,
//! from the free-space map or by growing the relation, under one of two
//! strategies (`storage.extend`).
//!
//! # `classic` — PostgreSQL before the fix
//!
//! One block per extension, and everything under the relation-extension
//! lock, in PostgreSQL ≤ 15's order: the size check (`mdnblocks`, an
//! `fstat` of the last segment), the victim search (including writing back
//! a dirty victim — with a bulk-write ring it nearly always is dirty), the
//! zeroing of the buffer, the file extension (a zero-page `pwrite`), the
//! mapping insert and the page initialisation (`PageInit`).
//! Seed 001 measured that at 8 clients the lock is then held for 76 % of
//! the run, so extension is serial no matter how fast the lock is.
//!
//! # `bulk` — the fix
//!
//! 1. *Before* the lock, find and clean `k` victim buffers (write-backs
//!    happen here, in parallel across backends).
//! 2. Under the lock: read the relation's size (the same `fstat`), extend
//!    the file by `k` blocks (`fallocate`), insert the `k` mapping entries (each buffer
//!    marked I/O-in-progress, so a reader of a new block waits).
//! 3. After release: record the other `k − 1` pages in the free-space map
//!    for other inserters (a claimer of a page not yet initialised waits
//!    on its I/O lock), initialise the pages, keep the first.
//!
//! `k = min(extend_max_blocks, pin limit, max(1 + waiters, ramp))`: it
//! grows with the number of backends queued on the lock (PostgreSQL 16's
//! `RelationAddBlocks` multiplies by the waiter count) and with this
//! backend's own history (a bulk inserter's `already_extended_by`, which
//! doubles), and never pins more than a sixteenth of the pool.
//!
//! # Instrumentation
//!
//! Each [`Extender`] (one per backend) accumulates the four times seed 001
//! measured: waiting for the lock, holding it, in the file system (the
//! extension call), and searching for buffers (victim search including
//! write-back) — [`ExtensionStats`].

use crate::buffer::{BufferPool, PinnedBuffer, Ring};
use crate::error::Result;
use crate::page;
use crate::rel::{BlockNumber, BufferTag, Fork, RelFileId};
use std::time::{Duration, Instant};
use turnstile_sync::config::ExtendStrategy;

/// The relation-extension lock, as the extender needs it: exclusive
/// acquisition and the number of waiters (to size bulk extensions).
/// Implemented over `turnstile-lock`'s heavyweight lock manager for
/// `turnstile_lock::Backend` (see [`crate::extlock`]).
pub trait ExtensionLocker {
    /// Held while the lock is; releases it on drop.
    type Guard<'a>
    where
        Self: 'a;

    /// Takes `rel`'s extension lock exclusively, waiting as needed.
    fn lock_extension(&mut self, rel: RelFileId) -> Result<Self::Guard<'_>>;

    /// How many backends wait for `rel`'s extension lock right now.
    fn extension_waiters(&mut self, rel: RelFileId) -> usize;
}

/// Per-backend extension times and counts (`extension_stats`), the
/// breakdown of seed 001.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct ExtensionStats {
    /// Time waiting for the extension lock.
    pub lock_wait: Duration,
    /// Longest single wait for the extension lock.
    pub lock_wait_max: Duration,
    /// Time holding it.
    pub lock_held: Duration,
    /// Time in the file-system extension call.
    pub filesystem: Duration,
    /// Time finding (and cleaning) victim buffers.
    pub buffer_search: Duration,
    /// Extension-lock acquisitions.
    pub extensions: u64,
    /// Blocks added to relations.
    pub blocks_added: u64,
    /// Pages handed out from the free-space map.
    pub pages_from_fsm: u64,
}

impl ExtensionStats {
    /// Adds `other` (to total several backends).
    pub fn add(&mut self, other: &ExtensionStats) {
        self.lock_wait += other.lock_wait;
        self.lock_wait_max = self.lock_wait_max.max(other.lock_wait_max);
        self.lock_held += other.lock_held;
        self.filesystem += other.filesystem;
        self.buffer_search += other.buffer_search;
        self.extensions += other.extensions;
        self.blocks_added += other.blocks_added;
        self.pages_from_fsm += other.pages_from_fsm;
    }
}

/// One backend's relation extender. Not shared: each backend has its own
/// (its ring, its ramp, its statistics).
#[derive(Debug)]
pub struct Extender<'p, L> {
    pool: &'p BufferPool,
    locker: L,
    strategy: ExtendStrategy,
    max_blocks: u32,
    ring: Option<Ring>,
    ramp: u32,
    stats: ExtensionStats,
}

impl<'p, L: ExtensionLocker> Extender<'p, L> {
    /// An extender over `pool` using `locker` for the extension lock,
    /// with `strategy` and at most `max_blocks` blocks per bulk extension
    /// (`storage.extend`, `storage.extend_max_blocks`).
    pub fn new(pool: &'p BufferPool, locker: L, strategy: ExtendStrategy, max_blocks: u32) -> Self {
        Extender {
            pool,
            locker,
            strategy,
            max_blocks: max_blocks.max(1),
            ring: None,
            ramp: 1,
            stats: ExtensionStats::default(),
        }
    }

    /// Takes victims from `ring` instead of the whole pool (a bulk write,
    /// as COPY does).
    pub fn with_ring(mut self, ring: Ring) -> Self {
        self.ring = Some(ring);
        self
    }

    /// The accumulated statistics.
    pub fn stats(&self) -> ExtensionStats {
        self.stats
    }

    /// The lock provider.
    pub fn locker(&mut self) -> &mut L {
        &mut self.locker
    }

    /// A pinned page of `rel`'s main fork with at least `needed` bytes
    /// free: a page the free-space map offers, else a new block. The page
    /// is initialised; the caller locks it, inserts, marks it dirty, and
    /// records what is left with [`crate::fsm::FreeSpaceMap::record`].
    pub fn get_page(&mut self, rel: RelFileId, needed: usize) -> Result<PinnedBuffer<'p>> {
        if let Some(buf) = self.page_from_fsm(rel, needed)? {
            return Ok(buf);
        }
        match self.strategy {
            ExtendStrategy::Classic => self.extend_classic(rel),
            ExtendStrategy::Bulk => self.extend_bulk(rel, Some(needed)),
        }
    }

    /// Adds blocks to `rel`'s main fork (one, or `k` under `bulk`) and
    /// returns the first, pinned and initialised.
    pub fn extend(&mut self, rel: RelFileId) -> Result<PinnedBuffer<'p>> {
        match self.strategy {
            ExtendStrategy::Classic => self.extend_classic(rel),
            ExtendStrategy::Bulk => self.extend_bulk(rel, None),
        }
    }

    /// A page the free-space map offers with `needed` bytes free, pinned.
    fn page_from_fsm(&mut self, rel: RelFileId, needed: usize) -> Result<Option<PinnedBuffer<'p>>> {
        while let Some(block) = self.pool.fsm().claim(rel, needed) {
            if let Some(buf) = self.pin_claimed(rel, block, needed)? {
                return Ok(Some(buf));
            }
        }
        Ok(None)
    }

    /// Pins a page claimed from the map, initialising it if it is new;
    /// `None` (and the map corrected) if it lacks `needed` bytes after all.
    fn pin_claimed(&mut self, rel: RelFileId, block: BlockNumber, needed: usize) -> Result<Option<PinnedBuffer<'p>>> {
        let buf = self.pool.read_buffer_with(BufferTag::new(rel, Fork::Main, block), self.ring.as_mut())?;
        let free = {
            let mut content = buf.lock_exclusive();
            if page::is_new(&content) {
                page::init(&mut content, 0);
            }
            page::free_space(&content)
        };
        if free < needed {
            self.pool.fsm().record(rel, block, free);
            return Ok(None);
        }
        self.stats.pages_from_fsm += 1;
        Ok(Some(buf))
    }

    fn extend_classic(&mut self, rel: RelFileId) -> Result<PinnedBuffer<'p>> {
        let pool = self.pool;
        let asked = Instant::now();
        let lock = self.locker.lock_extension(rel)?;
        let got = Instant::now();
        self.stats.lock_wait += got - asked;
        self.stats.lock_wait_max = self.stats.lock_wait_max.max(got - asked);
        // PostgreSQL ≤ 15's `ReadBuffer(P_NEW)` + `PageInit`, step by step.
        let result = (|| {
            let nblocks = pool.store().nblocks_from_files(rel, Fork::Main)?;
            let sized = Instant::now();
            self.stats.filesystem += sized - got;
            let victim = pool.victim(self.ring.as_mut())?;
            victim.zero_page();
            let searched = Instant::now();
            self.stats.buffer_search += searched - sized;
            let first = pool.store().extend(rel, Fork::Main, 1)?;
            debug_assert_eq!(first, nblocks);
            self.stats.filesystem += searched.elapsed();
            let mut new = pool.install_new(vec![victim], rel, Fork::Main, first);
            new.pop().expect("one victim, one buffer").init()
        })();
        // Held time ends when the release starts: on an oversubscribed
        // machine the releaser may be descheduled inside the release by
        // the waiter it wakes, which must not count twice.
        self.stats.lock_held += got.elapsed();
        drop(lock);
        self.stats.extensions += 1;
        if result.is_ok() {
            self.stats.blocks_added += 1;
        }
        result
    }

    /// The bulk path. With `needed` (an inserter's request), the map is
    /// checked again after the victim search and after the lock wait —
    /// another backend has likely extended meanwhile (PostgreSQL 9.6–15's
    /// recheck) — and a page found there is used instead: the victims go
    /// back to the free list clean, the lock is released at once.
    fn extend_bulk(&mut self, rel: RelFileId, needed: Option<usize>) -> Result<PinnedBuffer<'p>> {
        let pool = self.pool;
        let pin_limit = (pool.shared_buffers() / 16).max(1) as u32;
        let waiters = self.locker.extension_waiters(rel) as u32;
        let k = (1 + waiters).max(self.ramp).min(self.max_blocks).min(pin_limit).max(1);
        let searching = Instant::now();
        let victims = pool.victims(k as usize, self.ring.as_mut())?;
        let asked = Instant::now();
        self.stats.buffer_search += asked - searching;
        if let Some(needed) = needed {
            if let Some(buf) = self.page_from_fsm(rel, needed)? {
                return Ok(buf);
            }
        }
        let lock = self.locker.lock_extension(rel)?;
        let got = Instant::now();
        self.stats.lock_wait += got - asked;
        self.stats.lock_wait_max = self.stats.lock_wait_max.max(got - asked);
        if let Some(needed) = needed {
            if let Some(block) = self.pool.fsm().claim(rel, needed) {
                self.stats.lock_held += got.elapsed();
                drop(lock);
                self.stats.extensions += 1;
                drop(victims);
                if let Some(buf) = self.pin_claimed(rel, block, needed)? {
                    return Ok(buf);
                }
                return self.get_page(rel, needed);
            }
        }
        let extended = pool
            .store()
            .nblocks_from_files(rel, Fork::Main)
            .and_then(|_size_check| pool.store().extend(rel, Fork::Main, k));
        self.stats.filesystem += got.elapsed();
        let new = extended.map(|first| (first, pool.install_new(victims, rel, Fork::Main, first)));
        self.stats.lock_held += got.elapsed();
        drop(lock);
        self.stats.extensions += 1;
        let (first, new) = new?;
        self.stats.blocks_added += u64::from(k);
        self.ramp = (self.ramp * 2).min(self.max_blocks);
        // Publish the spares at once, before initialising them: a backend
        // that claims one now finds its buffer I/O-in-progress and waits
        // for the initialisation below, instead of queueing on the
        // extension lock to extend again.
        pool.fsm().record_many(rel, first + 1..first + k, page::MAX_ITEM_SIZE);
        let mut pages = new.into_iter();
        let mine = pages.next().expect("k ≥ 1").init()?;
        for buf in pages {
            drop(buf.init()?);
        }
        Ok(mine)
    }
}
