//! Randomized stress test with an independent invariant checker.
//!
//! Eight or more threads, each with its own backend, run transactions of
//! random lock requests — every mode, hot and cold relations, other tag
//! kinds, relation-extension locks, strong locks that force fast-path
//! transfers, `NoWait`, lock timeouts and deadlocks — and report every
//! grant and release to a checker that keeps **its own** record of who
//! holds what (not the lock manager's bookkeeping). The test asserts:
//!
//! * no two backends ever hold conflicting modes on one tag at once (a
//!   record is made after a grant and dropped before the release, so
//!   overlapping records mean overlapping holds);
//! * every deadlock error names a real cycle: each edge's waiter was
//!   requesting exactly that lock, its blocker held a conflicting mode
//!   (hard edge) or requested one (soft edge) while the victim waited,
//!   and the edges close a cycle through the victim;
//! * at quiescent points during the run (every thread parked between two
//!   transactions) and at the end, `LockManager::check_invariants` holds;
//! * at the end everything is released: no lock objects, fast-path
//!   entries or strong-lock counts remain, and capacity adds up.
//!
//! The checker, the quiescent points and the mode weights are
//! `turnstile_lock::testing` (the `testing` feature), shared with the
//! lab's `turnstile stress locks`.
//!
//! The seed is printed; set `TURNSTILE_STRESS_SEED` to replay a run's
//! choices and `TURNSTILE_STRESS_SECS` to change its length (default 5 s).

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};
use turnstile_lock::testing::{random_mode, Checker, Quiescer, QuiescerMember};
use turnstile_lock::{Acquired, Backend, LockError, LockManager, LockMode, LockTag, Wait};
use turnstile_sync::Config;

const THREADS: usize = 8;

/// How often the main thread stops the stress threads between two
/// transactions and runs `check_invariants` while nothing moves.
const QUIESCE_EVERY: Duration = Duration::from_millis(500);
/// How long it waits for every thread to get there (a thread may be
/// waiting out a lock timeout of up to 800 ms).
const QUIESCE_PATIENCE: Duration = Duration::from_secs(5);

fn seed() -> u64 {
    std::env::var("TURNSTILE_STRESS_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64
    })
}

