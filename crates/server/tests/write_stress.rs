//! A seeded stress test of the writes applications make, through the
//! server (real threads and sockets), under both profiles:
//!
//! - **upserters** run, over a small key space, transactions of
//!   `INSERT INTO kv … ON CONFLICT (k) DO UPDATE SET v = kv.v +
//!   EXCLUDED.v` with an increment of their own (distinct per operation,
//!   so every operation is traceable) plus `INSERT INTO log (op, k,
//!   inc)` recording it; a fifth of them roll back;
//! - a **key deleter** takes a key's row lock with an upsert of `+ 0`,
//!   then deletes the key's log rows and row in one transaction;
//! - **parent workers** delete and re-insert parent rows (`ON DELETE
//!   CASCADE` children), while **child inserters** add children of random
//!   parents (`23503` when the parent is gone).
//!
//! At the end it checks: no duplicate key in `kv` or `parent`; no child
//! without its parent; every key's value is the sum of its log; every log
//! row is an acknowledged, committed upsert of that key; an upsert is
//! missing from the log only if a delete of its key could have followed it
//! (the delete acknowledged after the upsert's commit was sent), and
//! present only if no delete surely followed it (began after it was
//! acknowledged). An upsert never fails with `23505`.
//!
//! The seed is printed; `WRITE_STRESS_SEED=<n>` replays it (the
//! interleaving is the scheduler's, the operations the seed's).

mod common;

use common::{error_code, Raw, TestServer};
use pgwire::messages::PgWireBackendMessage as B;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{HashMap, HashSet};
use std::time::Instant;
use turnstile_sync::config::Profile;

/// Keys of `kv` and ids of `parent`: small, so that clients collide.
const KEYS: i64 = 6;
const PARENTS: i64 = 4;
const UPSERTERS: usize = 4;
const OPS_PER_UPSERTER: usize = 300;
const PARENT_WORKERS: usize = 2;
const CHILD_WORKERS: usize = 2;
const FK_OPS_PER_WORKER: usize = 150;
const KEY_DELETES: usize = 40;

/// An acknowledged upsert: its key, increment, and when its `COMMIT` was
/// sent and answered.
#[derive(Clone, Copy)]
struct Upsert {
    op: i64,
    k: i64,
    inc: i64,
    sent: Instant,
    acked: Instant,
}

/// An acknowledged delete of a key: when its `BEGIN` was sent and its
/// `COMMIT` answered.
#[derive(Clone, Copy)]
struct Delete {
    k: i64,
    began: Instant,
    acked: Instant,
}

fn connect(port: u16) -> Raw {
    let mut raw = Raw::connect(port);
    raw.startup("postgres");
    raw.until_ready();
    raw
}

fn rows(msgs: &[B]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for m in msgs {
        if let B::DataRow(r) = m {
            let (d, mut at, mut cols) = (&r.data[..], 0, Vec::new());
            while at + 4 <= d.len() {
                let n = i32::from_be_bytes([d[at], d[at + 1], d[at + 2], d[at + 3]]);
                at += 4;
                let n = usize::try_from(n).unwrap_or(0);
                cols.push(String::from_utf8_lossy(&d[at..at + n]).into_owned());
                at += n;
            }
            out.push(cols);
        }
    }
    out
}

/// Runs `sql`; its error code, if any.
fn exec(raw: &mut Raw, sql: &str) -> Option<String> {
    error_code(&raw.query(sql))
}

fn ok(raw: &mut Raw, sql: &str) {
    let m = raw.query(sql);
    assert_eq!(error_code(&m), None, "{sql}: {m:?}");
}

/// Runs `statements` in one transaction; `Ok(commit ack time)`, or the
/// error code that ended it (the transaction then rolled back). A code
/// outside `allowed` fails the test.
fn transaction(raw: &mut Raw, statements: &[String], allowed: &[&str], seed: u64) -> Result<Instant, String> {
    ok(raw, "BEGIN");
    for sql in statements {
        if let Some(code) = exec(raw, sql) {
            assert!(allowed.contains(&code.as_str()), "seed {seed}: {sql} failed with {code}");
            ok(raw, "ROLLBACK");
            return Err(code);
        }
    }
    match exec(raw, "COMMIT") {
        None => Ok(Instant::now()),
        Some(code) => {
            assert!(allowed.contains(&code.as_str()), "seed {seed}: COMMIT failed with {code}");
            Err(code)
        }
    }
}

