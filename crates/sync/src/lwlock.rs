//! `LwLock`: PostgreSQL's lightweight lock — a shared/exclusive lock on one
//! atomic state word, with a wait queue for the slow path and two
//! admission policies (Postgres Pro 2018, see `docs/sources.md`).
//!
//! # State word
//!
//! | bits    | name                  | meaning and invariant |
//! |---------|-----------------------|-----------------------|
//! | 0..24   | shared count          | number of shared holders; `> 0` ⇒ `EXCLUSIVE` clear |
//! | 24      | [`EXCLUSIVE`]         | one exclusive holder; set ⇒ shared count `== 0` |
//! | 25      | [`WAITERS`]           | set ⇔ the wait queue is non-empty (changed only under the queue mutex) |
//! | 26      | [`EXCLUSIVE_WAITING`] | set ⇔ an exclusive waiter is in the queue (changed only under the queue mutex); set ⇒ `WAITERS` |
//! | 27      | [`WAKING`]            | a release woke waiters that have not yet retried; releases wake no one else meanwhile (PostgreSQL's `LW_FLAG_RELEASE_OK` cleared) |
//! | 28      | [`EXCLUSIVE_WAKING`]  | the woken waiter is exclusive, and has not retried yet; set ⇒ `WAKING` |
//! | 29..32  | —                     | always zero |
//!
//! Holder bits change by CAS (acquire) or `fetch_sub` (release) without the
//! queue mutex. The queue flags and the setting of the wake flags happen
//! only under the mutex; a woken waiter clears the wake flags in the same
//! CAS that grants it the lock or sets `WAITERS` for its re-queueing. Every
//! change is a CAS on the whole word, so one that raced another change
//! fails and is retried on fresh state. The layout is checked at compile
//! time below the constants.
//!
//! # Policies
//!
//! | | shared request | exclusive request | release that finds waiters |
//! |---|---|---|---|
//! | `barging` (PostgreSQL 15, `classic`) | granted whenever no exclusive holder, even past queued exclusive waiters | granted whenever no holder | wakes the head exclusive waiter, or every queued shared waiter; they **retry**, and one that loses re-queues at the tail |
//! | `fair` (Postgres Pro 2018's patch, `scalable`) | not granted while an exclusive waiter is queued or woken — unless the requester is itself a woken waiter, which was ahead of it | granted whenever no holder | wakes the head exclusive waiter, or the shared waiters at the head of the queue (up to the first exclusive one); they **retry**, and one that loses re-queues at the head |
//!
//! Under `barging` a steady stream of shared lockers keeps the shared count
//! above zero and a queued exclusive waiter can wait forever — the hang
//! Postgres Pro 2018 diagnosed on `BufferMapping`. Under `fair` it waits for the holders
//! present when it queued, no more: later shared lockers queue behind it,
//! also in the gap between its wake-up and its retry (`EXCLUSIVE_WAKING`).
//! Under both policies no release picks the next holder, as in
//! PostgreSQL: the lock is free when the releaser leaves, a running thread
//! may take it, and the woken waiter retries. On a lock taken only
//! exclusively (the free-space map's, the vfd cache's) that is what keeps
//! it from forming a convoy. An earlier `fair` handed the lock to the head
//! waiter in queue order instead; every release then left the lock owned
//! by a sleeping thread until the scheduler ran it, while runnable threads
//! queued behind it. Measured beside this `fair` (as a third policy,
//! `handoff`), it lost on every figure (`micro lwlock`: writer waits p50
//! 0.1–3 ms against 0, p99 40 ms against 0.1–10 ms, 10–20× fewer writer
//! acquisitions per second; FSM and vfd convoys in `micro extend` and W4),
//! so it was removed. The [`WAKING`] gate, PostgreSQL's `RELEASE_OK`,
//! keeps releases from waking a second waiter while the first has not run
//! yet.
//!
//! # No lost wake-up
//!
//! A waiter enqueues itself under the queue mutex, setting `WAITERS` with a
//! CAS that also validates the state it judged. It queues only if its
//! request was refused by a holder — whose release will see `WAITERS` — or
//! by `EXCLUSIVE_WAITING` / `EXCLUSIVE_WAKING`, i.e. by an exclusive waiter
//! that is itself queued or woken and will, once it holds the lock, release
//! it. A release that sees `WAITERS` processes the queue unless `WAKING` is
//! set; then a woken waiter has still to run, and its CAS (which clears
//! `WAKING`) either grants it the lock, so its own release processes the
//! queue, or queues it behind holders whose releases will. Processing the
//! queue stops early only when a holder remains, and that holder's release
//! will come here itself. A woken waiter never queues when the lock is
//! free: it is refused only by holders. The loom models in
//! `tests/loom_lwlock.rs` check this for every policy.
//!
//! ```
//! use turnstile_sync::{LwLock, LwLockPolicy, Tranche};
//! let lock = LwLock::new(Tranche::Test, LwLockPolicy::Fair, 0u64);
//! *lock.lock_exclusive() += 1;
//! assert_eq!(*lock.lock_shared(), 1);
//! assert!(lock.try_lock_shared().is_some());
//! ```

