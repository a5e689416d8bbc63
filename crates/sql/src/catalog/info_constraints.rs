//! `information_schema.table_constraints` and `key_column_usage`: the
//! PRIMARY KEY and UNIQUE constraints of `pg_constraint`, and — as
//! PostgreSQL 15 lists them — one CHECK constraint per NOT NULL column,
//! named `<namespace oid>_<table oid>_<column number>_not_null`.

use super::constraint::constraint_indexes;
use super::datum::{int, text, yes_no, NULL};
use super::oid::PUBLIC_NAMESPACE;
use super::relation::Reader;
use crate::value::{Datum, SqlType};
use turnstile_engine::catalog::RelKind;
use SqlType::*;

/// `information_schema.table_constraints`'s columns.
pub(super) const TABLE_CONSTRAINTS: &[(&str, SqlType)] = &[
    ("constraint_catalog", Name),
    ("constraint_schema", Name),
    ("constraint_name", Name),
    ("table_catalog", Name),
    ("table_schema", Name),
    ("table_name", Name),
    ("constraint_type", Varchar(0)),
    ("is_deferrable", Varchar(3)),
    ("initially_deferred", Varchar(3)),
    ("enforced", Varchar(3)),
    ("nulls_distinct", Varchar(3)),
];

/// `information_schema.key_column_usage`'s columns.
pub(super) const KEY_COLUMN_USAGE: &[(&str, SqlType)] = &[
    ("constraint_catalog", Name),
    ("constraint_schema", Name),
    ("constraint_name", Name),
    ("table_catalog", Name),
    ("table_schema", Name),
    ("table_name", Name),
    ("column_name", Name),
    ("ordinal_position", Int4),
    ("position_in_unique_constraint", Int4),
];

fn constraint_row(r: &Reader<'_>, name: String, table: &str, kind: &str) -> Vec<Datum> {
    let unique = kind != "CHECK";
    vec![
        text(r.database()),
        text("public"),
        text(name),
        text(r.database()),
        text("public"),
        text(table),
        text(kind),
        yes_no(false),
        yes_no(false),
        yes_no(true),
        if unique { yes_no(true) } else { NULL },
    ]
}

/// `information_schema.table_constraints`.
pub(super) fn table_constraints_rows(r: &Reader<'_>) -> Vec<Vec<Datum>> {
    let mut rows = Vec::new();
    for (index, def) in constraint_indexes(r) {
        let Some(table) = r.relation(def.table) else { continue };
        let kind = if def.primary { "PRIMARY KEY" } else { "UNIQUE" };
        rows.push(constraint_row(r, index.name.clone(), &table.name, kind));
    }
    for rel in r.relations().filter(|x| matches!(x.kind, RelKind::Table | RelKind::PartitionedTable)) {
        for (i, _) in rel.columns.iter().enumerate().filter(|(_, c)| c.not_null) {
            let name = format!("{PUBLIC_NAMESPACE}_{}_{}_not_null", rel.id, i + 1);
            rows.push(constraint_row(r, name, &rel.name, "CHECK"));
        }
    }
    rows
}

/// `information_schema.key_column_usage`: each key column of each PRIMARY
/// KEY and UNIQUE constraint.
pub(super) fn key_column_usage_rows(r: &Reader<'_>) -> Vec<Vec<Datum>> {
    let mut rows = Vec::new();
    for (index, def) in constraint_indexes(r) {
        let Some(table) = r.relation(def.table) else { continue };
        for (pos, name) in table.column_names(&def.columns).into_iter().enumerate() {
            rows.push(vec![
                text(r.database()),
                text("public"),
                text(index.name.clone()),
                text(r.database()),
                text("public"),
                text(table.name.clone()),
                text(name),
                int(pos as i64 + 1),
                NULL,
            ]);
        }
    }
    rows
}
