//! [`LockManager`]: the shared state — partitions, strong-lock counters,
//! backend slots — and the views over it.

use crate::error::LockError;
use crate::fastpath::SLOTS_PER_GROUP;
use crate::mode::LockMode;
use crate::partition::SharedTable;
use crate::slot::{BackendSlot, WAITING};
use crate::stats::LockStats;
use crate::sync::atomic::{AtomicU32, Ordering};
use crate::tag::LockTag;
use crate::view::LockRow;
// The manager handle is a std `Arc` even under loom: it only keeps the
// manager alive, takes part in no handshake, and loom's `Arc` cannot be a
// method receiver (`self: &Arc<Self>`).
use std::sync::Arc;
use std::time::{Duration, Instant};
use turnstile_sync::config::{FastPathProtocol, LockConfig};
use turnstile_sync::{CachePadded, Config, LwLockPolicy};

/// The heavyweight lock manager. See the crate documentation for its model.
///
/// ```
/// use turnstile_lock::{LockManager, LockMode, LockTag, Wait};
/// use turnstile_sync::{Config, Profile};
/// let manager = LockManager::new(&Config::preset(Profile::Scalable)).unwrap();
/// let mut backend = manager.register().unwrap();
/// let users = LockTag::relation(1, 16384);
/// backend.lock(users, LockMode::AccessShare, Wait::Block).unwrap();
/// let rows = manager.locks();
/// assert!(rows[0].fastpath && rows[0].granted);
/// backend.release_all();
/// assert!(manager.locks().is_empty());
/// ```
#[derive(Debug)]
pub struct LockManager {
    pub(crate) config: LockConfig,
    pub(crate) shared: SharedTable,
    /// `FastPathStrongRelationLocks`: strong relation locks held or being
    /// acquired, per hash bucket of the tag.
    pub(crate) strong: Box<[AtomicU32]>,
    pub(crate) backends: Box<[CachePadded<BackendSlot>]>,
    /// Fast-path groups a backend starts with, and may grow to.
    pub(crate) fast_path_groups: usize,
    pub(crate) fast_path_groups_max: usize,
    pub(crate) epoch: Instant,
}

/// How full the shared structures are (for tests, the stress checker and
/// diagnostics).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Occupancy {
    /// Lock objects in the shared table.
    pub lock_objects: usize,
    /// Capacity units not in use by a lock object (`max_locks - lock_objects`
    /// once every partition's spare units are counted).
    pub free_capacity: u32,
    /// Fast-path slots in use, over all backends.
    pub fast_path_entries: usize,
    /// Sum of every strong-lock counter.
    pub strong_locks: u64,
    /// Registered backends.
    pub backends: usize,
}

impl LockManager {
    /// A lock manager configured by `config.lock`, its partitions using the
    /// `config.lwlock.policy`.
    pub fn new(config: &Config) -> Result<Arc<LockManager>, LockError> {
        config.validate()?;
        Ok(Arc::new(Self::build(config.lock.clone(), config.lwlock.policy)))
    }

    /// A lock manager from the lock section of a configuration and the
    /// partition locks' policy.
    pub fn with_lock_config(lock: &LockConfig, policy: LwLockPolicy) -> Result<Arc<LockManager>, LockError> {
        let mut config = Config { lock: lock.clone(), ..Config::default() };
        config.lwlock.policy = policy;
        LockManager::new(&config)
    }

    fn build(config: LockConfig, policy: LwLockPolicy) -> LockManager {
        let shared = SharedTable::new(config.partitions as usize, config.max_locks, policy);
        let strong = (0..config.strong_lock_counters).map(|_| AtomicU32::new(0)).collect();
        let backends = (0..config.max_backends).map(|_| CachePadded::new(BackendSlot::new(policy))).collect();
        LockManager {
            fast_path_groups: config.fast_path_slots as usize / SLOTS_PER_GROUP,
            fast_path_groups_max: config.fast_path_slots_max as usize / SLOTS_PER_GROUP,
            config,
            shared,
            strong,
            backends,
            epoch: Instant::now(),
        }
    }

    /// The configuration in force.
    pub fn config(&self) -> &LockConfig {
        &self.config
    }

    /// The strong-lock counter of a tag hash.
    #[inline(always)]
    pub(crate) fn strong_counter(&self, hash: u64) -> &AtomicU32 {
        // A different slice of the hash than the partition number, so one
        // partition's tags spread over all counters.
        &self.strong[((hash >> 32) as usize) & (self.strong.len() - 1)]
    }

    /// Counters summed over every backend that ever registered.
    pub fn stats(&self) -> LockStats {
        let mut total = LockStats::default();
        for slot in self.backends.iter() {
            slot.counters.sum_into(&mut total);
        }
        total
    }

    /// How many backends wait for `tag` (in any mode) right now —
    /// PostgreSQL's `LockWaiterCount`, which bulk relation extension uses
    /// to size its extension by the queue behind the extension lock.
    pub fn waiters(&self, tag: &LockTag) -> usize {
        let hash = tag.hash_code();
        let partition = &self.shared.partitions[self.shared.partition_of(hash)];
        let table = partition.lock.lock_shared();
        table.get(tag, hash).map_or(0, |lock| lock.queue.len())
    }

