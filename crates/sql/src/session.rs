//! [`SqlSession`]: one connection's session — statements executed in
//! order, with the transaction state ReadyForQuery reports.

use crate::command::Command;
use crate::context::Ctx;
use crate::error::{Notice, Severity, SqlError};
use crate::expr::EvalEnv;
use crate::interrupt::{CancelHandle, Reason};
use crate::param::{typed_params, Param};
use crate::plan::{self, ModifyPlan};
use crate::plan::{CacheMode, Run, SelectPlan};
use crate::result_format::{binary_columns, utility_in_formats};
use crate::rows::ResultRows;
use crate::shared::{BackendInfo, SqlEngine};
use crate::statement::{in_failed_block, Outcome, Statement, StatementInner};
use crate::typed_settings::default_settings;
use crate::value::{now_timestamp, Datum};
use crate::views;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use turnstile_engine::Session;
use turnstile_lock::SqlState;

/// The transaction state reported in ReadyForQuery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxStatus {
    /// Not in a transaction block (`I`).
    Idle,
    /// In a transaction block (`T`).
    InBlock,
    /// In a failed transaction block (`E`).
    Failed,
}

/// One connection's session: lives on its backend thread.
#[derive(Debug)]
pub struct SqlSession {
    pub(crate) ctx: Ctx,
    pub(crate) es: Session,
    pub(crate) info: Arc<BackendInfo>,
    pub(crate) tx: TxStatus,
    pub(crate) prepared: HashMap<String, Statement>,
    /// The protocol-prepared statements `DEALLOCATE` sees (`protocol_statements.rs`).
    pub(crate) protocol: crate::protocol_statements::ProtocolStatements,
    pub(crate) cancel: CancelHandle,
    /// The open block's savepoints, oldest first (`transaction.rs`).
    pub(crate) savepoints: Vec<(String, turnstile_engine::subxact::Savepoint)>,
    /// The open transaction is PostgreSQL's *implicit transaction block*:
    /// the extended-query messages up to `Sync` run in one transaction,
    /// committed at `Sync` and rolled back by an error among them
    /// (`transaction.rs`). `implicit ⇒ tx == InBlock`.
    pub(crate) implicit: bool,
}

impl SqlSession {
    /// Opens a session on `database` (`3D000` if unknown; `53300` if every
    /// backend slot is taken).
    pub fn connect(
        e: &SqlEngine,
        database: &str,
        user: &str,
        application_name: &str,
        client_addr: Option<String>,
    ) -> Result<SqlSession, SqlError> {
        let shared = Arc::clone(&e.shared);
        let mut es = shared.engine.session_on(database).map_err(|err| {
            let mut s = SqlError::from(err);
            s.severity = Severity::Fatal;
            if s.code == SqlState::INTERNAL_ERROR || s.code == SqlState::OUT_OF_MEMORY {
                s.code = SqlState::TOO_MANY_CONNECTIONS;
                s.message = "sorry, too many clients already".into();
            }
            s
        })?;
        // This layer clears stale cancels at each SQL statement (`execute`).
        es.set_outer_statements(true);
        let pid = views::PID_BASE + es.backend().id() as i32;
        let info = Arc::new(BackendInfo {
            pid,
            activity_slot: es.activity_slot(),
            datid: es.database(),
            datname: database.to_owned(),
            usename: user.to_owned(),
            client_addr,
            backend_start: now_timestamp(),
            application_name: Mutex::new(application_name.to_owned()),
            query: Mutex::new(String::new()),
            cancel: CancelHandle::new(es.backend().cancel_handle()),
        });
        if let Ok(mut r) = shared.registry.lock() {
            r.retain(|b| b.activity_slot != info.activity_slot);
            r.push(Arc::clone(&info));
        }
        let cancel = info.cancel.clone();
        let max_backends = shared.engine.config().lock.max_backends;
        let seed = (now_timestamp() as u64) ^ ((pid as u64) << 32) | 1;
        let mut gucs = default_settings(user, application_name, max_backends);
        let wal = &shared.engine.config().wal;
        let on_off = |b: bool| if b { "on" } else { "off" }.to_owned();
        gucs.text.insert("synchronous_commit".into(), on_off(wal.synchronous_commit));
        gucs.text.insert("fsync".into(), on_off(wal.fsync));
        gucs.text.insert("full_page_writes".into(), "on".into());
        gucs.text.insert("wal_writer_delay".into(), format!("{}ms", wal.writer_delay_ms));
        gucs.text.insert("commit_delay".into(), wal.commit_delay_us.to_string());
        gucs.text.insert("commit_siblings".into(), wal.commit_siblings.to_string());
        let ctx = Ctx {
            shared,
            pid,
            user: user.to_owned(),
            database: database.to_owned(),
            reset_values: gucs.clone(),
            gucs,
            rng: seed,
            stmt_ts: now_timestamp(),
            cancel: Arc::clone(&cancel.inner.cancel),
            param_changes: Vec::new(),
            timeouts_dirty: false,
            xact: None,
            notices: Vec::new(),
            db_oid: es.database(),
            sequences: crate::sequence::SeqSession::default(),
        };
        Ok(SqlSession {
            ctx,
            es,
            info,
            tx: TxStatus::Idle,
            prepared: HashMap::new(),
            protocol: Default::default(),
            cancel,
            savepoints: Vec::new(),
            implicit: false,
        })
    }

