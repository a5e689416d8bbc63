//! `turnstile stress locks`: the lock-manager torture test.
//!
//! N threads (default 16 — several times the cores of a small machine, so
//! lock holders are descheduled mid-transaction), each with its own
//! backend, run random transactions against one [`LockManager`] built from
//! a profile's preset:
//!
//! * half the threads run short queries of weak relation locks at a high
//!   rate (the fast path racing strong lockers), the others the full mix:
//! * every mode on every tag kind — hot relations (a few, locked by all),
//!   cold ones (hundreds), pages, tuples, transaction ids, objects,
//!   advisory locks and relation-extension locks;
//! * DDL-style strong locks (`AccessExclusive` on a hot relation and its
//!   object), which force fast-path transfers;
//! * partition-wide queries locking up to 1200 relations, which fill (and
//!   in `scalable`, grow) the fast path;
//! * `NOWAIT`, per-request timeouts and per-backend lock timeouts;
//! * deliberate deadlock cycles: two or three threads meet at a rendezvous,
//!   each holding one lock of a ring, then each requests the next one.
//!
//! Every call is reported to the independent [`Checker`] (shared with the
//! lock crate's own stress test: `turnstile_lock::testing`); a watchdog
//! thread samples it every `deadlock_timeout / 2` and counts a hang when a
//! waiter makes no progress for 10 × `deadlock_timeout`: it stays stalled
//! (everything holding it back waits too, or it is past its own timeout)
//! and neither it nor any waiter holding it back gets its request answered
//! in that time. A waiter behind a long transaction whose holder keeps
//! waiting, being answered (granted, refused, chosen as a deadlock victim)
//! and waiting again is making progress, however long it waits. Every
//! [`QUIESCE_EVERY`](super::lock_watchdog::QUIESCE_EVERY) the watchdog parks every thread between two
//! transactions ([`Quiescer`]) and runs `LockManager::check_invariants`
//! while nothing moves. After the run the lock table, the fast-path slots
//! and the strong-lock counters must be empty. The seed is printed; `--seed` replays a run's choices (not its
//! interleaving).

use super::lock_watchdog::{panic_text, Watchdog};
use crate::cli::{self, CliError, Overrides, ProfileArg, BOTH_PROFILES};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};
use turnstile_lock::testing::{random_mode, Checker, Quiescer, QuiescerMember};
use turnstile_lock::{Acquired, Backend, LockError, LockManager, LockMode, LockTag, Wait};
use turnstile_sync::config::{Config, Profile};
use turnstile_sync::sync::counter::{AtomicU64, Ordering};

/// Deadlock timeout of the stress configuration unless `--set` says
/// otherwise: short, so the checks run often and hangs show quickly.
pub const STRESS_DEADLOCK_TIMEOUT_MS: u64 = 20;

/// Hot relations: every thread locks them, in every mode.
const HOT_RELATIONS: u32 = 4;
/// Cold relations: hundreds, mostly weak locks through the fast path.
const COLD_RELATIONS: u32 = 600;
/// Most relations one partition-wide query locks: enough to overflow a
/// 16-slot group of the `scalable` fast path, so it grows.
const WIDE_QUERY_MAX: u32 = 1200;
/// How long a deadlock-cycle participant waits at the rendezvous for its
/// partners before going on alone (then no cycle forms, only a wait).
const RENDEZVOUS_PATIENCE: Duration = Duration::from_millis(100);
/// Database id of the deliberate cycles' advisory locks (no other request
/// uses it).
const CYCLE_DB: u32 = 7;

/// Arguments of `turnstile stress locks`.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// Stress threads, each with its own backend.
    #[arg(long, default_value_t = 16)]
    pub threads: usize,
    /// Length of the run per profile, in seconds.
    #[arg(long, default_value_t = 10.0)]
    pub seconds: f64,
    /// Seed of the random choices (default: from the clock; always printed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Profiles to run, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = BOTH_PROFILES)]
    pub profile: Vec<ProfileArg>,
    /// Knobs overridden on top of the profile and the stress defaults,
    /// e.g. `--set lock.deadlock_timeout_ms=50`.
    #[command(flatten)]
    pub overrides: Overrides,
    /// Print `{"results":[…]}` as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// The outcome of one profile's run (the JSON contract `stress_contract.rs` checks, plus
