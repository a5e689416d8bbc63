//! The cluster-wide catalogs: `pg_database` (every database of the
//! cluster), the roles (`pg_authid` and its views `pg_roles` and
//! `pg_user`; turnstile has one login role, the bootstrap superuser
//! `postgres`, and PostgreSQL 15's predefined roles),
//! `pg_auth_members` and `pg_tablespace`.

use super::datum::{boolean, ch, int, oid, text, text_array, ACL_ARRAY, NULL, TEXT_ARRAY};
use super::oid::{DATABASE_OWNER_ROLE, DEFAULT_TABLESPACE, GLOBAL_TABLESPACE, SUPERUSER};
use super::relation::Reader;
use crate::value::{Datum, SqlType};
use SqlType::*;

/// `pg_catalog.pg_database`'s columns.
pub(super) const DATABASE: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("datname", Name),
    ("datdba", Oid),
    ("encoding", Int4),
    ("datlocprovider", QChar),
    ("datistemplate", Bool),
    ("datallowconn", Bool),
    ("datconnlimit", Int4),
    ("datfrozenxid", Xid),
    ("datminmxid", Xid),
    ("dattablespace", Oid),
    ("datcollate", Text),
    ("datctype", Text),
    ("daticulocale", Text),
    ("datcollversion", Text),
    ("datacl", ACL_ARRAY), /* _aclitem */
];

/// `pg_catalog.pg_authid`'s columns.
pub(super) const AUTHID: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("rolname", Name),
    ("rolsuper", Bool),
    ("rolinherit", Bool),
    ("rolcreaterole", Bool),
    ("rolcreatedb", Bool),
    ("rolcanlogin", Bool),
    ("rolreplication", Bool),
    ("rolbypassrls", Bool),
    ("rolconnlimit", Int4),
    ("rolpassword", Text),
    ("rolvaliduntil", TimestampTz),
];

/// `pg_catalog.pg_roles`'s columns.
pub(super) const ROLES: &[(&str, SqlType)] = &[
    ("rolname", Name),
    ("rolsuper", Bool),
    ("rolinherit", Bool),
    ("rolcreaterole", Bool),
    ("rolcreatedb", Bool),
    ("rolcanlogin", Bool),
    ("rolreplication", Bool),
    ("rolconnlimit", Int4),
    ("rolpassword", Text),
    ("rolvaliduntil", TimestampTz),
    ("rolbypassrls", Bool),
    ("rolconfig", TEXT_ARRAY), /* _text */
    ("oid", Oid),
];

/// `pg_catalog.pg_user`'s columns.
pub(super) const USER: &[(&str, SqlType)] = &[
    ("usename", Name),
    ("usesysid", Oid),
    ("usecreatedb", Bool),
    ("usesuper", Bool),
    ("userepl", Bool),
    ("usebypassrls", Bool),
    ("passwd", Text),
    ("valuntil", TimestampTz),
    ("useconfig", TEXT_ARRAY), /* _text */
];

/// `pg_catalog.pg_auth_members`'s columns.
pub(super) const AUTH_MEMBERS: &[(&str, SqlType)] =
    &[("roleid", Oid), ("member", Oid), ("grantor", Oid), ("admin_option", Bool)];

/// `pg_catalog.pg_tablespace`'s columns.
pub(super) const TABLESPACE: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("spcname", Name),
    ("spcowner", Oid),
    ("spcacl", ACL_ARRAY),      /* _aclitem */
    ("spcoptions", TEXT_ARRAY), /* _text */
];

/// `pg_database.encoding` of UTF8 (`PG_UTF8`).
pub const UTF8_ENCODING: i64 = 6;

/// A role: OID, name, whether it is the superuser (who has every
/// attribute and can log in).
const ROLE_LIST: &[(u32, &str, bool)] = &[
    (SUPERUSER, "postgres", true),
    (DATABASE_OWNER_ROLE, "pg_database_owner", false),
    (3373, "pg_monitor", false),
    (3374, "pg_read_all_settings", false),
    (3375, "pg_read_all_stats", false),
    (3377, "pg_stat_scan_tables", false),
    (4200, "pg_signal_backend", false),
    (4544, "pg_checkpoint", false),
    (4569, "pg_read_server_files", false),
    (4570, "pg_write_server_files", false),
    (4571, "pg_execute_server_program", false),
    (6181, "pg_read_all_data", false),
    (6182, "pg_write_all_data", false),
];

