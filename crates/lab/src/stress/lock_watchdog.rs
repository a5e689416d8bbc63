//! The watchdog of `turnstile stress locks`: it runs on the coordinating
//! thread while the workers run. Every [`QUIESCE_EVERY`] it parks every
//! worker at a quiescent point and runs `LockManager::check_invariants`;
//! between those, every half deadlock timeout, it samples the checker's
//! stalled requests and calls one a hang once it and its chain of waiting
//! blockers have not moved for [`HANG_TIMEOUTS`] deadlock timeouts, over
//! as many samples in a row. After the run it checks the invariants once
//! more and counts what the workers left behind.

use std::collections::{HashMap, HashSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use turnstile_lock::testing::{Checker, Quiescer, Stall};
use turnstile_lock::LockManager;

/// A waiter stalled this many deadlock timeouts is a hang.
pub const HANG_TIMEOUTS: u32 = 10;
/// How often the watchdog stops the threads at a quiescent point to run
/// `LockManager::check_invariants`.
pub const QUIESCE_EVERY: Duration = Duration::from_secs(1);
/// How long it waits for every thread to reach the quiescent point (a
/// thread waiting out a lock timeout may take most of a second) before it
/// lets them go on without a check.
const QUIESCE_PATIENCE: Duration = Duration::from_secs(2);

/// A stall the watchdog follows: since when, over how many samples in a
/// row, and the chain of open requests it has seen unchanged.
type StallRun = (Instant, u32, Vec<(usize, u64)>);

/// What the watchdog watches.
pub struct Watchdog<'a> {
    /// The lock manager under test.
    pub manager: &'a LockManager,
    /// The independent checker the workers report to.
    pub checker: &'a Checker,
    /// Parks the workers for an invariant check.
    pub quiescer: &'a Quiescer,
    /// When the workers started.
    pub started: Instant,
    /// When they stop starting transactions.
    pub until: Instant,
    /// The configuration's deadlock timeout.
    pub deadlock_timeout: Duration,
}

/// What the watchdog saw while the workers ran.
pub struct Watched {
    /// Workers that reported their tally.
    pub finished: usize,
    /// Hangs flagged.
    pub hangs: u64,
    /// Invariant checks that ran at quiescent points.
    pub invariant_checks: u64,
}

/// The stalls being followed, and those already flagged as hangs.
#[derive(Default)]
struct Stalls {
    runs: HashMap<(usize, u64), StallRun>,
    flagged: HashSet<(usize, u64)>,
    hangs: u64,
}

