//! `pg_settings` (the session's settings and the server's knobs, as `SHOW`
//! prints them) and `pg_proc` (turnstile's functions, one row per name
//! a call can use, from the function registry, and the access methods'
//! handlers).

use super::datum::{boolean, ch, int, oid, oidvector, text, ACL_ARRAY, CHAR_ARRAY, NULL, OID_ARRAY, TEXT_ARRAY};
use super::oid::{CATALOG_NAMESPACE, INTERNAL_LANGUAGE, PROC_OID_BASE, SUPERUSER};
use super::relation::Reader;
use super::schema::{AmHandler, ACCESS_METHODS};
use crate::expr::functions::def::{FuncDef, Nulls, Signature, Volatility};
use crate::value::{Datum, SqlType};
use SqlType::*;

/// `pg_catalog.pg_settings`'s columns.
pub(super) const SETTINGS: &[(&str, SqlType)] = &[
    ("name", Text),
    ("setting", Text),
    ("unit", Text),
    ("category", Text),
    ("short_desc", Text),
    ("extra_desc", Text),
    ("context", Text),
    ("vartype", Text),
    ("source", Text),
    ("min_val", Text),
    ("max_val", Text),
    ("enumvals", TEXT_ARRAY), /* _text */
    ("boot_val", Text),
    ("reset_val", Text),
    ("sourcefile", Text),
    ("sourceline", Int4),
    ("pending_restart", Bool),
];

/// `pg_catalog.pg_proc`'s columns.
pub(super) const PROC: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("proname", Name),
    ("pronamespace", Oid),
    ("proowner", Oid),
    ("prolang", Oid),
    ("procost", Float4),
    ("prorows", Float4),
    ("provariadic", Oid),
    ("prosupport", Text),
    ("prokind", QChar),
    ("prosecdef", Bool),
    ("proleakproof", Bool),
    ("proisstrict", Bool),
    ("proretset", Bool),
    ("provolatile", QChar),
    ("proparallel", QChar),
    ("pronargs", Int2),
    ("pronargdefaults", Int2),
    ("prorettype", Oid),
    ("proargtypes", Text),         /* oidvector */
    ("proallargtypes", OID_ARRAY), /* _oid */
    ("proargmodes", CHAR_ARRAY),   /* _char */
    ("proargnames", TEXT_ARRAY),   /* _text */
    ("proargdefaults", Text),      /* pg_node_tree */
    ("protrftypes", OID_ARRAY),    /* _oid */
    ("prosrc", Text),
    ("probin", Text),
    ("prosqlbody", Text),      /* pg_node_tree */
    ("proconfig", TEXT_ARRAY), /* _text */
    ("proacl", ACL_ARRAY),     /* _aclitem */
];

/// `pg_settings`: one row per setting, in name order.
pub(super) fn settings_rows(r: &Reader<'_>) -> Vec<Vec<Datum>> {
    let mut all = r.services.settings();
    all.sort();
    all.into_iter()
        .map(|(name, value)| {
            vec![
                text(name),
                text(value.clone()),
                NULL,
                text("Ungrouped"),
                NULL,
                NULL,
                text("user"),
                text("string"),
                text("session"),
                NULL,
                NULL,
                NULL,
                NULL,
                text(value),
                NULL,
                NULL,
                boolean(false),
            ]
        })
        .collect()
}

/// Every name of `functions` (the registry) with its definition:
/// canonical names, then aliases, in registry order; the position gives
/// the OID.
pub fn proc_entries(
    functions: &'static [&'static FuncDef],
) -> impl Iterator<Item = (u32, &'static str, &'static FuncDef)> {
    let names =
        functions.iter().flat_map(|f| std::iter::once(f.name).chain(f.aliases.iter().copied()).map(move |n| (n, *f)));
    names.enumerate().map(|(i, (n, f))| (PROC_OID_BASE + i as u32, n, f))
}

/// The polymorphic pseudo-type `anyelement`: the result of a function whose
/// own rule picks its types.
const ANYELEMENT: u32 = 2283;

fn proc_row(id: u32, name: &str, f: &FuncDef) -> Vec<Datum> {
    let (args, required, result): (&[SqlType], usize, u32) = match f.signature {
        Signature::Fixed { params, required, result } => (params, required, result.oid()),
        Signature::Custom(_) => (&[], 0, ANYELEMENT),
    };
    vec![
        oid(id),
        text(name),
        oid(CATALOG_NAMESPACE),
        oid(SUPERUSER),
        oid(INTERNAL_LANGUAGE),
        Datum::Float(1.0),
        Datum::Float(0.0),
        oid(0),
        text("-"),
        ch('f'),
        boolean(false),
        boolean(false),
        boolean(f.nulls == Nulls::Strict),
        boolean(false),
        ch(match f.volatility {
            Volatility::Immutable => 'i',
            Volatility::Stable => 's',
            Volatility::Volatile => 'v',
        }),
        ch('s'),
        int(args.len() as i64),
        int((args.len() - required) as i64),
        oid(result),
        oidvector(args.iter().map(|t| t.oid())),
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        text(f.name),
        NULL,
        NULL,
        NULL,
        NULL,
    ]
}

/// `pg_proc`: the registry's functions, then the access methods'
/// handlers.
pub(super) fn proc_rows(r: &Reader<'_>) -> Vec<Vec<Datum>> {
    let handlers = ACCESS_METHODS.iter().map(|am| handler_row(&am.3));
    proc_entries(r.services.functions()).map(|(id, name, f)| proc_row(id, name, f)).chain(handlers).collect()
}

/// The `internal` pseudo-type, an access method handler's argument.
const INTERNAL: u32 = 2281;

/// An access method's handler, as PostgreSQL 15's `pg_proc` lists it
/// (strict, volatile, one `internal` argument, written in C: its
/// `prosrc` is its name).
fn handler_row(h: &AmHandler) -> Vec<Datum> {
    let mut row = proc_row(h.oid, h.name, &HANDLER_SHAPE);
    row[16] = int(1);
    row[18] = oid(h.result);
    row[19] = oidvector(std::iter::once(INTERNAL));
    row[25] = text(h.name);
    row
}

/// The shape of an access method handler's row before its own columns are
/// filled in ([`handler_row`]): strict and volatile, as in PostgreSQL.
static HANDLER_SHAPE: FuncDef =
    FuncDef::fixed("handler", &[], SqlType::Unknown, |_, _| Ok(Datum::Null)).volatility(Volatility::Volatile);

/// The name of function `id` (the registry's, or an access method's
/// handler), for `regproc`.
pub fn proc_name(functions: &'static [&'static FuncDef], id: u32) -> Option<&'static str> {
    let handler = ACCESS_METHODS.iter().find(|am| am.3.oid == id).map(|am| am.3.name);
    handler.or_else(|| proc_entries(functions).find(|(oid, _, _)| *oid == id).map(|(_, n, _)| n))
}

/// The OID of function `name` (the registry's, or an access method's
/// handler), for `regproc`.
pub fn proc_oid(functions: &'static [&'static FuncDef], name: &str) -> Option<u32> {
    let handler = ACCESS_METHODS.iter().find(|am| am.3.name == name).map(|am| am.3.oid);
    handler.or_else(|| proc_entries(functions).find(|(_, n, _)| *n == name).map(|(id, _, _)| id))
}
