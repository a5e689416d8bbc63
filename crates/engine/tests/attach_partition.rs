//! `ALTER TABLE … ATTACH PARTITION` and `ALTER INDEX … ATTACH PARTITION`,
//! as a restore of pg_dump's output runs them: rows outside the bound are
//! refused (23514), a partition's equivalent index is attached rather than
//! duplicated, and rows route through the parent afterwards.

use turnstile_engine::catalog::{PartitionBound, PartitionStrategy};
use turnstile_engine::types::ColumnType::{Int4, Text};
use turnstile_engine::types::Value;
use turnstile_engine::Engine;
use turnstile_sync::Config;

fn row(i: i32) -> Vec<Value> {
    vec![Value::Int4(i), Value::Text(format!("v{i}"))]
}

#[test]
fn attach_checks_rows_reuses_equivalent_indexes_and_routes_through_the_parent() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut s = engine.session().unwrap();
    let cols = [("k", Int4), ("v", Text)];
    s.create_table("p", &cols, Some((PartitionStrategy::Range, "k"))).unwrap();
    s.create_table("lo", &cols, None).unwrap();
    s.create_table("hi", &cols, None).unwrap();
    s.create_table("narrow", &[("k", Int4)], None).unwrap();
    s.insert("hi", &row(5)).unwrap();
    let outside = s.attach_partition("p", "hi", PartitionBound::range(Some(500), None)).unwrap_err();
    assert_eq!(outside.sqlstate(), "23514", "{outside}");
    assert!(s.attach_partition("p", "narrow", PartitionBound::range(Some(900), None)).is_err());
    s.insert("lo", &row(1)).unwrap();
    s.create_index("lo", "lo_pkey", &["k"], true).unwrap();
    s.attach_partition("p", "lo", PartitionBound::range(None, Some(500))).unwrap();
    // The parent's unique index takes the partition's equivalent one.
    s.create_index("p", "p_k", &["k"], true).unwrap();
    let cat = engine.catalog().snapshot();
    let db = s.database();
    let parent_index = cat.find(db, "p_k").unwrap().id;
    let lo_index = cat.find(db, "lo_pkey").unwrap();
    assert_eq!(lo_index.index.as_ref().unwrap().parent, Some(parent_index));
    assert_eq!(cat.indexes_of(cat.find(db, "lo").unwrap().id).count(), 1, "no second index on lo");
    // Attaching it again is accepted and changes nothing; another index is refused.
    s.attach_index("p_k", "lo_pkey").unwrap();
    s.create_index("lo", "lo_v", &["v"], false).unwrap();
    assert!(s.attach_index("p_k", "lo_v").is_err());
    s.insert_many("p", (2..10).map(row)).unwrap();
    assert_eq!(s.scan_all("p").unwrap().len(), 9);
    assert_eq!(s.insert("p", &row(3)).unwrap_err().sqlstate(), "23505");
    assert_eq!(s.insert("p", &row(700)).unwrap_err().sqlstate(), "23514", "no partition takes 700 yet");
    s.delete_rows(&turnstile_engine::query::Query::from("hi"), &[], &mut |_| Ok(true)).unwrap();
    s.attach_partition("p", "hi", PartitionBound::range(Some(500), None)).unwrap();
    let hi = engine.catalog().snapshot();
    let made = hi.indexes_of(hi.find(db, "hi").unwrap().id).map(|ix| ix.name.clone()).collect::<Vec<_>>();
    assert_eq!(made, ["hi_k_key"], "the parent's index is created on a partition that lacks one");
    s.insert("p", &row(700)).unwrap();
    assert_eq!(s.scan_all("p").unwrap().len(), 10);
}
