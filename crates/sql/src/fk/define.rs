//! Defining foreign keys: `REFERENCES` (a column option) and `FOREIGN KEY`
//! (a table constraint) in `CREATE TABLE`, `ALTER TABLE … ADD CONSTRAINT`
//! and `DROP CONSTRAINT`, and `DROP TABLE` of a referenced table.
//!
//! As PostgreSQL: a key without a referenced column list references the
//! primary key (`42704` if there is none); a column list must be, as a
//! set, the columns of a unique index (`42830`); the key is named
//! `<table>_<columns>_fkey` unless named, with a digit added while the
//! name is taken. `ALTER TABLE … ADD` checks the rows already there, under
//! `ShareRowExclusiveLock` on both tables, and fails with the first
//! missing key's `23503`. A table referenced by another's key is dropped
//! only with `CASCADE`, which drops those keys (`2BP01` otherwise).

use super::violation::not_present;
use crate::error::{Severity, SqlError};
use crate::expr::{ident_name, object_name};
use crate::session::SqlSession;
use sqlparser::ast;
use turnstile_engine::catalog::{CatalogData, FkAction, ForeignKey, Relation, NAME_MAX};
use turnstile_engine::query::{Col, Operand, Query};
use turnstile_engine::types::Value;
use turnstile_lock::{LockMode, SqlState};

/// A foreign key as written.
#[derive(Clone, Debug)]
pub(crate) struct FkSpec {
    /// `CONSTRAINT name`, if given.
    name: Option<String>,
    /// The referencing columns.
    columns: Vec<String>,
    /// The referenced table.
    ref_table: String,
    /// The referenced columns; empty: the primary key's.
    ref_columns: Vec<String>,
    on_delete: FkAction,
    on_update: FkAction,
}

impl FkSpec {
    /// Reads a `FOREIGN KEY` table constraint, or (`column` given) a
    /// column's `REFERENCES` option, named `name` if `CONSTRAINT name`
    /// preceded it.
    pub(crate) fn of(
        fk: &ast::ForeignKeyConstraint,
        column: Option<&str>,
        name: Option<&ast::Ident>,
    ) -> Result<FkSpec, SqlError> {
        if fk.match_kind.is_some_and(|m| !matches!(m, ast::ConstraintReferenceMatchKind::Simple)) {
            return Err(SqlError::unsupported("MATCH FULL and MATCH PARTIAL foreign keys"));
        }
        if let Some(c) = &fk.characteristics {
            if c.deferrable == Some(true) || matches!(c.initially, Some(ast::DeferrableInitial::Deferred)) {
                return Err(SqlError::unsupported("deferrable foreign keys"));
            }
        }
        let columns = match column {
            Some(c) => vec![c.to_owned()],
            None => fk.columns.iter().map(ident_name).collect(),
        };
        Ok(FkSpec {
            name: fk.name.as_ref().or(name).map(ident_name),
            columns,
            ref_table: object_name(&fk.foreign_table)?,
            ref_columns: fk.referred_columns.iter().map(ident_name).collect(),
            on_delete: action(fk.on_delete),
            on_update: action(fk.on_update),
        })
    }
}

fn action(a: Option<ast::ReferentialAction>) -> FkAction {
    match a {
        None | Some(ast::ReferentialAction::NoAction) => FkAction::NoAction,
        Some(ast::ReferentialAction::Restrict) => FkAction::Restrict,
        Some(ast::ReferentialAction::Cascade) => FkAction::Cascade,
        Some(ast::ReferentialAction::SetNull) => FkAction::SetNull,
        Some(ast::ReferentialAction::SetDefault) => FkAction::SetDefault,
    }
}

fn no_table(name: &str) -> SqlError {
    SqlError::new(SqlState::UNDEFINED_TABLE, format!("relation \"{name}\" does not exist"))
}

fn column_numbers(rel: &Relation, names: &[String]) -> Result<Vec<usize>, SqlError> {
    names
        .iter()
        .map(|n| {
            rel.column_number(n).ok_or_else(|| {
                SqlError::new(
                    SqlState::UNDEFINED_COLUMN,
                    format!("column \"{n}\" referenced in foreign key constraint does not exist"),
                )
            })
        })
        .collect()
}

