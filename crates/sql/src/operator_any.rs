//! `x OPERATOR(pg_catalog.=) ANY (array)`, which vacuumdb and reindexdb
//! send and sqlparser does not read (it takes only a plain comparison
//! before `ANY`/`ALL`/`SOME`): rewritten on sqlparser's tokens before
//! parsing into the plain operator (`x = ANY (array)`), padded with blanks
//! to the same length so that error positions stay right. Only the
//! operators a quantified comparison can use here are rewritten, and only
//! when their schema is `pg_catalog` (or absent), so the meaning is
//! unchanged; an `OPERATOR(…)` elsewhere is left to the parser, which
//! reads it.
//!
//! ```
//! use turnstile_sql::operator_any::rewrite;
//! assert_eq!(
//!     rewrite("SELECT 1 WHERE 'r' OPERATOR(pg_catalog.=) ANY (array['r'])").as_deref(),
//!     Some("SELECT 1 WHERE 'r' =                      ANY (array['r'])")
//! );
//! assert_eq!(rewrite("SELECT 1 OPERATOR(pg_catalog.=) 1"), None);
//! ```

use crate::rewrite_tokens::{bare_word, significant_tokens, Offsets};
use sqlparser::tokenizer::Token;

/// The operators rewritten: those sqlparser accepts before `ANY`/`ALL`.
const QUANTIFIABLE: &[&str] =
    &["=", "<>", "!=", "<", ">", "<=", ">=", "~", "~*", "!~", "!~*", "~~", "~~*", "!~~", "!~~*"];

/// `piece` with each `OPERATOR(op) ANY|ALL|SOME` made `op ANY|ALL|SOME`,
/// `None` when it has none (or cannot be tokenized: the parser then
/// reports the error).
pub fn rewrite(piece: &str) -> Option<String> {
    if !piece.to_ascii_lowercase().contains("operator") {
        return None;
    }
    let tokens = significant_tokens(piece)?;
    let word = bare_word;
    let offsets = Offsets::new(piece);
    let byte_of = |l| offsets.of(l);
    let mut out = piece.to_owned();
    let mut changed = false;
    for (i, t) in tokens.iter().enumerate() {
        if word(&t.token).as_deref() != Some("operator") || tokens.get(i + 1).map(|t| &t.token) != Some(&Token::LParen)
        {
            continue;
        }
        let Some(close) = tokens[i + 2..].iter().position(|u| u.token == Token::RParen).map(|p| i + 2 + p) else {
            continue;
        };
        let quantified = tokens.get(close + 1).and_then(|n| word(&n.token));
        if !matches!(quantified.as_deref(), Some("any" | "all" | "some")) {
            continue;
        }
        let (start, inner_start) = (byte_of(&t.span.start)?, byte_of(&tokens[i + 1].span.end)?);
        let (inner_end, end) = (byte_of(&tokens[close].span.start)?, byte_of(&tokens[close].span.end)?);
        let inner: String = piece[inner_start..inner_end].chars().filter(|c| !c.is_whitespace()).collect();
        let op = match inner.get(..11) {
            Some(p) if p.eq_ignore_ascii_case("pg_catalog.") => &inner[11..],
            _ => inner.as_str(),
        };
        if !QUANTIFIABLE.contains(&op) || end - start < op.len() {
            continue;
        }
        out.replace_range(start..end, &format!("{op:<width$}", width = end - start));
        changed = true;
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::rewrite;

    #[test]
    fn rewrites_only_quantified_pg_catalog_operators() {
        let q = "SELECT c.relname FROM pg_class c WHERE c.relkind OPERATOR(pg_catalog.=) ANY (array['r', 'm'])";
        let got = rewrite(q).expect("rewritten");
        assert_eq!(got.len(), q.len());
        assert!(got.contains("c.relkind =") && got.contains("ANY (array['r', 'm'])"), "{got}");
        assert_eq!(rewrite("SELECT 'OPERATOR(pg_catalog.=) ANY'"), None);
        assert_eq!(rewrite("SELECT 1 WHERE 1 OPERATOR(myschema.=) ANY (array[1])"), None);
        let q = "SELECT 1 WHERE 'a' OPERATOR(~) ALL (array['a'])";
        let got = rewrite(q).expect("rewritten");
        assert_eq!(got.len(), q.len());
        let words: Vec<&str> = got.split_whitespace().collect();
        assert_eq!(words, ["SELECT", "1", "WHERE", "'a'", "~", "ALL", "(array['a'])"]);
    }
}