/// The name of role `id`.
pub fn role_name(id: u32) -> Option<&'static str> {
    ROLE_LIST.iter().find(|r| r.0 == id).map(|r| r.1)
}

/// The OID of role `name`.
pub fn role_oid(name: &str) -> Option<u32> {
    ROLE_LIST.iter().find(|r| r.1 == name).map(|r| r.0)
}

/// The template databases `initdb` makes: OID, name, whether connections
/// are allowed. turnstile has no templates to copy (a new database starts
/// empty, as a copy of `template0` does), but lists them as PostgreSQL
/// does, so that `\l` and tools that look for them find them.
const TEMPLATES: &[(u32, &str, bool)] = &[(1, "template1", true), (4, "template0", false)];

/// `datacl` of a template database: `PUBLIC` may connect, the owner has
/// every privilege (PostgreSQL's `=c/postgres`, `postgres=CTc/postgres`).
fn template_acl() -> Datum {
    text_array(["=c/postgres", "postgres=CTc/postgres"])
}

/// `pg_database`: every database, owned by the superuser, UTF8, locale C,
/// and the template databases (unless a database has taken a name).
pub(super) fn database_rows(r: &Reader<'_>) -> Vec<Vec<Datum>> {
    let row = |id: u32, name: &str, template: bool, allow_conn: bool| {
        vec![
            oid(id),
            text(name),
            oid(SUPERUSER),
            int(UTF8_ENCODING),
            ch('c'),
            boolean(template),
            boolean(allow_conn),
            int(-1),
            int(0),
            int(1),
            oid(DEFAULT_TABLESPACE),
            text("C"),
            text("C"),
            NULL,
            NULL,
            if template { template_acl() } else { NULL },
        ]
    };
    let taken = |name: &str| r.cat.databases.values().any(|d| d.name == name);
    let templates = TEMPLATES.iter().filter(|t| !taken(t.1)).map(|&(id, name, conn)| row(id, name, true, conn));
    r.cat.databases.values().map(|d| row(d.id, &d.name, false, true)).chain(templates).collect()
}

/// `pg_authid`.
pub(super) fn authid_rows(_: &Reader<'_>) -> Vec<Vec<Datum>> {
    ROLE_LIST
        .iter()
        .map(|&(id, name, su)| {
            let b = boolean(su);
            vec![
                oid(id),
                text(name),
                b.clone(),
                boolean(true),
                b.clone(),
                b.clone(),
                b.clone(),
                b.clone(),
                b,
                int(-1),
                NULL,
                NULL,
            ]
        })
        .collect()
}

/// `pg_roles`: `pg_authid` without passwords.
pub(super) fn roles_rows(_: &Reader<'_>) -> Vec<Vec<Datum>> {
    ROLE_LIST
        .iter()
        .map(|&(id, name, su)| {
            let b = boolean(su);
            vec![
                text(name),
                b.clone(),
                boolean(true),
                b.clone(),
                b.clone(),
                b.clone(),
                b.clone(),
                int(-1),
                text("********"),
                NULL,
                b,
                NULL,
                oid(id),
            ]
        })
        .collect()
}

/// `pg_user`: the roles that can log in.
pub(super) fn user_rows(_: &Reader<'_>) -> Vec<Vec<Datum>> {
    ROLE_LIST
        .iter()
        .filter(|r| r.2)
        .map(|&(id, name, _)| {
            let t = boolean(true);
            vec![text(name), oid(id), t.clone(), t.clone(), t.clone(), t, text("********"), NULL, NULL]
        })
        .collect()
}

/// `pg_tablespace`: `pg_default` and `pg_global`.
pub(super) fn tablespace_rows(_: &Reader<'_>) -> Vec<Vec<Datum>> {
    [(DEFAULT_TABLESPACE, "pg_default"), (GLOBAL_TABLESPACE, "pg_global")]
        .into_iter()
        .map(|(id, name)| vec![oid(id), text(name), oid(SUPERUSER), NULL, NULL])
        .collect()
}
