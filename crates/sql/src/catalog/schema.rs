//! Per-database catalogs of built-in objects: `pg_namespace` (turnstile
//! has `pg_catalog`, `pg_toast`, `public` and `information_schema`),
//! `pg_am`, `pg_collation`, `pg_language`; and those it has no objects
//! for (`pg_extension`, `pg_description`: no extensions, no comments).

use super::datum::{boolean, ch, int, oid, text, ACL_ARRAY, NULL, OID_ARRAY, TEXT_ARRAY};
use super::oid::*;
use super::relation::Reader;
use crate::value::{Datum, SqlType};
use SqlType::*;

/// `pg_catalog.pg_namespace`'s columns.
pub(super) const NAMESPACE: &[(&str, SqlType)] =
    &[("oid", Oid), ("nspname", Name), ("nspowner", Oid), ("nspacl", ACL_ARRAY) /* _aclitem */];

/// `pg_catalog.pg_am`'s columns.
pub(super) const AM: &[(&str, SqlType)] = &[("oid", Oid), ("amname", Name), ("amhandler", Text), ("amtype", QChar)];

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
    NAMESPACES.iter().map(|&(id, name, owner)| vec![oid(id), text(name), oid(owner), NULL]).collect()
}

/// `pg_am`: heap, btree and hash (the methods turnstile implements).
pub(super) fn am_rows(_: &Reader<'_>) -> Vec<Vec<Datum>> {
    [
        (HEAP_AM, "heap", "heap_tableam_handler", 't'),
        (BTREE_AM, "btree", "bthandler", 'i'),
        (HASH_AM, "hash", "hashhandler", 'i'),
    ]
    .into_iter()
    .map(|(id, name, handler, kind)| vec![oid(id), text(name), text(handler), ch(kind)])
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
