//! Per-database catalogs of built-in objects: `pg_namespace` (turnstile
//! has `pg_catalog`, `pg_toast`, `public` and `information_schema`),
//! `pg_am`, `pg_collation`, `pg_language`; and those it has no objects
//! for (`pg_extension`: no extensions); `pg_description` holds the
//! schemas' descriptions `initdb` writes (turnstile has no `COMMENT ON`)
//! and `pg_init_privs` their initial ACLs.

use super::datum::{boolean, ch, int, oid, text, text_array, ACL_ARRAY, NULL, OID_ARRAY, TEXT_ARRAY};
use super::oid::*;
use super::relation::Reader;
use crate::value::{Datum, SqlType};
use SqlType::*;

/// `pg_catalog.pg_namespace`'s columns.
pub(super) const NAMESPACE: &[(&str, SqlType)] =
    &[("oid", Oid), ("nspname", Name), ("nspowner", Oid), ("nspacl", ACL_ARRAY) /* _aclitem */];

/// `pg_catalog.pg_am`'s columns.
pub(super) const AM: &[(&str, SqlType)] =
    &[("oid", Oid), ("amname", Name), ("amhandler", Reg(crate::value::RegKind::Proc)), ("amtype", QChar)];

/// The access methods turnstile has (`heap`, `btree`, `hash`): OID, name,
/// type (`t` table, `i` index) and handler function — PostgreSQL 15's
/// OIDs and names; the handlers are listed in `pg_proc`
/// ([`super::settings`]) so that `amhandler::regproc` names them.
pub const ACCESS_METHODS: &[(u32, &str, char, AmHandler)] = &[
    (HEAP_AM, "heap", 't', AmHandler { oid: 3, name: "heap_tableam_handler", result: 269 }),
    (BTREE_AM, "btree", 'i', AmHandler { oid: 330, name: "bthandler", result: 325 }),
    (HASH_AM, "hash", 'i', AmHandler { oid: 331, name: "hashhandler", result: 325 }),
];

/// An access method's handler function (`pg_proc` row): its OID, name,
/// and result type (`table_am_handler` 269, `index_am_handler` 325); it
/// takes one `internal` argument.
pub struct AmHandler {
    /// The function's OID.
    pub oid: u32,
    /// Its name.
    pub name: &'static str,
    /// Its result type's OID.
    pub result: u32,
}

/// `pg_catalog.pg_collation`'s columns.
pub(super) const COLLATION: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("collname", Name),
    ("collnamespace", Oid),
    ("collowner", Oid),
    ("collprovider", QChar),
    ("collisdeterministic", Bool),
    ("collencoding", Int4),
    ("collcollate", Text),
    ("collctype", Text),
    ("colliculocale", Text),
    ("collversion", Text),
];

/// `pg_catalog.pg_extension`'s columns.
pub(super) const EXTENSION: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("extname", Name),
    ("extowner", Oid),
    ("extnamespace", Oid),
    ("extrelocatable", Bool),
    ("extversion", Text),
    ("extconfig", OID_ARRAY),     /* _oid */
    ("extcondition", TEXT_ARRAY), /* _text */
];

/// `pg_catalog.pg_description`'s columns.
pub(super) const DESCRIPTION: &[(&str, SqlType)] =
    &[("objoid", Oid), ("classoid", Oid), ("objsubid", Int4), ("description", Text)];

/// `pg_catalog.pg_language`'s columns.
pub(super) const LANGUAGE: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("lanname", Name),
    ("lanowner", Oid),
    ("lanispl", Bool),
    ("lanpltrusted", Bool),
    ("lanplcallfoid", Oid),
    ("laninline", Oid),
    ("lanvalidator", Oid),
    ("lanacl", ACL_ARRAY), /* _aclitem */
];

/// A namespace: OID, name, owner.
const NAMESPACES: &[(u32, &str, u32)] = &[
    (CATALOG_NAMESPACE, "pg_catalog", SUPERUSER),
    (TOAST_NAMESPACE, "pg_toast", SUPERUSER),
    (PUBLIC_NAMESPACE, "public", DATABASE_OWNER_ROLE),
    (INFORMATION_SCHEMA_NAMESPACE, "information_schema", SUPERUSER),
];

/// Each schema's ACL as `initdb` leaves it (`nspacl`, and the
/// `pg_init_privs` row of each that has one): the owner may use and
/// create, `PUBLIC` may use; `pg_toast` keeps the default (NULL).
pub fn namespace_acl(id: u32) -> Option<[String; 2]> {
    let owner = match NAMESPACES.iter().find(|n| n.0 == id && n.0 != TOAST_NAMESPACE)?.2 {
        SUPERUSER => "postgres",
        _ => "pg_database_owner",
    };
    Some([format!("{owner}=UC/{owner}"), format!("=U/{owner}")])
}

