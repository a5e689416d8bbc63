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
use std::cmp::Ordering;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use turnstile_engine::types::{ColumnType, Value};
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
    /// `numeric` (integers only here: `sum(bigint)`).
    Numeric,
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
    /// `timestamp without time zone`.
    Timestamp,
    /// `timestamp with time zone`.
    TimestampTz,
    /// `oid`.
    Oid,
    /// `xid`.
    Xid,
    /// `"char"` (one byte, `relkind`).
    QChar,
    /// A literal or parameter whose type is not known yet.
    Unknown,
}

impl SqlType {
    /// PostgreSQL's type OID.
    pub const fn oid(self) -> u32 {
        match self {
            SqlType::Bool => 16,
            SqlType::Int2 => 21,
            SqlType::Int4 => 23,
            SqlType::Int8 => 20,
            SqlType::Numeric => 1700,
            SqlType::Float8 => 701,
            SqlType::Text | SqlType::Unknown => 25,
            SqlType::Bpchar(_) => 1042,
            SqlType::Varchar(_) => 1043,
            SqlType::Name => 19,
            SqlType::Timestamp => 1114,
            SqlType::TimestampTz => 1184,
            SqlType::Oid => 26,
            SqlType::Xid => 28,
            SqlType::QChar => 18,
        }
    }

    /// `typlen`.
    pub const fn type_len(self) -> i16 {
        match self {
            SqlType::Bool | SqlType::QChar => 1,
            SqlType::Int2 => 2,
            SqlType::Int4 | SqlType::Oid | SqlType::Xid => 4,
            SqlType::Int8 | SqlType::Float8 | SqlType::Timestamp | SqlType::TimestampTz => 8,
            SqlType::Name => 64,
            _ => -1,
        }
    }

    /// `atttypmod`.
    pub const fn modifier(self) -> i32 {
        match self {
            SqlType::Bpchar(n) | SqlType::Varchar(n) if n > 0 => n as i32 + 4,
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
            701 | 700 => SqlType::Float8,
            1042 => SqlType::Bpchar(0),
            1043 => SqlType::Varchar(0),
            1114 => SqlType::Timestamp,
            1184 => SqlType::TimestampTz,
            1700 => SqlType::Numeric,
            _ => return None,
        })
    }

    /// Whether values of the type are integers.
    pub fn is_integer(self) -> bool {
        matches!(self, SqlType::Int2 | SqlType::Int4 | SqlType::Int8 | SqlType::Oid | SqlType::Xid)
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
            SqlType::Numeric => "numeric",
            SqlType::Float8 => "double precision",
            SqlType::Text => "text",
            SqlType::Bpchar(_) => "character",
            SqlType::Varchar(_) => "character varying",
            SqlType::Name => "name",
            SqlType::Timestamp => "timestamp without time zone",
            SqlType::TimestampTz => "timestamp with time zone",
            SqlType::Oid => "oid",
            SqlType::Xid => "xid",
            SqlType::QChar => "\"char\"",
            SqlType::Unknown => "unknown",
        }
    }

    /// The front-end type of an engine column.
    pub fn of_column(ty: ColumnType) -> SqlType {
        match ty {
            ColumnType::Int4 => SqlType::Int4,
            ColumnType::Int8 => SqlType::Int8,
            ColumnType::Text => SqlType::Text,
            ColumnType::Bool => SqlType::Bool,
            ColumnType::Timestamp => SqlType::Timestamp,
            ColumnType::Char(n) => SqlType::Bpchar(n),
            ColumnType::Varchar(n) => SqlType::Varchar(n.unwrap_or(0)),
        }
    }

    /// The engine column type that stores values of this type.
    pub fn to_column(self) -> Result<ColumnType, SqlError> {
        match self {
            SqlType::Int2 | SqlType::Int4 => Ok(ColumnType::Int4),
            SqlType::Int8 => Ok(ColumnType::Int8),
            SqlType::Text => Ok(ColumnType::Text),
            SqlType::Varchar(n) => Ok(ColumnType::Varchar((n > 0).then_some(n))),
            SqlType::Bpchar(n) => Ok(ColumnType::Char(n.max(1))),
            SqlType::Bool => Ok(ColumnType::Bool),
            SqlType::Timestamp => Ok(ColumnType::Timestamp),
            other => Err(SqlError::unsupported(&format!("a table column of type {}", other.name()))),
        }
    }
}

