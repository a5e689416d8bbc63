//! Lock-manager counters: what each backend did, summed by
//! [`LockManager::stats`](crate::LockManager::stats).
//!
//! Each backend slot owns one block of counters and only the backend
//! registered in it writes them (a relaxed load and store, no
//! read-modify-write: the hot path must not touch a shared cache line).
//! Readers sum every block; they may see a count a few increments old,
//! never a torn one. A block outlives its backend, so totals only grow;
//! [`Backend::stats`](crate::Backend::stats) subtracts the values seen at
//! registration.

use crate::tag::LockTagKind;
// Statistics only, not part of any handshake: std atomics keep them out of
// the loom model (which would otherwise explore every counter update).
use turnstile_sync::sync::counter::{AtomicU64, Ordering};

/// Counters of the lock manager (whole manager or one backend).
///
/// ```
/// use turnstile_lock::{LockManager, LockMode, LockTag, LockTagKind, Wait};
/// use turnstile_sync::{Config, Profile};
/// let manager = LockManager::new(&Config::preset(Profile::Classic)).unwrap();
/// let mut b = manager.register().unwrap();
/// let before = manager.stats();
/// for rel in 0..20 {
///     b.lock(LockTag::relation(1, rel), LockMode::AccessShare, Wait::Block).unwrap();
/// }
/// let d = manager.stats().since(&before);
/// assert_eq!((d.fast_path_acquires, d.fast_path_overflows, d.shared_acquires), (16, 4, 4));
/// assert_eq!(d.waits_of(LockTagKind::Relation), 0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct LockStats {
    /// Weak relation locks recorded in a fast-path slot.
    pub fast_path_acquires: u64,
    /// Weak relation locks that were eligible for the fast path but found
    /// their group full at the maximum size ("fast path exceeded") and went
    /// to the shared table.
    pub fast_path_overflows: u64,
    /// Times a backend's fast path doubled its groups.
    pub fast_path_grows: u64,
    /// Locks granted through the shared lock table.
    pub shared_acquires: u64,
    /// Partition `LwLock` acquisitions by lock operations (views excluded).
    pub partition_lock_acquires: u64,
    /// Partition `LwLock` acquisitions that could not be granted at once.
    pub partition_lock_waits: u64,
    /// Strong relation locks requested (strong-lock counter increments).
    pub strong_acquires: u64,
    /// Fast-path entries moved into the shared table by strong lockers.
    pub transfers: u64,
    /// Deadlock checks run (after `deadlock_timeout`).
    pub deadlock_checks: u64,
    /// Deadlocks detected (the checker's request was cancelled).
    pub deadlocks: u64,
    /// Soft deadlocks resolved by re-ordering wait queues.
    pub soft_deadlocks_resolved: u64,
    /// Waits ended by the lock timeout.
    pub timeouts: u64,
    /// `NoWait` requests refused.
    pub not_available: u64,
    /// Lock waits, per lock type ([`LockTagKind::index`]).
    pub waits: [u64; LockTagKind::COUNT],
    /// Time spent in lock waits, per lock type, in nanoseconds.
    pub wait_ns: [u64; LockTagKind::COUNT],
}

impl LockStats {
    /// `self - earlier`, counter by counter.
    pub fn since(&self, earlier: &LockStats) -> LockStats {
        let (mut now, mut then) = (*self, *earlier);
        for (n, t) in now.as_mut_array().into_iter().zip(then.as_mut_array()) {
            *n = n.saturating_sub(*t);
        }
        now
    }

    /// Lock waits of one lock type.
    pub fn waits_of(&self, kind: LockTagKind) -> u64 {
        self.waits[kind.index()]
    }

    /// Wait time of one lock type, in nanoseconds.
    pub fn wait_ns_of(&self, kind: LockTagKind) -> u64 {
        self.wait_ns[kind.index()]
    }

