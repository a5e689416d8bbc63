//! Evaluating [`Expr`]s over a row, and aggregates over groups of rows.

use super::functions::Volatility;
use super::{numeric, BinOp, EvalEnv, Expr};
use crate::error::SqlError;
use crate::value::{float_check, int_in_range, out_of_range, zone, Datum, SqlType, NUMERIC};
use turnstile_lock::SqlState;

pub(super) fn truth(d: &Datum) -> Option<bool> {
    match d {
        Datum::Bool(b) => Some(*b),
        Datum::Null => None,
        Datum::Text(s) => Datum::parse(s, SqlType::Bool).ok().and_then(|d| truth(&d)),
        Datum::Int(v) => Some(*v != 0),
        _ => None,
    }
}

pub(super) fn int_overflow() -> SqlError {
    SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "integer out of range")
}

/// `22003` for an integer result outside `ty`.
fn int_result(v: Option<i64>, ty: SqlType) -> Result<Datum, SqlError> {
    match v {
        Some(v) => Ok(Datum::Int(int_in_range(v, ty)?)),
        None => Err(out_of_range(ty)),
    }
}

/// An arithmetic operator on operands of type `ty` (the result's type):
/// integers checked against `ty`'s range (`22003`), `numeric` exact with
/// PostgreSQL's scales, floats checked for overflow and underflow.
pub(super) fn arith(op: BinOp, ty: SqlType, a: Datum, b: Datum) -> Result<Datum, SqlError> {
    match (a, b) {
        (Datum::Null, _) | (_, Datum::Null) => Ok(Datum::Null),
        (Datum::Int(x), Datum::Int(y)) => {
            let ty = if ty.is_integer() { ty } else { SqlType::Int8 };
            match op {
                BinOp::Add => int_result(x.checked_add(y), ty),
                BinOp::Sub => int_result(x.checked_sub(y), ty),
                BinOp::Mul => int_result(x.checked_mul(y), ty),
                BinOp::Div if y == 0 => Err(numeric::division_by_zero()),
                BinOp::Div => int_result(x.checked_div(y), ty),
                _ if y == 0 => Err(numeric::division_by_zero()),
                // INT_MIN % -1 is 0 in PostgreSQL, not an overflow.
                _ => Ok(Datum::Int(x.checked_rem(y).unwrap_or(0))),
            }
        }
        (Datum::Float(x), Datum::Float(y)) => float_arith(op, ty, x, y),
        (Datum::Numeric(x), Datum::Numeric(y)) => numeric_arith(op, &x, &y),
        // Operands of mixed forms (a parameter bound as text, an operand
        // the compiler could not convert): brought to `ty` here.
        (Datum::Text(s), y) => arith(op, ty, Datum::parse(&s, ty)?, y),
        (x, Datum::Text(s)) => arith(op, ty, x, Datum::parse(&s, ty)?),
        (x, y) => {
            let t = if ty.is_float() || matches!(x, Datum::Float(_)) || matches!(y, Datum::Float(_)) {
                SqlType::Float8
            } else {
                NUMERIC
            };
            arith(op, t, x.cast(t)?, y.cast(t)?)
        }
    }
}

fn numeric_arith(op: BinOp, x: &bigdecimal::BigDecimal, y: &bigdecimal::BigDecimal) -> Result<Datum, SqlError> {
    Ok(Datum::Numeric(match op {
        BinOp::Add => numeric::add(x, y),
        BinOp::Sub => numeric::sub(x, y),
        BinOp::Mul => numeric::mul(x, y),
        BinOp::Div => numeric::div(x, y)?,
        _ => numeric::rem(x, y)?,
    }))
}

/// Float arithmetic with PostgreSQL's checks (`float8pl`, `float8mul`, …):
/// an infinite result from finite inputs overflows, a zero product or
/// quotient of non-zero inputs underflows (`22003`).
fn float_arith(op: BinOp, ty: SqlType, x: f64, y: f64) -> Result<Datum, SqlError> {
    let finite = x.is_finite() && y.is_finite();
    let v = match op {
        BinOp::Add => float_check(x + y, finite, true)?,
        BinOp::Sub => float_check(x - y, finite, true)?,
        BinOp::Mul => float_check(x * y, finite, x == 0.0 || y == 0.0)?,
        BinOp::Div if y == 0.0 => return Err(numeric::division_by_zero()),
        BinOp::Div => float_check(x / y, x.is_finite(), x == 0.0 || y.is_infinite())?,
        _ => {
            return Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                "operator does not exist: double precision % double precision",
            ))
        }
    };
    if ty == SqlType::Float4 {
        let n = v as f32;
        float_check(f64::from(n), v.is_infinite() || !finite, v == 0.0)?;
        return Ok(Datum::Float(f64::from(n)));
    }
    Ok(Datum::Float(v))
}

