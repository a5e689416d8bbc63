//! Errors and notices with PostgreSQL's SQLSTATEs.

use std::fmt;
use turnstile_engine::EngineError;

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
        SqlError::new("XX000", e.to_string())
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
