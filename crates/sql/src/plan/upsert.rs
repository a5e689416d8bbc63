//! `INSERT … ON CONFLICT [(columns) | ON CONSTRAINT name] DO NOTHING |
//! DO UPDATE SET … [WHERE …]`, with `EXCLUDED` (upsert).
//!
//! # The protocol
//!
//! Each proposed row (defaults and generated keys filled in) goes through
//! a loop, as PostgreSQL's `ExecInsert` with `ON CONFLICT` does:
//!
//! 1. **Probe** the arbiter indexes for a row with the proposed key, with
//!    a fresh snapshot (each engine statement takes one under `READ
//!    COMMITTED`). `DO UPDATE` probes through the engine's UPDATE, which
//!    takes the row's lock (`FOR UPDATE` strength when the key changes,
//!    else `FOR NO KEY UPDATE`), waits for a running writer and re-checks
//!    the newest version (EvalPlanQual); the `SET` list and `WHERE` are
//!    evaluated on that version and the proposed row (`EXCLUDED`). A row
//!    found ends the loop: updated, or left alone by the `WHERE`. `DO
//!    NOTHING` ends it when any row is found.
//! 2. Otherwise **insert speculatively** (`Session::insert_speculative`,
//!    the engine's `speculative.rs`): the insert takes a speculative
//!    token (lock tag `spectoken`, its transaction id and a number)
//!    exclusive, places its heap tuple, registers it with the token,
//!    then places its index entries. Each unique check waits for a
//!    running transaction that holds the key (`unique_wait.rs`) — on
//!    that transaction's token instead if the key's row is itself an
//!    unconfirmed speculative insert — and decides after the wait: if the
//!    other rolled back (or killed its row) the insert goes on; if it
//!    committed, the insert fails with `23505` on the arbiter. Then the
//!    insert **confirms** (unregisters, releases the token) or **kills**
//!    its row: marks it dead — its entries already placed in other
//!    indexes now point at a dead tuple — unregisters, releases the
//!    token, and the loop goes back to 1, whose fresh snapshot now sees
//!    the committed row.
//!
//! So of N sessions upserting one key exactly one inserts and the others
//! update (each on the newest version, under the row lock: no update is
//! lost) or do nothing, and an upsert never answers `23505` for its
//! arbiter. A unique check waits *before* its own entry is placed, but the
//! entries of the indexes done before are visible at once: with two
//! unique indexes (two arbiters, or an arbiter and another unique
//! constraint) another session can meet an entry of a row that is then
//! taken back. The token makes that session wait only until the row is
//! confirmed or killed, not until this transaction ends, and it never
//! decides on a killed row (the loom model `loom_speculative.rs`).
//!
//! A row the command itself inserted or updated met again by a later
//! proposed row of the same key fails `DO UPDATE` with `21000`; `DO
//! NOTHING` skips it. A target that names no unique index is `42P10`.

pub use super::arbiter::Arbiter;
use super::arbiter::{infer, key_text, no_arbiter, unique_indexes};
use super::from::push_table;
use super::returning::Returning;
use super::{compiler, Catalog, Run, TableDef};
use crate::error::SqlError;
use crate::expr::{object_name, Expr, Scope};
use crate::value::{Datum, SqlType};
use sqlparser::ast;
use std::collections::HashSet;
use turnstile_engine::types::{ColumnType, Value};
use turnstile_lock::SqlState;

/// Times one proposed row goes back to its probe after its insert met a
/// committed conflicting key, before the statement gives up with `40001`.
const UPSERT_RETRIES_MAX: usize = 100;

/// What `ON CONFLICT` does.
#[derive(Debug)]
pub enum ConflictAction {
    /// `DO NOTHING`.
    Nothing,
    /// `DO UPDATE SET … [WHERE …]`, over the existing row then `EXCLUDED`.
    Update {
        /// `SET column = expression`.
        assignments: Vec<(usize, Expr)>,
        /// `WHERE`.
        selection: Option<Expr>,
    },
}

/// A compiled `ON CONFLICT` clause.
#[derive(Debug)]
pub struct OnConflict {
    /// The arbiter indexes (one for `DO UPDATE`).
    pub arbiters: Vec<Arbiter>,
    /// The action.
    pub action: ConflictAction,
}

