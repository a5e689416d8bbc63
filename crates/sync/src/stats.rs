//! Per-tranche lightweight-lock counters: acquisitions, waits, wait time.
//!
//! Counting every acquisition on one shared atomic would put a contended
//! cache line on the hottest path of the system (and double the cost of an
//! uncontended `LwLock`). Each thread therefore counts into its own block
//! of counters, which only it writes (a relaxed load and store, no
//! read-modify-write); [`tranche_stats`] sums every live block plus the
//! totals of threads that have exited. A reader may see a count a few
//! increments old, never a torn or decreasing one.

use crate::wait_event::Tranche;

/// Counters of one tranche, summed over all threads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct TrancheStats {
    /// Locks granted (shared or exclusive, fast or slow path).
    pub acquisitions: u64,
    /// Acquisitions that could not be granted at once and had to wait.
    pub waits: u64,
    /// Total time spent waiting, in nanoseconds.
    pub wait_ns: u64,
}

impl TrancheStats {
    /// `self - earlier`, counter by counter (for before/after deltas).
    pub fn since(&self, earlier: &TrancheStats) -> TrancheStats {
        TrancheStats {
            acquisitions: self.acquisitions.saturating_sub(earlier.acquisitions),
            waits: self.waits.saturating_sub(earlier.waits),
            wait_ns: self.wait_ns.saturating_sub(earlier.wait_ns),
        }
    }
}

/// The counters of `tranche`, summed over every thread.
pub fn tranche_stats(tranche: Tranche) -> TrancheStats {
    imp::sum(tranche)
}

/// The counters of every tranche, in [`Tranche::ALL`] order.
pub fn all_tranche_stats() -> Vec<(Tranche, TrancheStats)> {
    Tranche::ALL.iter().map(|&t| (t, imp::sum(t))).collect()
}

#[inline(always)]
pub(crate) fn count_acquisition(tranche: Tranche) {
    imp::add(tranche, 0, 1);
}

#[inline]
pub(crate) fn count_wait(tranche: Tranche, wait_ns: u64) {
    imp::add(tranche, 1, 1);
    imp::add(tranche, 2, wait_ns);
}

#[cfg(not(loom))]
mod imp {
    use super::TrancheStats;
    use crate::wait_event::Tranche;
    // Not a modelled handshake: these counters are statistics, written by
    // one thread each; loom builds compile them out (see below).
    use crate::sync::counter::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex};

    type Block = [[AtomicU64; 3]; Tranche::COUNT];

    struct Registry {
        live: Vec<Arc<Block>>,
        retired: [[u64; 3]; Tranche::COUNT],
    }

    static REGISTRY: Mutex<Registry> = Mutex::new(Registry { live: Vec::new(), retired: [[0; 3]; Tranche::COUNT] });

    struct Local(Arc<Block>);

    impl Local {
        fn new() -> Local {
            let block: Arc<Block> = Arc::new(std::array::from_fn(|_| std::array::from_fn(|_| AtomicU64::new(0))));
            lock_registry().live.push(Arc::clone(&block));
            Local(block)
        }
    }

    impl Drop for Local {
        fn drop(&mut self) {
            let mut reg = lock_registry();
            for (t, counters) in self.0.iter().enumerate() {
                for (c, v) in counters.iter().enumerate() {
                    reg.retired[t][c] += v.load(Ordering::Relaxed);
                }
            }
            reg.live.retain(|b| !Arc::ptr_eq(b, &self.0));
        }
    }

    fn lock_registry() -> std::sync::MutexGuard<'static, Registry> {
        // A panic while holding this lock cannot leave the sums inconsistent
        // beyond one lost block; keep counting.
        REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
    }

    thread_local! {
        static LOCAL: Local = Local::new();
    }

    #[inline(always)]
    pub(super) fn add(tranche: Tranche, counter: usize, by: u64) {
        // During thread teardown the block may be gone; drop the count.
        let _ = LOCAL.try_with(|l| {
            let c = &l.0[tranche.index()][counter];
            c.store(c.load(Ordering::Relaxed).wrapping_add(by), Ordering::Relaxed);
        });
    }

    pub(super) fn sum(tranche: Tranche) -> TrancheStats {
        let reg = lock_registry();
        let t = tranche.index();
        let mut s = reg.retired[t];
        for block in &reg.live {
            for (c, total) in s.iter_mut().enumerate() {
                *total += block[t][c].load(Ordering::Relaxed);
            }
        }
        TrancheStats { acquisitions: s[0], waits: s[1], wait_ns: s[2] }
    }
}

#[cfg(loom)]
mod imp {
    use super::TrancheStats;
    use crate::wait_event::Tranche;

    #[inline(always)]
    pub(super) fn add(_tranche: Tranche, _counter: usize, _by: u64) {}

    pub(super) fn sum(_tranche: Tranche) -> TrancheStats {
        TrancheStats::default()
    }
}
