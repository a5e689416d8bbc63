//! Text input and output, as PostgreSQL's `*in` and `*out` functions:
//! [`Datum::parse`] reads a type's text form (`22P02` for what is not one,
//! `22003`/`22008` for a value out of range), [`Datum::write_text`] prints
//! the canonical form (floats in their shortest round-trip digits,
//! timestamps in ISO form to the microsecond).

use super::bytea::{parse_bytea, write_bytea_hex};
use super::datum::{now_timestamp, Datum};
use super::range::to_float4;
use super::sql_type::SqlType;
use crate::error::SqlError;
use crate::expr::numeric;
use std::fmt::Write as _;
use turnstile_engine::datetime::{self, DateTimeError};
use turnstile_lock::SqlState;

impl Datum {
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
            Datum::Bytea(b) => write_bytea_hex(b, out),
            Datum::Timestamp(t) => format_timestamp(*t, out, ty == SqlType::TimestampTz),
            Datum::Date(d) => out.push_str(&datetime::format_date(*d)),
            Datum::Array(items) => match ty {
                SqlType::Record(fields) => super::record::write_record(items, fields, out),
                _ => super::array::write_array(items, ty.element().unwrap_or(SqlType::Text), out),
            },
        }
        true
    }

    /// Parses text input for type `ty` (`22P02` on bad input); `char(n)`
    /// and `varchar(n)` refuse longer text (`22001`), as an assignment
    /// does.
    pub fn parse(s: &str, ty: SqlType) -> Result<Datum, SqlError> {
        let t = s.trim();
        Ok(match ty {
            SqlType::Array(e) => super::array::parse_array(s, *e)?,
            SqlType::Record(_) => return Err(SqlError::unsupported("input of anonymous composite types")),
            SqlType::Json => return Err(SqlError::unsupported("json input")),
            SqlType::Bool => Datum::Bool(parse_bool(s).ok_or_else(|| bad_input(ty, s))?),
            SqlType::Int2 => Datum::Int(t.parse::<i16>().map_err(|_| int_error(ty, s))?.into()),
            SqlType::Int4 => Datum::Int(t.parse::<i32>().map_err(|_| int_error(ty, s))?.into()),
            SqlType::Int8 | SqlType::Xid => Datum::Int(t.parse::<i64>().map_err(|_| int_error(ty, s))?),
            SqlType::Oid => Datum::Int(parse_oid(t).ok_or_else(|| bad_input(ty, s))?),
            // A name is read against the catalog (`catalog::reg`) where the
            // compiler sees the cast; here only the numeric form is.
            SqlType::Reg(_) => {
                Datum::Int(parse_oid(t).ok_or_else(|| {
                    SqlError::unsupported(&format!("reading \"{s}\" as {} outside a cast", ty.name()))
                })?)
            }
            SqlType::Bytea => Datum::Bytea(parse_bytea(s).ok_or_else(|| bad_input(ty, s))?),
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
                } else if ty == SqlType::TimestampTz && has_zone(t) {
                    Datum::Timestamp(datetime::parse_timestamptz_checked(t).map_err(|e| datetime_error(e, ty, s))?)
                } else if ty == SqlType::TimestampTz {
                    let local = datetime::parse_timestamp_checked(t).map_err(|e| datetime_error(e, ty, s))?;
                    Datum::Timestamp(super::zone::local_to_utc(local))
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
}

/// A `timestamp`, or a `timestamptz` in the session's zone with its
/// offset (`2024-07-01 14:00:00+02`).
fn format_timestamp(t: i64, out: &mut String, tz: bool) {
    if !tz {
        out.push_str(&datetime::format_timestamp(t));
        return;
    }
    let offset = super::zone::offset_secs(t);
    out.push_str(&datetime::format_timestamp(t + i64::from(offset) * 1_000_000));
    super::zone::write_offset(offset, out);
}

/// Whether a `timestamptz` literal gives its own zone (`+02`, `-05:30`,
/// `Z`, `UTC`); one without is read in the session's zone.
fn has_zone(t: &str) -> bool {
    let upper = t.trim_end().to_ascii_uppercase();
    if upper.ends_with('Z') || upper.ends_with(" UTC") || upper.ends_with(" GMT") {
        return true;
    }
    let time_starts = upper.find([' ', 'T']).map_or(upper.len(), |at| at + 1);
    upper[time_starts..].contains(['+', '-'])
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

pub(super) fn bad_input(ty: SqlType, s: &str) -> SqlError {
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
