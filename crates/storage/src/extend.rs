//! Relation extension (Freund 2020): giving an inserter a page with room,
//! from the free-space map or by growing the relation, under one of two
//! strategies (`storage.extend`).
//!
//! # `classic` — PostgreSQL ≤ 15
//!
//! [`Extender::get_page`] follows `RelationGetBufferForTuple`
//! (`src/backend/access/heap/hio.c`) as it stood until PostgreSQL 15:
//!
//! 1. Ask the free-space map for a page with room; use it if it has.
//! 2. Otherwise try the relation-extension lock without waiting
//!    (`ConditionalLockRelationForExtension`,
//!    [`ExtensionLocker::try_lock_extension`]). Got it: go to 5.
//! 3. Contended: wait for the lock, then ask the map again — the backend
//!    that held the lock has probably added pages meanwhile. One found:
//!    release the lock and use it (back to 1 if it turns out too full).
//! 4. Still none: `RelationAddExtraBlocks`. Count the backends queued
//!    behind us on the lock ([`ExtensionGuard::waiters`],
//!    `RelationExtensionLockWaiterCount`); if any, add
//!    `min(`[`CLASSIC_EXTRA_BLOCKS_MAX`]`, waiters × `[`CLASSIC_EXTRA_BLOCKS_PER_WAITER`]`)`
//!    blocks, *one at a time*, each recording its page in the free-space
//!    map at once so other inserters can take it.
//! 5. Add one more block for ourselves, release the lock, return it.
//!
//! Every block of 4 and 5 is a whole `ReadBuffer(P_NEW)` + `PageInit`
//! under the lock, in PostgreSQL's order: the size check (`mdnblocks`, an
//! `fstat` of the last segment), the victim search (including writing back
//! a dirty victim — with a bulk-write ring it nearly always is dirty), the
//! zeroing of the buffer, the file extension (a zero-page `pwrite`), the
//! mapping insert and the page initialisation. Freund 2020 measured that at 8
//! clients the lock is then held for 76 % of the run, and its profile shows
//! `RelationAddExtraBlocks` at 8.35 %: extra blocks spread the lock's cost
//! over more pages but do not take any of the work out from under it.
//!
//! Two differences from PostgreSQL, neither changing what is done under
//! the lock by more than a page-sized `memset`:
//!
//! * PostgreSQL 12–15 leaves the extra pages uninitialised (the claimer
//!   runs `PageInit`); here they are initialised as they are added, because
//!   the buffer pool has no "valid but new" state for a block it creates.
//!   A claimer still initialises a page it finds new (an evicted extra
//!   page reads back as zeroes).
//! * `FreeSpaceMapVacuumRange` has no counterpart: [`FreeSpaceMap::record`]
//!   updates the map's search tree at once.
//!
//! [`Extender::extend`] (no space request; PostgreSQL's `use_fsm = false`)
//! takes the lock unconditionally and adds one block.
//!
//! # `bulk` — the fix
//!
//! PostgreSQL 16's `RelationAddBlocks` / `ExtendBufferedRelBy`, with the
//! victim search moved out of the lock as Freund 2020 asks:
//!
//! 1. *Before* the lock, find and clean `k` victim buffers (write-backs
//!    happen here, in parallel across backends). If the free-space map
//!    has a page by then, use it instead.
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
//! doubles), and never pins more than this backend's share of the pool
//! ([`BufferPool::proportional_pins`]: `shared_buffers / max_backends`,
//! PostgreSQL's `LimitAdditionalPins`). A backend
//! that had to wait for the lock still extends, by the `k` it sized from
//! the queue it found, rather than rechecking the map after the wait as
//! `classic` does: PostgreSQL 16 dropped that recheck too, and here it cost
//! a pass through the lock per page taken and a wasted victim search.
//!
//! # Instrumentation
//!
//! Each [`Extender`] (one per backend) accumulates the four times Freund 2020
//! measured: waiting for the lock, holding it, in the file system (the
//! size check and the extension call), and searching for buffers (victim
//! search including write-back, and zeroing) — [`ExtensionStats`]. Under
//! `classic` every extra block's phases count too; a failed conditional
//! attempt counts as lock wait.
//!
//! [`FreeSpaceMap::record`]: crate::fsm::FreeSpaceMap::record

use crate::buffer::{BufferPool, PinnedBuffer, Ring};
use crate::error::Result;
use crate::page;
use crate::rel::{BlockNumber, BufferTag, Fork, RelFileId};
use std::time::{Duration, Instant};
use turnstile_sync::config::ExtendStrategy;

/// Extra blocks per backend waiting on the extension lock that a
/// contended `classic` extension adds (PostgreSQL ≤ 15's
/// `RelationAddExtraBlocks`: "smaller numbers were insufficient").
pub const CLASSIC_EXTRA_BLOCKS_PER_WAITER: u32 = 20;

