//! # turnstile-sql: SQL text → turnstile's engine
//!
//! The statements `pgbench`, `psql`, `createdb` and the seeds send, parsed
//! and run against [`turnstile_engine::Session`], in-process (no socket).
//! The wire protocol lives in `turnstile-server`, which maps [`Outcome`]s and
//! [`SqlError`]s to messages.
//!
//! Skeleton: every entry point answers `0A000` until implemented.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod error;

pub use error::{Notice, Severity, SqlError};

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use turnstile_engine::Engine;

/// One open data directory, shared by every connection.
#[derive(Clone, Debug)]
pub struct SqlEngine {
    engine: Arc<Engine>,
}

impl SqlEngine {
    /// Opens (creating if needed) `data_dir`; a new directory holds the
    /// database `postgres`.
    pub fn open(data_dir: &Path, config: turnstile_sync::Config) -> Result<SqlEngine, SqlError> {
        let engine = Engine::open(data_dir, config).map_err(SqlError::from_engine)?;
        Ok(SqlEngine { engine })
    }

    /// The engine underneath.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// Writes every dirty buffer and fsyncs (server shutdown, `CHECKPOINT`).
    pub fn flush(&self) -> Result<(), SqlError> {
        self.engine.flush().map_err(SqlError::from_engine)
    }
}

/// Cancels the statement (or lock wait) a session is running: it fails with
/// `57014`.
#[derive(Clone, Debug, Default)]
pub struct CancelHandle {
    flag: Arc<AtomicBool>,
}

impl CancelHandle {
    /// Requests cancellation of the running statement.
    pub fn cancel(&self) {
        self.flag.store(true, Ordering::Release);
    }
}

/// The transaction state reported in ReadyForQuery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxStatus {
    /// Not in a transaction block (`I`).
    Idle,
    /// In a transaction block (`T`).
    InBlock,
    /// In a failed transaction block (`E`).
    Failed,
}

/// A column of a result (RowDescription).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldInfo {
    /// Column name.
    pub name: String,
    /// OID of the table the column comes from, 0 if none.
    pub table_oid: u32,
    /// Attribute number in that table, 0 if none.
    pub column: i16,
    /// Type OID.
    pub type_oid: u32,
    /// Type length (-1 variable).
    pub type_len: i16,
    /// Type modifier (-1 none).
    pub type_modifier: i32,
}

/// A parsed (and, once executed, planned) statement. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Statement {
    inner: Arc<StatementInner>,
}

#[derive(Debug)]
struct StatementInner {
    param_types: Vec<u32>,
    fields: Option<Vec<FieldInfo>>,
    empty: bool,
    tag: String,
}

impl Statement {
    /// Parameter type OIDs (ParameterDescription).
    pub fn param_types(&self) -> &[u32] {
        &self.inner.param_types
    }

    /// Result columns (RowDescription); `None` = NoData.
    pub fn fields(&self) -> Option<&[FieldInfo]> {
        self.inner.fields.as_deref()
    }

    /// Whether the statement is empty (EmptyQueryResponse).
    pub fn is_empty(&self) -> bool {
        self.inner.empty
    }

    /// The command tag's first word (`SELECT`, `BEGIN`…).
    pub fn tag_hint(&self) -> &str {
        &self.inner.tag
    }
}

/// A COPY FROM STDIN in progress.
#[derive(Debug)]
pub struct CopyIn {
    columns: usize,
}

impl CopyIn {
    /// Columns each line holds.
    pub fn columns(&self) -> usize {
        self.columns
    }
}

/// What executing a statement produced.
#[derive(Debug)]
pub enum Outcome {
    /// A command without rows: its tag (`INSERT 0 1`, `BEGIN`…).
    Command {
        /// CommandComplete tag.
        tag: String,
    },
    /// Rows, in text format.
    Rows {
        /// RowDescription.
        fields: Vec<FieldInfo>,
        /// Values (None = NULL).
        rows: Vec<Vec<Option<String>>>,
        /// CommandComplete tag (`SELECT n`).
        tag: String,
    },
    /// EmptyQueryResponse.
    Empty,
    /// COPY FROM STDIN: feed [`SqlSession::copy_data`], then `copy_done`.
    CopyIn(CopyIn),
    /// COPY TO STDOUT: each line one CopyData.
    CopyOut {
        /// Columns per line.
        columns: usize,
        /// Lines, `\n` terminated.
        lines: Vec<Vec<u8>>,
        /// CommandComplete tag (`COPY n`).
        tag: String,
    },
}

