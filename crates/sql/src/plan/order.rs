//! ORDER BY, LIMIT and OFFSET: sort keys as output positions (a key that
//! is not a visible output becomes a hidden one, as PostgreSQL's resjunk
//! target entries), and the row counts as `int8` expressions.

use super::compiler;
use super::target::Outputs;
use crate::error::SqlError;
use crate::expr::{ident_name, AggSpec, Expr, Scope};
use crate::value::{Datum, SqlType};
use sqlparser::ast;
use turnstile_lock::SqlState;

/// ORDER BY: sort keys as (output index, descending, nulls first); a key
/// that is not a visible output is added as a hidden one.
pub(super) fn order_by(
    q: &ast::Query,
    scope: &Scope,
    params: &mut Vec<SqlType>,
    aggs: &mut Vec<AggSpec>,
    out: &mut Outputs,
) -> Result<Vec<(usize, bool, bool)>, SqlError> {
    let Some(ob) = &q.order_by else { return Ok(Vec::new()) };
    let exprs = match &ob.kind {
        ast::OrderByKind::Expressions(e) => e,
        ast::OrderByKind::All(_) => return Err(SqlError::unsupported("ORDER BY ALL")),
    };
    let visible = out.outputs.len();
    let mut order = Vec::new();
    for o in exprs {
        let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
        let nulls_first = o.options.nulls_first.unwrap_or(desc);
        let idx = match &o.expr {
            ast::Expr::Value(v) if matches!(v.value, ast::Value::Number(..)) => {
                let k: usize = v.value.to_string().parse().unwrap_or(0);
                if k == 0 || k > visible {
                    return Err(SqlError::new(
                        SqlState::INVALID_COLUMN_REFERENCE,
                        format!("ORDER BY position {k} is not in select list"),
                    ));
                }
                k - 1
            }
            ast::Expr::Identifier(i) if out.fields.iter().any(|f| f.name == ident_name(i)) => {
                let n = ident_name(i);
                out.fields.iter().position(|f| f.name == n).unwrap_or(0)
            }
            e => {
                let (x, t) = compiler(scope, params, Some(aggs)).compile(e, None)?;
                out.outputs.push(x);
                out.out_types.push(t);
                out.outputs.len() - 1
            }
        };
        order.push((idx, desc, nulls_first));
    }
    Ok(order)
}

/// LIMIT and OFFSET, as `int8` expressions.
pub(super) fn limit_offset(
    q: &ast::Query,
    params: &mut Vec<SqlType>,
) -> Result<(Option<Expr>, Option<Expr>), SqlError> {
    let empty = Scope::default();
    if let Some(f) = &q.fetch {
        if f.percent || f.with_ties {
            return Err(SqlError::unsupported("FETCH FIRST … PERCENT or WITH TIES"));
        }
        if matches!(q.limit_clause, Some(ast::LimitClause::LimitOffset { limit: Some(_), .. })) {
            return Err(SqlError::new(SqlState::SYNTAX_ERROR, "multiple LIMIT clauses not allowed"));
        }
        let mut c = compiler(&empty, params, None);
        // FETCH FIRST ROW ONLY (no count) is one row.
        let l = match &f.quantity {
            Some(n) => c.compile(n, Some(SqlType::Int8))?.0,
            None => Expr::Const(Datum::Int(1)),
        };
        let o = match &q.limit_clause {
            Some(ast::LimitClause::LimitOffset { offset: Some(o), .. }) => {
                Some(c.compile(&o.value, Some(SqlType::Int8))?.0)
            }
            _ => None,
        };
        return Ok((Some(l), o));
    }
    match &q.limit_clause {
        None => Ok((None, None)),
        Some(ast::LimitClause::LimitOffset { limit, offset, limit_by }) => {
            if !limit_by.is_empty() {
                return Err(SqlError::unsupported("LIMIT BY"));
            }
            let mut c = compiler(&empty, params, None);
            let l = limit.as_ref().map(|l| c.compile(l, Some(SqlType::Int8)).map(|x| x.0)).transpose()?;
            let o = offset.as_ref().map(|o| c.compile(&o.value, Some(SqlType::Int8)).map(|x| x.0)).transpose()?;
            Ok((l, o))
        }
        Some(ast::LimitClause::OffsetCommaLimit { .. }) => Err(SqlError::unsupported("LIMIT a, b")),
    }
}

pub(crate) use crate::value::compare_key;
