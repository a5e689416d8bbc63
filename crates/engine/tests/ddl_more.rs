//! TRUNCATE, ADD PRIMARY KEY, MINVALUE/MAXVALUE bounds, fillfactor,
//! CREATE/DROP DATABASE.

use turnstile_engine::catalog::{PartitionBound, PartitionStrategy};
use turnstile_engine::query::Query;
use turnstile_engine::types::ColumnType::{Int4, Text};
use turnstile_engine::types::Value;
use turnstile_engine::{Engine, EngineError};
use turnstile_lock::LockMode;
use turnstile_storage::{Fork, RelFileId};
use turnstile_sync::Config;

fn row(i: i32) -> Vec<Value> {
    vec![Value::Int4(i), Value::Text(format!("{i:0>80}"))]
}

#[test]
fn truncate_empties_tables_partitions_and_indexes_under_access_exclusive() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut s = engine.session().unwrap();
    s.create_table("p", &[("k", Int4), ("v", Text)], Some((PartitionStrategy::Range, "k"))).unwrap();
    s.create_partition("p", "p_lo", PartitionBound::range(None, Some(500))).unwrap();
    s.create_partition("p", "p_hi", PartitionBound::range(Some(500), None)).unwrap();
    s.create_index("p", "p_k", &["k"], true).unwrap();
    s.create_table("u", &[("k", Int4), ("v", Text)], None).unwrap();
    s.insert_many("p", (0..1000).map(row)).unwrap();
    s.insert_many("u", (0..1000).map(row)).unwrap();
    s.begin().unwrap();
    s.truncate(&["p", "u"]).unwrap();
    let cat = engine.catalog().snapshot();
    let held: Vec<(String, LockMode)> = engine
        .locks_view()
        .into_iter()
        .filter(|r| r.backend == s.backend().id() && r.locktype == "relation")
        .map(|r| (cat.relations[&r.relation.unwrap()].name.clone(), r.mode))
        .collect();
    // The partitions' indexes are named as PostgreSQL names them.
    for name in ["p", "p_lo", "p_hi", "p_k", "p_lo_k_key", "p_hi_k_key", "u"] {
        assert!(held.contains(&(name.to_owned(), LockMode::AccessExclusive)), "{name} not locked: {held:?}");
    }
    let report = s.rollback().unwrap();
    assert_eq!(report.kept_ddl, ["TRUNCATE p, u"], "TRUNCATE is not undone and says so");
    assert!(s.scan_all("p").unwrap().is_empty());
    assert!(s.scan_all("u").unwrap().is_empty());
    let lo = cat.find(s.database(), "p_lo").unwrap().id;
    assert_eq!(engine.smgr().nblocks(RelFileId::new(s.database(), lo), Fork::Main).unwrap(), 0);
    // Usable again: the indexes were rebuilt empty, the old keys are free.
    s.insert_many("p", (0..1000).map(row)).unwrap();
    let found = s.query(&Query::from("p").filter("k", 777), &[]).unwrap();
    assert_eq!(found, vec![row(777)]);
    assert_eq!(s.insert("p", &row(5)).unwrap_err().sqlstate(), "23505");
    let bad = s.truncate(&["p_k"]).unwrap_err();
    assert_eq!(bad.sqlstate(), "42809", "{bad}");
}

#[test]
fn minvalue_and_maxvalue_bounds_route_every_key() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut s = engine.session().unwrap();
    s.create_table("r", &[("k", turnstile_engine::types::ColumnType::Int8)], Some((PartitionStrategy::Range, "k")))
        .unwrap();
    s.create_partition("r", "r_min", PartitionBound::range(None, Some(0))).unwrap();
    s.create_partition("r", "r_max", PartitionBound::range(Some(0), None)).unwrap();
    let overlap = s.create_partition("r", "r_x", PartitionBound::range(Some(100), Some(200))).unwrap_err();
    assert!(matches!(overlap, EngineError::Catalog(_)), "{overlap}");
    for k in [i64::MIN, -1, 0, 1, i64::MAX] {
        let (rel, _) = s.insert("r", &[Value::Int8(k)]).unwrap();
        let name = engine.catalog().snapshot().relations[&rel].name.clone();
        assert_eq!(name, if k < 0 { "r_min" } else { "r_max" }, "key {k}");
    }
    assert_eq!(s.query(&Query::from("r").filter("k", Value::Int8(i64::MAX)), &[]).unwrap().len(), 1);
}

