//! A server that runs for months: 64-bit transaction ids through 2^32, no
//! id for read-only work, a status log and a version store that stay
//! within their bounds however long a snapshot lives, and a rollback that
//! stays rolled back across a restart. Under both profiles.

use std::sync::Arc;
use turnstile_engine::mvcc::{IsolationLevel, Snapshots};
use turnstile_engine::query::{Operand, Query};
use turnstile_engine::types::ColumnType::{Int4, Int8, Text};
use turnstile_engine::types::Value;
use turnstile_engine::{Engine, Session};
use turnstile_sync::config::SnapshotProtocol;
use turnstile_sync::{Config, LwLockPolicy, Profile};

const PROFILES: [Profile; 2] = [Profile::Classic, Profile::Scalable];

fn config(profile: Profile) -> Config {
    let mut c = Config::preset(profile);
    c.txn.autovacuum_naptime_ms = 0;
    c
}

fn table(engine: &Arc<Engine>, n: i32) -> Session {
    let mut s = engine.session().unwrap();
    s.create_table("t", &[("id", Int4), ("v", Int8)], None).unwrap();
    s.insert_many("t", (0..n).map(|i| vec![Value::Int4(i), Value::Int8(0)])).unwrap();
    s.create_index("t", "t_pkey", &["id"], true).unwrap();
    s
}

fn add(s: &mut Session, id: i32, by: i64) -> u64 {
    let q = Query::from("t").filter("id", Operand::Const(Value::Int4(id)));
    s.update_rows(&q, &[], &mut |row| Ok(Some(vec![row[0].clone(), Value::Int8(row[1].as_i64().unwrap() + by)])))
        .unwrap()
}

fn sum_and_count(s: &mut Session) -> (i64, usize) {
    let rows = s.scan_all("t").unwrap();
    (rows.iter().map(|r| r[1].as_i64().unwrap()).sum(), rows.len())
}

fn by_index(s: &mut Session, id: i32) -> Option<i64> {
    let q = Query::from("t").filter("id", Operand::Const(Value::Int4(id)));
    s.query(&q, &[]).unwrap().first().map(|r| r[1].as_i64().unwrap())
}

#[test]
fn ids_run_through_2_to_the_32_and_every_row_stays_visible() {
    for profile in PROFILES {
        let dir = tempfile::tempdir().unwrap();
        let mut c = config(profile);
        c.set("txn.start_xid", &((1u64 << 32) - 300).to_string()).unwrap();
        let engine = Engine::open(dir.path(), c.clone()).unwrap();
        let mut s = table(&engine, 50);
        let mut old = engine.session().unwrap();
        let mut expected = 0;
        for i in 0..600 {
            if i == 200 {
                old.begin_with(IsolationLevel::RepeatableRead).unwrap();
                assert_eq!(sum_and_count(&mut old), (expected, 50));
            }
            s.begin().unwrap();
            assert_eq!(add(&mut s, i % 50, 1), 1);
            s.commit().unwrap();
            expected += 1;
        }
        let next = engine.txns().snapshots().next_xid();
        assert!(next > 1 << 32, "{profile:?}: the counter ran through 2^32 (next id {next})");
        assert_eq!(sum_and_count(&mut s), (expected, 50), "{profile:?}");
        assert_eq!(sum_and_count(&mut old), (200, 50), "{profile:?}: a snapshot from before 2^32");
        for id in 0..50 {
            assert_eq!(by_index(&mut s, id), Some(12), "{profile:?}: row {id} through the index");
        }
        old.commit().unwrap();
        s.vacuum(None, false).unwrap();
        assert_eq!(sum_and_count(&mut s), (expected, 50), "{profile:?}: after VACUUM");
        drop((s, old));
        engine.flush().unwrap();
        drop(engine);
        let engine = Engine::open(dir.path(), c).unwrap();
        let mut s = engine.session().unwrap();
        assert_eq!(sum_and_count(&mut s), (expected, 50), "{profile:?}: after a restart");
        s.begin().unwrap();
        add(&mut s, 0, 1);
        s.commit().unwrap();
        assert!(engine.txns().snapshots().next_xid() > next, "{profile:?}: ids are never reused");
    }
}

#[test]
fn read_only_transactions_take_no_transaction_id() {
    for profile in PROFILES {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(dir.path(), config(profile)).unwrap();
        let mut s = table(&engine, 10);
        let before = engine.txns().snapshots().stats().xids;
        for isolation in [IsolationLevel::ReadCommitted, IsolationLevel::RepeatableRead] {
            s.begin_with(isolation).unwrap();
            sum_and_count(&mut s);
            by_index(&mut s, 3);
            s.commit().unwrap();
        }
        sum_and_count(&mut s);
        assert_eq!(engine.txns().snapshots().stats().xids, before, "{profile:?}");
        s.begin().unwrap();
        add(&mut s, 1, 1);
        s.commit().unwrap();
        assert_eq!(engine.txns().snapshots().stats().xids, before + 1, "{profile:?}: one for a write");
    }
}

