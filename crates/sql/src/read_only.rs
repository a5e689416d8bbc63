//! Read-only transactions: `BEGIN READ ONLY`, `SET TRANSACTION READ
//! ONLY`, `SET SESSION CHARACTERISTICS AS TRANSACTION …` and
//! `default_transaction_read_only`. A read-only transaction refuses every
//! statement that writes — INSERT, UPDATE, DELETE, `SELECT … FOR UPDATE`,
//! `COPY FROM`, DDL — with `25006`, before it runs, as PostgreSQL's
//! `PreventCommandIfReadOnly` does.
//!
//! The transaction's mode is the setting `transaction_read_only`, set
//! `LOCAL` when a block begins (so the block's end restores it); an
//! implicit transaction takes `default_transaction_read_only`.

use crate::command::Command;
use crate::error::SqlError;
use crate::parse::PreStmt;
use crate::session::{SqlSession, TxStatus};
use crate::statement::Outcome;
use sqlparser::ast;
use turnstile_lock::SqlState;

fn on_off(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

/// Whether `command` writes, and its name for the error.
fn writes(command: &Command) -> Option<String> {
    use ast::Statement as S;
    match command {
        Command::Insert { .. } => Some("INSERT".into()),
        Command::Update { .. } => Some("UPDATE".into()),
        Command::Delete { .. } => Some("DELETE".into()),
        Command::Select { locking: Some(_), .. } => Some("SELECT FOR UPDATE".into()),
        Command::Pre(PreStmt::CopyFrom { .. }) => Some("COPY FROM".into()),
        Command::Pre(PreStmt::Vacuum { .. }) => Some("VACUUM".into()),
        Command::Pre(PreStmt::Reindex { .. }) => Some("REINDEX".into()),
        Command::Pre(PreStmt::CreateDatabase(_)) => Some("CREATE DATABASE".into()),
        Command::Pre(PreStmt::AlterTableNamingSequence { .. }) => Some("ALTER TABLE".into()),
        Command::Pre(PreStmt::AlterSequence { .. }) => Some("ALTER SEQUENCE".into()),
        Command::Utility(s) => match &**s {
            S::CreateTable(_) => Some("CREATE TABLE".into()),
            S::CreateIndex(_) => Some("CREATE INDEX".into()),
            S::AlterTable { .. } => Some("ALTER TABLE".into()),
            S::Drop { .. } => Some("DROP".into()),
            S::Truncate(_) => Some("TRUNCATE TABLE".into()),
            S::CreateDatabase { .. } => Some("CREATE DATABASE".into()),
            _ => None,
        },
        _ => None,
    }
}

impl SqlSession {
    /// Whether the current (or next implicit) transaction is read-only.
    pub(crate) fn read_only(&self) -> bool {
        let explicit = self.tx != TxStatus::Idle && !self.implicit;
        let name = if explicit { "transaction_read_only" } else { "default_transaction_read_only" };
        self.ctx.get(name).as_deref() == Some("on")
    }

    /// `25006` for a statement that writes in a read-only transaction.
    pub(crate) fn check_read_only(&self, command: &Command) -> Result<(), SqlError> {
        match writes(command) {
            Some(what) if self.read_only() => Err(SqlError::new(
                SqlState::READ_ONLY_SQL_TRANSACTION,
                format!("cannot execute {what} in a read-only transaction"),
            )),
            _ => Ok(()),
        }
    }

    /// A block just begun takes `READ ONLY`/`READ WRITE` if given, else
    /// `default_transaction_read_only`.
    pub(crate) fn begin_access_mode(&mut self, read_only: Option<bool>) -> Result<(), SqlError> {
        if self.tx == TxStatus::Idle {
            return Ok(());
        }
        let default = self.ctx.get("default_transaction_read_only").as_deref() == Some("on");
        self.ctx.set_scoped("transaction_read_only", on_off(read_only.unwrap_or(default)), true)?;
        Ok(())
    }

    /// `SET TRANSACTION READ ONLY | READ WRITE` inside a block (outside one
    /// `set_transaction_isolation` has warned already).
    pub(crate) fn set_transaction_access_mode(&mut self, read_only: Option<bool>) -> Result<(), SqlError> {
        if let (Some(ro), true) = (read_only, self.tx != TxStatus::Idle) {
            self.ctx.set_scoped("transaction_read_only", on_off(ro), true)?;
        }
        Ok(())
    }

    /// `SET SESSION CHARACTERISTICS AS TRANSACTION modes`: the defaults of
    /// later transactions (`default_transaction_isolation`,
    /// `default_transaction_read_only`).
    pub(crate) fn set_session_characteristics(&mut self, modes: &[ast::TransactionMode]) -> Result<Outcome, SqlError> {
        for m in modes {
            match m {
                ast::TransactionMode::IsolationLevel(l) => {
                    let level = crate::command::isolation_named(&l.to_string())?;
                    let name = match level {
                        turnstile_engine::mvcc::IsolationLevel::ReadCommitted => "read committed",
                        turnstile_engine::mvcc::IsolationLevel::RepeatableRead => "repeatable read",
                    };
                    self.ctx.set_scoped("default_transaction_isolation", name, false)?;
                }
                ast::TransactionMode::AccessMode(a) => {
                    let ro = matches!(a, ast::TransactionAccessMode::ReadOnly);
                    self.ctx.set_scoped("default_transaction_read_only", on_off(ro), false)?;
                }
            }
        }
        Self::command("SET")
    }
}
