//! Crash test: a child process loads rows and calls [`Engine::flush`] at
//! known points, printing what each completed flush covers; the parent
//! kills it with SIGKILL at a random moment, reopens the data directory and
//! checks the durability contract (docs/reliability.md, "Durability"):
//!
//! * every row inserted before the last flush the child reported is in the
//!   heap, and a look-up through its primary-key index finds it;
//! * every table created before it exists;
//! * every page of every relation verifies (checksum and header).
//!
//! Three kills in a row on one data directory: after each, the next child
//! reopens what the previous one left and goes on loading, so recovery
//! from a killed run is exercised too. The seed is printed;
//! `TURNSTILE_CRASH_SEED` replays the kill times.
//!
//! The child is this test binary re-executed with `TURNSTILE_CRASH_CHILD`
//! set, running only [`crash_child_process`].

mod common;

use common::{crash_seed, small_pool_config as config};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::io::Write;
use std::time::{Duration, Instant};
use turnstile_engine::query::Query;
use turnstile_engine::types::ColumnType::{Int4, Int8, Text};
use turnstile_engine::types::Value;
use turnstile_engine::Engine;

/// Set in the child's environment: the data directory and the run number.
const CHILD_ENV: &str = "TURNSTILE_CRASH_CHILD";
/// Rows per batch between flushes.
const BATCH: i64 = 300;
/// Keys of run `r` start at `r * RUN_KEYS`.
const RUN_KEYS: i64 = 10_000_000;
/// A child stops by itself after this long (if the parent died).
const CHILD_LIFETIME: Duration = Duration::from_secs(60);

fn row(k: i64) -> Vec<Value> {
    vec![
        Value::Int8(k),
        Value::Int4((k % 97) as i32),
        Value::Text(format!("row {k} {}", "p".repeat((k % 50) as usize))),
    ]
}

/// The child: opens (or reopens) the directory and loads batches forever,
/// printing `flushed <run> <batches> <tables>` after each completed flush.
#[test]
fn crash_child_process() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return; // only runs as the parent's child
    };
    let (dir, run) = spec.rsplit_once(':').expect("dir:run");
    let run: i64 = run.parse().unwrap();
    let engine = Engine::open(dir, config()).unwrap();
    let mut s = engine.session().unwrap();
    if run == 0 {
        s.create_table("t", &[("k", Int8), ("v", Int4), ("pad", Text)], None).unwrap();
        s.create_index("t", "t_pkey", &["k"], true).unwrap();
    }
    let started = Instant::now();
    let mut out = std::io::stdout().lock();
    let mut batch = 0i64;
    while started.elapsed() < CHILD_LIFETIME {
        let first = run * RUN_KEYS + batch * BATCH;
        if batch % 2 == 0 {
            s.insert_many("t", (first..first + BATCH).map(row)).unwrap();
        } else {
            for k in first..first + BATCH {
                s.insert("t", &row(k)).unwrap();
            }
        }
        if batch % 5 == 4 {
            let name = format!("extra_{run}_{batch}");
            s.create_table(&name, &[("k", Int8)], None).unwrap();
            s.insert(&name, &[Value::Int8(batch)]).unwrap();
        }
        engine.flush().unwrap();
        batch += 1;
        writeln!(out, "flushed {run} {batch}").unwrap();
        out.flush().unwrap();
    }
}

/// Runs one child for run `run` and kills it `kill_after` after its first
/// completed flush; returns the batches its last reported flush covered.
fn run_and_kill(dir: &std::path::Path, run: i64, kill_after: Duration) -> i64 {
    let report = move |line: &str| {
        let mut parts = line.strip_prefix("flushed ")?.split(' ');
        assert_eq!(parts.next().unwrap().parse::<i64>().unwrap(), run);
        Some(parts.next().unwrap().parse().unwrap())
    };
    let flushed =
        common::run_and_kill("crash_child_process", CHILD_ENV, &format!("{}:{run}", dir.display()), kill_after, report);
    assert!(flushed[0] >= 1);
    *flushed.last().unwrap()
}

#[test]
fn flushed_rows_survive_sigkill_and_every_page_verifies() {
    let seed = crash_seed("crash");
    let mut rng = SmallRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let mut flushed = Vec::new();
    for run in 0..3 {
        let kill_after = Duration::from_millis(rng.random_range(0..1500));
        let batches = run_and_kill(dir.path(), run, kill_after);
        println!("crash: run {run} killed {kill_after:?} after its first flush; {batches} batches flushed");
        flushed.push(batches);

        let engine = Engine::open(dir.path(), config()).expect("reopen after SIGKILL");
        let pages = engine.verify_pages().expect("every page verifies after SIGKILL");
        assert!(pages > 0);
        let mut s = engine.session().unwrap();
        let present: std::collections::HashSet<i64> = s
            .scan_all("t")
            .unwrap()
            .into_iter()
            .map(|r| match r[0] {
                Value::Int8(k) => k,
                ref other => panic!("bad key {other:?}"),
            })
            .collect();
        let lookup = Query::from("t").filter("k", turnstile_engine::query::Operand::Param(1)).select(["k", "v"]);
        let mut prepared = s.prepare(&lookup).unwrap();
        for (r, &batches) in flushed.iter().enumerate() {
            let r = r as i64;
            for k in r * RUN_KEYS..r * RUN_KEYS + batches * BATCH {
                assert!(present.contains(&k), "run {r}: flushed row {k} is missing from the heap");
            }
            // Index lookups: every flushed key (a B-tree split half written
            // after the flush must not lose keys flushed before it).
            for b in 0..batches {
                for k in r * RUN_KEYS + b * BATCH..r * RUN_KEYS + (b + 1) * BATCH {
                    let rows = s.execute(&mut prepared, &[Value::Int8(k)]).unwrap();
                    assert_eq!(rows, vec![vec![Value::Int8(k), Value::Int4((k % 97) as i32)]], "index lookup of {k}");
                }
            }
            for b in (4..batches).step_by(5) {
                let name = format!("extra_{r}_{b}");
                assert_eq!(s.scan_all(&name).unwrap(), vec![vec![Value::Int8(b)]], "table {name}");
            }
        }
    }
}
