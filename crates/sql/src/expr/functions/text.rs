//! String functions: `repeat`, `md5`, `length`, `lower`, `upper`, `left`,
//! `right`, `substr` (and `SUBSTRING(… FROM … FOR …)`), `quote_literal`,
//! `quote_ident`.
//!
//! Lengths and positions count characters. `lower` and `upper` map case
//! character by character with Unicode's mappings, as PostgreSQL does in
//! a UTF-8 database under a libc or ICU locale (`towlower`/`towupper`): a
//! character whose full mapping is several characters keeps its simple
//! one (`ß` stays `ß` in upper case, `İ` becomes `i`).

use super::def::FuncDef;
use crate::error::SqlError;
use crate::expr::EvalEnv;
use crate::value::{Datum, SqlType};
use turnstile_lock::SqlState;

/// Longest result `repeat` builds, in bytes (PostgreSQL's `MaxAllocSize`
/// is 1 GB; turnstile refuses a quarter of it, `54000`).
pub const REPEAT_MAX_BYTES: usize = 1 << 28;

/// `repeat(text, int)`.
pub static REPEAT: FuncDef = FuncDef::fixed("repeat", &[SqlType::Text, SqlType::Int4], SqlType::Text, repeat);
/// `md5(text)`: the hex digest.
pub static MD5: FuncDef = FuncDef::fixed("md5", &[SqlType::Text], SqlType::Text, md5);
/// `length(text)`, `char_length(text)`: characters.
pub static LENGTH: FuncDef =
    FuncDef::fixed("length", &[SqlType::Text], SqlType::Int4, length).aliases(&["char_length"]);
/// `lower(text)`.
pub static LOWER: FuncDef = FuncDef::fixed("lower", &[SqlType::Text], SqlType::Text, lower);
/// `upper(text)`.
pub static UPPER: FuncDef = FuncDef::fixed("upper", &[SqlType::Text], SqlType::Text, upper);
/// `left(text, n)`: the first `n` characters (all but the last `-n`).
pub static LEFT: FuncDef = FuncDef::fixed("left", &[SqlType::Text, SqlType::Int4], SqlType::Text, left);
/// `right(text, n)`: the last `n` characters (all but the first `-n`).
pub static RIGHT: FuncDef = FuncDef::fixed("right", &[SqlType::Text, SqlType::Int4], SqlType::Text, right);
/// `substr(text, from [, count])`; `SUBSTRING(text FROM from FOR count)`.
pub static SUBSTR: FuncDef =
    FuncDef::fixed("substr", &[SqlType::Text, SqlType::Int4, SqlType::Int4], SqlType::Text, substr).required(2);
/// `quote_literal(text)`.
pub static QUOTE_LITERAL: FuncDef = FuncDef::fixed("quote_literal", &[SqlType::Text], SqlType::Text, quote_literal);
/// `quote_ident(text)`: double-quoted unless a plain lower-case name that
/// is not a keyword needing quotes ([`crate::catalog::deparse::quote_ident`]).
pub static QUOTE_IDENT: FuncDef = FuncDef::fixed("quote_ident", &[SqlType::Text], SqlType::Text, |a, _| {
    Ok(Datum::Text(crate::catalog::deparse::quote_ident(&text_arg(&a[0]))))
});

/// An argument's text (the compiler has cast it to `text`).
pub(super) fn text_arg(d: &Datum) -> String {
    d.to_text(SqlType::Text).unwrap_or_default()
}

/// An integer argument (the compiler has cast it; a text form is read).
pub(super) fn int_arg(d: &Datum) -> Result<i64, SqlError> {
    match d {
        Datum::Int(v) => Ok(*v),
        other => text_arg(other)
            .trim()
            .parse::<i64>()
            .map_err(|_| SqlError::new(SqlState::INVALID_TEXT_REPRESENTATION, "bad integer")),
    }
}

fn repeat(args: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    let s = text_arg(&args[0]);
    let n = int_arg(&args[1])?.max(0) as usize;
    if s.len().saturating_mul(n) > REPEAT_MAX_BYTES {
        return Err(SqlError::new(SqlState::PROGRAM_LIMIT_EXCEEDED, "requested length too large"));
    }
    Ok(Datum::Text(s.repeat(n)))
}

fn md5(args: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    use md5::Digest;
    Ok(Datum::Text(format!("{:x}", md5::Md5::digest(text_arg(&args[0]).as_bytes()))))
}

// A character(n) argument arrives without its trailing blanks (the
// compiler's cast to text); text counts every character.
fn length(args: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    Ok(Datum::Int(match &args[0] {
        Datum::Text(s) => s.chars().count() as i64,
        other => text_arg(other).chars().count() as i64,
    }))
}

/// `c` in upper (`upper`) or lower case, one character for one: a
/// mapping to several characters keeps `c` in upper case (`ß`) and its
/// first character in lower case (`İ` → `i`), as `towupper`/`towlower`.
pub(super) fn map_case(c: char, upper: bool) -> char {
    if c.is_ascii() {
        return if upper { c.to_ascii_uppercase() } else { c.to_ascii_lowercase() };
    }
    if upper {
        let mut m = c.to_uppercase();
        match (m.next(), m.next()) {
            (Some(u), None) => u,
            _ => c,
        }
    } else {
        c.to_lowercase().next().unwrap_or(c)
    }
}

fn lower(args: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    Ok(Datum::Text(text_arg(&args[0]).chars().map(|c| map_case(c, false)).collect()))
}

fn upper(args: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    Ok(Datum::Text(text_arg(&args[0]).chars().map(|c| map_case(c, true)).collect()))
}

/// The characters `from..to` of `s` (positions clamped to it).
fn slice(s: &str, from: i64, to: i64) -> Datum {
    let chars: Vec<char> = s.chars().collect();
    let len = chars.len() as i64;
    let (from, to) = (from.clamp(0, len), to.clamp(0, len));
    Datum::Text(chars[from as usize..to.max(from) as usize].iter().collect())
}

fn left(args: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    let s = text_arg(&args[0]);
    let (len, n) = (s.chars().count() as i64, int_arg(&args[1])?);
    Ok(slice(&s, 0, if n >= 0 { n } else { len + n }))
}

fn right(args: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    let s = text_arg(&args[0]);
    let (len, n) = (s.chars().count() as i64, int_arg(&args[1])?);
    Ok(slice(&s, if n >= 0 { len - n } else { n.saturating_neg() }, len))
}

fn substr(args: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    let s = text_arg(&args[0]);
    let start = int_arg(&args[1])?.saturating_sub(1);
    let end = match args.get(2) {
        Some(c) => {
            let c = int_arg(c)?;
            if c < 0 {
                return Err(SqlError::new(SqlState::SUBSTRING_ERROR, "negative substring length not allowed"));
            }
            start.saturating_add(c)
        }
        None => i64::MAX,
    };
    Ok(slice(&s, start, end))
}

/// PostgreSQL's `quote_literal`: quotes doubled; with a backslash,
/// backslashes doubled too and the literal an `E''` one.
fn quote_literal(args: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    let s = text_arg(&args[0]);
    let body = s.replace('\'', "''");
    Ok(Datum::Text(if s.contains('\\') { format!("E'{}'", body.replace('\\', "\\\\")) } else { format!("'{body}'") }))
}