/// The referenced columns: the primary key's when none are given, else
/// the given ones, which must be a unique index's columns.
fn referenced_columns(cat: &CatalogData, parent: &Relation, given: &[String]) -> Result<Vec<usize>, SqlError> {
    let keys: Vec<(bool, &Vec<usize>)> = cat
        .indexes_of(parent.id)
        .filter_map(|ix| ix.index.as_ref())
        .filter(|d| d.unique)
        .map(|d| (d.primary, &d.columns))
        .collect();
    if given.is_empty() {
        return keys.iter().find(|(primary, _)| *primary).map(|(_, c)| (*c).clone()).ok_or_else(|| {
            SqlError::new(
                SqlState::UNDEFINED_OBJECT,
                format!("there is no primary key for referenced table \"{}\"", parent.name),
            )
        });
    }
    let numbers = column_numbers(parent, given)?;
    let same_set = |c: &Vec<usize>| c.len() == numbers.len() && c.iter().all(|x| numbers.contains(x));
    if keys.iter().any(|(_, c)| same_set(c)) {
        Ok(numbers)
    } else {
        Err(SqlError::new(
            SqlState::INVALID_FOREIGN_KEY,
            format!("there is no unique constraint matching given keys for referenced table \"{}\"", parent.name),
        ))
    }
}

impl SqlSession {
    /// Adds the foreign key `spec` to `table`; `check_rows`: the table may
    /// have rows, which must all satisfy it (`ALTER TABLE … ADD`).
    pub(crate) fn add_foreign_key(&mut self, table: &str, spec: &FkSpec, check_rows: bool) -> Result<(), SqlError> {
        let cat = self.es.engine().catalog().snapshot();
        let db = self.es.database();
        let child = cat.find(db, table).ok_or_else(|| no_table(table))?.clone();
        let parent = cat.find(db, &spec.ref_table).ok_or_else(|| no_table(&spec.ref_table))?.clone();
        let columns = column_numbers(&child, &spec.columns)?;
        let ref_columns = referenced_columns(&cat, &parent, &spec.ref_columns)?;
        if columns.len() != ref_columns.len() {
            return Err(SqlError::new(
                SqlState::INVALID_FOREIGN_KEY,
                "number of referencing and referenced columns for foreign key disagree",
            ));
        }
        let name = match &spec.name {
            Some(n) => n.clone(),
            None => self.choose_fk_name(&child, &columns),
        };
        for (&c, &p) in columns.iter().zip(&ref_columns) {
            let (ct, pt) = (child.columns[c].ty, parent.columns[p].ty);
            if !ct.comparable(pt) {
                let mut e = SqlError::new(
                    SqlState::DATATYPE_MISMATCH,
                    format!("foreign key constraint \"{name}\" cannot be implemented"),
                );
                e.detail = Some(format!(
                    "Key columns \"{}\" and \"{}\" are of incompatible types: {} and {}.",
                    child.columns[c].name,
                    parent.columns[p].name,
                    crate::value::SqlType::of_column(ct).name(),
                    crate::value::SqlType::of_column(pt).name()
                ));
                return Err(e);
            }
        }
        let fk = ForeignKey {
            id: 0,
            db,
            name,
            table: child.id,
            columns,
            ref_table: parent.id,
            ref_columns,
            on_update: spec.on_update,
            on_delete: spec.on_delete,
        };
        if !check_rows {
            self.es.add_foreign_key(fk)?;
            return Ok(());
        }
        self.in_own_transaction(|s| s.check_and_add(&child, &parent, fk))
    }

    /// Runs `body` in the open transaction block, or outside one in a
    /// transaction of its own that commits if `body` succeeds and rolls
    /// back if it fails (so the locks `body` takes last until it is done).
    pub(super) fn in_own_transaction(
        &mut self,
        body: impl FnOnce(&mut Self) -> Result<(), SqlError>,
    ) -> Result<(), SqlError> {
        let own = !self.es.in_transaction();
        if own {
            self.es.begin()?;
        }
        let done = body(self);
        match (own, done) {
            (false, r) => r,
            (true, Ok(())) => Ok(self.es.commit()?),
            (true, Err(e)) => {
                self.es.rollback()?;
                Err(e)
            }
        }
    }

