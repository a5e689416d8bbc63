//! The shared lock table: `lock.partitions` partitions, each an `LwLock`
//! (tranche `LockManager`) over a hash table from tag to [`LockObject`].
//!
//! A lock object is PostgreSQL's `LOCK` with its `PROCLOCK`s folded in:
//!
//! | field | meaning and invariant |
//! |---|---|
//! | `granted[m]` | holders of mode `m` = #{h ∈ holders : m ∈ h.held} |
//! | `grant_mask` | bit `m` set ⇔ `granted[m] > 0` |
//! | `waiting[m]` | queued requests for mode `m` |
//! | `wait_mask` | bit `m` set ⇔ `waiting[m] > 0` |
//! | `holders` | one entry per holding backend, `held ≠ 0` |
//! | `queue` | FIFO of waiting requests; a backend is in at most one queue of the whole table |
//!
//! An object exists ⇔ it has a holder or a waiter: the last release or
//! dequeue deletes it and returns its unit of `lock.max_locks`.
//!
//! Grants follow PostgreSQL's rules (lmgr README, "Lock acquisition"):
//! a request is granted at once if it conflicts with no other backend's
//! granted mode and no queued request; otherwise it joins the queue — at
//! the tail, or just ahead of the first waiter that waits for a mode the
//! requester already holds (and then granted at once if nothing granted or
//! queued ahead conflicts). A release wakes, in queue order, every waiter
//! whose request conflicts neither with the granted modes nor with the
//! requests of earlier waiters still queued.

use crate::capacity::Capacity;
use crate::mode::{LockMode, ModeMask};
use crate::sync::atomic::AtomicU32;
use crate::sync::thread::Thread;
use crate::tag::LockTag;
use hashbrown::hash_table::{Entry, HashTable};
use std::collections::VecDeque;
use std::time::Instant;
use turnstile_sync::{CachePadded, LwLock, LwLockPolicy, Tranche};

/// One backend's holdings on one lock (PostgreSQL's `PROCLOCK`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Holder {
    pub(crate) backend: u32,
    /// Modes held; never 0.
    pub(crate) held: ModeMask,
}

/// A queued request.
#[derive(Debug)]
pub(crate) struct Waiter {
    pub(crate) backend: u32,
    pub(crate) mode: LockMode,
    /// Unparked when the request is granted.
    pub(crate) thread: Thread,
    /// When the wait began (`pg_locks.waitstart`).
    pub(crate) since: Instant,
}

/// What [`LockObject::request`] decided.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Request {
    /// Granted now.
    Granted,
    /// Must wait; join the queue at this position.
    Wait { position: usize },
    /// The requester and `blocker` each wait for what the other holds
    /// (PostgreSQL's "simple deadlock", found without waiting).
    Deadlock { blocker: u32, blocker_mode: LockMode },
}

/// A lock in the shared table (PostgreSQL's `LOCK`).
#[derive(Debug, Default)]
pub(crate) struct LockObject {
    granted: [u32; 9],
    grant_mask: ModeMask,
    waiting: [u32; 9],
    wait_mask: ModeMask,
    pub(crate) holders: Vec<Holder>,
    pub(crate) queue: VecDeque<Waiter>,
}

impl LockObject {
    /// No holder and no waiter: the object may be deleted.
    #[inline]
    pub(crate) fn is_unused(&self) -> bool {
        self.holders.is_empty() && self.queue.is_empty()
    }

    /// Modes `backend` holds here.
    #[inline]
    pub(crate) fn held_by(&self, backend: u32) -> ModeMask {
        self.holders.iter().find(|h| h.backend == backend).map_or(0, |h| h.held)
    }

    /// Whether `mode` conflicts with a mode granted to a backend other than
    /// the requester, which holds `own` (PostgreSQL's `LockCheckConflicts`:
    /// a backend never conflicts with itself).
    #[inline]
    fn conflicts_with_granted(&self, mode: LockMode, own: ModeMask) -> bool {
        let conflicting = mode.conflict_mask() & self.grant_mask;
        if conflicting == 0 {
            return false;
        }
        LockMode::in_mask(conflicting).any(|m| self.granted[m as usize] > u32::from(own & m.bit() != 0))
    }

