//! Parse, Describe and the plan cache: a statement made from its text,
//! classified once, and (for the extended protocol) compiled at once.

use crate::command::{Command, PlanSlot};
use crate::error::SqlError;
use crate::plan::{Catalog, SelectPlan};
use crate::session::{SqlSession, TxStatus};
use crate::statement::{in_failed_block, show_name, text_field, Statement, StatementInner};
use crate::value::SqlType;
use crate::{parse, plan};
use std::sync::Arc;
use turnstile_lock::SqlState;

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
            Command::Select { query, plan: slot, .. } => {
                let (p, params) = self.compile_into(st, slot, |c, ps| plan::compile_select(c, query, ps))?;
                (params, Some(p.fields.clone()))
            }
            Command::Insert { insert, plan: slot } => {
                let (p, params) = self.compile_into(st, slot, |c, ps| plan::compile_insert(c, insert, ps))?;
                (params, p.returning.as_ref().map(|r| r.fields.clone()))
            }
            Command::Update { update, plan: slot } => {
                let (p, params) = self.compile_into(st, slot, |c, ps| plan::compile_update(c, update, ps))?;
                (params, p.returning.as_ref().map(|r| r.fields.clone()))
            }
            Command::Delete { delete, plan: slot } => {
                let (p, params) = self.compile_into(st, slot, |c, ps| plan::compile_delete(c, delete, ps))?;
                (params, p.returning.as_ref().map(|r| r.fields.clone()))
            }
            Command::Advisory { call, args } => {
                let mut params = st.declared.clone();
                crate::advisory::compile_args(args, &mut params)?;
                (params, Some(vec![crate::run_advisory::result_field(call)].into()))
            }
            Command::Show { variable } => (Vec::new(), Some(vec![text_field(&show_name(variable))].into())),
            Command::Explain { .. } => (Vec::new(), Some(vec![text_field("QUERY PLAN")].into())),
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
        let plan =
            Arc::new(compile(&Catalog { session: &self.es, sequences: &self.ctx.shared.sequences }, &mut params)?);
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

    /// The plan of a `SELECT` statement (`COPY (query) TO`);
    /// `None` for any other kind.
    pub(crate) fn select_plan(&self, st: &Statement) -> Result<Option<Arc<SelectPlan>>, SqlError> {
        match &st.inner.command {
            Command::Select { query, plan: slot, .. } => {
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
