//! The object-identifier alias types (`regclass`, `regtype`, `regproc`,
//! `regnamespace`, `regrole`): reading a name as its object's OID
//! ([`reg_in`], `'things'::regclass`) and printing an OID as its object's
//! name ([`reg_out`], `c.oid::regclass`), against the session's catalog,
//! as PostgreSQL's `regclassin`/`regclassout` do. A value of these types is
//! an OID throughout a query (compared and joined as one); it becomes a
//! name when it is cast to text or leaves the server ([`render_rows`]).

use super::list::{by_oid, lookup, STATUS_VIEW_OIDS};
use super::relation::Schema;
use super::settings::{proc_name, proc_oid};
use super::types::{array_of, builtin, format_type};
use super::{cluster, schema};
use crate::error::SqlError;
use crate::expr::{parse_type_name, Services};
use crate::value::{Datum, RegKind, SqlType};
use std::sync::Arc;
use turnstile_engine::catalog::{CatalogData, DbId};
use turnstile_lock::SqlState;

/// The catalog as of now and the session's database id.
pub fn catalog_of(services: &dyn Services) -> Result<(Arc<CatalogData>, DbId), SqlError> {
    let engine = &services.shared().engine;
    let db = engine
        .catalog()
        .database(services.database())
        .map_err(|e| SqlError::from(turnstile_engine::EngineError::from(e)))?;
    Ok((engine.catalog().snapshot(), db))
}

fn undefined(kind: RegKind, name: &str) -> SqlError {
    let (code, what) = match kind {
        RegKind::Class => (SqlState::UNDEFINED_TABLE, "relation"),
        RegKind::Type => (SqlState::UNDEFINED_OBJECT, "type"),
        RegKind::Proc => (SqlState::UNDEFINED_FUNCTION, "function"),
        RegKind::Namespace => (SqlState::INVALID_SCHEMA_NAME, "schema"),
        RegKind::Role => (SqlState::UNDEFINED_OBJECT, "role"),
    };
    SqlError::new(code, format!("{what} \"{name}\" does not exist"))
}

/// An identifier as written: unquoted parts folded to lower case.
fn fold(name: &str) -> Vec<String> {
    name.split('.')
        .map(|p| {
            let p = p.trim();
            match p.strip_prefix('"').and_then(|q| q.strip_suffix('"')) {
                Some(q) => q.replace("\"\"", "\""),
                None => p.to_ascii_lowercase(),
            }
        })
        .collect()
}

/// The OID a relation name (`things`, `public.things`,
/// `pg_catalog.pg_class`, `information_schema.tables`) names.
fn class_oid(services: &dyn Services, name: &str) -> Result<Option<u32>, SqlError> {
    let parts = fold(name);
    let (schema, rel) = match parts.as_slice() {
        [rel] => (None, rel.as_str()),
        [schema, rel] => (Some(schema.as_str()), rel.as_str()),
        _ => return Ok(None),
    };
    if matches!(schema, None | Some("public")) {
        let (cat, db) = catalog_of(services)?;
        if let Some(r) = cat.find(db, rel) {
            return Ok(Some(r.id));
        }
        if let Some(s) = services.shared().sequences.find(db, rel) {
            return Ok(Some(s.oid));
        }
    }
    let system = match schema {
        None | Some("pg_catalog") => lookup(Schema::Catalog, rel)
            .map(|r| r.oid)
            .or_else(|| STATUS_VIEW_OIDS.iter().find(|v| v.1 == rel).map(|v| v.0)),
        Some("information_schema") => lookup(Schema::InformationSchema, rel).map(|r| r.oid),
        _ => None,
    };
    Ok(system)
}

/// `regclassin` and its kin: the OID `name` names (a number is taken as
/// the OID itself, as PostgreSQL does); `42P01`/`42704`/`42883`/`3F000`
/// when nothing has that name.
pub fn reg_in(kind: RegKind, name: &str, services: &dyn Services) -> Result<Datum, SqlError> {
    let t = name.trim();
    if let Ok(n) = t.parse::<u32>() {
        return Ok(Datum::Int(n.into()));
    }
    let found = match kind {
        RegKind::Class => class_oid(services, t)?,
        RegKind::Type => parse_type_name(t).ok().map(|ty| ty.oid()).or_else(|| {
            let base = t.strip_suffix("[]")?;
            parse_type_name(base).ok().and_then(|b| builtin(b.oid())).map(|b| b.array).filter(|a| *a != 0)
        }),
        RegKind::Proc => {
            let head = t.split_once('(').map_or(t, |(h, _)| h);
            let n = fold(head).pop().unwrap_or_default();
            proc_oid(services.functions(), &n)
        }
        RegKind::Namespace => schema::namespace_oid(&fold(t).pop().unwrap_or_default()),
        RegKind::Role => cluster::role_oid(&fold(t).pop().unwrap_or_default()),
    };
    found.map(|o| Datum::Int(o.into())).ok_or_else(|| undefined(kind, t))
}

/// `regclassout` and its kin: the name of object `oid` (schema-qualified
/// when its schema is not on the search path), or the number when there
/// is no such object, as PostgreSQL prints.
pub fn reg_out(kind: RegKind, oid: u32, services: &dyn Services) -> Result<String, SqlError> {
    let name = match kind {
        RegKind::Class => {
            let (cat, db) = catalog_of(services)?;
            let sequence = || services.shared().sequences.by_oid(db, oid);
            match cat.relations.get(&oid).filter(|r| r.db == db) {
                Some(r) => Some(super::deparse::quote_ident(&r.name)),
                None if sequence().is_some() => sequence().map(|s| super::deparse::quote_ident(&s.name)),
                None => by_oid(oid)
                    .map(|r| match r.schema {
                        Schema::Catalog => r.name.to_owned(),
                        Schema::InformationSchema => format!("information_schema.{}", r.name),
                    })
                    .or_else(|| STATUS_VIEW_OIDS.iter().find(|v| v.0 == oid).map(|v| v.1.to_owned())),
            }
        }
        RegKind::Type => (builtin(oid).is_some() || array_of(oid).is_some()).then(|| format_type(oid, -1)),
        RegKind::Proc => proc_name(services.functions(), oid).map(str::to_owned),
        RegKind::Namespace => schema::namespace_name(oid).map(str::to_owned),
        RegKind::Role => cluster::role_name(oid).map(str::to_owned),
    };
    Ok(name.unwrap_or_else(|| oid.to_string()))
}

/// Output rows' `reg*` columns turned from OIDs into names (what their
/// output function prints), before the rows leave the server.
pub fn render_rows(rows: &mut [Vec<Datum>], types: &[SqlType], services: &dyn Services) -> Result<(), SqlError> {
    for (i, ty) in types.iter().enumerate() {
        let SqlType::Reg(kind) = *ty else { continue };
        for r in rows.iter_mut() {
            if let Some(Datum::Int(v)) = r.get(i) {
                let oid = u32::try_from(*v).map_err(|_| crate::value::out_of_range(*ty))?;
                r[i] = Datum::Text(reg_out(kind, oid, services)?);
            }
        }
    }
    Ok(())
}
