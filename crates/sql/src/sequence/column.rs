//! A sequence attached to an existing column, as pg_dump writes it after
//! `CREATE TABLE`:
//!
//! - `ALTER TABLE t ALTER COLUMN c SET DEFAULT nextval('public.s'::regclass)`
//!   (a `SERIAL`'s default, after `CREATE SEQUENCE s` and `ALTER SEQUENCE
//!   s OWNED BY t.c`), or any other default;
//! - `ALTER TABLE t ALTER COLUMN c ADD GENERATED {ALWAYS | BY DEFAULT} AS
//!   IDENTITY (SEQUENCE NAME s START WITH … …)`: the column becomes an
//!   identity column with a new sequence `s` of its type (named
//!   `<table>_<column>_seq` when not given), as `CREATE TABLE` makes one.
//!
//! sqlparser reads neither `SEQUENCE NAME` nor turnstile's need for it:
//! [`split_sequence_name`] takes the option out of the text (blanked, so
//! error positions stay) before sqlparser reads the rest.
//!
//! A default that only calls `nextval` of a literal sequence name is kept
//! as `CREATE TABLE`'s `SERIAL` keeps it, `nextval('s')`, so that both
//! print alike (`nextval('s'::regclass)`).

use super::ddl::{nextval_of, seq_options, KeySequence};
use super::options::SeqType;
use super::session::sequence_name;
use super::state::Identity;
use crate::error::SqlError;
use crate::expr::{Compiler, Scope};
use crate::rewrite_tokens::{bare_word, significant_tokens, Offsets};
use crate::session::SqlSession;
use crate::value::SqlType;
use sqlparser::ast;
use sqlparser::tokenizer::Token;
use turnstile_lock::SqlState;

/// The `SEQUENCE NAME name` option of an `ALTER TABLE … ADD GENERATED …
/// AS IDENTITY (…)` text: the text with the option blanked out, and the
/// sequence's name (`public.` dropped, folded unless quoted); `None`
/// without one.
pub(crate) fn split_sequence_name(piece: &str) -> Result<Option<(String, String)>, SqlError> {
    let Some(tokens) = significant_tokens(piece) else { return Ok(None) };
    let words: Vec<Option<String>> = tokens.iter().map(|t| bare_word(&t.token)).collect();
    let Some(at) =
        words.windows(2).position(|w| w[0].as_deref() == Some("sequence") && w[1].as_deref() == Some("name"))
    else {
        return Ok(None);
    };
    let mut parts = Vec::new();
    let mut k = at + 2;
    while let Some(Token::Word(w)) = tokens.get(k).map(|t| &t.token) {
        parts.push(if w.quote_style.is_some() { w.value.clone() } else { w.value.to_ascii_lowercase() });
        k += 1;
        if !matches!(tokens.get(k).map(|t| &t.token), Some(Token::Period)) {
            break;
        }
        k += 1;
    }
    let name = match parts.as_slice() {
        [name] => name.clone(),
        [schema, name] if schema == "public" => name.clone(),
        [] => return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \"NAME\"")),
        _ => {
            return Err(SqlError::new(
                SqlState::INVALID_SCHEMA_NAME,
                format!("schema of sequence \"{}\" does not exist", parts.join(".")),
            ))
        }
    };
    let offsets = Offsets::new(piece);
    let (Some(start), Some(end)) = (offsets.of(&tokens[at].span.start), offsets.of(&tokens[k - 1].span.end)) else {
        return Ok(None);
    };
    let mut text = piece.to_owned();
    text.replace_range(start..end, &" ".repeat(end - start));
    Ok(Some((text, name)))
}

/// A default's text as stored: `nextval('s')` for a call of `nextval` on
/// a literal name (cast to `regclass` or not), else the text as written.
fn stored_default(e: &ast::Expr) -> String {
    if let ast::Expr::Function(f) = e {
        let is_nextval = crate::expr::object_name(&f.name).is_ok_and(|n| n == "nextval");
        if let (true, ast::FunctionArguments::List(l)) = (is_nextval, &f.args) {
            if let [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(arg))] = l.args.as_slice() {
                let literal = match arg {
                    ast::Expr::Cast { expr, data_type, .. }
                        if data_type.to_string().eq_ignore_ascii_case("regclass") =>
                    {
                        &**expr
                    }
                    other => other,
                };
                if let ast::Expr::Value(v) = literal {
                    if let ast::Value::SingleQuotedString(s) = &v.value {
                        return nextval_of(&sequence_name(s));
                    }
                }
            }
        }
    }
    e.to_string()
}

