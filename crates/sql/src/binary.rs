//! PostgreSQL's binary format (format code 1): each type's `send` and `recv`
//! functions, byte for byte as PostgreSQL 15 defines them, for the
//! protocol's parameters and results and for `COPY … (FORMAT binary)`.
//!
//! Here each type's binary form is read into, and written from, the text
//! its `out` function prints ([`recv`], [`send`]). Both directions are
//! exact: every text form used here (`numeric`'s digits, `float8`'s
//! shortest round-trip digits, ISO timestamps to the microsecond) carries
//! the whole value. Typed values — COPY's, `Bind`'s binary parameters
//! ([`Param::binary`](crate::Param::binary)) and binary result columns
//! ([`ResultRows`](crate::ResultRows)) — are converted without text where
//! the binary form is the value's representation (`binary_datum.rs`), and
//! through these functions for the rest (`numeric` and `"char"` both
//! ways; on input also `date`, the timestamps and the length-checked
//! strings, whose range and length checks live with their text).
//!
//! | type (OID) | binary form |
//! |---|---|
//! | `bool` (16) | 1 byte, 0 or 1 (any non-zero byte reads as true) |
//! | `"char"` (18) | 1 byte |
//! | `int2` (21), `int4` (23), `int8` (20) | big-endian two's complement |
//! | `oid` (26), `xid` (28) | big-endian unsigned 32 bits |
//! | `float4` (700), `float8` (701) | big-endian IEEE 754 |
//! | `text` (25), `varchar` (1043), `bpchar` (1042), `name` (19), `unknown` (705) | the UTF-8 bytes |
//! | `bytea` (17) | the bytes |
//! | `numeric` (1700) | `ndigits`, `weight`, `sign`, `dscale` (int16 each), then `ndigits` base-10000 digits (int16 each) |
//! | `date` (1082) | int32 days since 2000-01-01 (`i32::MIN`/`MAX` = ∓infinity) |
//! | `timestamp` (1114), `timestamptz` (1184) | int64 µs since 2000-01-01 00:00 (UTC for `timestamptz`; `i64::MIN`/`MAX` = ∓infinity) |
//!
//! pgwire is used here without its type layer (it would bring its async
//! server API), and the fixed-width forms are `to_be_bytes` of the value;
//! `numeric`'s base-10000 form is not in any small maintained crate, so it is
//! written out here, against PostgreSQL's `numeric_send`/`numeric_recv`.
//! The tests hold every type to bytes recorded from PostgreSQL 15's
//! `*send` functions.

use crate::error::SqlError;
use bytes::{BufMut, BytesMut};
use std::fmt::Write as _;
use turnstile_lock::SqlState;

/// `22P03` (`invalid_binary_representation`).
const INVALID_BINARY_REPRESENTATION: SqlState = SqlState::from_code("22P03");

/// Format code 0: text.
pub const TEXT: i16 = 0;
/// Format code 1: binary.
pub const BINARY: i16 = 1;

const BOOL: u32 = 16;
const BYTEA: u32 = 17;
const CHAR: u32 = 18;
const NAME: u32 = 19;
const INT8: u32 = 20;
const INT2: u32 = 21;
const INT4: u32 = 23;
const TEXT_OID: u32 = 25;
const OID: u32 = 26;
const XID: u32 = 28;
const FLOAT4: u32 = 700;
const FLOAT8: u32 = 701;
const UNKNOWN: u32 = 705;
const BPCHAR: u32 = 1042;
const VARCHAR: u32 = 1043;
const DATE: u32 = 1082;
const TIMESTAMP: u32 = 1114;
const TIMESTAMPTZ: u32 = 1184;
const NUMERIC: u32 = 1700;
/// `void`: `void_send` sends no bytes (`SELECT pg_advisory_lock($1)` in
/// binary, as sqlx asks for it).
const VOID: u32 = 2278;

/// Whether type `oid` has a binary form here: the types below, and the
/// arrays of them (`array_send`/`array_recv`).
pub fn supported(oid: u32) -> bool {
    let array_of_supported = || {
        crate::value::SqlType::from_oid(oid).and_then(crate::value::SqlType::element).is_some_and(|e| scalar(e.oid()))
    };
    scalar(oid) || array_of_supported()
}