    /// The backend's pid (`pg_backend_pid()`, BackendKeyData).
    pub fn pid(&self) -> i32 {
        self.ctx.pid
    }

    /// A handle that cancels this session's running statement.
    pub fn cancel_handle(&self) -> CancelHandle {
        self.cancel.clone()
    }

    /// Whether the session was asked to end (`pg_terminate_backend`,
    /// shutdown): its server ends it with FATAL `57P01`.
    pub fn terminate_requested(&self) -> bool {
        self.cancel.terminate_requested()
    }

    /// The transaction state for ReadyForQuery.
    pub fn transaction_status(&self) -> TxStatus {
        self.tx
    }

    /// The engine session underneath.
    pub fn engine_session(&mut self) -> &mut Session {
        &mut self.es
    }

    /// Executes a statement with its parameters (text ones are read by
    /// their types' input functions here; see [`Param`]); result rows are
    /// in the text format.
    pub fn execute(&mut self, stmt: &Statement, params: &[Param]) -> Result<Outcome, SqlError> {
        self.execute_in(stmt, params, &[])
    }

    /// Executes a statement with its parameters, its result rows in the
    /// result formats `result_formats` (`Bind`'s codes: none = text, one =
    /// for every column, else one per column; see `result_format.rs`).
    ///
    /// An error inside a transaction block aborts the transaction at once
    /// ([`SqlSession::statement_failed`]); `statement_timeout` cancels the
    /// statement with `57014`; a pending terminate ends the session with
    /// FATAL `57P01`.
    pub fn execute_in(
        &mut self,
        stmt: &Statement,
        params: &[Param],
        result_formats: &[i16],
    ) -> Result<Outcome, SqlError> {
        self.ctx.notices.clear();
        if self.tx == TxStatus::Failed && !stmt.inner.command.ends_block() {
            return Err(in_failed_block());
        }
        if self.cancel.terminate_requested() {
            return Err(self.interrupted(SqlError::new(SqlState::QUERY_CANCELED, "")));
        }
        // A cancel that arrived while idle is not for this statement.
        self.cancel.clear();
        self.es.backend().clear_cancel();
        if self.tx == TxStatus::Idle {
            self.ctx.stmt_ts = now_timestamp();
        }
        self.info.set_query(&stmt.inner.sql);
        let timeout = (self.ctx.gucs.statement_timeout_ms > 0).then(|| {
            self.ctx
                .shared
                .timer
                .arm(&self.cancel, std::time::Duration::from_millis(self.ctx.gucs.statement_timeout_ms))
        });
        let result = self.dispatch(stmt, params, result_formats);
        drop(timeout);
        let result = result.map_err(|e| self.interrupted(e));
        if result.is_err() {
            self.statement_failed();
        }
        if self.ctx.timeouts_dirty {
            self.apply_timeouts();
        }
        result
    }

