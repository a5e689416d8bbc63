//! The regular-expression match operators `~`, `~*`, `!~` and `!~*`
//! (PostgreSQL's `textregexeq` family) on the `regex` crate.
//!
//! # Semantics
//!
//! PostgreSQL's patterns are POSIX AREs. This module translates what the
//! two dialects spell differently and refuses (`0A000`) what `regex` does
//! not have, so a pattern never silently means something else:
//!
//! * `.` and bracket expressions match a newline, and `^`/`$` anchor the
//!   whole string (ARE's default, not newline-sensitive): `(?s)`;
//! * `~*` folds case with Unicode simple case folding: `(?i)`;
//! * ARE's word-boundary escapes `\m`, `\M`, `\y` become `\b`, `\Y` `\B`,
//!   and `\Z` (end of string) `\z`;
//! * back-references (`\1`) and lookaround (`(?=`, `(?!`, `(?<=`) have no
//!   counterpart in `regex` (a finite automaton): `0A000`.
//!
//! ```
//! use turnstile_sql::expr::regex::Pattern;
//! let p = Pattern::new("^pg_\\w+$", false).unwrap();
//! assert!(p.is_match("pg_class"));
//! assert!(Pattern::new("^T", true).unwrap().is_match("things"));
//! assert_eq!(Pattern::new("(a", false).unwrap_err().code, "2201B");
//! assert_eq!(Pattern::new("(a)\\1", false).unwrap_err().code, "0A000");
//! ```

use super::{Compiler, EvalEnv, Expr};
use crate::error::SqlError;
use crate::value::{Datum, SqlType};
use sqlparser::ast;
use turnstile_lock::SqlState;

/// `invalid_regular_expression`.
const INVALID_REGULAR_EXPRESSION: SqlState = SqlState::from_code("2201B");

/// Largest compiled program a pattern may build, in bytes (the regex
/// crate's own default is 10 MiB; a pattern past it is `2201B`, as an ARE
/// too complex for PostgreSQL is `2201B` "regular expression is too
/// complex").
pub const REGEX_PROGRAM_BYTES_MAX: usize = 1 << 22;

/// A compiled pattern, with the text it came from.
#[derive(Clone, Debug)]
pub struct Pattern {
    source: String,
    case_insensitive: bool,
    re: regex::Regex,
}

// Two patterns are the same when their text and case rule are.
impl PartialEq for Pattern {
    fn eq(&self, other: &Pattern) -> bool {
        self.source == other.source && self.case_insensitive == other.case_insensitive
    }
}

fn invalid(msg: impl std::fmt::Display) -> SqlError {
    SqlError::new(INVALID_REGULAR_EXPRESSION, format!("invalid regular expression: {msg}"))
}

impl Pattern {
    /// Compiles the ARE `source` (`2201B` if it is invalid or uses what
    /// the translation cannot express).
    pub fn new(source: &str, case_insensitive: bool) -> Result<Pattern, SqlError> {
        let translated = translate(source)?;
        let prefix = if case_insensitive { "(?si)" } else { "(?s)" };
        let re = regex::RegexBuilder::new(&format!("{prefix}{translated}"))
            .size_limit(REGEX_PROGRAM_BYTES_MAX)
            .build()
            .map_err(|e| match e {
                regex::Error::CompiledTooBig(_) => invalid("regular expression is too complex"),
                other => invalid(other.to_string().lines().last().unwrap_or("syntax error").trim()),
            })?;
        Ok(Pattern { source: source.to_owned(), case_insensitive, re })
    }

    /// Whether the pattern matches somewhere in `s`.
    pub fn is_match(&self, s: &str) -> bool {
        self.re.is_match(s)
    }
}

