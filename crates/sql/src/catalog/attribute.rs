//! Columns and their defaults: `pg_attribute` (user relations with their
//! system columns, indexes, and the system relations' own columns) and
//! `pg_attrdef` (each column DEFAULT, its expression in `adbin` as
//! [`default_expr`] prints it).
//!
//! An identity column (`GENERATED … AS IDENTITY`) takes its values from
//! its sequence through a `nextval` default in turnstile's catalog, but
//! PostgreSQL keeps no default for it: it has `attidentity` `a` or `d`,
//! `atthasdef` false and no `pg_attrdef` row, and so does it here (psql
//! prints `generated always as identity`; pg_dump adds the identity with
//! its sequence, `ALTER TABLE … ADD GENERATED … AS IDENTITY`).

use super::datum::{boolean, ch, int, oid, text, ACL_ARRAY, NULL, TEXT_ARRAY};
use super::deparse::default_expr;
use super::oid::{attrdef_oid, C_COLLATION, DEFAULT_COLLATION};
use super::relation::Reader;
use super::search_path::public_visible;
use super::types::{self, BuiltinType};
use crate::sequence::{Identity, Sequence};
use crate::value::{Datum, SqlType};
use std::sync::Arc;
use turnstile_engine::catalog::RelKind;
use SqlType::*;

/// `pg_catalog.pg_attribute`'s columns.
pub(super) const ATTRIBUTE: &[(&str, SqlType)] = &[
    ("attrelid", Oid),
    ("attname", Name),
    ("atttypid", Oid),
    ("attstattarget", Int4),
    ("attlen", Int2),
    ("attnum", Int2),
    ("attndims", Int4),
    ("attcacheoff", Int4),
    ("atttypmod", Int4),
    ("attbyval", Bool),
    ("attalign", QChar),
    ("attstorage", QChar),
    ("attcompression", QChar),
    ("attnotnull", Bool),
    ("atthasdef", Bool),
    ("atthasmissing", Bool),
    ("attidentity", QChar),
    ("attgenerated", QChar),
    ("attisdropped", Bool),
    ("attislocal", Bool),
    ("attinhcount", Int4),
    ("attcollation", Oid),
    ("attacl", ACL_ARRAY),         /* _aclitem */
    ("attoptions", TEXT_ARRAY),    /* _text */
    ("attfdwoptions", TEXT_ARRAY), /* _text */
    ("attmissingval", Text),       /* anyarray */
];

/// `pg_catalog.pg_attrdef`'s columns.
pub(super) const ATTRDEF: &[(&str, SqlType)] =
    &[("oid", Oid), ("adrelid", Oid), ("adnum", Int2), ("adbin", Text) /* pg_node_tree */];

/// The system columns every table has: name, number, type OID.
const SYSTEM_COLUMNS: &[(&str, i64, u32)] =
    &[("tableoid", -6, 26), ("cmax", -5, 29), ("xmax", -4, 28), ("cmin", -3, 29), ("xmin", -2, 28), ("ctid", -1, 27)];

/// One `pg_attribute` row.
struct Attr<'a> {
    rel: u32,
    name: &'a str,
    num: i64,
    ty: Option<&'static BuiltinType>,
    type_oid: u32,
    typmod: i32,
    not_null: bool,
    has_default: bool,
    inherited: bool,
    /// `attidentity`: `a` (ALWAYS), `d` (BY DEFAULT) or empty.
    identity: &'static str,
}

