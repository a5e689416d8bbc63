//! `WITH RECURSIVE`: a common table expression that reads itself, as
//! PostgreSQL's `RecursiveUnion` runs it.
//!
//! Its query must be `non-recursive term UNION [ALL] recursive term`
//! (else it is an ordinary CTE). The non-recursive term is compiled first and fixes
//! the columns' names and types; the recursive term is compiled with the
//! CTE's name bound to a [`WorkTable`], and its columns must resolve to
//! the same types (`42804`). Running it ([`RecursiveCte::rows`]):
//!
//! 1. the non-recursive term's rows are the result so far and the working
//!    table (without duplicates under `UNION`);
//! 2. while the working table has rows: the recursive term runs over it,
//!    its rows (under `UNION` those not seen before) are added to the
//!    result and become the next working table.
//!
//! A recursion that never ends runs until the statement is cancelled or
//! times out, as in PostgreSQL: each iteration checks the cancel flag.
//!
//! A CTE of a `WITH RECURSIVE` list whose query is no `UNION`, or whose
//! second term does not read it, is an ordinary one (the planner compiles
//! it as such when [`compile_recursive`] answers `None`).

use super::{check_cancel, Producer, QueryCx, Run, SelectPlan};
use crate::error::SqlError;
use crate::expr::{Scope, ScopeCol};
use crate::sync::atomic::{AtomicBool, Ordering};
use crate::value::{Datum, SqlType};
use sqlparser::ast;
use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use turnstile_lock::SqlState;

/// The rows of the current iteration, which the recursive term reads
/// where it names the CTE.
#[derive(Debug, Default)]
pub struct WorkTable {
    rows: Mutex<Vec<Vec<Datum>>>,
    /// Set when the recursive term was compiled with a reference to it.
    read: AtomicBool,
}

impl WorkTable {
    /// Notes that a query reads it.
    pub(super) fn mark_read(&self) {
        self.read.store(true, Ordering::Relaxed);
    }

