//! Errors and notices with PostgreSQL's SQLSTATEs.

use std::fmt;
use turnstile_engine::EngineError;
use turnstile_lock::LockError;

/// The SQLSTATE of a lock-manager error.
pub fn lock_code(l: &LockError) -> &'static str {
    match l {
        LockError::OutOfLockMemory { .. } => "53200",
        LockError::TooManyBackends { .. } => "53300",
        LockError::NotAvailable { .. } | LockError::Timeout { .. } => "55P03",
        LockError::Deadlock { .. } => "40P01",
        LockError::Canceled { .. } => "57014",
        other if other.to_string().contains("cancel") => "57014",
        _ => "XX000",
    }
}

/// ErrorResponse severity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// The statement failed; the session goes on.
    Error,
    /// The session ends.
    Fatal,
}

impl Severity {
    /// PostgreSQL's name (`ERROR`, `FATAL`).
    pub const fn name(self) -> &'static str {
        match self {
            Severity::Error => "ERROR",
            Severity::Fatal => "FATAL",
        }
    }
}

/// A failed statement, as an ErrorResponse carries it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlError {
    /// ERROR or FATAL.
    pub severity: Severity,
    /// SQLSTATE.
    pub code: &'static str,
    /// Primary message.
    pub message: String,
    /// DETAIL.
    pub detail: Option<String>,
    /// HINT.
    pub hint: Option<String>,
    /// 1-based character position in the statement text.
    pub position: Option<u32>,
}

impl SqlError {
    /// An ERROR with `code` and `message`.
    pub fn new(code: &'static str, message: impl Into<String>) -> SqlError {
        SqlError { severity: Severity::Error, code, message: message.into(), detail: None, hint: None, position: None }
    }

    /// `0A000`: a valid construct turnstile does not support.
    pub fn unsupported(what: &str) -> SqlError {
        SqlError::new("0A000", format!("{what} is not supported by turnstile"))
    }

    /// Maps an engine error to its SQLSTATE.
    pub fn from_engine(e: EngineError) -> SqlError {
        let msg = e.to_string();
        let code = match &e {
            EngineError::State(s) if s.starts_with("no partition of") => "23514",
            _ if msg.contains("cancel") && e.sqlstate() == "XX000" => "57014",
            _ => e.sqlstate(),
        };
        let message = match code {
            "40P01" => "deadlock detected".to_owned(),
            "57014" => "canceling statement due to user request".to_owned(),
            _ if matches!(&e, EngineError::Lock(LockError::Timeout { .. })) => {
                "canceling statement due to lock timeout".to_owned()
            }
            _ => msg.clone(),
        };
        let mut err = SqlError::new(code, message);
        if err.message != msg {
            err.detail = Some(msg);
        }
        if code == "53200" {
            err.hint = Some("You might need to increase lock.max_locks.".into());
        }
        err
    }
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} ({})", self.severity.name(), self.message, self.code)
    }
}

impl std::error::Error for SqlError {}

/// A NoticeResponse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    /// `WARNING` or `NOTICE`.
    pub severity: &'static str,
    /// SQLSTATE.
    pub code: &'static str,
    /// Message.
    pub message: String,
}