use crate::activity::report_wait;
use crate::stats;
use crate::sync::atomic::{AtomicU32, AtomicU8, Ordering};
use crate::sync::{thread, Arc, Mutex, MutexGuard, UnsafeCell};
use crate::wait_event::{Tranche, WaitEvent};
use std::collections::VecDeque;
use std::fmt;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};

/// Mask of the shared-holder count. Invariant: `count > 0 ⇒ !EXCLUSIVE`.
pub const SHARED_MASK: u32 = (1 << 24) - 1;
/// One exclusive holder. Invariant: set ⇒ `state & SHARED_MASK == 0`.
pub const EXCLUSIVE: u32 = 1 << 24;
/// The wait queue is non-empty. Changed only under the queue mutex.
pub const WAITERS: u32 = 1 << 25;
/// An exclusive waiter is queued. Changed only under the queue mutex.
/// Invariant: set ⇒ `WAITERS` set.
pub const EXCLUSIVE_WAITING: u32 = 1 << 26;
/// Waiters were woken to retry and none of them has retried yet; a release
/// meanwhile wakes no one (PostgreSQL's `LW_FLAG_RELEASE_OK`, inverted).
/// Set under the queue mutex by a release; cleared by a woken waiter's CAS.
pub const WAKING: u32 = 1 << 27;
/// The woken waiter is exclusive and has not retried yet: under `fair`, new
/// shared lockers do not pass it. Invariant: set ⇒ `WAKING` set; at most one
/// waiter is woken exclusive at a time (no release wakes while `WAKING`).
pub const EXCLUSIVE_WAKING: u32 = 1 << 28;
const HOLDERS: u32 = EXCLUSIVE | SHARED_MASK;
const QUEUE_FLAGS: u32 = WAITERS | EXCLUSIVE_WAITING;
const WAKE_FLAGS: u32 = WAKING | EXCLUSIVE_WAKING;

/// The most shared holders one lock can count.
pub const MAX_SHARED: u32 = SHARED_MASK;
// Layout: the count is the low bits, a carry out of it would be `EXCLUSIVE`
// (so the count must never overflow: debug-asserted on every grant), and
// each flag is one bit of its own above it.
const _: () = assert!(EXCLUSIVE == SHARED_MASK + 1);
const _: () = assert!(EXCLUSIVE.is_power_of_two() && WAITERS.is_power_of_two());
const _: () = assert!(EXCLUSIVE_WAITING.is_power_of_two() && WAKING.is_power_of_two());
const _: () = assert!(EXCLUSIVE_WAKING.is_power_of_two());
const _: () = assert!(HOLDERS & (QUEUE_FLAGS | WAKE_FLAGS) == 0 && QUEUE_FLAGS & WAKE_FLAGS == 0);
const USED_BITS: u32 = HOLDERS | QUEUE_FLAGS | WAKE_FLAGS;
const _: () = assert!(USED_BITS.count_ones() == 24 + 5);
const _: () = assert!(USED_BITS.leading_zeros() == 3, "bits 29..32 are unused");

