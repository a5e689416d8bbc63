//! `information_schema.schemata`, `tables` and `columns`, as PostgreSQL 15
//! computes them for a superuser (who sees every object): the user's
//! relations in `public`, then the system relations in their schemas.
//! An identity column shows no `column_default` and its sequence's
//! definition in the `identity_*` columns, as in PostgreSQL.

use super::datum::{int, text, yes_no, NULL};
use super::deparse::default_expr;
use super::relation::Reader;
use super::schema::namespace_name;
use super::search_path::public_visible;
use super::types::{self, format_type};
use crate::sequence::{Identity, SeqDef};
use crate::value::{Datum, SqlType};
use turnstile_engine::catalog::RelKind;
use SqlType::*;

/// `information_schema.schemata`'s columns.
pub(super) const SCHEMATA: &[(&str, SqlType)] = &[
    ("catalog_name", Name),
    ("schema_name", Name),
    ("schema_owner", Name),
    ("default_character_set_catalog", Name),
    ("default_character_set_schema", Name),
    ("default_character_set_name", Name),
    ("sql_path", Varchar(0)),
];

/// `information_schema.tables`'s columns.
pub(super) const TABLES: &[(&str, SqlType)] = &[
    ("table_catalog", Name),
    ("table_schema", Name),
    ("table_name", Name),
    ("table_type", Varchar(0)),
    ("self_referencing_column_name", Name),
    ("reference_generation", Varchar(0)),
    ("user_defined_type_catalog", Name),
    ("user_defined_type_schema", Name),
    ("user_defined_type_name", Name),
    ("is_insertable_into", Varchar(3)),
    ("is_typed", Varchar(3)),
    ("commit_action", Varchar(0)),
];

/// `information_schema.columns`'s columns.
pub(super) const COLUMNS: &[(&str, SqlType)] = &[
    ("table_catalog", Name),
    ("table_schema", Name),
    ("table_name", Name),
    ("column_name", Name),
    ("ordinal_position", Int4),
    ("column_default", Varchar(0)),
    ("is_nullable", Varchar(3)),
    ("data_type", Varchar(0)),
    ("character_maximum_length", Int4),
    ("character_octet_length", Int4),
    ("numeric_precision", Int4),
    ("numeric_precision_radix", Int4),
    ("numeric_scale", Int4),
    ("datetime_precision", Int4),
    ("interval_type", Varchar(0)),
    ("interval_precision", Int4),
    ("character_set_catalog", Name),
    ("character_set_schema", Name),
    ("character_set_name", Name),
    ("collation_catalog", Name),
    ("collation_schema", Name),
    ("collation_name", Name),
    ("domain_catalog", Name),
    ("domain_schema", Name),
    ("domain_name", Name),
    ("udt_catalog", Name),
    ("udt_schema", Name),
    ("udt_name", Name),
    ("scope_catalog", Name),
    ("scope_schema", Name),
    ("scope_name", Name),
    ("maximum_cardinality", Int4),
    ("dtd_identifier", Name),
    ("is_self_referencing", Varchar(3)),
    ("is_identity", Varchar(3)),
    ("identity_generation", Varchar(0)),
    ("identity_start", Varchar(0)),
    ("identity_increment", Varchar(0)),
    ("identity_maximum", Varchar(0)),
    ("identity_minimum", Varchar(0)),
    ("identity_cycle", Varchar(3)),
    ("is_generated", Varchar(0)),
    ("generation_expression", Varchar(0)),
    ("is_updatable", Varchar(3)),
];

/// `information_schema.schemata`.
pub(super) fn schemata_rows(r: &Reader<'_>) -> Vec<Vec<Datum>> {
    [
        super::oid::CATALOG_NAMESPACE,
        super::oid::TOAST_NAMESPACE,
        super::oid::PUBLIC_NAMESPACE,
        super::oid::INFORMATION_SCHEMA_NAMESPACE,
    ]
    .into_iter()
    .map(|n| {
        let owner = if n == super::oid::PUBLIC_NAMESPACE { "pg_database_owner" } else { "postgres" };
        vec![text(r.database()), text(namespace_name(n).unwrap_or_default()), text(owner), NULL, NULL, NULL, NULL]
    })
    .collect()
}

fn table_row(r: &Reader<'_>, schema: &str, name: &str, view: bool) -> Vec<Datum> {
    vec![
        text(r.database()),
        text(schema),
        text(name),
        text(if view { "VIEW" } else { "BASE TABLE" }),
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        yes_no(!view),
        yes_no(false),
        NULL,
    ]
}

/// `information_schema.tables`: tables, partitioned tables and views.
pub(super) fn tables_rows(r: &Reader<'_>) -> Vec<Vec<Datum>> {
    let mut rows: Vec<Vec<Datum>> = r
        .relations()
        .filter(|x| matches!(x.kind, RelKind::Table | RelKind::PartitionedTable))
        .map(|x| table_row(r, "public", &x.name, false))
        .collect();
    rows.extend(r.system.iter().map(|s| table_row(r, s.schema.name(), s.name, s.kind == 'v')));
    rows
}

