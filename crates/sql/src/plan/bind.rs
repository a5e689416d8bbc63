//! Binding a SELECT, in PostgreSQL's order (`transformSelectStmt`): FROM
//! (`from.rs`, with what the engine can filter), WHERE (`predicate.rs`),
//! the target list (`target.rs`), GROUP BY and HAVING (`group.rs`), ORDER
//! BY and LIMIT/OFFSET (`order.rs`). The result is a [`SelectPlan`] whose
//! names are all resolved.

use super::from::{bind_from, from_list};
use super::group::{check_grouped, group_by, grouped_by_primary_key};
use super::order::{limit_offset, order_by};
use super::predicate::{and_all, conjuncts};
use super::target::select_list;
use super::{compiler, Catalog, SelectPlan};
use crate::error::SqlError;
use crate::expr::Scope;
use crate::value::SqlType;
use sqlparser::ast;

/// Compiles a SELECT (`query` must be a plain SELECT, VALUES not supported),
/// in PostgreSQL's order: FROM (and what the engine can filter), WHERE, the
/// select list, GROUP BY and HAVING, ORDER BY, LIMIT/OFFSET.
pub fn compile_select(cat: &Catalog<'_>, q: &ast::Query, params: &mut Vec<SqlType>) -> Result<SelectPlan, SqlError> {
    let sel = select_body(q)?;
    let items = from_list(cat, sel)?;
    let mut scope = Scope::default();
    let mut where_parts = Vec::new();
    if let Some(w) = &sel.selection {
        conjuncts(w, &mut where_parts);
    }
    let (source, residual) = bind_from(&items, &mut scope, where_parts, params)?;
    let mut c = compiler(&scope, params, None);
    let residual = and_all(residual.iter().map(|p| c.boolean(p)).collect::<Result<Vec<_>, _>>()?);
    let mut aggs = Vec::new();
    let mut out = select_list(sel, &scope, params, &mut aggs)?;
    let group_by = group_by(sel, &scope, params, &out)?;
    let having = match &sel.having {
        Some(h) => Some(compiler(&scope, params, Some(&mut aggs)).boolean(h)?),
        None => None,
    };
    let order = order_by(q, &scope, params, &mut aggs, &mut out)?;
    let grouped = !group_by.is_empty() || !aggs.is_empty() || having.is_some();
    if grouped {
        let dependent = grouped_by_primary_key(cat, &group_by, &scope);
        for x in out.outputs.iter().chain(having.iter()) {
            check_grouped(x, &group_by, &scope, &dependent)?;
        }
    }
    let distinct = match &sel.distinct {
        None => false,
        Some(ast::Distinct::Distinct) => true,
        Some(_) => return Err(SqlError::unsupported("DISTINCT ON")),
    };
    let (limit, offset) = limit_offset(q, params)?;
    Ok(SelectPlan {
        source,
        scope,
        residual,
        aggs,
        group_by,
        grouped,
        having,
        outputs: out.outputs,
        out_types: out.out_types,
        fields: out.fields.into(),
        order,
        distinct,
        limit,
        offset,
    })
}

/// The plain SELECT inside `q`, or `0A000` for what turnstile does not run.
fn select_body(q: &ast::Query) -> Result<&ast::Select, SqlError> {
    if q.with.is_some() {
        return Err(SqlError::unsupported("WITH"));
    }
    if !q.locks.is_empty() {
        return Err(SqlError::unsupported("SELECT … FOR UPDATE/SHARE"));
    }
    if q.fetch.is_some() {
        return Err(SqlError::unsupported("FETCH FIRST"));
    }
    match q.body.as_ref() {
        ast::SetExpr::Select(s) => Ok(s),
        ast::SetExpr::Values(_) => Err(SqlError::unsupported("a VALUES list as a query")),
        ast::SetExpr::SetOperation { .. } => Err(SqlError::unsupported("UNION/INTERSECT/EXCEPT")),
        other => Err(SqlError::unsupported(&format!("the query {other}"))),
    }
}
