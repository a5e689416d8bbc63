//! An index key as a backend computes it from a row: each part a column
//! of the row or an expression over the row's columns, compiled once per
//! relation-cache entry (PostgreSQL's `FormIndexDatum` over
//! `rd_indexprs`).
//!
//! The engine does not read SQL: an expression is compiled by the
//! [`IndexExprCompiler`] the SQL layer registers with the catalog. An
//! expression that cannot be compiled (no compiler registered, as in an
//! engine used without the SQL layer, or a definition the compiler
//! refuses) keeps its error, and every key computed with it fails with
//! that error: a row is never indexed under a wrong key.
//!
//! ```
//! use turnstile_engine::catalog::{IndexDef, IndexKey};
//! use turnstile_engine::types::{ColumnType, Value};
//! let def = IndexDef::on_columns(1, vec![2, 0], true, false);
//! let key = IndexKey::build(&def, &[ColumnType::Int4, ColumnType::Int4], None);
//! let row = [Value::Int4(1), Value::Int4(2), Value::Int4(3)];
//! assert_eq!(key.values(&row).unwrap(), vec![Value::Int4(3), Value::Int4(1)]);
//! assert!(!key.has_expressions());
//! ```

use super::model::{IndexDef, KeyPartDef};
use crate::types::{ColumnType, Value};
use crate::EngineError;
use std::sync::Arc;
use turnstile_lock::SqlState;

/// Compiles the SQL text of an index expression against a table's
/// columns (the SQL layer's; registered with
/// [`super::Catalog::set_index_expr_compiler`]).
pub trait IndexExprCompiler: Send + Sync {
    /// Compiles `sql`, over rows whose columns are `columns` (name and
    /// type, in column order), to a value of type `ty`.
    fn compile(
        &self,
        columns: &[(String, ColumnType)],
        sql: &str,
        ty: ColumnType,
    ) -> Result<Arc<dyn IndexKeyExpr>, EngineError>;
}

/// A compiled index expression.
pub trait IndexKeyExpr: Send + Sync {
    /// Its value on `row` (every column of the table).
    fn eval(&self, row: &[Value]) -> Result<Value, EngineError>;
}

/// One part of a compiled key.
#[derive(Clone)]
enum KeyPart {
    Column(usize),
    Expression { sql: String, compiled: Result<Arc<dyn IndexKeyExpr>, (SqlState, String)> },
}

impl PartialEq for KeyPart {
    fn eq(&self, other: &KeyPart) -> bool {
        match (self, other) {
            (KeyPart::Column(a), KeyPart::Column(b)) => a == b,
            (KeyPart::Expression { sql: a, .. }, KeyPart::Expression { sql: b, .. }) => a == b,
            _ => false,
        }
    }
}

impl Eq for KeyPart {}

impl std::fmt::Debug for KeyPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyPart::Column(c) => write!(f, "#{c}"),
            KeyPart::Expression { sql, compiled } => write!(f, "({sql}){}", if compiled.is_ok() { "" } else { "!" }),
        }
    }
}

/// An index's key, ready to compute from a row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexKey {
    parts: Vec<KeyPart>,
    types: Vec<ColumnType>,
}

impl IndexKey {
    /// The key of index `def` on a table whose column types are
    /// `column_types`, its expressions compiled by `compiler` (the
    /// table's column names come from `names`, when there are
    /// expressions).
    pub fn build(
        def: &IndexDef,
        column_types: &[ColumnType],
        compiler: Option<(&dyn IndexExprCompiler, &[String])>,
    ) -> IndexKey {
        let mut parts = Vec::with_capacity(def.columns.len());
        let mut types = Vec::with_capacity(def.columns.len());
        for p in def.key_parts() {
            match p {
                KeyPartDef::Column(c) => {
                    parts.push(KeyPart::Column(c));
                    types.push(column_types.get(c).copied().unwrap_or(ColumnType::Text));
                }
                KeyPartDef::Expression(e) => {
                    let compiled = match compiler {
                        None => Err((
                            SqlState::FEATURE_NOT_SUPPORTED,
                            format!("index expression {} needs the SQL layer to be computed", e.sql),
                        )),
                        Some((c, names)) => {
                            let columns: Vec<(String, ColumnType)> =
                                names.iter().cloned().zip(column_types.iter().copied()).collect();
                            c.compile(&columns, &e.sql, e.ty).map_err(|err| (err.sqlstate(), err.to_string()))
                        }
                    };
                    parts.push(KeyPart::Expression { sql: e.sql.clone(), compiled });
                    types.push(e.ty);
                }
            }
        }
        IndexKey { parts, types }
    }

    /// The key's types, in key order.
    pub fn types(&self) -> &[ColumnType] {
        &self.types
    }

    /// The expressions' SQL text, in key order.
    pub fn expression_texts(&self) -> impl Iterator<Item = String> + '_ {
        self.parts.iter().filter_map(|p| match p {
            KeyPart::Expression { sql, .. } => Some(sql.clone()),
            KeyPart::Column(_) => None,
        })
    }

    /// Whether a part of the key is an expression.
    pub fn has_expressions(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, KeyPart::Expression { .. }))
    }

    /// The key of `row` (every column of the table).
    pub fn values(&self, row: &[Value]) -> Result<Vec<Value>, EngineError> {
        self.parts
            .iter()
            .map(|p| match p {
                KeyPart::Column(c) => row.get(*c).cloned().ok_or(EngineError::IndexExpression {
                    code: SqlState::INTERNAL_ERROR,
                    message: format!("an index key names column #{c} of a row of {} columns", row.len()),
                }),
                KeyPart::Expression { compiled: Ok(x), .. } => x.eval(row),
                KeyPart::Expression { compiled: Err((code, message)), .. } => {
                    Err(EngineError::IndexExpression { code: *code, message: message.clone() })
                }
            })
            .collect()
    }
}