    /// A canceled statement's error, as the interrupt's reason names it:
    /// `57014` for a cancel or a statement timeout, FATAL `57P01` when the
    /// session is being terminated.
    pub(crate) fn interrupted(&self, e: SqlError) -> SqlError {
        if e.code != SqlState::QUERY_CANCELED || e.severity != Severity::Error {
            return e;
        }
        if self.cancel.terminate_requested() {
            let mut f = SqlError::new(SqlState::ADMIN_SHUTDOWN, "terminating connection due to administrator command");
            f.severity = Severity::Fatal;
            return f;
        }
        match self.cancel.reason() {
            Reason::StatementTimeout => {
                SqlError::new(SqlState::QUERY_CANCELED, "canceling statement due to statement timeout")
            }
            Reason::User => e,
        }
    }

    /// `idle_in_transaction_session_timeout`, if set: how long the server
    /// waits for the next message of a session inside a transaction block
    /// before it ends the session with FATAL `25P03`.
    pub fn idle_in_transaction_timeout(&self) -> Option<std::time::Duration> {
        let ms = self.ctx.gucs.idle_in_transaction_session_timeout_ms;
        (self.tx != TxStatus::Idle && !self.implicit && ms > 0).then(|| std::time::Duration::from_millis(ms))
    }

    pub(crate) fn cache_mode(&self) -> CacheMode {
        self.ctx.gucs.plan_cache_mode
    }

    /// Runs `stmt` with `params`, its result rows in the result formats
    /// `formats`.
    pub(crate) fn dispatch(
        &mut self,
        stmt: &Statement,
        params: &[Param],
        formats: &[i16],
    ) -> Result<Outcome, SqlError> {
        let st = &stmt.inner;
        self.check_read_only(&st.command)?;
        match &st.command {
            Command::Empty => Ok(Outcome::Empty),
            Command::Select { query, plan: slot, locking } => {
                let plan = self.planned(st, slot, |c, ps| plan::compile_select(c, query, ps))?;
                let values = typed_params(&st.param_types, params)?;
                let binary = binary_columns(formats, &plan.fields)?;
                let rows = match locking {
                    Some(l) => {
                        let rows = crate::locking::run(&plan, &mut self.run(&values, !st.saved), *l)?;
                        let mut out = ResultRows::with_capacity(plan.fields.len(), rows.len(), 0, binary);
                        for r in &rows {
                            out.push_datums(r, &plan.out_types)?;
                        }
                        out
                    }
                    None => plan.run_rows(&mut self.run(&values, !st.saved), binary)?,
                };
                // `WITH … INSERT/UPDATE/DELETE … RETURNING`: the main
                // statement's tag, counting its RETURNING rows.
                let word = match query.body.as_ref() {
                    sqlparser::ast::SetExpr::Insert(_) => "INSERT 0",
                    sqlparser::ast::SetExpr::Update(_) => "UPDATE",
                    sqlparser::ast::SetExpr::Delete(_) => "DELETE",
                    _ => "SELECT",
                };
                let tag = format!("{word} {}", rows.len());
                Ok(Outcome::Rows { fields: plan.fields.clone(), rows, tag })
            }
            Command::Insert { insert, plan: slot } => {
                let plan = self.planned(st, slot, |c, ps| plan::compile_insert(c, insert, ps))?;
                let values = typed_params(&st.param_types, params)?;
                let done = plan.run(&mut self.run(&values, !st.saved))?;
                affected(done, plan.returning.as_ref(), "INSERT 0 ".to_owned(), formats)
            }
            Command::Update { update, plan: slot } => {
                let plan = self.planned(st, slot, |c, ps| plan::compile_update(c, update, ps))?;
                self.modify(&plan, st, params, false, formats)
            }
            Command::Delete { delete, plan: slot } => {
                let plan = self.planned(st, slot, |c, ps| plan::compile_delete(c, delete, ps))?;
                self.modify(&plan, st, params, true, formats)
            }
            Command::Begin { start, isolation, read_only } => {
                let out = self.begin(*start, *isolation)?;
                self.begin_access_mode(*read_only)?;
                Ok(out)
            }
            Command::End { commit } => self.end_transaction(*commit),
            Command::Savepoint { name } => self.savepoint(name),
            Command::Release { name } => self.release_savepoint(name),
            Command::RollbackTo { name } => self.rollback_to_savepoint(name),
            Command::Advisory { call, args } => {
                let values = typed_params(&st.param_types, params)?;
                self.run_advisory(call, args, &values, formats)
            }
            Command::Show { variable } => utility_in_formats(self.show(variable)?, formats),
            Command::Explain { analyze, query } => utility_in_formats(self.explain(*analyze, query)?, formats),
            Command::Execute { name, parameters } => self.execute_prepared(name, parameters, params, formats),
            Command::Pre(p) => self.run_pre(p),
            Command::Utility(a) => self.run_utility(a),
        }
    }

