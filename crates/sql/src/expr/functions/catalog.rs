//! System catalog information functions, computed from the same catalog
//! snapshot as the `pg_catalog` relations ([`crate::catalog`]):
//! `pg_get_userbyid`, `format_type`, `pg_get_indexdef`,
//! `pg_get_constraintdef`, `pg_get_expr`, `pg_get_partkeydef`,
//! `pg_table_is_visible`, `pg_type_is_visible`, `obj_description`,
//! `col_description`, `shobj_description`, `pg_encoding_to_char`,
//! `pg_is_in_recovery`, `current_schema`, `current_schemas`,
//! `pg_relation_is_publishable`, `pg_get_statisticsobjdef_columns`,
//! `pg_get_triggerdef`.

use super::def::{FuncDef, Volatility};
use crate::catalog::reg::catalog_of;
use crate::catalog::search_path::{public_visible, search_path};
use crate::catalog::{by_oid, cluster, deparse, oid as oids, types, Schema};
use crate::error::SqlError;
use crate::expr::EvalEnv;
use crate::value::{Datum, SqlType};
use turnstile_engine::catalog::RelKind;
use SqlType::{Bool, Int4, Name, Oid, Text};

/// An `oid` argument (NULLs are stripped by strictness first).
fn oid_arg(d: &Datum) -> u32 {
    match d {
        Datum::Int(v) => u32::try_from(*v).unwrap_or(0),
        _ => 0,
    }
}

fn text_or_null(s: Option<String>) -> Datum {
    s.map_or(Datum::Null, Datum::Text)
}

/// `pg_get_userbyid(role)`: the role's name, or `unknown (OID=n)`.
pub static GET_USERBYID: FuncDef = FuncDef::fixed("pg_get_userbyid", &[Oid], Name, |a, _| {
    let id = oid_arg(&a[0]);
    Ok(Datum::Text(cluster::role_name(id).map_or_else(|| format!("unknown (OID={id})"), str::to_owned)))
})
.volatility(Volatility::Stable);

/// `format_type(type, typmod)`: not strict — a NULL modifier is none; a
/// NULL type is NULL.
pub static FORMAT_TYPE: FuncDef = FuncDef::fixed("format_type", &[Oid, Int4], Text, |a, _| {
    if a[0].is_null() {
        return Ok(Datum::Null);
    }
    let typmod = match a[1] {
        Datum::Int(m) => i32::try_from(m).unwrap_or(-1),
        _ => -1,
    };
    Ok(Datum::Text(types::format_type(oid_arg(&a[0]), typmod)))
})
.called_on_null()
.volatility(Volatility::Stable);

/// `pg_get_indexdef(index [, column, pretty])`.
pub static GET_INDEXDEF: FuncDef = FuncDef::fixed("pg_get_indexdef", &[Oid, Int4, Bool], Text, get_indexdef)
    .required(1)
    .volatility(Volatility::Stable);

fn get_indexdef(a: &[Datum], env: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    let (cat, db) = catalog_of(&*env.services)?;
    let column = match a.get(1) {
        Some(Datum::Int(c)) => usize::try_from(*c).unwrap_or(0),
        _ => 0,
    };
    let index = cat.relations.get(&oid_arg(&a[0])).filter(|r| r.db == db);
    // PostgreSQL qualifies the table unless `pretty` asks for names as the
    // search path shows them (`PRETTYFLAG_SCHEMA`).
    let pretty = matches!(a.get(2), Some(Datum::Bool(true)));
    let schema = if pretty && public_visible(&*env.services) { "" } else { "public." };
    Ok(text_or_null(index.and_then(|ix| deparse::index_def(&cat, ix, column, schema, pretty))))
}

