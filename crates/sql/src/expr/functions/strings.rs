//! The everyday string functions: `concat`, `concat_ws`, `replace`,
//! `lpad`, `rpad`, `split_part`, `strpos` (and `POSITION(a IN b)`),
//! `btrim`/`ltrim`/`rtrim` (and `TRIM(…)`), `initcap`.
//!
//! Lengths and positions count characters; `initcap` maps case per
//! character with Unicode's simple mappings, as `lower` and `upper` do
//! (see [`case`](super::text)).

use super::def::{Call, Eval, FuncDef};
use super::text::{int_arg, map_case, text_arg};
use crate::error::SqlError;
use crate::expr::{Compiler, EvalEnv, Expr};
use crate::value::{Datum, SqlType};
use turnstile_lock::SqlState;

/// Longest string `lpad`/`rpad` build, in characters (PostgreSQL's limit is
/// its 1 GB allocation; a longer request is `54000` here).
pub const PAD_CHARS_MAX: usize = 1 << 28;

/// `concat(any, …)`: the text of every non-NULL argument.
pub static CONCAT: FuncDef = FuncDef::custom("concat", resolve_texts, Eval::Lazy(concat)).called_on_null();
/// `concat_ws(sep, any, …)`: the non-NULL arguments joined by `sep` (NULL
/// when `sep` is).
pub static CONCAT_WS: FuncDef = FuncDef::custom("concat_ws", resolve_texts, Eval::Lazy(concat_ws)).called_on_null();
/// `replace(s, from, to)`: every occurrence of `from` replaced.
pub static REPLACE: FuncDef = FuncDef::fixed("replace", &[SqlType::Text; 3], SqlType::Text, replace);
/// `lpad(s, n [, fill])`: `s` cut or left-filled to `n` characters.
pub static LPAD: FuncDef =
    FuncDef::fixed("lpad", &[SqlType::Text, SqlType::Int4, SqlType::Text], SqlType::Text, lpad).required(2);
/// `rpad(s, n [, fill])`: `s` cut or right-filled to `n` characters.
pub static RPAD: FuncDef =
    FuncDef::fixed("rpad", &[SqlType::Text, SqlType::Int4, SqlType::Text], SqlType::Text, rpad).required(2);
/// `split_part(s, sep, n)`: the `n`th field (from the end when negative).
pub static SPLIT_PART: FuncDef =
    FuncDef::fixed("split_part", &[SqlType::Text, SqlType::Text, SqlType::Int4], SqlType::Text, split_part);
/// `strpos(s, sub)`, `POSITION(sub IN s)`: 1-based, 0 when absent.
pub static STRPOS: FuncDef = FuncDef::fixed("strpos", &[SqlType::Text, SqlType::Text], SqlType::Int4, strpos);
/// `btrim(s [, chars])`, `TRIM([BOTH] [chars FROM] s)`.
pub static BTRIM: FuncDef = FuncDef::fixed("btrim", &[SqlType::Text, SqlType::Text], SqlType::Text, btrim).required(1);
/// `ltrim(s [, chars])`, `TRIM(LEADING …)`.
pub static LTRIM: FuncDef = FuncDef::fixed("ltrim", &[SqlType::Text, SqlType::Text], SqlType::Text, ltrim).required(1);
/// `rtrim(s [, chars])`, `TRIM(TRAILING …)`.
pub static RTRIM: FuncDef = FuncDef::fixed("rtrim", &[SqlType::Text, SqlType::Text], SqlType::Text, rtrim).required(1);
/// `initcap(s)`: each word's first letter upper case, the rest lower.
pub static INITCAP: FuncDef = FuncDef::fixed("initcap", &[SqlType::Text], SqlType::Text, initcap);

/// Every argument compiled and taken as text (its type's output).
fn resolve_texts(c: &mut Compiler<'_>, call: &Call<'_>) -> Result<(Expr, SqlType), SqlError> {
    call.arity(if call.def.name == "concat_ws" { 1 } else { 0 }, usize::MAX)?;
    let mut args = Vec::with_capacity(call.args.len());
    for a in call.args {
        // Each argument is written by its type's output function (a
        // boolean as `t`): only the types whose output differs from their
        // value's plain text are cast.
        let (x, t) = c.compile(a, None)?;
        args.push(if t == SqlType::Bool { x } else { c.coerce(x, t, SqlType::Text)? });
    }
    Ok((Expr::Func(call.def, args), SqlType::Text))
}

fn concat(args: &[Expr], row: &[Datum], env: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    let mut out = String::new();
    for a in args {
        a.eval(row, env)?.write_text(SqlType::Text, &mut out);
    }
    Ok(Datum::Text(out))
}