    fn as_mut_array(&mut self) -> [&mut u64; COUNTERS] {
        let [w0, w1, w2, w3, w4, w5, w6, w7] = &mut self.waits;
        let [t0, t1, t2, t3, t4, t5, t6, t7] = &mut self.wait_ns;
        [
            &mut self.fast_path_acquires,
            &mut self.fast_path_overflows,
            &mut self.fast_path_grows,
            &mut self.shared_acquires,
            &mut self.partition_lock_acquires,
            &mut self.partition_lock_waits,
            &mut self.strong_acquires,
            &mut self.transfers,
            &mut self.deadlock_checks,
            &mut self.deadlocks,
            &mut self.soft_deadlocks_resolved,
            &mut self.timeouts,
            &mut self.not_available,
            w0,
            w1,
            w2,
            w3,
            w4,
            w5,
            w6,
            w7,
            t0,
            t1,
            t2,
            t3,
            t4,
            t5,
            t6,
            t7,
        ]
    }
}

/// A counter of [`LockStats`], by position.
#[derive(Clone, Copy, Debug)]
#[repr(usize)]
pub(crate) enum Counter {
    FastPathAcquires = 0,
    FastPathOverflows,
    FastPathGrows,
    SharedAcquires,
    PartitionLockAcquires,
    PartitionLockWaits,
    StrongAcquires,
    Transfers,
    DeadlockChecks,
    Deadlocks,
    SoftDeadlocksResolved,
    Timeouts,
    NotAvailable,
    /// First of [`LockTagKind::COUNT`] wait counters.
    Waits,
}

const WAIT_NS: usize = Counter::Waits as usize + LockTagKind::COUNT;
const COUNTERS: usize = WAIT_NS + LockTagKind::COUNT;

/// One backend slot's counters; written only by the registered backend.
#[derive(Debug)]
pub(crate) struct CounterBlock {
    values: [AtomicU64; COUNTERS],
}

impl CounterBlock {
    pub(crate) fn new() -> CounterBlock {
        CounterBlock { values: std::array::from_fn(|_| AtomicU64::new(0)) }
    }

    /// Adds `by` to `counter`. Only the owning backend calls this, so a
    /// load and a store suffice.
    #[inline(always)]
    pub(crate) fn add(&self, counter: Counter, by: u64) {
        self.add_at(counter as usize, by);
    }

    #[inline(always)]
    fn add_at(&self, i: usize, by: u64) {
        let c = &self.values[i];
        c.store(c.load(Ordering::Relaxed).wrapping_add(by), Ordering::Relaxed);
    }

    /// Counts one finished wait on a lock of `kind`.
    pub(crate) fn add_wait(&self, kind: LockTagKind, wait_ns: u64) {
        self.add_at(Counter::Waits as usize + kind.index(), 1);
        self.add_at(WAIT_NS + kind.index(), wait_ns);
    }

    /// Adds this block's values to `into`.
    pub(crate) fn sum_into(&self, into: &mut LockStats) {
        for (i, slot) in into.as_mut_array().into_iter().enumerate() {
            *slot += self.values[i].load(Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_land_in_their_fields() {
        let block = CounterBlock::new();
        block.add(Counter::FastPathAcquires, 3);
        block.add(Counter::NotAvailable, 1);
        block.add_wait(LockTagKind::RelationExtend, 500);
        let mut s = LockStats::default();
        block.sum_into(&mut s);
        assert_eq!(s.fast_path_acquires, 3);
        assert_eq!(s.not_available, 1);
        assert_eq!(s.waits_of(LockTagKind::RelationExtend), 1);
        assert_eq!(s.wait_ns_of(LockTagKind::RelationExtend), 500);
        assert_eq!(s.waits_of(LockTagKind::Relation), 0);
        let later = {
            block.add(Counter::FastPathAcquires, 2);
            let mut s2 = LockStats::default();
            block.sum_into(&mut s2);
            s2
        };
        assert_eq!(later.since(&s).fast_path_acquires, 2);
        assert_eq!(later.since(&s).waits_of(LockTagKind::RelationExtend), 0);
    }
}
