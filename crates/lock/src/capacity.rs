//! The bound on the shared lock table (`lock.max_locks`), without a global
//! hot spot.
//!
//! Every lock object in the shared table uses one unit of capacity. Units
//! live in three places, and their sum never changes:
//!
//! ```text
//! pool + Σ spare[p] + Σ objects[p] = max_locks
//! ```
//!
//! * `pool` — the manager's free units;
//! * `spare[p]` — units partition `p` has taken from the pool in batches of
//!   [`BATCH`] and not used yet;
//! * `objects[p]` — lock objects in partition `p`.
//!
//! Creating an object (under partition `p`'s lock) takes a spare unit of
//! `p`, else a batch from the pool, else steals one spare unit from another
//! partition; only when all three fail is the table full. Deleting an
//! object returns its unit to `spare[p]`, and a partition holding more than
//! `2 × BATCH` spare units gives a batch back. So the table is full exactly
//! when `max_locks` objects exist (like PostgreSQL's partitioned free lists
//! that borrow from each other), while the common case touches only the
//! partition's own cache line, which its `LwLock` already owns.

use crate::sync::atomic::{AtomicU32, Ordering};
use turnstile_sync::CachePadded;

/// Units a partition takes from the pool at once.
pub(crate) const BATCH: u32 = 8;

/// The pool of free units.
#[derive(Debug)]
pub(crate) struct Capacity {
    max: u32,
    pool: CachePadded<AtomicU32>,
}

impl Capacity {
    pub(crate) fn new(max: u32) -> Capacity {
        Capacity { max, pool: CachePadded::new(AtomicU32::new(max)) }
    }

    /// `lock.max_locks`.
    pub(crate) fn max(&self) -> u32 {
        self.max
    }

    /// Units in the pool right now.
    pub(crate) fn pool(&self) -> u32 {
        self.pool.load(Ordering::Relaxed)
    }

    /// Takes one unit for a new object in partition `p` of `partitions`,
    /// whose spare counters `spare(q)` returns. `false`: the table is full.
    pub(crate) fn reserve<'a>(&self, partitions: usize, p: usize, spare: impl Fn(usize) -> &'a AtomicU32) -> bool {
        if take_one(spare(p)) {
            return true;
        }
        let batch = self
            .pool
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |free| (free > 0).then(|| free - free.min(BATCH)));
        if let Ok(free) = batch {
            let got = free.min(BATCH);
            spare(p).fetch_add(got - 1, Ordering::Relaxed);
            return true;
        }
        (0..partitions).any(|q| q != p && take_one(spare(q)))
    }

    /// Returns the unit of a deleted object of partition `p`.
    pub(crate) fn release(&self, spare: &AtomicU32) {
        let now = spare.fetch_add(1, Ordering::Relaxed) + 1;
        if now > 2 * BATCH
            && spare.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |s| (s > BATCH).then(|| s - BATCH)).is_ok()
        {
            self.pool.fetch_add(BATCH, Ordering::Relaxed);
        }
    }
}

fn take_one(spare: &AtomicU32) -> bool {
    spare.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |s| s.checked_sub(1)).is_ok()
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn every_unit_can_be_used_from_any_partition_and_comes_back() {
        let cap = Capacity::new(20);
        let spares: Vec<AtomicU32> = (0..4).map(|_| AtomicU32::new(0)).collect();
        let refs = |q: usize| &spares[q];
        // Partition 0 takes a batch, uses one, then partition 3 uses the rest.
        assert!(cap.reserve(4, 0, refs));
        for _ in 0..19 {
            assert!(cap.reserve(4, 3, refs));
        }
        assert!(!cap.reserve(4, 1, refs), "20 objects exist: full");
        let total = |c: &Capacity| c.pool() + spares.iter().map(|s| s.load(Ordering::Relaxed)).sum::<u32>();
        assert_eq!(total(&cap), 0);
        cap.release(&spares[0]);
        for _ in 0..19 {
            cap.release(&spares[3]);
        }
        assert_eq!(total(&cap), 20);
        assert!(spares[3].load(Ordering::Relaxed) <= 2 * BATCH);
    }
}