    /// Under `ShareRowExclusiveLock` on both tables: every row of `child`
    /// with no NULL in the key must find it in `parent`; then `fk` is added.
    fn check_and_add(&mut self, child: &Relation, parent: &Relation, fk: ForeignKey) -> Result<(), SqlError> {
        self.es.lock_relation(child.id, LockMode::ShareRowExclusive)?;
        self.es.lock_relation(parent.id, LockMode::ShareRowExclusive)?;
        let mut q = Query::from(parent.name.clone());
        for (i, &c) in fk.ref_columns.iter().enumerate() {
            q = q.filter(Col::at(0, c), Operand::Param(i + 1));
        }
        for row in self.es.scan_all(&child.name)? {
            let key: Vec<Value> = fk.columns.iter().map(|&c| row[c].clone()).collect();
            if key.iter().any(|v| matches!(v, Value::Null)) {
                continue;
            }
            if self.es.query(&q, &key)?.is_empty() {
                return Err(not_present(&child.name, &fk.name, &parent.name, &child.column_names(&fk.columns), &key));
            }
        }
        self.es.add_foreign_key(fk)?;
        Ok(())
    }

    /// PostgreSQL's `ChooseConstraintName(table, columns, "fkey")`: the
    /// first of `t_a_b_fkey`, `t_a_b_fkey1`, … no constraint of the table
    /// has (each part cut so that the name fits in `NAME_MAX` bytes).
    fn choose_fk_name(&self, child: &Relation, columns: &[usize]) -> String {
        let base = format!("{}_{}", child.name, child.column_names(columns).join("_"));
        let catalog = self.es.engine().catalog();
        (0..)
            .map(|k: u32| {
                let suffix = if k == 0 { "_fkey".to_owned() } else { format!("_fkey{k}") };
                let mut cut = base.len().min(NAME_MAX - suffix.len());
                while !base.is_char_boundary(cut) {
                    cut -= 1;
                }
                format!("{}{suffix}", &base[..cut])
            })
            .find(|n| !catalog.has_constraint(self.es.database(), child.id, n))
            .unwrap_or_default()
    }

    /// `ALTER TABLE table DROP CONSTRAINT name` when `name` is a foreign
    /// key of `table`; `false` if it is not one (the caller goes on).
    pub(crate) fn drop_fk_constraint(&mut self, table: &str, name: &str) -> Result<bool, SqlError> {
        let cat = self.es.engine().catalog().snapshot();
        let Some(t) = cat.find(self.es.database(), table) else { return Ok(false) };
        if !cat.foreign_keys_of(t.id).any(|k| k.name == name) {
            return Ok(false);
        }
        self.es.drop_foreign_key(table, name)?;
        Ok(true)
    }

    /// Before `DROP TABLE table` (one of `dropped`, the statement's
    /// tables): the foreign keys of other tables, not dropped too, that
    /// reference it. Without `cascade` they refuse the drop (`2BP01`); with
    /// it they are dropped, each named in a NOTICE.
    pub(crate) fn drop_referencing_keys(
        &mut self,
        table: &str,
        dropped: &[String],
        cascade: bool,
    ) -> Result<(), SqlError> {
        let cat = self.es.engine().catalog().snapshot();
        let Some(t) = cat.find(self.es.database(), table) else { return Ok(()) };
        let db = self.es.database();
        let gone: Vec<u32> = dropped.iter().filter_map(|n| cat.find(db, n).map(|r| r.id)).collect();
        let deps: Vec<(String, String)> = cat
            .referencing(t.id)
            .filter(|k| k.table != t.id && !gone.contains(&k.table))
            .filter_map(|k| cat.relations.get(&k.table).map(|c| (k.name.clone(), c.name.clone())))
            .collect();
        if deps.is_empty() {
            return Ok(());
        }
        let lines: Vec<String> = deps.iter().map(|(k, c)| format!("constraint {k} on table {c}")).collect();
        if !cascade {
            let mut e = SqlError::new(
                SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                format!("cannot drop table {table} because other objects depend on it"),
            );
            e.detail =
                Some(lines.iter().map(|l| format!("{l} depends on table {table}")).collect::<Vec<_>>().join("\n"));
            e.hint = Some("Use DROP ... CASCADE to drop the dependent objects too.".into());
            return Err(e);
        }
        let notice = match lines.as_slice() {
            [one] => format!("drop cascades to {one}"),
            many => format!("drop cascades to {} other objects", many.len()),
        };
        self.notice(Severity::Notice, SqlState::SUCCESSFUL_COMPLETION, notice);
        for (k, c) in &deps {
            self.es.drop_foreign_key(c, k)?;
        }
        Ok(())
    }
}