/// A value of type `from` cast to `to` (`Expr::Cast`): a `character(n)`
/// loses its trailing blanks when it becomes another string type; strings
/// are cut to a `char(n)`/`varchar(n)` length, as an explicit cast does.
pub(crate) fn cast_value(d: Datum, from: SqlType, to: SqlType) -> Result<Datum, SqlError> {
    match (d, from) {
        (Datum::Text(s), SqlType::Bpchar(_)) if to.is_string() && !matches!(to, SqlType::Bpchar(_)) => {
            let trimmed = s.trim_end_matches(' ');
            let d = Datum::Text(if trimmed.len() == s.len() { s } else { trimmed.to_owned() });
            d.cast_explicit(to)
        }
        // An array prints its elements with their own type's output.
        (d @ Datum::Array(_), SqlType::Array(_)) if to.is_string() => {
            Datum::Text(d.to_text(from).unwrap_or_default()).cast_explicit(to)
        }
        // A real prints with its own shortest form, not its double's.
        (d @ Datum::Float(_), SqlType::Float4) if to.is_string() => {
            Datum::Text(d.to_text(SqlType::Float4).unwrap_or_default()).cast_explicit(to)
        }
        // timestamptz ↔ timestamp and date convert through the session's
        // zone; its text carries the zone's offset.
        (Datum::Timestamp(t), SqlType::TimestampTz) if to.is_string() => {
            Datum::Text(Datum::Timestamp(t).to_text(SqlType::TimestampTz).unwrap_or_default()).cast_explicit(to)
        }
        (Datum::Timestamp(t), SqlType::TimestampTz) if matches!(to, SqlType::Timestamp | SqlType::Date) => {
            Datum::Timestamp(t + i64::from(zone::offset_secs(t)) * 1_000_000).cast_explicit(to)
        }
        (Datum::Timestamp(t), SqlType::Timestamp) if to == SqlType::TimestampTz => {
            Ok(Datum::Timestamp(zone::local_to_utc(t)))
        }
        (d @ Datum::Date(_), SqlType::Date) if to == SqlType::TimestampTz => {
            match d.cast_explicit(SqlType::Timestamp)? {
                Datum::Timestamp(t) => Ok(Datum::Timestamp(zone::local_to_utc(t))),
                other => Ok(other),
            }
        }
        (d, _) => d.cast_explicit(to),
    }
}

pub(super) fn like(s: &str, p: &str) -> bool {
    let s: Vec<char> = s.chars().collect();
    let p: Vec<char> = p.chars().collect();
    // Iterative wildcard match with backtracking on the last `%`.
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while i < s.len() {
        if j < p.len() && p[j] == '\\' && j + 1 < p.len() && p[j + 1] == s[i] {
            i += 1;
            j += 2;
        } else if j < p.len() && (p[j] == '_' || (p[j] == s[i] && p[j] != '%')) {
            i += 1;
            j += 1;
        } else if j < p.len() && p[j] == '%' {
            star = Some((j, i));
            j += 1;
        } else if let Some((sj, si)) = star {
            j = sj + 1;
            i = si + 1;
            star = Some((sj, si + 1));
        } else {
            return false;
        }
    }
    p[j..].iter().all(|c| *c == '%')
}

