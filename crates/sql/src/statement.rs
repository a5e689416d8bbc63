//! Statements: parsed once, described (parameter types, result columns)
//! and compiled to a cached plan.

use crate::command::{Command, PlanSlot};
use crate::copy::CopyIn;
use crate::error::SqlError;
use crate::plan::{Catalog, SelectPlan};
use crate::session::{SqlSession, TxStatus};
use crate::value::SqlType;
use crate::{expr, parse, plan};
use sqlparser::ast;
use std::sync::Arc;
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
    pub(crate) fields: Option<Vec<FieldInfo>>,
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

pub(crate) fn stmt_kind(s: &ast::Statement) -> String {
    let text = s.to_string();
    text.split_whitespace().take(2).collect::<Vec<_>>().join(" ").to_ascii_uppercase()
}

pub(crate) fn text_field(name: &str) -> FieldInfo {
    FieldInfo { name: name.to_owned(), table_oid: 0, column: 0, type_oid: 25, type_len: -1, type_modifier: -1 }
}

impl SqlSession {
    pub(crate) fn make_statement(
        &mut self,
        sql: &str,
        piece: &str,
        offset: usize,
        types: &[u32],
        saved: bool,
    ) -> Result<Statement, SqlError> {
        let command = Command::classify(parse::parse_one(sql, piece, offset)?)?;
        if saved && self.tx == TxStatus::Failed && !command.ends_block() {
            return Err(in_failed_block());
        }
        let declared = types
            .iter()
            .map(|t| {
                SqlType::from_oid(*t).ok_or_else(|| {
                    SqlError::new(
                        SqlState::FEATURE_NOT_SUPPORTED,
                        format!("parameters of type OID {t} are not supported"),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut st = StatementInner {
            sql: piece.trim().to_owned(),
            tag: command.tag(),
            command,
            param_types: Vec::new(),
            declared,
            fields: None,
            saved,
        };
        if saved {
            self.describe(&mut st)?;
        }
        Ok(Statement { inner: Arc::new(st) })
    }

    /// Parameter types and result columns, for Describe: a query or DML
    /// statement is compiled now (and its plan cached).
    fn describe(&self, st: &mut StatementInner) -> Result<(), SqlError> {
        let (params, fields) = match &st.command {
            Command::Select { query, plan: slot } => {
                let (p, params) = self.compile_into(st, slot, |c, ps| plan::compile_select(c, query, ps))?;
                (params, Some(p.fields.clone()))
            }
            Command::Insert { insert, plan: slot } => {
                (self.compile_into(st, slot, |c, ps| plan::compile_insert(c, insert, ps))?.1, None)
            }
            Command::Update { update, plan: slot } => {
                (self.compile_into(st, slot, |c, ps| plan::compile_update(c, update, ps))?.1, None)
            }
            Command::Delete { delete, plan: slot } => {
                (self.compile_into(st, slot, |c, ps| plan::compile_delete(c, delete, ps))?.1, None)
            }
            Command::Show { variable } => (Vec::new(), Some(vec![text_field(&show_name(variable))])),
            Command::Explain { .. } => (Vec::new(), Some(vec![text_field("QUERY PLAN")])),
            Command::Execute { name, .. } => (Vec::new(), self.prepared.get(name).and_then(|p| p.inner.fields.clone())),
            _ => (Vec::new(), None),
        };
        st.param_types = params.iter().map(|t| if *t == SqlType::Unknown { 25 } else { t.oid() }).collect();
        if st.param_types.len() < st.declared.len() {
            st.param_types = st.declared.iter().map(|t| t.oid()).collect();
        }
        st.fields = fields;
        Ok(())
    }

    /// Compiles `st` with `compile` and caches the plan in `slot`; the plan
    /// and the parameter types it inferred.
    fn compile_into<T>(
        &self,
        st: &StatementInner,
        slot: &PlanSlot<T>,
        compile: impl FnOnce(&Catalog<'_>, &mut Vec<SqlType>) -> Result<T, SqlError>,
    ) -> Result<(Arc<T>, Vec<SqlType>), SqlError> {
        let generation = self.es.engine().catalog().published_generation();
        let mut params = st.declared.clone();
        let plan = Arc::new(compile(&Catalog { session: &self.es }, &mut params)?);
        slot.put(generation, Arc::clone(&plan));
        Ok((plan, params))
    }

    /// The plan cached in `slot`, re-made by `compile` if DDL ran since.
    pub(crate) fn planned<T>(
        &self,
        st: &StatementInner,
        slot: &PlanSlot<T>,
        compile: impl FnOnce(&Catalog<'_>, &mut Vec<SqlType>) -> Result<T, SqlError>,
    ) -> Result<Arc<T>, SqlError> {
        if let Some(p) = slot.get(self.es.engine().catalog().published_generation()) {
            return Ok(p);
        }
        let (plan, params) = self.compile_into(st, slot, compile)?;
        if st.saved && params.len() != st.param_types.len() {
            return Err(SqlError::new(SqlState::FEATURE_NOT_SUPPORTED, "cached plan must not change result type"));
        }
        Ok(plan)
    }

    /// The plan of a `SELECT` statement (`EXPLAIN`, `COPY (query) TO`);
    /// `None` for any other kind.
    pub(crate) fn select_plan(&self, st: &Statement) -> Result<Option<Arc<SelectPlan>>, SqlError> {
        match &st.inner.command {
            Command::Select { query, plan: slot } => {
                self.planned(&st.inner, slot, |c, ps| plan::compile_select(c, query, ps)).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// Parses a simple Query string into its statements.
    /// A syntax error inside a transaction block aborts it.
    pub fn parse_batch(&mut self, sql: &str) -> Result<Vec<Statement>, SqlError> {
        self.ctx.notices.clear();
        let pieces = parse::split(sql);
        let r = if pieces.is_empty() {
            self.make_statement(sql, "", 0, &[], false).map(|s| vec![s])
        } else {
            pieces.into_iter().map(|(offset, piece)| self.make_statement(sql, piece, offset, &[], false)).collect()
        };
        if r.is_err() {
            self.statement_failed();
        }
        r
    }

    /// Parses one statement for the extended protocol (Parse).
    pub fn prepare(&mut self, sql: &str, param_types: &[u32]) -> Result<Statement, SqlError> {
        self.ctx.notices.clear();
        let pieces = parse::split(sql);
        let r = match pieces.as_slice() {
            [] => self.make_statement(sql, "", 0, param_types, true),
            [(offset, piece)] => self.make_statement(sql, piece, *offset, param_types, true),
            _ => {
                Err(SqlError::new(SqlState::SYNTAX_ERROR, "cannot insert multiple commands into a prepared statement"))
            }
        };
        if r.is_err() {
            self.statement_failed();
        }
        r
    }
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
