//! Data-modifying statements in `WITH` (`WITH ins AS (INSERT … RETURNING
//! …) SELECT … FROM ins`), and a query whose body is an INSERT, UPDATE or
//! DELETE under a `WITH` list.
//!
//! Each data-modifying statement is compiled once, as it would be on its
//! own, into a [`DmlCte`]: its `RETURNING` list gives the columns a
//! reference reads. A statement that has any is compiled to
//! [`Producer::WithDml`] over the main query: at each execution it forgets
//! the previous execution's rows, runs the main query — whose references
//! run each statement they name the first time, and read its `RETURNING`
//! rows — then runs every statement not yet run, in `WITH` order, so each
//! runs exactly once whether it is read or not (PostgreSQL's rule). The
//! whole statement is one transaction when none is open.
//!
//! Limit, against PostgreSQL: sub-statements share one snapshot there, so
//! the main query never sees what they changed. Here a statement the main
//! query reads runs before it, and the main query sees its changes when it
//! also reads the table changed; a statement it does not read runs after
//! it (so `WITH ins AS (INSERT INTO t …) SELECT count(*) FROM t` counts
//! the rows before the insert, as in PostgreSQL).

use super::returning::atomically;
use super::{compile_delete, compile_insert_in, compile_update, Catalog, InsertPlan, ModifyPlan, QueryCx, Run};
use crate::error::SqlError;
use crate::expr::{Scope, ScopeCol};
use crate::statement::FieldInfo;
use crate::value::{Datum, SqlType};
use sqlparser::ast;
use std::sync::{Arc, Mutex, PoisonError};
use turnstile_lock::SqlState;

/// The statement of a [`DmlCte`].
#[derive(Debug)]
enum Dml {
    Insert(InsertPlan),
    Update(ModifyPlan),
    Delete(ModifyPlan),
}

/// One data-modifying statement of a query, and its rows once it ran.
#[derive(Debug)]
pub struct DmlCte {
    dml: Dml,
    /// Its `RETURNING` columns (none without `RETURNING`).
    fields: Arc<[FieldInfo]>,
    /// Their types.
    types: Vec<SqlType>,
    /// The `RETURNING` rows of this execution, once it ran.
    rows: Mutex<Option<Vec<Vec<Datum>>>>,
}

/// Compiles `body` when it is an INSERT, UPDATE or DELETE (`None`
/// otherwise), its nested queries seeing `cx`.
pub(super) fn compile_dml(
    cat: &Catalog<'_>,
    body: &ast::SetExpr,
    params: &mut Vec<SqlType>,
    cx: &QueryCx,
) -> Result<Option<Arc<DmlCte>>, SqlError> {
    let dml = match body {
        ast::SetExpr::Insert(ast::Statement::Insert(i)) => Dml::Insert(compile_insert_in(cat, i, params, cx)?),
        ast::SetExpr::Update(ast::Statement::Update(u)) => Dml::Update(compile_update(cat, u, params)?),
        ast::SetExpr::Delete(ast::Statement::Delete(d)) => Dml::Delete(compile_delete(cat, d, params)?),
        _ => return Ok(None),
    };
    let returning = match &dml {
        Dml::Insert(p) => p.returning.as_ref(),
        Dml::Update(p) | Dml::Delete(p) => p.returning.as_ref(),
    };
    let (fields, types) = match returning {
        Some(r) => (Arc::clone(&r.fields), r.out_types[..r.fields.len()].to_vec()),
        None => (Vec::new().into(), Vec::new()),
    };
    Ok(Some(Arc::new(DmlCte { dml, fields, types, rows: Mutex::new(None) })))
}

impl DmlCte {
    /// The columns a reference to it under `alias` sees; `0A000` when it
    /// has no `RETURNING` list, as PostgreSQL answers.
    pub(super) fn scope(&self, name: &str, alias: &str) -> Result<Scope, SqlError> {
        if self.fields.is_empty() {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("WITH query \"{name}\" does not have a RETURNING clause"),
            ));
        }
        let mut scope = Scope::default();
        for (f, t) in self.fields.iter().zip(&self.types) {
            scope.cols.push(ScopeCol { qual: alias.to_owned(), name: f.name.clone(), ty: *t, table_oid: 0, attnum: 0 });
        }
        Ok(scope)
    }

    /// Its `RETURNING` columns.
    pub(super) fn fields(&self) -> &Arc<[FieldInfo]> {
        &self.fields
    }

    /// Their types.
    pub(super) fn types(&self) -> &[SqlType] {
        &self.types
    }

    /// Its `RETURNING` rows: the statement runs the first time it is asked
    /// for them in an execution.
    pub(super) fn rows(&self, run: &mut Run<'_>) -> Result<Vec<Vec<Datum>>, SqlError> {
        if let Some(rows) = self.rows.lock().unwrap_or_else(PoisonError::into_inner).as_ref() {
            return Ok(rows.clone());
        }
        let affected = match &self.dml {
            Dml::Insert(p) => p.run(run)?,
            Dml::Update(p) => p.run(run, false)?,
            Dml::Delete(p) => p.run(run, true)?,
        };
        *self.rows.lock().unwrap_or_else(PoisonError::into_inner) = Some(affected.rows.clone());
        Ok(affected.rows)
    }

    fn forget(&self) {
        *self.rows.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }
}

/// [`super::Producer::WithDml`]'s execution: `body`'s rows, with every
/// statement of `ctes` run once (module header).
pub(super) fn run_with_dml(
    body: &super::SelectPlan,
    ctes: &[Arc<DmlCte>],
    run: &mut Run<'_>,
) -> Result<Vec<Vec<Datum>>, SqlError> {
    for c in ctes {
        c.forget();
    }
    atomically(run, |run| {
        let rows = body.run(&mut run.nested())?;
        for c in ctes {
            c.rows(run)?;
        }
        Ok(rows)
    })
}
