//! Randomized stress test with an independent invariant checker.
//!
//! Eight or more threads, each with its own backend, run transactions of
//! random lock requests — every mode, hot and cold relations, other tag
//! kinds, relation-extension locks, strong locks that force fast-path
//! transfers, `NoWait`, lock timeouts and deadlocks — and report every
//! grant and release to a checker that keeps **its own** record of who
//! holds what (not the lock manager's bookkeeping). The checker asserts:
//!
//! * no two backends ever hold conflicting modes on one tag at once (a
//!   record is made after a grant and dropped before the release, so
//!   overlapping records mean overlapping holds);
//! * every deadlock error names a real cycle: each edge's waiter was
//!   requesting exactly that lock, its blocker held a conflicting mode
//!   (hard edge) or requested one (soft edge) while the victim waited,
//!   and the edges close a cycle through the victim;
//! * at the end everything is released: no lock objects, fast-path
//!   entries or strong-lock counts remain, and capacity adds up.
//!
//! The seed is printed; set `TURNSTILE_STRESS_SEED` to replay a run's
//! choices and `TURNSTILE_STRESS_SECS` to change its length (default 5 s).

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use turnstile_lock::{Acquired, Backend, DeadlockEdge, LockError, LockManager, LockMode, LockTag, Wait};
use turnstile_sync::Config;

const THREADS: usize = 8;

/// An interval of the checker's sequence numbers; `end == None` while open.
#[derive(Clone, Copy, Debug)]
struct Interval {
    backend: usize,
    tag: LockTag,
    mode: LockMode,
    start: u64,
    end: Option<u64>,
}

impl Interval {
    fn overlaps(&self, from: u64, to: u64) -> bool {
        self.start <= to && self.end.is_none_or(|end| end >= from)
    }
}

#[derive(Default)]
struct Record {
    seq: u64,
    /// Open holds, per tag.
    held: HashMap<LockTag, Vec<Interval>>,
    /// Open requests, per backend.
    pending: HashMap<usize, Interval>,
    /// Closed holds and requests still needed to judge a deadlock report.
    closed_holds: Vec<Interval>,
    closed_requests: Vec<Interval>,
    closings: u64,
}

/// The independent checker.
#[derive(Default)]
struct Checker {
    record: Mutex<Record>,
}

impl Checker {
    fn lock(&self) -> std::sync::MutexGuard<'_, Record> {
        self.record.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn begin_request(&self, backend: usize, tag: LockTag, mode: LockMode) {
        let mut r = self.lock();
        r.seq += 1;
        let start = r.seq;
        let previous = r.pending.insert(backend, Interval { backend, tag, mode, start, end: None });
        assert!(previous.is_none(), "backend {backend} has two requests open");
    }

    fn end_request(&self, backend: usize) {
        let mut r = self.lock();
        r.seq += 1;
        let end = r.seq;
        let mut request = r.pending.remove(&backend).expect("an open request");
        request.end = Some(end);
        r.closed_requests.push(request);
        r.prune();
    }

    /// Records a grant; panics if another backend holds a conflicting mode.
    fn granted(&self, backend: usize, tag: LockTag, mode: LockMode) {
        let mut r = self.lock();
        r.seq += 1;
        let start = r.seq;
        let holders = r.held.entry(tag).or_default();
        for h in holders.iter() {
            assert!(
                h.backend == backend || !h.mode.conflicts_with(mode),
                "CONFLICT: backend {backend} granted {mode} on {tag} while backend {} holds {}",
                h.backend,
                h.mode
            );
        }
        holders.push(Interval { backend, tag, mode, start, end: None });
    }

    /// Drops the record of a hold, before the lock manager releases it.
    fn releasing(&self, backend: usize, tag: LockTag, mode: LockMode) {
        let mut r = self.lock();
        r.seq += 1;
        let end = r.seq;
        let holders = r.held.get_mut(&tag).expect("a recorded tag");
        let i = holders.iter().position(|h| h.backend == backend && h.mode == mode).expect("a recorded hold");
        let mut hold = holders.swap_remove(i);
        if holders.is_empty() {
            r.held.remove(&tag);
        }
        hold.end = Some(end);
        r.closed_holds.push(hold);
        r.prune();
    }