/// Compiles `ON CONFLICT` of an INSERT into `table` (`def`, called `qual`
/// in the statement).
pub(super) fn compile_on_conflict(
    cat: &Catalog<'_>,
    (table, def, qual): (&str, &TableDef, &str),
    on: &ast::OnConflict,
    params: &mut Vec<SqlType>,
) -> Result<OnConflict, SqlError> {
    let all = unique_indexes(cat, def)?;
    let arbiters = match &on.conflict_target {
        None => {
            if matches!(on.action, ast::OnConflictAction::DoUpdate(_)) {
                return Err(SqlError::new(
                    SqlState::SYNTAX_ERROR,
                    "ON CONFLICT DO UPDATE requires inference specification or constraint name",
                ));
            }
            all
        }
        Some(ast::ConflictTarget::Columns { columns, predicate: None }) => vec![infer(all, def, columns)?],
        Some(ast::ConflictTarget::OnConstraint(name)) => {
            let n = object_name(name)?;
            let found = all.into_iter().find(|a| a.name == n);
            vec![found.ok_or_else(|| {
                SqlError::new(
                    SqlState::UNDEFINED_OBJECT,
                    format!("constraint \"{n}\" for table \"{table}\" does not exist"),
                )
            })?]
        }
        Some(other) => return Err(SqlError::unsupported(&format!("ON CONFLICT {other}"))),
    };
    let action = match &on.action {
        ast::OnConflictAction::DoNothing => ConflictAction::Nothing,
        ast::OnConflictAction::DoUpdate(u) => {
            let mut scope = Scope::default();
            push_table(&mut scope, qual, def);
            push_table(&mut scope, "excluded", def);
            let mut assignments = Vec::new();
            for a in &u.assignments {
                let col = match &a.target {
                    ast::AssignmentTarget::ColumnName(n) => object_name(n)?,
                    ast::AssignmentTarget::Tuple(_) => return Err(SqlError::unsupported("SET (a, b) = …")),
                };
                let k = def.names.iter().position(|n| *n == col).ok_or_else(|| {
                    SqlError::new(
                        SqlState::UNDEFINED_COLUMN,
                        format!("column \"{col}\" of relation \"{qual}\" does not exist"),
                    )
                })?;
                let (x, t) = compiler(&scope, params, None).compile(&a.value, Some(def.sql_types[k]))?;
                super::check_assignable(t, def.sql_types[k], &col)?;
                assignments.push((k, x));
            }
            let selection = u.selection.as_ref().map(|w| compiler(&scope, params, None).boolean(w)).transpose()?;
            ConflictAction::Update { assignments, selection }
        }
    };
    if arbiters.is_empty() && matches!(action, ConflictAction::Update { .. }) {
        return Err(no_arbiter());
    }
    Ok(OnConflict { arbiters, action })
}

/// What one upsert statement did so far.
struct Progress {
    count: u64,
    returned: Vec<Vec<Datum>>,
    /// Arbiter keys the command inserted or updated (`21000`).
    touched: HashSet<Vec<String>>,
    /// The rows written, kept when the table has foreign keys to check.
    written: Option<crate::fk::Written>,
}

impl OnConflict {
    /// Runs the upsert of `rows` into `table` (whose types are `types`,
    /// `sql_types`): rows inserted or updated, and their `RETURNING` rows.
    /// `fk_child`: the table's id when it has foreign keys, checked on the
    /// rows inserted and updated at the end.
    pub(super) fn run(
        &self,
        table: &str,
        (sql_types, types): (&[SqlType], &[ColumnType]),
        rows: Vec<Vec<Value>>,
        returning: Option<&Returning>,
        fk_child: Option<u32>,
        run: &mut Run<'_>,
    ) -> Result<(u64, Vec<Vec<Datum>>), SqlError> {
        let t = Target { table, sql_types, types, returning };
        let written = fk_child.map(|_| crate::fk::Written::default());
        let mut p = Progress { count: 0, returned: Vec::new(), touched: HashSet::new(), written };
        for row in rows {
            self.one(&t, row, run, &mut p)?;
        }
        if let (Some(id), Some(w)) = (fk_child, &p.written) {
            crate::fk::after_statement(run, id, w)?;
        }
        Ok((p.count, p.returned))
    }

