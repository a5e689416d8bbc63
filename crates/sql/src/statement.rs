//! Statements: parsed once, described (parameter types, result columns)
//! and compiled to a cached plan.

use crate::copy::CopyIn;
use crate::error::SqlError;
use crate::expr::object_name;
use crate::parse::{Parsed, PreStmt};
use crate::plan::{Catalog, InsertPlan, SelectPlan};
use crate::session::{SqlSession, TxStatus};
use crate::value::SqlType;
use crate::{expr, parse, plan};
use sqlparser::ast;
use std::sync::{Arc, Mutex};
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

/// What a statement compiles to (cached in the [`Statement`]).
#[derive(Debug)]
pub(crate) enum Compiled {
    Select(Box<SelectPlan>),
    Insert(InsertPlan),
    Modify(plan::ModifyPlan),
}

/// A parsed (and, once executed, planned) statement. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Statement {
    pub(crate) inner: Arc<StatementInner>,
}

#[derive(Debug)]
pub(crate) struct StatementInner {
    pub(crate) sql: String,
    pub(crate) parsed: Parsed,
    pub(crate) param_types: Vec<u32>,
    pub(crate) declared: Vec<SqlType>,
    pub(crate) fields: Option<Vec<FieldInfo>>,
    pub(crate) tag: String,
    /// From `prepare` (extended protocol): its plan is cached.
    pub(crate) saved: bool,
    pub(crate) compiled: Mutex<Option<(u64, Arc<Compiled>)>>,
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
        matches!(self.inner.parsed, Parsed::Empty)
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
        let parsed = parse::parse_one(sql, piece, offset)?;
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
        let tag = match &parsed {
            Parsed::Empty => String::new(),
            Parsed::Pre(p) => match p {
                PreStmt::Vacuum { .. } => "VACUUM",
                PreStmt::Analyze(_) => "ANALYZE",
                PreStmt::Checkpoint => "CHECKPOINT",
                PreStmt::CopyFrom { .. } | PreStmt::CopyTo { .. } => "COPY",
            }
            .to_owned(),
            Parsed::Ast(a) => stmt_kind(a).split_whitespace().next().unwrap_or("").to_owned(),
        };
        let mut st = StatementInner {
            sql: piece.trim().to_owned(),
            parsed,
            param_types: Vec::new(),
            declared,
            fields: None,
            tag,
            saved,
            compiled: Mutex::new(None),
        };
        if saved {
            // Describe needs parameter types and result columns now.
            match &st.parsed {
                Parsed::Ast(a) => match a.as_ref() {
                    ast::Statement::Query(_)
                    | ast::Statement::Insert(_)
                    | ast::Statement::Update(_)
                    | ast::Statement::Delete(_) => {
                        let (compiled, params) = self.compile(&st)?;
                        st.param_types =
                            params.iter().map(|t| if *t == SqlType::Unknown { 25 } else { t.oid() }).collect();
                        if let Compiled::Select(p) = &compiled {
                            st.fields = Some(p.fields.clone());
                        }
                        let generation = self.es.engine().catalog().published_generation();
                        st.compiled = Mutex::new(Some((generation, Arc::new(compiled))));
                    }
                    ast::Statement::ShowVariable { variable } => {
                        let name = variable.iter().map(expr::ident_name).collect::<Vec<_>>().join(" ");
                        st.fields = Some(vec![text_field(&name)]);
                    }
                    ast::Statement::Explain { .. } => st.fields = Some(vec![text_field("QUERY PLAN")]),
                    ast::Statement::Execute { name: Some(n), .. } => {
                        if let Some(p) = object_name(n).ok().and_then(|n| self.prepared.get(&n)) {
                            st.fields = p.inner.fields.clone();
                        }
                    }
                    _ => {}
                },
                Parsed::Pre(PreStmt::CopyTo { .. }) | Parsed::Pre(_) | Parsed::Empty => {}
            }
            if st.param_types.len() < st.declared.len() {
                st.param_types = st.declared.iter().map(|t| t.oid()).collect();
            }
        }
        Ok(Statement { inner: Arc::new(st) })
    }

    pub(crate) fn compile(&self, st: &StatementInner) -> Result<(Compiled, Vec<SqlType>), SqlError> {
        let cat = Catalog { session: &self.es };
        let mut params = st.declared.clone();
        let compiled = match &st.parsed {
            Parsed::Ast(a) => match a.as_ref() {
                ast::Statement::Query(q) => Compiled::Select(Box::new(plan::compile_select(&cat, q, &mut params)?)),
                ast::Statement::Insert(i) => Compiled::Insert(plan::compile_insert(&cat, i, &mut params)?),
                ast::Statement::Update(u) => Compiled::Modify(plan::compile_update(&cat, u, &mut params)?),
                ast::Statement::Delete(d) => Compiled::Modify(plan::compile_delete(&cat, d, &mut params)?),
                other => return Err(SqlError::unsupported(&stmt_kind(other))),
            },
            _ => return Err(SqlError::new(SqlState::INTERNAL_ERROR, "not a compilable statement")),
        };
        Ok((compiled, params))
    }

    /// The cached compilation of `st`, redone if DDL ran since.
    pub(crate) fn compiled(&self, st: &Statement) -> Result<Arc<Compiled>, SqlError> {
        let generation = self.es.engine().catalog().published_generation();
        let mut slot = st
            .inner
            .compiled
            .lock()
            .map_err(|_| SqlError::new(SqlState::INTERNAL_ERROR, "statement cache poisoned"))?;
        if let Some((g, c)) = slot.as_ref() {
            if *g == generation {
                return Ok(Arc::clone(c));
            }
        }
        let (c, params) = self.compile(&st.inner)?;
        if st.inner.saved && params.len() != st.inner.param_types.len() {
            return Err(SqlError::new(SqlState::FEATURE_NOT_SUPPORTED, "cached plan must not change result type"));
        }
        let c = Arc::new(c);
        *slot = Some((generation, Arc::clone(&c)));
        Ok(c)
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
        if self.tx == TxStatus::Failed {
            let first = pieces.first().map(|(_, p)| p.trim_start().to_ascii_lowercase()).unwrap_or_default();
            let exits = ["rollback", "commit", "end", "abort"];
            if !exits.iter().any(|w| first.starts_with(w)) {
                return Err(SqlError::new(
                    SqlState::IN_FAILED_SQL_TRANSACTION,
                    "current transaction is aborted, commands ignored until end of transaction block",
                ));
            }
        }
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
