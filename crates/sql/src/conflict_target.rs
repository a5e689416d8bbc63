//! `INSERT … ON CONFLICT (lower(key)) …`: an inference element that is an
//! expression, which sqlparser does not read (it takes only column names
//! there). Rewritten on sqlparser's tokens before parsing: each element
//! that is not a plain column name becomes a quoted identifier holding
//! [`EXPRESSION_MARK`] and the element's text (its `"` doubled), which the
//! upsert binder recognises ([`inference_expression`]) and parses as an
//! expression. Column names are left alone, and so is everything outside
//! the parenthesised list after `ON CONFLICT`. Error positions after a
//! rewritten element move by the few characters the quoting adds.
//!
//! ```
//! use turnstile_sql::conflict_target::{inference_expression, rewrite};
//! let sql = rewrite("INSERT INTO t VALUES ('A') ON CONFLICT (lower(k)) DO NOTHING").unwrap();
//! assert_eq!(sql, "INSERT INTO t VALUES ('A') ON CONFLICT (\"\u{1}lower(k)\") DO NOTHING");
//! assert_eq!(inference_expression("\u{1}lower(k)"), Some("lower(k)"));
//! assert_eq!(rewrite("INSERT INTO t VALUES (1) ON CONFLICT (k) DO NOTHING"), None);
//! ```

use crate::rewrite_tokens::{bare_word, significant_tokens, Offsets};
use sqlparser::tokenizer::Token;

/// The first character of a rewritten element's identifier (a control
/// character: no column name a client types starts with it).
pub const EXPRESSION_MARK: char = '\u{1}';

/// The expression text of a rewritten inference element, `None` for a
/// column name.
pub fn inference_expression(ident: &str) -> Option<&str> {
    ident.strip_prefix(EXPRESSION_MARK)
}

/// `piece` with the expression elements of its `ON CONFLICT (…)` quoted;
/// `None` when it has none (or cannot be tokenized: the parser then
/// reports the error).
pub fn rewrite(piece: &str) -> Option<String> {
    if !piece.to_ascii_lowercase().contains("conflict") {
        return None;
    }
    let tokens = significant_tokens(piece)?;
    let word = bare_word;
    let open = tokens.windows(3).position(|w| {
        word(&w[0].token).as_deref() == Some("on")
            && word(&w[1].token).as_deref() == Some("conflict")
            && w[2].token == Token::LParen
    })? + 2;
    // The elements: token ranges between top-level commas, up to the
    // matching parenthesis.
    let mut elements = Vec::new();
    let (mut depth, mut start) = (0usize, open + 1);
    let mut close = None;
    for (i, t) in tokens.iter().enumerate().skip(open + 1) {
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen if depth == 0 => {
                elements.push(start..i);
                close = Some(i);
                break;
            }
            Token::RParen => depth -= 1,
            Token::Comma if depth == 0 => {
                elements.push(start..i);
                start = i + 1;
            }
            _ => {}
        }
    }
    close?;
    let offsets = Offsets::new(piece);
    let byte_of = |l| offsets.of(l);
    let mut out = piece.to_owned();
    let mut changed = false;
    // Back to front, so earlier byte offsets stay valid.
    for range in elements.into_iter().rev() {
        let plain = range.len() == 1 && matches!(tokens[range.start].token, Token::Word(_));
        if plain || range.is_empty() {
            continue;
        }
        let (a, b) = (byte_of(&tokens[range.start].span.start)?, byte_of(&tokens[range.end - 1].span.end)?);
        let text = piece.get(a..b)?.replace('"', "\"\"");
        out.replace_range(a..b, &format!("\"{EXPRESSION_MARK}{text}\""));
        changed = true;
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_expression_elements_only() {
        let sql = "INSERT INTO t VALUES (1) ON CONFLICT (a, lower(\"B\"), (c + 1)) DO UPDATE SET a = 1";
        assert_eq!(
            rewrite(sql).as_deref(),
            Some("INSERT INTO t VALUES (1) ON CONFLICT (a, \"\u{1}lower(\"\"B\"\")\", \"\u{1}(c + 1)\") DO UPDATE SET a = 1")
        );
        assert_eq!(rewrite("INSERT INTO t VALUES (1) ON CONFLICT ON CONSTRAINT c DO NOTHING"), None);
        assert_eq!(rewrite("SELECT 'on conflict (lower(x))'"), None);
    }
}
