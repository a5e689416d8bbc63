//! How a transaction block ends: `COMMIT`, `ROLLBACK`, and the abort at an
//! error (PostgreSQL's `AbortTransaction`).

use crate::error::{Severity, SqlError};
use crate::session::{SqlSession, TxStatus};
use crate::statement::Outcome;
use crate::value::now_timestamp;
use std::collections::HashMap;
use turnstile_engine::mvcc::IsolationLevel;
use turnstile_lock::SqlState;

impl SqlSession {
    /// A statement, or a protocol message, failed: inside a transaction
    /// block the transaction is aborted now, as PostgreSQL's
    /// `AbortTransaction` does — its writes undone through the undo log,
    /// its row and heavyweight locks released, its settings restored. The
    /// block stays failed (`25P02`) until `ROLLBACK` (or `COMMIT`, which
    /// answers `ROLLBACK`). Outside a block the failed statement was already
    /// undone by the engine.
    ///
    /// With savepoints set, only the innermost one's work is aborted now
    /// (PostgreSQL's `AbortSubTransaction`: its writes undone, the locks
    /// taken since it released); `ROLLBACK TO` a savepoint then clears the
    /// failure, and `ROLLBACK` aborts the rest.
    pub fn statement_failed(&mut self) {
        if self.tx != TxStatus::InBlock {
            return;
        }
        if self.implicit {
            // The implicit block ends with its error: everything since the
            // last `Sync` is undone, and the session is idle again.
            self.implicit = false;
            self.tx = TxStatus::Idle;
            self.abort_engine_transaction();
            return;
        }
        self.tx = TxStatus::Failed;
        if self.savepoints.is_empty() {
            self.abort_engine_transaction();
            return;
        }
        let last = self.savepoints.len() - 1;
        self.undo_to_savepoint(last);
    }

    /// Undoes the work since savepoint `index` and releases the locks taken
    /// since; warns about what could not be undone.
    fn undo_to_savepoint(&mut self, index: usize) {
        let report = self.es.rollback_to(&self.savepoints[index].1);
        self.warn_kept(report);
    }

    /// The warnings of a rollback: DDL that stays, writes the full undo log
    /// could not record, an error while undoing.
    fn warn_kept(&mut self, report: turnstile_engine::Result<turnstile_engine::RollbackReport>) {
        match report {
            Ok(report) => {
                for ddl in &report.kept_ddl {
                    self.notice(
                        Severity::Warning,
                        SqlState::WARNING,
                        format!("{ddl} is not transactional in turnstile: it stays"),
                    );
                }
                if report.kept_writes > 0 {
                    self.notice(
                        Severity::Warning,
                        SqlState::WARNING,
                        format!("{} writes could not be restored: they stay", report.kept_writes),
                    );
                }
            }
            Err(e) => self.notice(
                Severity::Warning,
                SqlState::INTERNAL_ERROR,
                format!("rollback could not undo every write: {e}"),
            ),
        }
    }

    /// An extended-query `Execute` of `stmt`: outside a transaction block,
    /// a statement that writes or locks rows opens the implicit block that
    /// the next `Sync` commits ([`SqlSession::end_implicit`]), so that the
    /// statements of one pipeline (or of an `executemany` batch) commit or
    /// roll back together, as in PostgreSQL. Reads outside a block need no
    /// transaction of their own; a later write of the same pipeline opens
    /// it.
    pub fn begin_implicit(&mut self, stmt: &crate::statement::Statement) -> Result<(), SqlError> {
        use crate::command::Command;
        if self.tx != TxStatus::Idle {
            return Ok(());
        }
        let writes = matches!(
            stmt.inner.command,
            Command::Insert { .. }
                | Command::Update { .. }
                | Command::Delete { .. }
                | Command::Select { locking: Some(_), .. }
        );
        if !writes {
            return Ok(());
        }
        self.open_implicit()
    }