fn duration() -> Duration {
    let secs: f64 = std::env::var("TURNSTILE_STRESS_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(5.0);
    Duration::from_secs_f64(secs)
}

/// A tag: mostly relations (a few hot, many cold), some other kinds.
fn random_tag(rng: &mut SmallRng) -> LockTag {
    match rng.random_range(0..100) {
        0..=49 => LockTag::relation(1, rng.random_range(0..4)),
        50..=79 => LockTag::relation(1, rng.random_range(4..300)),
        80..=84 => LockTag::relation(2, rng.random_range(0..4)),
        85..=89 => LockTag::advisory(1, rng.random_range(0..4)),
        90..=94 => LockTag::tuple(1, 0, rng.random_range(0..2), rng.random_range(0..3)),
        _ => LockTag::transaction_id(1, rng.random_range(0..4)),
    }
}

#[derive(Default, Debug)]
struct Tally {
    granted: u64,
    deadlocks: u64,
    timeouts: u64,
    not_available: u64,
    extensions: u64,
}

fn run_backend(
    mut backend: Backend,
    checker: &Checker,
    member: &QuiescerMember<'_>,
    seed: u64,
    until: Instant,
) -> Tally {
    let me = backend.id();
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut tally = Tally::default();
    backend.set_deadlock_timeout(Duration::from_millis(rng.random_range(1..20)));
    backend.set_lock_timeout(Some(Duration::from_millis(rng.random_range(200..800))));
    let mut held: Vec<(LockTag, LockMode)> = Vec::new();
    let release_all = |backend: &mut Backend, held: &mut Vec<(LockTag, LockMode)>| {
        for &(tag, mode) in held.iter() {
            checker.releasing(me, tag, mode);
        }
        held.clear();
        backend.release_all();
    };
    while Instant::now() < until {
        if rng.random_range(0..100) < 4 {
            // A partition-wide query: many weak relation locks at once,
            // growing the fast path (and overflowing it at its maximum).
            let first = rng.random_range(4..200);
            for r in first..first + rng.random_range(20..100) {
                let (tag, mode) = (LockTag::relation(1, r), LockMode::AccessShare);
                checker.begin_request(me, tag, mode, None);
                let result = backend.lock(tag, mode, Wait::NoWait);
                checker.end_request(me);
                match result {
                    Ok(Acquired::New) => {
                        checker.granted(me, tag, mode);
                        held.push((tag, mode));
                        tally.granted += 1;
                    }
                    Ok(Acquired::AlreadyHeld) => backend.unlock(tag, mode).expect("held twice, released once"),
                    Err(LockError::NotAvailable { .. }) => tally.not_available += 1,
                    Err(e) => panic!("backend {me}: unexpected error {e}"),
                }
            }
        }
        let steps = rng.random_range(1..8);
        for _ in 0..steps {
            match rng.random_range(0..100) {
                0..=74 => {
                    let (tag, mode) = (random_tag(&mut rng), random_mode(&mut rng));
                    let wait = match rng.random_range(0..100) {
                        0..=69 => Wait::Block,
                        70..=84 => Wait::NoWait,
                        _ => Wait::Timeout(Duration::from_millis(rng.random_range(1..30))),
                    };
                    checker.begin_request(me, tag, mode, None);
                    let result = backend.lock(tag, mode, wait);
                    match &result {
                        Ok(Acquired::New) => {
                            checker.granted(me, tag, mode);
                            held.push((tag, mode));
                            tally.granted += 1;
                        }
                        Ok(Acquired::AlreadyHeld) => {
                            // Counted locally; release once to keep one grant.
                            backend.unlock(tag, mode).expect("held twice, released once");
                        }
                        Err(LockError::Deadlock { cycle }) => {
                            checker.check_cycle(me, cycle);
                            tally.deadlocks += 1;
                        }
                        Err(LockError::Timeout { .. }) => tally.timeouts += 1,
                        Err(LockError::NotAvailable { .. }) => tally.not_available += 1,
                        Err(e) => panic!("backend {me}: unexpected error {e}"),
                    }
                    checker.end_request(me);
                    if let Err(LockError::Deadlock { .. }) = result {
                        release_all(&mut backend, &mut held); // the transaction aborts
                        break;
                    }
                }
                75..=86 if !held.is_empty() => {
                    let (tag, mode) = held.swap_remove(rng.random_range(0..held.len()));
                    checker.releasing(me, tag, mode);
                    backend.unlock(tag, mode).expect("a recorded lock is held");
                }
                87..=94 => {
                    // The extension lock: taken, used, released at once.
                    let ext = LockTag::relation_extend(1, rng.random_range(0..2));
                    checker.begin_request(me, ext, LockMode::Exclusive, None);
                    backend.lock(ext, LockMode::Exclusive, Wait::Block).expect("extension locks never deadlock");
                    checker.end_request(me);
                    checker.granted(me, ext, LockMode::Exclusive);
                    std::hint::black_box(backend.waiters(&ext));
                    checker.releasing(me, ext, LockMode::Exclusive);
                    backend.unlock(ext, LockMode::Exclusive).unwrap();
                    tally.extensions += 1;
                }
                _ => {
                    let tag = LockTag::object(1, 1, rng.random_range(0..1000), 0);
                    assert!(matches!(backend.unlock(tag, LockMode::Share), Err(LockError::NotHeld { .. })));
                }
            }
        }
        release_all(&mut backend, &mut held);
        // Holding nothing, waiting for nothing: a quiescent point.
        member.checkpoint();
    }
    tally
}

#[test]
fn stress_many_backends_random_locks_independent_checker() {
    let seed = seed();
    let length = duration();
    println!("stress: seed {seed} (TURNSTILE_STRESS_SEED={seed} to replay), {length:?}, {THREADS} threads");
    let mut config = Config::default();
    config.lock.partitions = 4;
    config.lock.fast_path_slots = 16;
    config.lock.fast_path_slots_max = 64;
    config.lock.strong_lock_counters = 16;
    config.lock.max_backends = THREADS as u32 + 2;
    let manager = LockManager::new(&config).unwrap();
    let checker = Arc::new(Checker::default());
    let quiescer = Arc::new(Quiescer::new(THREADS));
    let until = Instant::now() + length;
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (manager, checker, quiescer) = (Arc::clone(&manager), Arc::clone(&checker), Arc::clone(&quiescer));
            std::thread::spawn(move || {
                let member = quiescer.member();
                let backend = manager.register().unwrap();
                run_backend(backend, &checker, &member, seed.wrapping_add(t as u64 * 0x9E37_79B9), until)
            })
        })
        .collect();
    // While they run: the shared invariants at quiescent points.
    let mut quiescent_checks = 0u32;
    while let Some(left) = until.checked_duration_since(Instant::now()) {
        std::thread::sleep(QUIESCE_EVERY.min(left));
        let checked =
            quiescer.quiesce(QUIESCE_PATIENCE, || catch_unwind(AssertUnwindSafe(|| manager.check_invariants())));
        match checked {
            Some(Ok(())) => quiescent_checks += 1,
            Some(Err(panic)) => resume_unwind(panic),
            None => {}
        }
    }
    let mut total = Tally::default();
    for h in handles {
        let t = h.join().expect("a stress thread panicked (see above)");
        total.granted += t.granted;
        total.deadlocks += t.deadlocks;
        total.timeouts += t.timeouts;
        total.not_available += t.not_available;
        total.extensions += t.extensions;
    }
    let stats = manager.stats();
    println!("stress: {total:?}");
    println!(
        "stress: fast path {} (grown {}, overflowed {}), shared {}, transfers {}, deadlock checks {}, soft resolved {}",
        stats.fast_path_acquires,
        stats.fast_path_grows,
        stats.fast_path_overflows,
        stats.shared_acquires,
        stats.transfers,
        stats.deadlock_checks,
        stats.soft_deadlocks_resolved
    );
    let (violations, texts) = checker.violations();
    assert_eq!(violations, 0, "the checker found violations: {texts:#?}");
    println!("stress: check_invariants passed at {quiescent_checks} quiescent points");
    assert!(quiescent_checks > 0, "no quiescent point was reached in {length:?}");
    manager.check_invariants();
    let o = manager.occupancy();
    assert_eq!((o.lock_objects, o.fast_path_entries, o.strong_locks, o.backends), (0, 0, 0, 0), "{o:?}");
    assert_eq!(o.free_capacity, config.lock.max_locks);
    assert!(manager.locks().is_empty());
    assert!(total.granted > 1000, "the stress test did little work: {total:?}");
    assert!(stats.transfers > 0 && stats.fast_path_acquires > 0, "fast path and transfers not exercised");
    assert!(stats.fast_path_grows > 0 && stats.fast_path_overflows > 0, "fast-path growth not exercised");
    assert_eq!(stats.deadlocks, total.deadlocks);
    assert_eq!(stats.timeouts, total.timeouts);
}