/// How many times the slow path re-tries the lock, with a short pure spin
/// (at most a few hundred pause instructions) between tries, before it
/// queues itself and sleeps. Never `yield`: on an oversubscribed machine a
/// yielding waiter keeps the CPU from the descheduled holder it waits for
/// (measured: the fair writer's p50 wait went from ~0.1 ms to 8 ms with
/// `Backoff::snooze` here).
#[cfg(not(loom))]
const SPIN_TRIES: u32 = 6;
#[cfg(loom)]
const SPIN_TRIES: u32 = 0;

/// Who may be granted a lightweight lock while others wait
/// (Postgres Pro 2018).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LwLockPolicy {
    /// Postgres Pro 2018's patch: a shared request does not pass a queued
    /// (or woken) exclusive waiter; releases wake waiters to retry, as PostgreSQL's do.
    Fair,
    /// Shared requests pass queued exclusive waiters (PostgreSQL before the
    /// patch); releases wake waiters to retry.
    Barging,
}

impl LwLockPolicy {
    /// Every policy, in the order reports list them.
    pub const ALL: [LwLockPolicy; 2] = [LwLockPolicy::Fair, LwLockPolicy::Barging];

    /// The name used in configuration and reports.
    pub const fn name(self) -> &'static str {
        match self {
            LwLockPolicy::Fair => "fair",
            LwLockPolicy::Barging => "barging",
        }
    }
}

impl fmt::Display for LwLockPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Lock mode of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Shared = 0,
    Exclusive = 1,
}

impl Mode {
    /// What a grant adds to the state word.
    #[inline(always)]
    const fn delta(self) -> u32 {
        match self {
            Mode::Shared => 1,
            Mode::Exclusive => EXCLUSIVE,
        }
    }
}

const WAITING: u8 = 0;
/// The releaser woke the waiter to try again.
const RETRY: u8 = 1;

struct Waiter {
    thread: thread::Thread,
    mode: Mode,
    /// `WAITING`, then `RETRY`, set once per queueing by the releaser that
    /// dequeued it.
    state: AtomicU8,
}

struct WaitQueue {
    waiters: VecDeque<Arc<Waiter>>,
    /// Exclusive waiters in `waiters`.
    exclusive: usize,
}

/// A shared/exclusive lightweight lock protecting a `T`.
///
/// `repr(C)` keeps what an uncontended acquire touches — the state word,
/// the admission masks and a small `T` such as a pointer — in the first
/// bytes, ahead of the wait queue, which only a waiter touches: a buffer
/// descriptor that embeds the lock then has its pin word, tag, content
/// lock and page pointer in one cache line.
#[repr(C)]
pub struct LwLock<T> {
    state: AtomicU32,
    /// The state bits that refuse a new (not woken) request, by mode:
    /// [`Self::admits`] for `woken == false`, computed once so that the
    /// fast path is one mask test, one CAS.
    refused_by: [u32; 2],
    policy: LwLockPolicy,
    tranche: Tranche,
    data: UnsafeCell<T>,
    queue: Mutex<WaitQueue>,
}

// SAFETY: the lock hands out `&T` to several threads only under shared mode
// (needs `T: Sync`) and `&mut T` to one thread at a time (needs `T: Send`);
// the value may move between threads with the lock (`T: Send`).
unsafe impl<T: Send> Send for LwLock<T> {}
// SAFETY: see above.
unsafe impl<T: Send + Sync> Sync for LwLock<T> {}

impl<T> LwLock<T> {
    /// A new unlocked lock in `tranche` with admission `policy`.
    pub fn new(tranche: Tranche, policy: LwLockPolicy, value: T) -> Self {
        LwLock {
            state: AtomicU32::new(0),
            refused_by: [
                Self::refused_by(policy, Mode::Shared, false),
                Self::refused_by(policy, Mode::Exclusive, false),
            ],
            policy,
            tranche,
            queue: Mutex::new(WaitQueue { waiters: VecDeque::new(), exclusive: 0 }),
            data: UnsafeCell::new(value),
        }
    }

    /// The lock's tranche.
    pub fn tranche(&self) -> Tranche {
        self.tranche
    }

