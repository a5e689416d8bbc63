//! Crash recovery: a child process commits small transactions (a ledger
//! row inserted and a counter updated in place, together), printing each
//! acknowledged commit, while another session of it keeps one transaction
//! open that rewrites committed ledger rows in place and inserts rows of
//! its own; checkpoints run now and then. The parent kills the child with
//! SIGKILL at a random moment, reopens the data directory (recovery) and
//! checks:
//!
//! * every acknowledged commit is there, and nothing else but at most the
//!   one commit that was in flight;
//! * nothing of the open transaction survives: no row of its inserts, and
//!   every ledger row as its committer wrote it;
//! * the counter equals the number of ledger rows (both changes of a
//!   transaction, or neither);
//! * every ledger row is found through the primary key, and every page of
//!   every relation verifies;
//! * the unlogged table the child filled is empty, and its index works.
//!
//! Three kills in a row on one directory, so a recovered directory is
//! recovered again. The seed is printed; `TURNSTILE_CRASH_SEED` replays the
//! kill times. The child is this binary re-executed with
//! `TURNSTILE_WAL_CRASH_CHILD` set, running only [`wal_crash_child`].

mod common;

use common::{crash_seed, int, small_pool_config as config};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::collections::HashSet;
use std::io::Write;
use std::time::{Duration, Instant};
use turnstile_engine::query::{Operand, Query};
use turnstile_engine::types::ColumnType::{Int4, Int8, Text};
use turnstile_engine::types::Value;
use turnstile_engine::Engine;

const CHILD_ENV: &str = "TURNSTILE_WAL_CRASH_CHILD";
/// Ledger keys of run `r` start at `r * RUN_KEYS`.
const RUN_KEYS: i64 = 1_000_000;
/// A child stops by itself after this long (if the parent died).
const CHILD_LIFETIME: Duration = Duration::from_secs(60);

/// The child: commits ledger transactions forever, printing
/// `committed <key>` after each acknowledged commit.
#[test]
fn wal_crash_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else { return };
    let (dir, run) = spec.rsplit_once(':').expect("dir:run");
    let run: i64 = run.parse().unwrap();
    let engine = Engine::open(dir, config()).unwrap();
    let mut a = engine.session().unwrap();
    if run == 0 {
        a.create_table("ledger", &[("k", Int8), ("delta", Int4), ("note", Text)], None).unwrap();
        a.create_index("ledger", "ledger_pkey", &["k"], true).unwrap();
        a.create_table("counter", &[("id", Int4), ("total", Int8)], None).unwrap();
        a.insert("counter", &[Value::Int4(0), Value::Int8(0)]).unwrap();
        a.create_table("scratch", &[("k", Int8)], None).unwrap();
        a.set_unlogged("scratch").unwrap();
        a.create_index("scratch", "scratch_pkey", &["k"], true).unwrap();
    }
    // The transaction that never commits: rewrites committed rows of
    // earlier runs in place and inserts negative keys.
    let mut b = engine.session().unwrap();
    b.begin().unwrap();
    let mut bump = |row: &[Value]| -> turnstile_engine::error::Result<Option<Vec<Value>>> {
        Ok(Some(vec![row[0].clone(), Value::Int4(999), Value::Text("loser".into())]))
    };
    for k in (0..run * RUN_KEYS).step_by(RUN_KEYS as usize / 1000).take(50) {
        b.update_rows(&Query::from("ledger").filter("k", k), &[], &mut bump).unwrap();
    }
    let started = Instant::now();
    let mut out = std::io::stdout().lock();
    let mut n = 0i64;
    let counter = Query::from("counter").filter("id", 0);
    while started.elapsed() < CHILD_LIFETIME {
        let k = run * RUN_KEYS + n;
        a.begin().unwrap();
        a.insert("ledger", &[Value::Int8(k), Value::Int4(1), Value::Text(format!("run {run} n {n}"))]).unwrap();
        let mut add = |row: &[Value]| -> turnstile_engine::error::Result<Option<Vec<Value>>> {
            Ok(Some(vec![row[0].clone(), Value::Int8(int(&row[1]) + 1)]))
        };
        assert_eq!(a.update_rows(&counter, &[], &mut add).unwrap(), 1);
        a.insert("scratch", &[Value::Int8(k)]).unwrap();
        a.commit().unwrap();
        writeln!(out, "committed {k}").unwrap();
        out.flush().unwrap();
        if n % 7 == 3 {
            let loser = -(run * RUN_KEYS + n) - 1;
            b.insert("ledger", &[Value::Int8(loser), Value::Int4(-1), Value::Text("x".repeat(200))]).unwrap();
        }
        if n % 100 == 99 {
            engine.checkpoint().unwrap();
        }
        n += 1;
    }
}

