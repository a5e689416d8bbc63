//! Utility statements: everything that is not a query or DML — `VACUUM`,
//! `ANALYZE`, `CHECKPOINT`, `LOCK`, `PREPARE`/`EXECUTE`, `DROP`, `TRUNCATE`…

use crate::command::stmt_kind;
use crate::error::{Severity, SqlError};
use crate::expr;
use crate::expr::{object_name, parse_type_name, Compiler, EvalEnv, Scope};
use crate::param::{typed_params, Param};
use crate::parse::PreStmt;
use crate::session::{SqlSession, TxStatus};
use crate::statement::Outcome;
use crate::value::SqlType;
use sqlparser::ast;
use std::sync::Arc;
use turnstile_lock::SqlState;
use turnstile_lock::{LockMode, LockTag, Wait};

pub(crate) fn lock_mode(m: Option<&ast::LockTableMode>) -> LockMode {
    match m {
        None | Some(ast::LockTableMode::AccessExclusive) => LockMode::AccessExclusive,
        Some(ast::LockTableMode::AccessShare) => LockMode::AccessShare,
        Some(ast::LockTableMode::RowShare) => LockMode::RowShare,
        Some(ast::LockTableMode::RowExclusive) => LockMode::RowExclusive,
        Some(ast::LockTableMode::ShareUpdateExclusive) => LockMode::ShareUpdateExclusive,
        Some(ast::LockTableMode::Share) => LockMode::Share,
        Some(ast::LockTableMode::ShareRowExclusive) => LockMode::ShareRowExclusive,
        Some(ast::LockTableMode::Exclusive) => LockMode::Exclusive,
    }
}

pub(crate) fn lock_error(e: turnstile_lock::LockError, name: &str, wait: Wait) -> SqlError {
    SqlError::from_lock(&e, (wait == Wait::NoWait).then_some(name))
}

impl SqlSession {
    /// Locks table `name` in `mode`, and its partitions too when
    /// `partitions` (`LOCK TABLE name`; `LOCK TABLE ONLY name` locks the
    /// table alone).
    pub(crate) fn lock_with_partitions(
        &mut self,
        name: &str,
        mode: LockMode,
        wait: Wait,
        partitions: bool,
    ) -> Result<(), SqlError> {
        let engine = Arc::clone(self.es.engine());
        let db = self.es.database();
        let rel = engine
            .catalog()
            .relation(db, name)
            .map_err(|_| SqlError::new(SqlState::UNDEFINED_TABLE, format!("relation \"{name}\" does not exist")))?;
        if rel.index.is_some() {
            return Err(SqlError::new(SqlState::WRONG_OBJECT_TYPE, format!("\"{name}\" is not a table")));
        }
        self.es.backend_mut().lock(LockTag::relation(db, rel.id), mode, wait).map_err(|e| lock_error(e, name, wait))?;
        let parts: Vec<u32> = engine.catalog().snapshot().partitions_of(rel.id).map(|p| p.id).collect();
        for p in parts.into_iter().filter(|_| partitions) {
            self.es.backend_mut().lock(LockTag::relation(db, p), mode, wait).map_err(|e| lock_error(e, name, wait))?;
        }
        Ok(())
    }

    pub(crate) fn run_pre(&mut self, p: &PreStmt) -> Result<Outcome, SqlError> {
        match p {
            PreStmt::Checkpoint => {
                self.es.engine().flush()?;
                Self::command("CHECKPOINT")
            }
            PreStmt::Vacuum { full, analyze, tables } => {
                if self.tx != TxStatus::Idle {
                    return Err(SqlError::new(
                        SqlState::ACTIVE_SQL_TRANSACTION,
                        "VACUUM cannot run inside a transaction block",
                    ));
                }
                // The system catalogs are computed, not stored: nothing to
                // vacuum (vacuumdb names each of them).
                let stored: Vec<&String> = tables.iter().filter(|t| !crate::catalog::is_system_name(t)).collect();
                if !tables.is_empty() && stored.is_empty() {
                    return Self::command("VACUUM");
                }
                let targets: Vec<Option<&str>> =
                    if stored.is_empty() { vec![None] } else { stored.iter().map(|t| Some(t.as_str())).collect() };
                for t in targets {
                    self.es.vacuum(t, *full)?;
                    if *analyze {
                        self.es.analyze(t)?;
                    }
                }
                Self::command("VACUUM")
            }
            PreStmt::Analyze(tables) => {
                let targets: Vec<Option<&str>> =
                    if tables.is_empty() { vec![None] } else { tables.iter().map(|t| Some(t.as_str())).collect() };
                for t in targets {
                    self.es.analyze(t)?;
                }
                Self::command("ANALYZE")
            }
            PreStmt::Reindex { target, name } => self.reindex(*target, name.as_deref()),
            PreStmt::CreateDatabase(c) => {
                if let Some(t) = &c.template {
                    crate::create_database::check_template(t, self.es.engine().catalog().database(t).is_ok())?;
                }
                self.create_database_named(&c.name, false)
            }
            PreStmt::CopyFrom { table, columns, file, options } => {
                self.copy_from(table, columns, file.as_deref(), options)
            }
            PreStmt::CopyTo { query, file, options } => self.copy_to(query, file.as_deref(), options),
            PreStmt::AlterSequence { name, if_exists, options } => self.alter_sequence(name, *if_exists, options),
            PreStmt::AlterTableNamingSequence { alter, sequence } => self.alter_table_naming(alter, Some(sequence)),
            PreStmt::AttachIndex { parent, index } => {
                self.es.attach_index(parent, index)?;
                Self::command("ALTER INDEX")
            }
        }
    }