    /// The lock's admission policy.
    pub fn policy(&self) -> LwLockPolicy {
        self.policy
    }

    /// Consumes the lock and returns the value.
    pub fn into_inner(self) -> T {
        self.data.into_inner()
    }

    /// The value, through exclusive access to the lock itself.
    pub fn get_mut(&mut self) -> &mut T {
        self.data.get_mut()
    }

    /// Whether anyone holds the lock right now (a racy hint for tests and
    /// diagnostics).
    pub fn is_locked(&self) -> bool {
        self.state.load(Ordering::Relaxed) & HOLDERS != 0
    }

    /// Whether an exclusive waiter is queued, or woken and not yet retried,
    /// right now (a racy hint).
    pub fn has_exclusive_waiter(&self) -> bool {
        self.state.load(Ordering::Relaxed) & (EXCLUSIVE_WAITING | EXCLUSIVE_WAKING) != 0
    }

    /// Whether the state word is all zero: no holder, no waiter, no wake-up
    /// in flight. A racy hint, exact once every thread using the lock has
    /// returned from it — which is when tests check it (the invariant
    /// "quiescent ⇒ idle").
    pub fn is_idle(&self) -> bool {
        self.state.load(Ordering::Relaxed) == 0
    }

    /// Acquires the lock in shared mode, waiting as long as needed.
    #[inline]
    pub fn lock_shared(&self) -> LwLockSharedGuard<'_, T> {
        if !self.try_acquire(Mode::Shared, false) {
            self.acquire_slow(Mode::Shared);
        }
        stats::count_acquisition(self.tranche);
        LwLockSharedGuard { lock: self, ptr: ManuallyDrop::new(self.data.ptr()) }
    }

    /// Acquires the lock in exclusive mode, waiting as long as needed.
    #[inline]
    pub fn lock_exclusive(&self) -> LwLockExclusiveGuard<'_, T> {
        self.lock_exclusive_timed().0
    }

    /// Acquires the lock in exclusive mode, as [`Self::lock_exclusive`]
    /// does, and says how long the caller waited for it, in nanoseconds.
    ///
    /// `wait_ns == 0` ⇔ the fast path granted the lock at once; that path
    /// reads no clock and costs what `lock_exclusive` costs. Otherwise it
    /// is the slow path's wait — spinning, queueing, sleeping and retrying,
    /// from entering the slow path to holding the lock — as the tranche's
    /// `wait_ns` counter accumulates it, and at least 1 even when the clock
    /// is too coarse to see it (under loom, which has no clock, exactly 1).
    /// A caller that keeps a histogram of exclusive waits (the buffer pool
    /// does, for `BufferMapping`: Postgres Pro 2018's figure) records only when
    /// `wait_ns > 0`, so the uncontended path stays free of shared writes.
    ///
    /// ```
    /// use turnstile_sync::{LwLock, LwLockPolicy, Tranche};
    /// let lock = LwLock::new(Tranche::Test, LwLockPolicy::Fair, 0u64);
    /// let (mut guard, wait_ns) = lock.lock_exclusive_timed();
    /// *guard += 1;
    /// assert_eq!(wait_ns, 0, "nobody held it: the fast path granted it");
    /// ```
    #[inline]
    pub fn lock_exclusive_timed(&self) -> (LwLockExclusiveGuard<'_, T>, u64) {
        let wait_ns = if self.try_acquire(Mode::Exclusive, false) { 0 } else { self.acquire_slow(Mode::Exclusive) };
        stats::count_acquisition(self.tranche);
        (LwLockExclusiveGuard { lock: self, ptr: ManuallyDrop::new(self.data.ptr_mut()) }, wait_ns)
    }

    /// Acquires the lock in shared mode if the policy allows it right now.
    #[inline]
    pub fn try_lock_shared(&self) -> Option<LwLockSharedGuard<'_, T>> {
        if !self.try_acquire(Mode::Shared, false) {
            return None;
        }
        stats::count_acquisition(self.tranche);
        Some(LwLockSharedGuard { lock: self, ptr: ManuallyDrop::new(self.data.ptr()) })
    }

    /// Acquires the lock in exclusive mode if the policy allows it right now.
    #[inline]
    pub fn try_lock_exclusive(&self) -> Option<LwLockExclusiveGuard<'_, T>> {
        if !self.try_acquire(Mode::Exclusive, false) {
            return None;
        }
        stats::count_acquisition(self.tranche);
        Some(LwLockExclusiveGuard { lock: self, ptr: ManuallyDrop::new(self.data.ptr_mut()) })
    }

    /// PostgreSQL's `LWLockAcquireOrWait`: takes the lock exclusive if it
    /// is free (`Some`); otherwise sleeps until a holder releases it and
    /// returns `None` without taking it — unless the lock is free when the
    /// sleeper retries, which then takes it. Group commit uses it on
    /// `WALWrite`: a committer that finds the lock taken waits for the
    /// holder's flush, which has likely covered its own record too.
    ///
    /// The sleeper queues as an exclusive waiter; when woken it owns the
    /// wake flags as any woken exclusive waiter does and clears them in
    /// the same CAS that grants it the lock or gives up, so the gate opens
    /// for the next release (refused only by holders, whose release
    /// processes the queue).
    ///
    /// ```
    /// use turnstile_sync::{LwLock, LwLockPolicy, Tranche};
    /// let lock = LwLock::new(Tranche::Test, LwLockPolicy::Fair, 0u64);
    /// let guard = lock.lock_exclusive_or_wait().expect("a free lock is taken");
    /// drop(guard);
    /// ```
    #[inline]
    pub fn lock_exclusive_or_wait(&self) -> Option<LwLockExclusiveGuard<'_, T>> {
        if !self.try_acquire(Mode::Exclusive, false) && !self.acquire_or_wait_slow() {
            return None;
        }
        stats::count_acquisition(self.tranche);
        Some(LwLockExclusiveGuard { lock: self, ptr: ManuallyDrop::new(self.data.ptr_mut()) })
    }

    /// The slow path of [`Self::lock_exclusive_or_wait`]: `true` when it
    /// took the lock, `false` when it slept through a release.
    #[cold]
    #[inline(never)]
    fn acquire_or_wait_slow(&self) -> bool {
        let _wait_event = report_wait(WaitEvent::LwLock(self.tranche));
        let clock = WaitClock::start();
        let waiter =
            Arc::new(Waiter { thread: thread::current(), mode: Mode::Exclusive, state: AtomicU8::new(WAITING) });
        {
            let mut queue = self.lock_queue();
            let mut state = self.state.load(Ordering::Relaxed);
            loop {
                let (new, queued) = if self.admits(state, Mode::Exclusive, false) {
                    (state + Mode::Exclusive.delta(), false)
                } else {
                    (state | WAITERS | EXCLUSIVE_WAITING, true)
                };
                match self.state.compare_exchange(state, new, Ordering::Acquire, Ordering::Relaxed) {
                    Ok(_) if !queued => {
                        self.finish_wait(&clock);
                        return true;
                    }
                    Ok(_) => break,
                    Err(now) => state = now,
                }
            }
            queue.waiters.push_back(Arc::clone(&waiter));
            queue.exclusive += 1;
        }
        while waiter.state.load(Ordering::Acquire) == WAITING {
            thread::park();
        }
        // Woken as an exclusive waiter: clear the wake flags we own, taking
        // the lock if nobody holds it.
        let mut state = self.state.load(Ordering::Relaxed);
        loop {
            let taken = self.admits(state, Mode::Exclusive, true);
            let new = (state & !WAKE_FLAGS) + if taken { Mode::Exclusive.delta() } else { 0 };
            match self.state.compare_exchange(state, new, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => {
                    self.finish_wait(&clock);
                    return taken;
                }
                Err(now) => state = now,
            }
        }
    }

    /// The state bits that refuse a `mode` request under `policy`.
    /// `woken`: the requester is a waiter woken to retry, so it was ahead
    /// of every exclusive waiter queued now; under `fair` only holders
    /// refuse it.
    const fn refused_by(policy: LwLockPolicy, mode: Mode, woken: bool) -> u32 {
        match (mode, policy) {
            (Mode::Shared, LwLockPolicy::Barging) => EXCLUSIVE,
            (Mode::Shared, LwLockPolicy::Fair) if woken => EXCLUSIVE,
            (Mode::Shared, LwLockPolicy::Fair) => EXCLUSIVE | EXCLUSIVE_WAITING | EXCLUSIVE_WAKING,
            (Mode::Exclusive, LwLockPolicy::Barging | LwLockPolicy::Fair) => HOLDERS,
        }
    }

    /// Whether `mode` may be granted in `state` under this lock's policy
    /// (see [`Self::refused_by`]).
    #[inline(always)]
    fn admits(&self, state: u32, mode: Mode, woken: bool) -> bool {
        let refused_by = if woken { Self::refused_by(self.policy, mode, true) } else { self.refused_by[mode as usize] };
        state & refused_by == 0
    }

    /// The wake flags a woken waiter's CAS clears (see [`WAKING`]): an
    /// exclusive one owns both; a shared one re-opens the gate unless it is
    /// held for a woken exclusive waiter, which was woken after it and must
    /// keep its place.
    #[inline(always)]
    const fn wake_flags_cleared_by(state: u32, mode: Mode, woken: bool) -> u32 {
        match mode {
            _ if !woken => 0,
            Mode::Exclusive => WAKE_FLAGS,
            Mode::Shared if state & EXCLUSIVE_WAKING == 0 => WAKING,
            Mode::Shared => 0,
        }
    }

    /// CAS the grant into the state word while the policy admits it: one
    /// load and one CAS when uncontended, no clock. Fails only when the
    /// policy says no. A woken waiter's grant also clears the wake flags it
    /// owns.
    #[inline(always)]
    fn try_acquire(&self, mode: Mode, woken: bool) -> bool {
        let mut state = self.state.load(Ordering::Relaxed);
        loop {
            if !self.admits(state, mode, woken) {
                return false;
            }
            debug_assert!(mode == Mode::Exclusive || state & SHARED_MASK < MAX_SHARED, "shared count overflow");
            let new = (state & !Self::wake_flags_cleared_by(state, mode, woken)) + mode.delta();
            match self.state.compare_exchange_weak(state, new, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(now) => state = now,
            }
        }
    }

    /// The slow path of `lock_*`, entered when [`Self::try_acquire`] failed.
    /// Returns holding the lock in `mode`, with the time it waited in
    /// nanoseconds (at least 1; see [`Self::finish_wait`]).
    #[cold]
    #[inline(never)]
    fn acquire_slow(&self, mode: Mode) -> u64 {
        let _wait_event = report_wait(WaitEvent::LwLock(self.tranche));
        let clock = WaitClock::start();
        let waiter = Arc::new(Waiter { thread: thread::current(), mode, state: AtomicU8::new(WAITING) });
        let mut woken = false;
        loop {
            // Phase 1: re-try a bounded number of times before sleeping.
            let backoff = crossbeam_utils::Backoff::new();
            #[allow(clippy::reversed_empty_ranges)] // SPIN_TRIES is 0 under loom
            for _ in 0..SPIN_TRIES {
                backoff.spin();
                if self.try_acquire(mode, woken) {
                    return self.finish_wait(&clock);
                }
            }
            // Phase 2: grant to ourselves, or queue, under the queue mutex.
            {
                let mut queue = self.lock_queue();
                let mut state = self.state.load(Ordering::Relaxed);
                loop {
                    let kept = state & !Self::wake_flags_cleared_by(state, mode, woken);
                    let (new, queued) = if self.admits(state, mode, woken) {
                        (kept + mode.delta(), false)
                    } else {
                        debug_assert!(!woken || state & HOLDERS != 0, "a woken waiter queued on a free lock");
                        let flag = if mode == Mode::Exclusive { WAITERS | EXCLUSIVE_WAITING } else { WAITERS };
                        (kept | flag, true)
                    };
                    match self.state.compare_exchange(state, new, Ordering::Acquire, Ordering::Relaxed) {
                        Ok(_) if !queued => return self.finish_wait(&clock),
                        Ok(_) => break,
                        Err(now) => state = now,
                    }
                }
                waiter.state.store(WAITING, Ordering::Relaxed);
                // A woken `fair` waiter keeps its place ahead of those who
                // queued while it was retrying; PostgreSQL (`barging`)
                // re-queues at the tail.
                if woken && self.policy == LwLockPolicy::Fair {
                    queue.waiters.push_front(Arc::clone(&waiter));
                } else {
                    queue.waiters.push_back(Arc::clone(&waiter));
                }
                if mode == Mode::Exclusive {
                    queue.exclusive += 1;
                }
            }
            // Phase 3: sleep until a releaser asks us to retry.
            while waiter.state.load(Ordering::Acquire) == WAITING {
                thread::park();
            }
            woken = true;
        }
    }

    /// Ends a slow-path wait: the one place a wait is measured, so the
    /// tranche counters and [`Self::lock_exclusive_timed`] report the same
    /// time. At least 1 ns, so that "waited" stays distinguishable from the
    /// fast path's 0 when the clock did not advance (or under loom).
    #[inline]
    fn finish_wait(&self, clock: &WaitClock) -> u64 {
        let wait_ns = clock.elapsed_ns().max(1);
        stats::count_wait(self.tranche, wait_ns);
        wait_ns
    }

    fn lock_queue(&self) -> MutexGuard<'_, WaitQueue> {
        // The queue's invariants hold between statements that can panic, so
        // a poisoned mutex is still consistent.
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    #[inline]
    fn release(&self, mode: Mode) {
        let previous = self.state.fetch_sub(mode.delta(), Ordering::Release);
        debug_assert!(
            match mode {
                Mode::Shared => previous & SHARED_MASK > 0,
                Mode::Exclusive => previous & EXCLUSIVE != 0,
            },
            "released an LwLock that was not held in that mode"
        );
        if previous & (WAITERS | WAKING) == WAITERS {
            self.release_slow();
        }
    }

    /// Processes the wait queue after a release that saw `WAITERS` and not
    /// `WAKING`: if the remaining holders allow it, the head exclusive
    /// waiter, or the shared waiters at the head (under `barging`: every
    /// shared waiter, as PostgreSQL's `LWLockWakeup`), are woken to retry;
    /// none is granted the lock here. If the holders do
    /// not allow it, one of them is still to release and will come here
    /// itself; if `WAKING` is set by now, a woken waiter is still to retry.
    #[cold]
    #[inline(never)]
    fn release_slow(&self) {
        let mut queue = self.lock_queue();
        let mut state = self.state.load(Ordering::Relaxed);
        let (count, exclusive, head_mode) = loop {
            if state & WAKING != 0 {
                return;
            }
            let Some(head) = queue.waiters.front() else {
                debug_assert!(state & QUEUE_FLAGS == 0, "queue flags set with an empty queue");
                return;
            };
            let head_mode = head.mode;
            let (count, exclusive) = match head_mode {
                Mode::Exclusive if state & HOLDERS != 0 => return,
                Mode::Exclusive => (1, 1),
                Mode::Shared if state & EXCLUSIVE != 0 => return,
                Mode::Shared if self.policy == LwLockPolicy::Barging => (queue.waiters.len() - queue.exclusive, 0),
                Mode::Shared => (queue.waiters.iter().take_while(|w| w.mode == Mode::Shared).count(), 0),
            };
            let remaining_exclusive = queue.exclusive - exclusive;
            let mut new = state & !QUEUE_FLAGS;
            if queue.waiters.len() > count {
                new |= WAITERS;
            }
            if remaining_exclusive > 0 {
                new |= EXCLUSIVE_WAITING;
            }
            new |= match head_mode {
                Mode::Exclusive => WAKING | EXCLUSIVE_WAKING,
                Mode::Shared => WAKING,
            };
            match self.state.compare_exchange(state, new, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => break (count, exclusive, head_mode),
                Err(now) => state = now,
            }
        };
        let woken: Vec<Arc<Waiter>> = if head_mode == Mode::Shared && self.policy == LwLockPolicy::Barging {
            // Every shared waiter, exclusive ones keeping their places.
            let mut taken = Vec::with_capacity(count);
            let mut rest = VecDeque::with_capacity(queue.waiters.len() - count);
            for w in queue.waiters.drain(..) {
                if w.mode == Mode::Shared && taken.len() < count {
                    taken.push(w);
                } else {
                    rest.push_back(w);
                }
            }
            queue.waiters = rest;
            taken
        } else {
            queue.waiters.drain(..count).collect()
        };
        queue.exclusive -= exclusive;
        drop(queue);
        for waiter in woken {
            // Clone the handle first: once `state` is stored the waiter may
            // return and drop its own reference.
            let thread = waiter.thread.clone();
            waiter.state.store(RETRY, Ordering::Release);
            thread.unpark();
        }
    }
}