/// The most extra blocks one contended `classic` extension adds
/// (PostgreSQL ≤ 15's cap "to prevent pathological results").
pub const CLASSIC_EXTRA_BLOCKS_MAX: u32 = 512;

/// The relation-extension lock, as the extender needs it: exclusive
/// acquisition, waiting or not, and the number of waiters (to size
/// extensions). Implemented over `turnstile-lock`'s heavyweight lock
/// manager for `turnstile_lock::Backend` (see [`crate::extlock`]).
pub trait ExtensionLocker {
    /// Held while the lock is; releases it on drop.
    type Guard<'a>: ExtensionGuard
    where
        Self: 'a;

    /// Takes `rel`'s extension lock exclusively, waiting as needed
    /// (`LockRelationForExtension`).
    fn lock_extension(&mut self, rel: RelFileId) -> Result<Self::Guard<'_>>;

    /// Takes `rel`'s extension lock exclusively if that needs no wait;
    /// `None` if another backend holds it or is queued for it
    /// (`ConditionalLockRelationForExtension`).
    fn try_lock_extension(&mut self, rel: RelFileId) -> Result<Option<Self::Guard<'_>>>;

    /// How many backends wait for `rel`'s extension lock right now.
    fn extension_waiters(&mut self, rel: RelFileId) -> usize;
}

/// A held relation-extension lock, which can tell how many backends queue
/// behind it (PostgreSQL's `RelationExtensionLockWaiterCount`, called by
/// the holder).
pub trait ExtensionGuard {
    /// Backends waiting for this lock right now.
    fn waiters(&self) -> usize;
}

/// Per-backend extension times and counts (`extension_stats`), the
/// breakdown of Freund 2020.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct ExtensionStats {
    /// Time waiting for the extension lock.
    pub lock_wait: Duration,
    /// Longest single wait for the extension lock.
    pub lock_wait_max: Duration,
    /// Time holding it.
    pub lock_held: Duration,
    /// Time in the file system: the size check (`fstat`) and the extension
    /// call.
    pub filesystem: Duration,
    /// Time finding (and cleaning) victim buffers; under `classic` also
    /// zeroing them, as `ReadBuffer(P_NEW)` does.
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

    fn note_lock_wait(&mut self, waited: Duration) {
        self.lock_wait += waited;
        self.lock_wait_max = self.lock_wait_max.max(waited);
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
        match self.strategy {
            ExtendStrategy::Classic => self.get_page_classic(rel, needed),
            ExtendStrategy::Bulk => {
                if let Some(buf) = self.page_from_fsm(rel, needed)? {
                    return Ok(buf);
                }
                self.extend_bulk(rel, Some(needed))
            }
        }
    }

    /// Adds blocks to `rel`'s main fork (one, or `k` under `bulk`) and
    /// returns the first, pinned and initialised. Under `classic` this is
    /// PostgreSQL's extension without the free-space map (`use_fsm =
    /// false`): the lock is taken unconditionally and no extra blocks are
    /// added.
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

    /// `classic` [`Self::get_page`]: PostgreSQL ≤ 15's
    /// `RelationGetBufferForTuple`, steps 1–5 of the module docs.
    fn get_page_classic(&mut self, rel: RelFileId, needed: usize) -> Result<PinnedBuffer<'p>> {
        // Each pass either returns, or found a page at the recheck that
        // proved too full: that page is then recorded with its real free
        // space (< `needed`) and not offered again for this request, so
        // the loop ends once the map has no more candidates.
        loop {
            if let Some(buf) = self.page_from_fsm(rel, needed)? {
                return Ok(buf);
            }
            let asked = Instant::now();
            if let Some(lock) = self.locker.try_lock_extension(rel)? {
                // Uncontended: extend by the one block we need.
                let got = Instant::now();
                let (pool, ring, stats) = (self.pool, self.ring.as_mut(), &mut self.stats);
                stats.note_lock_wait(got - asked);
                return extend_classic_locked(pool, ring, stats, rel, lock, got, false);
            }
            let lock = self.locker.lock_extension(rel)?;
            let got = Instant::now();
            self.stats.note_lock_wait(got - asked);
            // Another backend has likely extended while we waited.
            if let Some(block) = self.pool.fsm().claim(rel, needed) {
                self.stats.lock_held += got.elapsed();
                drop(lock);
                self.stats.extensions += 1;
                if let Some(buf) = self.pin_claimed(rel, block, needed)? {
                    return Ok(buf);
                }
                continue;
            }
            let (pool, ring, stats) = (self.pool, self.ring.as_mut(), &mut self.stats);
            return extend_classic_locked(pool, ring, stats, rel, lock, got, true);
        }
    }

    fn extend_classic(&mut self, rel: RelFileId) -> Result<PinnedBuffer<'p>> {
        let asked = Instant::now();
        let lock = self.locker.lock_extension(rel)?;
        let got = Instant::now();
        let (pool, ring, stats) = (self.pool, self.ring.as_mut(), &mut self.stats);
        stats.note_lock_wait(got - asked);
        extend_classic_locked(pool, ring, stats, rel, lock, got, false)
    }

    /// The bulk path. With `needed` (an inserter's request), the map is
    /// checked again after the victim search, before queueing for the lock:
    /// a page found there is used instead and the victims go back to the
    /// free list clean.
    ///
    /// There is no recheck *after* the lock wait (PostgreSQL 16 dropped it
    /// too): a backend that waited extends by its own `k`, sized with the
    /// queue it sees then, instead of holding the lock only to take one of
    /// the holder's spares. With the recheck every waiter passed through
    /// the lock once per page it got and threw away the `k` victims it had
    /// cleaned; W4 at 4 clients loaded 8 % less (5 runs each, 630–651
    /// against 688–706 MB/s), at 1 and 16 clients the same.
    fn extend_bulk(&mut self, rel: RelFileId, needed: Option<usize>) -> Result<PinnedBuffer<'p>> {
        let pool = self.pool;
        let pin_limit = pool.proportional_pins() as u32;
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
        self.stats.note_lock_wait(got - asked);
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

