//! Errors and notices with PostgreSQL's SQLSTATEs.

use std::fmt;
use turnstile_engine::{EngineError, UniqueViolation};
use turnstile_lock::{LockError, SqlState};

/// How bad a message is: PostgreSQL's `elevel`, as ErrorResponse and
/// NoticeResponse carry it (`S` and `V` fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// A NoticeResponse the client may show.
    Notice,
    /// A NoticeResponse worth attention (`WARNING`).
    Warning,
    /// The statement failed; the session goes on.
    Error,
    /// The session ends.
    Fatal,
}

impl Severity {
    /// PostgreSQL's name (`NOTICE`, `WARNING`, `ERROR`, `FATAL`).
    pub const fn name(self) -> &'static str {
        match self {
            Severity::Notice => "NOTICE",
            Severity::Warning => "WARNING",
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
    pub code: SqlState,
    /// Primary message.
    pub message: String,
    /// DETAIL.
    pub detail: Option<String>,
    /// HINT.
    pub hint: Option<String>,
    /// 1-based character position in the statement text.
    pub position: Option<u32>,
    /// The object the error is about (`s`, `t`, `c`, `d`, `n` fields):
    /// PostgreSQL sets them for constraint violations and some data errors.
    /// Boxed: most errors name no object, and `SqlError` stays small.
    pub object: Option<Box<ErrorObject>>,
}

/// The schema, table, column, data type and constraint an error names
/// (ErrorResponse fields `s`, `t`, `c`, `d`, `n`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ErrorObject {
    /// `s`: schema name.
    pub schema: Option<String>,
    /// `t`: table name.
    pub table: Option<String>,
    /// `c`: column name.
    pub column: Option<String>,
    /// `d`: data type name.
    pub datatype: Option<String>,
    /// `n`: constraint name.
    pub constraint: Option<String>,
}

/// The one schema turnstile has.
pub(crate) const SCHEMA: &str = "public";

impl SqlError {
    /// An ERROR with `code` and `message`.
    pub fn new(code: SqlState, message: impl Into<String>) -> SqlError {
        SqlError {
            severity: Severity::Error,
            code,
            message: message.into(),
            detail: None,
            hint: None,
            position: None,
            object: None,
        }
    }

    /// `0A000`: a valid construct turnstile does not support.
    pub fn unsupported(what: &str) -> SqlError {
        SqlError::new(SqlState::FEATURE_NOT_SUPPORTED, format!("{what} is not supported by turnstile"))
    }

    /// `FATAL` with `code` and `message`: the session ends.
    pub fn fatal(code: SqlState, message: impl Into<String>) -> SqlError {
        SqlError { severity: Severity::Fatal, ..SqlError::new(code, message) }
    }

    /// An engine error, with its SQLSTATE ([`EngineError::sqlstate`]) and
    /// PostgreSQL's wording where PostgreSQL words it differently (the
    /// engine's own text then goes to DETAIL).
    pub fn from_engine(e: EngineError) -> SqlError {
        match &e {
            EngineError::UniqueViolation(u) => return SqlError::unique_violation(u),
            EngineError::NotNullViolation { table, column } | EngineError::ContainsNulls { table, column } => {
                let mut err = SqlError::new(e.sqlstate(), e.to_string());
                err.object = Some(Box::new(ErrorObject {
                    schema: Some(SCHEMA.into()),
                    table: Some(table.clone()),
                    column: Some(column.clone()),
                    ..ErrorObject::default()
                }));
                return err;
            }
            _ => {}
        }
        let msg = e.to_string();
        let message = match &e {
            EngineError::Lock(l) => lock_message(l, None),
            _ => None,
        };
        let mut err = SqlError::new(e.sqlstate(), message.unwrap_or_else(|| msg.clone()));
        if err.message != msg {
            err.detail = Some(msg);
        }
        if err.code == SqlState::OUT_OF_MEMORY {
            err.hint = Some("You might need to increase lock.max_locks.".into());
        }
        err
    }

    /// A unique violation, worded as PostgreSQL's `_bt_check_unique`: the
    /// message names the constraint, DETAIL the key
    /// (`Key (a, b)=(1, x) already exists.`, values in their text output
    /// form), and the error fields the schema, table and constraint.
    pub fn unique_violation(u: &UniqueViolation) -> SqlError {
        let values: Vec<String> = u.values.iter().map(|v| v.to_pg_text().unwrap_or_else(|| "null".into())).collect();
        let mut err = SqlError::new(SqlState::UNIQUE_VIOLATION, u.to_string());
        err.detail = Some(format!("Key ({})=({}) already exists.", u.columns.join(", "), values.join(", ")));
        err.object = Some(Box::new(ErrorObject {
            schema: Some(SCHEMA.into()),
            table: Some(u.table.clone()),
            constraint: Some(u.index.clone()),
            ..ErrorObject::default()
        }));
        err
    }

    /// A lock-manager error; `relation` names the relation a `NOWAIT` asked for.
    pub fn from_lock(e: &LockError, relation: Option<&str>) -> SqlError {
        let msg = e.to_string();
        let mut err = SqlError::new(e.sqlstate(), lock_message(e, relation).unwrap_or_else(|| msg.clone()));
        err.detail = Some(msg);
        err
    }
}

/// PostgreSQL's primary message for a lock error, where it differs from ours.
fn lock_message(e: &LockError, relation: Option<&str>) -> Option<String> {
    Some(match e {
        LockError::NotAvailable { .. } => match relation {
            Some(name) => format!("could not obtain lock on relation \"{name}\""),
            None => "could not obtain lock".to_owned(),
        },
        LockError::Timeout { .. } => "canceling statement due to lock timeout".to_owned(),
        LockError::Deadlock { .. } => "deadlock detected".to_owned(),
        LockError::Canceled { .. } => "canceling statement due to user request".to_owned(),
        _ => return None,
    })
}

impl From<EngineError> for SqlError {
    /// Every engine error reaches the SQL layer this one way
    /// ([`SqlError::from_engine`]), so `?` converts it.
    fn from(e: EngineError) -> SqlError {
        SqlError::from_engine(e)
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
    /// [`Severity::Warning`] or [`Severity::Notice`].
    pub severity: Severity,
    /// SQLSTATE.
    pub code: SqlState,
    /// Message.
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnstile_engine::types::Value;

    #[test]
    fn a_unique_violation_is_worded_once_as_postgresql_words_it() {
        let u = UniqueViolation {
            table: "t".into(),
            index: "t_a_b_key".into(),
            columns: vec!["a".into(), "b".into()],
            values: vec![Value::Int4(1), Value::Text("it's, fine".into()), Value::Bool(true), Value::Null],
        };
        let e = SqlError::from(EngineError::UniqueViolation(Box::new(u)));
        assert_eq!(e.code, SqlState::UNIQUE_VIOLATION);
        assert_eq!(e.message, "duplicate key value violates unique constraint \"t_a_b_key\"");
        assert_eq!(e.detail.as_deref(), Some("Key (a, b)=(1, it's, fine, t, null) already exists."));
        let o = e.object.as_deref().unwrap();
        assert_eq!((o.table.as_deref(), o.constraint.as_deref()), (Some("t"), Some("t_a_b_key")));
    }
}