/// detail counters).
#[derive(Clone, Debug, Default, Serialize)]
pub struct LockStressResult {
    /// Always `"locks"`.
    pub stress: &'static str,
    /// `classic` or `scalable`.
    pub profile: String,
    /// The seed of this run's choices.
    pub seed: u64,
    /// Stress threads.
    pub threads: usize,
    /// Wall-clock length of the run, in seconds.
    pub seconds: f64,
    /// Lock and unlock calls completed.
    pub ops: u64,
    /// Deadlocks reported to a victim (every one checked to be a real cycle).
    pub deadlocks: u64,
    /// Waits ended by a lock timeout.
    pub timeouts: u64,
    /// Checker violations (conflicting grants, bogus cycles, unexpected
    /// errors, panics, broken invariants). Must be 0.
    pub violations: u64,
    /// Waiters that made no progress for 10 × `deadlock_timeout`. Must be 0.
    pub hangs: u64,
    /// Locks, fast-path entries, strong-lock counts, lock objects and
    /// capacity units left after every backend ended. Must be 0.
    pub leaked_locks: u64,
    /// Grants (new locks).
    pub granted: u64,
    /// `NOWAIT` requests refused.
    pub not_available: u64,
    /// Requests refused because the lock table was full.
    pub out_of_lock_memory: u64,
    /// Deliberate deadlock rings started.
    pub cycles_attempted: u64,
    /// Fast-path acquisitions, growths and overflows.
    pub fast_path_acquires: u64,
    /// Fast-path arrays grown.
    pub fast_path_grows: u64,
    /// Fast-path entries moved into the shared table by strong lockers.
    pub transfers: u64,
    /// Deadlock checks run.
    pub deadlock_checks: u64,
    /// Soft deadlocks resolved by re-ordering a queue.
    pub soft_deadlocks_resolved: u64,
    /// `deadlock_timeout` in force, in milliseconds.
    pub deadlock_timeout_ms: u64,
    /// The first violations and hangs, described.
    pub violation_texts: Vec<String>,
    /// `LockManager::check_invariants` runs that passed: at the quiescent
    /// points during the run and once after it (standard error only; not
    /// part of the JSON contract).
    #[serde(skip)]
    pub invariant_checks: u64,
}

impl super::Outcome for LockStressResult {
    fn profile(&self) -> &str {
        &self.profile
    }

    /// Whether the run passed: no violation, hang or leak.
    fn passed(&self) -> bool {
        self.violations == 0 && self.hangs == 0 && self.leaked_locks == 0
    }

    fn summary(&self) -> String {
        format!(
            "ops {} deadlocks {} timeouts {} violations {} hangs {} leaked {} invariant checks {}",
            self.ops,
            self.deadlocks,
            self.timeouts,
            self.violations,
            self.hangs,
            self.leaked_locks,
            self.invariant_checks
        )
    }

    fn violation_texts(&self) -> &[String] {
        &self.violation_texts
    }
}

/// Runs `turnstile stress locks`.
pub fn run(args: &Args) -> Result<(), CliError> {
    let length = Duration::from_secs_f64(args.seconds.max(0.0));
    let one = |profile, seed| {
        let config = stress_config(profile, args.threads, &args.overrides.set)?;
        Ok(run_profile(profile, &config, args.threads, length, seed))
    };
    super::run_profiles("locks", args.seed, &cli::profiles(&args.profile), args.json, one, print_table)
}

fn print_table(results: &[LockStressResult]) {
    println!(
        "{:<9} {:>20} {:>7} {:>7} {:>10} {:>9} {:>8} {:>7} {:>10} {:>5} {:>6}",
        "profile",
        "seed",
        "threads",
        "seconds",
        "ops",
        "deadlocks",
        "timeouts",
        "nowait",
        "violations",
        "hangs",
        "leaked"
    );
    for r in results {
        println!(
            "{:<9} {:>20} {:>7} {:>7.1} {:>10} {:>9} {:>8} {:>7} {:>10} {:>5} {:>6}",
            r.profile,
            r.seed,
            r.threads,
            r.seconds,
            r.ops,
            r.deadlocks,
            r.timeouts,
            r.not_available,
            r.violations,
            r.hangs,
            r.leaked_locks
        );
    }
}