/// A seed from `TURNSTILE_SEED` or the clock, printed.
fn seed() -> u64 {
    let seed = std::env::var("TURNSTILE_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
    });
    println!("seed {seed} (TURNSTILE_SEED={seed} repeats it)");
    seed
}

fn next(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

#[test]
fn the_status_log_and_the_version_store_stay_bounded_under_a_long_snapshot() {
    let seed = seed();
    for profile in PROFILES {
        let dir = tempfile::tempdir().unwrap();
        let mut c = config(profile);
        c.txn.version_store_limit_bytes = 64 << 10;
        let engine = Engine::open(dir.path(), c).unwrap();
        table(&engine, 200);
        let mut long = engine.session().unwrap();
        long.begin_with(IsolationLevel::RepeatableRead).unwrap();
        assert_eq!(sum_and_count(&mut long), (0, 200));
        let threads = 3;
        let per_thread = 6000;
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let engine = Arc::clone(&engine);
                std::thread::spawn(move || {
                    let mut rng = seed ^ (t as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
                    let mut s = engine.session().unwrap();
                    let mut max_log = 0;
                    let mut max_versions = 0;
                    for i in 0..per_thread {
                        s.begin().unwrap();
                        let rolled_back = next(&mut rng) % 10 == 0;
                        add(&mut s, (next(&mut rng) % 200) as i32, 1);
                        if rolled_back {
                            s.rollback().unwrap();
                        } else {
                            s.commit().unwrap();
                        }
                        if i % 500 == 0 {
                            s.vacuum(None, false).unwrap();
                        }
                        max_log = max_log.max(engine.txns().snapshots().clog().size().bytes);
                        max_versions = max_versions.max(engine.txns().versions().stats().bytes);
                    }
                    (max_log, max_versions)
                })
            })
            .collect();
        let mut peaks = Vec::new();
        for w in workers {
            peaks.push(w.join().unwrap());
        }
        let xids = engine.txns().snapshots().stats().xids;
        assert!(xids >= (threads * per_thread) as u64, "{profile:?}: {xids} ids");
        // The ring's 16 segments of 4096 words, one range per summarised
        // run, a few overflow segments while the long snapshot's segment is
        // pinned: far below 8 bytes × the ids assigned.
        let log_bound = 16 * 32 * 1024 + 8 * 32 * 1024;
        let versions_bound = 64 << 10;
        for (log, versions) in &peaks {
            assert!(*log <= log_bound, "seed {seed} {profile:?}: the status log peaked at {log} bytes (> {log_bound})");
            assert!(
                *versions <= versions_bound,
                "seed {seed} {profile:?}: the version store peaked at {versions} bytes"
            );
        }
        let vs = engine.txns().versions().stats();
        assert!(vs.fallbacks > 0, "seed {seed} {profile:?}: the version store never reached its limit: {vs:?}");
        // The invariant: the long snapshot still sees the table as it was.
        assert_eq!(sum_and_count(&mut long), (0, 200), "seed {seed} {profile:?}: the long snapshot");
        long.commit().unwrap();
        let mut s = engine.session().unwrap();
        let (sum, count) = sum_and_count(&mut s);
        assert_eq!(count, 200, "seed {seed} {profile:?}");
        assert!(sum > 0 && sum <= (threads * per_thread) as i64);
        s.vacuum(None, false).unwrap();
        let size = engine.txns().snapshots().clog().size();
        let base = engine.txns().snapshots().clog().base();
        let next_xid = engine.txns().snapshots().next_xid();
        assert!(
            next_xid - base <= 2 * 4096,
            "seed {seed} {profile:?}: the base {base} settles up to {next_xid}: {size:?}"
        );
        engine.check_invariants();
    }
}

fn undo_table(engine: &Arc<Engine>) {
    let mut s = engine.session().unwrap();
    s.create_table("u", &[("id", Int4), ("v", Int4), ("pad", Text)], None).unwrap();
    s.insert_many("u", (1..=2000).map(|i| vec![Value::Int4(i), Value::Int4(0), Value::Text("x".repeat(100))])).unwrap();
    s.create_index("u", "u_pkey", &["id"], true).unwrap();
    drop(s);
    engine.flush().unwrap();
}

fn undo_state(s: &mut Session) -> (usize, i64, usize) {
    let rows = s.scan_all("u").unwrap();
    let v = rows.iter().map(|r| r[1].as_i64().unwrap()).sum();
    let padded = rows.iter().filter(|r| r[2] == Value::Text("x".repeat(100))).count();
    (rows.len(), v, padded)
}