fn concat_ws(args: &[Expr], row: &[Datum], env: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    let Some((sep, rest)) = args.split_first() else { return Ok(Datum::Null) };
    let Some(sep) = sep.eval(row, env)?.into_text(SqlType::Text) else { return Ok(Datum::Null) };
    let mut out = String::new();
    let mut first = true;
    for a in rest {
        let v = a.eval(row, env)?;
        if v.is_null() {
            continue;
        }
        if !first {
            out.push_str(&sep);
        }
        first = false;
        v.write_text(SqlType::Text, &mut out);
    }
    Ok(Datum::Text(out))
}

fn replace(args: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    let (s, from, to) = (text_arg(&args[0]), text_arg(&args[1]), text_arg(&args[2]));
    Ok(Datum::Text(if from.is_empty() { s } else { s.replace(&from, &to) }))
}

/// `s` cut or filled with `fill` to `n` characters, on the left or right.
fn pad(args: &[Datum], left: bool) -> Result<Datum, SqlError> {
    let s = text_arg(&args[0]);
    let n = usize::try_from(int_arg(&args[1])?.max(0)).unwrap_or(usize::MAX);
    if n > PAD_CHARS_MAX {
        return Err(SqlError::new(SqlState::PROGRAM_LIMIT_EXCEEDED, "requested length too large"));
    }
    let fill: Vec<char> = args.get(2).map_or_else(|| " ".into(), text_arg).chars().collect();
    let have = s.chars().count();
    if have >= n || fill.is_empty() {
        return Ok(Datum::Text(s.chars().take(n).collect()));
    }
    let filler: String = fill.iter().cycle().take(n - have).collect();
    Ok(Datum::Text(if left { filler + &s } else { s + &filler }))
}

fn lpad(args: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    pad(args, true)
}

fn rpad(args: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    pad(args, false)
}

fn split_part(args: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    Ok(Datum::Text(field(&text_arg(&args[0]), &text_arg(&args[1]), int_arg(&args[2])?)?))
}

/// Field `n` of `s` split at `sep` (from the end when negative; empty
/// past the last field); `22023` for 0.
fn field(s: &str, sep: &str, n: i64) -> Result<String, SqlError> {
    if n == 0 {
        return Err(SqlError::new(SqlState::INVALID_PARAMETER_VALUE, "field position must not be zero"));
    }
    let fields: Vec<&str> = if sep.is_empty() { vec![s] } else { s.split(sep).collect() };
    let k = if n > 0 { usize::try_from(n - 1).ok() } else { fields.len().checked_sub(n.unsigned_abs() as usize) };
    Ok(k.and_then(|k| fields.get(k)).map_or_else(String::new, |f| (*f).to_owned()))
}

fn strpos(args: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    let (s, sub) = (text_arg(&args[0]), text_arg(&args[1]));
    Ok(Datum::Int(s.find(&sub).map_or(0, |at| s[..at].chars().count() as i64 + 1)))
}

/// The characters to trim: the second argument's, else a blank.
fn trim_set(args: &[Datum]) -> Vec<char> {
    args.get(1).map_or_else(|| vec![' '], |d| text_arg(d).chars().collect())
}

fn btrim(args: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    let set = trim_set(args);
    Ok(Datum::Text(text_arg(&args[0]).trim_matches(|c| set.contains(&c)).to_owned()))
}

fn ltrim(args: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    let set = trim_set(args);
    Ok(Datum::Text(text_arg(&args[0]).trim_start_matches(|c| set.contains(&c)).to_owned()))
}

fn rtrim(args: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    let set = trim_set(args);
    Ok(Datum::Text(text_arg(&args[0]).trim_end_matches(|c| set.contains(&c)).to_owned()))
}

/// PostgreSQL's `initcap`: a letter after a non-alphanumeric character
/// (or at the start) goes to upper case, every other to lower case.
fn initcap(args: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    let mut out = String::new();
    let mut word = false;
    for c in text_arg(&args[0]).chars() {
        out.push(map_case(c, !word));
        word = c.is_alphanumeric();
    }
    Ok(Datum::Text(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Datum {
        Datum::Text(s.into())
    }

    fn call(f: fn(&[Datum]) -> Result<Datum, SqlError>, args: &[Datum]) -> String {
        f(args).unwrap().to_text(SqlType::Text).unwrap()
    }

    #[test]
    fn string_functions_answer_as_postgresql() {
        assert_eq!(call(|a| pad(a, true), &[t("hi"), Datum::Int(5), t("xy")]), "xyxhi");
        assert_eq!(call(|a| pad(a, false), &[t("hello"), Datum::Int(2)]), "he");
        assert_eq!(call(|a| pad(a, true), &[t("hi"), Datum::Int(5), t("")]), "hi");
        assert_eq!(field("a,b,c", ",", 2).unwrap(), "b");
        assert_eq!(field("a,b,c", ",", -1).unwrap(), "c");
        assert_eq!(field("a,b,c", ",", 4).unwrap(), "");
        assert_eq!(field("a,b,c", ",", -4).unwrap(), "");
        assert_eq!(field("a,b,c", ",", 0).unwrap_err().code, "22023");
    }
}