    /// The working table's rows now.
    pub fn rows(&self) -> Vec<Vec<Datum>> {
        self.rows.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    fn set(&self, rows: Vec<Vec<Datum>>) {
        *self.rows.lock().unwrap_or_else(PoisonError::into_inner) = rows;
    }
}

/// A recursive common table expression, compiled.
#[derive(Debug)]
pub struct RecursiveCte {
    /// Column names.
    names: Vec<String>,
    /// Column types (the non-recursive term's).
    types: Vec<SqlType>,
    /// The non-recursive term.
    anchor: SelectPlan,
    /// The recursive term (reads `work`).
    step: SelectPlan,
    work: Arc<WorkTable>,
    /// `UNION ALL`: keep duplicates.
    all: bool,
}

/// What a name bound by `WITH RECURSIVE` reads: the working table (inside
/// the recursive term) or the whole CTE (elsewhere).
#[derive(Clone, Debug)]
pub enum RecursiveName {
    /// Inside the recursive term: the working table, its column names and
    /// types.
    Work(Arc<WorkTable>, Vec<String>, Vec<SqlType>),
    /// The CTE's result.
    Cte(Arc<RecursiveCte>),
}

impl RecursiveName {
    /// A plan reading it (`SELECT * FROM name`).
    pub(super) fn plan(&self) -> SelectPlan {
        let (producer, names, types) = match self {
            RecursiveName::Work(w, names, types) => {
                w.mark_read();
                (Producer::WorkTable(Arc::clone(w)), names, types)
            }
            RecursiveName::Cte(c) => (Producer::Recursive(Arc::clone(c)), &c.names, &c.types),
        };
        let mut scope = Scope::default();
        for (n, t) in names.iter().zip(types) {
            scope.cols.push(ScopeCol { qual: String::new(), name: n.clone(), ty: *t, table_oid: 0, attnum: 0 });
        }
        super::over_rows(producer, scope)
    }
}

/// Compiles the CTE `name` (column aliases `cols`) of query `q` as a
/// recursive one; `None` when it is not (no `UNION`, or a second term
/// that does not read `name`). `compile` compiles one term with a given
/// context (the planner's `branch`).
pub(super) fn compile_recursive(
    name: &str,
    cols: &[String],
    q: &ast::Query,
    cx: &QueryCx,
    mut compile: impl FnMut(&ast::SetExpr, &QueryCx) -> Result<SelectPlan, SqlError>,
) -> Result<Option<RecursiveCte>, SqlError> {
    let ast::SetExpr::SetOperation { left, op: ast::SetOperator::Union, set_quantifier, right } = q.body.as_ref()
    else {
        return Ok(None);
    };
    if q.order_by.is_some() || q.limit_clause.is_some() || q.fetch.is_some() {
        return Err(SqlError::unsupported(&format!("ORDER BY or LIMIT in the recursive query \"{name}\"")));
    }
    let all = match set_quantifier {
        ast::SetQuantifier::All => true,
        ast::SetQuantifier::Distinct | ast::SetQuantifier::None => false,
        other => return Err(SqlError::unsupported(&format!("UNION {other}"))),
    };
    let anchor = compile(left, cx)?;
    let width = anchor.fields.len();
    if cols.len() > width {
        return Err(SqlError::new(
            SqlState::INVALID_COLUMN_REFERENCE,
            format!("WITH query \"{name}\" has {width} columns available but {} columns specified", cols.len()),
        ));
    }
    let names: Vec<String> =
        anchor.fields.iter().enumerate().map(|(i, f)| cols.get(i).unwrap_or(&f.name).clone()).collect();
    let types: Vec<SqlType> =
        anchor.out_types[..width].iter().map(|t| if *t == SqlType::Unknown { SqlType::Text } else { *t }).collect();
    let work = Arc::new(WorkTable::default());
    let mut inner = cx.clone();
    inner.bind_recursive(name, RecursiveName::Work(Arc::clone(&work), names.clone(), types.clone()));
    let step = compile(right, &inner)?;
    if !work.read.load(Ordering::Relaxed) {
        return Ok(None);
    }
    check_step_types(name, &types, &step)?;
    Ok(Some(RecursiveCte { names, types, anchor, step, work, all }))
}

/// The recursive term's columns: as many as the non-recursive term's, each
/// of a type whose common type with it is its type (`42804`), as
/// PostgreSQL checks.
fn check_step_types(name: &str, types: &[SqlType], step: &SelectPlan) -> Result<(), SqlError> {
    let got = &step.out_types[..step.fields.len()];
    if got.len() != types.len() {
        return Err(SqlError::new(SqlState::SYNTAX_ERROR, "each UNION query must have the same number of columns"));
    }
    for (i, (want, t)) in types.iter().zip(got).enumerate() {
        if crate::expr::common_type(*want, *t) != Some(*want) {
            return Err(SqlError::new(
                SqlState::DATATYPE_MISMATCH,
                format!(
                    "recursive query \"{name}\" column {} has type {} in non-recursive term but type {} overall",
                    i + 1,
                    want.name(),
                    crate::expr::common_type(*want, *t).unwrap_or(*t).name()
                ),
            ));
        }
    }
    Ok(())
}

impl RecursiveCte {
    /// Runs the recursion (see the module header).
    pub fn rows(&self, run: &mut Run<'_>) -> Result<Vec<Vec<Datum>>, SqlError> {
        let mut seen: HashSet<Vec<Datum>> = HashSet::new();
        let mut out = Vec::new();
        let mut working = self.term_rows(&self.anchor, run)?;
        if !self.all {
            working.retain(|r| seen.insert(r.clone()));
        }
        while !working.is_empty() {
            check_cancel(run.env.services)?;
            out.extend(working.iter().cloned());
            self.work.set(working);
            let mut next = self.term_rows(&self.step, run)?;
            if !self.all {
                next.retain(|r| seen.insert(r.clone()));
            }
            working = next;
        }
        self.work.set(Vec::new());
        Ok(out)
    }

    /// One term's rows, cut to the CTE's columns and cast to its types.
    fn term_rows(&self, term: &SelectPlan, run: &mut Run<'_>) -> Result<Vec<Vec<Datum>>, SqlError> {
        let mut rows = term.run_values(&mut run.nested())?;
        let from = &term.out_types[..self.types.len()];
        for r in &mut rows {
            r.truncate(self.types.len());
            for ((d, f), t) in r.iter_mut().zip(from).zip(&self.types) {
                if f != t && !d.is_null() {
                    let v = std::mem::replace(d, Datum::Null);
                    *d = crate::expr::cast_datum(v, *f, *t)?;
                }
            }
        }
        Ok(rows)
    }
}