    /// Checks a deadlock report received by `victim`.
    fn check_cycle(&self, victim: usize, cycle: &[DeadlockEdge]) {
        let r = self.lock();
        let mine = r.pending.get(&victim).expect("the victim's request is open");
        let (from, to) = (mine.start, r.seq);
        assert!(cycle.len() >= 2, "a cycle has at least two edges: {cycle:?}");
        assert_eq!(cycle[0].backend, victim, "the cycle starts at the victim: {cycle:?}");
        assert_eq!((cycle[0].tag, cycle[0].mode), (mine.tag, mine.mode), "the victim's edge is its request");
        for (i, edge) in cycle.iter().enumerate() {
            let next = &cycle[(i + 1) % cycle.len()];
            assert_eq!(edge.blocked_by, next.backend, "edges chain into a cycle: {cycle:?}");
            assert_ne!(edge.backend, edge.blocked_by);
            let requests = r.pending.values().chain(r.closed_requests.iter());
            let requested = requests
                .clone()
                .any(|q| q.backend == edge.backend && q.tag == edge.tag && q.mode == edge.mode && q.overlaps(from, to));
            assert!(requested, "edge {edge}: the waiter never requested that lock while the victim waited");
            let blocking = if edge.soft {
                requests.clone().any(|q| {
                    q.backend == edge.blocked_by
                        && q.tag == edge.tag
                        && q.mode.conflicts_with(edge.mode)
                        && q.overlaps(from, to)
                })
            } else {
                r.held.get(&edge.tag).into_iter().flatten().chain(r.closed_holds.iter()).any(|h| {
                    h.backend == edge.blocked_by
                        && h.tag == edge.tag
                        && h.mode.conflicts_with(edge.mode)
                        && h.overlaps(from, to)
                })
            };
            assert!(blocking, "edge {edge}: the blocker neither held nor requested a conflicting mode: {cycle:?}");
        }
    }
}

impl Record {
    /// Forgets closed intervals that ended before every open request began.
    fn prune(&mut self) {
        self.closings += 1;
        if self.closings % 4096 != 0 {
            return;
        }
        let oldest = self.pending.values().map(|p| p.start).min().unwrap_or(self.seq);
        self.closed_holds.retain(|h| h.end.is_none_or(|e| e >= oldest));
        self.closed_requests.retain(|h| h.end.is_none_or(|e| e >= oldest));
    }
}

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

/// A mode: weak ones most often, so the fast path is busy and strong
/// requests have something to transfer.
fn random_mode(rng: &mut SmallRng) -> LockMode {
    match rng.random_range(0..100) {
        0..=34 => LockMode::AccessShare,
        35..=49 => LockMode::RowShare,
        50..=69 => LockMode::RowExclusive,
        70..=74 => LockMode::ShareUpdateExclusive,
        75..=81 => LockMode::Share,
        82..=85 => LockMode::ShareRowExclusive,
        86..=91 => LockMode::Exclusive,
        _ => LockMode::AccessExclusive,
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

fn run_backend(mut backend: Backend, checker: &Checker, seed: u64, until: Instant) -> Tally {
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
                checker.begin_request(me, tag, mode);
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
                    checker.begin_request(me, tag, mode);
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
                    checker.begin_request(me, ext, LockMode::Exclusive);
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
    let until = Instant::now() + length;
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (manager, checker) = (Arc::clone(&manager), Arc::clone(&checker));
            std::thread::spawn(move || {
                let backend = manager.register().unwrap();
                run_backend(backend, &checker, seed.wrapping_add(t as u64 * 0x9E37_79B9), until)
            })
        })
        .collect();
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
