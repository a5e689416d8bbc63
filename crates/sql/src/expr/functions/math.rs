//! Mathematical functions: `abs`, `round`, `random`, `power` (the `^`
//! operator on `double precision`).
//!
//! `abs` and `round` are polymorphic, as their `pg_proc` rows are: each
//! resolves its argument's type by its own rule
//! ([`Signature::Custom`](super::Signature::Custom)).

use super::def::{Call, Eval, FuncDef, Volatility};
use crate::error::SqlError;
use crate::expr::{arith_type, eval::int_overflow, implicit_cast, numeric, Compiler, EvalEnv, Expr};
use crate::value::{Datum, SqlType, NUMERIC};

/// `abs(x)` of any number type, in that type.
pub static ABS: FuncDef = FuncDef::custom("abs", resolve_abs, Eval::Values(abs));

/// `round(numeric [, scale])` (half away from zero), `round(float8)` (half
/// to even).
pub static ROUND: FuncDef = FuncDef::custom("round", resolve_round, Eval::Values(round));

/// `random()`: uniform in [0, 1), from the session's generator.
pub static RANDOM: FuncDef =
    FuncDef::fixed("random", &[], SqlType::Float8, |_, env| Ok(Datum::Float(env.services.random())))
        .volatility(Volatility::Volatile);

/// `power(float8, float8)`, `pow`, and the operator `^` on them.
pub static POWER: FuncDef =
    FuncDef::fixed("power", &[SqlType::Float8, SqlType::Float8], SqlType::Float8, power).aliases(&["pow"]);

/// `invalid_argument_for_power_function`.
const INVALID_ARGUMENT_FOR_POWER: turnstile_lock::SqlState = turnstile_lock::SqlState::from_code("2201F");

/// `dpow`'s checks: zero to a negative power and a negative number to a
/// non-integer one are `2201F`, an infinite result from finite inputs
/// `22003`, a zero one from a non-zero base `22003` (underflow).
fn power(args: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    let (x, y) = (args[0].as_f64().unwrap_or(f64::NAN), args[1].as_f64().unwrap_or(f64::NAN));
    if x == 0.0 && y < 0.0 {
        return Err(SqlError::new(INVALID_ARGUMENT_FOR_POWER, "zero raised to a negative power is undefined"));
    }
    if x < 0.0 && y.is_finite() && y.fract() != 0.0 {
        return Err(SqlError::new(
            INVALID_ARGUMENT_FOR_POWER,
            "a negative number raised to a non-integer power yields a complex result",
        ));
    }
    let v = x.powf(y);
    crate::value::float_check(v, x.is_finite() && y.is_finite(), x == 0.0)?;
    Ok(Datum::Float(v))
}

/// `abs`: the argument's number type (`numeric` for an untyped literal).
/// `abs(-2147483648)` does not fit `int4`: a `smallint`/`integer` result
/// is computed in `bigint` and range-checked by a cast.
fn resolve_abs(c: &mut Compiler<'_>, call: &Call<'_>) -> Result<(Expr, SqlType), SqlError> {
    call.arity(1, 1)?;
    let (x, t) = c.compile(&call.args[0], None)?;
    let ty = match t {
        SqlType::Unknown => NUMERIC,
        t if t.is_number() => arith_type(t, t).unwrap_or(t),
        t => return Err(call.no_such_types(&[t])),
    };
    let x = c.coerce(x, t, ty)?;
    let abs = Expr::Func(call.def, vec![x]);
    if matches!(ty, SqlType::Int2 | SqlType::Int4) {
        return Ok((Expr::Cast(Box::new(abs), SqlType::Int8, ty), ty));
    }
    Ok((abs, ty))
}

fn abs(args: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    Ok(match &args[0] {
        Datum::Int(v) => Datum::Int(v.checked_abs().ok_or_else(int_overflow)?),
        Datum::Numeric(v) => Datum::Numeric(bigdecimal::Signed::abs(v)),
        Datum::Float(f) => Datum::Float(f.abs()),
        other => {
            Datum::Float(Datum::parse(&super::text::text_arg(other), SqlType::Float8)?.as_f64().unwrap_or(0.0).abs())
        }
    })
}

/// `round(x)`: `numeric` stays `numeric`, any other number goes to
/// `double precision` (PostgreSQL's preferred numeric type);
/// `round(x, n)`: `x` an integer or `numeric`, `n` an `int4`.
fn resolve_round(c: &mut Compiler<'_>, call: &Call<'_>) -> Result<(Expr, SqlType), SqlError> {
    call.arity(1, 2)?;
    let (x, t) = c.compile(&call.args[0], None)?;
    let t = if t == SqlType::Unknown { NUMERIC } else { t };
    let Some(scale) = call.args.get(1) else {
        let ty = match t {
            SqlType::Numeric(_) => NUMERIC,
            t if t.is_number() => SqlType::Float8,
            t => return Err(call.no_such_types(&[t])),
        };
        return Ok((Expr::Func(call.def, vec![c.coerce(x, t, ty)?]), ty));
    };
    let (n, tn) = c.compile(scale, Some(SqlType::Int4))?;
    if !(t.is_integer() || matches!(t, SqlType::Numeric(_))) || !implicit_cast(tn, SqlType::Int4) {
        return Err(call.no_such_types(&[t, tn]));
    }
    let x = c.coerce(x, t, NUMERIC)?;
    let n = c.coerce(n, tn, SqlType::Int4)?;
    Ok((Expr::Func(call.def, vec![x, n]), NUMERIC))
}

/// Scales `round` takes (`numeric`'s limits).
const ROUND_SCALE_MAX: i64 = 1000;

fn round(args: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    Ok(match (&args[0], args.get(1)) {
        (Datum::Float(f), None) => Datum::Float(f.round_ties_even()),
        (Datum::Numeric(v), None) => Datum::Numeric(numeric::round(v, 0)),
        (Datum::Numeric(v), Some(Datum::Int(n))) => {
            let n = (*n).clamp(-ROUND_SCALE_MAX, ROUND_SCALE_MAX);
            let r = numeric::round(v, n);
            Datum::Numeric(if n < 0 { r.with_scale(0) } else { r })
        }
        (other, _) => {
            return Err(super::def::no_such_function("round", std::iter::once(super::text::text_arg(other).as_str())))
        }
    })
}