/// Whether the non-array type `oid` has a binary form here.
fn scalar(oid: u32) -> bool {
    matches!(
        oid,
        BOOL | BYTEA
            | CHAR
            | NAME
            | INT8
            | INT2
            | INT4
            | TEXT_OID
            | OID
            | XID
            | FLOAT4
            | FLOAT8
            | UNKNOWN
            | BPCHAR
            | VARCHAR
            | DATE
            | TIMESTAMP
            | TIMESTAMPTZ
            | NUMERIC
            | VOID
    )
}

/// The format of each of `n` values from a message's format codes, as
/// PostgreSQL reads them: no code = all text, one code = for every value,
/// else one code per value. `what` names the values for the error
/// (`parameter`/`result`).
pub fn formats(codes: &[i16], n: usize, what: Counted) -> Result<Vec<i16>, SqlError> {
    let all = match codes {
        [] => return Ok(vec![TEXT; n]),
        [one] => *one,
        _ if codes.len() == n => return codes.iter().map(|&c| check_code(c)).collect(),
        _ => {
            return Err(SqlError::new(
                SqlState::PROTOCOL_VIOLATION,
                match what {
                    Counted::Parameters => {
                        format!("bind message has {} parameter formats but {n} parameters", codes.len())
                    }
                    Counted::Columns => {
                        format!("bind message has {} result formats but query has {n} columns", codes.len())
                    }
                },
            ))
        }
    };
    // A code that applies to no value is not looked at (PostgreSQL's
    // behaviour: `Bind` with one binary code and no parameters is valid).
    if n == 0 {
        return Ok(Vec::new());
    }
    Ok(vec![check_code(all)?; n])
}

/// What a list of format codes counts.
#[derive(Clone, Copy, Debug)]
pub enum Counted {
    /// Bind's parameters.
    Parameters,
    /// A portal's result columns.
    Columns,
}

fn check_code(code: i16) -> Result<i16, SqlError> {
    match code {
        TEXT | BINARY => Ok(code),
        other => Err(SqlError::new(SqlState::INVALID_PARAMETER_VALUE, format!("unsupported format code: {other}"))),
    }
}

/// Decodes binary value number `index` (0-based) of type `oid` into the
/// text form the type's input function reads.
pub fn recv(oid: u32, data: &[u8], index: usize) -> Result<String, SqlError> {
    let mut r = Reader { data, pos: 0 };
    let text = match oid {
        BOOL => (if r.u8()? != 0 { "t" } else { "f" }).to_owned(),
        CHAR => {
            let b = r.u8()?;
            char_text(b)
        }
        INT2 => r.i16()?.to_string(),
        INT4 => r.i32()?.to_string(),
        INT8 => r.i64()?.to_string(),
        OID | XID => r.u32()?.to_string(),
        FLOAT4 => float_text(f64::from(f32::from_bits(r.u32()?)), |f| (f as f32).to_string()),
        FLOAT8 => float_text(f64::from_bits(r.u64()?), |f| f.to_string()),
        TEXT_OID | VARCHAR | BPCHAR | UNKNOWN => utf8(r.rest())?,
        NAME => {
            // namerecv: at most NAMEDATALEN - 1 bytes, cut on a character boundary.
            let mut s = utf8(r.rest())?;
            let mut cut = s.len().min(63);
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            s.truncate(cut);
            s
        }
        BYTEA => {
            let bytes = r.rest();
            let mut s = String::with_capacity(2 + 2 * bytes.len());
            s.push_str("\\x");
            for b in bytes {
                let _ = write!(s, "{b:02x}");
            }
            s
        }
        NUMERIC => numeric_recv(&mut r)?,
        DATE => {
            let days = r.i32()?;
            date_text(days).ok_or_else(|| out_of_range("date"))?
        }
        TIMESTAMP | TIMESTAMPTZ => {
            let us = r.i64()?;
            let mut s = timestamp_text(us).ok_or_else(|| out_of_range("timestamp"))?;
            if oid == TIMESTAMPTZ && us != i64::MIN && us != i64::MAX {
                // The instant is UTC; the input function reads the offset.
                s.push_str("+00");
            }
            s
        }
        other => {
            return Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("no binary input function available for type {}", type_name(other)),
            ))
        }
    };
    if r.pos != data.len() {
        return Err(incorrect_format(index));
    }
    Ok(text)
}