/// `pg_get_constraintdef(constraint [, pretty])`.
pub static GET_CONSTRAINTDEF: FuncDef = FuncDef::fixed("pg_get_constraintdef", &[Oid, Bool], Text, |a, env| {
    let (cat, db) = catalog_of(&*env.services)?;
    let id = oids::constraint_index(oid_arg(&a[0]));
    let index = id.and_then(|i| cat.relations.get(&i)).filter(|r| r.db == db);
    let key = id.and_then(|i| cat.foreign_keys.get(&i)).filter(|k| k.db == db);
    Ok(text_or_null(match (index, key) {
        (Some(ix), _) => deparse::constraint_def(&cat, ix),
        (None, Some(k)) => {
            deparse::foreign_key_def(&cat, k, if public_visible(&*env.services) { "" } else { "public." })
        }
        (None, None) => None,
    }))
})
.required(1)
.volatility(Volatility::Stable);

/// `pg_get_expr(node tree, relation [, pretty])`: turnstile's node-tree
/// columns hold the expression's SQL already ([`crate::catalog::datum`]).
pub static GET_EXPR: FuncDef =
    FuncDef::fixed("pg_get_expr", &[Text, Oid, Bool], Text, |a, _| Ok(a[0].clone())).required(2);

/// `pg_get_partkeydef(table)`: `RANGE (id)`; NULL for a table that is not
/// partitioned.
pub static GET_PARTKEYDEF: FuncDef = FuncDef::fixed("pg_get_partkeydef", &[Oid], Text, |a, env| {
    let (cat, db) = catalog_of(&*env.services)?;
    let rel = cat.relations.get(&oid_arg(&a[0])).filter(|r| r.db == db);
    Ok(text_or_null(rel.and_then(|r| r.partition_key.map(|k| deparse::partition_key(r, &k)))))
})
.volatility(Volatility::Stable);

/// `pg_table_is_visible(relation)`: whether its schema is on the search
/// path (`pg_catalog`, `public`); NULL for no such relation.
pub static TABLE_IS_VISIBLE: FuncDef = FuncDef::fixed("pg_table_is_visible", &[Oid], Bool, |a, env| {
    let id = oid_arg(&a[0]);
    let (cat, db) = catalog_of(&*env.services)?;
    // A relation or sequence of the database (all in `public`).
    if cat.relations.get(&id).is_some_and(|r| r.db == db) || env.services.shared().sequences.by_oid(db, id).is_some() {
        return Ok(Datum::Bool(true));
    }
    Ok(match by_oid(id) {
        Some(r) => Datum::Bool(r.schema == Schema::Catalog),
        None if crate::catalog::STATUS_VIEW_OIDS.iter().any(|v| v.0 == id) => Datum::Bool(true),
        None => Datum::Null,
    })
})
.volatility(Volatility::Stable);

/// `pg_type_is_visible(type)`: every type turnstile has is in
/// `pg_catalog`; NULL for no such type.
pub static TYPE_IS_VISIBLE: FuncDef = FuncDef::fixed("pg_type_is_visible", &[Oid], Bool, |a, _| {
    let id = oid_arg(&a[0]);
    Ok(if types::type_name(id).is_some() { Datum::Bool(true) } else { Datum::Null })
})
.volatility(Volatility::Stable);

/// `obj_description(object [, catalog])`: its `pg_description` text
/// (turnstile has no `COMMENT ON`: only what `initdb` describes, the
/// schemas); the catalog is named (`'pg_namespace'`), any when omitted.
pub static OBJ_DESCRIPTION: FuncDef = FuncDef::fixed("obj_description", &[Oid, Name], Text, |a, _| {
    let object = oid_arg(&a[0]);
    let found = match a.get(1) {
        Some(Datum::Text(catalog)) => crate::catalog::lookup(Schema::Catalog, catalog)
            .and_then(|c| crate::catalog::schema::description(object, c.oid, 0)),
        _ => crate::catalog::schema::DESCRIPTIONS.iter().find(|d| d.0 == object && d.2 == 0).map(|d| d.3),
    };
    Ok(text_or_null(found.map(str::to_owned)))
})
.required(1)
.volatility(Volatility::Stable);

/// `col_description(table, column)`: NULL, as `obj_description`.
pub static COL_DESCRIPTION: FuncDef =
    FuncDef::fixed("col_description", &[Oid, Int4], Text, |_, _| Ok(Datum::Null)).volatility(Volatility::Stable);