fn upserter(port: u16, seed: u64, w: usize) -> Vec<Upsert> {
    let mut rng = StdRng::seed_from_u64(seed ^ ((w as u64 + 1) * 0x9e37_79b9));
    let mut raw = connect(port);
    let mut acked = Vec::new();
    for n in 0..OPS_PER_UPSERTER {
        let op = (w * OPS_PER_UPSERTER + n + 1) as i64;
        let k = rng.random_range(0..KEYS);
        // A distinct increment per operation.
        let inc = op * 1000 + rng.random_range(1..1000);
        let statements = [
            format!("INSERT INTO kv AS t VALUES ({k}, {inc}) ON CONFLICT (k) DO UPDATE SET v = t.v + EXCLUDED.v"),
            format!("INSERT INTO log VALUES ({op}, {k}, {inc})"),
        ];
        if rng.random_bool(0.2) {
            ok(&mut raw, "BEGIN");
            for s in &statements {
                ok(&mut raw, s);
            }
            ok(&mut raw, "ROLLBACK");
            continue;
        }
        let sent = Instant::now();
        // A deadlock with the key deleter is the only allowed failure.
        if let Ok(at) = transaction(&mut raw, &statements, &["40P01"], seed) {
            acked.push(Upsert { op, k, inc, sent, acked: at });
        }
    }
    acked
}

fn key_deleter(port: u16, seed: u64) -> Vec<Delete> {
    let mut rng = StdRng::seed_from_u64(seed ^ 0x5eed);
    let mut raw = connect(port);
    let mut done = Vec::new();
    for _ in 0..KEY_DELETES {
        let k = rng.random_range(0..KEYS);
        let statements = [
            // Takes the key's row lock (or its unique-index slot), so no
            // upsert of k runs between the two deletes.
            format!("INSERT INTO kv AS t VALUES ({k}, 0) ON CONFLICT (k) DO UPDATE SET v = t.v + 0"),
            format!("DELETE FROM log WHERE k = {k}"),
            format!("DELETE FROM kv WHERE k = {k}"),
        ];
        let began = Instant::now();
        if let Ok(acked) = transaction(&mut raw, &statements, &["40P01"], seed) {
            done.push(Delete { k, began, acked });
        }
        std::thread::sleep(std::time::Duration::from_millis(rng.random_range(0..5)));
    }
    done
}

fn parent_worker(port: u16, seed: u64, w: usize) {
    let mut rng = StdRng::seed_from_u64(seed ^ ((w as u64 + 101) * 0x9e37_79b9));
    let mut raw = connect(port);
    for _ in 0..FK_OPS_PER_WORKER {
        let p = rng.random_range(0..PARENTS);
        let sql = if rng.random_bool(0.5) {
            format!("DELETE FROM parent WHERE id = {p}")
        } else {
            format!("INSERT INTO parent VALUES ({p}) ON CONFLICT DO NOTHING")
        };
        if let Some(code) = exec(&mut raw, &sql) {
            assert_eq!(code, "40P01", "seed {seed}: {sql} failed with {code}");
        }
    }
}

fn child_worker(port: u16, seed: u64, w: usize) -> usize {
    let mut rng = StdRng::seed_from_u64(seed ^ ((w as u64 + 201) * 0x9e37_79b9));
    let mut raw = connect(port);
    let mut inserted = 0;
    for n in 0..FK_OPS_PER_WORKER {
        let p = rng.random_range(0..PARENTS);
        let id = w * FK_OPS_PER_WORKER + n;
        match exec(&mut raw, &format!("INSERT INTO child VALUES ({id}, {p})")) {
            None => inserted += 1,
            Some(code) => assert!(code == "23503" || code == "40P01", "seed {seed}: child insert failed with {code}"),
        }
    }
    inserted
}

/// Parses column `i` of every row as an integer.
fn ints(rows: &[Vec<String>], i: usize) -> Vec<i64> {
    rows.iter().map(|r| r[i].parse().expect("an integer")).collect()
}

