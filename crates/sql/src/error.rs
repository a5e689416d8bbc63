//! Errors and notices with PostgreSQL's SQLSTATEs.

use std::fmt;
use turnstile_engine::btree::BtreeError;
use turnstile_engine::catalog::CatalogError;
use turnstile_engine::query::QueryError;
use turnstile_engine::types::CodecError;
use turnstile_engine::EngineError;
use turnstile_lock::LockError;

/// The SQLSTATE of a lock-manager error.
pub fn lock_code(l: &LockError) -> &'static str {
    match l {
        LockError::OutOfLockMemory { .. } => "53200",
        LockError::TooManyBackends { .. } => "53300",
        LockError::NotAvailable { .. } | LockError::Timeout { .. } => "55P03",
        LockError::Deadlock { .. } => "40P01",
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
            EngineError::Catalog(c) => match c {
                CatalogError::UnknownDatabase(_) => "3D000",
                CatalogError::UnknownRelation(_) => "42P01",
                CatalogError::UnknownColumn { .. } => "42703",
                CatalogError::DuplicateDatabase(_) => "42P04",
                CatalogError::DuplicateRelation(_) => "42P07",
                CatalogError::DuplicateColumn { .. } => "42701",
                CatalogError::UnknownType(_) => "42704",
                CatalogError::WrongKind { .. } => "42809",
                CatalogError::Invalid(_) => "42P17",
                CatalogError::Corrupted { .. } => "XX001",
                CatalogError::Io { .. } => "58030",
                _ => "XX000",
            },
            EngineError::Lock(l) => lock_code(l),
            EngineError::Query(q) => match q {
                QueryError::UnknownColumn(_) => "42703",
                QueryError::AmbiguousColumn(_) => "42702",
                QueryError::DuplicateTable(_) => "42712",
                QueryError::MissingParam(_) | QueryError::ParamCount { .. } => "08P01",
                QueryError::TypeMismatch { .. } | QueryError::JoinTypeMismatch { .. } => "42883",
                QueryError::NotATable(_) => "42809",
                _ => "XX000",
            },
            EngineError::Index(BtreeError::UniqueViolation { .. }) => "23505",
            EngineError::Index(_) => "XX000",
            EngineError::Codec(CodecError::TooLong(_)) => "54000",
            EngineError::Codec(CodecError::Type { .. }) => "22P02",
            EngineError::Codec(CodecError::Arity { .. }) => "42601",
            EngineError::Codec(_) => "XX001",
            EngineError::TooManySessions(_) => "53300",
            EngineError::Config(_) => "22023",
            EngineError::Storage(_) | EngineError::Heap(_) => {
                if msg.contains("No space left") {
                    "53100"
                } else {
                    "58030"
                }
            }
            EngineError::State(s) if s.starts_with("no partition of") => "23514",
            EngineError::State(s) if s.contains("transaction") => "25000",
            EngineError::State(_) => "55000",
            _ if msg.contains("cancel") => "57014",
            _ => "XX000",
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
