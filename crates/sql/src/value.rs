//! SQL types and values of the front end: PostgreSQL's type OIDs, text
//! input and output, and the mapping to the engine's column types.
//!
//! # Why two value systems
//!
//! The engine's [`Value`]/[`ColumnType`] are what a row *stores*: a fixed
//! set of column types with an on-page encoding, and nothing else. The
//! front end's [`Datum`]/[`SqlType`] are what an *expression* computes:
//! they add what has no column (`unknown`-typed literals and parameters
//! before inference, `numeric` results of `sum`/`avg`, `name`, time
//! zones), PostgreSQL's OIDs and text forms for the protocol, and SQL's
//! comparison and cast rules. The two meet in one place each way:
//! [`Datum::to_engine`] when a value is written or pushed down as a filter,
//! and [`Datum::from_engine`] when a row comes back from a scan.

use crate::error::SqlError;
use crate::expr::numeric;
use bigdecimal::BigDecimal;
use std::cmp::Ordering;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use turnstile_engine::datetime::{self, DateTimeError};
use turnstile_engine::types::{ColumnType, Float, Value};
use turnstile_lock::SqlState;

/// A SQL type as the front end tracks it (for RowDescription and casts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SqlType {
    /// `boolean`.
    Bool,
    /// `smallint`.
    Int2,
    /// `integer`.
    Int4,
    /// `bigint`.
    Int8,
    /// `numeric`, with its `(precision, scale)` modifier if it has one.
    Numeric(Option<(u16, u16)>),
    /// `real`.
    Float4,
    /// `double precision`.
    Float8,
    /// `text`.
    Text,
    /// `character(n)`.
    Bpchar(u32),
    /// `character varying(n)`; 0 = unlimited.
    Varchar(u32),
    /// `name`.
    Name,
    /// `date`.
    Date,
    /// `timestamp without time zone`.
    Timestamp,
    /// `timestamp with time zone`.
    TimestampTz,
    /// `bytea`: values are [`Datum::Text`] holding the hex text form
    /// (`\x00ff`), whose order is the bytes' order.
    Bytea,
    /// `oid`.
    Oid,
    /// `xid`.
    Xid,
    /// `"char"` (one byte, `relkind`).
    QChar,
    /// A literal or parameter whose type is not known yet.
    Unknown,
}

/// Unconstrained `numeric`.
pub const NUMERIC: SqlType = SqlType::Numeric(None);

impl SqlType {
    /// PostgreSQL's type OID.
    pub const fn oid(self) -> u32 {
        match self {
            SqlType::Bool => 16,
            SqlType::Int2 => 21,
            SqlType::Int4 => 23,
            SqlType::Int8 => 20,
            SqlType::Numeric(_) => 1700,
            SqlType::Float4 => 700,
            SqlType::Float8 => 701,
            SqlType::Text | SqlType::Unknown => 25,
            SqlType::Bpchar(_) => 1042,
            SqlType::Varchar(_) => 1043,
            SqlType::Name => 19,
            SqlType::Date => 1082,
            SqlType::Timestamp => 1114,
            SqlType::TimestampTz => 1184,
            SqlType::Oid => 26,
            SqlType::Bytea => 17,
            SqlType::Xid => 28,
            SqlType::QChar => 18,
        }
    }

    /// `typlen`.
    pub const fn type_len(self) -> i16 {
        match self {
            SqlType::Bool | SqlType::QChar => 1,
            SqlType::Int2 => 2,
            SqlType::Int4 | SqlType::Oid | SqlType::Xid | SqlType::Float4 | SqlType::Date => 4,
            SqlType::Int8 | SqlType::Float8 | SqlType::Timestamp | SqlType::TimestampTz => 8,
            SqlType::Name => 64,
            _ => -1,
        }
    }

    /// `atttypmod`.
    pub const fn modifier(self) -> i32 {
        match self {
            SqlType::Bpchar(n) | SqlType::Varchar(n) if n > 0 => n as i32 + 4,
            SqlType::Numeric(Some((p, s))) => ((p as i32) << 16 | s as i32) + 4,
            _ => -1,
        }
    }