    /// Decides a new request of `backend` for `mode` (which it does not hold).
    pub(crate) fn request(&mut self, backend: u32, mode: LockMode) -> Request {
        let own = self.held_by(backend);
        debug_assert!(own & mode.bit() == 0, "the local table handles re-acquisition");
        let conflict = mode.conflict_mask();
        if conflict & self.wait_mask == 0 && !self.conflicts_with_granted(mode, own) {
            self.grant(backend, mode);
            return Request::Granted;
        }
        let mut position = self.queue.len();
        if own != 0 {
            let mut ahead: ModeMask = 0;
            for (i, w) in self.queue.iter().enumerate() {
                if w.mode.conflict_mask() & own != 0 {
                    let theirs = self.held_by(w.backend);
                    if conflict & theirs != 0 {
                        return Request::Deadlock { blocker: w.backend, blocker_mode: w.mode };
                    }
                    if conflict & ahead == 0 && !self.conflicts_with_granted(mode, own) {
                        self.grant(backend, mode);
                        return Request::Granted;
                    }
                    position = i;
                    break;
                }
                ahead |= w.mode.bit();
            }
        }
        Request::Wait { position }
    }

    /// Records `mode` as granted to `backend`.
    pub(crate) fn grant(&mut self, backend: u32, mode: LockMode) {
        let bit = mode.bit();
        match self.holders.iter_mut().find(|h| h.backend == backend) {
            Some(h) => {
                assert!(h.held & bit == 0, "backend {backend} already holds {mode}");
                h.held |= bit;
            }
            None => self.holders.push(Holder { backend, held: bit }),
        }
        self.granted[mode as usize] += 1;
        self.grant_mask |= bit;
        // Paired with `ungrant`'s: the grant is visible in all three places.
        debug_assert!(self.held_by(backend) & bit != 0 && self.granted[mode as usize] > 0);
    }

    /// Removes `mode` from `backend`'s holdings; `false` if not held.
    pub(crate) fn ungrant(&mut self, backend: u32, mode: LockMode) -> bool {
        let bit = mode.bit();
        let Some(i) = self.holders.iter().position(|h| h.backend == backend && h.held & bit != 0) else {
            return false;
        };
        self.holders[i].held &= !bit;
        if self.holders[i].held == 0 {
            self.holders.swap_remove(i);
        }
        let count = &mut self.granted[mode as usize];
        assert!(*count > 0, "granted count of {mode} out of step with holders");
        *count -= 1;
        if *count == 0 {
            self.grant_mask &= !bit;
        }
        // Paired with `grant`'s: the grant is gone from the holder, and the
        // mask still says whether anyone else holds the mode.
        debug_assert!(self.held_by(backend) & bit == 0);
        debug_assert_eq!(self.grant_mask & bit != 0, self.granted[mode as usize] > 0);
        true
    }

    /// Queues `waiter` at `position`.
    pub(crate) fn enqueue(&mut self, position: usize, waiter: Waiter) {
        debug_assert!(self.queue.iter().all(|w| w.backend != waiter.backend));
        self.waiting[waiter.mode as usize] += 1;
        self.wait_mask |= waiter.mode.bit();
        self.queue.insert(position, waiter);
    }

    /// Removes `backend`'s request from the queue (timeout, deadlock).
    pub(crate) fn dequeue(&mut self, backend: u32) -> Option<Waiter> {
        let i = self.queue.iter().position(|w| w.backend == backend)?;
        let waiter = self.queue.remove(i)?;
        self.forget_waiting(waiter.mode);
        Some(waiter)
    }

