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
//! sqlparser does not read `SEQUENCE NAME`: `syntax::split_sequence_name`
//! takes the option out of the text before sqlparser reads the rest.
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
use crate::session::SqlSession;
use crate::value::SqlType;
use sqlparser::ast;
use turnstile_lock::SqlState;

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
    /// NAME` of an `ADD GENERATED` (`syntax::split_sequence_name`).
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
                self.es.set_defaults(table, &[(column, Some(&stored_default(value)))])?;
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
                let refs: Vec<(&str, Option<&str>)> =
                    defaults.iter().map(|(c, d)| (c.as_str(), Some(d.as_str()))).collect();
                self.es.set_defaults(table, &refs)?;
                Ok(())
            }
            ast::AlterColumnOperation::DropDefault => {
                if identity {
                    let mut e = identity_column(table, column);
                    e.hint = Some("Use ALTER TABLE ... ALTER COLUMN ... DROP IDENTITY instead.".into());
                    return Err(e);
                }
                // A serial's sequence stays, owned by the column (as in
                // PostgreSQL).
                self.es.set_defaults(table, &[(column, None)])?;
                Ok(())
            }
            ast::AlterColumnOperation::SetNotNull => {
                self.es.set_not_null(table, &[column])?;
                Ok(())
            }
            ast::AlterColumnOperation::DropNotNull => {
                if identity {
                    return Err(identity_column(table, column));
                }
                self.es.drop_not_null(table, column)?;
                Ok(())
            }
            other => Err(SqlError::unsupported(&format!("ALTER COLUMN … {other}"))),
        }
    }
}

/// `DROP DEFAULT` or `DROP NOT NULL` of an identity column: refused with
/// PostgreSQL's SQLSTATE, 42601 (`ATExecColumnDefault`,
/// `ATExecDropNotNull`).
fn identity_column(table: &str, column: &str) -> SqlError {
    SqlError::new(SqlState::SYNTAX_ERROR, format!("column \"{column}\" of relation \"{table}\" is an identity column"))
}

#[cfg(test)]
mod tests {
    use super::*;

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
