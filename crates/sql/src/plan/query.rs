//! A query expression as a tree of [`SelectPlan`]s (PostgreSQL's
//! `transformStmt` → `transformSetOperationStmt` / `transformSelectStmt`):
//! `WITH` lists, set operations (`UNION`/`INTERSECT`/`EXCEPT [ALL]`),
//! parenthesised queries, `ORDER BY`/`LIMIT`/`FETCH FIRST` around them,
//! and what a query level hands to the queries nested in it
//! ([`QueryCx`]: the common table expressions in view and the enclosing
//! level, for correlated references).
//!
//! A set operation compiles to a [`SelectPlan`] whose input is one
//! [`Producer::SetOp`] and whose outputs are its columns: the `ORDER BY`
//! and `LIMIT` written after the last branch sort and cut the combined
//! rows, exactly as for any other select. A common table expression is
//! planned where it is read, as a subquery in `FROM` (non-recursive `WITH`
//! is inlined, as PostgreSQL 12+ does for a CTE read once without side
//! effects); a recursive one (`WITH RECURSIVE`) is compiled once, where
//! it is defined (`recursive.rs`).

use super::dml_cte::compile_dml;
use super::recursive::{compile_recursive, RecursiveName};
use super::setop::{SetOpKind, SetOpPlan};
use super::target::{field, Outputs};
use super::{Catalog, Producer, QueryCx, RowItem, SelectPlan, Source};
use crate::error::SqlError;
use crate::expr::{ident_name, Scope, ScopeCol};
use crate::value::SqlType;
use sqlparser::ast;
use std::sync::Arc;
use turnstile_lock::SqlState;

/// Compiles a query (a SELECT, a set operation, with its WITH list) in
/// PostgreSQL's order: FROM (and what the engine can filter), WHERE, the
/// select list, GROUP BY and HAVING, ORDER BY, LIMIT/OFFSET.
pub fn compile_select(cat: &Catalog<'_>, q: &ast::Query, params: &mut Vec<SqlType>) -> Result<SelectPlan, SqlError> {
    compile_query(cat, q, params, &QueryCx::default())
}

/// Compiles a query expression: its `WITH` list, then its body (a SELECT,
/// a set operation or a parenthesised query) with the `ORDER BY`, `LIMIT`
/// and `FETCH FIRST` written around it.
pub fn compile_query(
    cat: &Catalog<'_>,
    q: &ast::Query,
    params: &mut Vec<SqlType>,
    cx: &QueryCx,
) -> Result<SelectPlan, SqlError> {
    let mut inner = cx.clone();
    let mut dml = Vec::new();
    if let Some(with) = &q.with {
        for cte in &with.cte_tables {
            let name = ident_name(&cte.alias.name);
            inner.recursive.retain(|(n, _)| *n != name);
            if let Some(d) = compile_dml(cat, &cte.query.body, params, &inner)? {
                dml.push(Arc::clone(&d));
                inner.dml.push((name, d));
                continue;
            }
            let cols: Vec<String> = cte.alias.columns.iter().map(|c| ident_name(&c.name)).collect();
            if with.recursive {
                let compiled =
                    compile_recursive(&name, &cols, &cte.query, &inner, |term, cx| branch(cat, term, params, cx))?;
                if let Some(r) = compiled {
                    inner.bind_recursive(&name, RecursiveName::Cte(Arc::new(r)));
                    continue;
                }
            }
            inner.ctes.push((name, cols, Arc::new((*cte.query).clone())));
        }
    }
    let main = compile_dml(cat, &q.body, params, &inner)?;
    if main.is_some() || !dml.is_empty() {
        let body = match &main {
            Some(m) => {
                dml.push(Arc::clone(m));
                let mut scope = Scope::default();
                for (f, t) in m.fields().iter().zip(m.types()) {
                    scope.cols.push(ScopeCol {
                        qual: String::new(),
                        name: f.name.clone(),
                        ty: *t,
                        table_oid: 0,
                        attnum: 0,
                    });
                }
                over_rows(Producer::Dml(Arc::clone(m)), scope)
            }
            None => compile_body(cat, q, params, &inner)?,
        };
        let mut scope = Scope::default();
        for (f, t) in body.fields.iter().zip(&body.out_types) {
            scope.cols.push(ScopeCol { qual: String::new(), name: f.name.clone(), ty: *t, table_oid: 0, attnum: 0 });
        }
        return Ok(over_rows(Producer::WithDml { body: Box::new(body), ctes: dml }, scope));
    }
    compile_body(cat, q, params, &inner)
}

/// The body of `q` (its WITH list already in `inner`).
fn compile_body(
    cat: &Catalog<'_>,
    q: &ast::Query,
    params: &mut Vec<SqlType>,
    inner: &QueryCx,
) -> Result<SelectPlan, SqlError> {
    match q.body.as_ref() {
        ast::SetExpr::Select(sel) => match super::shorthand::set_function_query(sel)? {
            Some(body) => {
                let rewritten = ast::Query { with: None, body: body.body, ..q.clone() };
                compile_query(cat, &rewritten, params, inner)
            }
            None => super::bind::compile_select_in(cat, q, sel, params, inner),
        },
        ast::SetExpr::SetOperation { .. } | ast::SetExpr::Query(_) => {
            let body = branch(cat, &q.body, params, inner)?;
            around(q, body, params)
        }
        ast::SetExpr::Values(v) => {
            let body = super::shorthand::values_query(v)?;
            compile_query(cat, &ast::Query { with: None, body: body.body, ..q.clone() }, params, inner)
        }
        other => Err(SqlError::unsupported(&format!("the query {other}"))),
    }
}