    /// The type of a parameter with OID `oid` (0 = to be inferred).
    pub fn from_oid(oid: u32) -> Option<SqlType> {
        Some(match oid {
            0 | 705 => SqlType::Unknown,
            16 => SqlType::Bool,
            20 => SqlType::Int8,
            21 => SqlType::Int2,
            23 => SqlType::Int4,
            25 => SqlType::Text,
            19 => SqlType::Name,
            26 => SqlType::Oid,
            17 => SqlType::Bytea,
            700 => SqlType::Float4,
            701 => SqlType::Float8,
            1042 => SqlType::Bpchar(0),
            1043 => SqlType::Varchar(0),
            1082 => SqlType::Date,
            1114 => SqlType::Timestamp,
            1184 => SqlType::TimestampTz,
            1700 => NUMERIC,
            _ => return None,
        })
    }

    /// Whether values of the type are integers.
    pub fn is_integer(self) -> bool {
        matches!(self, SqlType::Int2 | SqlType::Int4 | SqlType::Int8 | SqlType::Oid | SqlType::Xid)
    }

    /// Whether the type is a number type (integers, `numeric`, floats).
    pub fn is_number(self) -> bool {
        self.is_integer() || matches!(self, SqlType::Numeric(_) | SqlType::Float4 | SqlType::Float8)
    }

    /// Whether the type is `real` or `double precision`.
    pub fn is_float(self) -> bool {
        matches!(self, SqlType::Float4 | SqlType::Float8)
    }

    /// Whether the type is a string type.
    pub fn is_string(self) -> bool {
        matches!(
            self,
            SqlType::Text
                | SqlType::Bpchar(_)
                | SqlType::Varchar(_)
                | SqlType::Name
                | SqlType::QChar
                | SqlType::Unknown
        )
    }

    /// PostgreSQL's name of the type (for messages).
    pub fn name(self) -> &'static str {
        match self {
            SqlType::Bool => "boolean",
            SqlType::Int2 => "smallint",
            SqlType::Int4 => "integer",
            SqlType::Int8 => "bigint",
            SqlType::Numeric(_) => "numeric",
            SqlType::Float4 => "real",
            SqlType::Float8 => "double precision",
            SqlType::Text => "text",
            SqlType::Bpchar(_) => "character",
            SqlType::Varchar(_) => "character varying",
            SqlType::Name => "name",
            SqlType::Date => "date",
            SqlType::Timestamp => "timestamp without time zone",
            SqlType::TimestampTz => "timestamp with time zone",
            SqlType::Oid => "oid",
            SqlType::Bytea => "bytea",
            SqlType::Xid => "xid",
            SqlType::QChar => "\"char\"",
            SqlType::Unknown => "unknown",
        }
    }

    /// PostgreSQL's internal type name (`pg_type.typname`): what a cast's
    /// result column is called (`SELECT 1::integer` is `int4`).
    pub fn internal_name(self) -> &'static str {
        match self {
            SqlType::Bool => "bool",
            SqlType::Int2 => "int2",
            SqlType::Int4 => "int4",
            SqlType::Int8 => "int8",
            SqlType::Numeric(_) => "numeric",
            SqlType::Float4 => "float4",
            SqlType::Float8 => "float8",
            SqlType::Text => "text",
            SqlType::Bpchar(_) => "bpchar",
            SqlType::Varchar(_) => "varchar",
            SqlType::Name => "name",
            SqlType::Date => "date",
            SqlType::Timestamp => "timestamp",
            SqlType::TimestampTz => "timestamptz",
            SqlType::Oid => "oid",
            SqlType::Bytea => "bytea",
            SqlType::Xid => "xid",
            SqlType::QChar => "char",
            SqlType::Unknown => "unknown",
        }
    }

    /// The front-end type of an engine column.
    pub fn of_column(ty: ColumnType) -> SqlType {
        match ty {
            ColumnType::Int2 => SqlType::Int2,
            ColumnType::Int4 => SqlType::Int4,
            ColumnType::Int8 => SqlType::Int8,
            ColumnType::Float4 => SqlType::Float4,
            ColumnType::Float8 => SqlType::Float8,
            ColumnType::Numeric(m) => SqlType::Numeric(m),
            ColumnType::Text => SqlType::Text,
            ColumnType::Bool => SqlType::Bool,
            ColumnType::Date => SqlType::Date,
            ColumnType::Timestamp => SqlType::Timestamp,
            ColumnType::Timestamptz => SqlType::TimestampTz,
            ColumnType::Oid => SqlType::Oid,
            ColumnType::Bytea => SqlType::Bytea,
            ColumnType::Char(n) => SqlType::Bpchar(n),
            ColumnType::Varchar(n) => SqlType::Varchar(n.unwrap_or(0)),
        }
    }

    /// The engine column type that stores values of this type.
    pub fn to_column(self) -> Result<ColumnType, SqlError> {
        match self {
            SqlType::Int2 => Ok(ColumnType::Int2),
            SqlType::Int4 => Ok(ColumnType::Int4),
            SqlType::Int8 => Ok(ColumnType::Int8),
            SqlType::Float4 => Ok(ColumnType::Float4),
            SqlType::Float8 => Ok(ColumnType::Float8),
            SqlType::Numeric(m) => Ok(ColumnType::Numeric(m)),
            SqlType::Text => Ok(ColumnType::Text),
            SqlType::Varchar(n) => Ok(ColumnType::Varchar((n > 0).then_some(n))),
            SqlType::Bpchar(n) => Ok(ColumnType::Char(n.max(1))),
            SqlType::Bool => Ok(ColumnType::Bool),
            SqlType::Date => Ok(ColumnType::Date),
            SqlType::Timestamp => Ok(ColumnType::Timestamp),
            SqlType::TimestampTz => Ok(ColumnType::Timestamptz),
            SqlType::Oid => Ok(ColumnType::Oid),
            SqlType::Bytea => Ok(ColumnType::Bytea),
            other => Err(SqlError::unsupported(&format!("a table column of type {}", other.name()))),
        }
    }
}

