//! Casts between SQL types: [`Datum::cast`] as an assignment or implicit
//! cast does (range-checked, text read by the type's input function), and
//! [`Datum::cast_explicit`], which also cuts strings to a `char(n)` or
//! `varchar(n)` length.

use super::datum::{Datum, USECS_PER_DAY};
use super::range::{int_in_range, out_of_range, to_float4};
use super::sql_type::SqlType;
use crate::error::SqlError;
use crate::expr::numeric;
use turnstile_lock::SqlState;

impl Datum {
    /// An explicit cast (`CAST(x AS t)`, `x::t`): as [`Datum::cast`], except
    /// that text longer than `char(n)`/`varchar(n)` is cut to `n`
    /// characters instead of refused.
    pub fn cast_explicit(self, ty: SqlType) -> Result<Datum, SqlError> {
        match (self, ty) {
            (Datum::Text(s), SqlType::Varchar(n) | SqlType::Bpchar(n)) if n > 0 => {
                let cut: String = match s.char_indices().nth(n as usize) {
                    Some((at, _)) => s[..at].to_owned(),
                    None => s,
                };
                Datum::Text(cut).cast(ty)
            }
            (Datum::Null, _) => Ok(Datum::Null),
            // Other values become their text (a boolean `true`), then cut.
            (
                d @ (Datum::Bool(_)
                | Datum::Int(_)
                | Datum::Numeric(_)
                | Datum::Float(_)
                | Datum::Bytea(_)
                | Datum::Timestamp(_)
                | Datum::Date(_)),
                SqlType::Varchar(_) | SqlType::Bpchar(_),
            ) => d.cast(SqlType::Text)?.cast_explicit(ty),
            (d, ty) => d.cast(ty),
        }
    }

