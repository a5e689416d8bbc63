//! The buffer pool: its options, counters and shared state, and the
//! exclusive mapping-partition acquisitions every path shares. The paths
//! live beside it: `read.rs` (reading a block in, mapping a new one;
//! its steps 1–4 are referred to below), `victim.rs` (victim selection
//! and write-back), `flush.rs` (flush, drop, truncate), and
//! [`super::guard`] (pins and content-lock guards).
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
//! # Exclusive mapping waits (Postgres Pro 2018)
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
//! These are the waits that starved under `barging` in Postgres Pro 2018: an
//! inserter evicting a victim or mapping a new block, queued behind a
//! stream of shared lookups on the same partition.

use super::clock::Clock;
use super::desc::{
    refcount, usage_count, BufferDesc, BufferId, DIRTY, IO_IN_PROGRESS, LOCKED, MAX_USAGE_COUNT, TAG_VALID, VALID,
};
use super::mapping::{BufferMapping, Partition};
use crate::error::{Result, StorageError};
use crate::fsm::FreeSpaceMap;
use crate::page::PAGE_SIZE;
use crate::rel::BufferTag;
use crate::stats::{Counter, Counters, WaitHistogram};
use crate::store::PageStore;
use hdrhistogram::Histogram;
// The store is a trait object, which loom's `Arc` cannot hold; no
// handshake lives in its reference count, so std's is used.
use std::sync::Arc;
use turnstile_sync::frames::HugeArray;
use turnstile_sync::{tranche_stats, CachePadded, Config, LwLockExclusiveGuard, LwLockPolicy, Tranche, TrancheStats};

/// How a [`BufferPool`] is sized.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolOptions {
    /// Buffers in the pool (`buffer.shared_buffers`).
    pub shared_buffers: usize,
    /// Mapping-table partitions (`buffer.mapping_partitions`).
    pub mapping_partitions: usize,
    /// Admission policy of the pool's `LwLock`s (`lwlock.policy`).
    pub policy: LwLockPolicy,
    /// Look blocks up through recent-buffer hints first
    /// (`buffer.lookup_hints`; see `read.rs`).
    pub lookup_hints: bool,
    /// Back the pages with transparent huge pages (`buffer.huge_pages`).
    pub huge_pages: bool,
    /// Fault every buffer's memory in at start (`buffer.prefault`).
    pub prefault: bool,
}

