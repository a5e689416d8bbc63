//! [`Datum`]: one value of the front end, how each SQL type is represented,
//! and what holds for every representation: NULL, equality and hashing
//! (equal values hash alike across representations: `1 = 1.0`), and SQL's
//! order ([`Datum::cmp_sql`]).

use crate::expr::numeric;
use bigdecimal::BigDecimal;
use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

/// One value of the front end. The static [`SqlType`](super::SqlType) of the expression
/// that computed it says which SQL type it is; the representation is
/// chosen so the hot paths (integers, text) allocate nothing more than
/// their text:
///
/// * `smallint`, `integer`, `bigint`, `oid`, `xid`: [`Datum::Int`], an
///   `i64` whose range the static type bounds;
/// * `numeric`: [`Datum::Numeric`], a [`BigDecimal`] whose scale is
///   PostgreSQL's display scale (never negative): `1.10` is digits 110,
///   scale 2;
/// * `real`, `double precision`: [`Datum::Float`] (a `real` holds a value
///   an `f32` represents exactly);
/// * every string type: [`Datum::Text`] (`character(n)` blank-padded);
/// * `bytea`: [`Datum::Bytea`], the bytes;
/// * `date`: [`Datum::Date`], days since 2000-01-01;
/// * `timestamp[tz]`: [`Datum::Timestamp`], microseconds since
///   2000-01-01 00:00:00 (UTC for `timestamptz`).
#[derive(Clone, Debug)]
pub enum Datum {
    /// NULL.
    Null,
    /// A boolean.
    Bool(bool),
    /// Any integer type (the static type says which).
    Int(i64),
    /// `numeric`: exact, its scale the display scale.
    Numeric(BigDecimal),
    /// `real` or `double precision`.
    Float(f64),
    /// Any string type.
    Text(String),
    /// `bytea`: the bytes themselves (printed in hex only at the door).
    Bytea(Vec<u8>),
    /// Microseconds since 2000-01-01 00:00:00 UTC.
    Timestamp(i64),
    /// Days since 2000-01-01.
    Date(i32),
    /// A one-dimensional array (`text[]`, `int4[]`, …): its elements,
    /// NULLs included; the static type names the element type.
    Array(Vec<Datum>),
}

impl PartialEq for Datum {
    fn eq(&self, other: &Datum) -> bool {
        match (self, other) {
            (Datum::Null, Datum::Null) => true,
            (Datum::Float(a), Datum::Float(b)) => a.to_bits() == b.to_bits() || a == b,
            _ => {
                !matches!(self, Datum::Null) && !matches!(other, Datum::Null) && self.cmp_sql(other) == Ordering::Equal
            }
        }
    }
}

impl Eq for Datum {}

impl Hash for Datum {
    fn hash<H: Hasher>(&self, h: &mut H) {
        match self {
            Datum::Null => 0u8.hash(h),
            Datum::Bool(b) => b.hash(h),
            Datum::Int(v) => (*v as i128).hash(h),
            // Equal numerics hash alike whatever their scale, and as the
            // integer they equal when they are integral.
            Datum::Numeric(v) => {
                let n = v.normalized();
                match (n.is_integer(), bigdecimal::ToPrimitive::to_i64(&n)) {
                    (true, Some(i)) => (i as i128).hash(h),
                    _ => n.as_bigint_and_exponent().hash(h),
                }
            }
            Datum::Float(f) => (if *f == 0.0 { 0.0f64 } else { *f }).to_bits().hash(h),
            Datum::Text(s) => s.hash(h),
            Datum::Bytea(b) => b.hash(h),
            Datum::Timestamp(t) => t.hash(h),
            Datum::Date(d) => d.hash(h),
            Datum::Array(items) => items.hash(h),
        }
    }
}

/// Days between 1970-01-01 and 2000-01-01 (PostgreSQL's epoch).
pub(super) const PG_EPOCH_DAYS: i64 = 10_957;
/// Microseconds in a day.
pub(super) const USECS_PER_DAY: i64 = 86_400_000_000;

/// The current time as a PostgreSQL timestamp.
pub fn now_timestamp() -> i64 {
    let unix =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_micros() as i64).unwrap_or(0);
    unix - PG_EPOCH_DAYS * USECS_PER_DAY
}

/// A monotonic-instant offset turned into a wall-clock timestamp.
pub fn timestamp_from_unix_micros(unix: i64) -> i64 {
    unix - PG_EPOCH_DAYS * USECS_PER_DAY
}

impl Datum {
    /// Whether the value is NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Datum::Null)
    }

    /// SQL comparison of two values (NULLs sort last). Strings compare
    /// exactly, byte by byte (collation C): `character(n)` operands are
    /// compared without their trailing blanks because the compiler strips
    /// them first.
    pub fn cmp_sql(&self, other: &Datum) -> Ordering {
        match (self, other) {
            (Datum::Null, Datum::Null) => Ordering::Equal,
            (Datum::Null, _) => Ordering::Greater,
            (_, Datum::Null) => Ordering::Less,
            (Datum::Int(a), Datum::Int(b)) => a.cmp(b),
            (Datum::Text(a), Datum::Text(b)) => a.cmp(b),
            (Datum::Bytea(a), Datum::Bytea(b)) => a.cmp(b),
            (Datum::Bool(a), Datum::Bool(b)) => a.cmp(b),
            (Datum::Timestamp(a), Datum::Timestamp(b)) => a.cmp(b),
            (Datum::Date(a), Datum::Date(b)) => a.cmp(b),
            (Datum::Date(a), Datum::Timestamp(b)) => (i64::from(*a) * USECS_PER_DAY).cmp(b),
            (Datum::Timestamp(a), Datum::Date(b)) => a.cmp(&(i64::from(*b) * USECS_PER_DAY)),
            (Datum::Numeric(a), Datum::Numeric(b)) => numeric::cmp(a, b),
            (Datum::Int(a), Datum::Numeric(b)) => numeric::cmp(&numeric::from_i128((*a).into()), b),
            (Datum::Numeric(a), Datum::Int(b)) => numeric::cmp(a, &numeric::from_i128((*b).into())),
            // Element by element (NULL elements last), then the shorter first.
            (Datum::Array(a), Datum::Array(b)) => {
                a.iter().zip(b).map(|(x, y)| x.cmp_sql(y)).find(|o| o.is_ne()).unwrap_or(a.len().cmp(&b.len()))
            }
            (a, b) => match (a.as_f64(), b.as_f64()) {
                (Some(x), Some(y)) => turnstile_engine::types::float_cmp(x, y),
                _ => a.rank().cmp(&b.rank()),
            },
        }
    }

    fn rank(&self) -> u8 {
        match self {
            Datum::Null => 9,
            Datum::Bool(_) => 0,
            Datum::Int(_) | Datum::Numeric(_) | Datum::Float(_) => 1,
            Datum::Text(_) => 2,
            Datum::Bytea(_) => 4,
            Datum::Timestamp(_) | Datum::Date(_) => 3,
            Datum::Array(_) => 5,
        }
    }

    /// The value as a float, for numeric values.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Datum::Int(v) => Some(*v as f64),
            Datum::Numeric(v) => Some(numeric::to_f64(v)),
            Datum::Float(f) => Some(*f),
            _ => None,
        }
    }
}
