//! Planning the subqueries of a query level's expressions, before those
//! expressions are compiled (PostgreSQL plans a `SubLink` into a `SubPlan`
//! the same way, bottom-up): each subquery found in the select list,
//! WHERE, GROUP BY, HAVING or ORDER BY is compiled as a query of its own
//! whose enclosing level is this one, and stored in the level's
//! [`Scope::subqueries`] for the expression compiler to find. A
//! [`SelectPlan`] is itself the [`SubqueryPlan`] an expression runs.
//!
//! Planning reads the catalog only: no lock is taken until the subquery
//! runs, so the seed queries (which have none) plan and lock as before.

use super::{compile_query, CacheMode, Catalog, QueryCx, Run, SelectPlan};
use crate::error::SqlError;
use crate::expr::{EvalEnv, OuterScope, PlannedSubquery, Scope, SubqueryPlan};
use crate::value::{Datum, SqlType};
use sqlparser::ast;
use std::sync::Arc;

impl SubqueryPlan for SelectPlan {
    fn types(&self) -> &[SqlType] {
        &self.out_types[..self.fields.len()]
    }

    fn rows(&self, env: &mut EvalEnv<'_>) -> Result<Vec<Vec<Datum>>, SqlError> {
        let mut run = Run {
            env: EvalEnv {
                params: env.params,
                aggs: &[],
                services: &mut *env.services,
                outer: env.outer,
                session: env.session.as_deref_mut(),
            },
            cache_mode: CacheMode::ForceCustom,
            one_shot: true,
        };
        self.run_values(&mut run)
    }
}

/// Plans every subquery of `exprs` for `scope` (complete: FROM is bound),
/// adding each to `scope.subqueries`.
pub(super) fn plan_subqueries<'e>(
    cat: &Catalog<'_>,
    exprs: impl Iterator<Item = &'e ast::Expr>,
    scope: &mut Scope,
    params: &mut Vec<SqlType>,
    cx: &QueryCx,
) -> Result<(), SqlError> {
    let mut found = Vec::new();
    for e in exprs {
        collect(e, &mut found);
    }
    for q in found {
        if scope.subqueries.iter().any(|p| p.query == *q) {
            continue;
        }
        let outer = Arc::new(OuterScope {
            cols: scope.cols.clone(),
            parent: scope.outer.clone(),
            captures: Default::default(),
        });
        let inner = QueryCx { outer: Some(Arc::clone(&outer)), ..cx.clone() };
        let plan = compile_query(cat, q, params, &inner)?;
        let captures = outer.take_captures();
        scope.subqueries.push(PlannedSubquery { query: q.clone(), plan: Arc::new(plan), captures });
    }
    Ok(())
}

/// The subqueries directly in `e` (not those nested in them: each is
/// planned with its own level).
fn collect<'e>(e: &'e ast::Expr, out: &mut Vec<&'e ast::Query>) {
    super::walk::walk(e, &mut |x| {
        match x {
            ast::Expr::Subquery(q)
            | ast::Expr::Exists { subquery: q, .. }
            | ast::Expr::In { target: ast::InTarget::Subquery(q), .. } => out.push(q),
            ast::Expr::Function(f) => {
                if let ast::FunctionArguments::Subquery(q) = &f.args {
                    out.push(q);
                }
            }
            _ => {}
        }
        !matches!(x, ast::Expr::Subquery(_) | ast::Expr::Exists { .. })
    });
}