/// `22P03` for value number `index` (0-based) with bytes left over.
pub(crate) fn incorrect_format(index: usize) -> SqlError {
    SqlError::new(
        INVALID_BINARY_REPRESENTATION,
        format!("incorrect binary data format in bind parameter {}", index + 1),
    )
}

/// Appends the binary form of a value of type `oid` whose text form (as the
/// type's output function prints it) is `text`.
pub fn send(oid: u32, text: &str, out: &mut BytesMut) -> Result<(), SqlError> {
    match oid {
        BOOL => out.put_u8(match text {
            "t" | "true" => 1,
            "f" | "false" => 0,
            _ => return Err(bad_text(oid, text)),
        }),
        CHAR => out.put_u8(char_byte(text).ok_or_else(|| bad_text(oid, text))?),
        INT2 => out.put_i16(text.parse().map_err(|_| bad_text(oid, text))?),
        INT4 => out.put_i32(text.parse().map_err(|_| bad_text(oid, text))?),
        INT8 => out.put_i64(text.parse().map_err(|_| bad_text(oid, text))?),
        OID | XID => out.put_u32(text.parse().map_err(|_| bad_text(oid, text))?),
        FLOAT4 => out.put_u32((parse_float(text).ok_or_else(|| bad_text(oid, text))? as f32).to_bits()),
        FLOAT8 => out.put_u64(parse_float(text).ok_or_else(|| bad_text(oid, text))?.to_bits()),
        TEXT_OID | VARCHAR | BPCHAR | NAME | UNKNOWN => out.put_slice(text.as_bytes()),
        BYTEA => crate::value::bytea_from_text(text, out).ok_or_else(|| bad_text(oid, text))?,
        NUMERIC => numeric_send(text, out).ok_or_else(|| bad_text(oid, text))?,
        DATE => out.put_i32(date_from_text(text).ok_or_else(|| bad_text(oid, text))?),
        TIMESTAMP | TIMESTAMPTZ => out.put_i64(timestamp_from_text(text).ok_or_else(|| bad_text(oid, text))?),
        VOID => {}
        other => {
            return Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("no binary output function available for type {}", type_name(other)),
            ))
        }
    }
    Ok(())
}

fn type_name(oid: u32) -> String {
    crate::value::SqlType::from_oid(oid)
        .filter(|t| t.oid() == oid)
        .map(|t| t.name().to_owned())
        .unwrap_or_else(|| format!("with OID {oid}"))
}

/// A value printed by the SQL layer that its type's binary form cannot
/// carry: a broken invariant between the two layers, reported, not a panic.
fn bad_text(oid: u32, text: &str) -> SqlError {
    SqlError::new(SqlState::INTERNAL_ERROR, format!("cannot send \"{text}\" in binary as type {}", type_name(oid)))
}

fn out_of_range(what: &str) -> SqlError {
    SqlError::new(SqlState::DATETIME_FIELD_OVERFLOW, format!("{what} out of range"))
}

fn utf8(bytes: &[u8]) -> Result<String, SqlError> {
    String::from_utf8(bytes.to_vec()).map_err(|e| {
        let bad = &bytes[e.utf8_error().valid_up_to()..];
        let shown: Vec<String> =
            bad.iter().take(e.utf8_error().error_len().unwrap_or(1)).map(|b| format!("{b:02x}")).collect();
        SqlError::new(
            SqlState::CHARACTER_NOT_IN_REPERTOIRE,
            format!("invalid byte sequence for encoding \"UTF8\": 0x{}", shown.join(" 0x")),
        )
    })
}

/// `"char"`'s output: a byte ≥ 0x80 is printed as `\ooo`.
fn char_text(b: u8) -> String {
    if b < 0x80 {
        (b as char).to_string()
    } else {
        format!("\\{b:03o}")
    }
}

fn char_byte(text: &str) -> Option<u8> {
    match text.as_bytes() {
        [] => Some(0),
        [b] => Some(*b),
        [b'\\', d @ ..] if d.len() == 3 => u8::from_str_radix(std::str::from_utf8(d).ok()?, 8).ok(),
        _ => None,
    }
}