fn check(raw: &mut Raw, seed: u64, upserts: &[Upsert], deletes: &[Delete]) {
    let kv = rows(&raw.query("SELECT k, v FROM kv"));
    let keys = ints(&kv, 0);
    assert_eq!(keys.iter().collect::<HashSet<_>>().len(), keys.len(), "seed {seed}: duplicate keys in kv: {kv:?}");
    let log = rows(&raw.query("SELECT op, k, inc FROM log"));
    let by_op: HashMap<i64, &Upsert> = upserts.iter().map(|u| (u.op, u)).collect();
    let mut sums: HashMap<i64, i64> = HashMap::new();
    let mut logged = HashSet::new();
    for r in &log {
        let (op, k, inc) = (r[0].parse().unwrap(), r[1].parse().unwrap(), r[2].parse().unwrap());
        let u = by_op.get(&op).unwrap_or_else(|| panic!("seed {seed}: log row {r:?} is no acknowledged upsert"));
        assert_eq!((u.k, u.inc), (k, inc), "seed {seed}: log row {r:?}");
        assert!(logged.insert(op), "seed {seed}: op {op} logged twice");
        *sums.entry(k).or_default() += inc;
    }
    for r in &kv {
        let (k, v): (i64, i64) = (r[0].parse().unwrap(), r[1].parse().unwrap());
        assert_eq!(v, sums.get(&k).copied().unwrap_or(0), "seed {seed}: key {k}'s value is not its upserts' sum");
    }
    for k in sums.keys() {
        assert!(keys.contains(k), "seed {seed}: key {k} has upserts logged but no row");
    }
    for u in upserts {
        let of_key = deletes.iter().filter(|d| d.k == u.k);
        if logged.contains(&u.op) {
            let surely_after = of_key.clone().any(|d| d.began > u.acked);
            assert!(!surely_after, "seed {seed}: op {} survived a delete that began after it", u.op);
        } else {
            let maybe_after = of_key.clone().any(|d| d.acked > u.sent);
            assert!(maybe_after, "seed {seed}: op {} (key {}) was acknowledged and lost", u.op, u.k);
        }
    }
    let parents = ints(&rows(&raw.query("SELECT id FROM parent")), 0);
    let parent_set: HashSet<i64> = parents.iter().copied().collect();
    assert_eq!(parent_set.len(), parents.len(), "seed {seed}: duplicate parent ids");
    let children = rows(&raw.query("SELECT id, pid FROM child"));
    for c in &children {
        assert!(parent_set.contains(&c[1].parse().unwrap()), "seed {seed}: orphan child {c:?}");
    }
}

fn run(profile: Profile, seed: u64) {
    let srv = TestServer::start(profile, &[]);
    let mut setup = srv.raw("postgres");
    for sql in [
        "CREATE TABLE kv (k int PRIMARY KEY, v bigint NOT NULL)",
        "CREATE TABLE log (op bigint PRIMARY KEY, k int NOT NULL, inc bigint NOT NULL)",
        "CREATE TABLE parent (id int PRIMARY KEY)",
        "CREATE TABLE child (id int PRIMARY KEY, pid int NOT NULL REFERENCES parent ON DELETE CASCADE)",
    ] {
        ok(&mut setup, sql);
    }
    let port = srv.port;
    let ups: Vec<_> = (0..UPSERTERS).map(|w| std::thread::spawn(move || upserter(port, seed, w))).collect();
    let del = std::thread::spawn(move || key_deleter(port, seed));
    let pars: Vec<_> = (0..PARENT_WORKERS).map(|w| std::thread::spawn(move || parent_worker(port, seed, w))).collect();
    let kids: Vec<_> = (0..CHILD_WORKERS).map(|w| std::thread::spawn(move || child_worker(port, seed, w))).collect();
    let upserts: Vec<Upsert> = ups.into_iter().flat_map(|h| h.join().expect("upserter")).collect();
    let deletes = del.join().expect("key deleter");
    pars.into_iter().for_each(|h| h.join().expect("parent worker"));
    let children: usize = kids.into_iter().map(|h| h.join().expect("child worker")).sum();
    println!(
        "{profile:?}: {} upserts and {} key deletes acknowledged, {children} children inserted",
        upserts.len(),
        deletes.len()
    );
    assert!(!upserts.is_empty(), "seed {seed}: no upsert was acknowledged");
    check(&mut setup, seed, &upserts, &deletes);
}

#[test]
fn upserts_deletes_and_foreign_keys_keep_their_invariants() {
    let seed: u64 = std::env::var("WRITE_STRESS_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
    });
    println!("write_stress seed = {seed} (WRITE_STRESS_SEED={seed} replays it)");
    for profile in [Profile::Classic, Profile::Scalable] {
        run(profile, seed);
    }
}