/// One value of the front end. The static [`SqlType`] of the expression
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
    /// Microseconds since 2000-01-01 00:00:00 UTC.
    Timestamp(i64),
    /// Days since 2000-01-01.
    Date(i32),
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
            Datum::Timestamp(t) => t.hash(h),
            Datum::Date(d) => d.hash(h),
        }
    }
}

/// Days between 1970-01-01 and 2000-01-01 (PostgreSQL's epoch).
const PG_EPOCH_DAYS: i64 = 10_957;
const USECS_PER_DAY: i64 = 86_400_000_000;

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

fn format_timestamp(t: i64, out: &mut String, tz: bool) {
    out.push_str(&datetime::format_timestamp(t));
    if tz {
        out.push_str("+00");
    }
}

/// Formats a float as PostgreSQL 12+ does (`extra_float_digits = 1`): the
/// shortest text that reads back as the same value, in exponent form when
/// the decimal exponent is below -4 or at least `digits` (15 for `float8`,
/// 6 for `float4`): `1e+308`, `1e-05`, `0.30000000000000004`.
fn format_float(f: f64, single: bool, out: &mut String) {
    if f.is_nan() {
        out.push_str("NaN");
    } else if f.is_infinite() {
        out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
    } else {
        let sci = if single { format!("{:e}", f as f32) } else { format!("{f:e}") };
        let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let limit = if single { 6 } else { 15 };
        if exp < -4 || exp >= limit {
            let _ = write!(out, "{mant}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.unsigned_abs());
        } else if single {
            let _ = write!(out, "{}", f as f32);
        } else {
            let _ = write!(out, "{f}");
        }
    }
}

fn bad_input(ty: SqlType, s: &str) -> SqlError {
    SqlError::new(
        SqlState::INVALID_TEXT_REPRESENTATION,
        format!("invalid input syntax for type {}: \"{s}\"", ty.name()),
    )
}

/// PostgreSQL's `parse_bool`: `t`/`true`/`y`/`yes`/`on`/`1` and their
/// negatives, case-insensitive, any unique prefix of the words (`o` alone
/// is ambiguous), surrounding blanks ignored.
fn parse_bool(s: &str) -> Option<bool> {
    let t = s.trim().to_ascii_lowercase();
    if t.is_empty() {
        return None;
    }
    let prefix = |word: &str| word.starts_with(t.as_str());
    match t.as_str() {
        "1" => Some(true),
        "0" => Some(false),
        _ if t.len() >= 2 && prefix("on") => Some(true),
        _ if t.len() >= 2 && prefix("off") => Some(false),
        _ if prefix("true") || prefix("yes") => Some(true),
        _ if prefix("false") || prefix("no") => Some(false),
        _ => None,
    }
}

/// `22003` for a float result that overflowed or underflowed.
pub fn float_check(v: f64, inputs_finite: bool, inputs_zero: bool) -> Result<f64, SqlError> {
    if v.is_infinite() && inputs_finite {
        return Err(SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow"));
    }
    if v == 0.0 && !inputs_zero {
        return Err(SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: underflow"));
    }
    Ok(v)
}

/// A `real` from a `double precision` (`22003` when it does not fit).
fn to_float4(f: f64) -> Result<f64, SqlError> {
    let n = f as f32;
    if n.is_infinite() && f.is_finite() {
        return Err(SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow"));
    }
    if n == 0.0 && f != 0.0 {
        return Err(SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: underflow"));
    }
    Ok(f64::from(n))
}

/// Parses float input (`NaN`, `Infinity`, `1e-5`; `22003` beyond the
/// type's range, `22P02` for what is not a number).
fn parse_float(s: &str, ty: SqlType) -> Result<f64, SqlError> {
    let t = s.trim();
    let v = match t.to_ascii_lowercase().as_str() {
        "nan" => return Ok(f64::NAN),
        "infinity" | "inf" | "+infinity" | "+inf" => return Ok(f64::INFINITY),
        "-infinity" | "-inf" => return Ok(f64::NEG_INFINITY),
        _ => {
            if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-')) {
                return Err(bad_input(ty, s));
            }
            t.parse::<f64>().map_err(|_| bad_input(ty, s))?
        }
    };
    let mantissa = t.split(['e', 'E']).next().unwrap_or("");
    let nonzero = mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b));
    let out_of_range = || {
        SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, format!("\"{s}\" is out of range for type {}", ty.name()))
    };
    if v.is_infinite() || (v == 0.0 && nonzero) {
        return Err(out_of_range());
    }
    if ty == SqlType::Float4 {
        return to_float4(v).map_err(|_| out_of_range());
    }
    Ok(v)
}

fn datetime_error(e: DateTimeError, ty: SqlType, s: &str) -> SqlError {
    // PostgreSQL also reads month names ('January 8, 1999'); turnstile's
    // parser does not, and says so rather than calling the input invalid.
    const MONTHS: [&str; 12] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
    let month_name = |w: &str| {
        let w = w.to_ascii_lowercase();
        w.len() >= 3 && MONTHS.iter().any(|m| w.starts_with(m))
    };
    if matches!(e, DateTimeError::Syntax) && s.split(|c: char| !c.is_ascii_alphabetic()).any(month_name) {
        return SqlError::unsupported("date and time input with a month name");
    }
    match e {
        DateTimeError::Syntax => SqlError::new(
            SqlState::INVALID_DATETIME_FORMAT,
            format!("invalid input syntax for type {}: \"{s}\"", ty.name()),
        ),
        DateTimeError::FieldOutOfRange => {
            SqlError::new(SqlState::DATETIME_FIELD_OVERFLOW, format!("date/time field value out of range: \"{s}\""))
        }
    }
}

/// An integer of type `ty` (`22003` "integer out of range" and its kin
/// when `v` does not fit).
pub fn int_in_range(v: i64, ty: SqlType) -> Result<i64, SqlError> {
    let ok = match ty {
        SqlType::Int2 => i16::try_from(v).is_ok(),
        SqlType::Int4 => i32::try_from(v).is_ok(),
        SqlType::Oid | SqlType::Xid => u32::try_from(v).is_ok() || i32::try_from(v).is_ok(),
        _ => true,
    };
    if ok {
        Ok(v)
    } else {
        Err(out_of_range(ty))
    }
}

impl Datum {
    /// Whether the value is NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Datum::Null)
    }

    /// Text output (`None` for NULL), as PostgreSQL's output functions.
    pub fn to_text(&self, ty: SqlType) -> Option<String> {
        let mut s = String::new();
        self.write_text(ty, &mut s).then_some(s)
    }

    /// As [`Datum::to_text`], consuming the value: a text value is moved
    /// out, not copied.
    pub fn into_text(self, ty: SqlType) -> Option<String> {
        match self {
            Datum::Text(s) => Some(s),
            other => other.to_text(ty),
        }
    }

    /// Appends the text output to `out`; false for NULL.
    pub fn write_text(&self, ty: SqlType, out: &mut String) -> bool {
        match self {
            Datum::Null => return false,
            Datum::Bool(b) => out.push(if *b { 't' } else { 'f' }),
            Datum::Int(v) => {
                let _ = write!(out, "{v}");
            }
            Datum::Numeric(v) => numeric::write(v, out),
            Datum::Float(f) => format_float(*f, ty == SqlType::Float4, out),
            Datum::Text(s) => out.push_str(s),
            Datum::Timestamp(t) => format_timestamp(*t, out, ty == SqlType::TimestampTz),
            Datum::Date(d) => out.push_str(&datetime::format_date(*d)),
        }
        true
    }

    /// Parses text input for type `ty` (`22P02` on bad input); `char(n)`
    /// and `varchar(n)` refuse longer text (`22001`), as an assignment
    /// does.
    pub fn parse(s: &str, ty: SqlType) -> Result<Datum, SqlError> {
        let t = s.trim();
        Ok(match ty {
            SqlType::Bool => Datum::Bool(parse_bool(s).ok_or_else(|| bad_input(ty, s))?),
            SqlType::Int2 => Datum::Int(t.parse::<i16>().map_err(|_| int_error(ty, s))?.into()),
            SqlType::Int4 => Datum::Int(t.parse::<i32>().map_err(|_| int_error(ty, s))?.into()),
            SqlType::Int8 | SqlType::Xid => Datum::Int(t.parse::<i64>().map_err(|_| int_error(ty, s))?),
            SqlType::Oid => Datum::Int(parse_oid(t).ok_or_else(|| bad_input(ty, s))?),
            SqlType::Bytea => Datum::Text(bytea_hex_text(s).ok_or_else(|| bad_input(ty, s))?),
            SqlType::Numeric(m) => {
                let lower = t.to_ascii_lowercase();
                if matches!(lower.as_str(), "nan" | "infinity" | "-infinity" | "+infinity" | "inf" | "-inf") {
                    return Err(SqlError::unsupported("NaN and infinity in numeric"));
                }
                let v = numeric::parse(t).ok_or_else(|| bad_input(ty, s))?;
                Datum::Numeric(v).cast(SqlType::Numeric(m))?
            }
            SqlType::Float4 | SqlType::Float8 => Datum::Float(parse_float(s, ty)?),
            SqlType::Date => Datum::Date(datetime::parse_date(t).map_err(|e| datetime_error(e, ty, s))?),
            SqlType::Timestamp | SqlType::TimestampTz => {
                if t.eq_ignore_ascii_case("now") {
                    Datum::Timestamp(now_timestamp())
                } else if ty == SqlType::TimestampTz {
                    Datum::Timestamp(datetime::parse_timestamptz_checked(t).map_err(|e| datetime_error(e, ty, s))?)
                } else {
                    Datum::Timestamp(datetime::parse_timestamp_checked(t).map_err(|e| datetime_error(e, ty, s))?)
                }
            }
            SqlType::Bpchar(n) => Datum::Text(pad_char(s, n)?),
            SqlType::Varchar(n) => {
                if n > 0 && s.chars().count() > n as usize {
                    let trimmed = s.trim_end_matches(' ');
                    if trimmed.chars().count() > n as usize {
                        return Err(SqlError::new(
                            SqlState::STRING_DATA_RIGHT_TRUNCATION,
                            format!("value too long for type character varying({n})"),
                        ));
                    }
                    return Ok(Datum::Text(s.chars().take(n as usize).collect()));
                }
                Datum::Text(s.to_owned())
            }
            SqlType::Text | SqlType::Name | SqlType::QChar | SqlType::Unknown => Datum::Text(s.to_owned()),
        })
    }

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
            (Datum::Bool(a), Datum::Bool(b)) => a.cmp(b),
            (Datum::Timestamp(a), Datum::Timestamp(b)) => a.cmp(b),
            (Datum::Date(a), Datum::Date(b)) => a.cmp(b),
            (Datum::Date(a), Datum::Timestamp(b)) => (i64::from(*a) * USECS_PER_DAY).cmp(b),
            (Datum::Timestamp(a), Datum::Date(b)) => a.cmp(&(i64::from(*b) * USECS_PER_DAY)),
            (Datum::Numeric(a), Datum::Numeric(b)) => numeric::cmp(a, b),
            (Datum::Int(a), Datum::Numeric(b)) => numeric::cmp(&numeric::from_i128((*a).into()), b),
            (Datum::Numeric(a), Datum::Int(b)) => numeric::cmp(a, &numeric::from_i128((*b).into())),
            (a, b) => match (a.as_f64(), b.as_f64()) {
                (Some(x), Some(y)) => float_cmp(x, y),
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
            Datum::Timestamp(_) | Datum::Date(_) => 3,
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

    /// The engine value for a column of type `ty` (assignment cast first).
    pub fn to_engine(&self, ty: ColumnType) -> Result<Value, SqlError> {
        Ok(match (self, ty) {
            (Datum::Null, _) => Value::Null,
            (Datum::Int(v), ColumnType::Int4) => {
                Value::Int4(i32::try_from(*v).map_err(|_| out_of_range(SqlType::Int4))?)
            }
            (Datum::Int(v), ColumnType::Int2) => {
                Value::Int4(i16::try_from(*v).map_err(|_| out_of_range(SqlType::Int2))?.into())
            }
            (Datum::Int(v), ColumnType::Int8) => Value::Int8(*v),
            (Datum::Text(s), ColumnType::Text | ColumnType::Varchar(None)) => Value::Text(s.clone()),
            (Datum::Bool(b), ColumnType::Bool) => Value::Bool(*b),
            (Datum::Timestamp(t), ColumnType::Timestamp | ColumnType::Timestamptz) => Value::Timestamp(*t),
            (Datum::Int(v), ColumnType::Oid) => {
                Value::Int8(u32::try_from(*v).map_err(|_| out_of_range(SqlType::Oid))?.into())
            }
            (Datum::Text(s), ColumnType::Bytea) => Value::Bytea(
                turnstile_engine::types::parse_bytea_hex(
                    &bytea_hex_text(s).ok_or_else(|| bad_input(SqlType::Bytea, s))?,
                )
                .ok_or_else(|| bad_input(SqlType::Bytea, s))?,
            ),
            (Datum::Date(d), ColumnType::Date) => Value::Date(*d),
            (Datum::Float(f), ColumnType::Float8) => Value::Float(Float(*f)),
            (Datum::Float(f), ColumnType::Float4) => Value::Float(Float(to_float4(*f)?)),
            (Datum::Numeric(n), ColumnType::Numeric(None)) => Value::Numeric(numeric::to_string(n)),
            (Datum::Numeric(n), ColumnType::Numeric(Some((p, s)))) => {
                Value::Numeric(numeric::to_string(&numeric::apply_typmod(n, p, s)?))
            }
            (Datum::Text(s), ColumnType::Char(n)) => Value::Text(pad_char(s, n)?),
            (Datum::Text(s), ColumnType::Varchar(Some(n))) => match Datum::parse(s, SqlType::Varchar(n))? {
                Datum::Text(t) => Value::Text(t),
                _ => Value::Text(s.clone()),
            },
            (d, t) => return d.clone().cast(SqlType::of_column(t))?.to_engine(t),
        })
    }

    /// The front-end value of an engine value, taking it.
    pub fn from_engine_owned(v: Value) -> Datum {
        match v {
            Value::Text(s) => Datum::Text(s),
            other => Datum::from_engine(&other),
        }
    }

    /// The front-end value of an engine value.
    pub fn from_engine(v: &Value) -> Datum {
        match v {
            Value::Null => Datum::Null,
            Value::Int4(x) => Datum::Int((*x).into()),
            Value::Int8(x) => Datum::Int(*x),
            Value::Text(s) => Datum::Text(s.clone()),
            Value::Bool(b) => Datum::Bool(*b),
            Value::Timestamp(t) => Datum::Timestamp(*t),
            Value::Float(f) => Datum::Float(f.0),
            Value::Numeric(n) => numeric::parse(n).map_or(Datum::Null, Datum::Numeric),
            Value::Date(d) => Datum::Date(*d),
            Value::Bytea(b) => Datum::Text(turnstile_engine::types::bytea_hex(b)),
        }
    }
}

/// PostgreSQL's float order: NaN equals itself and sorts above every
/// other value.
fn float_cmp(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

/// `oid`'s input: an unsigned 32-bit integer, or a negative one that
/// fits `int4` taken modulo 2^32 (as PostgreSQL's `oidin`).
fn parse_oid(t: &str) -> Option<i64> {
    let v = t.parse::<i64>().ok()?;
    if (0..=i64::from(u32::MAX)).contains(&v) {
        Some(v)
    } else if v >= i64::from(i32::MIN) && v < 0 {
        Some(v + (1 << 32))
    } else {
        None
    }
}

/// A `bytea` text input (hex `\x00ff` or escape `a\\b\001`) in the
/// hex form; `None` if it is not valid.
pub(crate) fn bytea_hex_text(s: &str) -> Option<String> {
    let mut out = bytes::BytesMut::new();
    bytea_from_text(s, &mut out)?;
    Some(turnstile_engine::types::bytea_hex(&out))
}

/// Pads (or checks) a `character(n)` value.
pub fn pad_char(s: &str, n: u32) -> Result<String, SqlError> {
    if n == 0 {
        // `bpchar` without a length: no padding.
        return Ok(s.to_owned());
    }
    let len = s.chars().count();
    let n = n.max(1) as usize;
    if len > n {
        let trimmed = s.trim_end_matches(' ');
        if trimmed.chars().count() > n {
            return Err(SqlError::new(
                SqlState::STRING_DATA_RIGHT_TRUNCATION,
                format!("value too long for type character({n})"),
            ));
        }
        return Ok(trimmed.chars().chain(std::iter::repeat(' ')).take(n).collect());
    }
    let mut out = String::with_capacity(n);
    out.push_str(s);
    out.extend(std::iter::repeat_n(' ', n - len));
    Ok(out)
}

fn int_error(ty: SqlType, s: &str) -> SqlError {
    let t = s.trim();
    if !t.is_empty() && t.trim_start_matches(['-', '+']).bytes().all(|b| b.is_ascii_digit()) {
        out_of_range_value(ty, s)
    } else {
        bad_input(ty, s)
    }
}

fn out_of_range_value(ty: SqlType, s: &str) -> SqlError {
    SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, format!("value \"{s}\" is out of range for type {}", ty.name()))
}

/// `22003`: a value does not fit its type.
pub fn out_of_range(ty: SqlType) -> SqlError {
    let what = match ty {
        SqlType::Float4 | SqlType::Float8 => "value".to_owned(),
        SqlType::Oid => "OID".to_owned(),
        SqlType::Date | SqlType::Timestamp | SqlType::TimestampTz => format!("{} value", ty.name()),
        other => other.name().to_owned(),
    };
    SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, format!("{what} out of range"))
}