#[test]
fn add_primary_key_cascades_to_partitions_and_refuses_nulls_and_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut s = engine.session().unwrap();
    s.create_table("a", &[("aid", Int4), ("v", Text)], Some((PartitionStrategy::Range, "aid"))).unwrap();
    s.create_partition("a", "a_1", PartitionBound::range(None, Some(100))).unwrap();
    s.create_partition("a", "a_2", PartitionBound::range(Some(100), None)).unwrap();
    s.insert_many("a", (0..200).map(row)).unwrap();
    s.insert("a", &[Value::Int4(150), Value::Null]).unwrap();
    let dup = s.add_primary_key("a", &["aid"]).unwrap_err();
    assert_eq!(dup.sqlstate(), "23505", "{dup}");
    assert!(engine.catalog().relation(s.database(), "a_pkey").is_err(), "a failed ADD PRIMARY KEY left its index");
    s.delete_rows(&Query::from("a").filter("aid", 150), &[], &mut |r| Ok(r[1] == Value::Null)).unwrap();
    s.create_table("n", &[("k", Int4)], None).unwrap();
    s.insert("n", &[Value::Null]).unwrap();
    assert_eq!(s.add_primary_key("n", &["k"]).unwrap_err().sqlstate(), "23502");
    s.add_primary_key("a", &["aid"]).unwrap();
    let cat = engine.catalog().snapshot();
    let a = cat.find(s.database(), "a").unwrap();
    let pk_count = cat
        .relations
        .values()
        .filter(|r| r.index.as_ref().is_some_and(|d| d.primary && d.unique))
        .map(|r| r.name.clone())
        .collect::<Vec<_>>();
    assert_eq!(pk_count.len(), 3, "partitioned index plus one per partition: {pk_count:?}");
    assert!(a.columns[0].not_null);
    assert_eq!(s.insert("a", &row(150)).unwrap_err().sqlstate(), "23505");
    s.insert("a", &[Value::Int4(1000), Value::Null]).unwrap();
    let null_key = s.insert("a", &[Value::Null, Value::Null]).unwrap_err();
    // A NULL key routes to no partition (PostgreSQL says the same).
    assert_eq!(null_key.sqlstate(), "23514", "{null_key}");
    s.create_partition("a", "a_3", PartitionBound::range(Some(-1000), Some(-500))).unwrap_err();
    assert_eq!(s.add_primary_key("a", &["aid"]).unwrap_err().sqlstate(), "42P16");
    let plain_null = s.update_rows(&Query::from("a").filter("aid", 7), &[], &mut |r| {
        let mut new = r.to_vec();
        new[0] = Value::Null;
        Ok(Some(new))
    });
    assert_eq!(plain_null.unwrap_err().sqlstate(), "23502");
}

#[test]
fn fillfactor_leaves_room_on_every_page() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut s = engine.session().unwrap();
    let mut pages = Vec::new();
    for (name, ff) in [("full", None), ("half", Some(50))] {
        s.create_table(name, &[("k", Int4), ("v", Text)], None).unwrap();
        s.set_fillfactor(name, ff).unwrap();
        s.insert_many(name, (0..2000).map(row)).unwrap();
        for i in 2000..2100 {
            s.insert(name, &row(i)).unwrap();
        }
        let id = engine.catalog().relation(s.database(), name).unwrap().id;
        pages.push(engine.smgr().nblocks(RelFileId::new(s.database(), id), Fork::Main).unwrap());
    }
    assert!(pages[1] * 10 >= pages[0] * 19, "fillfactor 50 used {} pages, 100 used {}", pages[1], pages[0]);
    assert_eq!(engine.catalog().relation(s.database(), "half").unwrap().fillfactor, Some(50));
    assert!(s.set_fillfactor("half", Some(5)).is_err());
}

#[test]
fn databases_are_created_listed_connected_to_and_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut s = engine.session().unwrap();
    s.create_database("bench").unwrap();
    assert_eq!(s.create_database("bench").unwrap_err().sqlstate(), "42P04");
    let names: Vec<String> = engine.databases().into_iter().map(|d| d.name).collect();
    assert_eq!(names, ["postgres", "bench"]);
    let mut b = engine.session_on("bench").unwrap();
    b.create_table("t", &[("k", Int4)], None).unwrap();
    b.insert("t", &[Value::Int4(1)]).unwrap();
    engine.flush().unwrap();
    assert_eq!(s.drop_database("bench").unwrap_err().sqlstate(), "55006", "dropped a database in use");
    assert_eq!(b.drop_database("bench").unwrap_err().sqlstate(), "55006");
    drop(b);
    s.drop_database("bench").unwrap();
    assert_eq!(engine.session_on("bench").unwrap_err().sqlstate(), "3D000");
    assert_eq!(s.drop_database("bench").unwrap_err().sqlstate(), "3D000");
    assert!(s.drop_database("postgres").is_err());
    s.begin().unwrap();
    assert_eq!(s.create_database("x").unwrap_err().sqlstate(), "25001");
    s.commit().unwrap();
    drop(s);
    let reopened = Engine::open(dir.path(), Config::default()).unwrap();
    assert_eq!(reopened.databases().len(), 1, "the drop did not persist");
}