/// `float4out`/`float8out` spelling of a value; `finite` prints the shortest
/// digits that read back to the same value.
fn float_text(f: f64, finite: impl Fn(f64) -> String) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        (if f > 0.0 { "Infinity" } else { "-Infinity" }).into()
    } else {
        finite(f)
    }
}

fn parse_float(text: &str) -> Option<f64> {
    match text {
        "NaN" => Some(f64::NAN),
        "Infinity" => Some(f64::INFINITY),
        "-Infinity" => Some(f64::NEG_INFINITY),
        _ => text.parse().ok(),
    }
}

// ---- numeric ----

/// `numeric`'s sign words.
const NUMERIC_POS: u16 = 0x0000;
const NUMERIC_NEG: u16 = 0x4000;
const NUMERIC_NAN: u16 = 0xC000;
const NUMERIC_PINF: u16 = 0xD000;
const NUMERIC_NINF: u16 = 0xF000;
/// Largest display scale (`NUMERIC_DSCALE_MASK`).
const NUMERIC_DSCALE_MAX: u16 = 0x3FFF;
/// Decimal digits per base-10000 digit.
const DEC_DIGITS: usize = 4;

/// `numeric_send` of a value printed by `numeric_out` (`-12.50`, `NaN`,
/// `Infinity`).
fn numeric_send(text: &str, out: &mut BytesMut) -> Option<()> {
    let special = match text {
        "NaN" => Some(NUMERIC_NAN),
        "Infinity" => Some(NUMERIC_PINF),
        "-Infinity" => Some(NUMERIC_NINF),
        _ => None,
    };
    if let Some(sign) = special {
        out.put_i16(0);
        out.put_i16(0);
        out.put_u16(sign);
        // PostgreSQL reads the display scale of a special value from its
        // short header's scale bits: 0 for NaN, 32 for ±Infinity.
        out.put_u16((sign & 0x1F80) >> 7);
        return Some(());
    }
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
        || frac.len() > usize::from(NUMERIC_DSCALE_MAX)
    {
        return None;
    }
    // Decimal digits aligned so that the point falls on a base-10000 digit
    // boundary: pad the integer part on the left, the fraction on the right.
    let int_pad = (DEC_DIGITS - int.len() % DEC_DIGITS) % DEC_DIGITS;
    let frac_pad = (DEC_DIGITS - frac.len() % DEC_DIGITS) % DEC_DIGITS;
    let decimal: Vec<u8> = std::iter::repeat_n(0, int_pad)
        .chain(int.bytes().map(|b| b - b'0'))
        .chain(frac.bytes().map(|b| b - b'0'))
        .chain(std::iter::repeat_n(0, frac_pad))
        .collect();
    let mut digits: Vec<i16> =
        decimal.chunks(DEC_DIGITS).map(|c| c.iter().fold(0i16, |acc, &d| acc * 10 + i16::from(d))).collect();
    let mut weight = ((int_pad + int.len()) / DEC_DIGITS) as i64 - 1;
    // Strip leading and trailing zero digits, as PostgreSQL stores a numeric.
    let lead = digits.iter().take_while(|&&d| d == 0).count();
    digits.drain(..lead);
    weight -= lead as i64;
    while digits.last() == Some(&0) {
        digits.pop();
    }
    let sign = if digits.is_empty() {
        weight = 0;
        NUMERIC_POS
    } else if negative {
        NUMERIC_NEG
    } else {
        NUMERIC_POS
    };
    out.put_i16(i16::try_from(digits.len()).ok()?);
    out.put_i16(i16::try_from(weight).ok()?);
    out.put_u16(sign);
    out.put_u16(frac.len() as u16);
    for d in digits {
        out.put_i16(d);
    }
    Some(())
}

