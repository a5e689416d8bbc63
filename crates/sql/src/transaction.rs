//! How a transaction block ends: `COMMIT`, `ROLLBACK`, and the abort at an
//! error (PostgreSQL's `AbortTransaction`).

use crate::command::isolation_named;
use crate::error::{Severity, SqlError};
use crate::session::{eng, SqlSession, TxStatus};
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
    pub fn statement_failed(&mut self) {
        if self.tx != TxStatus::InBlock {
            return;
        }
        self.tx = TxStatus::Failed;
        self.abort_engine_transaction();
    }

    /// Undoes and ends the engine's transaction, restoring the block's
    /// settings; warns about what could not be undone.
    pub(crate) fn abort_engine_transaction(&mut self) {
        self.ctx.end_xact(false);
        if !self.es.in_transaction() {
            return;
        }
        match self.es.rollback() {
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
                        format!("{} writes could not be undone (undo log full): they stay", report.kept_writes),
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

    pub(crate) fn end_transaction(&mut self, commit: bool) -> Result<Outcome, SqlError> {
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
                self.ctx.end_xact(true);
                eng(self.es.commit())?;
                Self::command("COMMIT")
            }
            TxStatus::InBlock => {
                self.tx = TxStatus::Idle;
                self.abort_engine_transaction();
                Self::command("ROLLBACK")
            }
            // Aborted at the error already: only the block ends.
            TxStatus::Failed => {
                self.tx = TxStatus::Idle;
                Self::command("ROLLBACK")
            }
        }
    }

    /// `BEGIN` / `START TRANSACTION` (`start`): inside a block it only warns,
    /// as PostgreSQL does.
    pub(crate) fn begin(&mut self, start: bool, isolation: Option<IsolationLevel>) -> Result<Outcome, SqlError> {
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
            None => isolation_named(&self.ctx.get("default_transaction_isolation").unwrap_or_default())?,
        };
        eng(self.es.begin_with(level))?;
        self.tx = TxStatus::InBlock;
        self.ctx.xact = Some(HashMap::new());
        self.ctx.stmt_ts = now_timestamp();
        Self::command(if start { "START TRANSACTION" } else { "BEGIN" })
    }
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
            self.ctx.get("default_transaction_isolation").unwrap_or_else(|| "read committed".into())
        } else {
            self.es.isolation().name().to_owned()
        }
    }
}