    fn forget_waiting(&mut self, mode: LockMode) {
        let count = &mut self.waiting[mode as usize];
        assert!(*count > 0, "waiting count of {mode} out of step with the queue");
        *count -= 1;
        if *count == 0 {
            self.wait_mask &= !mode.bit();
        }
    }

    /// Re-orders the queue to `order` (backend ids, a permutation of the
    /// queue), as the deadlock checker decided.
    pub(crate) fn reorder(&mut self, order: &[u32]) {
        assert_eq!(order.len(), self.queue.len(), "a new wait order is a permutation of the queue");
        let mut old: Vec<Option<Waiter>> = self.queue.drain(..).map(Some).collect();
        for &backend in order {
            let i = old
                .iter()
                .position(|w| w.as_ref().is_some_and(|w| w.backend == backend))
                .expect("a new wait order names only queued backends");
            self.queue.push_back(old[i].take().expect("each backend once"));
        }
    }

    /// Grants, in queue order, every waiter whose request conflicts neither
    /// with granted modes nor with earlier waiters still queued (PostgreSQL's
    /// `ProcLockWakeup`); calls `woken` for each.
    pub(crate) fn wake_waiters(&mut self, mut woken: impl FnMut(&Waiter)) {
        let mut ahead: ModeMask = 0;
        let mut i = 0;
        while i < self.queue.len() {
            let (backend, mode) = (self.queue[i].backend, self.queue[i].mode);
            if mode.conflict_mask() & ahead == 0 && !self.conflicts_with_granted(mode, self.held_by(backend)) {
                let waiter = self.queue.remove(i).expect("index in range");
                self.forget_waiting(mode);
                self.grant(backend, mode);
                woken(&waiter);
            } else {
                ahead |= mode.bit();
                i += 1;
            }
        }
    }

    /// Checks the invariants of the module table (tests and debug builds).
    pub(crate) fn check_invariants(&self) {
        for m in LockMode::ALL {
            let holders = self.holders.iter().filter(|h| h.held & m.bit() != 0).count() as u32;
            assert_eq!(self.granted[m as usize], holders, "granted[{m}]");
            assert_eq!(self.grant_mask & m.bit() != 0, holders > 0, "grant_mask bit of {m}");
            let waiters = self.queue.iter().filter(|w| w.mode == m).count() as u32;
            assert_eq!(self.waiting[m as usize], waiters, "waiting[{m}]");
            assert_eq!(self.wait_mask & m.bit() != 0, waiters > 0, "wait_mask bit of {m}");
        }
        assert!(self.holders.iter().all(|h| h.held != 0));
    }
}

/// One entry of a partition's hash table.
#[derive(Debug)]
pub(crate) struct TableEntry {
    pub(crate) tag: LockTag,
    hash: u64,
    pub(crate) lock: LockObject,
}

/// The lock objects of one partition.
///
/// A deleted object's holder and wait lists go to `spare`, emptied but
/// with their memory, and the next object created takes them: as
/// PostgreSQL's shared lock hash keeps deleted `LOCK` and `PROCLOCK`
/// entries on a free list in preallocated shared memory, taking and
/// releasing a lock here calls the allocator only while the partition
/// grows past the most objects it has held at once.
#[derive(Debug, Default)]
pub(crate) struct PartitionTable {
    table: HashTable<TableEntry>,
    spare: Vec<(Vec<Holder>, VecDeque<Waiter>)>,
}

impl PartitionTable {
    /// The object of `tag`, if any.
    #[inline]
    pub(crate) fn get_mut(&mut self, tag: &LockTag, hash: u64) -> Option<&mut LockObject> {
        self.table.find_mut(hash, |e| e.tag == *tag).map(|e| &mut e.lock)
    }

    /// The object of `tag`, if any.
    pub(crate) fn get(&self, tag: &LockTag, hash: u64) -> Option<&LockObject> {
        self.table.find(hash, |e| e.tag == *tag).map(|e| &e.lock)
    }