/// `numeric_recv`, printed as `numeric_out` would: digits beyond the
/// display scale are cut off (PostgreSQL truncates them too).
fn numeric_recv(r: &mut Reader<'_>) -> Result<String, SqlError> {
    let ndigits = r.i16()?;
    let weight = i64::from(r.i16()?);
    let sign = r.u16()?;
    let dscale = r.u16()?;
    let invalid = |what: &str| {
        SqlError::new(INVALID_BINARY_REPRESENTATION, format!("invalid {what} in external \"numeric\" value"))
    };
    if ndigits < 0 {
        return Err(invalid("length"));
    }
    let mut digits = Vec::with_capacity(ndigits as usize);
    for _ in 0..ndigits {
        let d = r.i16()?;
        if !(0..10_000).contains(&d) {
            return Err(invalid("digit"));
        }
        digits.push(d);
    }
    match sign {
        NUMERIC_POS | NUMERIC_NEG => {}
        NUMERIC_NAN => return Ok("NaN".into()),
        NUMERIC_PINF => return Ok("Infinity".into()),
        NUMERIC_NINF => return Ok("-Infinity".into()),
        _ => return Err(invalid("sign")),
    }
    if dscale & !NUMERIC_DSCALE_MAX != 0 {
        return Err(invalid("scale"));
    }
    // Digit i (0-based) has weight `weight - i`: value digit × 10000^weight.
    let digit_at = |w: i64| -> i16 {
        let i = weight - w;
        if i < 0 || i >= digits.len() as i64 {
            0
        } else {
            digits[i as usize]
        }
    };
    let mut int = String::new();
    if weight >= 0 {
        let _ = write!(int, "{}", digit_at(weight));
        for w in (0..weight).rev() {
            let _ = write!(int, "{:04}", digit_at(w));
        }
    } else {
        int.push('0');
    }
    let mut frac = String::with_capacity(usize::from(dscale) + DEC_DIGITS);
    let mut w = -1;
    while frac.len() < usize::from(dscale) {
        let _ = write!(frac, "{:04}", digit_at(w));
        w -= 1;
    }
    frac.truncate(usize::from(dscale));
    let zero = int.bytes().chain(frac.bytes()).all(|b| b == b'0');
    let mut s = String::with_capacity(int.len() + frac.len() + 2);
    if sign == NUMERIC_NEG && !zero {
        s.push('-');
    }
    s.push_str(&int);
    if dscale > 0 {
        s.push('.');
        s.push_str(&frac);
    }
    Ok(s)
}

// ---- date and timestamp ----

/// Days from 1970-01-01 to 2000-01-01 (PostgreSQL's epoch).
const PG_EPOCH_DAYS: i64 = 10_957;
const USECS_PER_DAY: i64 = 86_400_000_000;
/// PostgreSQL's range: days since 2000-01-01 from 4714-11-24 BC (Julian day
/// 0) up to, not including, Julian day 2147483494 (`IS_VALID_DATE`).
const DATE_MIN_DAYS: i64 = -2_451_545;
const DATE_END_DAYS: i64 = 2_147_483_494 - 2_451_545;
/// `MIN_TIMESTAMP` and `END_TIMESTAMP` (`IS_VALID_TIMESTAMP`).
const TIMESTAMP_MIN_US: i64 = -211_813_488_000_000_000;
const TIMESTAMP_END_US: i64 = 9_223_371_331_200_000_000;

/// Days since 1970-01-01 of a proleptic Gregorian date (year 0 = 1 BC);
/// Howard Hinnant's `days_from_civil`.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `YYYY-MM-DD` (` BC` for years ≤ 0) of a day since 2000-01-01, or
/// `infinity`; `None` out of PostgreSQL's range.
fn date_text(days: i32) -> Option<String> {
    match days {
        i32::MIN => return Some("-infinity".into()),
        i32::MAX => return Some("infinity".into()),
        _ => {}
    }
    let days = i64::from(days);
    if !(DATE_MIN_DAYS..DATE_END_DAYS).contains(&days) {
        return None;
    }
    let (y, m, d) = civil_from_days(days + PG_EPOCH_DAYS);
    let mut s = String::with_capacity(16);
    let _ = write!(s, "{:04}-{m:02}-{d:02}", if y <= 0 { 1 - y } else { y });
    if y <= 0 {
        s.push_str(" BC");
    }
    Some(s)
}