impl Expr {
    /// Evaluates on `row`.
    pub fn eval(&self, row: &[Datum], env: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
        Ok(match self {
            Expr::Col(c) => row.get(*c).cloned().unwrap_or(Datum::Null),
            Expr::Const(d) => d.clone(),
            Expr::Param(n) => env.params.get(*n).cloned().ok_or_else(|| {
                SqlError::new(SqlState::PROTOCOL_VIOLATION, format!("there is no parameter ${}", n + 1))
            })?,
            Expr::Bin(op, ty, a, b) => {
                let (x, y) = (a.eval(row, env)?, b.eval(row, env)?);
                binary(*op, *ty, x, y)?
            }
            Expr::And(a, b) => match truth(&a.eval(row, env)?) {
                Some(false) => Datum::Bool(false),
                l => match (l, truth(&b.eval(row, env)?)) {
                    (_, Some(false)) => Datum::Bool(false),
                    (Some(true), Some(true)) => Datum::Bool(true),
                    _ => Datum::Null,
                },
            },
            Expr::Or(a, b) => match truth(&a.eval(row, env)?) {
                Some(true) => Datum::Bool(true),
                l => match (l, truth(&b.eval(row, env)?)) {
                    (_, Some(true)) => Datum::Bool(true),
                    (Some(false), Some(false)) => Datum::Bool(false),
                    _ => Datum::Null,
                },
            },
            Expr::Not(a) => truth(&a.eval(row, env)?).map_or(Datum::Null, |b| Datum::Bool(!b)),
            Expr::Neg(a, ty) => match a.eval(row, env)? {
                Datum::Int(v) => int_result(v.checked_neg(), if ty.is_integer() { *ty } else { SqlType::Int8 })?,
                Datum::Numeric(v) => Datum::Numeric(-v),
                Datum::Float(f) => Datum::Float(-f),
                Datum::Null => Datum::Null,
                other => {
                    let v = Datum::parse(&other.to_text(SqlType::Text).unwrap_or_default(), *ty)?;
                    arith(BinOp::Sub, *ty, Datum::Int(0).cast(*ty)?, v)?
                }
            },
            Expr::IsNull(a, not) => Datum::Bool(a.eval(row, env)?.is_null() != *not),
            Expr::IsBool(a, want, not) => Datum::Bool((truth(&a.eval(row, env)?) == Some(*want)) != *not),
            Expr::Cast(a, from, to) => cast_value(a.eval(row, env)?, *from, *to)?,
            Expr::Agg(i) => env.aggs.get(*i).cloned().unwrap_or(Datum::Null),
            Expr::InList(x, list, negated) => in_list(x, list, *negated, row, env)?,
            Expr::Case(op, whens, els) => {
                let base = op.as_ref().map(|o| o.eval(row, env)).transpose()?;
                for (cond, result) in whens {
                    let c = cond.eval(row, env)?;
                    let hit = match &base {
                        Some(b) => {
                            !b.is_null() && !c.is_null() && {
                                let (x, y) = unify(b.clone(), c)?;
                                x.cmp_sql(&y).is_eq()
                            }
                        }
                        None => truth(&c) == Some(true),
                    };
                    if hit {
                        return result.eval(row, env);
                    }
                }
                match els {
                    Some(e) => e.eval(row, env)?,
                    None => Datum::Null,
                }
            }
            Expr::Like(x, p, negated) => match (x.eval(row, env)?, p.eval(row, env)?) {
                (Datum::Null, _) | (_, Datum::Null) => Datum::Null,
                (a, b) => Datum::Bool(
                    like(&a.to_text(SqlType::Text).unwrap_or_default(), &b.to_text(SqlType::Text).unwrap_or_default())
                        != *negated,
                ),
            },
            Expr::Func(f, args) => f.call(args, row, env)?,
            Expr::Outer(k) => env.outer.get(*k).cloned().unwrap_or(Datum::Null),
            Expr::SubLink(link) => link.eval(row, env)?,
            Expr::Regex(m) => m.eval(row, env)?,
            Expr::Array(items) => {
                let mut v = Vec::with_capacity(items.len());
                for x in items {
                    v.push(x.eval(row, env)?);
                }
                Datum::Array(v)
            }
            Expr::Quantified(op, ty, elem, x, arr, any) => {
                let lhs = x.eval(row, env)?;
                match arr.eval(row, env)? {
                    Datum::Null => Datum::Null,
                    Datum::Array(items) if items.is_empty() => Datum::Bool(!*any),
                    Datum::Array(items) => quantify(*op, *ty, *elem, lhs, items.into_iter(), *any)?,
                    other => {
                        return Err(SqlError::new(
                            SqlState::DATATYPE_MISMATCH,
                            format!("op ANY/ALL (array) requires array on right side, not {other:?}"),
                        ))
                    }
                }
            }
        })
    }

    /// Evaluates a condition: true only for SQL true.
    pub fn test(&self, row: &[Datum], env: &mut EvalEnv<'_>) -> Result<bool, SqlError> {
        Ok(truth(&self.eval(row, env)?) == Some(true))
    }

    /// Whether the expression reads no column and no aggregate (a constant
    /// or parameter expression, evaluable before the scan).
    pub fn is_row_independent(&self) -> bool {
        match self {
            // A subquery runs per row (and takes locks): never before the scan.
            Expr::Col(_) | Expr::Agg(_) | Expr::SubLink(_) => false,
            Expr::Const(_) | Expr::Param(_) | Expr::Outer(_) => true,
            Expr::Func(f, args) => f.volatility != Volatility::Volatile && args.iter().all(Expr::is_row_independent),
            Expr::Bin(_, _, a, b) | Expr::And(a, b) | Expr::Or(a, b) | Expr::Like(a, b, _) => {
                a.is_row_independent() && b.is_row_independent()
            }
            Expr::Not(a) | Expr::Neg(a, _) | Expr::IsNull(a, _) | Expr::IsBool(a, _, _) | Expr::Cast(a, _, _) => {
                a.is_row_independent()
            }
            Expr::InList(a, l, _) => a.is_row_independent() && l.iter().all(Expr::is_row_independent),
            Expr::Array(l) => l.iter().all(Expr::is_row_independent),
            Expr::Regex(m) => m.x.is_row_independent() && m.pattern.is_row_independent(),
            Expr::Quantified(_, _, _, a, b, _) => a.is_row_independent() && b.is_row_independent(),
            Expr::Case(..) => false,
        }
    }
}

