//! Foreign keys enforced at the end of each statement (PostgreSQL's RI
//! triggers, `ri_triggers.c`), on the rows the statement wrote.
//!
//! # Referencing side
//!
//! Each inserted row, and each updated row whose referencing columns
//! changed, with no NULL among them (`MATCH SIMPLE`), must find its key in
//! the referenced table. The look-up locks the referenced row
//! `FOR KEY SHARE` ([`RowLockMode::KeyShare`]), as PostgreSQL's
//! `RI_FKey_check` does: until this transaction ends, the row cannot be
//! deleted nor its key changed (both lock `FOR UPDATE`), while an UPDATE
//! that keeps the key (`FOR NO KEY UPDATE`) goes ahead. The look-up is an
//! engine statement of its own, so under `READ COMMITTED` it sees what
//! committed before it (and waits for a deleter or key updater still at
//! work, then re-checks the row's newest version).
//!
//! # Referenced side
//!
//! Each deleted row, and each updated row whose referenced columns
//! changed, runs the constraint's action for its old key:
//! - `NO ACTION`: nothing if a row with the old key exists again at the
//!   end of the statement (`ri_Check_Pk_Match`), else as `RESTRICT`;
//! - `RESTRICT`: `23503` if a referencing row (locked `FOR KEY SHARE`) has
//!   the key;
//! - `CASCADE`: the referencing rows are deleted, or get the new key;
//! - `SET NULL` / `SET DEFAULT`: their referencing columns are set.
//!
//! The rows an action writes are enforced the same way, recursively, at
//! most [`MAX_CASCADE_DEPTH`] levels deep.

use super::partitions;
use super::violation::{not_present, still_referenced};
use crate::error::SqlError;
use crate::plan::Run;
use std::collections::HashSet;
use std::sync::Arc;
use turnstile_engine::catalog::{CatalogData, FkAction, ForeignKey, RelId, Relation};
use turnstile_engine::dml::LockingFilter;
use turnstile_engine::query::{Col, Operand, Query};
use turnstile_engine::txn::{RowLockMode, RowLocking, RowWait};
use turnstile_engine::types::Value;
use turnstile_lock::SqlState;

/// How many levels of cascaded actions one statement runs at most.
pub const MAX_CASCADE_DEPTH: usize = 64;

/// The rows one statement wrote to one table.
#[derive(Debug, Default)]
pub struct Written {
    /// Rows inserted.
    pub inserted: Vec<Vec<Value>>,
    /// Rows updated: (old, new).
    pub updated: Vec<(Vec<Value>, Vec<Value>)>,
    /// Rows deleted.
    pub deleted: Vec<Vec<Value>>,
}

/// Enforces the foreign keys of `table` (on both sides) for the rows the
/// statement `written` to it.
pub fn after_statement(run: &mut Run<'_>, table: RelId, written: &Written) -> Result<(), SqlError> {
    let cat = run.session()?.engine().catalog().snapshot();
    enforce(run, &cat, table, written, 0)
}

fn enforce(
    run: &mut Run<'_>,
    cat: &Arc<CatalogData>,
    table: RelId,
    written: &Written,
    depth: usize,
) -> Result<(), SqlError> {
    if depth > MAX_CASCADE_DEPTH {
        return Err(SqlError::new(
            SqlState::PROGRAM_LIMIT_EXCEEDED,
            format!("foreign key actions cascade more than {MAX_CASCADE_DEPTH} levels deep"),
        ));
    }
    for k in partitions::keys_of(cat, table) {
        let changed = written.updated.iter().filter(|(o, n)| !same(o, n, &k.columns)).map(|(_, n)| n);
        for row in written.inserted.iter().chain(changed) {
            check_parent(run, cat, k, row)?;
        }
    }
    for k in partitions::referencing(cat, table) {
        let mut done = HashSet::new();
        for old in &written.deleted {
            if done.insert(key_of(old, &k.ref_columns)) {
                on_parent_change(run, cat, k, old, None, depth)?;
            }
        }
        for (old, new) in written.updated.iter().filter(|(o, n)| !same(o, n, &k.ref_columns)) {
            if done.insert(key_of(old, &k.ref_columns)) {
                on_parent_change(run, cat, k, old, Some(new), depth)?;
            }
        }
    }
    Ok(())
}

/// Whether `a` and `b` agree on `columns` (NULL equal to NULL: a key that
/// stays NULL did not change).
fn same(a: &[Value], b: &[Value], columns: &[usize]) -> bool {
    columns.iter().all(|&c| a.get(c) == b.get(c))
}

fn key_of(row: &[Value], columns: &[usize]) -> Vec<Value> {
    columns.iter().map(|&c| row.get(c).cloned().unwrap_or(Value::Null)).collect()
}

fn rel(cat: &CatalogData, id: RelId) -> Result<&Relation, SqlError> {
    cat.relations
        .get(&id)
        .ok_or_else(|| SqlError::new(SqlState::UNDEFINED_TABLE, format!("relation with OID {id} does not exist")))
}

/// `table` rows whose `columns` equal `$1, $2, …`.
fn key_query(table: &str, columns: &[usize]) -> Query {
    let mut q = Query::from(table.to_owned());
    for (i, &c) in columns.iter().enumerate() {
        q = q.filter(Col::at(0, c), Operand::Param(i + 1));
    }
    q
}

/// Keeps every candidate, in the order found (the WHERE is all equality
/// filters, which the engine re-checks itself).
pub(crate) struct EveryRow;