/// Measures a wait; compiled out under loom, whose model has no clock.
struct WaitClock {
    #[cfg(not(loom))]
    started: std::time::Instant,
}

impl WaitClock {
    fn start() -> WaitClock {
        WaitClock {
            #[cfg(not(loom))]
            started: std::time::Instant::now(),
        }
    }

    fn elapsed_ns(&self) -> u64 {
        #[cfg(not(loom))]
        return self.started.elapsed().as_nanos() as u64;
        #[cfg(loom)]
        return 0;
    }
}

impl<T: Default> Default for LwLock<T> {
    fn default() -> Self {
        LwLock::new(Tranche::Test, LwLockPolicy::Fair, T::default())
    }
}

impl<T> fmt::Debug for LwLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state.load(Ordering::Relaxed);
        f.debug_struct("LwLock")
            .field("tranche", &self.tranche)
            .field("policy", &self.policy)
            .field("shared", &(state & SHARED_MASK))
            .field("exclusive", &(state & EXCLUSIVE != 0))
            .field("waiters", &(state & WAITERS != 0))
            .field("exclusive_waiting", &(state & EXCLUSIVE_WAITING != 0))
            .field("waking", &(state & WAKING != 0))
            .field("exclusive_waking", &(state & EXCLUSIVE_WAKING != 0))
            .finish_non_exhaustive()
    }
}