    pub(crate) fn run_utility(&mut self, s: &ast::Statement) -> Result<Outcome, SqlError> {
        use ast::Statement as S;
        match s {
            S::Set(set) => self.run_set(set),
            S::Reset(r) => self.run_reset(&r.reset),
            S::CreateTable(ct) => self.create_table(ct),
            S::CreateIndex(ci) => self.create_index(ci),
            S::CreateSequence { temporary: false, if_not_exists, name, sequence_options } => {
                self.create_sequence(name, *if_not_exists, sequence_options)
            }
            S::AlterTable(at) => self.alter_table(at),
            S::Drop { object_type, if_exists, names, cascade, .. } => {
                self.drop_objects(object_type, *if_exists, names, *cascade)
            }
            S::CreateDatabase { db_name, if_not_exists, .. } => self.create_database(db_name, *if_not_exists),
            S::Lock(l) => self.lock_tables(l),
            S::Prepare { name, data_types, statement } => self.prepare_named(name, data_types, statement),
            S::Deallocate { name, .. } => self.deallocate(&expr::ident_name(name)),
            // turnstile has no SQL cursors (DECLARE is refused), so there is
            // never one to close: CLOSE ALL closes none, and a named one does
            // not exist (asyncpg's connection reset runs CLOSE ALL).
            S::Close { cursor: ast::CloseCursor::All } => Self::command("CLOSE CURSOR ALL"),
            S::Close { cursor: ast::CloseCursor::Specific { name } } => Err(SqlError::new(
                SqlState::INVALID_CURSOR_NAME,
                format!("cursor \"{}\" does not exist", expr::ident_name(name)),
            )),
            // Nor LISTEN: a session listens to no channel, and UNLISTEN of a
            // channel not listened to does nothing, as in PostgreSQL.
            S::UNLISTEN { .. } => Self::command("UNLISTEN"),
            S::Truncate(t) => {
                let names = t.table_names.iter().map(|n| object_name(&n.name)).collect::<Result<Vec<_>, _>>()?;
                let refs: Vec<&str> = names.iter().map(String::as_str).collect();
                self.es.truncate(&refs)?;
                Self::command("TRUNCATE TABLE")
            }
            other => Err(SqlError::unsupported(&stmt_kind(other))),
        }
    }
}

impl SqlSession {
    /// `EXECUTE name (parameters)`: the prepared statement with the
    /// parameters evaluated (they may use this statement's own `$n`).
    pub(crate) fn execute_prepared(
        &mut self,
        name: &str,
        parameters: &[ast::Expr],
        params: &[Param],
        formats: &[i16],
    ) -> Result<Outcome, SqlError> {
        let st = self.prepared.get(name).cloned().ok_or_else(|| {
            SqlError::new(SqlState::INVALID_SQL_STATEMENT_NAME, format!("prepared statement \"{name}\" does not exist"))
        })?;
        let outer_params = typed_params(&[], params)?;
        let empty = Scope::default();
        let mut vals = Vec::new();
        for (i, p) in parameters.iter().enumerate() {
            let hint = st.inner.param_types.get(i).and_then(|t| SqlType::from_oid(*t));
            let mut ptypes = Vec::new();
            let (x, t) = Compiler { scope: &empty, params: &mut ptypes, aggs: None }.compile(p, hint)?;
            let d = x.eval(
                &[],
                &mut EvalEnv { params: &outer_params, aggs: &[], services: &mut self.ctx, outer: &[], session: None },
            )?;
            vals.push(Param::from(d.to_text(t)));
        }
        self.dispatch(&st, &vals, formats)
    }
}

