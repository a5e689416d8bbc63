//! `json_build_object(key, value, …)`: a JSON object of the pairs, as
//! SQLAlchemy's Inspector builds a column's identity options. The result
//! is of type `json` ([`SqlType::Json`]), whose value is its text; there
//! is no `json` input (a cast to `json` stays `0A000`).
//!
//! As PostgreSQL's: keys are their text (a NULL key is `22004`, an odd
//! number of arguments `22023`), a boolean value is `true`/`false`, a
//! finite number is written as it prints, NULL is `null`, and anything
//! else is its text output as a JSON string; pairs print as
//! `{"k" : v, "k2" : v2}`.
//!
//! ```
//! use turnstile_sql::expr::functions::json::{json_object, JsonValue};
//! let pairs = [("always".to_owned(), JsonValue::Bool(false)), ("start".to_owned(), JsonValue::Number("1".into())),
//!              ("name".to_owned(), JsonValue::String("a\"b\n".into())), ("none".to_owned(), JsonValue::Null)];
//! assert_eq!(json_object(&pairs), r#"{"always" : false, "start" : 1, "name" : "a\"b\n", "none" : null}"#);
//! ```

use super::def::{Call, Eval, FuncDef};
use super::regtype::reg_cast_out;
use crate::error::SqlError;
use crate::expr::{Compiler, EvalEnv, Expr};
use crate::value::{Datum, SqlType};
use std::fmt::Write;
use turnstile_lock::SqlState;

/// `json_build_object(variadic "any")`.
pub static JSON_BUILD_OBJECT: FuncDef =
    FuncDef::custom("json_build_object", resolve, Eval::Lazy(build_object)).called_on_null();

/// One value of a JSON object.
#[derive(Clone, Debug, PartialEq)]
pub enum JsonValue {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as written.
    Number(String),
    /// A string, escaped when written.
    String(String),
}

/// The pairs as PostgreSQL's `json_build_object` writes them.
pub fn json_object(pairs: &[(String, JsonValue)]) -> String {
    let mut out = String::from("{");
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_string(&mut out, k);
        out.push_str(" : ");
        match v {
            JsonValue::Null => out.push_str("null"),
            JsonValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            JsonValue::Number(n) => out.push_str(n),
            JsonValue::String(s) => write_string(&mut out, s),
        }
    }
    out.push('}');
    out
}

/// `s` as a JSON string (PostgreSQL's `escape_json`).
fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Each argument compiled; a value that is neither a boolean nor a number
/// is taken as its text output (as PostgreSQL writes it).
fn resolve(c: &mut Compiler<'_>, call: &Call<'_>) -> Result<(Expr, SqlType), SqlError> {
    if call.args.len() % 2 != 0 {
        return Err(SqlError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            "argument list must have even number of elements",
        ));
    }
    let mut args = Vec::with_capacity(call.args.len());
    for a in call.args {
        let (x, t) = c.compile(a, Some(SqlType::Text))?;
        args.push(match t {
            SqlType::Bool => x,
            t if t.is_number() && !matches!(t, SqlType::Reg(_)) => x,
            SqlType::Reg(k) => Expr::Func(reg_cast_out(k), vec![x]),
            t => Expr::Cast(Box::new(x), t, SqlType::Text),
        });
    }
    Ok((Expr::Func(call.def, args), SqlType::Json))
}

fn build_object(args: &[Expr], row: &[Datum], env: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    let mut pairs = Vec::with_capacity(args.len() / 2);
    for pair in args.chunks(2) {
        let key = match pair[0].eval(row, env)? {
            Datum::Null => {
                return Err(SqlError::new(SqlState::NULL_VALUE_NOT_ALLOWED, "null value not allowed for object key"))
            }
            k => k.to_text(SqlType::Text).unwrap_or_default(),
        };
        let value = match pair[1].eval(row, env)? {
            Datum::Null => JsonValue::Null,
            Datum::Bool(b) => JsonValue::Bool(b),
            Datum::Float(f) if !f.is_finite() => {
                JsonValue::String(Datum::Float(f).to_text(SqlType::Float8).unwrap_or_default())
            }
            d @ (Datum::Int(_) | Datum::Numeric(_) | Datum::Float(_)) => {
                JsonValue::Number(d.to_text(SqlType::Float8).unwrap_or_default())
            }
            d => JsonValue::String(d.to_text(SqlType::Text).unwrap_or_default()),
        };
        pairs.push((key, value));
    }
    Ok(Datum::Text(json_object(&pairs)))
}