    /// Casts to `ty` as an assignment or implicit cast does: numbers
    /// range-checked (`22003`), `numeric` to integers rounded half away
    /// from zero and floats half to even, `numeric(p,s)` rounded to `s`,
    /// text parsed by the type's input function.
    pub fn cast(self, ty: SqlType) -> Result<Datum, SqlError> {
        Ok(match (self, ty) {
            (Datum::Null, _) => Datum::Null,
            (Datum::Text(s), t) => Datum::parse(&s, t)?,
            (Datum::Array(items), SqlType::Array(e)) => {
                Datum::Array(items.into_iter().map(|d| d.cast(*e)).collect::<Result<_, _>>()?)
            }
            (Datum::Bool(b), SqlType::Text | SqlType::Name | SqlType::Unknown) => {
                Datum::Text(if b { "true" } else { "false" }.to_owned())
            }
            (d, SqlType::Text | SqlType::Name | SqlType::QChar | SqlType::Unknown) => {
                Datum::Text(d.to_text(ty).unwrap_or_default())
            }
            (d @ Datum::Float(_), SqlType::Bpchar(_) | SqlType::Varchar(_)) => {
                Datum::parse(&d.to_text(SqlType::Float8).unwrap_or_default(), ty)?
            }
            (d, SqlType::Bpchar(_) | SqlType::Varchar(_)) => {
                Datum::parse(&d.to_text(SqlType::Text).unwrap_or_default(), ty)?
            }
            (Datum::Int(v), t) if t.is_integer() => Datum::Int(int_in_range(v, t)?),
            (Datum::Int(v), SqlType::Numeric(m)) => {
                Datum::Numeric(numeric::from_i128(v.into())).cast(SqlType::Numeric(m))?
            }
            (Datum::Int(v), SqlType::Float8) => Datum::Float(v as f64),
            (Datum::Int(v), SqlType::Float4) => Datum::Float(f64::from(v as f32)),
            (Datum::Int(v), SqlType::Bool) => Datum::Bool(v != 0),
            (Datum::Numeric(v), t) if t.is_integer() => {
                Datum::Int(int_in_range(numeric::to_i64_rounded(&v).ok_or_else(|| out_of_range(t))?, t)?)
            }
            (Datum::Numeric(v), SqlType::Float8) => {
                let f = numeric::to_f64(&v);
                if f.is_infinite() {
                    return Err(out_of_range(SqlType::Float8));
                }
                Datum::Float(f)
            }
            (Datum::Numeric(v), SqlType::Float4) => Datum::Float(to_float4(numeric::to_f64(&v))?),
            (Datum::Numeric(v), SqlType::Numeric(None)) => Datum::Numeric(v),
            (Datum::Numeric(v), SqlType::Numeric(Some((p, s)))) => Datum::Numeric(numeric::apply_typmod(&v, p, s)?),
            (Datum::Float(f), t) if t.is_integer() => {
                let r = f.round_ties_even();
                if !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&r) {
                    return Err(out_of_range(t));
                }
                Datum::Int(int_in_range(r as i64, t)?)
            }
            (Datum::Float(f), SqlType::Numeric(m)) => {
                Datum::Numeric(numeric::from_f64(f, 15)?).cast(SqlType::Numeric(m))?
            }
            (Datum::Float(f), SqlType::Float8) => Datum::Float(f),
            (Datum::Float(f), SqlType::Float4) => Datum::Float(to_float4(f)?),
            (Datum::Bool(b), SqlType::Bool) => Datum::Bool(b),
            (Datum::Bool(b), SqlType::Int4) => Datum::Int(b.into()),
            (Datum::Timestamp(t), SqlType::Timestamp | SqlType::TimestampTz) => Datum::Timestamp(t),
            (Datum::Timestamp(t), SqlType::Date) => {
                Datum::Date(i32::try_from(t.div_euclid(USECS_PER_DAY)).map_err(|_| out_of_range(SqlType::Date))?)
            }
            (Datum::Date(d), SqlType::Date) => Datum::Date(d),
            (Datum::Bytea(b), SqlType::Bytea) => Datum::Bytea(b),
            (Datum::Date(d), SqlType::Timestamp | SqlType::TimestampTz) => Datum::Timestamp(
                i64::from(d).checked_mul(USECS_PER_DAY).ok_or_else(|| out_of_range(SqlType::Timestamp))?,
            ),
            (d, t) => {
                return Err(SqlError::new(
                    SqlState::CANNOT_COERCE,
                    format!("cannot cast value {} to type {}", d.to_text(SqlType::Text).unwrap_or_default(), t.name()),
                ))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::NUMERIC;

    #[test]
    fn casts_round_as_postgresql_does() {
        let num = |s: &str| Datum::parse(s, NUMERIC).unwrap();
        let int = |d: Datum| match d.cast(SqlType::Int4).unwrap() {
            Datum::Int(v) => v,
            other => panic!("{other:?}"),
        };
        assert_eq!(int(num("2.5")), 3);
        assert_eq!(int(num("-2.5")), -3);
        assert_eq!(int(num("0.5")), 1);
        assert_eq!(int(Datum::Float(2.5)), 2);
        assert_eq!(int(Datum::Float(3.5)), 4);
        assert_eq!(Datum::Int(3_000_000_000).cast(SqlType::Int4).unwrap_err().code, "22003");
        assert_eq!(Datum::Int(40_000).cast(SqlType::Int2).unwrap_err().code, "22003");
        assert_eq!(Datum::parse("12.5", SqlType::Int4).unwrap_err().code, "22P02");
        assert_eq!(Datum::Bool(true).cast(SqlType::Text).unwrap(), Datum::Text("true".into()));
        let cut = Datum::Text("abc".into()).cast_explicit(SqlType::Varchar(2)).unwrap();
        assert_eq!(cut, Datum::Text("ab".into()));
        assert_eq!(Datum::Text("abc".into()).cast(SqlType::Varchar(2)).unwrap_err().code, "22001");
        let typed = num("2.675").cast(SqlType::Numeric(Some((10, 2)))).unwrap();
        assert_eq!(typed.to_text(NUMERIC).unwrap(), "2.68");
    }
}
