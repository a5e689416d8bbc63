//! Expression indexes (`CREATE [UNIQUE] INDEX … ON t (lower(key))`): what
//! the SQL layer does for them. The engine keeps each expression as SQL
//! text with its result type (`pg_index.indexprs`) and computes keys with
//! what this module registers ([`register`]); `CREATE INDEX` defines the
//! expressions ([`define`]), and `ON CONFLICT (lower(key))` infers an
//! index by comparing its expression with the index's ([`normalize`]).
//!
//! - [`define`]: checks an index expression as PostgreSQL's
//!   `ComputeIndexAttrs` does — it compiles over the table's columns, uses
//!   no subquery, aggregate or parameter, and calls only `IMMUTABLE`
//!   functions (`42P17` otherwise) — and gives its text, type and column
//!   name.
//! - `compiler`: the [`turnstile_engine::catalog::IndexExprCompiler`] that
//!   compiles the text again when a relation cache loads the index, and
//!   evaluates it per row with no session at hand (an immutable
//!   expression needs none).
//!
//! ```
//! use turnstile_sql::index_expr::normalize;
//! assert_eq!(normalize("LOWER(Key)"), "lower(key)");
//! assert_eq!(normalize("lower(\"Key\") || 'X'"), "lower(\"Key\") || 'X'");
//! ```

mod compiler;
mod define;

pub(crate) use compiler::register;
pub(crate) use define::{compile_text, define, inference_text};

/// An index expression's text as the catalog keeps it and as inference
/// compares it: sqlparser's rendering with unquoted words folded to lower
/// case (quoted identifiers and string literals kept as written).
pub fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut quote: Option<char> = None;
    for ch in text.chars() {
        match quote {
            Some(q) => {
                if ch == q {
                    quote = None;
                }
                out.push(ch);
            }
            None => {
                if ch == '\'' || ch == '"' {
                    quote = Some(ch);
                }
                out.extend(ch.to_lowercase());
            }
        }
    }
    out
}
