//! Conditional expressions written as calls: `coalesce(…)`, `nullif(a,
//! b)`, `greatest(…)` and `least(…)`.
//!
//! PostgreSQL's grammar reads `COALESCE` as an expression of its own, not a
//! `pg_proc` function: it takes any number of arguments of one common type
//! and evaluates them only up to the first non-NULL one, so
//! `coalesce(1, 1 / 0)` is 1 ([`Eval::Lazy`]).

use super::def::{Call, Eval, FuncDef};
use crate::error::SqlError;
use crate::expr::{arith_type, comparison_type, implicit_cast, Compiler, EvalEnv, Expr};
use crate::value::{Datum, SqlType};
use turnstile_lock::SqlState;

/// `coalesce(x, …)`.
pub static COALESCE: FuncDef = FuncDef::custom("coalesce", resolve_coalesce, Eval::Lazy(coalesce)).called_on_null();
/// `greatest(x, …)`: the largest non-NULL argument (NULL if all are).
pub static GREATEST: FuncDef = FuncDef::custom("greatest", resolve_coalesce, Eval::Lazy(greatest)).called_on_null();
/// `least(x, …)`: the smallest non-NULL argument (NULL if all are).
pub static LEAST: FuncDef = FuncDef::custom("least", resolve_coalesce, Eval::Lazy(least)).called_on_null();
/// `nullif(a, b)`: NULL when `a = b`, else `a` (of `a`'s type).
pub static NULLIF: FuncDef = FuncDef::custom("nullif", resolve_nullif, Eval::Lazy(nullif)).called_on_null();

/// `nullif(a, b)`: the call's arguments are `a`, then `a` and `b` in
/// their comparison type.
fn resolve_nullif(c: &mut Compiler<'_>, call: &Call<'_>) -> Result<(Expr, SqlType), SqlError> {
    call.arity(2, 2)?;
    let (a, ta) = c.compile(&call.args[0], None)?;
    let (b, tb) = c.compile(&call.args[1], Some(ta))?;
    let (a, ta) =
        if ta == SqlType::Unknown && tb != SqlType::Unknown { c.compile(&call.args[0], Some(tb))? } else { (a, ta) };
    let t = comparison_type(ta, tb).ok_or_else(|| {
        SqlError::new(SqlState::UNDEFINED_FUNCTION, format!("operator does not exist: {} = {}", ta.name(), tb.name()))
    })?;
    let ty = if ta == SqlType::Unknown { SqlType::Text } else { ta };
    let (ac, bc) = (c.coerce(a.clone(), ta, t)?, c.coerce(b, tb, t)?);
    let a = c.coerce(a, ta, ty)?;
    Ok((Expr::Func(call.def, vec![a, ac, bc]), ty))
}

fn nullif(args: &[Expr], row: &[Datum], env: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    let (ac, bc) = (args[1].eval(row, env)?, args[2].eval(row, env)?);
    if !ac.is_null() && !bc.is_null() && ac.cmp_sql(&bc).is_eq() {
        return Ok(Datum::Null);
    }
    args[0].eval(row, env)
}

/// The non-NULL argument that sorts last (`greatest`) or first.
fn extreme(args: &[Expr], row: &[Datum], env: &mut EvalEnv<'_>, greatest: bool) -> Result<Datum, SqlError> {
    let mut best = Datum::Null;
    for a in args {
        let d = a.eval(row, env)?;
        if d.is_null() {
            continue;
        }
        let better = best.is_null() || {
            let o = d.cmp_sql(&best);
            if greatest {
                o.is_gt()
            } else {
                o.is_lt()
            }
        };
        if better {
            best = d;
        }
    }
    Ok(best)
}

fn greatest(args: &[Expr], row: &[Datum], env: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    extreme(args, row, env, true)
}

fn least(args: &[Expr], row: &[Datum], env: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    extreme(args, row, env, false)
}

/// The common type: the first argument's (each later argument compiled
/// with it as the hint), raised along the number chain; `text` when all are
/// untyped. An argument that does not cast to it implicitly is `42804`.
fn resolve_coalesce(c: &mut Compiler<'_>, call: &Call<'_>) -> Result<(Expr, SqlType), SqlError> {
    call.arity(1, usize::MAX)?;
    let mut args = Vec::with_capacity(call.args.len());
    let mut ty = SqlType::Unknown;
    for a in call.args {
        let (x, t) = c.compile(a, (ty != SqlType::Unknown).then_some(ty))?;
        if ty == SqlType::Unknown {
            ty = t;
        }
        args.push((x, t));
    }
    for (_, t) in &args {
        if ty.is_number() && t.is_number() {
            ty = arith_type(ty, *t).unwrap_or(ty);
        }
    }
    let ty = if ty == SqlType::Unknown { SqlType::Text } else { ty };
    let mut coerced = Vec::with_capacity(args.len());
    for (x, t) in args {
        if !implicit_cast(t, ty) {
            return Err(SqlError::new(
                SqlState::DATATYPE_MISMATCH,
                format!("{} types {} and {} cannot be matched", call.def.name.to_uppercase(), ty.name(), t.name()),
            ));
        }
        coerced.push(c.coerce(x, t, ty)?);
    }
    Ok((Expr::Func(call.def, coerced), ty))
}

fn coalesce(args: &[Expr], row: &[Datum], env: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    for a in args {
        let d = a.eval(row, env)?;
        if !d.is_null() {
            return Ok(d);
        }
    }
    Ok(Datum::Null)
}