    /// Opens the implicit block (the session is idle, outside a block).
    pub(crate) fn open_implicit(&mut self) -> Result<(), SqlError> {
        debug_assert_eq!(self.tx, TxStatus::Idle);
        let level = self.ctx.gucs.default_transaction_isolation.level()?;
        self.es.begin_with(level)?;
        self.tx = TxStatus::InBlock;
        self.implicit = true;
        self.ctx.xact = Some(HashMap::new());
        self.ctx.stmt_ts = now_timestamp();
        Ok(())
    }

    /// `Sync`: commits the implicit block, if one is open.
    pub fn end_implicit(&mut self) -> Result<(), SqlError> {
        if !self.implicit {
            return Ok(());
        }
        self.implicit = false;
        self.tx = TxStatus::Idle;
        self.savepoints.clear();
        self.ctx.end_xact(true);
        Ok(self.es.commit()?)
    }

    /// `SAVEPOINT name` (`25P01` outside a transaction block). A name may
    /// be reused: the newest savepoint of a name is the one found.
    pub(crate) fn savepoint(&mut self, name: &str) -> Result<Outcome, SqlError> {
        if self.tx == TxStatus::Idle || self.implicit {
            return Err(no_block("SAVEPOINT"));
        }
        let sp = self.es.savepoint()?;
        self.savepoints.push((name.to_owned(), sp));
        Self::command("SAVEPOINT")
    }

    /// `RELEASE [SAVEPOINT] name`: forgets the savepoint and every later
    /// one, keeping their work.
    pub(crate) fn release_savepoint(&mut self, name: &str) -> Result<Outcome, SqlError> {
        if self.tx == TxStatus::Idle {
            return Err(no_block("RELEASE SAVEPOINT"));
        }
        let index = self.find_savepoint(name)?;
        self.savepoints.truncate(index);
        Self::command("RELEASE")
    }

    /// `ROLLBACK TO [SAVEPOINT] name`: undoes the work since the savepoint,
    /// releases the locks taken since, forgets the later savepoints (the
    /// savepoint itself stays) and clears a failed block's failure.
    pub(crate) fn rollback_to_savepoint(&mut self, name: &str) -> Result<Outcome, SqlError> {
        if self.tx == TxStatus::Idle {
            return Err(no_block("ROLLBACK TO SAVEPOINT"));
        }
        if !self.es.in_transaction() {
            // Failed with no savepoint set: the transaction is gone.
            return Err(SqlError::new(
                SqlState::INVALID_SAVEPOINT_SPECIFICATION,
                format!("savepoint \"{name}\" does not exist"),
            ));
        }
        let index = self.find_savepoint(name)?;
        self.savepoints.truncate(index + 1);
        self.undo_to_savepoint(index);
        self.tx = TxStatus::InBlock;
        Self::command("ROLLBACK")
    }

    /// The newest savepoint called `name` (`3B001` if none).
    fn find_savepoint(&self, name: &str) -> Result<usize, SqlError> {
        self.savepoints.iter().rposition(|(n, _)| n == name).ok_or_else(|| {
            SqlError::new(SqlState::INVALID_SAVEPOINT_SPECIFICATION, format!("savepoint \"{name}\" does not exist"))
        })
    }

    /// Undoes and ends the engine's transaction, restoring the block's
    /// settings; warns about what could not be undone.
    pub(crate) fn abort_engine_transaction(&mut self) {
        self.ctx.end_xact(false);
        self.savepoints.clear();
        if !self.es.in_transaction() {
            return;
        }
        let report = self.es.rollback();
        self.warn_kept(report);
    }