/// Brings a text value to the other side's type for comparison.
pub(super) fn unify(a: Datum, b: Datum) -> Result<(Datum, Datum), SqlError> {
    Ok(match (&a, &b) {
        (Datum::Text(s), Datum::Int(_)) => (Datum::parse(s, SqlType::Int8)?, b),
        (Datum::Int(_), Datum::Text(s)) => {
            let t = Datum::parse(s, SqlType::Int8)?;
            (a, t)
        }
        (Datum::Text(s), Datum::Bool(_)) => (Datum::parse(s, SqlType::Bool)?, b),
        (Datum::Bool(_), Datum::Text(s)) => {
            let t = Datum::parse(s, SqlType::Bool)?;
            (a, t)
        }
        (Datum::Text(s), Datum::Timestamp(_)) => (Datum::parse(s, SqlType::Timestamp)?, b),
        (Datum::Timestamp(_), Datum::Text(s)) => {
            let t = Datum::parse(s, SqlType::Timestamp)?;
            (a, t)
        }
        (Datum::Text(s), Datum::Bytea(_)) => (Datum::parse(s, SqlType::Bytea)?, b),
        (Datum::Bytea(_), Datum::Text(s)) => {
            let t = Datum::parse(s, SqlType::Bytea)?;
            (a, t)
        }
        (Datum::Text(s), Datum::Float(_)) => (Datum::parse(s, SqlType::Float8)?, b),
        (Datum::Float(_), Datum::Text(s)) => {
            let t = Datum::parse(s, SqlType::Float8)?;
            (a, t)
        }
        _ => (a, b),
    })
}

/// `lhs op ANY|ALL (values)` in type `ty` (each value cast from `from`
/// first): SQL's three-valued OR (ANY) or AND (ALL) of the comparisons.
pub(crate) fn quantify(
    op: BinOp,
    ty: SqlType,
    from: SqlType,
    lhs: Datum,
    values: impl Iterator<Item = Datum>,
    any: bool,
) -> Result<Datum, SqlError> {
    let mut saw_null = false;
    for v in values {
        let v = if from != ty && !v.is_null() { cast_value(v, from, ty)? } else { v };
        match truth(&binary(op, ty, lhs.clone(), v)?) {
            Some(hit) if hit == any => return Ok(Datum::Bool(any)),
            Some(_) => {}
            None => saw_null = true,
        }
    }
    Ok(if saw_null { Datum::Null } else { Datum::Bool(!any) })
}

/// A binary operator applied to two values of type `ty`.
pub(super) fn binary(op: BinOp, ty: SqlType, x: Datum, y: Datum) -> Result<Datum, SqlError> {
    Ok(match op {
        BinOp::Concat => match (&x, &y) {
            (Datum::Null, _) | (_, Datum::Null) => Datum::Null,
            _ => {
                let mut s = x.to_text(SqlType::Text).unwrap_or_default();
                y.write_text(SqlType::Text, &mut s);
                Datum::Text(s)
            }
        },
        BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod => arith(op, ty, x, y)?,
        _ => {
            if x.is_null() || y.is_null() {
                Datum::Null
            } else {
                let (x, y) = unify(x, y)?;
                let o = x.cmp_sql(&y);
                Datum::Bool(match op {
                    BinOp::Eq => o.is_eq(),
                    BinOp::Ne => o.is_ne(),
                    BinOp::Lt => o.is_lt(),
                    BinOp::Le => o.is_le(),
                    BinOp::Gt => o.is_gt(),
                    _ => o.is_ge(),
                })
            }
        }
    })
}

/// `x [NOT] IN (list)`, with SQL's NULL rules.
fn in_list(x: &Expr, list: &[Expr], negated: bool, row: &[Datum], env: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    Ok({
        let v = x.eval(row, env)?;
        if v.is_null() {
            Datum::Null
        } else {
            let mut found = false;
            let mut saw_null = false;
            for item in list {
                let w = item.eval(row, env)?;
                if w.is_null() {
                    saw_null = true;
                } else {
                    let (a, b) = unify(v.clone(), w)?;
                    if a.cmp_sql(&b).is_eq() {
                        found = true;
                        break;
                    }
                }
            }
            if found {
                Datum::Bool(!negated)
            } else if saw_null {
                Datum::Null
            } else {
                Datum::Bool(negated)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::like;

    #[test]
    fn like_matches_wildcards() {
        assert!(like("pgbench_accounts", "pgbench%"));
        assert!(like("abc", "a_c"));
        assert!(!like("abc", "a_"));
        assert!(like("", "%"));
        assert!(like("a%c", "a\\%c"));
    }
}