impl PoolOptions {
    /// The pool `config` describes.
    pub fn from_config(config: &Config) -> PoolOptions {
        PoolOptions {
            shared_buffers: config.buffer.shared_buffers as usize,
            mapping_partitions: config.buffer.mapping_partitions as usize,
            policy: config.lwlock.policy,
            lookup_hints: config.buffer.lookup_hints,
            huge_pages: config.buffer.huge_pages,
            prefault: config.buffer.prefault,
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
    /// Of the hits, those found through a lookup hint, without taking a
    /// mapping-partition lock (`buffer.lookup_hints`).
    pub hint_hits: u64,
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
    /// Of those, the ones that had to wait (Postgres Pro 2018's starved requests);
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
    pub(super) descs: HugeArray<CachePadded<BufferDesc>>,
    /// Buffers one backend may pin at once for a multi-block operation.
    pub(super) proportional_pins: usize,
    pub(super) mapping: BufferMapping,
    pub(super) clock: Clock,
    pub(super) store: Arc<dyn PageStore>,
    pub(super) fsm: FreeSpaceMap,
    pub(super) counters: Counters,
    pub(super) mapping_base: TrancheStats,
    /// Waits of exclusive mapping-partition acquisitions that waited.
    pub(super) exclusive_mapping_waits: WaitHistogram,
    /// The write-ahead log, once the engine has recovered and attached it
    /// ([`BufferPool::set_redo_log`]); without it changes are not logged.
    pub(super) redo: std::sync::OnceLock<Arc<dyn crate::page_log::RedoLog>>,
    /// Relations whose changes are not logged (`UNLOGGED` tables).
    pub(super) unlogged: super::unlogged::Unlogged,
}
/// The share of the pool one backend may pin for a multi-block operation
/// when the pool does not know the backend count (`with_options`).
const DEFAULT_PIN_SHARE: usize = 16;

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
        let mut frames = turnstile_sync::frames::frames::<PAGE_SIZE>(options.shared_buffers, options.huge_pages)
            .map_err(|e| {
                StorageError::Config(format!(
                    "could not map {} MB for {} shared buffers: {e}",
                    (options.shared_buffers * PAGE_SIZE) >> 20,
                    options.shared_buffers
                ))
            })?;
        if options.prefault {
            // Resident from the start (PostgreSQL touches shared buffers as
            // it first uses them): the server's memory then stays flat
            // while the pool fills, so that growth is what leaks.
            // Frames are staggered (`frames::STAGGER`), so a frame spans
            // three 4 kB pages: touch its last byte too, or the pages
            // holding frame ends fault in later, as the pool first fills
            // them (900 kB at the default size, growth the soak saw).
            for f in &mut frames {
                for i in (0..PAGE_SIZE).step_by(4096).chain([PAGE_SIZE - 1]) {
                    f[i] = std::hint::black_box(0);
                }
            }
        }
        // The descriptors, read at random by every lookup, get huge pages
        // too: 4 MB at the default size, one TLB entry per 2 MB.
        let mut frames = frames.into_iter();
        let descs = HugeArray::new(options.shared_buffers, options.huge_pages, |_| {
            let frame = frames.next().expect("frames() returns one frame per buffer");
            CachePadded::new(BufferDesc::new(options.policy, frame))
        })
        .map_err(|e| StorageError::Config(format!("could not map the buffer descriptors: {e}")))?;
        Ok(BufferPool {
            proportional_pins: (options.shared_buffers / DEFAULT_PIN_SHARE).max(1),
            descs,
            mapping: BufferMapping::new(
                options.mapping_partitions,
                options.shared_buffers,
                options.policy,
                options.lookup_hints,
            ),
            clock: Clock::new(options.shared_buffers),
            store,
            fsm: FreeSpaceMap::new(options.policy),
            counters: Counters::new(),
            mapping_base: tranche_stats(Tranche::BufferMapping),
            exclusive_mapping_waits: WaitHistogram::new(),
            redo: std::sync::OnceLock::new(),
            unlogged: Default::default(),
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
            hint_hits: self.counters.get(Counter::HintHits),
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

    /// Checks the pool's invariants (the storage crate's *Invariants*;
    /// the state word's rules in [`super::desc`]) and panics on the first
    /// violation:
    ///
    /// * no header lock, content lock or I/O lock is held, no I/O is in
    ///   progress and no pin is left: every `PinnedBuffer`, victim and
    ///   new buffer has been dropped;
    /// * `DIRTY ⇒ VALID ⇒ TAG_VALID`, and usage counts are at most
    ///   [`super::desc::MAX_USAGE_COUNT`];
    /// * `TAG_VALID(b) ⇔ mapping[tag(b)] = b`: each `TAG_VALID` buffer's
    ///   tag maps to it, each mapping entry names a `TAG_VALID` buffer with
    ///   that tag and sits in the tag's partition, and there are as many
    ///   entries as `TAG_VALID` buffers.
    ///
    /// Call it only at a quiescent point: while no thread reads, extends,
    /// evicts, flushes or drops through the pool. It takes each mapping
    /// partition shared once, so the `BufferMapping` tranche counters move.
    pub fn check_invariants(&self) {
        let mut tagged = 0usize;
        for (id, desc) in self.descs.iter().enumerate() {
            let state = desc.load();
            assert_eq!(state & LOCKED, 0, "buffer {id}: header lock held at a quiescent point");
            assert_eq!(refcount(state), 0, "buffer {id}: {} pin(s) never released", refcount(state));
            assert_eq!(state & IO_IN_PROGRESS, 0, "buffer {id}: I/O in progress at a quiescent point");
            assert!(!desc.io.is_locked(), "buffer {id}: I/O lock held at a quiescent point");
            assert!(!desc.content.is_locked(), "buffer {id}: content lock held at a quiescent point");
            assert!(usage_count(state) <= MAX_USAGE_COUNT, "buffer {id}: usage count {}", usage_count(state));
            assert!(state & DIRTY == 0 || state & VALID != 0, "buffer {id}: DIRTY but not VALID");
            assert!(state & VALID == 0 || state & TAG_VALID != 0, "buffer {id}: VALID but not TAG_VALID");
            if state & TAG_VALID != 0 {
                tagged += 1;
                let tag = desc.tag();
                let mapped = self.mapping.partition(&tag).lock_shared().get(&tag).copied();
                assert_eq!(mapped, Some(id as BufferId), "buffer {id}: TAG_VALID for {tag}, which maps elsewhere");
            }
        }
        let mut entries = 0usize;
        for partition in self.mapping.partitions() {
            let map = partition.lock_shared();
            for (tag, &id) in map.iter() {
                assert!(
                    std::ptr::eq(self.mapping.partition(tag), partition),
                    "{tag} is mapped in a partition its hash does not choose"
                );
                let desc = self.descs.get(id as usize).unwrap_or_else(|| panic!("{tag} maps to no buffer ({id})"));
                assert!(desc.load() & TAG_VALID != 0, "{tag} maps to buffer {id}, which is not TAG_VALID");
                assert_eq!(desc.tag(), *tag, "{tag} maps to buffer {id}, which holds another block");
            }
            entries += map.len();
        }
        assert_eq!(entries, tagged, "mapping entries and TAG_VALID buffers disagree");
    }

    /// Takes `tag`'s mapping partition exclusive, counting the acquisition
    /// and recording its wait if it had one (see the module documentation).
    #[inline]
    pub(super) fn lock_mapping_exclusive(&self, tag: &BufferTag) -> LwLockExclusiveGuard<'_, Partition> {
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
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::page::{self, PageBuf};
    use crate::rel::{BlockNumber, Fork, RelFileId};
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

    /// Whether the 4 kB page holding `addr` is resident (`/proc/self/pagemap`'s
    /// present bit, readable without privileges).
    fn resident(pagemap: &std::fs::File, addr: usize) -> bool {
        use std::os::unix::fs::FileExt;
        let mut entry = [0u8; 8];
        pagemap.read_exact_at(&mut entry, (addr / 4096 * 8) as u64).unwrap();
        u64::from_le_bytes(entry) >> 63 == 1
    }

    /// `buffer.prefault` faults in every page a frame touches, including
    /// the third page a staggered frame reaches into, so that resident
    /// memory does not grow later as the pool first fills those frames.
    #[test]
    fn prefault_makes_every_page_of_every_frame_resident() {
        let options = PoolOptions {
            shared_buffers: 256,
            mapping_partitions: 2,
            policy: LwLockPolicy::Fair,
            lookup_hints: true,
            huge_pages: false,
            prefault: true,
        };
        let pool = BufferPool::with_options(options, Arc::new(EmptyPages)).unwrap();
        let pagemap = std::fs::File::open("/proc/self/pagemap").unwrap();
        let mut cold = Vec::new();
        for (i, desc) in pool.descs.iter().enumerate() {
            let frame = desc.content.lock_shared();
            let start = frame.as_ptr() as usize;
            for addr in (start & !4095..start + PAGE_SIZE).step_by(4096) {
                if !resident(&pagemap, addr) {
                    cold.push((i, addr - start));
                }
            }
        }
        assert!(cold.is_empty(), "pages of frames not faulted in (buffer, offset): {cold:?}");
    }

    /// The invariant check passes on a used pool and catches a leaked pin
    /// and a mapping entry without its buffer.
    #[test]
    fn check_invariants_catches_a_leaked_pin_and_a_stray_mapping_entry() {
        let options = PoolOptions {
            shared_buffers: 4,
            mapping_partitions: 2,
            policy: LwLockPolicy::Fair,
            lookup_hints: true,
            huge_pages: false,
            prefault: false,
        };
        let pool = BufferPool::with_options(options, Arc::new(EmptyPages)).unwrap();
        let rel = RelFileId::new(1, 1);
        for b in 0..10 {
            pool.read_buffer(BufferTag::new(rel, Fork::Main, b)).unwrap().lock_exclusive().mark_dirty();
        }
        pool.check_invariants();
        let pinned = pool.read_buffer(BufferTag::new(rel, Fork::Main, 9)).unwrap();
        let leaked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pool.check_invariants()));
        assert!(leaked.is_err(), "a pin held at a quiescent point went unnoticed");
        drop(pinned);
        pool.check_invariants();
        let stray = BufferTag::new(rel, Fork::Main, 99);
        pool.mapping.partition(&stray).lock_exclusive().insert(stray, 0);
        let bad = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pool.check_invariants()));
        assert!(bad.is_err(), "a mapping entry naming a buffer with another tag went unnoticed");
    }

    /// A miss behind a shared holder of its (only) mapping partition waits
    /// for it in `install`; that wait, and only that one, is recorded.
    #[test]
    fn an_exclusive_mapping_wait_is_recorded_and_an_uncontended_one_is_not() {
        const HELD: Duration = Duration::from_millis(20);
        for policy in [LwLockPolicy::Fair, LwLockPolicy::Barging] {
            let options = PoolOptions {
                shared_buffers: 4,
                mapping_partitions: 1,
                policy,
                lookup_hints: false,
                huge_pages: false,
                prefault: false,
            };
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
