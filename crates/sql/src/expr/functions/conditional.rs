//! Conditional expressions written as calls: `coalesce(…)`.
//!
//! PostgreSQL's grammar reads `COALESCE` as an expression of its own, not a
//! `pg_proc` function: it takes any number of arguments of one common type
//! and evaluates them only up to the first non-NULL one, so
//! `coalesce(1, 1 / 0)` is 1 ([`Eval::Lazy`]).

use super::def::{Call, Eval, FuncDef};
use crate::error::SqlError;
use crate::expr::{arith_type, implicit_cast, Compiler, EvalEnv, Expr};
use crate::value::{Datum, SqlType};
use turnstile_lock::SqlState;

/// `coalesce(x, …)`.
pub static COALESCE: FuncDef = FuncDef::custom("coalesce", resolve_coalesce, Eval::Lazy(coalesce)).called_on_null();

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
                format!("COALESCE types {} and {} cannot be matched", ty.name(), t.name()),
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