    /// The object of `tag`, created if absent and `reserve()` grants a unit
    /// of capacity; `None` when the table is full.
    #[inline]
    pub(crate) fn get_or_create(
        &mut self,
        tag: &LockTag,
        hash: u64,
        reserve: impl FnOnce() -> bool,
    ) -> Option<&mut LockObject> {
        match self.table.entry(hash, |e| e.tag == *tag, |e| e.hash) {
            Entry::Occupied(o) => Some(&mut o.into_mut().lock),
            Entry::Vacant(v) => {
                if !reserve() {
                    return None;
                }
                let mut lock = LockObject::default();
                if let Some((holders, queue)) = self.spare.pop() {
                    (lock.holders, lock.queue) = (holders, queue);
                }
                Some(&mut v.insert(TableEntry { tag: *tag, hash, lock }).into_mut().lock)
            }
        }
    }

    /// Deletes the object of `tag` if it is unused; `true` if it did (the
    /// caller returns the capacity unit).
    #[inline]
    pub(crate) fn remove_if_unused(&mut self, tag: &LockTag, hash: u64) -> bool {
        match self.table.find_entry(hash, |e| e.tag == *tag) {
            Ok(o) if o.get().lock.is_unused() => {
                let (entry, _) = o.remove();
                // Empty (unused), with their capacity.
                self.spare.push((entry.lock.holders, entry.lock.queue));
                true
            }
            _ => false,
        }
    }

    /// Number of lock objects.
    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }

    /// Every object with its tag.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&LockTag, &LockObject)> {
        self.table.iter().map(|e| (&e.tag, &e.lock))
    }
}

/// One partition: its lock and its spare capacity (see
/// [`crate::capacity`]), padded to its own cache lines.
#[derive(Debug)]
pub(crate) struct Partition {
    pub(crate) lock: LwLock<PartitionTable>,
    pub(crate) spare: AtomicU32,
}

/// The partitions of the shared table.
#[derive(Debug)]
pub(crate) struct SharedTable {
    pub(crate) partitions: Box<[CachePadded<Partition>]>,
    pub(crate) capacity: Capacity,
}

impl SharedTable {
    pub(crate) fn new(partitions: usize, max_locks: u32, policy: LwLockPolicy) -> SharedTable {
        assert!(partitions.is_power_of_two());
        SharedTable {
            partitions: (0..partitions)
                .map(|_| {
                    CachePadded::new(Partition {
                        lock: LwLock::new(Tranche::LockManager, policy, PartitionTable::default()),
                        spare: AtomicU32::new(0),
                    })
                })
                .collect(),
            capacity: Capacity::new(max_locks),
        }
    }

    /// The partition of a tag with hash `hash`.
    #[inline(always)]
    pub(crate) fn partition_of(&self, hash: u64) -> usize {
        (hash as usize) & (self.partitions.len() - 1)
    }

    /// Takes a capacity unit for a new object in partition `p`.
    pub(crate) fn reserve(&self, p: usize) -> bool {
        self.capacity.reserve(self.partitions.len(), p, |q| &self.partitions[q].spare)
    }