    /// Whether backend `backend` is queued on a lock right now.
    pub fn is_waiting(&self, backend: usize) -> bool {
        self.backends.get(backend).is_some_and(|s| s.wait_status.load(Ordering::Acquire) == WAITING)
    }

    /// Every lock held or awaited, like `pg_locks`: fast-path entries of
    /// each backend first, then the shared table, read with every
    /// partition lock held in partition order so the rows are one
    /// consistent snapshot of the shared table.
    pub fn locks(&self) -> Vec<LockRow> {
        let mut rows = Vec::new();
        for (backend, slot) in self.backends.iter().enumerate() {
            if !slot.in_use.load(Ordering::Acquire) {
                continue;
            }
            let mut row = |key: u64, modes| {
                let tag = LockTag::relation((key >> 32) as u32, key as u32);
                for mode in LockMode::in_mask(modes) {
                    rows.push(LockRow::new(tag, mode, true, true, backend, None));
                }
            };
            match self.config.fast_path_protocol {
                FastPathProtocol::Lwlock => slot.fast_path.lock_shared().entries().for_each(|(k, m)| row(k, m)),
                FastPathProtocol::Lockfree => slot.lockfree.lock_shared().entries().for_each(|(k, m)| row(k, m)),
            }
        }
        let guards: Vec<_> = self.shared.partitions.iter().map(|p| p.lock.lock_shared()).collect();
        for table in &guards {
            for (tag, lock) in table.iter() {
                for holder in &lock.holders {
                    for mode in LockMode::in_mask(holder.held) {
                        rows.push(LockRow::new(*tag, mode, true, false, holder.backend as usize, None));
                    }
                }
                for waiter in &lock.queue {
                    let start = waiter.since.saturating_duration_since(self.epoch);
                    rows.push(LockRow::new(*tag, waiter.mode, false, false, waiter.backend as usize, Some(start)));
                }
            }
        }
        rows
    }

    /// How full the shared structures are.
    pub fn occupancy(&self) -> Occupancy {
        let mut o = Occupancy::default();
        for slot in self.backends.iter() {
            o.fast_path_entries += match self.config.fast_path_protocol {
                FastPathProtocol::Lwlock => slot.fast_path.lock_shared().used(),
                FastPathProtocol::Lockfree => slot.lockfree.lock_shared().used(),
            };
            o.backends += usize::from(slot.in_use.load(Ordering::Acquire));
        }
        let mut spare = 0;
        for p in self.shared.partitions.iter() {
            o.lock_objects += p.lock.lock_shared().len();
            spare += p.spare.load(Ordering::Relaxed);
        }
        o.free_capacity = self.shared.capacity.pool() + spare;
        o.strong_locks = self.strong.iter().map(|c| u64::from(c.load(Ordering::Relaxed))).sum();
        o
    }

    /// Checks every shared invariant (tests and the stress checker): lock
    /// objects' counts agree with their holders and queues, no object is
    /// unused, capacity adds up, no `lockfree` slot is left pending.
    ///
    /// Call it only while no backend is locking or releasing: it reads the
    /// partitions one after another, so concurrent traffic can move
    /// capacity between the partitions it has and has not read yet, and the
    /// sum would not add up (it panics then, as on a real violation).
    pub fn check_invariants(&self) {
        let mut objects = 0u64;
        let mut spare = 0u64;
        for p in self.shared.partitions.iter() {
            let table = p.lock.lock_shared();
            for (tag, lock) in table.iter() {
                lock.check_invariants();
                assert!(!lock.is_unused(), "unused lock object {tag} was not deleted");
            }
            objects += table.len() as u64;
            spare += u64::from(p.spare.load(Ordering::Relaxed));
        }
        assert_eq!(
            objects + spare + u64::from(self.shared.capacity.pool()),
            u64::from(self.shared.capacity.max()),
            "capacity units lost or invented"
        );
        // `lockfree`: a pending mode lives only inside one fast-path call.
        if self.config.fast_path_protocol == FastPathProtocol::Lockfree {
            for (b, slot) in self.backends.iter().enumerate() {
                let array = slot.lockfree.lock_shared();
                let pending = array.words.iter().any(|w| w.load(Ordering::Acquire) & crate::lockfree::PENDING != 0);
                assert!(!pending, "backend {b} left a pending fast-path mode");
            }
        }
    }

    /// Time since the manager was created (the origin of `wait_start`).
    pub fn uptime(&self) -> Duration {
        self.epoch.elapsed()
    }
}

// The manager is shared by every backend's thread.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<LockManager>();
};

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn hot_shared_data_is_cache_padded() {
        // Each backend's fast-path lock and counters, and each partition's
        // lock and spare capacity, sit on their own 128-byte-aligned lines,
        // so neighbours never share one.
        assert!(std::mem::align_of::<CachePadded<BackendSlot>>() >= 128);
        assert_eq!(std::mem::size_of::<CachePadded<BackendSlot>>() % 128, 0);
        type Padded = CachePadded<crate::partition::Partition>;
        assert!(std::mem::align_of::<Padded>() >= 128);
        assert_eq!(std::mem::size_of::<Padded>() % 128, 0);
        let m = LockManager::new(&Config::default()).unwrap();
        let a = &*m.backends[0] as *const BackendSlot as usize;
        let b = &*m.backends[1] as *const BackendSlot as usize;
        assert!(b - a >= 128);
    }
}