/// Shared access to an [`LwLock`]'s value; released on drop.
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct LwLockSharedGuard<'a, T> {
    lock: &'a LwLock<T>,
    /// Dropped (ending loom's record of the access) before the release.
    ptr: ManuallyDrop<crate::sync::ConstPtr<T>>,
}

impl<T> Deref for LwLockSharedGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the lock shared, so no exclusive guard (the
        // only source of `&mut T`) exists until it is dropped.
        unsafe { crate::sync::ConstPtr::deref(&self.ptr) }
    }
}

impl<T> Drop for LwLockSharedGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: `ptr` is not used again; it must end before the release so
        // that loom sees this access finish before the next holder's begins.
        unsafe { ManuallyDrop::drop(&mut self.ptr) };
        self.lock.release(Mode::Shared);
    }
}

impl<T: fmt::Debug> fmt::Debug for LwLockSharedGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// Exclusive access to an [`LwLock`]'s value; released on drop.
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct LwLockExclusiveGuard<'a, T> {
    lock: &'a LwLock<T>,
    /// Dropped (ending loom's record of the access) before the release.
    ptr: ManuallyDrop<crate::sync::MutPtr<T>>,
}

impl<T> Deref for LwLockExclusiveGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the lock exclusively: no other guard exists.
        unsafe { crate::sync::MutPtr::deref(&self.ptr) }
    }
}

impl<T> DerefMut for LwLockExclusiveGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as for `deref`, and `&mut self` makes this the only borrow.
        unsafe { crate::sync::MutPtr::deref_mut(&self.ptr) }
    }
}

impl<T> Drop for LwLockExclusiveGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: `ptr` is not used again; it must end before the release so
        // that loom sees this access finish before the next holder's begins.
        unsafe { ManuallyDrop::drop(&mut self.ptr) };
        self.lock.release(Mode::Exclusive);
    }
}

impl<T: fmt::Debug> fmt::Debug for LwLockExclusiveGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