/// The part of a `classic` extension done under the lock, which `lock`
/// holds since `got`: with `extra` (the lock was contended and the map
/// had nothing), `RelationAddExtraBlocks` first; then one block for the
/// caller. Releases the lock and returns that block.
fn extend_classic_locked<'p, G: ExtensionGuard>(
    pool: &'p BufferPool,
    mut ring: Option<&mut Ring>,
    stats: &mut ExtensionStats,
    rel: RelFileId,
    lock: G,
    got: Instant,
    extra: bool,
) -> Result<PinnedBuffer<'p>> {
    let result = (|| {
        if extra {
            add_extra_blocks_classic(pool, ring.as_deref_mut(), stats, rel, lock.waiters())?;
        }
        let mine = add_block_classic(pool, ring, stats, rel)?;
        stats.blocks_added += 1;
        Ok(mine)
    })();
    // Held time ends when the release starts: on an oversubscribed
    // machine the releaser may be descheduled inside the release by the
    // waiter it wakes, which must not count twice.
    stats.lock_held += got.elapsed();
    drop(lock);
    stats.extensions += 1;
    result
}

/// PostgreSQL ≤ 15's `RelationAddExtraBlocks`, under the extension lock:
/// `min(512, 20 × waiters)` blocks, one [`add_block_classic`] each, each
/// page recorded in the free-space map as soon as it exists so that
/// inserters arriving meanwhile find it. If one fails, the blocks added
/// before it stay in the relation and in the map.
fn add_extra_blocks_classic(
    pool: &BufferPool,
    mut ring: Option<&mut Ring>,
    stats: &mut ExtensionStats,
    rel: RelFileId,
    waiters: usize,
) -> Result<()> {
    let waiters = u32::try_from(waiters).unwrap_or(u32::MAX);
    let extra = waiters.saturating_mul(CLASSIC_EXTRA_BLOCKS_PER_WAITER).min(CLASSIC_EXTRA_BLOCKS_MAX);
    for _ in 0..extra {
        let buf = add_block_classic(pool, ring.as_deref_mut(), stats, rel)?;
        stats.blocks_added += 1;
        let block = buf.block();
        // Unpinned before it is published, as PostgreSQL's
        // `UnlockReleaseBuffer` precedes `RecordPageWithFreeSpace`.
        drop(buf);
        pool.fsm().record(rel, block, page::MAX_ITEM_SIZE);
    }
    Ok(())
}

/// One block added the PostgreSQL ≤ 15 way, everything by the caller that
/// holds the extension lock (`ReadBuffer(P_NEW)` + `PageInit`): size check,
/// victim search with write-back, zeroing, a one-block file extension,
/// mapping insert, page initialisation. Times go to `stats`.
fn add_block_classic<'p>(
    pool: &'p BufferPool,
    ring: Option<&mut Ring>,
    stats: &mut ExtensionStats,
    rel: RelFileId,
) -> Result<PinnedBuffer<'p>> {
    let start = Instant::now();
    let nblocks = pool.store().nblocks_from_files(rel, Fork::Main)?;
    let sized = Instant::now();
    stats.filesystem += sized - start;
    let victim = pool.victim(ring)?;
    victim.zero_page();
    let searched = Instant::now();
    stats.buffer_search += searched - sized;
    let extended = pool.store().extend(rel, Fork::Main, 1);
    stats.filesystem += searched.elapsed();
    let first = extended?;
    debug_assert_eq!(first, nblocks, "the extension lock keeps the size from changing under us");
    let mut new = pool.install_new(vec![victim], rel, Fork::Main, first);
    new.pop().expect("one victim, one buffer").init()
}