    /// One proposed row: the loop of the module header.
    fn one(&self, t: &Target<'_>, row: Vec<Value>, run: &mut Run<'_>, p: &mut Progress) -> Result<(), SqlError> {
        let keys: Vec<Option<Vec<Value>>> =
            self.arbiters.iter().map(|a| a.key_of(&row, &mut run.env)).collect::<Result<_, _>>()?;
        for _ in 0..UPSERT_RETRIES_MAX {
            for (a, key) in self.arbiters.iter().zip(&keys) {
                let Some(key) = key else { continue };
                let found = match &self.action {
                    ConflictAction::Nothing => {
                        let (q, params, by_key) = a.probe(t.table, key);
                        let s = run.session()?;
                        if by_key {
                            !s.select_by_key(&q, &params)?.is_empty()
                        } else {
                            !s.query(&q, &params)?.is_empty()
                        }
                    }
                    ConflictAction::Update { .. } => {
                        if p.touched.contains(&key_text(key)) {
                            return Err(SqlError::new(
                                SqlState::CARDINALITY_VIOLATION,
                                "ON CONFLICT DO UPDATE command cannot affect row a second time",
                            ));
                        }
                        self.try_update(t, (a, key), &row, run, p)?
                    }
                };
                if found {
                    return Ok(());
                }
            }
            match run.session()?.insert_speculative(t.table, &row) {
                Ok(_) => {
                    p.count += 1;
                    if let Some(w) = &mut p.written {
                        w.inserted.push(row.clone());
                    }
                    if matches!(self.action, ConflictAction::Update { .. }) {
                        p.touched.extend(keys.iter().flatten().map(|k| key_text(k)));
                    }
                    if let Some(ret) = t.returning {
                        p.returned.push(ret.project(&row, &mut run.env)?);
                    }
                    return Ok(());
                }
                Err(e) => {
                    let e = SqlError::from(e);
                    let on_arbiter = e.code == SqlState::UNIQUE_VIOLATION
                        && e.object
                            .as_ref()
                            .and_then(|o| o.constraint.as_ref())
                            .is_some_and(|c| self.arbiters.iter().any(|a| a.name == *c));
                    if !on_arbiter {
                        return Err(e);
                    }
                    // The key's row committed after this transaction's
                    // snapshot (the probe did not see it): PostgreSQL's
                    // `ExecCheckTupleVisible` answers `40001`.
                    if run.session()?.isolation() == turnstile_engine::mvcc::IsolationLevel::RepeatableRead {
                        return Err(SqlError::new(
                            SqlState::SERIALIZATION_FAILURE,
                            "could not serialize access due to concurrent update",
                        ));
                    }
                }
            }
        }
        Err(SqlError::new(
            SqlState::SERIALIZATION_FAILURE,
            format!("ON CONFLICT: the key kept being taken and given back ({UPSERT_RETRIES_MAX} tries)"),
        ))
    }

    /// `DO UPDATE`'s probe on arbiter `a`: updates the row holding the
    /// proposed key, if there is one. Whether one was found (updated, or
    /// left alone by the `WHERE`).
    fn try_update(
        &self,
        t: &Target<'_>,
        (a, key): (&Arbiter, &[Value]),
        row: &[Value],
        run: &mut Run<'_>,
        p: &mut Progress,
    ) -> Result<bool, SqlError> {
        let ConflictAction::Update { assignments, selection } = &self.action else { return Ok(false) };
        let proposed: Vec<Datum> = row.iter().map(Datum::from_engine).collect();
        let (q, params, _) = a.probe(t.table, key);
        let (mut found, mut updated, mut failure, mut old) = (false, None, None, None);
        // The engine session is lent to the update; the callback's
        // expressions run without it.
        let session = run.env.session.take().ok_or_else(super::no_session)?;
        let env = &mut run.env;
        let n = session.update_rows(&q, &params, &mut |existing| {
            found = true;
            old = Some(existing.to_vec());
            let out = (|| -> Result<Option<Vec<Value>>, SqlError> {
                let mut both: Vec<Datum> = existing.iter().map(Datum::from_engine).collect();
                both.extend(proposed.iter().cloned());
                if let Some(w) = selection {
                    if !w.test(&both, env)? {
                        return Ok(None);
                    }
                }
                let mut new = existing.to_vec();
                for (k, x) in assignments {
                    new[*k] = x.eval(&both, env)?.cast(t.sql_types[*k])?.to_engine(t.types[*k])?;
                }
                Ok(Some(new))
            })();
            out.inspect(|r| updated.clone_from(r)).map_err(|e| {
                failure = Some(e);
                turnstile_engine::EngineError::CallbackFailed
            })
        });
        run.env.session = Some(session);
        if let Some(e) = failure {
            return Err(e);
        }
        if let (Some(new), true) = (updated, n? > 0) {
            p.count += 1;
            if let (Some(w), Some(old)) = (&mut p.written, old) {
                w.updated.push((old, new.clone()));
            }
            if let Some(k) = a.key_of(&new, &mut run.env)? {
                p.touched.insert(key_text(&k));
            }
            if let Some(ret) = t.returning {
                p.returned.push(ret.project(&new, &mut run.env)?);
            }
        }
        Ok(found)
    }
}

/// The table an upsert writes, as its rows are typed, and its `RETURNING`.
struct Target<'a> {
    table: &'a str,
    sql_types: &'a [SqlType],
    types: &'a [ColumnType],
    returning: Option<&'a Returning>,
}
