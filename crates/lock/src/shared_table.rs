//! A backend's work in the shared lock table ([`Ctx`]): strong-lock
//! announcements and the transfer of other backends' fast-path locks,
//! acquiring and waiting in a partition, cancelling a wait, releasing and
//! waking, and the deadlock check. [`crate::Backend`] calls it when a lock
//! cannot stay backend-local.

use crate::deadlock::{self, GraphLock, Outcome, WaitGraph};
use crate::error::{DeadlockEdge, LockError};
use crate::fastpath::SLOTS_PER_GROUP;
use crate::local::LocalLock;
use crate::lockfree::{held_modes, GENERATION, HELD, PENDING};
use crate::manager::LockManager;
use crate::mode::LockMode;
use crate::partition::{PartitionTable, Request, Waiter};
use crate::slot::{BackendSlot, GRANTED, IDLE, WAITING};
use crate::stats::Counter;
use crate::sync::atomic::{fence, Ordering};
use crate::sync::thread::{self, Thread};
use crate::tag::{LockTag, LockTagKind};
use crate::wait::park_until;
use std::time::{Duration, Instant};
use turnstile_sync::activity::report_wait;
use turnstile_sync::config::FastPathProtocol;
use turnstile_sync::{LwLockExclusiveGuard, WaitEvent};

/// Wakes the threads a release or a dequeue granted or moved.
pub(crate) fn unpark_all(threads: impl IntoIterator<Item = Thread>) {
    for t in threads {
        t.unpark();
    }
}

