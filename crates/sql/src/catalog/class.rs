//! Relations and their structure: `pg_class` (user tables, partitioned
//! tables, indexes, sequences, and the system relations themselves), `pg_index`,
//! `pg_inherits` (partitions and their indexes) and
//! `pg_partitioned_table`.

use super::datum::{boolean, ch, int, int2vector, oid, oidvector, text, text_array, ACL_ARRAY, NULL, TEXT_ARRAY};
use super::deparse::partition_bound;
use super::oid::{BTREE_AM, HEAP_AM, PUBLIC_NAMESPACE, SUPERUSER};
use super::relation::Reader;
use super::types;
use crate::value::{Datum, SqlType};
use turnstile_engine::catalog::{IndexDef, PartitionStrategy, RelKind, Relation};
use SqlType::*;

/// `pg_catalog.pg_class`'s columns.
pub(super) const CLASS: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("relname", Name),
    ("relnamespace", Oid),
    ("reltype", Oid),
    ("reloftype", Oid),
    ("relowner", Oid),
    ("relam", Oid),
    ("relfilenode", Oid),
    ("reltablespace", Oid),
    ("relpages", Int4),
    ("reltuples", Float4),
    ("relallvisible", Int4),
    ("reltoastrelid", Oid),
    ("relhasindex", Bool),
    ("relisshared", Bool),
    ("relpersistence", QChar),
    ("relkind", QChar),
    ("relnatts", Int2),
    ("relchecks", Int2),
    ("relhasrules", Bool),
    ("relhastriggers", Bool),
    ("relhassubclass", Bool),
    ("relrowsecurity", Bool),
    ("relforcerowsecurity", Bool),
    ("relispopulated", Bool),
    ("relreplident", QChar),
    ("relispartition", Bool),
    ("relrewrite", Oid),
    ("relfrozenxid", Xid),
    ("relminmxid", Xid),
    ("relacl", ACL_ARRAY),      /* _aclitem */
    ("reloptions", TEXT_ARRAY), /* _text */
    ("relpartbound", Text),     /* pg_node_tree */
];

/// `pg_catalog.pg_index`'s columns.
pub(super) const INDEX: &[(&str, SqlType)] = &[
    ("indexrelid", Oid),
    ("indrelid", Oid),
    ("indnatts", Int2),
    ("indnkeyatts", Int2),
    ("indisunique", Bool),
    ("indnullsnotdistinct", Bool),
    ("indisprimary", Bool),
    ("indisexclusion", Bool),
    ("indimmediate", Bool),
    ("indisclustered", Bool),
    ("indisvalid", Bool),
    ("indcheckxmin", Bool),
    ("indisready", Bool),
    ("indislive", Bool),
    ("indisreplident", Bool),
    ("indkey", Text),       /* int2vector */
    ("indcollation", Text), /* oidvector */
    ("indclass", Text),     /* oidvector */
    ("indoption", Text),    /* int2vector */
    ("indexprs", Text),     /* pg_node_tree */
    ("indpred", Text),      /* pg_node_tree */
];

/// `pg_catalog.pg_inherits`'s columns.
pub(super) const INHERITS: &[(&str, SqlType)] =
    &[("inhrelid", Oid), ("inhparent", Oid), ("inhseqno", Int4), ("inhdetachpending", Bool)];

/// `pg_catalog.pg_partitioned_table`'s columns.
pub(super) const PARTITIONED_TABLE: &[(&str, SqlType)] = &[
    ("partrelid", Oid),
    ("partstrat", QChar),
    ("partnatts", Int2),
    ("partdefid", Oid),
    ("partattrs", Text),     /* int2vector */
    ("partclass", Text),     /* oidvector */
    ("partcollation", Text), /* oidvector */
    ("partexprs", Text),     /* pg_node_tree */
];

