//! DDL against concurrent readers, end to end through the engine: the DDL
//! waits for the readers' AccessShare locks (moved off the fast path by the
//! strong lock), shows `Lock`/`relation` in `activity`, then proceeds.

use std::time::{Duration, Instant};
use turnstile_engine::catalog::{PartitionBound, PartitionStrategy};
use turnstile_engine::types::ColumnType::{Int4, Text};
use turnstile_engine::types::Value;
use turnstile_engine::{Engine, EngineError};
use turnstile_lock::LockMode;
use turnstile_sync::{Config, Profile};

fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn create_index_waits_for_a_reader_then_proceeds_in_both_profiles() {
    for profile in Profile::ALL {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(dir.path(), Config::preset(profile)).unwrap();
        let mut reader = engine.session().unwrap();
        reader.create_table("t", &[("a", Int4), ("b", Text)], None).unwrap();
        reader.begin().unwrap();
        assert!(reader.lock_table("t", LockMode::AccessShare).is_ok());
        let t = reader.lock_table("t", LockMode::AccessShare).unwrap();
        let rows = engine.locks().locks();
        let mine = rows.iter().find(|r| r.relation == Some(t.rel.id) && r.backend == reader.backend().id()).unwrap();
        assert!(mine.fastpath, "{profile}: a weak relation lock should start on the fast path");

        let ddl_slot = std::thread::scope(|s| {
            let ddl = s.spawn(|| {
                let mut ddl = engine.session().unwrap();
                let slot = ddl.activity_slot();
                ddl.create_index("t", "t_a", &["a"], false).map(|_| slot)
            });
            wait_for("the DDL to wait on the relation lock", || {
                engine.activity().iter().any(|r| r.wait_event_type == Some("Lock") && r.wait_event == Some("relation"))
            });
            let rows = engine.locks().locks();
            let held = rows.iter().find(|r| r.relation == Some(t.rel.id) && r.granted).unwrap();
            assert!(!held.fastpath, "{profile}: the strong locker must have transferred the fast-path lock");
            assert!(rows
                .iter()
                .any(|r| r.relation == Some(t.rel.id) && !r.granted && r.mode == LockMode::AccessExclusive));
            assert!(!ddl.is_finished(), "{profile}: DDL ran while a reader held AccessShare");
            reader.commit().unwrap();
            ddl.join().unwrap().unwrap()
        });
        assert!(engine.activity().iter().all(|r| r.backend != ddl_slot), "the DDL session's slot was freed");
        assert!(engine.locks().locks().is_empty(), "{profile}: statement locks outlived the statement");
        reader.begin().unwrap();
        let entry = reader.lock_table("t", LockMode::AccessShare).unwrap();
        assert_eq!(entry.indexes.len(), 1, "{profile}: the reader's relation cache saw the new index");
        reader.commit().unwrap();
        assert!(engine.locks().locks().is_empty(), "{profile}: commit left locks behind");
        engine.check_invariants();
    }
}

#[test]
fn ddl_errors_are_typed_and_leave_no_locks_behind() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut s = engine.session().unwrap();
    s.create_table("acc", &[("aid", Int4), ("aid_parent", Int4)], Some((PartitionStrategy::Range, "aid"))).unwrap();
    s.create_partition("acc", "acc_1", PartitionBound::Range { from: 0, to: 10 }).unwrap();
    s.create_index("acc", "acc_ap", &["aid_parent"], false).unwrap();
    s.create_partition("acc", "acc_2", PartitionBound::Range { from: 10, to: 20 }).unwrap();
    assert!(matches!(s.create_index("nope", "i", &["a"], false), Err(EngineError::Catalog(_))));
    assert!(matches!(s.create_table("acc", &[("x", Int4)], None), Err(EngineError::Catalog(_))));
    assert!(matches!(s.create_index("acc", "i2", &["zzz"], false), Err(EngineError::Catalog(_))));
    assert!(engine.locks().locks().is_empty());
    assert!(matches!(
        s.lock_table("acc", LockMode::AccessShare),
        Err(EngineError::TransactionState(turnstile_engine::InvalidTransactionState::OutsideBlock("LOCK TABLE")))
    ));
    s.begin().unwrap();
    let acc = s.lock_table("acc", LockMode::AccessShare).unwrap();
    assert_eq!(acc.partitions.len(), 2);
    let p2 = s.rel_entry(acc.partitions[1].0).unwrap();
    assert_eq!(p2.indexes.len(), 1, "a partition created after the index got its own");
    s.commit().unwrap();
    s.drop_relation("acc").unwrap();
    assert!(engine.catalog().snapshot().relations.is_empty());
    let files: Vec<_> = std::fs::read_dir(dir.path().join("base").join(s.database().to_string()))
        .map(|d| d.flatten().collect())
        .unwrap_or_default();
    assert!(files.is_empty(), "dropped relations left files: {files:?}");
    drop(s);
    let reopened = {
        drop(engine);
        Engine::open(dir.path(), Config::default()).unwrap()
    };
    assert!(reopened.catalog().snapshot().relations.is_empty());
}