/// `shobj_description(object, catalog)`: NULL (`pg_shdescription` is empty).
pub static SHOBJ_DESCRIPTION: FuncDef =
    FuncDef::fixed("shobj_description", &[Oid, Name], Text, |_, _| Ok(Datum::Null)).volatility(Volatility::Stable);

/// The encodings `pg_encoding_to_char` names (PostgreSQL's `pg_enc`
/// numbers of those turnstile speaks).
const ENCODINGS: &[(i64, &str)] = &[(0, "SQL_ASCII"), (6, "UTF8"), (8, "LATIN1"), (24, "WIN1252")];

/// `pg_encoding_to_char(encoding)`: its name, empty for an unknown number.
pub static ENCODING_TO_CHAR: FuncDef = FuncDef::fixed("pg_encoding_to_char", &[Int4], Name, |a, _| {
    let n = if let Datum::Int(n) = a[0] { n } else { -1 };
    Ok(Datum::Text(ENCODINGS.iter().find(|e| e.0 == n).map_or("", |e| e.1).to_owned()))
})
.volatility(Volatility::Stable);

/// `pg_is_in_recovery()`: a turnstile server is never a standby.
pub static IS_IN_RECOVERY: FuncDef =
    FuncDef::fixed("pg_is_in_recovery", &[], Bool, |_, _| Ok(Datum::Bool(false))).volatility(Volatility::Volatile);

/// `current_schema()`: the first schema of the search path that exists
/// (NULL when none does).
pub static CURRENT_SCHEMA: FuncDef = FuncDef::fixed("current_schema", &[], Name, |_, env| {
    Ok(text_or_null(search_path(&*env.services).first().map(|s| (*s).to_owned())))
})
.volatility(Volatility::Stable);

/// `current_schemas(include_implicit)`: the search path's schemas that
/// exist as a `name[]`, with `pg_catalog` first when implicit schemas are
/// asked for and the path does not name it. pgjdbc's `getSchemas` reads
/// `(current_schemas(true))[1]`.
pub static CURRENT_SCHEMAS: FuncDef = FuncDef::fixed("current_schemas", &[Bool], SqlType::Array(&Name), |a, env| {
    let mut path = search_path(&*env.services);
    if matches!(a[0], Datum::Bool(true)) && !path.contains(&"pg_catalog") {
        path.insert(0, "pg_catalog");
    }
    Ok(Datum::Array(path.into_iter().map(|s| Datum::Text(s.to_owned())).collect()))
})
.volatility(Volatility::Stable);

/// `pg_relation_is_publishable(relation)`: whether it is a user table
/// (ordinary or partitioned); NULL for no such relation.
pub static RELATION_IS_PUBLISHABLE: FuncDef = FuncDef::fixed("pg_relation_is_publishable", &[Oid], Bool, |a, env| {
    let (cat, db) = catalog_of(&*env.services)?;
    Ok(match cat.relations.get(&oid_arg(&a[0])).filter(|r| r.db == db) {
        Some(r) => Datum::Bool(matches!(r.kind, RelKind::Table | RelKind::PartitionedTable)),
        None => Datum::Null,
    })
})
.volatility(Volatility::Stable);

/// `pg_get_statisticsobjdef_columns(statistics object)`: turnstile has no
/// extended statistics (`pg_statistic_ext` is empty), so NULL.
pub static STATISTICSOBJDEF_COLUMNS: FuncDef =
    FuncDef::fixed("pg_get_statisticsobjdef_columns", &[Oid], Text, |_, _| Ok(Datum::Null))
        .volatility(Volatility::Stable);

/// `pg_get_triggerdef(trigger [, pretty])`: turnstile has no triggers
/// (`pg_trigger` is empty), and PostgreSQL answers NULL for an OID that is
/// no trigger.
pub static GET_TRIGGERDEF: FuncDef = FuncDef::fixed("pg_get_triggerdef", &[Oid, Bool], Text, |_, _| Ok(Datum::Null))
    .required(1)
    .volatility(Volatility::Stable);