/// A column as `information_schema.columns` describes it.
struct ColumnInfo<'a> {
    schema: &'a str,
    table: &'a str,
    name: &'a str,
    position: usize,
    ty: SqlType,
    not_null: bool,
    default: Option<String>,
    updatable: bool,
    /// An identity column's generation (`ALWAYS`, `BY DEFAULT`) and its
    /// sequence's definition.
    identity: Option<(&'static str, SeqDef)>,
}

/// `data_type`: the SQL name without modifiers, `ARRAY` for arrays.
fn data_type(ty: SqlType) -> String {
    format_type(ty.oid(), -1)
}

/// (character_maximum_length, character_octet_length) of a type.
fn char_lengths(ty: SqlType) -> (Datum, Datum) {
    // PostgreSQL counts 4 bytes per character in a UTF8 database and
    // 1 GB for an unlimited string.
    const UNLIMITED_OCTETS: i64 = 1_073_741_824;
    match ty {
        Varchar(n) | Bpchar(n) if n > 0 => (int(n.into()), int(i64::from(n) * 4)),
        Varchar(_) | Bpchar(_) | Text => (NULL, int(UNLIMITED_OCTETS)),
        _ => (NULL, NULL),
    }
}

/// (numeric_precision, numeric_precision_radix, numeric_scale).
fn numeric_info(ty: SqlType) -> (Datum, Datum, Datum) {
    match ty {
        Int2 => (int(16), int(2), int(0)),
        Int4 => (int(32), int(2), int(0)),
        Int8 => (int(64), int(2), int(0)),
        Float4 => (int(24), int(2), NULL),
        Float8 => (int(53), int(2), NULL),
        Numeric(Some((p, s))) => (int(p.into()), int(10), int(s.into())),
        Numeric(None) => (NULL, int(10), NULL),
        _ => (NULL, NULL, NULL),
    }
}

fn column_row(r: &Reader<'_>, c: &ColumnInfo<'_>) -> Vec<Datum> {
    let (max_len, octets) = char_lengths(c.ty);
    let (precision, radix, scale) = numeric_info(c.ty);
    let datetime = match c.ty {
        Date => int(0),
        Timestamp | TimestampTz => int(6),
        _ => NULL,
    };
    let udt = types::type_name(c.ty.oid()).unwrap_or_default();
    let id = |f: fn(&(&str, SeqDef)) -> String| c.identity.as_ref().map_or(NULL, |i| text(f(i)));
    vec![
        text(r.database()),
        text(c.schema),
        text(c.table),
        text(c.name),
        int(c.position as i64),
        c.default.clone().map_or(NULL, text),
        yes_no(!c.not_null),
        text(data_type(c.ty)),
        max_len,
        octets,
        precision,
        radix,
        scale,
        datetime,
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        text(r.database()),
        text("pg_catalog"),
        text(udt),
        NULL,
        NULL,
        NULL,
        NULL,
        text(c.position.to_string()),
        yes_no(false),
        yes_no(c.identity.is_some()),
        id(|(g, _)| (*g).to_owned()),
        id(|(_, d)| d.start.to_string()),
        id(|(_, d)| d.increment.to_string()),
        id(|(_, d)| d.max.to_string()),
        id(|(_, d)| d.min.to_string()),
        yes_no(c.identity.as_ref().is_some_and(|(_, d)| d.cycle)),
        text("NEVER"),
        NULL,
        yes_no(c.updatable),
    ]
}

/// `information_schema.columns`.
pub(super) fn columns_rows(r: &Reader<'_>) -> Vec<Vec<Datum>> {
    let mut rows = Vec::new();
    let schema = if public_visible(r.services) { "" } else { "public." };
    for rel in r.relations().filter(|x| matches!(x.kind, RelKind::Table | RelKind::PartitionedTable)) {
        let owned = r.services.shared().sequences.owned_by(r.db, &rel.name);
        for (i, col) in rel.columns.iter().enumerate() {
            let seq = owned.iter().find(|s| s.owner.as_ref().is_some_and(|o| o.column == col.name));
            let identity = seq.and_then(|s| match s.owner.as_ref().map(|o| o.identity) {
                Some(Identity::Always) => Some(("ALWAYS", s.def.clone())),
                Some(Identity::ByDefault) => Some(("BY DEFAULT", s.def.clone())),
                _ => None,
            });
            let info = ColumnInfo {
                schema: "public",
                table: &rel.name,
                name: &col.name,
                position: i + 1,
                ty: SqlType::of_column(col.ty),
                not_null: col.not_null,
                default: col.default.as_deref().filter(|_| identity.is_none()).map(|d| default_expr(d, col.ty, schema)),
                updatable: true,
                identity,
            };
            rows.push(column_row(r, &info));
        }
    }
    for s in r.system {
        for (i, (name, ty)) in s.columns.iter().enumerate() {
            let info = ColumnInfo {
                schema: s.schema.name(),
                table: s.name,
                name,
                position: i + 1,
                ty: *ty,
                not_null: false,
                default: None,
                updatable: s.kind == 'r',
                identity: None,
            };
            rows.push(column_row(r, &info));
        }
    }
    rows
}