#[test]
fn a_dropped_session_frees_its_locks_and_slot() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.lock.max_backends = 2;
    let engine = Engine::open(dir.path(), config).unwrap();
    let mut a = engine.session().unwrap();
    a.create_table("t", &[("a", Int4)], None).unwrap();
    a.begin().unwrap();
    a.lock_table("t", LockMode::AccessExclusive).unwrap();
    let _b = engine.session().unwrap();
    assert!(engine.session().is_err(), "a third session fit in two slots");
    drop(a);
    assert!(engine.locks().locks().is_empty());
    let mut c = engine.session().unwrap();
    c.begin().unwrap();
    c.lock_table("t", LockMode::AccessExclusive).unwrap();
    engine.check_invariants();
}

#[test]
fn a_partition_created_after_its_parents_index_is_usable_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut s = engine.session().unwrap();
    s.create_table("acc", &[("aid", Int4), ("aid_parent", Int4)], Some((PartitionStrategy::Range, "aid"))).unwrap();
    s.create_index("acc", "acc_ap", &["aid_parent"], false).unwrap();
    s.create_partition("acc", "acc_1", PartitionBound::Range { from: 0, to: 100 }).unwrap();
    for i in 0..50 {
        s.insert("acc", &[turnstile_engine::types::Value::Int4(i), turnstile_engine::types::Value::Int4(i * 2)])
            .unwrap();
    }
    let q = turnstile_engine::query::Query::from("acc").filter("aid_parent", 42).select(["aid"]);
    assert_eq!(s.query(&q, &[]).unwrap(), vec![vec![turnstile_engine::types::Value::Int4(21)]]);
    engine.check_invariants();
}

/// `INSERT` opens every index it writes with `RowExclusiveLock`, as
/// PostgreSQL's `ExecOpenIndices` does: the target's, and a partition's
/// when a row is routed to it.
#[test]
fn an_insert_locks_the_indexes_it_writes() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut s = engine.session().unwrap();
    s.create_table("plain", &[("a", Int4)], None).unwrap();
    let plain_ix = s.create_index("plain", "plain_a", &["a"], false).unwrap();
    s.create_table("acc", &[("aid", Int4), ("aid_parent", Int4)], Some((PartitionStrategy::Range, "aid"))).unwrap();
    let p1 = s.create_partition("acc", "acc_1", PartitionBound::Range { from: 0, to: 10 }).unwrap();
    s.create_partition("acc", "acc_2", PartitionBound::Range { from: 10, to: 20 }).unwrap();
    s.create_index("acc", "acc_ap", &["aid_parent"], false).unwrap();
    s.begin().unwrap();
    s.insert("plain", &[Value::Int4(1)]).unwrap();
    s.insert("acc", &[Value::Int4(3), Value::Int4(3)]).unwrap();
    let p1_entry = s.rel_entry(p1).unwrap();
    let rows = engine.locks().locks();
    let row_exclusive =
        |id| rows.iter().any(|r| r.relation == Some(id) && r.mode == LockMode::RowExclusive && r.granted);
    assert!(row_exclusive(plain_ix), "the plain table's index is not locked: {rows:?}");
    assert!(row_exclusive(p1), "the partition a row went to is not locked");
    assert_eq!(p1_entry.indexes.len(), 1);
    assert!(row_exclusive(p1_entry.indexes[0].id), "the partition's index is not locked: {rows:?}");
    let locked = rows.iter().filter(|r| r.mode == LockMode::RowExclusive).count();
    assert_eq!(locked, 5, "plain, its index, acc, acc_1 and acc_1's index: {rows:?}");
    s.commit().unwrap();
    assert!(engine.locks().locks().is_empty());
    engine.check_invariants();
}