impl Watchdog<'_> {
    /// The stall after which a request is a hang.
    fn hang_after(&self) -> Duration {
        self.deadlock_timeout * HANG_TIMEOUTS
    }

    /// Watches until every one of `threads` workers reported on `done`
    /// (each tally goes to `on_done`), or until they are overdue.
    pub fn watch<T>(&self, done: &mpsc::Receiver<T>, threads: usize, mut on_done: impl FnMut(T)) -> Watched {
        let mut watched = Watched { finished: 0, hangs: 0, invariant_checks: 0 };
        let mut stalls = Stalls::default();
        let mut last_sample = Instant::now();
        // Every worker ends its transaction soon after `until`; allow for the
        // longest legitimate wait (a lock timeout) and the hang bound on top.
        let give_up = self.until + Duration::from_secs(10) + self.hang_after() * 2;
        let sample = (self.deadlock_timeout / 2).max(Duration::from_millis(1));
        let mut next_check = self.started + QUIESCE_EVERY;
        while watched.finished < threads && Instant::now() < give_up {
            match done.recv_timeout(sample) {
                Ok(tally) => {
                    on_done(tally);
                    watched.finished += 1;
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            if Instant::now() >= next_check && Instant::now() < self.until {
                watched.invariant_checks += u64::from(self.check_quiescent());
                next_check = Instant::now() + QUIESCE_EVERY;
                // The next sample sees the gap and starts its stall runs over.
                continue;
            }
            let now = Instant::now();
            if now.duration_since(last_sample) > sample * 4 {
                // The watchdog itself was kept off the CPU: it cannot tell
                // whether a stall lasted the whole gap, so it starts over.
                stalls.runs.clear();
            }
            last_sample = now;
            self.sample_stalls(&mut stalls, now);
        }
        watched.hangs = stalls.hangs;
        watched
    }

    /// Parks the workers and checks the invariants; whether a check ran.
    fn check_quiescent(&self) -> bool {
        let checked = self
            .quiescer
            .quiesce(QUIESCE_PATIENCE, || catch_unwind(AssertUnwindSafe(|| self.manager.check_invariants())));
        match checked {
            Some(Ok(())) => true,
            Some(Err(panic)) => {
                self.checker.report(format!("invariant broken at a quiescent point: {}", panic_text(&panic)));
                false
            }
            None => false, // a thread did not arrive in time; the watchdog judges it
        }
    }

    /// Follows the checker's stalled requests; flags a hang once one and
    /// its chain have not moved for [`HANG_TIMEOUTS`] deadlock timeouts.
    fn sample_stalls(&self, stalls: &mut Stalls, now: Instant) {
        let hang_after = self.hang_after();
        let stalled = self.checker.stalled(now, hang_after);
        stalls.runs.retain(|&(b, r), _| stalled.iter().any(|s| (s.backend, s.request) == (b, r)));
        for stall in stalled {
            let key = (stall.backend, stall.request);
            let (since, samples, chain) = stalls.runs.entry(key).or_insert_with(|| (now, 0, stall.chain.clone()));
            if *chain != stall.chain {
                // Someone in the chain moved on (and stalled again): progress.
                (*since, *samples, *chain) = (now, 0, stall.chain.clone());
            }
            *samples += 1;
            if now.duration_since(*since) >= hang_after && *samples >= HANG_TIMEOUTS && stalls.flagged.insert(key) {
                stalls.hangs += 1;
                if stalls.hangs == 1 {
                    self.print_locks(now);
                }
                self.report_hang(&stall, now.duration_since(*since), *samples);
            }
        }
    }

    /// The lock manager's own view of the first hang, to tell an
    /// undetected cycle from a missed wake-up.
    fn print_locks(&self, now: Instant) {
        let uptime = now.duration_since(self.started);
        eprintln!("stress locks: pg_locks at the first hang ({uptime:?} into the run, shared table only):");
        for row in self.manager.locks().iter().filter(|r| !r.fastpath) {
            let wait = row.wait_start.map(|w| format!(" for {:?}", uptime.saturating_sub(w)));
            eprintln!(
                "  backend {} {} {} {}{}",
                row.backend,
                if row.granted { "holds" } else { "awaits" },
                row.mode,
                row.tag,
                wait.unwrap_or_default()
            );
        }
    }

    fn report_hang(&self, stall: &Stall, stalled_for: Duration, samples: u32) {
        self.checker.report_hang(format!(
            "HANG: backend {} stalled for {stalled_for:?} ({samples} samples): {}",
            stall.backend, stall.why
        ));
    }

    /// Once every worker ended: the invariants; whether they held.
    pub fn check_after_run(&self) -> bool {
        match catch_unwind(AssertUnwindSafe(|| self.manager.check_invariants())) {
            Ok(()) => true,
            Err(panic) => {
                self.checker.report(format!("invariant broken after the run: {}", panic_text(&panic)));
                false
            }
        }
    }

    /// Once every worker ended: locks, lock objects, fast-path entries and
    /// strong-lock counts left behind, and lock-table capacity lost (of
    /// `max_locks`). A backend slot still registered is a violation.
    pub fn leaked_after_run(&self, max_locks: u32) -> u64 {
        let o = self.manager.occupancy();
        let rows = self.manager.locks();
        for row in rows.iter().take(5) {
            eprintln!("stress locks: leaked lock after the run: {row:?}");
        }
        let capacity_lost = u64::from(max_locks).abs_diff(u64::from(o.free_capacity));
        if o.backends != 0 {
            self.checker.report(format!("{} backend slots still registered after every thread ended", o.backends));
        }
        rows.len() as u64 + o.lock_objects as u64 + o.fast_path_entries as u64 + o.strong_locks + capacity_lost
    }
}

/// A panic's message.
pub fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "(no message)".into())
}