/// One operand of a set operation, compiled.
fn branch(
    cat: &Catalog<'_>,
    e: &ast::SetExpr,
    params: &mut Vec<SqlType>,
    cx: &QueryCx,
) -> Result<SelectPlan, SqlError> {
    match e {
        ast::SetExpr::Select(_) => compile_query(cat, &bare_query(e.clone()), params, cx),
        ast::SetExpr::Query(q) => compile_query(cat, q, params, cx),
        ast::SetExpr::SetOperation { left, op, set_quantifier, right } => {
            let kind = match op {
                ast::SetOperator::Union => SetOpKind::Union,
                ast::SetOperator::Intersect => SetOpKind::Intersect,
                ast::SetOperator::Except => SetOpKind::Except,
                ast::SetOperator::Minus => return Err(SqlError::unsupported("MINUS")),
            };
            let all = match set_quantifier {
                ast::SetQuantifier::All => true,
                ast::SetQuantifier::Distinct | ast::SetQuantifier::None => false,
                other => return Err(SqlError::unsupported(&format!("{op} {other}"))),
            };
            let left = branch(cat, left, params, cx)?;
            let right = branch(cat, right, params, cx)?;
            set_operation(kind, all, left, right)
        }
        ast::SetExpr::Values(v) => compile_query(cat, &super::shorthand::values_query(v)?, params, cx),
        other => Err(SqlError::unsupported(&format!("the query {other}"))),
    }
}

/// A query of `body` alone: no WITH, ORDER BY or LIMIT.
fn bare_query(body: ast::SetExpr) -> ast::Query {
    ast::Query {
        with: None,
        body: Box::new(body),
        order_by: None,
        limit_clause: None,
        fetch: None,
        locks: Vec::new(),
        for_clause: None,
        settings: None,
        format_clause: None,
        pipe_operators: Vec::new(),
    }
}

/// The set operation `left kind right`: column counts must agree; each
/// column's type is the two branches' common type (`42804` when there is
/// none), as PostgreSQL's `select_common_type`.
fn set_operation(kind: SetOpKind, all: bool, left: SelectPlan, right: SelectPlan) -> Result<SelectPlan, SqlError> {
    let (lt, rt) = (&left.out_types[..left.fields.len()], &right.out_types[..right.fields.len()]);
    if lt.len() != rt.len() {
        return Err(SqlError::new(
            SqlState::SYNTAX_ERROR,
            format!("each {} query must have the same number of columns", kind.name()),
        ));
    }
    let mut types = Vec::with_capacity(lt.len());
    for (a, b) in lt.iter().zip(rt) {
        types.push(crate::expr::common_type(*a, *b).ok_or_else(|| {
            SqlError::new(
                SqlState::DATATYPE_MISMATCH,
                format!("{} types {} and {} cannot be matched", kind.name(), a.name(), b.name()),
            )
        })?);
    }
    let names: Vec<String> = left.fields.iter().map(|f| f.name.clone()).collect();
    let plan = SetOpPlan { kind, all, left, right, types: types.clone() };
    let mut scope = Scope::default();
    for (n, t) in names.iter().zip(&types) {
        scope.cols.push(ScopeCol { qual: String::new(), name: n.clone(), ty: *t, table_oid: 0, attnum: 0 });
    }
    Ok(over_rows(Producer::SetOp(Box::new(plan)), scope))
}

/// `SELECT * FROM <producer>` over `scope` (the producer's columns): every
/// column an output, no filter, grouping or order yet.
pub(super) fn over_rows(producer: Producer, scope: Scope) -> SelectPlan {
    let width = scope.cols.len();
    let out_types: Vec<SqlType> = scope.cols.iter().map(|c| c.ty).collect();
    let fields: Vec<_> = scope.cols.iter().map(|c| field(&c.name, c.ty)).collect();
    SelectPlan {
        source: Source::Rows(vec![RowItem { producer, width, on: None, left: false, filter: None }]),
        outputs: (0..width).map(crate::expr::Expr::Col).collect(),
        scope,
        residual: None,
        aggs: Vec::new(),
        group_by: Vec::new(),
        grouped: false,
        windows: Vec::new(),
        having: None,
        out_types,
        fields: fields.into(),
        order: Vec::new(),
        distinct: false,
        limit: None,
        offset: None,
    }
}

/// The `ORDER BY`, `LIMIT`/`OFFSET` and `FETCH FIRST` of `q` applied to
/// `body` (a set operation or a parenthesised query): a select over its
/// rows when `q` has any of them, else `body` itself.
fn around(q: &ast::Query, body: SelectPlan, params: &mut Vec<SqlType>) -> Result<SelectPlan, SqlError> {
    if q.order_by.is_none() && q.limit_clause.is_none() && q.fetch.is_none() {
        return Ok(body);
    }
    let mut scope = Scope::default();
    for (f, t) in body.fields.iter().zip(&body.out_types) {
        scope.cols.push(ScopeCol { qual: String::new(), name: f.name.clone(), ty: *t, table_oid: 0, attnum: 0 });
    }
    let mut plan = over_rows(Producer::Query(Box::new(body)), scope);
    let mut out = Outputs {
        outputs: std::mem::take(&mut plan.outputs),
        out_types: std::mem::take(&mut plan.out_types),
        fields: plan.fields.to_vec(),
        proj_ast: vec![None; plan.scope.cols.len()],
    };
    let mut aggs = Vec::new();
    plan.order = super::order::order_by(q, &plan.scope, params, &mut aggs, &mut out)?;
    if !aggs.is_empty() {
        return Err(SqlError::new(SqlState::GROUPING_ERROR, "aggregate functions are not allowed in ORDER BY here"));
    }
    (plan.limit, plan.offset) = super::order::limit_offset(q, params)?;
    plan.outputs = out.outputs;
    plan.out_types = out.out_types;
    Ok(plan)
}