    /// `UPDATE` or `DELETE` with `plan`.
    fn modify(
        &mut self,
        plan: &ModifyPlan,
        st: &StatementInner,
        params: &[Param],
        delete: bool,
        formats: &[i16],
    ) -> Result<Outcome, SqlError> {
        let values = typed_params(&st.param_types, params)?;
        let done = plan.run(&mut self.run(&values, !st.saved), delete)?;
        let tag = format!("{} ", if delete { "DELETE" } else { "UPDATE" });
        affected(done, plan.returning.as_ref(), tag, formats)
    }

    /// What a plan runs with: the engine session, the parameters, the
    /// session's services and plan-cache mode.
    pub(crate) fn run<'a>(&'a mut self, values: &'a [Datum], one_shot: bool) -> Run<'a> {
        let cache_mode = self.cache_mode();
        Run {
            env: EvalEnv {
                params: values,
                aggs: &[],
                services: &mut self.ctx,
                outer: &[],
                session: Some(&mut self.es),
            },
            cache_mode,
            one_shot,
        }
    }

    pub(crate) fn run_select(
        &mut self,
        plan: &SelectPlan,
        values: &[Datum],
        one_shot: bool,
    ) -> Result<Vec<Vec<Datum>>, SqlError> {
        plan.run(&mut self.run(values, one_shot))
    }

    pub(crate) fn command(tag: &str) -> Result<Outcome, SqlError> {
        Ok(Outcome::Command { tag: tag.to_owned() })
    }

    pub(crate) fn notice(&mut self, severity: Severity, code: SqlState, message: impl Into<String>) {
        self.ctx.notices.push(Notice { severity, code, message: message.into() });
    }

    /// Notices produced by the last call.
    pub fn take_notices(&mut self) -> Vec<Notice> {
        std::mem::take(&mut self.ctx.notices)
    }
}

/// A data-modifying statement's outcome: its tag (`prefix` and the count)
/// alone, or with `RETURNING` its rows in the result formats `formats`.
fn affected(
    done: plan::Affected,
    returning: Option<&plan::Returning>,
    prefix: String,
    formats: &[i16],
) -> Result<Outcome, SqlError> {
    let tag = format!("{prefix}{}", done.count);
    let Some(ret) = returning else { return Ok(Outcome::Command { tag }) };
    let binary = binary_columns(formats, &ret.fields)?;
    let mut rows = ResultRows::with_capacity(ret.fields.len(), done.rows.len(), 0, binary);
    for r in &done.rows {
        rows.push_datums(r, &ret.out_types)?;
    }
    Ok(Outcome::Rows { fields: ret.fields.clone(), rows, tag })
}

impl Drop for SqlSession {
    fn drop(&mut self) {
        if let Ok(mut r) = self.ctx.shared.registry.lock() {
            r.retain(|b| !Arc::ptr_eq(b, &self.info));
        }
        // Every exit that is not COMMIT rolls back: a closed or broken
        // connection, a terminate, a shutdown.
        if self.es.in_transaction() {
            let _ = self.es.rollback();
        }
    }
}