/// `relkind` of a relation.
pub fn relkind(kind: RelKind) -> char {
    match kind {
        RelKind::Table => 'r',
        RelKind::PartitionedTable => 'p',
        RelKind::Index => 'i',
        RelKind::PartitionedIndex => 'I',
    }
}

/// `relam`: heap for tables, btree for indexes, none for a partitioned
/// table.
fn access_method(kind: RelKind) -> u32 {
    match kind {
        RelKind::Table => HEAP_AM,
        RelKind::PartitionedTable => 0,
        RelKind::Index | RelKind::PartitionedIndex => BTREE_AM,
    }
}

fn user_class_row(r: &Reader<'_>, rel: &Relation) -> Vec<Datum> {
    let table = matches!(rel.kind, RelKind::Table | RelKind::PartitionedTable);
    let has_index = table && r.cat.indexes_of(rel.id).next().is_some();
    let has_subclass = r.cat.partitions_of(rel.id).next().is_some()
        || r.relations().any(|x| x.index.as_ref().is_some_and(|d| d.parent == Some(rel.id)));
    let partition = rel.parent.is_some() || rel.index.as_ref().is_some_and(|d| d.parent.is_some());
    // PostgreSQL enforces a foreign key by triggers on both tables, and
    // pg_dump and psql look for foreign keys only where
    // `relhastriggers` is set.
    let has_triggers =
        table && r.cat.foreign_keys.values().any(|k| k.db == r.db && (k.table == rel.id || k.ref_table == rel.id));
    vec![
        oid(rel.id),
        text(rel.name.clone()),
        oid(PUBLIC_NAMESPACE),
        oid(0),
        oid(0),
        oid(SUPERUSER),
        oid(access_method(rel.kind)),
        oid(if rel.kind.has_storage() { rel.id } else { 0 }),
        oid(0),
        int(0),
        Datum::Float(-1.0),
        int(0),
        oid(0),
        boolean(has_index),
        boolean(false),
        ch('p'),
        ch(relkind(rel.kind)),
        int(rel.columns.len() as i64),
        int(0),
        boolean(false),
        boolean(has_triggers),
        boolean(has_subclass),
        boolean(false),
        boolean(false),
        boolean(true),
        ch(if table { 'd' } else { 'n' }),
        boolean(partition),
        oid(0),
        int(0),
        int(if table { 1 } else { 0 }),
        NULL,
        rel.fillfactor.map_or(NULL, |f| text_array([format!("fillfactor={f}")])),
        rel.bound.as_ref().map_or(NULL, |b| text(partition_bound(b))),
    ]
}

fn system_class_row(oid_: u32, name: &str, namespace: u32, kind: char, natts: usize) -> Vec<Datum> {
    vec![
        oid(oid_),
        text(name),
        oid(namespace),
        oid(0),
        oid(0),
        oid(SUPERUSER),
        oid(if kind == 'r' { HEAP_AM } else { 0 }),
        oid(if kind == 'r' { oid_ } else { 0 }),
        oid(0),
        int(0),
        Datum::Float(-1.0),
        int(0),
        oid(0),
        boolean(false),
        boolean(false),
        ch('p'),
        ch(kind),
        int(natts as i64),
        int(0),
        boolean(kind == 'v'),
        boolean(false),
        boolean(false),
        boolean(false),
        boolean(false),
        boolean(true),
        ch(if kind == 'r' { 'd' } else { 'n' }),
        boolean(false),
        oid(0),
        int(0),
        int(if kind == 'r' { 1 } else { 0 }),
        NULL,
        NULL,
        NULL,
    ]
}

