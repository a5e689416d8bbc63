//! `CREATE INDEX`'s expression parts: checked and described
//! (PostgreSQL's `ComputeIndexAttrs` and `FigureColname`).

use super::normalize;
use crate::error::SqlError;
use crate::expr::{Compiler, Expr, FuncDef, Scope, ScopeCol};
use crate::value::SqlType;
use sqlparser::ast;
use turnstile_engine::catalog::IndexExpression;
use turnstile_engine::types::ColumnType;
use turnstile_lock::SqlState;

/// The scope of an index expression: the table's columns, in order.
pub(super) fn scope_of(table: &str, columns: &[(String, ColumnType)]) -> Scope {
    let cols = columns
        .iter()
        .enumerate()
        .map(|(i, (name, ty))| ScopeCol {
            qual: table.to_owned(),
            name: name.clone(),
            ty: SqlType::of_column(*ty),
            table_oid: 0,
            attnum: i16::try_from(i + 1).unwrap_or(i16::MAX),
        })
        .collect();
    Scope { cols, ..Scope::default() }
}

/// Compiles index expression `e` over `scope` (no parameters, no
/// aggregates): the expression and its type.
pub(super) fn compile(scope: &Scope, e: &ast::Expr) -> Result<(Expr, SqlType), SqlError> {
    let mut params = Vec::new();
    let (x, ty) = Compiler { scope, params: &mut params, aggs: None }.compile(e, None)?;
    if !params.is_empty() {
        return Err(SqlError::new(SqlState::UNDEFINED_PARAMETER, "there is no parameter $1"));
    }
    Ok((x, ty))
}

/// Compiles index expression text `sql` over a row of `columns`.
pub(crate) fn compile_text(columns: &[(String, ColumnType)], sql: &str) -> Result<Expr, SqlError> {
    let ast = crate::parse::parse_expr(sql)?;
    compile(&scope_of("", columns), &ast).map(|(x, _)| x)
}

/// Checks index expression `e` of table `table` (whose columns are
/// `columns`) and describes it for the catalog: its text, the index
/// column's name (the function's name, else `expr`) and its type.
pub(crate) fn define(
    table: &str,
    columns: &[(String, ColumnType)],
    e: &ast::Expr,
) -> Result<IndexExpression, SqlError> {
    let scope = scope_of(table, columns);
    let (x, ty) = compile(&scope, e)?;
    if let Some(what) = not_immutable(&x) {
        return Err(SqlError::new(
            SqlState::INVALID_OBJECT_DEFINITION,
            format!("{what} in index expression must be marked IMMUTABLE"),
        ));
    }
    let name = match e {
        ast::Expr::Function(f) => {
            normalize(&f.name.0.last().map_or_else(String::new, |p| p.to_string())).trim_matches('"').to_owned()
        }
        _ => "expr".to_owned(),
    };
    Ok(IndexExpression { sql: inference_text(e), name, ty: ty.to_column()? })
}

/// The text an expression is kept and compared as: a function call as
/// written, anything else in parentheses (as `pg_get_indexdef` shows
/// them), both [`normalize`]d.
pub(crate) fn inference_text(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Function(_) => normalize(&e.to_string()),
        ast::Expr::Nested(inner) => inference_text(inner),
        other => normalize(&format!("({other})")),
    }
}

/// What makes `x` unfit for an index: a function that is not
/// `IMMUTABLE`, a subquery, an aggregate or a parameter; `None` when it
/// is fit.
fn not_immutable(x: &Expr) -> Option<&'static str> {
    let func = |f: &FuncDef| (f.volatility != crate::expr::functions::Volatility::Immutable).then_some("functions");
    match x {
        Expr::Col(_) | Expr::Const(_) => None,
        Expr::Param(_) | Expr::Outer(_) => Some("parameters"),
        Expr::Agg(_) => Some("aggregate functions"),
        Expr::SubLink(_) => Some("subqueries"),
        Expr::Func(f, args) => func(f).or_else(|| args.iter().find_map(not_immutable)),
        Expr::Bin(_, _, a, b) | Expr::And(a, b) | Expr::Or(a, b) | Expr::Like(a, b, _) => {
            not_immutable(a).or_else(|| not_immutable(b))
        }
        Expr::Not(a) | Expr::Neg(a, _) | Expr::IsNull(a, _) | Expr::IsBool(a, _, _) | Expr::Cast(a, _, _) => {
            not_immutable(a)
        }
        Expr::InList(a, l, _) => not_immutable(a).or_else(|| l.iter().find_map(not_immutable)),
        Expr::Array(l) => l.iter().find_map(not_immutable),
        Expr::Regex(m) => not_immutable(&m.x).or_else(|| not_immutable(&m.pattern)),
        Expr::Quantified(_, _, _, a, b, _) => not_immutable(a).or_else(|| not_immutable(b)),
        Expr::Case(operand, arms, other) => operand
            .as_deref()
            .and_then(not_immutable)
            .or_else(|| arms.iter().find_map(|(w, t)| not_immutable(w).or_else(|| not_immutable(t))))
            .or_else(|| other.as_deref().and_then(not_immutable)),
    }
}