/// ISO `YYYY-MM-DD HH:MM:SS[.ffffff]` (` BC` last) of µs since
/// 2000-01-01, or `infinity`; `None` out of PostgreSQL's range.
fn timestamp_text(us: i64) -> Option<String> {
    match us {
        i64::MIN => return Some("-infinity".into()),
        i64::MAX => return Some("infinity".into()),
        _ => {}
    }
    if !(TIMESTAMP_MIN_US..TIMESTAMP_END_US).contains(&us) {
        return None;
    }
    let days = us.div_euclid(USECS_PER_DAY);
    let tod = us.rem_euclid(USECS_PER_DAY);
    let (y, m, d) = civil_from_days(days + PG_EPOCH_DAYS);
    let secs = tod / 1_000_000;
    let frac = tod % 1_000_000;
    let mut s = String::with_capacity(32);
    let _ = write!(
        s,
        "{:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        if y <= 0 { 1 - y } else { y },
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    );
    if frac != 0 {
        let f = format!("{frac:06}");
        s.push('.');
        s.push_str(f.trim_end_matches('0'));
    }
    if y <= 0 {
        s.push_str(" BC");
    }
    Some(s)
}

/// Reads `YYYY-MM-DD` with an optional ` BC`: (year with 0 = 1 BC, month,
/// day), the rest of the text.
fn parse_date_part(text: &str) -> Option<(i64, i64, i64)> {
    let mut it = text.splitn(3, '-');
    let y: i64 = it.next()?.parse().ok()?;
    let m: i64 = it.next()?.parse().ok()?;
    let d: i64 = it.next()?.parse().ok()?;
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || y < 1 {
        return None;
    }
    Some((y, m, d))
}

fn date_from_text(text: &str) -> Option<i32> {
    match text {
        "infinity" => return Some(i32::MAX),
        "-infinity" => return Some(i32::MIN),
        _ => {}
    }
    let (body, bc) = match text.strip_suffix(" BC") {
        Some(b) => (b, true),
        None => (text, false),
    };
    let (y, m, d) = parse_date_part(body)?;
    let y = if bc { 1 - y } else { y };
    i32::try_from(days_from_civil(y, m, d) - PG_EPOCH_DAYS).ok()
}

/// µs since 2000-01-01 (UTC when an offset is given) of a timestamp as
/// `timestamp_out`/`timestamptz_out` print it in the ISO style:
/// `YYYY-MM-DD HH:MM:SS[.f][±HH[:MM[:SS]]][ BC]`.
fn timestamp_from_text(text: &str) -> Option<i64> {
    match text {
        "infinity" => return Some(i64::MAX),
        "-infinity" => return Some(i64::MIN),
        _ => {}
    }
    let (body, bc) = match text.strip_suffix(" BC") {
        Some(b) => (b, true),
        None => (text, false),
    };
    let (date, time) = body.split_once(' ')?;
    let (y, m, d) = parse_date_part(date)?;
    let y = if bc { 1 - y } else { y };
    // The offset starts at the first sign after the seconds.
    let (clock, offset_s) = match time.find(['+', '-']) {
        Some(i) => (&time[..i], Some(&time[i..])),
        None => (time, None),
    };
    let mut hms = clock.splitn(3, ':');
    let h: i64 = hms.next()?.parse().ok()?;
    let mi: i64 = hms.next()?.parse().ok()?;
    let sec = hms.next()?;
    let (whole, frac) = sec.split_once('.').unwrap_or((sec, ""));
    let s: i64 = whole.parse().ok()?;
    if frac.len() > 6 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let frac_us: i64 = if frac.is_empty() { 0 } else { format!("{frac:0<6}").parse().ok()? };
    let mut offset = 0i64;
    if let Some(o) = offset_s {
        let negative = o.starts_with('-');
        let mut parts = o[1..].splitn(3, ':');
        let oh: i64 = parts.next()?.parse().ok()?;
        let om: i64 = parts.next().map_or(Some(0), |p| p.parse().ok())?;
        let os: i64 = parts.next().map_or(Some(0), |p| p.parse().ok())?;
        offset = (oh * 3600 + om * 60 + os) * if negative { -1 } else { 1 };
    }
    let local =
        (days_from_civil(y, m, d) - PG_EPOCH_DAYS) * USECS_PER_DAY + ((h * 3600 + mi * 60 + s) * 1_000_000 + frac_us);
    Some(local - offset * 1_000_000)
}