    pub(crate) fn end_transaction(&mut self, commit: bool) -> Result<Outcome, SqlError> {
        if self.implicit {
            // PostgreSQL ends an implicit block at COMMIT/ROLLBACK, with the
            // warning of a session outside a block.
            self.implicit = false;
            self.tx = TxStatus::Idle;
            if commit {
                self.savepoints.clear();
                self.ctx.end_xact(true);
                self.es.commit()?;
            } else {
                self.abort_engine_transaction();
            }
        }
        match self.tx {
            TxStatus::Idle => {
                self.notice(
                    Severity::Warning,
                    SqlState::NO_ACTIVE_SQL_TRANSACTION,
                    "there is no transaction in progress",
                );
                Self::command(if commit { "COMMIT" } else { "ROLLBACK" })
            }
            TxStatus::InBlock if commit => {
                self.tx = TxStatus::Idle;
                self.savepoints.clear();
                self.ctx.end_xact(true);
                self.es.commit()?;
                Self::command("COMMIT")
            }
            TxStatus::InBlock => {
                self.tx = TxStatus::Idle;
                self.abort_engine_transaction();
                Self::command("ROLLBACK")
            }
            // Aborted at the error already (back to the innermost
            // savepoint, if any: the rest goes now).
            TxStatus::Failed => {
                self.tx = TxStatus::Idle;
                self.abort_engine_transaction();
                Self::command("ROLLBACK")
            }
        }
    }

    /// `BEGIN` / `START TRANSACTION` (`start`): inside a block it only warns,
    /// as PostgreSQL does.
    pub(crate) fn begin(&mut self, start: bool, isolation: Option<IsolationLevel>) -> Result<Outcome, SqlError> {
        if self.implicit {
            // BEGIN inside an implicit block makes it a regular block, the
            // statements before it included (PostgreSQL's
            // `BeginTransactionBlock` in `TBLOCK_IMPLICIT_INPROGRESS`).
            self.implicit = false;
            if let Some(level) = isolation {
                self.es
                    .set_isolation(level)
                    .map_err(|e| SqlError::new(SqlState::ACTIVE_SQL_TRANSACTION, e.to_string()))?;
            }
            return Self::command(if start { "START TRANSACTION" } else { "BEGIN" });
        }
        if self.tx != TxStatus::Idle {
            self.notice(
                Severity::Warning,
                SqlState::ACTIVE_SQL_TRANSACTION,
                "there is already a transaction in progress",
            );
            return Self::command("BEGIN");
        }
        let level = match isolation {
            Some(l) => l,
            None => self.ctx.gucs.default_transaction_isolation.level()?,
        };
        self.es.begin_with(level)?;
        self.tx = TxStatus::InBlock;
        self.ctx.xact = Some(HashMap::new());
        self.ctx.stmt_ts = now_timestamp();
        Self::command(if start { "START TRANSACTION" } else { "BEGIN" })
    }
}

/// `25P01`: a savepoint statement outside a transaction block.
fn no_block(what: &str) -> SqlError {
    SqlError::new(SqlState::NO_ACTIVE_SQL_TRANSACTION, format!("{what} can only be used in transaction blocks"))
}

impl SqlSession {
    /// `SET TRANSACTION ISOLATION LEVEL …` (and `SET transaction_isolation`):
    /// inside a block, until its first query; outside one PostgreSQL warns
    /// and changes nothing.
    pub(crate) fn set_transaction_isolation(&mut self, level: Option<IsolationLevel>) -> Result<Outcome, SqlError> {
        if self.tx == TxStatus::Idle {
            self.notice(
                Severity::Warning,
                SqlState::NO_ACTIVE_SQL_TRANSACTION,
                "SET TRANSACTION can only be used in transaction blocks",
            );
            return Self::command("SET");
        }
        if let Some(level) = level {
            self.es.set_isolation(level).map_err(|e| SqlError::new(SqlState::ACTIVE_SQL_TRANSACTION, e.to_string()))?;
        }
        Self::command("SET")
    }

    /// The isolation level `SHOW transaction_isolation` prints.
    pub(crate) fn transaction_isolation(&self) -> String {
        if self.tx == TxStatus::Idle {
            self.ctx.gucs.default_transaction_isolation.name().to_owned()
        } else {
            self.es.isolation().name().to_owned()
        }
    }
}
