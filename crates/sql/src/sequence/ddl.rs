//! The sequence statements — `CREATE SEQUENCE`, `ALTER SEQUENCE` (read by
//! `syntax.rs`: sqlparser does not), `DROP SEQUENCE` — and the
//! sequences behind `SERIAL` and identity columns.
//!
//! A `SERIAL` column (`smallserial`, `serial`, `bigserial`) is a column of
//! `smallint`, `integer` or `bigint`, `NOT NULL`, whose default is
//! `nextval('<table>_<column>_seq')`, a sequence of its type that the
//! column owns (dropped with its table). An identity column
//! (`GENERATED ALWAYS | BY DEFAULT AS IDENTITY [(options)]`) is the same,
//! with the options given; under `ALWAYS` an INSERT that gives the column
//! a value fails with `428C9`.

use super::options::{SeqDef, SeqOption, SeqType};
use super::state::{Identity, Owner};
pub(crate) use super::syntax::seq_options;
use crate::error::{Severity, SqlError};
use crate::expr::object_name;
use crate::session::SqlSession;
use crate::statement::Outcome;
use sqlparser::ast;
use turnstile_lock::SqlState;

/// A column's generated key: its sequence's type, options and kind.
#[derive(Clone, Debug)]
pub(crate) struct KeySequence {
    pub(crate) column: String,
    pub(crate) ty: SeqType,
    pub(crate) options: Vec<SeqOption>,
    pub(crate) identity: Identity,
}

/// The type of a `SERIAL` pseudo-type, if `type_name` is one.
pub(crate) fn serial_type(type_name: &str) -> Option<SeqType> {
    match type_name.trim().to_ascii_lowercase().as_str() {
        "smallserial" | "serial2" => Some(SeqType::Int2),
        "serial" | "serial4" => Some(SeqType::Int4),
        "bigserial" | "serial8" => Some(SeqType::Int8),
        _ => None,
    }
}

impl SqlSession {
    /// `CREATE SEQUENCE [IF NOT EXISTS] name options`.
    pub(crate) fn create_sequence(
        &mut self,
        name: &ast::ObjectName,
        if_not_exists: bool,
        options: &[ast::SequenceOptions],
    ) -> Result<Outcome, SqlError> {
        let name = object_name(name)?;
        let opts = seq_options(options)?;
        let mut def = SeqDef::new(SeqType::Int8);
        def.apply(&opts)?;
        let db = self.es.database();
        let exists = self.ctx.shared.sequences.find(db, &name).is_some()
            || self.es.engine().catalog().relation(db, &name).is_ok();
        if exists {
            if if_not_exists {
                self.notice(
                    Severity::Notice,
                    SqlState::DUPLICATE_TABLE,
                    format!("relation \"{name}\" already exists, skipping"),
                );
                return Self::command("CREATE SEQUENCE");
            }
            return Err(SqlError::new(SqlState::DUPLICATE_TABLE, format!("relation \"{name}\" already exists")));
        }
        self.ctx.shared.sequences.create(db, &name, def, None)?;
        Self::command("CREATE SEQUENCE")
    }

    /// `ALTER SEQUENCE [IF EXISTS] name options`.
    pub(crate) fn alter_sequence(
        &mut self,
        name: &str,
        if_exists: bool,
        options: &[SeqOption],
    ) -> Result<Outcome, SqlError> {
        let db = self.es.database();
        let Some(seq) = self.ctx.shared.sequences.find(db, name) else {
            if if_exists {
                self.notice(
                    Severity::Notice,
                    SqlState::SUCCESSFUL_COMPLETION,
                    format!("relation \"{name}\" does not exist, skipping"),
                );
                return Self::command("ALTER SEQUENCE");
            }
            return Err(SqlError::new(SqlState::UNDEFINED_TABLE, format!("relation \"{name}\" does not exist")));
        };
        let mut def = seq.def.clone();
        let restart = def.apply(options)?;
        self.ctx.sequences.release(db, name);
        self.ctx.shared.sequences.replace(db, &seq, def, restart)?;
        Self::command("ALTER SEQUENCE")
    }

    /// `DROP SEQUENCE [IF EXISTS] names`.
    pub(crate) fn drop_sequences(&mut self, names: &[ast::ObjectName], if_exists: bool) -> Result<Outcome, SqlError> {
        let db = self.es.database();
        for n in names {
            let name = object_name(n)?;
            let Some(seq) = self.ctx.shared.sequences.find(db, &name) else {
                if if_exists {
                    self.notice(
                        Severity::Notice,
                        SqlState::SUCCESSFUL_COMPLETION,
                        format!("sequence \"{name}\" does not exist, skipping"),
                    );
                    continue;
                }
                return Err(SqlError::new(SqlState::UNDEFINED_TABLE, format!("sequence \"{name}\" does not exist")));
            };
            if let Some(o) = &seq.owner {
                if o.identity != Identity::Serial {
                    return Err(SqlError::new(
                        SqlState::from_code("2BP01"),
                        format!(
                            "cannot drop sequence {name} because column {} of table {} requires it",
                            o.column, o.table
                        ),
                    ));
                }
            }
            self.ctx.shared.sequences.drop_sequence(db, &name)?;
        }
        Self::command("DROP SEQUENCE")
    }

    /// The sequences of a new table's `SERIAL` and identity columns, named
    /// `<table>_<column>_seq` (or with a number after it when that is
    /// taken); each column's default names its sequence. Returns the
    /// defaults to set.
    pub(crate) fn key_sequences(
        &mut self,
        table: &str,
        keys: Vec<KeySequence>,
    ) -> Result<Vec<(String, String)>, SqlError> {
        let db = self.es.database();
        let mut defaults = Vec::new();
        for k in keys {
            let base = format!("{table}_{}_seq", k.column);
            let mut name = base.clone();
            let mut n = 0;
            while self.ctx.shared.sequences.find(db, &name).is_some()
                || self.es.engine().catalog().relation(db, &name).is_ok()
            {
                n += 1;
                name = format!("{base}{n}");
            }
            let mut def = SeqDef::new(k.ty);
            def.apply(&k.options)?;
            let owner = Owner { table: table.to_owned(), column: k.column.clone(), identity: k.identity };
            self.ctx.shared.sequences.create(db, &name, def, Some(owner))?;
            defaults.push((k.column, format!("nextval('{name}')")));
        }
        Ok(defaults)
    }

    /// Drops the sequences owned by `table`'s columns (after DROP TABLE).
    pub(crate) fn drop_owned_sequences(&mut self, table: &str) -> Result<(), SqlError> {
        let db = self.es.database();
        for seq in self.ctx.shared.sequences.owned_by(db, table) {
            self.ctx.shared.sequences.drop_sequence(db, &seq.name)?;
        }
        Ok(())
    }
}
