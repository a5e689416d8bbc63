//! Anonymous composite values ([`SqlType::Record`]): a
//! [`Datum::Array`] of the fields, typed by the record's field list.
//! Their text form is PostgreSQL's `record_out`: the fields between
//! parentheses, separated by commas, a NULL field empty, and a field
//! that is empty or holds `"`, `\`, `(`, `)`, `,` or white space quoted,
//! with `"` and `\` doubled.
//!
//! ```
//! use turnstile_sql::value::{Datum, SqlType};
//! let ty = SqlType::Record(&[("x", SqlType::Text), ("n", SqlType::Int4)]);
//! let v = Datum::Array(vec![Datum::Text("a b".into()), Datum::Int(2)]);
//! assert_eq!(v.to_text(ty).unwrap(), "(\"a b\",2)");
//! let v = Datum::Array(vec![Datum::Null, Datum::Int(1)]);
//! assert_eq!(v.to_text(ty).unwrap(), "(,1)");
//! ```

use super::{Datum, SqlType};

/// Appends `record_out`'s text of the fields `items` (typed by `fields`).
pub(super) fn write_record(items: &[Datum], fields: &[(&str, SqlType)], out: &mut String) {
    out.push('(');
    let mut text = String::new();
    for (i, d) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        text.clear();
        let ty = fields.get(i).map_or(SqlType::Text, |f| f.1);
        if !d.write_text(ty, &mut text) {
            continue;
        }
        let quote = text.is_empty()
            || text.chars().any(|c| matches!(c, '"' | '\\' | '(' | ')' | ',') || c.is_ascii_whitespace());
        if !quote {
            out.push_str(&text);
            continue;
        }
        push_quoted(out, &text, true);
    }
    out.push(')');
}

/// `text` between double quotes, each `"` and `\` in it doubled
/// (`record_out`) or preceded by a backslash (`array_out`).
pub(super) fn push_quoted(out: &mut String, text: &str, doubled: bool) {
    out.push('"');
    for c in text.chars() {
        if c == '"' || c == '\\' {
            out.push(if doubled { c } else { '\\' });
        }
        out.push(c);
    }
    out.push('"');
}
