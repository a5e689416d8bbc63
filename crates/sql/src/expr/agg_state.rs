//! Running aggregates ([`AggState`]): `count`, `sum`, `avg`, `min`,
//! `max`, `string_agg`, `array_agg`, `bool_and` and `bool_or`, with `FILTER`, `DISTINCT` and an
//! ORDER BY of their own (`array_agg(attnum ORDER BY attnum)`, as pg_dump
//! sends). An ordered aggregate keeps its input rows' keys and values and
//! folds them in key order when it finishes, as PostgreSQL's
//! `ExecAggPlainTransByVal` does after its sort.

use super::eval::arith;
use super::{numeric, AggKind, AggSpec, BinOp, EvalEnv};
use crate::error::SqlError;
use crate::value::{compare_key, float_check, out_of_range, Datum, SqlType, NUMERIC};

/// A running aggregate. Sums and averages of integers accumulate in an
/// `i128` (no allocation per row, and no overflow before `finish` checks
/// the result's type, as PostgreSQL's `int8` and `numeric` accumulators);
/// of `numeric` in a [`bigdecimal::BigDecimal`]; of floats in an `f64`.
#[derive(Clone, Debug)]
pub struct AggState {
    count: i64,
    int_sum: i128,
    acc: Datum,
    seen: Option<std::collections::HashSet<Datum>>,
    /// An ordered aggregate's inputs (`array_agg(x ORDER BY k)`): the
    /// sort keys, the value and `string_agg`'s delimiter of each row,
    /// folded in key order by [`AggState::finish`].
    sorted_input: Vec<(Vec<Datum>, Datum, Option<Datum>)>,
}

impl AggState {
    /// A fresh state for `spec`.
    pub fn new(spec: &AggSpec) -> AggState {
        AggState {
            count: 0,
            int_sum: 0,
            acc: Datum::Null,
            seen: spec.distinct.then(Default::default),
            sorted_input: Vec::new(),
        }
    }

    /// Folds one input row in.
    pub fn add(&mut self, spec: &AggSpec, row: &[Datum], env: &mut EvalEnv<'_>) -> Result<(), SqlError> {
        if let Some(f) = &spec.filter {
            if !f.test(row, env)? {
                return Ok(());
            }
        }
        let v = match &spec.arg {
            None => {
                self.count += 1;
                return Ok(());
            }
            Some(a) => a.eval(row, env)?,
        };
        if v.is_null() && spec.kind != AggKind::ArrayAgg {
            return Ok(());
        }
        if let Some(seen) = &mut self.seen {
            if !seen.insert(v.clone()) {
                return Ok(());
            }
        }
        let delim = match (&spec.delim, spec.kind) {
            (Some(d), AggKind::StringAgg) => Some(d.eval(row, env)?),
            _ => None,
        };
        if !spec.order.is_empty() {
            let keys = spec.order.iter().map(|k| k.0.eval(row, env)).collect::<Result<Vec<_>, _>>()?;
            self.sorted_input.push((keys, v, delim));
            return Ok(());
        }
        self.fold(spec, v, delim)
    }

