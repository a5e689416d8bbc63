//! `RETURNING`: the rows an INSERT, UPDATE or DELETE affected, projected
//! through a select list (PostgreSQL's `returningList`).
//!
//! The list is compiled once against the target table's scope (the table's
//! columns under its name or alias), exactly as a select list is
//! (`target.rs`: `*`, `t.*`, expressions and their output names), so
//! RowDescription is known at Describe. It is evaluated on each affected
//! row as the statement leaves it: the inserted row (defaults and
//! generated keys filled in), the new version of an updated row, the
//! deleted row as it was. Aggregates are not allowed (`42803`), as in
//! PostgreSQL.
//!
//! `INSERT INTO t VALUES (1, 'a') RETURNING id * 10 AS x, v` answers one
//! row `x = 10, v = 'a'` with the tag `INSERT 0 1`; the tests are in
//! `crates/sql/tests/writes.rs`.

use super::target::item_list;
use crate::error::SqlError;
use crate::expr::{EvalEnv, Expr, Scope};
use crate::value::{Datum, SqlType};
use crate::FieldInfo;
use sqlparser::ast;
use std::sync::Arc;
use turnstile_engine::types::Value;
use turnstile_lock::SqlState;

/// A compiled `RETURNING` list.
#[derive(Debug)]
pub struct Returning {
    /// One expression per result column, over the affected row.
    pub outputs: Vec<Expr>,
    /// Their types.
    pub out_types: Vec<SqlType>,
    /// RowDescription.
    pub fields: Arc<[FieldInfo]>,
}

/// Compiles `items` (the statement's `RETURNING` list, if any) against the
/// target's `scope`.
pub(super) fn compile_returning(
    items: Option<&Vec<ast::SelectItem>>,
    scope: &Scope,
    params: &mut Vec<SqlType>,
) -> Result<Option<Returning>, SqlError> {
    let Some(items) = items else { return Ok(None) };
    let mut aggs = Vec::new();
    let out = item_list(items, scope, params, &mut aggs)?;
    if !aggs.is_empty() {
        return Err(SqlError::new(SqlState::GROUPING_ERROR, "aggregate functions are not allowed in RETURNING"));
    }
    Ok(Some(Returning { outputs: out.outputs, out_types: out.out_types, fields: out.fields.into() }))
}

impl Returning {
    /// The result row for one affected row (its values as stored).
    pub fn project(&self, row: &[Value], env: &mut EvalEnv<'_>) -> Result<Vec<Datum>, SqlError> {
        let datums: Vec<Datum> = row.iter().map(Datum::from_engine).collect();
        self.project_datums(&datums, env)
    }

    /// The result row for one affected row given as datums.
    pub fn project_datums(&self, row: &[Datum], env: &mut EvalEnv<'_>) -> Result<Vec<Datum>, SqlError> {
        self.outputs.iter().map(|x| x.eval(row, env)).collect()
    }
}

/// What a data-modifying statement produced: how many rows it affected and,
/// with `RETURNING`, their projections.
#[derive(Debug, Default)]
pub struct Affected {
    /// Rows inserted, updated or deleted.
    pub count: u64,
    /// The `RETURNING` rows (empty without a `RETURNING` list).
    pub rows: Vec<Vec<Datum>>,
}

/// Runs `body` as one engine transaction when none is open: a statement
/// that makes several engine calls (an insert per row, an upsert's probes
/// and inserts) is then undone whole when it fails, as a statement of one
/// engine call is.
pub(super) fn atomically<R>(
    run: &mut super::Run<'_>,
    body: impl FnOnce(&mut super::Run<'_>) -> Result<R, SqlError>,
) -> Result<R, SqlError> {
    if run.session()?.in_transaction() {
        return body(run);
    }
    run.session()?.begin()?;
    match body(run) {
        Ok(r) => {
            run.session()?.commit()?;
            Ok(r)
        }
        Err(mut e) => {
            if let Err(undo) = run.session()?.rollback() {
                let note = format!("undoing the statement failed too: {undo}");
                e.detail = Some(e.detail.map_or(note.clone(), |d| format!("{d} ({note})")));
            }
            Err(e)
        }
    }
}
