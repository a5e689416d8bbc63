//! `pg_constraint`: the PRIMARY KEY and UNIQUE constraints, one per
//! unique index (turnstile builds each such constraint as a unique
//! index, and names the constraint after it, as PostgreSQL does). A
//! partition's constraint points at its parent's (`conparentid`). NOT
//! NULL is a column property (`attnotnull`), not a constraint row, as in
//! PostgreSQL 15.

use super::datum::{boolean, ch, int, oid, text, INT2_ARRAY, NULL, OID_ARRAY};
use super::oid::{constraint_oid, PUBLIC_NAMESPACE};
use super::relation::Reader;
use crate::value::{Datum, SqlType};
use turnstile_engine::catalog::{IndexDef, Relation};
use SqlType::*;

/// `pg_catalog.pg_constraint`'s columns.
pub(super) const CONSTRAINT: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("conname", Name),
    ("connamespace", Oid),
    ("contype", QChar),
    ("condeferrable", Bool),
    ("condeferred", Bool),
    ("convalidated", Bool),
    ("conrelid", Oid),
    ("contypid", Oid),
    ("conindid", Oid),
    ("conparentid", Oid),
    ("confrelid", Oid),
    ("confupdtype", QChar),
    ("confdeltype", QChar),
    ("confmatchtype", QChar),
    ("conislocal", Bool),
    ("coninhcount", Int4),
    ("connoinherit", Bool),
    ("conkey", INT2_ARRAY),         /* _int2 */
    ("confkey", INT2_ARRAY),        /* _int2 */
    ("conpfeqop", OID_ARRAY),       /* _oid */
    ("conppeqop", OID_ARRAY),       /* _oid */
    ("conffeqop", OID_ARRAY),       /* _oid */
    ("confdelsetcols", INT2_ARRAY), /* _int2 */
    ("conexclop", OID_ARRAY),       /* _oid */
    ("conbin", Text),               /* pg_node_tree */
];

/// The indexes of the session's database that implement a constraint,
/// with their definitions.
pub(super) fn constraint_indexes<'a>(r: &'a Reader<'_>) -> impl Iterator<Item = (&'a Relation, &'a IndexDef)> + 'a {
    // An index on expressions is never a constraint's (PostgreSQL's
    // `UNIQUE` constraints take column names only).
    r.relations().filter_map(|x| {
        x.index.as_ref().filter(|d| (d.unique || d.primary) && d.expressions.is_empty()).map(|d| (x, d))
    })
}

/// An `int2[]` (`{1,2}`) of zero-based column numbers.
pub(super) fn int2_array(columns: &[usize]) -> Datum {
    Datum::Array(columns.iter().map(|c| int(*c as i64 + 1)).collect())
}

/// `pg_constraint`.
pub(super) fn constraint_rows(r: &Reader<'_>) -> Vec<Vec<Datum>> {
    let mut rows = Vec::new();
    for (index, def) in constraint_indexes(r) {
        let Some(id) = constraint_oid(index.id) else { continue };
        let parent = def.parent.and_then(constraint_oid);
        rows.push(vec![
            oid(id),
            text(index.name.clone()),
            oid(PUBLIC_NAMESPACE),
            ch(if def.primary { 'p' } else { 'u' }),
            boolean(false),
            boolean(false),
            boolean(true),
            oid(def.table),
            oid(0),
            oid(index.id),
            oid(parent.unwrap_or(0)),
            oid(0),
            ch(' '),
            ch(' '),
            ch(' '),
            boolean(parent.is_none()),
            int(parent.is_some().into()),
            boolean(false),
            int2_array(&def.columns),
            NULL,
            NULL,
            NULL,
            NULL,
            NULL,
            NULL,
            NULL,
        ]);
    }
    rows
}
