//! Quiescent points for stress runs: the coordinator asks every stress
//! thread to stop between two transactions, runs a check while none of
//! them is inside the lock manager, and lets them go on.
//!
//! [`LockManager::check_invariants`](crate::LockManager::check_invariants)
//! reads the partitions one after another, so it is exact only while no
//! backend locks or releases; a stress thread that has just ended its
//! transaction holds nothing and waits for nothing, which makes "every
//! member parked at [`QuiescerMember::checkpoint`]" such a moment.
//!
//! A pause is bounded: a member that does not arrive within the
//! coordinator's patience (it waits for a lock, or it hangs — which the
//! stress run's own watchdog reports) cancels that pause, and everyone
//! goes on.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The coordinator's side; share it (e.g. in an `Arc`) with the members.
#[derive(Debug)]
pub struct Quiescer {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Debug)]
struct State {
    /// Members that have not left.
    members: usize,
    /// Members waiting at a checkpoint in this pause.
    parked: usize,
    /// A pause is requested.
    pause: bool,
    /// Pauses ended so far (a parked member leaves when it changes).
    generation: u64,
}

/// One stress thread's membership; leaves when dropped (also by a panic),
/// so a pause never waits for a thread that is gone.
#[derive(Debug)]
#[must_use = "the member leaves when dropped"]
pub struct QuiescerMember<'a> {
    quiescer: &'a Quiescer,
}

impl Quiescer {
    /// A quiescer of `members` threads. Each must call [`Quiescer::member`]
    /// once (counting them up front means a pause cannot start before a
    /// slow thread has joined and then miss it).
    pub fn new(members: usize) -> Quiescer {
        Quiescer {
            state: Mutex::new(State { members, parked: 0, pause: false, generation: 0 }),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is a few counters, consistent between statements.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The calling thread's membership (one of the `members` counted by
    /// [`Quiescer::new`]).
    pub fn member(&self) -> QuiescerMember<'_> {
        QuiescerMember { quiescer: self }
    }

    /// Asks every member to park at its next checkpoint; once all have (or
    /// the remaining ones left), runs `check` and returns its result. Gives
    /// up after `patience` and returns `None`. The members go on either way.
    pub fn quiesce<R>(&self, patience: Duration, check: impl FnOnce() -> R) -> Option<R> {
        let deadline = Instant::now() + patience;
        let mut s = self.lock();
        assert!(!s.pause, "one coordinator pauses at a time");
        s.pause = true;
        loop {
            if s.parked == s.members {
                break;
            }
            let now = Instant::now();
            if now >= deadline {
                self.resume(s);
                return None;
            }
            s = self.changed.wait_timeout(s, deadline - now).unwrap_or_else(|e| e.into_inner()).0;
        }
        // Every member is parked (they hold the mutex only to change the
        // counts), so nothing they do runs concurrently with `check`.
        drop(s);
        let result = check();
        self.resume(self.lock());
        Some(result)
    }

    fn resume(&self, mut s: MutexGuard<'_, State>) {
        s.pause = false;
        // Parked members count for this pause only: they leave on the new
        // generation without touching `parked`, so a next pause starts
        // from zero even before they have woken up.
        s.parked = 0;
        s.generation += 1;
        drop(s);
        self.changed.notify_all();
    }
}

impl QuiescerMember<'_> {
    /// Call between transactions, holding no lock and waiting for none:
    /// parks here while a pause is requested.
    pub fn checkpoint(&self) {
        let q = self.quiescer;
        let mut s = q.lock();
        if !s.pause {
            return;
        }
        let generation = s.generation;
        s.parked += 1;
        q.changed.notify_all();
        while s.generation == generation {
            s = q.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl Drop for QuiescerMember<'_> {
    fn drop(&mut self) {
        let q = self.quiescer;
        let mut s = q.lock();
        s.members -= 1;
        drop(s);
        q.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::counter::{AtomicBool, Ordering};

    #[test]
    fn a_check_runs_only_while_every_member_is_parked() {
        let q = Quiescer::new(3);
        let busy = [AtomicBool::new(false), AtomicBool::new(false), AtomicBool::new(false)];
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            for b in &busy {
                let (q, stop) = (&q, &stop);
                s.spawn(move || {
                    let me = q.member();
                    while !stop.load(Ordering::Relaxed) {
                        b.store(true, Ordering::Relaxed);
                        std::hint::black_box(0u64..1000).sum::<u64>();
                        b.store(false, Ordering::Relaxed);
                        me.checkpoint();
                    }
                });
            }
            for _ in 0..20 {
                let idle = q.quiesce(Duration::from_secs(10), || busy.iter().all(|b| !b.load(Ordering::Relaxed)));
                assert_eq!(idle, Some(true));
            }
            stop.store(true, Ordering::Relaxed);
        });
        // Every member left: a pause succeeds at once.
        assert_eq!(q.quiesce(Duration::ZERO, || 7), Some(7));
    }

    #[test]
    fn a_member_that_never_arrives_cancels_the_pause() {
        let q = Quiescer::new(1);
        let _absent = q.member();
        assert_eq!(q.quiesce(Duration::from_millis(20), || ()), None);
    }
}
