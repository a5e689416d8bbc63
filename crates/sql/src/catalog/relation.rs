//! [`SystemRelation`]: one relation of `pg_catalog` or `information_schema`
//! — its PostgreSQL 15 OID, name, columns (names and types) and the
//! function that computes its rows from turnstile's catalog ([`Reader`])
//! when a query reads it. The list of them is [`super::list`].
//!
//! Nothing is stored: every read builds the rows from one catalog snapshot,
//! so the relations agree with each other (the same OIDs everywhere) and
//! with the catalog at the statement's start.
//!
//! ```
//! use turnstile_sql::catalog::{lookup, Schema};
//! let class = lookup(Schema::Catalog, "pg_class").unwrap();
//! assert_eq!(class.oid, 1259);
//! assert_eq!(class.columns[1].0, "relname");
//! assert!(lookup(Schema::InformationSchema, "columns").is_some());
//! assert!(lookup(Schema::Catalog, "columns").is_none());
//! ```

use crate::expr::Services;
use crate::value::{Datum, SqlType};
use turnstile_engine::catalog::{CatalogData, DbId, Relation};

/// The schema a system relation lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Schema {
    /// `pg_catalog` (also found without a schema: it is first on every
    /// search path).
    Catalog,
    /// `information_schema` (only found by its qualified name).
    InformationSchema,
}

impl Schema {
    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Schema::Catalog => "pg_catalog",
            Schema::InformationSchema => "information_schema",
        }
    }

    /// Its OID.
    pub fn oid(self) -> u32 {
        match self {
            Schema::Catalog => super::oid::CATALOG_NAMESPACE,
            Schema::InformationSchema => super::oid::INFORMATION_SCHEMA_NAMESPACE,
        }
    }
}

/// What a system relation's rows are computed from.
pub struct Reader<'a> {
    /// The catalog, as of the statement.
    pub cat: &'a CatalogData,
    /// The session's database.
    pub db: DbId,
    /// The session (its database name, user and settings).
    pub services: &'a dyn Services,
    /// The system relations ([`super::list::SYSTEM_RELATIONS`]).
    pub system: &'static [SystemRelation],
    /// The engine-state views (`pg_locks`, …): OID, name, column count.
    pub status_views: &'a [(u32, &'static str, usize)],
}

impl Reader<'_> {
    /// The relations of the session's database, in id order.
    pub fn relations(&self) -> impl Iterator<Item = &Relation> {
        self.cat.relations.values().filter(move |r| r.db == self.db)
    }

    /// The session's database's relation `id`.
    pub fn relation(&self, id: u32) -> Option<&Relation> {
        self.cat.relations.get(&id).filter(|r| r.db == self.db)
    }

    /// The session's database name.
    pub fn database(&self) -> &str {
        self.services.database()
    }
}

/// Computes a relation's rows.
pub type RowsFn = fn(&Reader<'_>) -> Vec<Vec<Datum>>;

/// One relation of `pg_catalog` or `information_schema`.
pub struct SystemRelation {
    /// Its OID (PostgreSQL 15's).
    pub oid: u32,
    /// Its schema.
    pub schema: Schema,
    /// Its name.
    pub name: &'static str,
    /// `r` for a catalog table, `v` for a view.
    pub kind: char,
    /// Column names and types, in order.
    pub columns: &'static [(&'static str, SqlType)],
    /// Its rows now.
    pub rows: RowsFn,
}

impl PartialEq for SystemRelation {
    fn eq(&self, other: &SystemRelation) -> bool {
        self.oid == other.oid
    }
}

impl Eq for SystemRelation {}

impl std::fmt::Debug for SystemRelation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.schema.name(), self.name)
    }
}