/// Runs the child of run `run`, kills it `kill_after` after its first
/// acknowledged commit; returns the keys it acknowledged.
fn run_and_kill(dir: &std::path::Path, run: i64, kill_after: Duration) -> Vec<i64> {
    // The harness may print `test wal_crash_child ... ` before the child's first line.
    let report = |line: &str| line.rsplit_once("committed ").map(|(_, k)| k.parse().unwrap());
    common::run_and_kill("wal_crash_child", CHILD_ENV, &format!("{}:{run}", dir.display()), kill_after, report)
}

#[test]
fn acknowledged_commits_survive_sigkill_and_open_transactions_do_not() {
    let seed = crash_seed("wal_crash");
    let mut rng = SmallRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let mut acknowledged: HashSet<i64> = HashSet::new();
    for run in 0..3 {
        let kill_after = Duration::from_millis(rng.random_range(50..2000));
        let keys = run_and_kill(dir.path(), run, kill_after);
        println!("wal_crash: run {run} killed {kill_after:?} after its first commit; {} acknowledged", keys.len());
        acknowledged.extend(keys.iter().copied());

        let engine = Engine::open(dir.path(), config()).expect("recover after SIGKILL");
        assert!(engine.verify_pages().expect("every page verifies after recovery") > 0);
        let mut s = engine.session().unwrap();
        let ledger = s.scan_all("ledger").unwrap();
        let present: HashSet<i64> = ledger.iter().map(|r| int(&r[0])).collect();
        for k in &acknowledged {
            assert!(present.contains(k), "run {run}: acknowledged commit {k} is lost");
        }
        let extra: Vec<i64> = present.difference(&acknowledged).copied().collect();
        assert!(extra.len() <= 1, "run {run}: rows no commit acknowledged: {extra:?}");
        assert!(extra.iter().all(|k| *k >= 0), "run {run}: rows of the open transaction survived: {extra:?}");
        for r in &ledger {
            assert_eq!(int(&r[1]), 1, "run {run}: ledger row {} keeps the open transaction's update", int(&r[0]));
        }
        let total = s.scan_all("counter").unwrap();
        assert_eq!(total.len(), 1);
        assert_eq!(int(&total[0][1]), ledger.len() as i64, "run {run}: counter and ledger disagree");
        let lookup = Query::from("ledger").filter("k", Operand::Param(1)).select(["k"]);
        let mut prepared = s.prepare(&lookup).unwrap();
        for k in &present {
            let rows = s.execute(&mut prepared, &[Value::Int8(*k)]).unwrap();
            assert_eq!(rows, vec![vec![Value::Int8(*k)]], "run {run}: index lookup of {k}");
        }
        assert!(s.scan_all("scratch").unwrap().is_empty(), "run {run}: the unlogged table kept rows");
        s.insert("scratch", &[Value::Int8(-5)]).unwrap();
        let probe = Query::from("scratch").filter("k", -5i64).select(["k"]);
        assert_eq!(s.query(&probe, &[]).unwrap(), vec![vec![Value::Int8(-5)]], "run {run}: the unlogged index");
        acknowledged.extend(extra);
    }
}
