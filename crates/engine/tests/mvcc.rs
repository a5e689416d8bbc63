//! Row versions and snapshots through the engine API, under both snapshot
//! protocols: what a snapshot sees, the version store's life cycle, and the
//! transaction-id limit across a restart.

use std::sync::Arc;
use turnstile_engine::mvcc::IsolationLevel;
use turnstile_engine::query::{Operand, Query};
use turnstile_engine::types::ColumnType::{Int4, Int8};
use turnstile_engine::types::Value;
use turnstile_engine::{Engine, Session};
use turnstile_sync::{Config, Profile};

fn config(profile: Profile) -> Config {
    let mut c = Config::preset(profile);
    // The background vacuum would race the counts below.
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

fn v(s: &mut Session, id: i32) -> Option<i64> {
    let q = Query::from("t").filter("id", Operand::Const(Value::Int4(id)));
    s.query(&q, &[]).unwrap().first().map(|r| r[1].as_i64().unwrap())
}

fn set(s: &mut Session, id: i32, to: i64) -> u64 {
    let q = Query::from("t").filter("id", Operand::Const(Value::Int4(id)));
    s.update_rows(&q, &[], &mut |row| Ok(Some(vec![row[0].clone(), Value::Int8(to)]))).unwrap()
}

fn sum(s: &mut Session) -> i64 {
    s.scan_all("t").unwrap().iter().map(|r| r[1].as_i64().unwrap()).sum()
}

#[test]
fn a_snapshot_sees_committed_versions_only_and_its_own() {
    for profile in [Profile::Classic, Profile::Scalable] {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(dir.path(), config(profile)).unwrap();
        let mut a = table(&engine, 10);
        let mut b = engine.session().unwrap();
        a.begin().unwrap();
        assert_eq!(set(&mut a, 3, 30), 1);
        assert_eq!(v(&mut a, 3), Some(30), "{profile:?}: own change");
        assert_eq!(v(&mut b, 3), Some(0), "{profile:?}: another session's uncommitted change");
        assert_eq!(sum(&mut b), 0, "{profile:?}: through a sequential scan");
        b.begin_with(IsolationLevel::RepeatableRead).unwrap();
        assert_eq!(v(&mut b, 3), Some(0));
        a.commit().unwrap();
        assert_eq!(v(&mut b, 3), Some(0), "{profile:?}: REPEATABLE READ keeps its snapshot");
        b.commit().unwrap();
        assert_eq!(v(&mut b, 3), Some(30), "{profile:?}: the next snapshot sees the commit");
        // A rolled-back update leaves the old version in place.
        a.begin().unwrap();
        set(&mut a, 4, 40);
        a.rollback().unwrap();
        assert_eq!(v(&mut b, 4), Some(0));
        assert_eq!(sum(&mut b), 30);
    }
}

#[test]
fn versions_live_while_a_snapshot_needs_them_and_vacuum_drops_them() {
    for profile in [Profile::Classic, Profile::Scalable] {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(dir.path(), config(profile)).unwrap();
        let mut a = table(&engine, 100);
        let mut old = engine.session().unwrap();
        old.begin_with(IsolationLevel::RepeatableRead).unwrap();
        assert_eq!(sum(&mut old), 0);
        for round in 1..=5 {
            for id in 0..100 {
                set(&mut a, id, round);
            }
        }
        let versions = engine.txns().versions();
        assert!(versions.len() >= 100, "{profile:?}: the old snapshot needs versions: {}", versions.len());
        a.vacuum(Some("t"), false).unwrap();
        assert!(!versions.is_empty(), "{profile:?}: VACUUM dropped versions a running snapshot needs");
        assert_eq!(sum(&mut old), 0, "{profile:?}: the old snapshot still reads the first versions");
        old.commit().unwrap();
        let report = a.vacuum(Some("t"), false).unwrap();
        assert!(report.versions_pruned > 0);
        assert!(versions.is_empty(), "{profile:?}: {} versions left after the snapshot ended", versions.len());
        assert_eq!(sum(&mut a), 500);
    }
}

#[test]
fn truncate_then_reuse_of_a_tid_never_shows_an_earlier_rows_versions() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), config(Profile::Scalable)).unwrap();
    let mut a = table(&engine, 1);
    let mut old = engine.session().unwrap();
    old.begin_with(IsolationLevel::RepeatableRead).unwrap();
    assert_eq!(sum(&mut old), 0);
    set(&mut a, 0, 7);
    old.commit().unwrap();
    a.truncate(&["t"]).unwrap();
    a.insert("t", &[Value::Int4(0), Value::Int8(100)]).unwrap();
    let mut reader = engine.session().unwrap();
    reader.begin_with(IsolationLevel::RepeatableRead).unwrap();
    assert_eq!(v(&mut reader, 0), Some(100));
    set(&mut a, 0, 200);
    assert_eq!(v(&mut reader, 0), Some(100), "the reader's version, not the truncated row's");
    reader.commit().unwrap();
    assert_eq!(v(&mut reader, 0), Some(200));
}

#[test]
fn transaction_ids_resume_past_the_limit_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let first = {
        let engine = Engine::open(dir.path(), config(Profile::Scalable)).unwrap();
        let mut s = table(&engine, 10);
        set(&mut s, 1, 11);
        engine.flush().unwrap();
        engine.txns().snapshots().clog().base()
    };
    let engine = Engine::open(dir.path(), config(Profile::Scalable)).unwrap();
    let base = engine.txns().snapshots().clog().base();
    assert!(base > first, "ids start past the last run's limit: {base} <= {first}");
    let mut s = engine.session().unwrap();
    assert_eq!(v(&mut s, 1), Some(11), "the earlier run's committed rows are visible");
    set(&mut s, 2, 22);
    assert_eq!(sum(&mut s), 33);
}
