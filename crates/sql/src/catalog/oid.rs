//! The OIDs of what turnstile's `pg_catalog` shows: PostgreSQL 15's fixed
//! OIDs for built-in objects (namespaces, roles, access methods,
//! tablespaces, collations, languages, system relations), and the rule that
//! gives objects turnstile keeps no id for (constraints, column defaults,
//! functions) an OID derived from one it does keep.
//!
//! A user relation's OID is its engine id ([`RelId`], allocated from
//! [`FIRST_USER_ID`](turnstile_engine::catalog::FIRST_USER_ID) upwards), so
//! it is stable for the relation's life. Derived OIDs are functions of
//! those ids, so they are stable too and every relation that shows one
//! (`pg_constraint.oid`, `pg_index`'s constraint, `obj_description`)
//! computes the same value:
//!
//! * constraint of index `i`: `i + CONSTRAINT_OID_BASE`;
//! * default of column `n` (1-based) of relation `r`:
//!   `ATTRDEF_OID_BASE + r * ATTRDEF_SLOTS + n`, for `r < ATTRDEF_REL_MAX`.
//!
//! ```
//! use turnstile_sql::catalog::oid;
//! assert_eq!(oid::constraint_oid(16390), Some(16390 + oid::CONSTRAINT_OID_BASE));
//! assert_ne!(oid::attrdef_oid(16384, 1), oid::attrdef_oid(16384, 2));
//! ```

use turnstile_engine::catalog::RelId;

/// `pg_catalog`.
pub const CATALOG_NAMESPACE: u32 = 11;
/// `pg_toast`.
pub const TOAST_NAMESPACE: u32 = 99;
/// `public`.
pub const PUBLIC_NAMESPACE: u32 = 2200;
/// `information_schema` (the OID initdb gives it in PostgreSQL 15).
pub const INFORMATION_SCHEMA_NAMESPACE: u32 = 13207;

/// The bootstrap superuser, `postgres` (`BOOTSTRAP_SUPERUSERID`).
pub const SUPERUSER: u32 = 10;
/// `pg_database_owner`, the owner of `public` in PostgreSQL 15.
pub const DATABASE_OWNER_ROLE: u32 = 6171;

/// The `heap` table access method.
pub const HEAP_AM: u32 = 2;
/// The `btree` index access method.
pub const BTREE_AM: u32 = 403;
/// The `hash` index access method.
pub const HASH_AM: u32 = 405;

/// `pg_default`.
pub const DEFAULT_TABLESPACE: u32 = 1663;
/// `pg_global`.
pub const GLOBAL_TABLESPACE: u32 = 1664;

/// The database's default collation.
pub const DEFAULT_COLLATION: u32 = 100;
/// `C`.
pub const C_COLLATION: u32 = 950;
/// `POSIX`.
pub const POSIX_COLLATION: u32 = 951;

/// `internal` (built-in functions).
pub const INTERNAL_LANGUAGE: u32 = 12;
/// `c`.
pub const C_LANGUAGE: u32 = 13;
/// `sql`.
pub const SQL_LANGUAGE: u32 = 14;

/// `pg_class` (`classid` of relations in `pg_description`, `pg_depend`).
pub const PG_CLASS: u32 = 1259;
/// `pg_constraint`.
pub const PG_CONSTRAINT: u32 = 2606;
/// `pg_proc`.
pub const PG_PROC: u32 = 1255;

/// Added to an index's id to give its constraint's OID (`pg_constraint`
/// rows have no id of their own in turnstile's catalog).
pub const CONSTRAINT_OID_BASE: u32 = 0x4000_0000;
/// The first OID of column defaults (`pg_attrdef`).
pub const ATTRDEF_OID_BASE: u32 = 0x8000_0000;
/// Default OIDs set aside per relation: one per column number, up to
/// PostgreSQL's `MaxHeapAttributeNumber`.
pub const ATTRDEF_SLOTS: u32 = 1600;
/// Relations whose column defaults have OIDs: `ATTRDEF_OID_BASE +
/// r * ATTRDEF_SLOTS + n` fits in 32 bits below this id.
pub const ATTRDEF_REL_MAX: u32 = (u32::MAX - ATTRDEF_OID_BASE) / ATTRDEF_SLOTS;
/// The first OID of turnstile's functions in `pg_proc` (the registry's
/// order), past PostgreSQL's own built-in range.
pub const PROC_OID_BASE: u32 = 9000;

/// The OID of the constraint index `index` implements (a primary key or
/// unique constraint); `None` past the representable range.
pub fn constraint_oid(index: RelId) -> Option<u32> {
    index.checked_add(CONSTRAINT_OID_BASE).filter(|o| *o < ATTRDEF_OID_BASE)
}

/// The index whose constraint has OID `oid` (the inverse of
/// [`constraint_oid`]).
pub fn constraint_index(oid: u32) -> Option<RelId> {
    (CONSTRAINT_OID_BASE..ATTRDEF_OID_BASE).contains(&oid).then(|| oid - CONSTRAINT_OID_BASE)
}

/// The OID of the default of column `attnum` (1-based) of relation `rel`;
/// `None` past [`ATTRDEF_REL_MAX`] or [`ATTRDEF_SLOTS`].
pub fn attrdef_oid(rel: RelId, attnum: u32) -> Option<u32> {
    if rel >= ATTRDEF_REL_MAX || attnum == 0 || attnum >= ATTRDEF_SLOTS {
        return None;
    }
    Some(ATTRDEF_OID_BASE + rel * ATTRDEF_SLOTS + attnum)
}
