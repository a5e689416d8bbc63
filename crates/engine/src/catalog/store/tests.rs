//! Unit tests of the catalog store: DDL on the catalog snapshot, the
//! catalog file's atomic rewrite and its reload.

use super::*;
use ColumnType::*;

fn open(dir: &Path) -> Catalog {
    Catalog::open(dir, LwLockPolicy::Fair).unwrap()
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn ddl_survives_reopen() {
    let dir = tempdir();
    let (db, ids) = {
        let c = open(dir.path());
        let db = c.database("postgres").unwrap();
        let t = c.create_table(db, "accounts", &[("aid", Int4), ("bid", Int4), ("filler", Text)], None).unwrap();
        let ix = c.create_index(db, "accounts", "accounts_pkey", &["aid"], true, true).unwrap();
        c.add_column(db, "accounts", "aid_parent", Int4).unwrap();
        (db, (t.id, ix[0].id))
    };
    let c = open(dir.path());
    let t = c.relation(db, "accounts").unwrap();
    assert_eq!(t.id, ids.0);
    assert_eq!(t.columns.len(), 4);
    let snap = c.snapshot();
    let idx: Vec<_> = snap.indexes_of(t.id).collect();
    assert_eq!(idx.len(), 1);
    assert_eq!(idx[0].id, ids.1);
    assert!(idx[0].index.as_ref().unwrap().unique);
    let next = c.create_table(db, "branches", &[("bid", Int4)], None).unwrap();
    assert!(next.id > ids.1, "ids were reused after reopen");
}

#[test]
fn deferred_ddl_is_written_by_sync() {
    let dir = tempdir();
    let c = open(dir.path());
    let db = c.database("postgres").unwrap();
    c.defer_writes(true).unwrap();
    c.create_table(db, "t", &[("a", Int4)], None).unwrap();
    assert!(open(dir.path()).relation(db, "t").is_err(), "deferred DDL was written early");
    c.sync().unwrap();
    assert!(open(dir.path()).relation(db, "t").is_ok());
    c.create_table(db, "u", &[("a", Int4)], None).unwrap();
    c.defer_writes(false).unwrap();
    assert!(open(dir.path()).relation(db, "u").is_ok(), "turning deferral off did not write");
}

#[test]
fn partitions_inherit_and_propagate_indexes() {
    let dir = tempdir();
    let c = open(dir.path());
    let db = c.database("postgres").unwrap();
    let cols = [("aid", Int4), ("aid_parent", Int4)];
    c.create_table(db, "accounts", &cols, Some((PartitionStrategy::Range, "aid"))).unwrap();
    c.create_partition(db, "accounts", "accounts_1", PartitionBound::Range { from: 0, to: 100 }).unwrap();
    let made = c.create_index(db, "accounts", "ap_idx", &["aid_parent"], false, false).unwrap();
    assert_eq!(made.len(), 2);
    assert_eq!(made[0].kind, RelKind::PartitionedIndex);
    // PostgreSQL's name for the index a partition inherits:
    // `<partition>_<key columns>_idx` (`ChooseIndexName`), not the parent
    // index's name.
    assert_eq!(made[1].name, "accounts_1_aid_parent_idx");
    let (p2, idx2) =
        c.create_partition(db, "accounts", "accounts_2", PartitionBound::Range { from: 100, to: 200 }).unwrap();
    assert_eq!(idx2.len(), 1);
    assert_eq!(idx2[0].index.as_ref().unwrap().table, p2.id);
    let overlap = c.create_partition(db, "accounts", "accounts_x", PartitionBound::Range { from: 150, to: 250 });
    assert!(matches!(overlap, Err(CatalogError::Invalid(_))));
    let wrong = c.create_partition(db, "accounts", "accounts_h", PartitionBound::Hash { modulus: 2, remainder: 0 });
    assert!(matches!(wrong, Err(CatalogError::Invalid(_))));
    let dropped = c.drop_relation(db, "accounts").unwrap();
    assert_eq!(dropped.len(), 6, "table, 2 partitions, 3 indexes");
    assert!(c.snapshot().relations.is_empty());
}

#[test]
fn bad_ddl_is_a_typed_error_and_changes_nothing() {
    let dir = tempdir();
    let c = open(dir.path());
    let db = c.database("postgres").unwrap();
    c.create_table(db, "t", &[("a", Int4)], None).unwrap();
    let generation = c.generation();
    assert!(matches!(c.create_table(db, "t", &[("a", Int4)], None), Err(CatalogError::DuplicateRelation(_))));
    assert!(matches!(
        c.create_table(db, "u", &[("a", Int4), ("a", Int8)], None),
        Err(CatalogError::DuplicateColumn { .. })
    ));
    assert!(matches!(c.create_index(db, "t", "i", &["b"], false, false), Err(CatalogError::UnknownColumn { .. })));
    assert!(matches!(c.create_index(db, "nope", "i", &["a"], false, false), Err(CatalogError::UnknownRelation(_))));
    assert!(matches!(
        c.create_partition(db, "t", "t1", PartitionBound::Range { from: 0, to: 1 }),
        Err(CatalogError::WrongKind { .. })
    ));
    assert!(matches!(c.add_column(db, "t", "a", Text), Err(CatalogError::DuplicateColumn { .. })));
    assert!(matches!(c.create_table(db, "", &[("a", Int4)], None), Err(CatalogError::Invalid(_))));
    assert!(matches!(c.database("nope"), Err(CatalogError::UnknownDatabase(_))));
    assert_eq!(c.generation(), generation);
}

#[test]
fn a_corrupted_catalog_refuses_to_open_and_says_what_to_do() {
    let dir = tempdir();
    {
        let c = open(dir.path());
        let db = c.database("postgres").unwrap();
        c.create_table(db, "t", &[("a", Int4)], None).unwrap();
    }
    let path = dir.path().join(FILE_NAME);
    let mut bytes = fs::read(&path).unwrap();
    let last = bytes.len() - 2;
    bytes[last] ^= 0x01;
    fs::write(&path, &bytes).unwrap();
    let err = Catalog::open(dir.path(), LwLockPolicy::Fair).unwrap_err();
    assert!(matches!(err, CatalogError::Corrupted { .. }), "{err}");
    assert!(err.to_string().contains("restore it from a backup"), "{err}");
    fs::write(&path, b"garbage").unwrap();
    assert!(matches!(Catalog::open(dir.path(), LwLockPolicy::Fair), Err(CatalogError::Corrupted { .. })));
}

/// Where PostgreSQL 15 put these `bigint` keys of a table `PARTITION BY
/// HASH (k)` with four partitions `FOR VALUES WITH (MODULUS 4, REMAINDER
/// r)` (`SELECT k, tableoid::regclass`): a dump moves every row between
/// the two into the partition that takes it.
#[test]
fn hash_partitions_route_keys_as_postgresql_15_does() {
    let postgres: [(i64, u32); 13] = [
        (0, 0),
        (1, 0),
        (17, 0),
        (300, 0),
        (5_000_000_000, 0),
        (-1, 1),
        (-300, 2),
        (2, 2),
        (i64::MAX, 2),
        (2_147_483_648, 2),
        (i64::MIN, 3),
        (-5_000_000_000, 3),
        (-2_147_483_649, 3),
    ];
    for (key, remainder) in postgres {
        assert_eq!(crate::catalog::hash_partition(key, 4), remainder, "key {key}");
    }
}

#[test]
fn hash_partitions_route_every_key_to_exactly_one_partition() {
    for key in -1000..1000i64 {
        let hits = (0..4)
            .filter(|&r| PartitionBound::Hash { modulus: 4, remainder: r }.contains(&crate::types::Value::Int8(key)))
            .count();
        assert_eq!(hits, 1, "key {key}");
    }
}