/// `pg_class`: the session database's relations and sequences
/// (`relkind 'S'`, three columns as PostgreSQL's), then the system
/// relations.
pub(super) fn class_rows(r: &Reader<'_>) -> Vec<Vec<Datum>> {
    let mut rows: Vec<Vec<Datum>> = r.relations().map(|rel| user_class_row(r, rel)).collect();
    let mut seqs = r.services.shared().sequences.in_database(r.db);
    seqs.sort_by_key(|s| s.oid);
    for s in seqs {
        rows.push(system_class_row(s.oid, &s.name, PUBLIC_NAMESPACE, 'S', 3));
    }
    for s in r.system {
        rows.push(system_class_row(s.oid, s.name, s.schema.oid(), s.kind, s.columns.len()));
    }
    for &(id, name, natts) in r.status_views {
        rows.push(system_class_row(id, name, super::oid::CATALOG_NAMESPACE, 'v', natts));
    }
    rows
}

/// `pg_index`: one row per index.
pub(super) fn index_rows(r: &Reader<'_>) -> Vec<Vec<Datum>> {
    let mut rows = Vec::new();
    for rel in r.relations() {
        let Some(def) = &rel.index else { continue };
        let table = r.relation(def.table);
        let col_type =
            |c: usize| table.and_then(|t| t.columns.get(c)).and_then(|col| types::of(SqlType::of_column(col.ty)));
        // A key part's type: its column's, or its expression's (the index's
        // own column).
        let part_type = |k: usize, c: usize| match c {
            IndexDef::EXPRESSION => rel.columns.get(k).and_then(|col| types::of(SqlType::of_column(col.ty))),
            c => col_type(c),
        };
        let collations =
            def.columns.iter().enumerate().map(|(k, &c)| {
                part_type(k, c).map_or(0, |t| if t.collatable { super::oid::DEFAULT_COLLATION } else { 0 })
            });
        let classes = def.columns.iter().enumerate().map(|(k, &c)| part_type(k, c).map_or(0, |t| t.btree_opclass));
        let exprs: Vec<&str> = def.expressions.iter().map(|e| e.sql.as_str()).collect();
        let n = def.columns.len() as i64;
        rows.push(vec![
            oid(rel.id),
            oid(def.table),
            int(n),
            int(n),
            boolean(def.unique),
            boolean(false),
            boolean(def.primary),
            boolean(false),
            boolean(def.unique),
            boolean(false),
            boolean(true),
            boolean(false),
            boolean(true),
            boolean(true),
            boolean(false),
            int2vector(&def.columns),
            oidvector(collations),
            oidvector(classes),
            text(vec!["0"; def.columns.len()].join(" ")),
            if exprs.is_empty() { NULL } else { text(exprs.join(", ")) },
            NULL,
        ]);
    }
    rows
}

/// `pg_inherits`: each partition under its parent, each index of a
/// partition under the partitioned index it belongs to.
pub(super) fn inherits_rows(r: &Reader<'_>) -> Vec<Vec<Datum>> {
    r.relations()
        .filter_map(|rel| rel.parent.or_else(|| rel.index.as_ref().and_then(|d| d.parent)).map(|p| (rel.id, p)))
        .map(|(child, parent)| vec![oid(child), oid(parent), int(1), boolean(false)])
        .collect()
}

/// `pg_partitioned_table`: each partitioned table's key.
pub(super) fn partitioned_table_rows(r: &Reader<'_>) -> Vec<Vec<Datum>> {
    r.relations()
        .filter_map(|rel| rel.partition_key.map(|k| (rel, k)))
        .map(|(rel, key)| {
            let t = rel.columns.get(key.column).and_then(|c| types::of(SqlType::of_column(c.ty)));
            let collation = t.map_or(0, |t| if t.collatable { super::oid::DEFAULT_COLLATION } else { 0 });
            vec![
                oid(rel.id),
                ch(match key.strategy {
                    PartitionStrategy::Range => 'r',
                    PartitionStrategy::Hash => 'h',
                    PartitionStrategy::List => 'l',
                }),
                int(1),
                oid(0),
                int2vector(&[key.column]),
                oidvector(std::iter::once(t.map_or(0, |t| t.btree_opclass))),
                oidvector(std::iter::once(collation)),
                NULL,
            ]
        })
        .collect()
}
