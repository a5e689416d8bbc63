//! `pg_catalog` and `information_schema` as relations computed from
//! turnstile's catalog when a query reads them, the way `pg_locks` is
//! computed from the lock manager: PostgreSQL 15's names, columns and
//! OIDs, so that psql's describe commands, pg_dump and drivers' metadata
//! queries read turnstile as they read PostgreSQL.
//!
//! * [`relation`]: what a system relation is; [`list`]: the list of them;
//! * [`oid`]: the OIDs they show and how derived OIDs are made;
//! * one file per group of relations: [`class`] (`pg_class`, `pg_index`,
//!   `pg_inherits`, `pg_partitioned_table`), [`attribute`]
//!   (`pg_attribute`, `pg_attrdef`), [`constraint`], [`types`]
//!   (`pg_type`), [`depend`] (`pg_depend`, the dependencies pg_dump
//!   orders by), [`cluster`] (databases, roles, tablespaces),
//!   [`schema`] (namespaces, access methods, collations, languages),
//!   [`settings`] (`pg_settings`, `pg_proc`), [`empty`] (catalogs of
//!   objects turnstile lacks), [`unused`] (object kinds a user cannot
//!   define: operators, casts, text search, …), [`info_tables`] and [`info_constraints`]
//!   (`information_schema`);
//! * [`search_path`]: the session's schema search path;
//! * [`reg`]: `regclass` and its kin, names read and printed as OIDs;
//! * [`deparse`]: the SQL text of indexes, constraints, defaults and
//!   partition bounds, shared with the catalog functions
//!   (`pg_get_indexdef`, …) so that both agree.
//!
//! Every relation is computed from one snapshot of the catalog
//! ([`Reader`]): invariant, for every user relation `r`,
//! `pg_class.oid = r.id`, and every other relation refers to `r` by
//! that OID.

pub mod attribute;
pub mod class;
pub mod cluster;
pub mod constraint;
pub mod datum;
pub mod deparse;
pub mod depend;
pub mod empty;
pub mod fk_constraint;
pub mod info_constraints;
pub mod info_tables;
pub mod list;
pub mod oid;
pub mod reg;
pub mod relation;
pub mod schema;
pub mod search_path;
pub mod sequences;
pub mod settings;
pub mod types;
pub mod unused;

pub use list::{by_oid, is_system_name, lookup, STATUS_VIEW_OIDS, SYSTEM_RELATIONS};
pub use relation::{Reader, Schema, SystemRelation};
