//! `unnest(array)` in the select list (`SELECT unnest(setconfig) FROM
//! pg_db_role_setting`, as pg_dump sends): PostgreSQL's `ProjectSet`.
//! Each input row gives as many output rows as its longest such array,
//! the other outputs repeated and a shorter array's column NULL past its
//! end (PostgreSQL 10+'s lockstep rule); a row whose arrays are all NULL
//! or empty gives none.
//!
//! The call compiles to [`Expr::Func`] of [`UNNEST_IN_SELECT`] over the
//! array; the projection ([`expand`]) evaluates the array itself. Anywhere
//! else — a grouped query's outputs, `FOR UPDATE`'s — evaluating it is
//! `0A000`, so a set-returning call never gives a wrong single value.

use crate::error::SqlError;
use crate::expr::functions::def::{Call, Eval, FuncDef};
use crate::expr::{object_name, Compiler, EvalEnv, Expr};
use crate::value::{Datum, SqlType};
use sqlparser::ast;
use turnstile_lock::SqlState;

/// `unnest(array)` as a select-list item (see the module header).
pub static UNNEST_IN_SELECT: FuncDef = FuncDef::custom(
    "unnest",
    |_, call: &Call<'_>| Err(call.no_such_arity()),
    Eval::Values(|_, _| Err(SqlError::unsupported("a set-returning function (unnest) here"))),
);

/// The argument of a select-list item that is `[pg_catalog.]unnest(x)`.
pub(super) fn unnest_arg(e: &ast::Expr) -> Option<&ast::Expr> {
    let ast::Expr::Function(f) = e else { return None };
    if object_name(&f.name).ok()? != "unnest" || f.over.is_some() || f.filter.is_some() {
        return None;
    }
    match &f.args {
        ast::FunctionArguments::List(l) if l.clauses.is_empty() && l.duplicate_treatment.is_none() => {
            match l.args.as_slice() {
                [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x))] => Some(x),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Compiles `unnest(arg)` in the select list: the call and the element
/// type (`42883` for an argument that is not an array).
pub(super) fn compile_unnest(c: &mut Compiler<'_>, arg: &ast::Expr) -> Result<(Expr, SqlType), SqlError> {
    let (x, t) = c.compile(arg, Some(SqlType::Array(&SqlType::Text)))?;
    let elem = t.element().ok_or_else(|| {
        SqlError::new(SqlState::UNDEFINED_FUNCTION, format!("function unnest({}) does not exist", t.name()))
    })?;
    Ok((Expr::Func(&UNNEST_IN_SELECT, vec![x]), elem))
}

fn is_unnest(x: &Expr) -> bool {
    matches!(x, Expr::Func(f, _) if std::ptr::eq(*f, &UNNEST_IN_SELECT))
}

/// Whether some output is a select-list `unnest`.
pub(super) fn has_unnest(outputs: &[Expr]) -> bool {
    outputs.iter().any(is_unnest)
}

/// The output rows of one input row when some output is a select-list
/// `unnest` (see the module header).
pub(super) fn expand(outputs: &[Expr], row: &[Datum], env: &mut EvalEnv<'_>) -> Result<Vec<Vec<Datum>>, SqlError> {
    let mut values = Vec::with_capacity(outputs.len());
    let mut arrays = Vec::with_capacity(outputs.len());
    for x in outputs {
        match x {
            Expr::Func(_, args) if is_unnest(x) => {
                let items = match args.first().map(|a| a.eval(row, env)).transpose()? {
                    Some(Datum::Array(items)) => items,
                    _ => Vec::new(),
                };
                arrays.push(Some(items));
                values.push(Datum::Null);
            }
            _ => {
                arrays.push(None);
                values.push(x.eval(row, env)?);
            }
        }
    }
    let n = arrays.iter().flatten().map(Vec::len).max().unwrap_or(0);
    Ok((0..n)
        .map(|k| {
            values
                .iter()
                .zip(&arrays)
                .map(|(v, a)| match a {
                    Some(items) => items.get(k).cloned().unwrap_or(Datum::Null),
                    None => v.clone(),
                })
                .collect()
        })
        .collect())
}