impl Attr<'_> {
    fn row(&self) -> Vec<Datum> {
        let t = self.ty;
        let collation = match t {
            Some(t) if t.collatable && t.oid == 19 => C_COLLATION,
            Some(t) if t.collatable => DEFAULT_COLLATION,
            _ => 0,
        };
        vec![
            oid(self.rel),
            text(self.name),
            oid(self.type_oid),
            int(if self.num > 0 { -1 } else { 0 }),
            int(t.map_or(-1, |t| t.len.into())),
            int(self.num),
            int(0),
            int(-1),
            int(self.typmod.into()),
            boolean(t.is_some_and(|t| t.by_value)),
            ch(t.map_or('i', |t| t.align)),
            ch(t.map_or('p', |t| t.storage)),
            text(""),
            boolean(self.not_null),
            boolean(self.has_default),
            boolean(false),
            text(self.identity),
            text(""),
            boolean(false),
            boolean(!self.inherited),
            int(self.inherited.into()),
            oid(collation),
            NULL,
            NULL,
            NULL,
            NULL,
        ]
    }
}

/// The identity of column `column` (`attidentity`): `a` (ALWAYS), `d`
/// (BY DEFAULT) or empty, from the sequences `owned` by its table.
fn identity_of(owned: &[Arc<Sequence>], column: &str) -> &'static str {
    let owner = owned.iter().filter_map(|s| s.owner.as_ref()).find(|o| o.column == column);
    match owner.map(|o| o.identity) {
        Some(Identity::Always) => "a",
        Some(Identity::ByDefault) => "d",
        Some(Identity::Serial) | None => "",
    }
}

/// `pg_attribute`.
pub(super) fn attribute_rows(r: &Reader<'_>) -> Vec<Vec<Datum>> {
    let mut rows = Vec::new();
    for rel in r.relations() {
        let table = matches!(rel.kind, RelKind::Table | RelKind::PartitionedTable);
        let owned = if table { r.services.shared().sequences.owned_by(r.db, &rel.name) } else { Vec::new() };
        let identity = |column: &str| identity_of(&owned, column);
        for (i, c) in rel.columns.iter().enumerate() {
            let st = SqlType::of_column(c.ty);
            rows.push(
                Attr {
                    rel: rel.id,
                    name: &c.name,
                    num: i as i64 + 1,
                    ty: types::of(st),
                    type_oid: st.oid(),
                    typmod: st.modifier(),
                    not_null: table && c.not_null,
                    has_default: table && c.default.is_some() && identity(&c.name).is_empty(),
                    inherited: table && rel.parent.is_some(),
                    identity: identity(&c.name),
                }
                .row(),
            );
        }
        if table {
            for &(name, num, type_oid) in SYSTEM_COLUMNS {
                let ty = types::builtin(type_oid);
                let a = Attr {
                    rel: rel.id,
                    name,
                    num,
                    ty,
                    type_oid,
                    typmod: -1,
                    not_null: true,
                    has_default: false,
                    inherited: false,
                    identity: "",
                };
                rows.push(a.row());
            }
        }
    }
    for s in r.system {
        for (i, (name, st)) in s.columns.iter().enumerate() {
            let a = Attr {
                rel: s.oid,
                name,
                num: i as i64 + 1,
                ty: types::of(*st),
                type_oid: st.oid(),
                typmod: st.modifier(),
                not_null: false,
                has_default: false,
                inherited: false,
                identity: "",
            };
            rows.push(a.row());
        }
    }
    rows
}

/// `pg_attrdef`: one row per column DEFAULT of a table.
pub(super) fn attrdef_rows(r: &Reader<'_>) -> Vec<Vec<Datum>> {
    let mut rows = Vec::new();
    let schema = if public_visible(r.services) { "" } else { "public." };
    for rel in r.relations().filter(|x| matches!(x.kind, RelKind::Table | RelKind::PartitionedTable)) {
        let owned = r.services.shared().sequences.owned_by(r.db, &rel.name);
        for (i, c) in rel.columns.iter().enumerate() {
            let Some(d) = &c.default else { continue };
            if !identity_of(&owned, &c.name).is_empty() {
                continue;
            }
            let Some(id) = attrdef_oid(rel.id, i as u32 + 1) else { continue };
            rows.push(vec![oid(id), oid(rel.id), int(i as i64 + 1), text(default_expr(d, c.ty, schema))]);
        }
    }
    rows
}