/// A cursor over one binary value; reading past its end is PostgreSQL's
/// `insufficient data left in message`.
struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], SqlError> {
        let end = self.pos + N;
        let bytes = self
            .data
            .get(self.pos..end)
            .ok_or_else(|| SqlError::new(SqlState::PROTOCOL_VIOLATION, "insufficient data left in message"))?;
        self.pos = end;
        let mut a = [0u8; N];
        a.copy_from_slice(bytes);
        Ok(a)
    }

    fn u8(&mut self) -> Result<u8, SqlError> {
        Ok(self.take::<1>()?[0])
    }

    fn i16(&mut self) -> Result<i16, SqlError> {
        Ok(i16::from_be_bytes(self.take()?))
    }

    fn u16(&mut self) -> Result<u16, SqlError> {
        Ok(u16::from_be_bytes(self.take()?))
    }

    fn i32(&mut self) -> Result<i32, SqlError> {
        Ok(i32::from_be_bytes(self.take()?))
    }

    fn u32(&mut self) -> Result<u32, SqlError> {
        Ok(u32::from_be_bytes(self.take()?))
    }

    fn i64(&mut self) -> Result<i64, SqlError> {
        Ok(i64::from_be_bytes(self.take()?))
    }

    fn u64(&mut self) -> Result<u64, SqlError> {
        Ok(u64::from_be_bytes(self.take()?))
    }

    fn rest(&mut self) -> &[u8] {
        let rest = &self.data[self.pos..];
        self.pos = self.data.len();
        rest
    }
}

#[cfg(test)]
mod tests {
    //! Every expected byte string below was printed by PostgreSQL 15's
    //! `*send` functions (`SELECT int4send(42)`, `numeric_send('12.50')`, …).

    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    /// `text` sent as `oid` gives PostgreSQL's bytes, and those bytes
    /// received give `text` back.
    fn both_ways(oid: u32, text: &str, pg_hex: &str) {
        let mut out = BytesMut::new();
        send(oid, text, &mut out).unwrap();
        assert_eq!(out.to_vec(), hex(pg_hex), "send {oid} {text:?}");
        assert_eq!(recv(oid, &hex(pg_hex), 0).unwrap(), text, "recv {oid} {pg_hex}");
    }

    #[test]
    fn fixed_width_types_match_postgresql() {
        both_ways(INT2, "-2", "fffe");
        both_ways(INT4, "42", "0000002a");
        both_ways(INT8, "-9000000000", "fffffffde78ee600");
        both_ways(FLOAT4, "1.5", "3fc00000");
        both_ways(FLOAT4, "-0.1", "bdcccccd");
        both_ways(FLOAT8, "0.1", "3fb999999999999a");
        both_ways(FLOAT8, "NaN", "7ff8000000000000");
        both_ways(FLOAT8, "-Infinity", "fff0000000000000");
        both_ways(BOOL, "t", "01");
        both_ways(BOOL, "f", "00");
        both_ways(OID, "4000000000", "ee6b2800");
        both_ways(CHAR, "r", "72");
    }

    #[test]
    fn strings_and_bytea_match_postgresql() {
        both_ways(TEXT_OID, "héllo", "68c3a96c6c6f");
        both_ways(VARCHAR, "héllo", "68c3a96c6c6f");
        both_ways(BPCHAR, "héllo", "68c3a96c6c6f");
        both_ways(NAME, "héllo", "68c3a96c6c6f");
        both_ways(BYTEA, "\\x00ff10", "00ff10");
        let mut out = BytesMut::new();
        send(BYTEA, "a\\\\b\\001", &mut out).unwrap();
        assert_eq!(out.to_vec(), b"a\\b\x01", "escape-format bytea");
        assert_eq!(recv(TEXT_OID, &[0xff], 0).unwrap_err().code, "22021");
    }