/// The descriptions `initdb` gives objects turnstile has
/// (`pg_description`: object, catalog, sub-id, text): its schemas'.
pub const DESCRIPTIONS: &[(u32, u32, i32, &str)] = &[
    (CATALOG_NAMESPACE, NAMESPACE_CLASS, 0, "system catalog schema"),
    (TOAST_NAMESPACE, NAMESPACE_CLASS, 0, "reserved schema for TOAST tables"),
    (PUBLIC_NAMESPACE, NAMESPACE_CLASS, 0, "standard public schema"),
];

/// `pg_namespace`'s OID, the catalog of a schema's description.
const NAMESPACE_CLASS: u32 = 2615;

/// The description of object `objoid` of catalog `classoid` (sub-object
/// `objsubid`), if it has one.
pub fn description(objoid: u32, classoid: u32, objsubid: i32) -> Option<&'static str> {
    DESCRIPTIONS.iter().find(|d| d.0 == objoid && d.1 == classoid && d.2 == objsubid).map(|d| d.3)
}

/// `pg_description`.
pub(super) fn description_rows(_: &Reader<'_>) -> Vec<Vec<Datum>> {
    DESCRIPTIONS.iter().map(|&(o, c, s, d)| vec![oid(o), oid(c), int(s.into()), text(d)]).collect()
}

/// `pg_init_privs`: the schemas' ACLs as `initdb` set them (`i`).
pub(super) fn init_privs_rows(_: &Reader<'_>) -> Vec<Vec<Datum>> {
    NAMESPACES
        .iter()
        .filter_map(|n| namespace_acl(n.0).map(|acl| (n.0, acl)))
        .map(|(id, acl)| vec![oid(id), oid(NAMESPACE_CLASS), int(0), ch('i'), text_array(acl)])
        .collect()
}

/// The name of namespace `id`.
pub fn namespace_name(id: u32) -> Option<&'static str> {
    NAMESPACES.iter().find(|n| n.0 == id).map(|n| n.1)
}

/// The OID of namespace `name`.
pub fn namespace_oid(name: &str) -> Option<u32> {
    NAMESPACES.iter().find(|n| n.1 == name).map(|n| n.0)
}

/// `pg_namespace`.
pub(super) fn namespace_rows(_: &Reader<'_>) -> Vec<Vec<Datum>> {
    NAMESPACES
        .iter()
        .map(|&(id, name, owner)| vec![oid(id), text(name), oid(owner), namespace_acl(id).map_or(NULL, text_array)])
        .collect()
}

/// `pg_am`: heap, btree and hash (the methods turnstile implements).
pub(super) fn am_rows(_: &Reader<'_>) -> Vec<Vec<Datum>> {
    ACCESS_METHODS
        .iter()
        .map(|(id, name, kind, handler)| vec![oid(*id), text(*name), oid(handler.oid), ch(*kind)])
        .collect()
}

/// `pg_collation`: `default`, `C` and `POSIX` (turnstile compares strings
/// bytewise, as `C` does).
pub(super) fn collation_rows(_: &Reader<'_>) -> Vec<Vec<Datum>> {
    [
        (DEFAULT_COLLATION, "default", 'd', NULL),
        (C_COLLATION, "C", 'c', text("C")),
        (POSIX_COLLATION, "POSIX", 'c', text("POSIX")),
    ]
    .into_iter()
    .map(|(id, name, provider, locale)| {
        vec![
            oid(id),
            text(name),
            oid(CATALOG_NAMESPACE),
            oid(SUPERUSER),
            ch(provider),
            boolean(true),
            int(-1),
            locale.clone(),
            locale,
            NULL,
            NULL,
        ]
    })
    .collect()
}

/// `pg_language`: `internal`, `c` and `sql`.
pub(super) fn language_rows(_: &Reader<'_>) -> Vec<Vec<Datum>> {
    [(INTERNAL_LANGUAGE, "internal"), (C_LANGUAGE, "c"), (SQL_LANGUAGE, "sql")]
        .into_iter()
        .map(|(id, name)| {
            vec![
                oid(id),
                text(name),
                oid(SUPERUSER),
                boolean(false),
                boolean(id == SQL_LANGUAGE),
                oid(0),
                oid(0),
                oid(0),
                NULL,
            ]
        })
        .collect()
}