impl SqlSession {
    /// `DROP TABLE|INDEX|DATABASE [IF EXISTS] names`.
    fn drop_objects(
        &mut self,
        object_type: &ast::ObjectType,
        if_exists: bool,
        names: &[ast::ObjectName],
        cascade: bool,
    ) -> Result<Outcome, SqlError> {
        match object_type {
            ast::ObjectType::Table | ast::ObjectType::Index => {
                let kind = if *object_type == ast::ObjectType::Table { "table" } else { "index" };
                // Every name is looked up before any is dropped, as
                // PostgreSQL does: one dropped with an earlier one (a
                // partition with its parent) is then gone, not missing.
                let mut present = Vec::with_capacity(names.len());
                for n in names {
                    let name = object_name(n)?;
                    let exists = self.es.engine().catalog().relation(self.es.database(), &name).is_ok();
                    if !exists {
                        if if_exists {
                            self.notice(
                                Severity::Notice,
                                SqlState::SUCCESSFUL_COMPLETION,
                                format!("{kind} \"{name}\" does not exist, skipping"),
                            );
                            continue;
                        }
                        return Err(SqlError::new(
                            SqlState::UNDEFINED_TABLE,
                            format!("{kind} \"{name}\" does not exist"),
                        ));
                    }
                    present.push(name);
                }
                for name in present {
                    if self.es.engine().catalog().relation(self.es.database(), &name).is_err() {
                        continue;
                    }
                    if kind == "table" {
                        let all = names.iter().map(object_name).collect::<Result<Vec<_>, _>>()?;
                        self.drop_referencing_keys(&name, &all, cascade)?;
                    }
                    self.es.drop_relation(&name)?;
                    if kind == "table" {
                        self.drop_owned_sequences(&name)?;
                    }
                }
                Self::command(if kind == "table" { "DROP TABLE" } else { "DROP INDEX" })
            }
            ast::ObjectType::Sequence => self.drop_sequences(names, if_exists),
            ast::ObjectType::Database => {
                if self.tx != TxStatus::Idle {
                    return Err(SqlError::new(
                        SqlState::ACTIVE_SQL_TRANSACTION,
                        "DROP DATABASE cannot run inside a transaction block",
                    ));
                }
                for n in names {
                    let name = object_name(n)?;
                    match self.es.drop_database(&name).map_err(SqlError::from) {
                        Ok(()) => {}
                        Err(e) if e.code == SqlState::INVALID_CATALOG_NAME && if_exists => {
                            self.notice(
                                Severity::Notice,
                                SqlState::SUCCESSFUL_COMPLETION,
                                format!("database \"{name}\" does not exist, skipping"),
                            );
                        }
                        Err(e) => return Err(e),
                    }
                }
                Self::command("DROP DATABASE")
            }
            other => Err(SqlError::unsupported(&format!("DROP {other}"))),
        }
    }

    /// `CREATE DATABASE [IF NOT EXISTS] name`.
    fn create_database(&mut self, db_name: &ast::ObjectName, if_not_exists: bool) -> Result<Outcome, SqlError> {
        self.create_database_named(&object_name(db_name)?, if_not_exists)
    }

    fn create_database_named(&mut self, name: &str, if_not_exists: bool) -> Result<Outcome, SqlError> {
        if self.tx != TxStatus::Idle {
            return Err(SqlError::new(
                SqlState::ACTIVE_SQL_TRANSACTION,
                "CREATE DATABASE cannot run inside a transaction block",
            ));
        }
        match self.es.create_database(name).map_err(SqlError::from) {
            Ok(_) => Self::command("CREATE DATABASE"),
            Err(e) if e.code == SqlState::DUPLICATE_DATABASE && if_not_exists => {
                self.notice(
                    Severity::Notice,
                    SqlState::DUPLICATE_DATABASE,
                    format!("database \"{name}\" already exists, skipping"),
                );
                Self::command("CREATE DATABASE")
            }
            Err(e) => Err(e),
        }
    }

    /// `LOCK TABLE names IN mode MODE [NOWAIT]`: inside a block only.
    fn lock_tables(&mut self, l: &ast::Lock) -> Result<Outcome, SqlError> {
        if self.tx == TxStatus::Idle {
            return Err(SqlError::new(
                SqlState::NO_ACTIVE_SQL_TRANSACTION,
                "LOCK TABLE can only be used in transaction blocks",
            ));
        }
        let mode = lock_mode(l.lock_mode.as_ref());
        let wait = if l.nowait { Wait::NoWait } else { Wait::Block };
        for t in &l.tables {
            let name = expr::object_name(&t.name)?;
            self.lock_with_partitions(&name, mode, wait, !t.only)?;
        }
        Self::command("LOCK TABLE")
    }

    /// `PREPARE name [(types)] AS statement`.
    fn prepare_named(
        &mut self,
        name: &ast::Ident,
        data_types: &[ast::DataType],
        statement: &ast::Statement,
    ) -> Result<Outcome, SqlError> {
        let n = expr::ident_name(name);
        if self.prepared.contains_key(&n) {
            return Err(SqlError::new(
                SqlState::DUPLICATE_PREPARED_STATEMENT,
                format!("prepared statement \"{n}\" already exists"),
            ));
        }
        let types = data_types
            .iter()
            .map(|t| parse_type_name(&t.to_string()).map(|t| t.oid()))
            .collect::<Result<Vec<_>, _>>()?;
        let text = statement.to_string();
        let st = self.make_statement(&text, &text, 0, &types, true)?;
        self.prepared.insert(n, st);
        Self::command("PREPARE")
    }
}