/// One value of the front end.
#[derive(Clone, Debug)]
pub enum Datum {
    /// NULL.
    Null,
    /// A boolean.
    Bool(bool),
    /// Any integer type (the static type says which).
    Int(i64),
    /// `numeric` (integral).
    Numeric(i128),
    /// `double precision`.
    Float(f64),
    /// Any string type.
    Text(String),
    /// Microseconds since 2000-01-01 00:00:00 UTC.
    Timestamp(i64),
}

impl PartialEq for Datum {
    fn eq(&self, other: &Datum) -> bool {
        match (self, other) {
            (Datum::Null, Datum::Null) => true,
            (Datum::Float(a), Datum::Float(b)) => a.to_bits() == b.to_bits(),
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
            Datum::Numeric(v) => v.hash(h),
            Datum::Float(f) => f.to_bits().hash(h),
            Datum::Text(s) => s.hash(h),
            Datum::Timestamp(t) => t.hash(h),
        }
    }
}

/// Days from 0000-03-01 style civil conversion (Howard Hinnant's algorithm).
pub(crate) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
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
    let days = t.div_euclid(USECS_PER_DAY);
    let us = t.rem_euclid(USECS_PER_DAY);
    let (y, m, d) = civil_from_days(days + PG_EPOCH_DAYS);
    let secs = us / 1_000_000;
    let frac = us % 1_000_000;
    let _ = write!(out, "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
    if frac != 0 {
        let mut f = format!("{frac:06}");
        while f.ends_with('0') {
            f.pop();
        }
        out.push('.');
        out.push_str(&f);
    }
    if tz {
        out.push_str("+00");
    }
}

#[cfg(test)]
fn parse_timestamp(s: &str) -> Option<i64> {
    let s = s.trim();
    let (date, time) = match s.split_once([' ', 'T']) {
        Some((d, t)) => (d, t.trim()),
        None => (s, ""),
    };
    let mut parts = date.splitn(3, '-');
    let y: i64 = parts.next()?.parse().ok()?;
    let m: i64 = parts.next()?.parse().ok()?;
    let d: i64 = parts.next()?.parse().ok()?;
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let time = time.trim_end_matches("+00").trim_end_matches('Z');
    let mut us = 0i64;
    if !time.is_empty() {
        let mut hms = time.splitn(3, ':');
        let h: i64 = hms.next()?.parse().ok()?;
        let mi: i64 = hms.next().unwrap_or("0").parse().ok()?;
        let sec: f64 = hms.next().unwrap_or("0").parse().ok()?;
        if !(0..24).contains(&h) || !(0..60).contains(&mi) || !(0.0..61.0).contains(&sec) {
            return None;
        }
        us = (h * 3600 + mi * 60) * 1_000_000 + (sec * 1e6).round() as i64;
    }
    Some((days_from_civil(y, m, d) - PG_EPOCH_DAYS) * USECS_PER_DAY + us)
}

/// Formats a float as PostgreSQL 12+ does (shortest exact form).
fn format_float(f: f64, out: &mut String) {
    if f.is_nan() {
        out.push_str("NaN");
    } else if f.is_infinite() {
        out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
    } else {
        let _ = write!(out, "{f}");
    }
}

