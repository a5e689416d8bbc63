//! WHERE and ON conditions, taken apart: their AND-ed conjuncts, the
//! column references and column equalities in them, and the
//! `column = value` conjuncts the engine can filter on itself (so that
//! they reach its index scans) instead of this layer evaluating them.

use super::compiler;
use crate::error::SqlError;
use crate::expr::{ident_name, Expr, Scope};
use crate::value::SqlType;
use sqlparser::ast;

/// Splits a condition into its AND-ed parts.
pub(super) fn conjuncts(e: &ast::Expr, out: &mut Vec<ast::Expr>) {
    match e {
        ast::Expr::BinaryOp { left, op: ast::BinaryOperator::And, right } => {
            conjuncts(left, out);
            conjuncts(right, out);
        }
        ast::Expr::Nested(x) if matches!(**x, ast::Expr::BinaryOp { op: ast::BinaryOperator::And, .. }) => {
            conjuncts(x, out)
        }
        other => out.push(other.clone()),
    }
}

/// The AND of `parts` (`None` when there are none).
pub(super) fn and_all(parts: Vec<Expr>) -> Option<Expr> {
    parts.into_iter().reduce(|a, b| Expr::And(Box::new(a), Box::new(b)))
}

/// The scope column `e` names (`c`, `t.c`), if it is a plain column.
pub(super) fn column_ref(scope: &Scope, e: &ast::Expr) -> Option<usize> {
    match e {
        ast::Expr::Identifier(i) => scope.resolve(None, &ident_name(i)).ok(),
        ast::Expr::CompoundIdentifier(p) if p.len() == 2 => {
            scope.resolve(Some(&ident_name(&p[0])), &ident_name(&p[1])).ok()
        }
        ast::Expr::Nested(x) => column_ref(scope, x),
        _ => None,
    }
}

/// `a = b` between two columns: their scope positions.
pub(super) fn equi_columns(scope: &Scope, e: &ast::Expr) -> Option<(usize, usize)> {
    match e {
        ast::Expr::Nested(x) => equi_columns(scope, x),
        ast::Expr::BinaryOp { left, op: ast::BinaryOperator::Eq, right } => {
            Some((column_ref(scope, left)?, column_ref(scope, right)?))
        }
        _ => None,
    }
}

/// `col = <row-independent expr>` (either side): the column and the value.
pub(super) fn pushable(
    scope: &Scope,
    e: &ast::Expr,
    params: &mut Vec<SqlType>,
) -> Result<Option<(usize, Expr)>, SqlError> {
    let (l, r) = match e {
        ast::Expr::Nested(x) => return pushable(scope, x, params),
        ast::Expr::BinaryOp { left, op: ast::BinaryOperator::Eq, right } => (left, right),
        _ => return Ok(None),
    };
    let (col, other) = match (column_ref(scope, l), column_ref(scope, r)) {
        (Some(c), None) => (c, r),
        (None, Some(c)) => (c, l),
        _ => return Ok(None),
    };
    let ty = scope.cols[col].ty;
    if ty.to_column().is_err() {
        return Ok(None);
    }
    let empty = Scope::default();
    // Compile against an empty scope: fails (→ not pushable) if it reads a column.
    let mut trial = params.clone();
    let compiled = compiler(&empty, &mut trial, None).compile(other, Some(ty));
    match compiled {
        Ok((x, t))
            if x.is_row_independent()
                && (t == ty
                    || (t.is_integer() && ty.is_integer())
                    || t == SqlType::Unknown
                    || (t.is_string() && ty.is_string())) =>
        {
            let x = match x {
                // A constant the column's type cannot hold (`int4_col =
                // 5000000000`, a string longer than `varchar(n)`) matches
                // no row, but is not an error: the comparison stays here.
                Expr::Const(d) => match d.cast(ty) {
                    Ok(v) => Expr::Const(v),
                    Err(_) => return Ok(None),
                },
                x => x,
            };
            *params = trial;
            Ok(Some((col, x)))
        }
        _ => Ok(None),
    }
}
