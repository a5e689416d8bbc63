//! Row constraints checked on every write path (INSERT, COPY, UPDATE): a
//! file of its own so that the session's insert path and the DML module
//! share it without importing each other.

use crate::catalog::Relation;
use crate::error::{EngineError, Result};
use crate::types::Value;

/// Refuses a row with a NULL in a column that refuses them.
pub(crate) fn check_not_null(rel: &Relation, row: &[Value]) -> Result<()> {
    for (c, v) in rel.columns.iter().zip(row) {
        if c.not_null && matches!(v, Value::Null) {
            return Err(EngineError::NotNullViolation { table: rel.name.clone(), column: c.name.clone() });
        }
    }
    Ok(())
}