impl LockingFilter for EveryRow {
    fn order(&mut self, rows: &[Vec<Value>]) -> turnstile_engine::error::Result<Vec<usize>> {
        Ok((0..rows.len()).collect())
    }
    fn recheck(&mut self, _row: &[Value]) -> turnstile_engine::error::Result<bool> {
        Ok(true)
    }
}

/// Locks one row of `table` with `key` in `columns` `FOR KEY SHARE`;
/// whether there was one.
fn lock_key_share(run: &mut Run<'_>, table: &str, columns: &[usize], key: &[Value]) -> Result<bool, SqlError> {
    let q = key_query(table, columns);
    let locking = RowLocking { mode: RowLockMode::KeyShare, wait: RowWait::Block };
    let rows = run.session()?.select_locking(&q, key, locking, Some(1), &mut EveryRow)?;
    Ok(!rows.is_empty())
}

/// The referencing side: `row`'s key must be in the referenced table.
fn check_parent(run: &mut Run<'_>, cat: &CatalogData, k: &ForeignKey, row: &[Value]) -> Result<(), SqlError> {
    let key = key_of(row, &k.columns);
    if key.iter().any(|v| matches!(v, Value::Null)) {
        return Ok(());
    }
    let parent = rel(cat, k.ref_table)?;
    if lock_key_share(run, &parent.name, &k.ref_columns, &key)? {
        return Ok(());
    }
    let child = rel(cat, k.table)?;
    let leaf = partitions::leaf_for(cat, child, row);
    Err(not_present(&leaf.name, &k.name, &parent.name, &child.column_names(&k.columns), &key))
}

/// The referenced side: `old`'s key was deleted (`new` is `None`) or
/// changed to `new`'s.
fn on_parent_change(
    run: &mut Run<'_>,
    cat: &Arc<CatalogData>,
    k: &ForeignKey,
    old: &[Value],
    new: Option<&[Value]>,
    depth: usize,
) -> Result<(), SqlError> {
    let key = key_of(old, &k.ref_columns);
    if key.iter().any(|v| matches!(v, Value::Null)) {
        return Ok(());
    }
    let (parent, child) = (rel(cat, k.ref_table)?, rel(cat, k.table)?);
    let action = if new.is_some() { k.on_update } else { k.on_delete };
    let written = match action {
        FkAction::NoAction | FkAction::Restrict => {
            if action == FkAction::NoAction && key_exists(run, &parent.name, &k.ref_columns, &key)? {
                return Ok(());
            }
            if lock_key_share(run, &child.name, &k.columns, &key)? {
                let columns = parent.column_names(&k.ref_columns);
                let (leaf, name) = (partitions::leaf_for(cat, parent, old), partitions::clone_name(cat, k, old));
                return Err(still_referenced(&leaf.name, &name, &child.name, &columns, &key));
            }
            return Ok(());
        }
        FkAction::Cascade => match new {
            None => {
                let mut deleted = Vec::new();
                let q = key_query(&child.name, &k.columns);
                run.session()?.delete_rows(&q, &key, &mut |row| {
                    deleted.push(row.to_vec());
                    Ok(true)
                })?;
                Written { deleted, ..Written::default() }
            }
            Some(new) => set_columns(run, cat, k, child, &key, key_of(new, &k.ref_columns))?,
        },
        FkAction::SetNull => set_columns(run, cat, k, child, &key, vec![Value::Null; k.columns.len()])?,
        FkAction::SetDefault => {
            let values = super::defaults::column_defaults(run, child, &k.columns)?;
            set_columns(run, cat, k, child, &key, values)?
        }
    };
    enforce(run, cat, k.table, &written, depth + 1)
}

/// Whether a row of `table` has `key` in `columns` now (a plain read).
fn key_exists(run: &mut Run<'_>, table: &str, columns: &[usize], key: &[Value]) -> Result<bool, SqlError> {
    let q = key_query(table, columns);
    Ok(!run.session()?.query(&q, key)?.is_empty())
}

/// Sets the referencing columns of `child`'s rows with `key` to `values`;
/// the rows changed.
fn set_columns(
    run: &mut Run<'_>,
    cat: &CatalogData,
    k: &ForeignKey,
    child: &Relation,
    key: &[Value],
    values: Vec<Value>,
) -> Result<Written, SqlError> {
    let mut coerced = Vec::with_capacity(values.len());
    for (v, &c) in values.into_iter().zip(&k.columns) {
        let ty = child.columns[c].ty;
        coerced.push(v.coerce(ty).ok_or_else(|| {
            SqlError::new(
                SqlState::DATATYPE_MISMATCH,
                format!("value {v} does not fit column \"{}\" of table \"{}\"", child.columns[c].name, child.name),
            )
        })?);
    }
    let q = key_query(&child.name, &k.columns);
    let mut updated = Vec::new();
    let mut f = |row: &[Value]| {
        let mut n = row.to_vec();
        for (&c, v) in k.columns.iter().zip(&coerced) {
            n[c] = v.clone();
        }
        updated.push((row.to_vec(), n.clone()));
        Ok(Some(n))
    };
    let session = run.session()?;
    if is_key_update(cat, k.table, &k.columns) {
        session.update_key_rows(&q, key, &mut f)?;
    } else {
        session.update_rows(&q, key, &mut f)?;
    }
    Ok(Written { updated, ..Written::default() })
}

/// Whether assigning `columns` of `table` changes a key: one of them is a
/// column of a unique index (PostgreSQL's `INDEX_ATTR_BITMAP_KEY`).
pub fn is_key_update(cat: &CatalogData, table: RelId, columns: &[usize]) -> bool {
    cat.indexes_of(table)
        .filter_map(|ix| ix.index.as_ref())
        .any(|d| d.unique && d.columns.iter().any(|c| columns.contains(c)))
}