/// One connection's session: lives on its backend thread.
#[derive(Debug)]
pub struct SqlSession {
    pid: i32,
    user: String,
    application_name: String,
    cancel: CancelHandle,
    notices: Vec<Notice>,
}

impl SqlSession {
    /// Opens a session on `database` (`3D000` if unknown; `53300` if every
    /// backend slot is taken).
    pub fn connect(
        e: &SqlEngine,
        database: &str,
        user: &str,
        application_name: &str,
        client_addr: Option<String>,
    ) -> Result<SqlSession, SqlError> {
        let _ = (e, database, client_addr);
        Ok(SqlSession {
            pid: 0,
            user: user.to_owned(),
            application_name: application_name.to_owned(),
            cancel: CancelHandle::default(),
            notices: Vec::new(),
        })
    }

    /// The backend's pid (`pg_backend_pid()`, BackendKeyData).
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// A handle that cancels this session's running statement.
    pub fn cancel_handle(&self) -> CancelHandle {
        self.cancel.clone()
    }

    /// ParameterStatus values to send after authentication.
    pub fn startup_parameters(&self) -> Vec<(String, String)> {
        vec![
            ("server_version".into(), "15.0 (turnstile)".into()),
            ("server_encoding".into(), "UTF8".into()),
            ("client_encoding".into(), "UTF8".into()),
            ("DateStyle".into(), "ISO, MDY".into()),
            ("integer_datetimes".into(), "on".into()),
            ("standard_conforming_strings".into(), "on".into()),
            ("TimeZone".into(), "UTC".into()),
            ("application_name".into(), self.application_name.clone()),
            ("is_superuser".into(), "on".into()),
            ("session_authorization".into(), self.user.clone()),
        ]
    }

    /// The transaction state for ReadyForQuery.
    pub fn transaction_status(&self) -> TxStatus {
        TxStatus::Idle
    }

    /// Parses a simple Query string into its statements.
    pub fn parse_batch(&mut self, sql: &str) -> Result<Vec<Statement>, SqlError> {
        let _ = sql;
        Err(SqlError::unsupported("SQL"))
    }

    /// Parses one statement for the extended protocol (Parse).
    pub fn prepare(&mut self, sql: &str, param_types: &[u32]) -> Result<Statement, SqlError> {
        let _ = (sql, param_types);
        Err(SqlError::unsupported("SQL"))
    }

    /// Executes a statement with text-format parameters.
    pub fn execute(&mut self, stmt: &Statement, params: &[Option<String>]) -> Result<Outcome, SqlError> {
        let _ = (stmt, params);
        Err(SqlError::unsupported("SQL"))
    }

    /// Feeds a CopyData chunk (lines may be split anywhere).
    pub fn copy_data(&mut self, copy: &mut CopyIn, data: &[u8]) -> Result<(), SqlError> {
        let _ = (copy, data);
        Err(SqlError::unsupported("COPY"))
    }

    /// Ends a COPY FROM STDIN (CopyDone): the tag `COPY n`.
    pub fn copy_done(&mut self, copy: CopyIn) -> Result<String, SqlError> {
        let _ = copy;
        Err(SqlError::unsupported("COPY"))
    }

    /// Aborts a COPY FROM STDIN (CopyFail).
    pub fn copy_fail(&mut self, copy: CopyIn, message: &str) -> SqlError {
        let _ = copy;
        SqlError::new("57014", format!("COPY from stdin failed: {message}"))
    }

    /// Notices produced by the last call.
    pub fn take_notices(&mut self) -> Vec<Notice> {
        std::mem::take(&mut self.notices)
    }

    /// ParameterStatus messages owed after a SET of a reported parameter.
    pub fn set_parameter_changes(&mut self) -> Vec<(String, String)> {
        Vec::new()
    }
}
