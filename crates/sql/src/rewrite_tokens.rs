//! What the pre-parse rewrites share ([`between`](crate::between),
//! [`operator_any`](crate::operator_any) and
//! [`conflict_target`](crate::conflict_target)): sqlparser's tokens of a
//! statement without its whitespace, unquoted words folded to lower case,
//! and a token's location turned back into a byte offset of the text, so
//! that a rewrite can splice the text where sqlparser would not parse it.

use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::tokenizer::{Location, Token, TokenWithSpan, Tokenizer};

/// The tokens of `text` but whitespace; `None` when it does not tokenize
/// (the parser then reports the error).
pub(crate) fn significant_tokens(text: &str) -> Option<Vec<TokenWithSpan>> {
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, text).tokenize_with_location().ok()?;
    Some(tokens.into_iter().filter(|t| !matches!(t.token, Token::Whitespace(_))).collect())
}

/// An unquoted word, lower-cased; `None` for any other token.
pub(crate) fn bare_word(t: &Token) -> Option<String> {
    match t {
        Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_lowercase()),
        _ => None,
    }
}

/// Byte offsets of token locations in one text.
pub(crate) struct Offsets<'a> {
    text: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> Offsets<'a> {
    /// The offsets of `text`.
    pub(crate) fn new(text: &'a str) -> Offsets<'a> {
        Offsets { text, line_starts: std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect() }
    }

    /// The byte offset of `l` (1-based line and column, in characters); a
    /// column past its line's last character is the end of the text.
    pub(crate) fn of(&self, l: &Location) -> Option<usize> {
        let start = *self.line_starts.get((l.line as usize).checked_sub(1)?)?;
        let col = (l.column as usize).checked_sub(1)?;
        self.text[start..].char_indices().nth(col).map(|(i, _)| start + i).or(Some(self.text.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_point_at_tokens_across_lines_and_multibyte_text() {
        let text = "SELECT 'é'\n  FROM t";
        let tokens = significant_tokens(text).unwrap();
        let offsets = Offsets::new(text);
        let from = tokens.iter().find(|t| bare_word(&t.token).as_deref() == Some("from")).unwrap();
        assert_eq!(offsets.of(&from.span.start), Some(text.find("FROM").unwrap()));
        assert_eq!(offsets.of(&tokens.last().unwrap().span.end), Some(text.len()));
        assert_eq!(bare_word(&tokens[1].token), None, "a string is not a word");
    }
}