    /// Returns the unit of a deleted object of partition `p`.
    #[inline]
    pub(crate) fn release_unit(&self, p: usize) {
        self.capacity.release(&self.partitions[p].spare);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use LockMode::*;

    fn waiter(backend: u32, mode: LockMode) -> Waiter {
        Waiter { backend, mode, thread: std::thread::current(), since: Instant::now() }
    }

    #[test]
    fn grants_conflicts_and_self_compatibility() {
        let mut l = LockObject::default();
        assert_eq!(l.request(1, AccessShare), Request::Granted);
        assert_eq!(l.request(2, RowExclusive), Request::Granted);
        // A backend does not conflict with itself: 1 may take Exclusive
        // only if 2's RowExclusive is gone.
        assert_eq!(l.request(1, Exclusive), Request::Wait { position: 0 });
        assert!(l.ungrant(2, RowExclusive));
        assert_eq!(l.request(1, Exclusive), Request::Granted);
        assert!(!l.ungrant(2, RowExclusive), "not held any more");
        l.check_invariants();
    }

    #[test]
    fn wakeups_are_in_queue_order_and_respect_earlier_waiters() {
        let mut l = LockObject::default();
        assert_eq!(l.request(1, AccessExclusive), Request::Granted);
        for (b, m) in [(2, AccessShare), (3, AccessExclusive), (4, AccessShare)] {
            let Request::Wait { position } = l.request(b, m) else { panic!("{b} must wait") };
            l.enqueue(position, waiter(b, m));
        }
        let mut woken = Vec::new();
        assert!(l.ungrant(1, AccessExclusive));
        l.wake_waiters(|w| woken.push(w.backend));
        // 2 is granted; 3 conflicts with it; 4 conflicts with 3, queued ahead.
        assert_eq!(woken, vec![2]);
        assert_eq!(l.queue.iter().map(|w| w.backend).collect::<Vec<_>>(), vec![3, 4]);
        l.check_invariants();
        assert!(l.ungrant(2, AccessShare));
        woken.clear();
        l.wake_waiters(|w| woken.push(w.backend));
        assert_eq!(woken, vec![3]);
        l.check_invariants();
    }

    #[test]
    fn a_new_request_queues_behind_a_conflicting_waiter() {
        let mut l = LockObject::default();
        assert_eq!(l.request(1, AccessShare), Request::Granted);
        assert_eq!(l.request(2, AccessExclusive), Request::Wait { position: 0 });
        l.enqueue(0, waiter(2, AccessExclusive));
        assert_eq!(l.request(3, AccessShare), Request::Wait { position: 1 }, "no barging past a waiter");
    }

    #[test]
    fn a_holder_jumps_ahead_of_waiters_it_blocks_or_detects_a_simple_deadlock() {
        let mut l = LockObject::default();
        assert_eq!(l.request(1, RowShare), Request::Granted);
        assert_eq!(l.request(2, Share), Request::Granted);
        // 3 waits for AccessExclusive (blocked by 1 and 2).
        l.enqueue(0, waiter(3, AccessExclusive));
        // 1 asks for RowExclusive, which conflicts with 2's Share: it goes
        // ahead of 3, whose request conflicts with what 1 holds.
        assert_eq!(l.request(1, RowExclusive), Request::Wait { position: 0 });
        // 2 asks for AccessShare: nothing granted conflicts, and it holds
        // Share that 3 waits on, so it is granted ahead of 3.
        assert_eq!(l.request(2, AccessShare), Request::Granted);
        // Simple deadlock: 4 holds AccessShare, waits for AccessExclusive;
        // 5 holds AccessShare and asks for AccessExclusive too.
        let mut d = LockObject::default();
        assert_eq!(d.request(4, AccessShare), Request::Granted);
        assert_eq!(d.request(5, AccessShare), Request::Granted);
        assert_eq!(d.request(4, AccessExclusive), Request::Wait { position: 0 });
        d.enqueue(0, waiter(4, AccessExclusive));
        assert_eq!(d.request(5, AccessExclusive), Request::Deadlock { blocker: 4, blocker_mode: AccessExclusive });
    }

    #[test]
    fn reorder_and_dequeue_keep_counts() {
        let mut l = LockObject::default();
        assert_eq!(l.request(9, AccessExclusive), Request::Granted);
        for (i, b) in [1, 2, 3].into_iter().enumerate() {
            l.enqueue(i, waiter(b, if b == 2 { Share } else { AccessShare }));
        }
        l.reorder(&[3, 1, 2]);
        assert_eq!(l.queue.iter().map(|w| w.backend).collect::<Vec<_>>(), vec![3, 1, 2]);
        assert_eq!(l.dequeue(2).map(|w| w.mode), Some(Share));
        assert!(l.dequeue(2).is_none());
        l.check_invariants();
    }
}