/// Borrowed shared state of one backend, for the shared-table paths.
pub(crate) struct Ctx<'a> {
    manager: &'a LockManager,
    slot: &'a BackendSlot,
    id: u32,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(manager: &'a LockManager, id: usize) -> Ctx<'a> {
        Ctx { manager, slot: &manager.backends[id], id: id as u32 }
    }

    /// Locks partition `p`, counting the acquisition and whether it waited.
    #[inline]
    pub(crate) fn lock_partition(&self, p: usize) -> LwLockExclusiveGuard<'a, PartitionTable> {
        self.slot.counters.add(Counter::PartitionLockAcquires, 1);
        let lock = &self.manager.shared.partitions[p].lock;
        lock.try_lock_exclusive().unwrap_or_else(|| {
            self.slot.counters.add(Counter::PartitionLockWaits, 1);
            lock.lock_exclusive()
        })
    }

    /// Bumps the relation's strong-lock counter (`BeginStrongLockAcquire`).
    pub(crate) fn begin_strong(&self, hash: u64) {
        // Relaxed suffices: the increment is sequenced before this backend
        // takes each fast-path lock in `transfer_fast_path_locks`, and a weak
        // locker that takes that lock later reads the counter after it.
        self.manager.strong_counter(hash).fetch_add(1, Ordering::Relaxed);
        self.slot.counters.add(Counter::StrongAcquires, 1);
    }

    /// Drops the relation's strong-lock counter, after the strong lock was
    /// released from (or never entered) the shared table.
    pub(crate) fn end_strong(&self, hash: u64) {
        // Release: a weak locker that reads the new value (Acquire) sees
        // everything done under the strong lock.
        let before = self.manager.strong_counter(hash).fetch_sub(1, Ordering::Release);
        assert!(before > 0, "strong-lock counter underflow");
    }

    /// Moves every backend's fast-path locks on relation `tag` into the
    /// shared table (`FastPathTransferRelationLocks`). Each backend's
    /// fast-path lock is held while its entry is moved, so its owner either
    /// released the entry before (and the scan misses nothing it holds) or
    /// will find it in the shared table when it releases.
    pub(crate) fn transfer_fast_path_locks(&self, tag: &LockTag, hash: u64) -> Result<(), LockError> {
        if self.manager.config.fast_path_protocol == FastPathProtocol::Lockfree {
            return self.transfer_lock_free(tag, hash);
        }
        let key = tag.fast_path_key();
        let shared = &self.manager.shared;
        let p = shared.partition_of(hash);
        for (backend, slot) in self.manager.backends.iter().enumerate() {
            let mut fp = slot.fast_path.lock_exclusive();
            let modes = fp.modes_of(key);
            if modes == 0 {
                continue;
            }
            let mut table = self.lock_partition(p);
            let Some(lock) = table.get_or_create(tag, hash, || shared.reserve(p)) else {
                return Err(LockError::OutOfLockMemory { max_locks: shared.capacity.max() });
            };
            for mode in LockMode::in_mask(modes) {
                lock.grant(backend as u32, mode);
            }
            drop(table);
            fp.clear(key);
            self.slot.counters.add(Counter::Transfers, u64::from(modes.count_ones()));
        }
        Ok(())
    }

    /// The `lockfree` protocol's transfer: after the counter increment and a
    /// `SeqCst` fence (the other half of the weak locker's handshake), scan
    /// each backend's group of the relation holding its `LockFastPath`
    /// lock shared (so its array cannot be replaced meanwhile), wait out a
    /// pending mode, and claim each held slot of the relation with a CAS
    /// made under the partition lock — so an owner that finds its mode
    /// claimed and goes to the shared table finds it granted there.
    fn transfer_lock_free(&self, tag: &LockTag, hash: u64) -> Result<(), LockError> {
        fence(Ordering::SeqCst);
        let key = tag.fast_path_key();
        let shared = &self.manager.shared;
        let p = shared.partition_of(hash);
        for (backend, slot) in self.manager.backends.iter().enumerate() {
            let array = slot.lockfree.lock_shared();
            let base = array.group_base(key);
            for s in base..base + SLOTS_PER_GROUP {
                let word = &array.words[s];
                let mut spins = 0u32;
                loop {
                    let w = word.load(Ordering::Acquire);
                    if w & PENDING != 0 {
                        // The owner is between its publish and its decision:
                        // a few instructions, none of which waits.
                        spins += 1;
                        if spins % 64 == 0 {
                            thread::yield_now();
                        } else {
                            turnstile_sync::sync::spin_loop();
                        }
                        continue;
                    }
                    if w & HELD == 0 || array.keys[s].load(Ordering::Acquire) != key {
                        break;
                    }
                    let mut table = self.lock_partition(p);
                    let Some(lock) = table.get_or_create(tag, hash, || shared.reserve(p)) else {
                        return Err(LockError::OutOfLockMemory { max_locks: shared.capacity.max() });
                    };
                    // AcqRel: the claim reads the owner's grant (and what it
                    // did before), and the owner's failed release CAS reads
                    // the claim.
                    if word.compare_exchange(w, w & GENERATION, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                        let modes = held_modes(w);
                        for mode in LockMode::in_mask(modes) {
                            lock.grant(backend as u32, mode);
                        }
                        self.slot.counters.add(Counter::Transfers, u64::from(modes.count_ones()));
                        break;
                    }
                    // The owner changed the word: look again.
                    if table.remove_if_unused(tag, hash) {
                        shared.release_unit(p);
                    }
                }
            }
        }
        Ok(())
    }

    /// Acquires `tag` in `mode` through the shared table, waiting if needed.
    pub(crate) fn acquire_shared(
        &self,
        tag: LockTag,
        mode: LockMode,
        hash: u64,
        no_wait: bool,
        timeout: Option<Duration>,
        deadlock_timeout: Duration,
    ) -> Result<(), LockError> {
        let shared = &self.manager.shared;
        let p = shared.partition_of(hash);
        {
            let mut table = self.lock_partition(p);
            let Some(lock) = table.get_or_create(&tag, hash, || shared.reserve(p)) else {
                return Err(LockError::OutOfLockMemory { max_locks: shared.capacity.max() });
            };
            match lock.request(self.id, mode) {
                Request::Granted => {
                    self.slot.counters.add(Counter::SharedAcquires, 1);
                    return Ok(());
                }
                // NOWAIT never reports a deadlock: PostgreSQL's
                // `LockAcquireExtended` with `dontWait` answers "not
                // available" before it would wait, and only a caller
                // willing to wait learns of a deadlock.
                Request::Wait { .. } | Request::Deadlock { .. } if no_wait => {
                    if table.remove_if_unused(&tag, hash) {
                        shared.release_unit(p);
                    }
                    self.slot.counters.add(Counter::NotAvailable, 1);
                    return Err(LockError::NotAvailable { tag, mode });
                }
                Request::Deadlock { blocker, blocker_mode } => {
                    self.slot.counters.add(Counter::Deadlocks, 1);
                    let me = self.id as usize;
                    let blocker = blocker as usize;
                    return Err(LockError::Deadlock {
                        cycle: vec![
                            DeadlockEdge { backend: me, tag, mode, blocked_by: blocker, soft: false },
                            DeadlockEdge { backend: blocker, tag, mode: blocker_mode, blocked_by: me, soft: false },
                        ],
                    });
                }
                Request::Wait { position } => {
                    self.slot.wait_status.store(WAITING, Ordering::Relaxed);
                    let waiter = Waiter { backend: self.id, mode, thread: thread::current(), since: Instant::now() };
                    lock.enqueue(position, waiter);
                }
            }
        }
        self.wait_for_grant(tag, mode, hash, timeout, deadlock_timeout)
    }

    /// Sleeps until a releaser grants the queued request, running the
    /// deadlock check once after `deadlock_timeout` and giving up after
    /// `timeout`.
    #[cold]
    fn wait_for_grant(
        &self,
        tag: LockTag,
        mode: LockMode,
        hash: u64,
        timeout: Option<Duration>,
        deadlock_timeout: Duration,
    ) -> Result<(), LockError> {
        let kind = tag.kind();
        let _event = report_wait(WaitEvent::Lock(kind.wait_kind()));
        let started = Instant::now();
        // Extension locks never take part in deadlock detection. Under loom
        // there is no clock: only grants end a wait.
        let timers = !cfg!(loom);
        let timeout_at = timeout.filter(|_| timers).map(|d| started + d);
        let mut deadlock_at = (timers && kind != LockTagKind::RelationExtend).then(|| started + deadlock_timeout);
        // Publish the parked thread for a canceller before the first look at
        // the cancel bit (see `cancel.rs`).
        *self.slot.waiter.lock().unwrap_or_else(|e| e.into_inner()) = Some(thread::current());
        let result = loop {
            if self.slot.wait_status.load(Ordering::Acquire) == GRANTED {
                break Ok(());
            }
            if self.slot.cancel.load(Ordering::SeqCst) & 1 != 0 {
                if self.cancel_wait(&tag, hash) {
                    // Granted before we could leave: keep the lock, and
                    // leave the request pending for the statement's next
                    // `check_cancel`.
                    break Ok(());
                }
                self.slot.cancel.fetch_and(!1, Ordering::SeqCst);
                break Err(LockError::Canceled { waiting_for: Some((tag, mode)) });
            }
            let now = Instant::now();
            if deadlock_at.is_some_and(|at| now >= at) {
                deadlock_at = None;
                match self.check_deadlock(tag, hash) {
                    Ok(()) => continue,
                    Err(e) => break Err(e),
                }
            }
            if timeout_at.is_some_and(|at| now >= at) {
                if self.cancel_wait(&tag, hash) {
                    break Ok(());
                }
                self.slot.counters.add(Counter::Timeouts, 1);
                break Err(LockError::Timeout { tag, mode, waited: now - started });
            }
            let next = match (timeout_at, deadlock_at) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            park_until(next);
        };
        *self.slot.waiter.lock().unwrap_or_else(|e| e.into_inner()) = None;
        self.slot.wait_status.store(IDLE, Ordering::Relaxed);
        self.slot.counters.add_wait(kind, started.elapsed().as_nanos() as u64);
        if result.is_ok() {
            self.slot.counters.add(Counter::SharedAcquires, 1);
        }
        result
    }

    /// Leaves the wait queue of `tag` after a timeout or a cancel. `true` if the lock
    /// was granted in the meantime (then it is kept).
    pub(crate) fn cancel_wait(&self, tag: &LockTag, hash: u64) -> bool {
        let shared = &self.manager.shared;
        let p = shared.partition_of(hash);
        let mut woken = Vec::new();
        {
            let mut table = self.lock_partition(p);
            if self.slot.wait_status.load(Ordering::Acquire) == GRANTED {
                return true;
            }
            let lock = table.get_mut(tag, hash).expect("a queued request's lock object exists");
            lock.dequeue(self.id).expect("a waiting backend is in its lock's queue");
            // Our request may have held back later ones (README note 3).
            self.wake(lock, &mut woken);
            if table.remove_if_unused(tag, hash) {
                shared.release_unit(p);
            }
        }
        unpark_all(woken);
        false
    }

    /// Grants what `lock`'s queue allows, marking each woken backend
    /// granted; the caller unparks `woken` after releasing the partition.
    pub(crate) fn wake(&self, lock: &mut crate::partition::LockObject, woken: &mut Vec<Thread>) {
        let backends = &self.manager.backends;
        lock.wake_waiters(|w| {
            backends[w.backend as usize].wait_status.store(GRANTED, Ordering::Release);
            woken.push(w.thread.clone());
        });
    }

    /// Releases `held` from the shared table, in partition `p` whose lock
    /// the caller holds as `table`.
    #[inline]
    pub(crate) fn release_in(&self, table: &mut PartitionTable, p: usize, held: &LocalLock, woken: &mut Vec<Thread>) {
        let lock = table.get_mut(&held.tag, held.hash).expect("a held lock's object exists");
        let released = lock.ungrant(self.id, held.mode);
        assert!(released, "backend {} held {} on {} per its local table only", self.id, held.mode, held.tag);
        if !lock.queue.is_empty() {
            self.wake(lock, woken);
        }
        if lock.is_unused() && table.remove_if_unused(&held.tag, held.hash) {
            self.manager.shared.release_unit(p);
        }
    }

    /// Runs the deadlock check with every partition locked, in partition
    /// order (PostgreSQL's `CheckDeadLock`). `Ok` if there is no deadlock
    /// through this backend (possibly after re-ordering wait queues);
    /// `Err(Deadlock)` after removing this backend's request.
    #[cold]
    fn check_deadlock(&self, tag: LockTag, hash: u64) -> Result<(), LockError> {
        self.slot.counters.add(Counter::DeadlockChecks, 1);
        let shared = &self.manager.shared;
        let mut guards: Vec<_> = (0..shared.partitions.len()).map(|p| self.lock_partition(p)).collect();
        if self.slot.wait_status.load(Ordering::Acquire) == GRANTED {
            return Ok(());
        }
        let mut graph = WaitGraph::default();
        let mut places = Vec::new();
        for (p, table) in guards.iter().enumerate() {
            for (t, lock) in table.iter() {
                if lock.queue.is_empty() || t.kind() == LockTagKind::RelationExtend {
                    continue;
                }
                graph.add_lock(GraphLock {
                    tag: *t,
                    holders: lock.holders.iter().map(|h| (h.backend, h.held)).collect(),
                    queue: lock.queue.iter().map(|w| (w.backend, w.mode)).collect(),
                });
                places.push((p, *t));
            }
        }
        let mut woken = Vec::new();
        let result = match deadlock::check(&graph, self.id) {
            Outcome::NoDeadlock => Ok(()),
            Outcome::Rearrange(orders) => {
                for (index, order) in orders {
                    let (p, t) = places[index];
                    let lock = guards[p].get_mut(&t, t.hash_code()).expect("graph lock exists");
                    lock.reorder(&order);
                    self.wake(lock, &mut woken);
                }
                self.slot.counters.add(Counter::SoftDeadlocksResolved, 1);
                Ok(())
            }
            Outcome::Deadlock(cycle) => {
                let p = shared.partition_of(hash);
                let table = &mut guards[p];
                let lock = table.get_mut(&tag, hash).expect("the checker's lock exists");
                lock.dequeue(self.id).expect("the checker is queued");
                self.wake(lock, &mut woken);
                if table.remove_if_unused(&tag, hash) {
                    shared.release_unit(p);
                }
                self.slot.counters.add(Counter::Deadlocks, 1);
                Err(LockError::Deadlock { cycle })
            }
        };
        drop(guards);
        unpark_all(woken);
        result
    }
}
