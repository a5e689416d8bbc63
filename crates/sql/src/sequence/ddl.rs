//! The sequence statements — `CREATE SEQUENCE`, `ALTER SEQUENCE` (read by
//! `syntax.rs`: sqlparser does not), `DROP SEQUENCE` — and the
//! sequences behind `SERIAL` and identity columns. `OWNED BY
//! table.column` makes a sequence a `SERIAL`'s (dropped with its table,
//! shown in `pg_depend` with deptype `a`), `OWNED BY NONE` frees it; an
//! identity column's sequence keeps its owner (`0A000`).
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
use turnstile_engine::catalog::RelKind;
use turnstile_lock::SqlState;

/// A column's generated key: its sequence's type, options and kind.
#[derive(Clone, Debug)]
pub(crate) struct KeySequence {
    pub(crate) column: String,
    pub(crate) ty: SeqType,
    pub(crate) options: Vec<SeqOption>,
    pub(crate) identity: Identity,
    /// The sequence's name when given (`SEQUENCE NAME s`), else chosen.
    pub(crate) name: Option<String>,
}

/// The `OWNED BY` among `options`, if given: `Some(None)` for `OWNED BY
/// NONE`.
fn owned_by(options: &[SeqOption]) -> Option<Option<(String, String)>> {
    options.iter().rev().find_map(|o| match o {
        SeqOption::OwnedBy(owner) => Some(owner.clone()),
        _ => None,
    })
}

/// The default that takes the next value of sequence `name`:
/// `nextval('name')`, the name quoted as a `regclass` reads it.
pub(crate) fn nextval_of(name: &str) -> String {
    format!("nextval('{}')", crate::catalog::deparse::quote_ident(name).replace('\'', "''"))
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
        let owner = match owned_by(&opts).flatten() {
            Some((table, column)) => Some(self.serial_owner(&table, &column)?),
            None => None,
        };
        self.ctx.shared.sequences.create(db, &name, def, owner)?;
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
        let owner = match owned_by(options) {
            None => seq.owner.clone(),
            Some(_) if seq.owner.as_ref().is_some_and(|o| o.identity != Identity::Serial) => {
                return Err(SqlError::unsupported("changing the owner of an identity sequence"));
            }
            Some(None) => None,
            Some(Some((table, column))) => Some(self.serial_owner(&table, &column)?),
        };
        self.ctx.sequences.release(db, name);
        self.ctx.shared.sequences.replace(db, &seq, def, restart, owner)?;
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
            let taken = |s: &Self, name: &str| {
                s.ctx.shared.sequences.find(db, name).is_some() || s.es.engine().catalog().relation(db, name).is_ok()
            };
            let name = match k.name {
                Some(given) if taken(self, &given) => {
                    return Err(SqlError::new(
                        SqlState::DUPLICATE_TABLE,
                        format!("relation \"{given}\" already exists"),
                    ))
                }
                Some(given) => given,
                None => {
                    let base = format!("{table}_{}_seq", k.column);
                    let mut name = base.clone();
                    let mut n = 0;
                    while taken(self, &name) {
                        n += 1;
                        name = format!("{base}{n}");
                    }
                    name
                }
            };
            let mut def = SeqDef::new(k.ty);
            def.apply(&k.options)?;
            let owner = Owner { table: table.to_owned(), column: k.column.clone(), identity: k.identity };
            self.ctx.shared.sequences.create(db, &name, def, Some(owner))?;
            defaults.push((k.column, nextval_of(&name)));
        }
        Ok(defaults)
    }

    /// The owner `OWNED BY table.column` names (a `SERIAL`'s kind):
    /// `42P01` without such a table, `42703` without such a column.
    fn serial_owner(&self, table: &str, column: &str) -> Result<Owner, SqlError> {
        let rel =
            self.es.engine().catalog().relation(self.es.database(), table).map_err(|_| {
                SqlError::new(SqlState::UNDEFINED_TABLE, format!("relation \"{table}\" does not exist"))
            })?;
        if !matches!(rel.kind, RelKind::Table | RelKind::PartitionedTable) {
            return Err(SqlError::new(
                SqlState::from_code("42809"),
                format!("sequence cannot be owned by relation \"{table}\""),
            ));
        }
        if rel.column_number(column).is_none() {
            return Err(SqlError::new(
                SqlState::UNDEFINED_COLUMN,
                format!("column \"{column}\" of relation \"{table}\" does not exist"),
            ));
        }
        Ok(Owner { table: table.to_owned(), column: column.to_owned(), identity: Identity::Serial })
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
