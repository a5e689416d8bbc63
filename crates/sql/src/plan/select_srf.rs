//! `unnest(array)` in the select list (`SELECT unnest(setconfig) FROM
//! pg_db_role_setting`, as pg_dump sends), and
//! `information_schema._pg_expandarray(array)` with or without a field
//! selected (`(…_pg_expandarray(i.indkey)).n`, as pgjdbc sends;
//! `expr/expand_array.rs`), and `generate_subscripts(array, dim)`
//! (`expr/generate_subscripts.rs`): PostgreSQL's `ProjectSet`.
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
use crate::expr::expand_array::{expand_array, EXPANDARRAY_IN_SELECT};
use crate::expr::functions::def::{Call, Eval, FuncDef};
use crate::expr::generate_subscripts::{subscripts, GENERATE_SUBSCRIPTS_IN_SELECT};
use crate::expr::subscript::{element, SUBSCRIPT};
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
    // A catalog vector's elements read as `bigint` (`subscript.rs`).
    let elem = t.element().or((t == SqlType::Text).then_some(SqlType::Int8)).ok_or_else(|| {
        SqlError::new(SqlState::UNDEFINED_FUNCTION, format!("function unnest({}) does not exist", t.name()))
    })?;
    Ok((Expr::Func(&UNNEST_IN_SELECT, vec![x]), elem))
}

fn is_unnest(x: &Expr) -> bool {
    matches!(x, Expr::Func(f, _) if std::ptr::eq(*f, &UNNEST_IN_SELECT))
}

fn is_expand_array(x: &Expr) -> bool {
    matches!(x, Expr::Func(f, _) if std::ptr::eq(*f, &EXPANDARRAY_IN_SELECT))
}

/// Whether some output is a select-list set-returning call.
pub(super) fn has_unnest(outputs: &[Expr]) -> bool {
    outputs.iter().any(|x| set_values(x).is_some())
}

/// What a select-list set-returning call expands to.
#[derive(Clone, Copy)]
enum SetKind {
    /// `unnest`: the elements.
    Elements,
    /// `_pg_expandarray`: a record per element.
    Records,
    /// `generate_subscripts`: the subscripts.
    Subscripts,
}

/// How an output is a set-returning call: its arguments, what it gives,
/// and the field selected from each record.
fn set_values(x: &Expr) -> Option<(&[Expr], SetKind, Option<&Expr>)> {
    match x {
        Expr::Func(_, args) if is_unnest(x) => Some((args, SetKind::Elements, None)),
        Expr::Func(_, args) if is_expand_array(x) => Some((args, SetKind::Records, None)),
        Expr::Func(f, args) if std::ptr::eq(*f, &GENERATE_SUBSCRIPTS_IN_SELECT) => {
            Some((args, SetKind::Subscripts, None))
        }
        Expr::Func(f, args) if std::ptr::eq(*f, &SUBSCRIPT) => match args.as_slice() {
            [inner @ Expr::Func(_, a), field] if is_expand_array(inner) => Some((a, SetKind::Records, Some(field))),
            _ => None,
        },
        _ => None,
    }
}

/// The values an output that is a set-returning call gives for `row`.
fn set_items(
    args: &[Expr],
    kind: SetKind,
    field: Option<&Expr>,
    row: &[Datum],
    env: &mut EvalEnv<'_>,
) -> Result<Vec<Datum>, SqlError> {
    let value = match args.first() {
        Some(a) => a.eval(row, env)?,
        None => Datum::Null,
    };
    let recs = match kind {
        SetKind::Elements => {
            return Ok(match value {
                Datum::Array(items) => items,
                // A catalog vector's elements (`unnest(indkey)`).
                Datum::Text(vector) => {
                    vector.split_ascii_whitespace().map(|s| s.parse().map_or(Datum::Null, Datum::Int)).collect()
                }
                _ => Vec::new(),
            });
        }
        SetKind::Subscripts => {
            let dim = match args.get(1).map(|d| d.eval(row, env)).transpose()? {
                Some(Datum::Int(d)) => d,
                _ => return Ok(Vec::new()),
            };
            return Ok(subscripts(&value, dim));
        }
        SetKind::Records => expand_array(&value),
    };
    let Some(field) = field else { return Ok(recs) };
    let Datum::Int(k) = field.eval(row, env)? else { return Ok(vec![Datum::Null; recs.len()]) };
    Ok(recs.iter().map(|r| element(r, k)).collect())
}

/// The output rows of one input row when some output is a select-list
/// `unnest` (see the module header).
pub(super) fn expand(outputs: &[Expr], row: &[Datum], env: &mut EvalEnv<'_>) -> Result<Vec<Vec<Datum>>, SqlError> {
    let mut values = Vec::with_capacity(outputs.len());
    let mut arrays = Vec::with_capacity(outputs.len());
    for x in outputs {
        match set_values(x) {
            Some((args, kind, field)) => {
                arrays.push(Some(set_items(args, kind, field, row, env)?));
                values.push(Datum::Null);
            }
            None => {
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