    /// Folds one input value in (with `string_agg`'s delimiter).
    fn fold(&mut self, spec: &AggSpec, v: Datum, delim: Option<Datum>) -> Result<(), SqlError> {
        self.count += 1;
        match spec.kind {
            AggKind::Count | AggKind::CountStar => {}
            AggKind::Sum | AggKind::Avg => match v {
                Datum::Int(x) => {
                    self.int_sum = self.int_sum.checked_add(i128::from(x)).ok_or_else(|| out_of_range(spec.ty))?
                }
                Datum::Text(s) => {
                    let parsed = Datum::parse(&s, if spec.ty.is_float() { SqlType::Float8 } else { NUMERIC })?;
                    self.add_value(parsed)?
                }
                other => self.add_value(other)?,
            },
            AggKind::StringAgg => {
                let piece = v.to_text(SqlType::Text).unwrap_or_default();
                match &mut self.acc {
                    Datum::Text(acc) => {
                        if let Some(Datum::Text(d)) = delim {
                            acc.push_str(&d);
                        }
                        acc.push_str(&piece);
                    }
                    acc => *acc = Datum::Text(piece),
                }
            }
            AggKind::ArrayAgg => match &mut self.acc {
                Datum::Array(items) => items.push(v),
                acc => *acc = Datum::Array(vec![v]),
            },
            AggKind::BoolAnd | AggKind::BoolOr => {
                let and = spec.kind == AggKind::BoolAnd;
                self.acc = match (&self.acc, v) {
                    (Datum::Bool(a), Datum::Bool(b)) => Datum::Bool(if and { *a && b } else { *a || b }),
                    (_, v) => v,
                };
            }
            AggKind::Min | AggKind::Max => {
                let keep_new = match &self.acc {
                    Datum::Null => true,
                    acc if spec.kind == AggKind::Min => v.cmp_sql(acc).is_lt(),
                    acc => v.cmp_sql(acc).is_gt(),
                };
                if keep_new {
                    self.acc = v;
                }
            }
        }
        Ok(())
    }

    fn add_value(&mut self, v: Datum) -> Result<(), SqlError> {
        self.acc = match (std::mem::replace(&mut self.acc, Datum::Null), v) {
            (Datum::Null, v) => v,
            (Datum::Numeric(a), Datum::Numeric(b)) => Datum::Numeric(numeric::add(&a, &b)),
            (Datum::Float(a), Datum::Float(b)) => {
                Datum::Float(float_check(a + b, a.is_finite() && b.is_finite(), true)?)
            }
            (a, b) => arith(BinOp::Add, NUMERIC, a, b)?,
        };
        Ok(())
    }

    /// The aggregate's value: an ordered aggregate's inputs are sorted by
    /// their keys (stably, as ORDER BY sorts) and folded first.
    pub fn finish(&self, spec: &AggSpec) -> Result<Datum, SqlError> {
        if spec.order.is_empty() {
            return self.finish_folded(spec);
        }
        let mut input = self.sorted_input.clone();
        input.sort_by(|a, b| {
            let mut keys = a.0.iter().zip(&b.0).zip(&spec.order);
            keys.find_map(|((x, y), k)| Some(compare_key(x, y, k.1, k.2)).filter(|o| o.is_ne()))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        let mut folded = AggState { seen: None, ..AggState::new(spec) };
        for (_, v, delim) in input {
            folded.fold(spec, v, delim)?;
        }
        folded.finish_folded(spec)
    }

    fn finish_folded(&self, spec: &AggSpec) -> Result<Datum, SqlError> {
        let int_arg = spec.arg_ty.is_integer();
        Ok(match spec.kind {
            AggKind::CountStar | AggKind::Count => Datum::Int(self.count),
            AggKind::Min | AggKind::Max | AggKind::StringAgg | AggKind::ArrayAgg => self.acc.clone(),
            AggKind::BoolAnd | AggKind::BoolOr => self.acc.clone(),
            _ if self.count == 0 => Datum::Null,
            AggKind::Sum if int_arg && spec.ty.is_integer() => {
                Datum::Int(i64::try_from(self.int_sum).map_err(|_| out_of_range(spec.ty))?)
            }
            AggKind::Sum if int_arg => Datum::Numeric(numeric::from_i128(self.int_sum)),
            AggKind::Sum => match (&self.acc, spec.ty) {
                (Datum::Float(f), SqlType::Float4) => Datum::Float(f64::from(*f as f32)),
                (acc, _) => acc.clone(),
            },
            AggKind::Avg => {
                let count = numeric::from_i128(i128::from(self.count));
                match &self.acc {
                    _ if int_arg => Datum::Numeric(numeric::div(&numeric::from_i128(self.int_sum), &count)?),
                    Datum::Numeric(sum) => Datum::Numeric(numeric::div(sum, &count)?),
                    Datum::Float(sum) => Datum::Float(sum / self.count as f64),
                    other => other.clone(),
                }
            }
        })
    }
}