/// `bytea`'s text forms: hex (`\x0a1b`) or escape (`a\\b\001`).
pub(crate) fn bytea_from_text(text: &str, out: &mut bytes::BytesMut) -> Option<()> {
    use bytes::BufMut as _;
    if let Some(hex) = text.strip_prefix("\\x") {
        let h = hex.as_bytes();
        if h.len() % 2 != 0 {
            return None;
        }
        for pair in h.chunks(2) {
            out.put_u8(u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?);
        }
        return Some(());
    }
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.put_u8(b[i]);
            i += 1;
        } else if b.get(i + 1) == Some(&b'\\') {
            out.put_u8(b'\\');
            i += 2;
        } else {
            let oct = std::str::from_utf8(b.get(i + 1..i + 4)?).ok()?;
            out.put_u8(u8::from_str_radix(oct, 8).ok()?);
            i += 4;
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_round_trip_through_text() {
        let t = Datum::parse("2026-11-24 10:35:28.5", SqlType::Timestamp).unwrap();
        assert_eq!(t.to_text(SqlType::Timestamp).unwrap(), "2026-11-24 10:35:28.5");
        assert!(matches!(Datum::parse("2000-01-01", SqlType::Timestamp), Ok(Datum::Timestamp(0))));
        assert_eq!(Datum::parse("2000-13-01", SqlType::Timestamp).unwrap_err().code, "22008");
        assert_eq!(Datum::parse("2023-02-29", SqlType::Date).unwrap_err().code, "22008");
        assert_eq!(Datum::parse("yesterdayish", SqlType::Date).unwrap_err().code, "22007");
    }

    #[test]
    fn floats_print_as_postgresql_does() {
        let f = |v: f64| Datum::Float(v).to_text(SqlType::Float8).unwrap();
        assert_eq!(f(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(f(1e308), "1e+308");
        assert_eq!(f(1e15), "1e+15");
        assert_eq!(f(123456789012345.0), "123456789012345");
        assert_eq!(f(0.0001), "0.0001");
        assert_eq!(f(0.00001), "1e-05");
        assert_eq!(f(-2.5), "-2.5");
        assert_eq!(f(f64::INFINITY), "Infinity");
        assert_eq!(f(f64::NAN), "NaN");
        assert_eq!(Datum::Float(f64::from(0.1f32)).to_text(SqlType::Float4).unwrap(), "0.1");
        assert_eq!(Datum::parse("1e400", SqlType::Float8).unwrap_err().code, "22003");
        assert_eq!(Datum::parse("1e-400", SqlType::Float8).unwrap_err().code, "22003");
        assert_eq!(Datum::parse("1e39", SqlType::Float4).unwrap_err().code, "22003");
        assert_eq!(Datum::parse("abc", SqlType::Float8).unwrap_err().code, "22P02");
    }

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

    #[test]
    fn booleans_read_every_postgresql_form() {
        for t in ["t", "TRUE", "yes", "y", "on", "1", " tr ", "ye"] {
            assert_eq!(Datum::parse(t, SqlType::Bool).unwrap(), Datum::Bool(true), "{t}");
        }
        for f in ["f", "false", "no", "n", "off", "0", "of"] {
            assert_eq!(Datum::parse(f, SqlType::Bool).unwrap(), Datum::Bool(false), "{f}");
        }
        for bad in ["maybe", "o", "", "2", "yess"] {
            assert_eq!(Datum::parse(bad, SqlType::Bool).unwrap_err().code, "22P02", "{bad}");
        }
    }

    #[test]
    fn char_is_padded_and_bad_input_is_22p02() {
        assert_eq!(pad_char("ab", 4).unwrap(), "ab  ");
        assert_eq!(Datum::parse("x1", SqlType::Int4).unwrap_err().code, "22P02");
        assert_eq!(Datum::parse("99999999999", SqlType::Int4).unwrap_err().code, "22003");
    }
}
