//! Statements: parsed once, described (parameter types, result columns)
//! and compiled to a cached plan.

use crate::command::Command;
use crate::error::SqlError;
use crate::expr;
use crate::value::SqlType;
use sqlparser::ast;
use std::sync::Arc;
use turnstile_engine::types::{ColumnType, Value};
use turnstile_lock::SqlState;

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
    pub(crate) inner: Arc<StatementInner>,
}

#[derive(Debug)]
pub(crate) struct StatementInner {
    pub(crate) sql: String,
    /// What it is, decided once.
    pub(crate) command: Command,
    pub(crate) param_types: Vec<u32>,
    pub(crate) declared: Vec<SqlType>,
    pub(crate) fields: Option<std::sync::Arc<[FieldInfo]>>,
    pub(crate) tag: String,
    /// From `prepare` (extended protocol): its plan is cached.
    pub(crate) saved: bool,
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
        matches!(self.inner.command, Command::Empty)
    }

    /// The command tag's first word (`SELECT`, `BEGIN`…).
    pub fn tag_hint(&self) -> &str {
        &self.inner.tag
    }

    /// The statement's text.
    pub fn sql(&self) -> &str {
        &self.inner.sql
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
    /// Rows, each column in its result format.
    Rows {
        /// RowDescription.
        fields: std::sync::Arc<[FieldInfo]>,
        /// Values (None = NULL).
        rows: crate::rows::ResultRows,
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
        /// Lines, `\n` terminated (binary: the header, each tuple, the trailer).
        lines: Vec<Vec<u8>>,
        /// In the binary COPY format.
        binary: bool,
        /// CommandComplete tag (`COPY n`).
        tag: String,
    },
}

pub(crate) fn text_field(name: &str) -> FieldInfo {
    FieldInfo { name: name.to_owned(), table_oid: 0, column: 0, type_oid: 25, type_len: -1, type_modifier: -1 }
}

/// `25P02`: a failed block runs nothing but its end.
pub(crate) fn in_failed_block() -> SqlError {
    SqlError::new(
        SqlState::IN_FAILED_SQL_TRANSACTION,
        "current transaction is aborted, commands ignored until end of transaction block",
    )
}

/// `SHOW`'s column name.
pub(crate) fn show_name(variable: &[ast::Ident]) -> String {
    variable.iter().map(expr::ident_name).collect::<Vec<_>>().join(" ")
}

/// A COPY FROM STDIN in progress.
#[derive(Debug)]
pub struct CopyIn {
    pub(crate) table: String,
    pub(crate) types: Vec<ColumnType>,
    pub(crate) sql_types: Vec<SqlType>,
    pub(crate) targets: Vec<usize>,
    pub(crate) partial: Vec<u8>,
    pub(crate) batch: Vec<Vec<Value>>,
    pub(crate) count: u64,
    pub(crate) done: bool,
    pub(crate) options: crate::copy::CopyOptions,
    pub(crate) progress: crate::copy::CopyProgress,
    /// The table's id when it references others (foreign keys), and the
    /// rows loaded so far: checked when the COPY ends, as PostgreSQL's
    /// after-statement trigger queue does (a row may reference one loaded
    /// after it in the same COPY).
    pub(crate) fk_child: Option<(u32, Vec<Vec<Value>>)>,
    /// Whether the COPY opened the implicit block it runs in (it was
    /// outside a transaction block): `copy_done` commits it, an error
    /// takes all its rows back.
    pub(crate) own_block: bool,
}

impl CopyIn {
    /// Columns each line holds.
    pub fn columns(&self) -> usize {
        self.targets.len()
    }

    /// Whether the data is in the binary COPY format.
    pub fn binary(&self) -> bool {
        self.options.format == crate::copy::CopyFormat::Binary
    }
}
