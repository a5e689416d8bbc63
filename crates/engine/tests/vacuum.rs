//! VACUUM reclaims dead tuples (deletes, moved updates, rolled-back and
//! failed inserts) and their index entries, records free space, and
//! leaves alone what an open transaction may still bring back.

use turnstile_engine::query::Query;
use turnstile_engine::types::ColumnType::{Int4, Text};
use turnstile_engine::types::Value;
use turnstile_engine::{Engine, EngineError};
use turnstile_storage::{Fork, RelFileId};
use turnstile_sync::Config;

fn row(i: i32) -> Vec<Value> {
    vec![Value::Int4(i), Value::Text(format!("{i:0>100}"))]
}

#[test]
fn vacuum_reclaims_deleted_rows_and_their_index_entries_and_space_is_reused() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut s = engine.session().unwrap();
    s.create_table("t", &[("k", Int4), ("v", Text)], None).unwrap();
    s.insert_many("t", (0..3000).map(row)).unwrap();
    s.create_index("t", "t_k", &["k"], true).unwrap();
    let id = engine.catalog().relation(s.database(), "t").unwrap().id;
    let file = RelFileId::new(s.database(), id);
    let pages = engine.smgr().nblocks(file, Fork::Main).unwrap();
    assert_eq!(s.delete_rows(&Query::from("t"), &[], &mut |r| Ok(r[0].as_i64().unwrap() % 3 != 0)).unwrap(), 2000);
    // A failed insert and a rolled-back one leave dead tuples too.
    assert!(s.insert("t", &row(0)).is_err());
    s.begin().unwrap();
    s.insert("t", &row(100_000)).unwrap();
    s.rollback().unwrap();
    let report = s.vacuum(Some("t"), false).unwrap();
    assert_eq!(report.dead_tuples, 2002, "{report:?}");
    // The failed insert never got its entry in the (only, unique) index.
    assert_eq!(report.index_entries, 2001, "{report:?}");
    assert_eq!(report.kept_locked, 0);
    assert_eq!(s.vacuum(Some("t"), false).unwrap().dead_tuples, 0, "a second vacuum found more");
    // Survivors are intact and found through the index; deleted keys are free.
    assert_eq!(s.scan_all("t").unwrap().len(), 1000);
    assert_eq!(s.query(&Query::from("t").filter("k", 999), &[]).unwrap(), vec![row(999)]);
    assert!(s.query(&Query::from("t").filter("k", 1000), &[]).unwrap().is_empty());
    // 2000 new rows fit in the reclaimed space: the table does not grow.
    for i in 0..2000 {
        s.insert("t", &row(10_000 + i)).unwrap();
    }
    assert!(engine.smgr().nblocks(file, Fork::Main).unwrap() <= pages + 1, "reclaimed space was not reused");
    assert_eq!(s.scan_all("t").unwrap().len(), 3000);
    assert_eq!(s.query(&Query::from("t").filter("k", 10_500), &[]).unwrap(), vec![row(10_500)]);
}

#[test]
fn vacuum_keeps_what_an_open_transaction_can_still_roll_back() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut a = engine.session().unwrap();
    a.create_table("t", &[("k", Int4), ("v", Text)], None).unwrap();
    a.insert_many("t", (0..100).map(row)).unwrap();
    a.create_index("t", "t_k", &["k"], true).unwrap();
    a.begin().unwrap();
    assert_eq!(a.delete_rows(&Query::from("t").filter("k", 5), &[], &mut |_| Ok(true)).unwrap(), 1);
    // A moved update: the old version is dead, the new one elsewhere.
    a.update_rows(&Query::from("t").filter("k", 6), &[], &mut |r| {
        let mut new = r.to_vec();
        new[0] = Value::Int4(606);
        Ok(Some(new))
    })
    .unwrap();
    let mut v = engine.session().unwrap();
    let report = v.vacuum(None, false).unwrap();
    assert_eq!((report.dead_tuples, report.kept_locked), (0, 2), "{report:?}");
    a.rollback().unwrap();
    assert_eq!(a.query(&Query::from("t").filter("k", 5), &[]).unwrap(), vec![row(5)]);
    assert_eq!(a.query(&Query::from("t").filter("k", 6), &[]).unwrap(), vec![row(6)]);
    let report = v.vacuum(Some("t"), false).unwrap();
    assert_eq!(report.dead_tuples, 1, "the moved update's new version is dead after the rollback: {report:?}");
    assert!(a.query(&Query::from("t").filter("k", 606), &[]).unwrap().is_empty());
    v.begin().unwrap();
    assert!(matches!(
        v.vacuum(None, false),
        Err(EngineError::TransactionState(turnstile_engine::InvalidTransactionState::InsideBlock("VACUUM")))
    ));
    v.commit().unwrap();
}

#[test]
fn vacuum_full_cuts_empty_pages_off_the_end_and_analyze_takes_its_lock() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut s = engine.session().unwrap();
    s.create_table("t", &[("k", Int4), ("v", Text)], None).unwrap();
    s.insert_many("t", (0..3000).map(row)).unwrap();
    let id = engine.catalog().relation(s.database(), "t").unwrap().id;
    let file = RelFileId::new(s.database(), id);
    let before = engine.smgr().nblocks(file, Fork::Main).unwrap();
    s.delete_rows(&Query::from("t"), &[], &mut |r| Ok(r[0].as_i64().unwrap() >= 1000)).unwrap();
    let report = s.vacuum(Some("t"), true).unwrap();
    assert!(report.truncated_pages > 0, "{report:?}");
    let after = engine.smgr().nblocks(file, Fork::Main).unwrap();
    assert!(after * 2 < before, "{before} -> {after} pages");
    assert_eq!(s.scan_all("t").unwrap().len(), 1000);
    s.insert("t", &row(5000)).unwrap();
    assert_eq!(s.scan_all("t").unwrap().len(), 1001);
    s.analyze(Some("t")).unwrap();
    s.analyze(None).unwrap();
    assert_eq!(s.analyze(Some("nope")).unwrap_err().sqlstate(), "42P01");
    assert!(engine.locks_view().is_empty());
}