/// The profile's preset with the stress defaults (a short deadlock
/// timeout, enough backend slots), then `--set` overrides.
pub fn stress_config(profile: Profile, threads: usize, set: &[String]) -> Result<Config, CliError> {
    let mut config = Config::preset(profile);
    config.lock.deadlock_timeout_ms = STRESS_DEADLOCK_TIMEOUT_MS;
    config.lock.max_backends = config.lock.max_backends.max(threads as u32 + 1);
    for assignment in set {
        config.apply_override(assignment)?;
    }
    config.validate()?;
    Ok(config)
}

/// What one thread did.
#[derive(Default, Debug, Clone, Copy)]
struct Tally {
    ops: u64,
    granted: u64,
    deadlocks: u64,
    timeouts: u64,
    not_available: u64,
    out_of_lock_memory: u64,
    cycles: u64,
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.ops += o.ops;
        self.granted += o.granted;
        self.deadlocks += o.deadlocks;
        self.timeouts += o.timeouts;
        self.not_available += o.not_available;
        self.out_of_lock_memory += o.out_of_lock_memory;
        self.cycles += o.cycles;
    }
}

/// Runs the torture test for one profile; never panics (a panicking
/// stress thread is a violation) and returns even if threads hang (they
/// are left behind, and counted).
pub fn run_profile(profile: Profile, config: &Config, threads: usize, length: Duration, seed: u64) -> LockStressResult {
    let manager = match LockManager::new(config) {
        Ok(m) => m,
        Err(e) => {
            return LockStressResult {
                stress: "locks",
                profile: profile.name().into(),
                violations: 1,
                violation_texts: vec![format!("lock manager refused the configuration: {e}")],
                ..Default::default()
            }
        }
    };
    let checker = Arc::new(Checker::default());
    let quiescer = Arc::new(Quiescer::new(threads));
    let started = Instant::now();
    let until = started + length;
    let done_rx = spawn_workers(&manager, &checker, &quiescer, threads, seed, until);
    let watchdog = Watchdog {
        manager: &manager,
        checker: &checker,
        quiescer: &quiescer,
        started,
        until,
        deadlock_timeout: Duration::from_millis(config.lock.deadlock_timeout_ms),
    };
    let mut total = Tally::default();
    let watched = watchdog.watch(&done_rx, threads, |tally: Tally| total.add(&tally));
    let unfinished = (threads - watched.finished) as u64;
    let hangs = if unfinished > 0 && watched.hangs == 0 { unfinished } else { watched.hangs };
    let seconds = started.elapsed().as_secs_f64();
    let mut invariant_checks = watched.invariant_checks;
    let mut leaked = 0u64;
    if unfinished == 0 {
        invariant_checks += u64::from(watchdog.check_after_run());
        leaked = watchdog.leaked_after_run(config.lock.max_locks);
    }
    let stats = manager.stats();
    if unfinished == 0 && stats.deadlocks != total.deadlocks {
        checker.report(format!(
            "the lock manager counted {} deadlocks, the threads saw {}",
            stats.deadlocks, total.deadlocks
        ));
    }
    let (violations, violation_texts) = checker.violations();
    LockStressResult {
        stress: "locks",
        profile: profile.name().into(),
        seed,
        threads,
        seconds,
        ops: total.ops,
        deadlocks: total.deadlocks,
        timeouts: total.timeouts,
        violations,
        hangs,
        leaked_locks: leaked,
        granted: total.granted,
        not_available: total.not_available,
        out_of_lock_memory: total.out_of_lock_memory,
        cycles_attempted: total.cycles,
        fast_path_acquires: stats.fast_path_acquires,
        fast_path_grows: stats.fast_path_grows,
        transfers: stats.transfers,
        deadlock_checks: stats.deadlock_checks,
        soft_deadlocks_resolved: stats.soft_deadlocks_resolved,
        deadlock_timeout_ms: config.lock.deadlock_timeout_ms,
        violation_texts,
        invariant_checks,
    }
}