    #[test]
    fn numeric_matches_postgresql() {
        both_ways(NUMERIC, "0", "0000000000000000");
        both_ways(NUMERIC, "12.50", "0002000000000002000c1388");
        both_ways(NUMERIC, "-12.50", "0002000040000002000c1388");
        both_ways(NUMERIC, "0.0001", "0001ffff000000040001");
        both_ways(NUMERIC, "123456789.000000001", "0006000200000009000109291a850000000003e8");
        both_ways(NUMERIC, "10000", "00010001000000000001");
        both_ways(NUMERIC, "0.00", "0000000000000002");
        both_ways(NUMERIC, "NaN", "00000000c0000000");
        both_ways(NUMERIC, "Infinity", "00000000d0000020");
        both_ways(NUMERIC, "-Infinity", "00000000f0000020");
        both_ways(NUMERIC, "99999999", "0002000100000000270f270f");
        both_ways(NUMERIC, "0.1", "0001ffff0000000103e8");
        // `-0.00` prints as `0.00`, and digits beyond the scale are cut off.
        let mut out = BytesMut::new();
        send(NUMERIC, "-0.00", &mut out).unwrap();
        assert_eq!(out.to_vec(), hex("0000000000000002"));
        assert_eq!(recv(NUMERIC, &hex("0002000000000001000c1388"), 0).unwrap(), "12.5");
        assert_eq!(recv(NUMERIC, &hex("0001000000000000" /* digit missing */), 0).unwrap_err().code, "08P01");
        assert_eq!(recv(NUMERIC, &hex("0001000000000000"), 0).unwrap_err().code, "08P01");
        assert_eq!(recv(NUMERIC, &hex("00010000000000002710"), 0).unwrap_err().code, "22P03", "digit 10000");
        assert_eq!(recv(NUMERIC, &hex("0000000012340000"), 0).unwrap_err().code, "22P03", "sign");
    }

    #[test]
    fn dates_and_timestamps_match_postgresql() {
        both_ways(DATE, "2000-01-01", "00000000");
        both_ways(DATE, "2024-02-29", "00002279");
        both_ways(DATE, "1999-12-31", "ffffffff");
        both_ways(DATE, "0044-03-15 BC", "fff49d7b");
        both_ways(DATE, "infinity", "7fffffff");
        both_ways(DATE, "-infinity", "80000000");
        both_ways(TIMESTAMP, "2000-01-01 00:00:00", "0000000000000000");
        both_ways(TIMESTAMP, "2024-01-02 03:04:05.123", "0002b0ec8517d3b8");
        both_ways(TIMESTAMP, "1970-01-01 00:00:00", "fffca2fec4c82000");
        both_ways(TIMESTAMP, "infinity", "7fffffffffffffff");
        both_ways(TIMESTAMP, "0001-01-01 00:00:00 BC", "ff1fc63d1bb12000");
        // timestamptz: the instant in UTC, whatever the offset printed.
        both_ways(TIMESTAMPTZ, "2024-01-02 01:04:05.123+00", "0002b0ead7f08bb8");
        let mut out = BytesMut::new();
        send(TIMESTAMPTZ, "2024-01-02 06:34:05.123+05:30", &mut out).unwrap();
        assert_eq!(out.to_vec(), hex("0002b0ead7f08bb8"));
        assert_eq!(recv(TIMESTAMP, &hex("7ffffffffffffffe"), 0).unwrap_err().code, "22008");
    }

    #[test]
    fn lengths_are_checked_as_postgresql_does() {
        assert_eq!(recv(INT4, &hex("0000"), 0).unwrap_err().code, "08P01");
        let e = recv(INT4, &hex("000000000000"), 2).unwrap_err();
        assert_eq!(
            (e.code.as_str(), e.message.as_str()),
            ("22P03", "incorrect binary data format in bind parameter 3")
        );
        assert_eq!(recv(1186, &hex("00"), 0).unwrap_err().code, "42883");
    }

    #[test]
    fn format_codes_follow_the_zero_one_n_rule() {
        assert_eq!(formats(&[], 2, Counted::Parameters).unwrap(), vec![TEXT, TEXT]);
        assert_eq!(formats(&[1], 2, Counted::Parameters).unwrap(), vec![BINARY, BINARY]);
        assert_eq!(formats(&[0, 1], 2, Counted::Parameters).unwrap(), vec![TEXT, BINARY]);
        assert_eq!(formats(&[1], 0, Counted::Columns).unwrap(), Vec::<i16>::new());
        assert_eq!(formats(&[0, 1, 1], 2, Counted::Columns).unwrap_err().code, "08P01");
        assert_eq!(formats(&[2], 1, Counted::Columns).unwrap_err().code, "22023");
    }
}
