//! `BETWEEN SYMMETRIC` and `BETWEEN ASYMMETRIC`, which sqlparser does not
//! read: rewritten on sqlparser's tokens before parsing (words inside
//! literals and comments are left alone).
//!
//! `ASYMMETRIC` is the default and is blanked out. `x BETWEEN SYMMETRIC a
//! AND b` becomes `x BETWEEN __turnstile_between_symmetric(a) AND b`: the
//! lower bound extends to the first `AND` outside parentheses (the one
//! that ends it in PostgreSQL's grammar too), and the compiler reads the
//! marker call as "symmetric" ([`SYMMETRIC_MARK`]), evaluating
//! `(x BETWEEN a AND b) OR (x BETWEEN b AND a)` as PostgreSQL defines it.
//!
//! ```
//! use turnstile_sql::between::rewrite;
//! assert_eq!(
//!     rewrite("SELECT 2 BETWEEN SYMMETRIC 3 AND 1").as_deref(),
//!     Some("SELECT 2 BETWEEN __turnstile_between_symmetric( 3 )AND 1")
//! );
//! assert_eq!(rewrite("SELECT 'between symmetric'"), None);
//! ```

use crate::rewrite_tokens::{bare_word, significant_tokens, Offsets};
use sqlparser::tokenizer::Token;

/// The marker function whose argument is a symmetric BETWEEN's first bound.
pub const SYMMETRIC_MARK: &str = "__turnstile_between_symmetric";

/// `piece` with its `BETWEEN [A]SYMMETRIC` rewritten, `None` when it has
/// none (or cannot be tokenized: the parser then reports the error).
pub fn rewrite(piece: &str) -> Option<String> {
    if !piece.to_ascii_lowercase().contains("symmetric") {
        return None;
    }
    let tokens = significant_tokens(piece)?;
    let word = bare_word;
    let offsets = Offsets::new(piece);
    let byte_of = |l| offsets.of(l);
    // (byte range replaced, replacement), in text order.
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if word(&t.token).as_deref() != Some("between") {
            continue;
        }
        let Some(next) = tokens.get(i + 1) else { continue };
        let (a, b) = (byte_of(&next.span.start)?, byte_of(&next.span.end)?);
        match word(&next.token).as_deref() {
            Some("asymmetric") => edits.push((a, b, String::new())),
            Some("symmetric") => {
                let mut depth = 0i32;
                let mut end = None;
                for u in &tokens[i + 2..] {
                    match &u.token {
                        Token::LParen | Token::LBracket => depth += 1,
                        Token::RParen | Token::RBracket => depth -= 1,
                        t if depth == 0 && word(t).as_deref() == Some("and") => {
                            end = Some(byte_of(&u.span.start)?);
                            break;
                        }
                        _ => {}
                    }
                }
                let end = end?;
                edits.push((a, b, format!("{SYMMETRIC_MARK}(")));
                edits.push((end, end, ")".into()));
            }
            _ => {}
        }
    }
    if edits.is_empty() {
        return None;
    }
    let mut out = piece.to_owned();
    for (a, b, with) in edits.into_iter().rev() {
        out.replace_range(a..b, &with);
    }
    Some(out)
}
