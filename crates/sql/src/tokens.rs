//! Tokens of the statements the pre-parser reads (`VACUUM`, `REINDEX`,
//! `CREATE DATABASE … ENCODING`, `COPY`): words (folded to lower case),
//! quoted identifiers, strings and punctuation, after comments are
//! blanked out.

use crate::error::SqlError;
use turnstile_lock::SqlState;

/// The text with comments replaced by spaces (quotes respected).
pub(crate) fn strip_comments(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'-' && b.get(i + 1) == Some(&b'-') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            out.push(' ');
            continue;
        }
        if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                i += 1;
            }
            i += 2;
            out.push(' ');
            continue;
        }
        if b[i] == b'\'' {
            let start = i;
            i += 1;
            while i < b.len() && b[i] != b'\'' {
                i += 1;
            }
            i = (i + 1).min(b.len());
            out.push_str(&s[start..i]);
            continue;
        }
        let ch = s[i..].chars().next().unwrap_or(' ');
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// Tokens of a pre-parsed statement: words, quoted identifiers/strings,
/// punctuation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tok {
    Word(String),
    Quoted(String),
    Str(String),
    Punct(char),
}

pub(crate) fn tokenize(s: &str) -> Result<Vec<Tok>, SqlError> {
    let mut out = Vec::new();
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '\'' || c == '"' {
            let mut v = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err(SqlError::new(SqlState::SYNTAX_ERROR, "unterminated quoted string")),
                    Some(&q) if q == c => {
                        if chars.get(i + 1) == Some(&c) {
                            v.push(c);
                            i += 2;
                        } else {
                            i += 1;
                            break;
                        }
                    }
                    Some(&x) => {
                        v.push(x);
                        i += 1;
                    }
                }
            }
            out.push(if c == '"' { Tok::Quoted(v) } else { Tok::Str(v) });
        } else if c.is_alphanumeric() || c == '_' || c == '.' {
            let mut v = String::new();
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '.') {
                v.push(chars[i]);
                i += 1;
            }
            out.push(Tok::Word(v.to_ascii_lowercase()));
        } else {
            out.push(Tok::Punct(c));
            i += 1;
        }
    }
    Ok(out)
}