/// One worker per thread, each reporting its tally on the returned
/// channel when it ends (a panic or a refused registration is a
/// violation, and an empty tally).
fn spawn_workers(
    manager: &Arc<LockManager>,
    checker: &Arc<Checker>,
    quiescer: &Arc<Quiescer>,
    threads: usize,
    seed: u64,
    until: Instant,
) -> mpsc::Receiver<Tally> {
    let rings = Arc::new(Rings::default());
    let (done_tx, done_rx) = mpsc::channel::<Tally>();
    for t in 0..threads {
        let (manager, checker, quiescer, rings, done) =
            (Arc::clone(manager), Arc::clone(checker), Arc::clone(quiescer), Arc::clone(&rings), done_tx.clone());
        let thread_seed = seed.wrapping_add((t as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        std::thread::Builder::new()
            .name(format!("stress-{t}"))
            .spawn(move || {
                let member = quiescer.member();
                let body = catch_unwind(AssertUnwindSafe(|| {
                    let backend = manager.register().map_err(|e| format!("register: {e}"))?;
                    Ok::<Tally, String>(Worker::new(backend, &checker, &rings, thread_seed, t).run(until, &member))
                }));
                drop(member);
                let tally = match body {
                    Ok(Ok(tally)) => tally,
                    Ok(Err(text)) => {
                        checker.report(format!("thread {t}: {text}"));
                        Tally::default()
                    }
                    Err(panic) => {
                        checker.report(format!("thread {t} panicked: {}", panic_text(&panic)));
                        Tally::default()
                    }
                };
                let _ = done.send(tally);
            })
            .expect("spawn a stress thread");
    }
    done_rx
}

/// The rendezvous of the deliberate deadlock rings: participants take
/// tickets; tickets `g·k … g·k + k−1` form ring `g` of size `k`. Each
/// participant locks its own advisory lock of the ring, waits (bounded by
/// [`RENDEZVOUS_PATIENCE`]) until all `k` hold theirs, then requests its
/// successor's: a cycle the deadlock detector must break.
#[derive(Debug, Default)]
struct Rings {
    /// Next ticket, per ring size (2 and 3).
    tickets: [AtomicU64; 2],
    /// Rings whose members hold their first lock: (size index, ring) → count.
    arrived: Mutex<std::collections::HashMap<(usize, u64), usize>>,
    changed: Condvar,
}

impl Rings {
    fn ticket(&self, size_index: usize) -> u64 {
        self.tickets[size_index].fetch_add(1, Ordering::Relaxed)
    }

    /// Marks one member of `ring` as holding its lock and waits until all
    /// `size` members do, or the patience runs out.
    fn meet(&self, size_index: usize, ring: u64, size: usize) {
        let deadline = Instant::now() + RENDEZVOUS_PATIENCE;
        let mut arrived = self.arrived.lock().unwrap_or_else(|e| e.into_inner());
        *arrived.entry((size_index, ring)).or_default() += 1;
        self.changed.notify_all();
        loop {
            let count = arrived.get(&(size_index, ring)).copied().unwrap_or(0);
            let now = Instant::now();
            if count >= size || now >= deadline {
                break;
            }
            arrived = self.changed.wait_timeout(arrived, deadline - now).unwrap_or_else(|e| e.into_inner()).0;
        }
        // The last one to leave forgets the ring (bounded memory).
        if arrived.get(&(size_index, ring)).is_some_and(|&c| c >= size) {
            arrived.retain(|&(s, r), _| s != size_index || r + 8 > ring);
        }
    }
}

/// The end of a request, as the transaction sees it.
enum Outcome {
    Granted,
    Refused,
    /// The transaction must abort (deadlock victim, or the table is full).
    Abort,
}

/// One stress thread: its backend, its random choices, what it holds
/// according to the checker's protocol.
struct Worker<'a> {
    backend: Backend,
    me: usize,
    checker: &'a Checker,
    rings: &'a Rings,
    rng: SmallRng,
    held: Vec<(LockTag, LockMode)>,
    lock_timeout: Option<Duration>,
    /// Odd threads run short read-only transactions of weak relation
    /// locks at a high rate — the fast path racing the strong lockers'
    /// transfers; even threads run the full mix.
    reader: bool,
    tally: Tally,
}

impl<'a> Worker<'a> {
    fn new(mut backend: Backend, checker: &'a Checker, rings: &'a Rings, seed: u64, thread: usize) -> Worker<'a> {
        let mut rng = SmallRng::seed_from_u64(seed);
        // A third of the backends run with a lock timeout (PostgreSQL's
        // `SET lock_timeout`), the others wait until granted or deadlocked.
        let lock_timeout = (thread % 3 == 2).then(|| Duration::from_millis(rng.random_range(200..1000)));
        backend.set_lock_timeout(lock_timeout);
        Worker {
            me: backend.id(),
            backend,
            checker,
            rings,
            rng,
            held: Vec::new(),
            lock_timeout,
            reader: thread % 2 == 1,
            tally: Tally::default(),
        }
    }

    fn run(mut self, until: Instant, member: &QuiescerMember<'_>) -> Tally {
        while Instant::now() < until {
            self.transaction();
            self.release_all();
            // Holding nothing, waiting for nothing: a quiescent point.
            member.checkpoint();
        }
        self.tally
    }

    /// One random transaction; returns early when it must abort.
    fn transaction(&mut self) {
        if self.reader {
            return self.read_only_transaction();
        }
        let kind = self.rng.random_range(0..100);
        if kind < 3 {
            return self.deadlock_ring();
        }
        if kind < 7 {
            // A partition-wide query: many weak relation locks at once.
            let first = self.rng.random_range(HOT_RELATIONS..COLD_RELATIONS);
            let n = self.rng.random_range(20..WIDE_QUERY_MAX);
            for rel in first..first + n {
                if let Outcome::Abort = self.request(LockTag::relation(1, rel), LockMode::AccessShare, Wait::Block) {
                    return;
                }
            }
        }
        let steps = self.rng.random_range(1..9);
        for _ in 0..steps {
            match self.rng.random_range(0..100) {
                0..=59 => {
                    let (tag, mode) = (self.random_tag(), random_mode(&mut self.rng));
                    let wait = match self.rng.random_range(0..100) {
                        0..=69 => Wait::Block,
                        70..=84 => Wait::NoWait,
                        _ => Wait::Timeout(Duration::from_millis(self.rng.random_range(1..40))),
                    };
                    if let Outcome::Abort = self.request(tag, mode, wait) {
                        return;
                    }
                }
                60..=64 => {
                    // DDL: ALTER TABLE on a hot relation — AccessExclusive on
                    // the relation and its catalog object, forcing every
                    // backend's fast-path entries for it into the shared table.
                    let rel = self.rng.random_range(0..HOT_RELATIONS);
                    if let Outcome::Abort =
                        self.request(LockTag::relation(1, rel), LockMode::AccessExclusive, Wait::Block)
                    {
                        return;
                    }
                    if let Outcome::Abort =
                        self.request(LockTag::object(1, 1259, rel, 0), LockMode::AccessExclusive, Wait::Block)
                    {
                        return;
                    }
                }
                65..=76 if !self.held.is_empty() => {
                    let i = self.rng.random_range(0..self.held.len());
                    let (tag, mode) = self.held.swap_remove(i);
                    self.checker.releasing(self.me, tag, mode);
                    self.unlock(tag, mode, "unlock of a held lock");
                }
                77..=84 => self.extension_lock(),
                85..=89 if !self.held.is_empty() => {
                    // Re-acquiring a held lock only counts it again.
                    let (tag, mode) = self.held[self.rng.random_range(0..self.held.len())];
                    match self.backend.lock(tag, mode, Wait::NoWait) {
                        Ok(Acquired::AlreadyHeld) => self.unlock(tag, mode, "second unlock of a re-acquired lock"),
                        other => self
                            .checker
                            .report(format!("backend {}: re-acquiring held {mode} on {tag} gave {other:?}", self.me)),
                    }
                    self.tally.ops += 2;
                }
                _ => {
                    // Unlocking what is not held is a typed error.
                    let tag = LockTag::object(1, 2, self.rng.random_range(0..1000), 0);
                    match self.backend.unlock(tag, LockMode::Share) {
                        Err(LockError::NotHeld { .. }) => {}
                        other => {
                            self.checker.report(format!("backend {}: unlock of an unheld lock gave {other:?}", self.me))
                        }
                    }
                    self.tally.ops += 1;
                }
            }
        }
    }

    /// A query: weak locks on a few relations, hot and cold, each waited
    /// for (behind DDL) as a query would.
    fn read_only_transaction(&mut self) {
        for _ in 0..self.rng.random_range(1..12) {
            let rel = if self.rng.random_bool(0.3) {
                self.rng.random_range(0..HOT_RELATIONS)
            } else {
                self.rng.random_range(HOT_RELATIONS..COLD_RELATIONS)
            };
            let mode = match self.rng.random_range(0..10) {
                0..=5 => LockMode::AccessShare,
                6..=7 => LockMode::RowShare,
                _ => LockMode::RowExclusive,
            };
            if let Outcome::Abort = self.request(LockTag::relation(1, rel), mode, Wait::Block) {
                return;
            }
        }
    }

    /// Requests `mode` on `tag`, reporting to the checker around the call.
    fn request(&mut self, tag: LockTag, mode: LockMode, wait: Wait) -> Outcome {
        let now = Instant::now();
        let limit = match wait {
            Wait::Block => self.lock_timeout.map(|t| now + t),
            Wait::NoWait => Some(now),
            Wait::Timeout(t) => Some(now + t),
        };
        self.checker.begin_request(self.me, tag, mode, limit);
        let result = self.backend.lock(tag, mode, wait);
        self.tally.ops += 1;
        let outcome = match result {
            Ok(Acquired::New) => {
                self.checker.granted(self.me, tag, mode);
                self.held.push((tag, mode));
                self.tally.granted += 1;
                Outcome::Granted
            }
            Ok(Acquired::AlreadyHeld) => {
                // Keep one grant per (tag, mode), as the record has it.
                self.unlock(tag, mode, "second unlock of a re-acquired lock");
                Outcome::Granted
            }
            Err(LockError::Deadlock { cycle }) => {
                self.checker.check_cycle(self.me, &cycle);
                self.tally.deadlocks += 1;
                Outcome::Abort
            }
            Err(LockError::Timeout { .. }) => {
                self.tally.timeouts += 1;
                Outcome::Refused
            }
            Err(LockError::NotAvailable { .. }) => {
                self.tally.not_available += 1;
                if !matches!(wait, Wait::NoWait) {
                    self.checker.report(format!("backend {}: NotAvailable for a {wait:?} request", self.me));
                }
                Outcome::Refused
            }
            Err(LockError::OutOfLockMemory { .. }) => {
                self.tally.out_of_lock_memory += 1;
                Outcome::Abort
            }
            Err(e) => {
                self.checker.report(format!("backend {}: unexpected error {e}", self.me));
                Outcome::Abort
            }
        };
        self.checker.end_request(self.me);
        outcome
    }

    /// The relation-extension lock: taken, used, released at once, never
    /// held while waiting for another lock (the rule that keeps it out of
    /// deadlock detection).
    fn extension_lock(&mut self) {
        let ext = LockTag::relation_extend(1, self.rng.random_range(0..2));
        self.checker.begin_request(self.me, ext, LockMode::Exclusive, self.lock_timeout.map(|t| Instant::now() + t));
        let result = self.backend.lock(ext, LockMode::Exclusive, Wait::Block);
        self.tally.ops += 1;
        match result {
            Ok(Acquired::New) => {
                self.checker.granted(self.me, ext, LockMode::Exclusive);
                self.checker.end_request(self.me);
                std::hint::black_box(self.backend.waiters(&ext));
                self.checker.releasing(self.me, ext, LockMode::Exclusive);
                self.unlock(ext, LockMode::Exclusive, "unlock of the extension lock");
                self.tally.granted += 1;
            }
            Err(LockError::Timeout { .. }) => {
                self.tally.timeouts += 1;
                self.checker.end_request(self.me);
            }
            other => {
                self.checker.report(format!("backend {}: extension lock gave {other:?}", self.me));
                self.checker.end_request(self.me);
            }
        }
    }

    /// A deliberate deadlock: take ring slot `i`'s lock, meet the other
    /// members, request slot `i + 1`'s lock.
    fn deadlock_ring(&mut self) {
        let size_index = self.rng.random_range(0..2);
        let size = size_index as u64 + 2;
        let ticket = self.rings.ticket(size_index);
        let (ring, slot) = (ticket / size, ticket % size);
        let key = |s: u64| ((size_index as u64) << 62) | (ring * size + s);
        self.tally.cycles += 1;
        let mine = LockTag::advisory(CYCLE_DB, key(slot));
        if !matches!(self.request(mine, LockMode::Exclusive, Wait::Block), Outcome::Granted) {
            return;
        }
        self.rings.meet(size_index, ring, size as usize);
        let next = LockTag::advisory(CYCLE_DB, key((slot + 1) % size));
        // Deadlock (the detector picks a victim), or granted once the
        // victim aborted, or a lock timeout.
        let _ = self.request(next, LockMode::Exclusive, Wait::Block);
    }

    fn unlock(&mut self, tag: LockTag, mode: LockMode, what: &str) {
        self.tally.ops += 1;
        if let Err(e) = self.backend.unlock(tag, mode) {
            self.checker.report(format!("backend {}: {what} failed: {e}", self.me));
        }
    }

    /// Ends the transaction: the record first, then the lock manager.
    fn release_all(&mut self) {
        for &(tag, mode) in &self.held {
            self.checker.releasing(self.me, tag, mode);
        }
        self.held.clear();
        self.backend.release_all();
        self.tally.ops += 1;
        if self.backend.held_count() != 0 {
            self.checker.report(format!("backend {}: locks left after release_all", self.me));
        }
    }

    /// A tag: mostly relations (a few hot, many cold), every other kind too.
    fn random_tag(&mut self) -> LockTag {
        let rng = &mut self.rng;
        match rng.random_range(0..100) {
            0..=39 => LockTag::relation(1, rng.random_range(0..HOT_RELATIONS)),
            40..=64 => LockTag::relation(1, rng.random_range(HOT_RELATIONS..COLD_RELATIONS)),
            65..=69 => LockTag::relation(2, rng.random_range(0..HOT_RELATIONS)),
            70..=74 => LockTag::page(1, rng.random_range(0..2), rng.random_range(0..4)),
            75..=81 => LockTag::tuple(1, rng.random_range(0..2), rng.random_range(0..2), rng.random_range(0..3)),
            82..=88 => LockTag::transaction_id(1, rng.random_range(0..6)),
            89..=93 => LockTag::object(1, 1259, rng.random_range(0..HOT_RELATIONS), 0),
            _ => LockTag::advisory(1, rng.random_range(0..4)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CI-sized torture run: ~2 s per profile, the same assertions as
    /// the acceptance check of `turnstile stress locks --seconds 20`.
    #[test]
    fn stress_locks_short_run_under_both_profiles() {
        let seed = std::env::var("TURNSTILE_STRESS_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(super::super::clock_seed);
        println!("stress locks: seed {seed} (TURNSTILE_STRESS_SEED={seed} replays the choices)");
        for profile in Profile::ALL {
            let config = stress_config(profile, 16, &[]).unwrap();
            let r = run_profile(profile, &config, 16, Duration::from_secs(2), seed);
            println!("{}", serde_json::to_string(&r).unwrap());
            assert_eq!(r.violations, 0, "{profile}: {:?}", r.violation_texts);
            assert_eq!(r.hangs, 0, "{profile}: hangs");
            assert_eq!(r.leaked_locks, 0, "{profile}: leaked locks");
            assert!(r.deadlocks >= 1, "{profile}: no deadlock found: {r:?}");
            assert!(r.granted > 1000 && r.transfers > 0, "{profile}: too little work: {r:?}");
            assert!(r.invariant_checks >= 1, "{profile}: check_invariants never ran: {r:?}");
        }
    }
}