impl SqlSession {
    /// `ALTER TABLE table ALTER COLUMN column op`, `sequence` the `SEQUENCE
    /// NAME` of an `ADD GENERATED` ([`split_sequence_name`]).
    pub(crate) fn alter_column(
        &mut self,
        table: &str,
        column: &str,
        op: &ast::AlterColumnOperation,
        sequence: Option<&str>,
    ) -> Result<(), SqlError> {
        let rel =
            self.es.engine().catalog().relation(self.es.database(), table).map_err(|_| {
                SqlError::new(SqlState::UNDEFINED_TABLE, format!("relation \"{table}\" does not exist"))
            })?;
        let Some(col) = rel.columns.iter().find(|c| c.name == column) else {
            return Err(SqlError::new(
                SqlState::UNDEFINED_COLUMN,
                format!("column \"{column}\" of relation \"{table}\" does not exist"),
            ));
        };
        let (ty, not_null, has_default) = (SqlType::of_column(col.ty), col.not_null, col.default.is_some());
        let owned = self.ctx.shared.sequences.owned_by(self.es.database(), table);
        let identity =
            owned.iter().filter_map(|s| s.owner.as_ref()).any(|o| o.column == column && o.identity != Identity::Serial);
        let prerequisite = |what: &str| {
            SqlError::new(
                SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!("column \"{column}\" of relation \"{table}\" {what}"),
            )
        };
        match op {
            ast::AlterColumnOperation::SetDefault { value } => {
                if identity {
                    return Err(prerequisite("is an identity column"));
                }
                // Checked as CREATE TABLE's DEFAULT is (cookDefault).
                let (_, xt) = Compiler { scope: &Scope::default(), params: &mut Vec::new(), aggs: None }
                    .compile(value, Some(ty))?;
                crate::plan::check_assignable(xt, ty, column)?;
                self.es.set_defaults(table, &[(column, &stored_default(value))])?;
                Ok(())
            }
            ast::AlterColumnOperation::AddGenerated { generated_as, sequence_options } => {
                let identity_kind = match generated_as {
                    Some(ast::GeneratedAs::Always) => Identity::Always,
                    Some(ast::GeneratedAs::ByDefault) => Identity::ByDefault,
                    _ => return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \"AS\"")),
                };
                let seq_ty = SeqType::named(ty.internal_name()).ok_or_else(|| {
                    SqlError::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        "identity column type must be smallint, integer, or bigint",
                    )
                })?;
                if identity {
                    return Err(prerequisite("is already an identity column"));
                }
                if has_default {
                    return Err(prerequisite("already has a default value"));
                }
                if !not_null {
                    return Err(prerequisite("must be declared NOT NULL before identity can be added"));
                }
                let key = KeySequence {
                    column: column.to_owned(),
                    ty: seq_ty,
                    options: seq_options(sequence_options.as_deref().unwrap_or_default())?,
                    identity: identity_kind,
                    name: sequence.map(str::to_owned),
                };
                let defaults = self.key_sequences(table, vec![key])?;
                let refs: Vec<(&str, &str)> = defaults.iter().map(|(c, d)| (c.as_str(), d.as_str())).collect();
                self.es.set_defaults(table, &refs)?;
                Ok(())
            }
            other => Err(SqlError::unsupported(&format!("ALTER COLUMN … {other}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sequence_name_option_is_taken_out_of_the_text() {
        let sql = "ALTER TABLE public.t ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (\n    SEQUENCE NAME public.t_id_seq\n    START WITH 1\n)";
        let (text, name) = split_sequence_name(sql).unwrap().unwrap();
        assert_eq!(name, "t_id_seq");
        assert_eq!(text.len(), sql.len());
        assert!(!text.contains("SEQUENCE") && text.contains("START WITH 1"), "{text}");
        let (_, quoted) =
            split_sequence_name("ALTER TABLE t ALTER c ADD GENERATED BY DEFAULT AS IDENTITY (SEQUENCE NAME \"S q\")")
                .unwrap()
                .unwrap();
        assert_eq!(quoted, "S q");
        assert!(split_sequence_name("ALTER TABLE t ADD COLUMN name text").unwrap().is_none());
        let e = split_sequence_name("ALTER TABLE t ALTER c ADD GENERATED ALWAYS AS IDENTITY (SEQUENCE NAME x.s)")
            .unwrap_err();
        assert_eq!(e.code, SqlState::INVALID_SCHEMA_NAME);
    }

    #[test]
    fn a_nextval_default_is_kept_as_a_serial_keeps_it() {
        let e = crate::parse::parse_expr("nextval('public.t_id_seq'::regclass)").unwrap();
        assert_eq!(stored_default(&e), "nextval('t_id_seq')");
        let e = crate::parse::parse_expr("nextval('\"T\"')").unwrap();
        assert_eq!(stored_default(&e), "nextval('\"T\"')");
        let e = crate::parse::parse_expr("42").unwrap();
        assert_eq!(stored_default(&e), "42");
    }
}
