//! The two `23503` errors, worded as PostgreSQL's `ri_ReportViolation`:
//! a referencing key with no referenced row, and a referenced key still
//! in use. Both name the referencing table and the constraint in the
//! error's fields, as PostgreSQL's `errtableconstraint(fk_rel, …)` does.
//!
//! ```
//! use turnstile_sql::fk::violation::{not_present, still_referenced};
//! use turnstile_engine::types::Value;
//! let e = not_present("vc", "vc_pid_fkey", "vp", &["pid".into()], &[Value::Int4(99)]);
//! assert_eq!(e.message, "insert or update on table \"vc\" violates foreign key constraint \"vc_pid_fkey\"");
//! assert_eq!(e.detail.as_deref(), Some("Key (pid)=(99) is not present in table \"vp\"."));
//! let e = still_referenced("vp", "vc_pid_fkey", "vc", &["id".into()], &[Value::Int4(1)]);
//! assert_eq!(e.detail.as_deref(), Some("Key (id)=(1) is still referenced from table \"vc\"."));
//! ```

use crate::error::{ErrorObject, SqlError, SCHEMA};
use turnstile_engine::types::Value;
use turnstile_lock::SqlState;

/// `insert or update on table "child" violates foreign key constraint
/// "name"`, DETAIL `Key (cols)=(vals) is not present in table "parent".`
pub fn not_present(child: &str, name: &str, parent: &str, columns: &[String], key: &[Value]) -> SqlError {
    let mut e = SqlError::new(
        SqlState::FOREIGN_KEY_VIOLATION,
        format!("insert or update on table \"{child}\" violates foreign key constraint \"{name}\""),
    );
    e.detail = Some(format!("Key ({})=({}) is not present in table \"{parent}\".", columns.join(", "), values(key)));
    e.object = Some(object(child, name));
    e
}

/// `update or delete on table "parent" violates foreign key constraint
/// "name" on table "child"`, DETAIL `Key (cols)=(vals) is still
/// referenced from table "child".`
pub fn still_referenced(parent: &str, name: &str, child: &str, columns: &[String], key: &[Value]) -> SqlError {
    let mut e = SqlError::new(
        SqlState::FOREIGN_KEY_VIOLATION,
        format!(
            "update or delete on table \"{parent}\" violates foreign key constraint \"{name}\" on table \"{child}\""
        ),
    );
    e.detail =
        Some(format!("Key ({})=({}) is still referenced from table \"{child}\".", columns.join(", "), values(key)));
    e.object = Some(object(child, name));
    e
}

/// The key's values in their text output form, `, `-separated.
fn values(key: &[Value]) -> String {
    key.iter().map(|v| v.to_pg_text().unwrap_or_else(|| "null".into())).collect::<Vec<_>>().join(", ")
}

fn object(table: &str, constraint: &str) -> Box<ErrorObject> {
    Box::new(ErrorObject {
        schema: Some(SCHEMA.into()),
        table: Some(table.into()),
        constraint: Some(constraint.into()),
        ..ErrorObject::default()
    })
}