#[test]
fn a_transaction_past_the_undo_limit_leaves_nothing_also_after_a_restart() {
    for profile in PROFILES {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(dir.path(), config(profile)).unwrap();
        undo_table(&engine);
        drop(engine);
        let mut small = config(profile);
        small.set("txn.undo_limit_bytes", "8192").unwrap();
        let engine = Engine::open(dir.path(), small.clone()).unwrap();
        let mut s = engine.session().unwrap();
        s.begin().unwrap();
        // Rows updated in place (and, past the version store's room, moved)
        // one by one until the undo log is full.
        let mut err = None;
        for id in 1..=2000 {
            let q = Query::from("u").filter("id", Operand::Const(Value::Int4(id)));
            let set = &mut |row: &[Value]| Ok(Some(vec![row[0].clone(), Value::Int4(1), Value::Text("y".repeat(100))]));
            if let Err(e) = s.update_rows(&q, &[], set) {
                err = Some((id, e));
                break;
            }
        }
        let (failed_at, err) = err.expect("the undo limit was never reached");
        assert_eq!(err.sqlstate(), "54000", "{profile:?}: {err}");
        assert!(failed_at > 10, "{profile:?}: only {failed_at} rows fit in 8 KiB of undo");
        s.rollback().unwrap();
        assert_eq!(undo_state(&mut s), (2000, 0, 2000), "{profile:?}: right after the ROLLBACK");
        drop(s);
        engine.flush().unwrap();
        drop(engine);
        let engine = Engine::open(dir.path(), small).unwrap();
        let mut s = engine.session().unwrap();
        assert_eq!(undo_state(&mut s), (2000, 0, 2000), "{profile:?}: after a restart");
    }
}

#[test]
fn an_id_kept_aborted_stays_aborted_across_a_restart() {
    for protocol in [SnapshotProtocol::Procarray, SnapshotProtocol::Csn] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("xid_limit");
        let s = Snapshots::open(protocol, LwLockPolicy::Fair, 4, &path, (1 << 32) + 7).unwrap();
        s.register(0);
        let a = s.assign_xid(0).unwrap();
        assert_eq!(a, (1 << 32) + 7, "txn.start_xid in a fresh directory");
        s.mark_failed(a).unwrap();
        s.abort(0, a).unwrap();
        let b = s.assign_xid(0).unwrap();
        s.commit(0, b).unwrap();
        drop(s);
        let s = Snapshots::open(protocol, LwLockPolicy::Fair, 4, &path, 3).unwrap();
        assert!(s.aborted(a) && !s.committed(a), "{protocol:?}: the failed rollback of an earlier run");
        assert!(s.committed(b) && !s.aborted(b), "{protocol:?}: an earlier run's commit");
        assert!(s.next_xid() > b, "{protocol:?}: the counter resumes past the earlier run");
    }
}

fn set_id(s: &mut Session, id: i32, to: i32) -> u64 {
    let q = Query::from("t").filter("id", Operand::Const(Value::Int4(id)));
    s.update_rows(&q, &[], &mut |row| Ok(Some(vec![Value::Int4(to), row[1].clone()]))).unwrap()
}

#[test]
fn versions_spilled_to_the_heap_serve_old_snapshots_roll_back_and_survive_a_move() {
    for profile in PROFILES {
        let dir = tempfile::tempdir().unwrap();
        let mut c = config(profile);
        c.txn.version_store_limit_bytes = 0; // every older version goes to the heap
        let engine = Engine::open(dir.path(), c).unwrap();
        let mut s = table(&engine, 20);
        let mut old = engine.session().unwrap();
        old.begin_with(IsolationLevel::RepeatableRead).unwrap();
        assert_eq!(sum_and_count(&mut old), (0, 20));
        for round in 1..=5 {
            for id in 0..20 {
                add(&mut s, id, round);
            }
            let mut middle = engine.session().unwrap();
            middle.begin_with(IsolationLevel::RepeatableRead).unwrap();
            assert_eq!(sum_and_count(&mut middle).0, 20 * (1..=round).sum::<i64>(), "{profile:?} round {round}");
            middle.commit().unwrap();
        }
        let vs = engine.txns().versions().stats();
        assert_eq!((vs.versions, vs.fallbacks), (0, 100), "{profile:?}: nothing in memory, 100 spilled: {vs:?}");
        // A rolled-back spilled update restores the row in place.
        s.begin().unwrap();
        add(&mut s, 3, 1000);
        s.rollback().unwrap();
        assert_eq!(by_index(&mut s, 3), Some(15), "{profile:?}");
        // A key change moves the row: its spilled versions go to the store.
        assert_eq!(set_id(&mut s, 4, 400), 1);
        assert_eq!(by_index(&mut s, 400), Some(15));
        assert_eq!(by_index(&mut s, 4), None);
        assert!(engine.txns().versions().stats().versions >= 5, "{profile:?}: the moved row's chain is in memory");
        // The old snapshot sees every row as it was, by a scan and by the index.
        assert_eq!(sum_and_count(&mut old), (0, 20), "{profile:?}: the old snapshot");
        for id in 0..20 {
            assert_eq!(by_index(&mut old, id), Some(0), "{profile:?}: row {id} for the old snapshot");
        }
        assert_eq!(by_index(&mut old, 400), None);
        assert_eq!(sum_and_count(&mut s), (300, 20), "{profile:?}: the newest versions");
        // VACUUM keeps the copies while the old snapshot lives, then removes them.
        let kept = s.vacuum(None, false).unwrap();
        old.commit().unwrap();
        let removed = s.vacuum(None, false).unwrap();
        assert!(removed.dead_tuples >= 100, "{profile:?}: {kept:?} then {removed:?}");
        assert_eq!(sum_and_count(&mut s), (300, 20), "{profile:?}: after VACUUM");
        engine.check_invariants();
    }
}