fn bad_input(ty: SqlType, s: &str) -> SqlError {
    SqlError::new(
        SqlState::INVALID_TEXT_REPRESENTATION,
        format!("invalid input syntax for type {}: \"{s}\"", ty.name()),
    )
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

    /// Appends the text output to `out`; false for NULL.
    pub fn write_text(&self, ty: SqlType, out: &mut String) -> bool {
        match self {
            Datum::Null => return false,
            Datum::Bool(b) => out.push(if *b { 't' } else { 'f' }),
            Datum::Int(v) => {
                let _ = write!(out, "{v}");
            }
            Datum::Numeric(v) => {
                let _ = write!(out, "{v}");
            }
            Datum::Float(f) => format_float(*f, out),
            Datum::Text(s) => out.push_str(s),
            Datum::Timestamp(t) => format_timestamp(*t, out, ty == SqlType::TimestampTz),
        }
        true
    }

    /// Parses text input for type `ty` (`22P02` on bad input).
    pub fn parse(s: &str, ty: SqlType) -> Result<Datum, SqlError> {
        let t = s.trim();
        Ok(match ty {
            SqlType::Bool => match t.to_ascii_lowercase().as_str() {
                "t" | "true" | "yes" | "y" | "on" | "1" => Datum::Bool(true),
                "f" | "false" | "no" | "n" | "off" | "0" => Datum::Bool(false),
                _ => return Err(bad_input(ty, s)),
            },
            SqlType::Int2 => Datum::Int(t.parse::<i16>().map_err(|_| int_error(ty, s))?.into()),
            SqlType::Int4 => Datum::Int(t.parse::<i32>().map_err(|_| int_error(ty, s))?.into()),
            SqlType::Int8 | SqlType::Oid | SqlType::Xid => Datum::Int(t.parse::<i64>().map_err(|_| int_error(ty, s))?),
            SqlType::Numeric => match t.parse::<i128>() {
                Ok(v) => Datum::Numeric(v),
                Err(_) => Datum::Float(t.parse::<f64>().map_err(|_| bad_input(ty, s))?),
            },
            SqlType::Float8 => Datum::Float(match t.to_ascii_lowercase().as_str() {
                "nan" => f64::NAN,
                "infinity" | "inf" => f64::INFINITY,
                "-infinity" | "-inf" => f64::NEG_INFINITY,
                _ => t.parse::<f64>().map_err(|_| bad_input(ty, s))?,
            }),
            SqlType::Timestamp | SqlType::TimestampTz => {
                if t.eq_ignore_ascii_case("now") {
                    Datum::Timestamp(now_timestamp())
                } else {
                    Datum::Timestamp(
                        crate::timestamp_input::parse(t, ty == SqlType::TimestampTz).ok_or_else(|| bad_input(ty, s))?,
                    )
                }
            }
            SqlType::Bpchar(n) => Datum::Text(pad_char(s, n)?),
            SqlType::Varchar(n) => {
                if n > 0 && s.chars().count() > n as usize {
                    return Err(SqlError::new(
                        SqlState::STRING_DATA_RIGHT_TRUNCATION,
                        format!("value too long for type character varying({n})"),
                    ));
                }
                Datum::Text(s.to_owned())
            }
            SqlType::Text | SqlType::Name | SqlType::QChar | SqlType::Unknown => Datum::Text(s.to_owned()),
        })
    }

    /// Casts to `ty` (assignment or explicit cast).
    pub fn cast(self, ty: SqlType) -> Result<Datum, SqlError> {
        Ok(match (self, ty) {
            (Datum::Null, _) => Datum::Null,
            (Datum::Text(s), t) => Datum::parse(&s, t)?,
            (d, SqlType::Text | SqlType::Name | SqlType::QChar | SqlType::Unknown) => {
                Datum::Text(d.to_text(ty).unwrap_or_default())
            }
            (d, SqlType::Bpchar(_) | SqlType::Varchar(_)) => {
                Datum::parse(&d.to_text(SqlType::Text).unwrap_or_default(), ty)?
            }
            (Datum::Int(v), SqlType::Int2) => Datum::Int(i16::try_from(v).map_err(|_| out_of_range(ty))?.into()),
            (Datum::Int(v), SqlType::Int4) => Datum::Int(i32::try_from(v).map_err(|_| out_of_range(ty))?.into()),
            (Datum::Int(v), SqlType::Int8 | SqlType::Oid | SqlType::Xid) => Datum::Int(v),
            (Datum::Int(v), SqlType::Numeric) => Datum::Numeric(v.into()),
            (Datum::Int(v), SqlType::Float8) => Datum::Float(v as f64),
            (Datum::Int(v), SqlType::Bool) => Datum::Bool(v != 0),
            (Datum::Numeric(v), t) if t.is_integer() => {
                Datum::Int(i64::try_from(v).map_err(|_| out_of_range(t))?).cast(t)?
            }
            (Datum::Numeric(v), SqlType::Float8) => Datum::Float(v as f64),
            (Datum::Numeric(v), SqlType::Numeric) => Datum::Numeric(v),
            (Datum::Float(f), t) if t.is_integer() => {
                let r = f.round_ties_even();
                if !r.is_finite() || r.abs() > 9.2e18 {
                    return Err(out_of_range(t));
                }
                Datum::Int(r as i64).cast(t)?
            }
            (Datum::Float(f), SqlType::Numeric | SqlType::Float8) => Datum::Float(f),
            (Datum::Bool(b), SqlType::Bool) => Datum::Bool(b),
            (Datum::Bool(b), SqlType::Int4) => Datum::Int(b.into()),
            (Datum::Timestamp(t), SqlType::Timestamp | SqlType::TimestampTz) => Datum::Timestamp(t),
            (d, t) => {
                return Err(SqlError::new(
                    SqlState::CANNOT_COERCE,
                    format!("cannot cast value {} to type {}", d.to_text(SqlType::Text).unwrap_or_default(), t.name()),
                ))
            }
        })
    }

    /// SQL comparison of two non-NULL values (NULLs sort last).
    pub fn cmp_sql(&self, other: &Datum) -> Ordering {
        match (self, other) {
            (Datum::Null, Datum::Null) => Ordering::Equal,
            (Datum::Null, _) => Ordering::Greater,
            (_, Datum::Null) => Ordering::Less,
            (Datum::Int(a), Datum::Int(b)) => a.cmp(b),
            (Datum::Text(a), Datum::Text(b)) => a.trim_end_matches(' ').cmp(b.trim_end_matches(' ')),
            (Datum::Bool(a), Datum::Bool(b)) => a.cmp(b),
            (Datum::Timestamp(a), Datum::Timestamp(b)) => a.cmp(b),
            (Datum::Numeric(a), Datum::Numeric(b)) => a.cmp(b),
            (Datum::Int(a), Datum::Numeric(b)) => i128::from(*a).cmp(b),
            (Datum::Numeric(a), Datum::Int(b)) => a.cmp(&i128::from(*b)),
            (a, b) => match (a.as_f64(), b.as_f64()) {
                (Some(x), Some(y)) => x.total_cmp(&y),
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
            Datum::Timestamp(_) => 3,
        }
    }

    /// The value as a float, for numeric values.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Datum::Int(v) => Some(*v as f64),
            Datum::Numeric(v) => Some(*v as f64),
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
            (Datum::Int(v), ColumnType::Int8) => Value::Int8(*v),
            (Datum::Text(s), ColumnType::Text | ColumnType::Varchar(None)) => Value::Text(s.clone()),
            (Datum::Bool(b), ColumnType::Bool) => Value::Bool(*b),
            (Datum::Timestamp(t), ColumnType::Timestamp) => Value::Timestamp(*t),
            (Datum::Text(s), ColumnType::Char(n)) => Value::Text(pad_char(s, n)?),
            (Datum::Text(s), ColumnType::Varchar(Some(n))) => {
                if s.chars().count() > n as usize {
                    return Err(SqlError::new(
                        SqlState::STRING_DATA_RIGHT_TRUNCATION,
                        format!("value too long for type character varying({n})"),
                    ));
                }
                Value::Text(s.clone())
            }
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
        }
    }
}

/// Pads (or checks) a `character(n)` value.
pub fn pad_char(s: &str, n: u32) -> Result<String, SqlError> {
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
    SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, format!("{} out of range", ty.name()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_round_trip_through_text() {
        let t = parse_timestamp("2026-11-24 10:35:28.5").unwrap();
        assert_eq!(Datum::Timestamp(t).to_text(SqlType::Timestamp).unwrap(), "2026-11-24 10:35:28.5");
        assert_eq!(parse_timestamp("2000-01-01").unwrap(), 0);
        assert!(parse_timestamp("2000-13-01").is_none());
    }

    #[test]
    fn char_is_padded_and_bad_input_is_22p02() {
        assert_eq!(pad_char("ab", 4).unwrap(), "ab  ");
        assert_eq!(Datum::parse("x1", SqlType::Int4).unwrap_err().code, "22P02");
        assert_eq!(Datum::parse("99999999999", SqlType::Int4).unwrap_err().code, "22003");
    }
}
