//! Binding a SELECT, in PostgreSQL's order (`transformSelectStmt`): FROM
//! (`from.rs`, with what the engine can filter), WHERE (`predicate.rs`),
//! the target list (`target.rs`), GROUP BY and HAVING (`group.rs`), ORDER
//! BY and LIMIT/OFFSET (`order.rs`). The result is a [`SelectPlan`] whose
//! names are all resolved.

use super::from::{bind_from, from_list};
use super::group::{check_grouped, group_by, grouped_by_primary_key};
use super::order::{limit_offset, order_by};
use super::predicate::{and_all, conjuncts};
use super::pushdown::push_filters;
use super::sublink::plan_subqueries;
use super::target::select_list;
use super::window::plan_windows;
use super::{compiler, Catalog, QueryCx, SelectPlan};
use crate::error::SqlError;
use crate::expr::Scope;
use crate::value::SqlType;
use sqlparser::ast;

/// Compiles the plain SELECT `sel` of `q` (its ORDER BY and LIMIT
/// included) at a query level whose nested queries see `cx`.
pub(super) fn compile_select_in(
    cat: &Catalog<'_>,
    q: &ast::Query,
    sel: &ast::Select,
    params: &mut Vec<SqlType>,
    cx: &QueryCx,
) -> Result<SelectPlan, SqlError> {
    check_clauses(q)?;
    let (items, merges) = from_list(cat, &sel.from, params, cx)?;
    let mut scope = Scope { outer: cx.outer.clone(), ..Scope::default() };
    let mut where_parts = Vec::new();
    if let Some(w) = &sel.selection {
        conjuncts(w, &mut where_parts);
    }
    let (mut source, residual) = bind_from(items, &mut scope, where_parts, params)?;
    merges.apply(&mut scope)?;
    plan_subqueries(cat, level_exprs(q, sel), &mut scope, params, cx)?;
    let windows = plan_windows(window_exprs(q, sel), &mut scope, params)?;
    let mut c = compiler(&scope, params, None);
    let conjuncts = residual.iter().map(|p| c.boolean(p)).collect::<Result<Vec<_>, _>>()?;
    let residual = and_all(push_filters(&mut source, conjuncts));
    let mut aggs = Vec::new();
    let mut out = select_list(sel, &scope, params, &mut aggs)?;
    let group_by = group_by(sel, &scope, params, &out)?;
    let having = match &sel.having {
        Some(h) => Some(compiler(&scope, params, Some(&mut aggs)).boolean(h)?),
        None => None,
    };
    let order = order_by(q, &scope, params, &mut aggs, &mut out)?;
    let grouped = !group_by.is_empty() || !aggs.is_empty() || having.is_some();
    if grouped && !windows.is_empty() {
        return Err(SqlError::unsupported("window functions in a grouped query"));
    }
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
        windows,
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

/// `0A000` for the clauses of `q` turnstile does not run.
fn check_clauses(q: &ast::Query) -> Result<(), SqlError> {
    if !q.locks.is_empty() {
        return Err(SqlError::unsupported("SELECT … FOR UPDATE/SHARE"));
    }
    Ok(())
}

/// Every expression of one query level: the select list, WHERE, GROUP
/// BY, HAVING and ORDER BY.
fn level_exprs<'q>(q: &'q ast::Query, sel: &'q ast::Select) -> impl Iterator<Item = &'q ast::Expr> {
    let group = match &sel.group_by {
        ast::GroupByExpr::Expressions(e, _) => e.as_slice(),
        ast::GroupByExpr::All(_) => &[],
    };
    projection(sel).chain(sel.selection.iter()).chain(group.iter()).chain(sel.having.iter()).chain(order_exprs(q))
}

/// Where window functions may be called: the select list and ORDER BY.
fn window_exprs<'q>(q: &'q ast::Query, sel: &'q ast::Select) -> impl Iterator<Item = &'q ast::Expr> {
    projection(sel).chain(order_exprs(q))
}

fn projection(sel: &ast::Select) -> impl Iterator<Item = &ast::Expr> {
    sel.projection.iter().filter_map(|i| match i {
        ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => Some(e),
        _ => None,
    })
}

fn order_exprs(q: &ast::Query) -> impl Iterator<Item = &ast::Expr> {
    let order = match q.order_by.as_ref().map(|o| &o.kind) {
        Some(ast::OrderByKind::Expressions(e)) => e.as_slice(),
        _ => &[],
    };
    order.iter().map(|o| &o.expr)
}