/// ARE spellings in `regex`'s syntax (see the module header).
fn translate(src: &str) -> Result<String, SqlError> {
    let mut out = String::with_capacity(src.len() + 8);
    let mut chars = src.chars().peekable();
    let mut in_bracket = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(n) = chars.next() else { return Err(invalid("invalid escape \\ sequence")) };
                match n {
                    'm' | 'M' | 'y' if !in_bracket => out.push_str("\\b"),
                    'Y' if !in_bracket => out.push_str("\\B"),
                    'Z' if !in_bracket => out.push_str("\\z"),
                    '1'..='9' if !in_bracket => {
                        return Err(SqlError::unsupported("back-references in regular expressions"))
                    }
                    n => {
                        out.push('\\');
                        out.push(n);
                    }
                }
            }
            '[' if !in_bracket => {
                in_bracket = true;
                out.push('[');
                // A `]` or `^]` right after the opening bracket is a member.
                if chars.next_if_eq(&'^').is_some() {
                    out.push('^');
                }
                if chars.next_if_eq(&']').is_some() {
                    out.push_str("\\]");
                }
            }
            '[' if chars.peek() == Some(&':') || chars.peek() == Some(&'.') || chars.peek() == Some(&'=') => {
                // A character class `[:alpha:]` inside a bracket.
                out.push('[');
                for x in chars.by_ref() {
                    out.push(x);
                    if x == ']' {
                        break;
                    }
                }
            }
            ']' if in_bracket => {
                in_bracket = false;
                out.push(']');
            }
            '(' if !in_bracket && chars.peek() == Some(&'?') => {
                let rest: String = chars.clone().take(3).collect();
                if rest.starts_with("?=") || rest.starts_with("?!") || rest.starts_with("?<") {
                    return Err(SqlError::unsupported("lookaround constraints in regular expressions"));
                }
                out.push('(');
            }
            c => out.push(c),
        }
    }
    Ok(out)
}

/// A compiled `x ~ pattern` (any of the four operators).
#[derive(Clone, Debug, PartialEq)]
pub struct RegexMatch {
    /// The string matched.
    pub x: Expr,
    /// The pattern.
    pub pattern: Expr,
    /// `~*`, `!~*`.
    pub case_insensitive: bool,
    /// `!~`, `!~*`.
    pub negated: bool,
    /// The pattern compiled once, when it is a constant.
    pub compiled: Option<Pattern>,
}

impl RegexMatch {
    /// Evaluates on `row`: NULL if either side is.
    pub fn eval(&self, row: &[Datum], env: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
        let x = self.x.eval(row, env)?;
        let Some(s) = x.into_text(SqlType::Text) else { return Ok(Datum::Null) };
        let hit = match &self.compiled {
            Some(p) => p.is_match(&s),
            None => match self.pattern.eval(row, env)?.into_text(SqlType::Text) {
                None => return Ok(Datum::Null),
                Some(p) => Pattern::new(&p, self.case_insensitive)?.is_match(&s),
            },
        };
        Ok(Datum::Bool(hit != self.negated))
    }
}

impl Compiler<'_> {
    /// `l ~ r` (`~*`, `!~`, `!~*`), on strings.
    pub(super) fn regex_match(
        &mut self,
        l: &ast::Expr,
        r: &ast::Expr,
        case_insensitive: bool,
        negated: bool,
    ) -> Result<(Expr, SqlType), SqlError> {
        let (x, tx) = self.compile(l, Some(SqlType::Text))?;
        let (p, tp) = self.compile(r, Some(SqlType::Text))?;
        if !tx.is_string() || !tp.is_string() {
            let op = match (case_insensitive, negated) {
                (false, false) => "~",
                (true, false) => "~*",
                (false, true) => "!~",
                (true, true) => "!~*",
            };
            return Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("operator does not exist: {} {op} {}", tx.name(), tp.name()),
            ));
        }
        let x = self.coerce(x, tx, SqlType::Text)?;
        let pattern = self.coerce(p, tp, SqlType::Text)?;
        let compiled = match &pattern {
            Expr::Const(Datum::Text(s)) => Some(Pattern::new(s, case_insensitive)?),
            _ => None,
        };
        let m = RegexMatch { x, pattern, case_insensitive, negated, compiled };
        Ok((Expr::Regex(Box::new(m)), SqlType::Bool))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn are_spellings_translate() {
        let m = |p: &str, s: &str| Pattern::new(p, false).unwrap().is_match(s);
        assert!(m("^pg_", "pg_class"));
        assert!(!m("^pg_", "xpg_class"));
        assert!(m("a.b", "a\nb"));
        assert!(m("\\mfoo\\M", "a foo b"));
        assert!(!m("\\yfoo\\y", "afoob"));
        assert!(m("[]a]", "]"));
        assert!(m("[[:digit:]]+$", "x12"));
        assert!(m("^(things|trips)$", "trips"));
        assert!(Pattern::new("ÉTÉ", true).unwrap().is_match("été"));
        assert_eq!(Pattern::new("(", false).unwrap_err().code, "2201B");
        assert_eq!(Pattern::new("a(?=b)", false).unwrap_err().code, "0A000");
    }
}
