//! An upsert's arbiter indexes: the unique indexes of the target table
//! with their keys — columns, and expressions compiled over the table's
//! columns — and their inference from `ON CONFLICT (element, …)` as
//! PostgreSQL's `infer_arbiter_indexes` does it: an index is inferred
//! when its key parts are exactly the elements named, a column by its
//! number, an expression by its text ([`crate::index_expr::normalize`]d,
//! as the catalog keeps index expressions).

use super::{Catalog, TableDef};
use crate::conflict_target::inference_expression;
use crate::error::SqlError;
use crate::expr::{ident_name, EvalEnv, Expr};
use crate::value::{Datum, SqlType};
use sqlparser::ast;
use turnstile_engine::catalog::{IndexDef, KeyPartDef};
use turnstile_engine::query::{Col, Operand, Query};
use turnstile_engine::types::{ColumnType, Value};
use turnstile_lock::SqlState;

/// A unique index an upsert decides on.
#[derive(Debug, Clone)]
pub struct Arbiter {
    /// The index (and constraint) name.
    pub name: String,
    /// Its key parts in key order.
    parts: Vec<Part>,
}

#[derive(Debug, Clone)]
enum Part {
    Column(usize),
    Expression { text: String, expr: Expr, ty: ColumnType },
}

pub(super) fn no_arbiter() -> SqlError {
    SqlError::new(
        SqlState::INVALID_COLUMN_REFERENCE,
        "there is no unique or exclusion constraint matching the ON CONFLICT specification",
    )
}

/// The unique indexes of table `def`, their expressions compiled.
pub(super) fn unique_indexes(cat: &Catalog<'_>, def: &TableDef) -> Result<Vec<Arbiter>, SqlError> {
    let snapshot = cat.session.engine().catalog().snapshot();
    let columns: Vec<(String, ColumnType)> = def.names.iter().cloned().zip(def.types.iter().copied()).collect();
    let mut out = Vec::new();
    for r in snapshot.indexes_of(def.oid) {
        let Some(ix) = r.index.as_ref().filter(|i| i.unique) else { continue };
        out.push(Arbiter { name: r.name.clone(), parts: parts_of(ix, &columns)? });
    }
    Ok(out)
}

fn parts_of(ix: &IndexDef, columns: &[(String, ColumnType)]) -> Result<Vec<Part>, SqlError> {
    ix.key_parts()
        .map(|p| match p {
            KeyPartDef::Column(c) => Ok(Part::Column(c)),
            KeyPartDef::Expression(e) => Ok(Part::Expression {
                text: e.sql.clone(),
                expr: crate::index_expr::compile_text(columns, &e.sql)?,
                ty: e.ty,
            }),
        })
        .collect()
}

/// The arbiter `ON CONFLICT (elements)` names among `all` (`42P10` when
/// none has exactly these key parts).
pub(super) fn infer(all: Vec<Arbiter>, def: &TableDef, elements: &[ast::Ident]) -> Result<Arbiter, SqlError> {
    let mut columns = Vec::new();
    let mut exprs = Vec::new();
    for e in elements {
        if let Some(text) = inference_expression(&e.value) {
            let ast = crate::parse::parse_expr(text)?;
            // Checked against the table's columns as the index's was.
            let cols: Vec<(String, ColumnType)> = def.names.iter().cloned().zip(def.types.iter().copied()).collect();
            crate::index_expr::compile_text(&cols, &ast.to_string())?;
            exprs.push(crate::index_expr::inference_text(&ast));
            continue;
        }
        let n = ident_name(e);
        let k = def
            .names
            .iter()
            .position(|x| *x == n)
            .ok_or_else(|| SqlError::new(SqlState::UNDEFINED_COLUMN, format!("column \"{n}\" does not exist")))?;
        columns.push(k);
    }
    let (columns, exprs) = (sorted(columns), sorted(exprs));
    all.into_iter().find(|a| a.inferred_by(&columns, &exprs)).ok_or_else(no_arbiter)
}

/// `v` sorted, without repeats.
fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort_unstable();
    v.dedup();
    v
}

impl Arbiter {
    /// Whether its key parts are exactly `columns` and `exprs` (sorted).
    fn inferred_by(&self, columns: &[usize], exprs: &[String]) -> bool {
        let mut mine_cols = Vec::new();
        let mut mine_exprs = Vec::new();
        for p in &self.parts {
            match p {
                Part::Column(c) => mine_cols.push(*c),
                Part::Expression { text, .. } => mine_exprs.push(text.clone()),
            }
        }
        sorted(mine_cols) == columns && sorted(mine_exprs) == exprs
    }

    /// Whether part of the key is an expression.
    fn has_expressions(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, Part::Expression { .. }))
    }

    /// The key of `row` on this index, `None` when a part of it is NULL:
    /// such a key never conflicts.
    pub(super) fn key_of(&self, row: &[Value], env: &mut EvalEnv<'_>) -> Result<Option<Vec<Value>>, SqlError> {
        let mut datums: Option<Vec<Datum>> = None;
        let mut key = Vec::with_capacity(self.parts.len());
        for p in &self.parts {
            let v = match p {
                Part::Column(c) => row.get(*c).cloned().unwrap_or(Value::Null),
                Part::Expression { expr, ty, .. } => {
                    let datums = datums.get_or_insert_with(|| row.iter().map(Datum::from_engine).collect());
                    expr.eval(datums, env)?.cast(SqlType::of_column(*ty))?.to_engine(*ty)?
                }
            };
            if matches!(v, Value::Null) {
                return Ok(None);
            }
            key.push(v);
        }
        Ok(Some(key))
    }

    /// The query finding the rows of `table` whose key is `key` (from
    /// [`Arbiter::key_of`]): column filters for a key of columns, else
    /// the engine's index-key filter. Whether it needs the engine's
    /// key probe ([`turnstile_engine::Session::select_by_key`]) rather
    /// than a planned query to be read.
    pub(super) fn probe(&self, table: &str, key: &[Value]) -> (Query, Vec<Value>, bool) {
        let q = Query::from(table.to_owned());
        if self.has_expressions() {
            let ops = (1..=key.len()).map(Operand::Param).collect();
            return (q.filter_index_key(self.name.clone(), ops), key.to_vec(), true);
        }
        let q = self.parts.iter().enumerate().fold(q, |q, (i, p)| match p {
            Part::Column(c) => q.filter(Col::at(0, *c), Operand::Param(i + 1)),
            Part::Expression { .. } => q,
        });
        (q, key.to_vec(), false)
    }
}

/// A key as the command's set of touched keys holds it.
pub(super) fn key_text(key: &[Value]) -> Vec<String> {
    key.iter().map(Value::to_string).collect()
}
