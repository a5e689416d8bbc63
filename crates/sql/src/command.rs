//! [`Command`]: what a statement is, decided once, when it is parsed.
//!
//! Everything downstream — Describe (parameter types, result columns), the
//! command tag, the failed-block check, execution — matches on this type.
//! Queries and DML carry their own plan cache, typed by what they compile
//! to, so a statement can never find a plan of another kind in its cache.
//! The utility statements that need no plan stay as sqlparser's AST and are
//! told apart once, in `utility.rs`.

use crate::error::SqlError;
use crate::expr::object_name;
use crate::parse::{Parsed, PreStmt};
use crate::plan::{InsertPlan, ModifyPlan, SelectPlan};
use sqlparser::ast;
use std::sync::{Arc, Mutex};
use turnstile_engine::mvcc::IsolationLevel;
use turnstile_engine::txn::{RowLockMode, RowLocking, RowWait};
use turnstile_lock::SqlState;

/// A statement's cached plan and the catalog generation it was made at
/// (re-made when DDL ran since: PostgreSQL's plan cache invalidation).
#[derive(Debug)]
pub(crate) struct PlanSlot<T>(Mutex<Option<(u64, Arc<T>)>>);

impl<T> Default for PlanSlot<T> {
    fn default() -> Self {
        PlanSlot(Mutex::new(None))
    }
}

impl<T> PlanSlot<T> {
    /// The plan made at `generation`, if that is the one cached.
    pub(crate) fn get(&self, generation: u64) -> Option<Arc<T>> {
        let slot = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        slot.as_ref().filter(|(g, _)| *g == generation).map(|(_, p)| Arc::clone(p))
    }

    /// Caches `plan`, made at `generation`.
    pub(crate) fn put(&self, generation: u64, plan: Arc<T>) {
        *self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some((generation, plan));
    }
}

/// What a statement is.
#[derive(Debug)]
pub(crate) enum Command {
    /// Only whitespace and comments (EmptyQueryResponse).
    Empty,
    /// `SELECT` (and `VALUES`, `TABLE`); `locking`: its `FOR UPDATE …`
    /// clause, taken out of `query` (which compiles as the plain query).
    Select { query: Box<ast::Query>, plan: PlanSlot<SelectPlan>, locking: Option<RowLocking> },
    /// `INSERT`.
    Insert { insert: Box<ast::Insert>, plan: PlanSlot<InsertPlan> },
    /// `UPDATE`.
    Update { update: Box<ast::Update>, plan: PlanSlot<ModifyPlan> },
    /// `DELETE`.
    Delete { delete: Box<ast::Delete>, plan: PlanSlot<ModifyPlan> },
    /// `BEGIN` (`start`: spelled `START TRANSACTION`).
    Begin {
        /// `START TRANSACTION` rather than `BEGIN`.
        start: bool,
        /// An `ISOLATION LEVEL` given with it.
        isolation: Option<IsolationLevel>,
        /// `READ ONLY` (true) or `READ WRITE` (false) given with it.
        read_only: Option<bool>,
    },
    /// `COMMIT`/`END` (`commit`) or `ROLLBACK`/`ABORT`.
    End { commit: bool },
    /// `SAVEPOINT name`.
    Savepoint { name: String },
    /// `RELEASE [SAVEPOINT] name`.
    Release { name: String },
    /// `ROLLBACK [WORK | TRANSACTION] TO [SAVEPOINT] name`.
    RollbackTo { name: String },
    /// `SELECT pg_advisory_…(key…)`: one advisory-lock function call as
    /// the whole query (see `advisory.rs`).
    Advisory { call: crate::advisory::Call, args: Vec<ast::Expr> },
    /// `SHOW name` / `SHOW ALL`.
    Show { variable: Vec<ast::Ident> },
    /// `EXPLAIN [ANALYZE] query`: the query as parsed, planned when the
    /// EXPLAIN runs (never printed and parsed again).
    Explain { analyze: bool, query: Box<ast::Query> },
    /// `EXECUTE name [(parameters)]`.
    Execute { name: String, parameters: Vec<ast::Expr> },
    /// What the pre-parser takes: `VACUUM`, `ANALYZE`, `CHECKPOINT`, `COPY`.
    Pre(PreStmt),
    /// Every other statement: DDL, `SET`, `LOCK`, `PREPARE`, `DEALLOCATE`…
    Utility(Box<ast::Statement>),
}

impl Command {
    /// Classifies a parsed statement.
    pub(crate) fn classify(parsed: Parsed) -> Result<Command, SqlError> {
        use ast::Statement as S;
        let (a, modes) = match parsed {
            Parsed::Empty => return Ok(Command::Empty),
            Parsed::Pre(p) => return Ok(Command::Pre(p)),
            Parsed::Ast(a) => (a, Vec::new()),
            Parsed::Locking(a, modes) => (a, modes),
        };
        Ok(match *a {
            S::Query(query) => {
                if let Some((call, args)) = crate::advisory::as_call(&query)? {
                    return Ok(Command::Advisory { call, args });
                }
                let (query, locking) = locking_clause(query, &modes)?;
                Command::Select { query, plan: PlanSlot::default(), locking }
            }
            S::Savepoint { name } => Command::Savepoint { name: crate::expr::ident_name(&name) },
            S::ReleaseSavepoint { name } => Command::Release { name: crate::expr::ident_name(&name) },
            S::Rollback { chain: false, savepoint: Some(name) } => {
                Command::RollbackTo { name: crate::expr::ident_name(&name) }
            }
            S::Insert(i) => Command::Insert { insert: Box::new(i), plan: PlanSlot::default() },
            S::Update(u) => Command::Update { update: Box::new(u), plan: PlanSlot::default() },
            S::Delete(d) => Command::Delete { delete: Box::new(d), plan: PlanSlot::default() },
            S::StartTransaction { statements, exception, begin, modes, .. } => {
                if !statements.is_empty() || exception.is_some() {
                    return Err(SqlError::unsupported("BEGIN … END blocks"));
                }
                Command::Begin { start: !begin, isolation: isolation_of(&modes)?, read_only: access_mode_of(&modes) }
            }
            S::Commit { chain: false, .. } => Command::End { commit: true },
            S::Rollback { chain: false, savepoint: None } => Command::End { commit: false },
            S::ShowVariable { variable } => Command::Show { variable },
            S::Explain { analyze, statement, .. } => match *statement {
                S::Query(query) => Command::Explain { analyze, query },
                _ => return Err(SqlError::unsupported("EXPLAIN of anything but SELECT")),
            },
            S::Execute { name: Some(name), parameters, using, .. } => {
                if !using.is_empty() {
                    return Err(SqlError::unsupported("EXECUTE … USING"));
                }
                Command::Execute { name: object_name(&name)?, parameters }
            }
            other => Command::Utility(Box::new(other)),
        })
    }

    /// The command tag's first word (`SELECT`, `BEGIN`…).
    pub(crate) fn tag(&self) -> String {
        match self {
            Command::Empty => String::new(),
            Command::Select { .. } => "SELECT".into(),
            Command::Insert { .. } => "INSERT".into(),
            Command::Update { .. } => "UPDATE".into(),
            Command::Delete { .. } => "DELETE".into(),
            Command::Begin { start: true, .. } => "START".into(),
            Command::Begin { start: false, .. } => "BEGIN".into(),
            Command::End { commit: true } => "COMMIT".into(),
            Command::End { commit: false } | Command::RollbackTo { .. } => "ROLLBACK".into(),
            Command::Savepoint { .. } => "SAVEPOINT".into(),
            Command::Release { .. } => "RELEASE".into(),
            Command::Advisory { .. } => "SELECT".into(),
            Command::Show { .. } => "SHOW".into(),
            Command::Explain { .. } => "EXPLAIN".into(),
            Command::Execute { .. } => "EXECUTE".into(),
            Command::Pre(p) => match p {
                PreStmt::Vacuum { .. } => "VACUUM",
                PreStmt::Analyze(_) => "ANALYZE",
                PreStmt::Checkpoint => "CHECKPOINT",
                PreStmt::Reindex { .. } => "REINDEX",
                PreStmt::CreateDatabase(_) => "CREATE",
                PreStmt::CopyFrom { .. } | PreStmt::CopyTo { .. } => "COPY",
                PreStmt::AlterSequence { .. } => "ALTER SEQUENCE",
                PreStmt::AlterTableNamingSequence { .. } => "ALTER TABLE",
                PreStmt::AttachIndex { .. } => "ALTER INDEX",
            }
            .into(),
            Command::Utility(a) => stmt_kind(a).split_whitespace().next().unwrap_or("").to_owned(),
        }
    }

    /// Whether the statement ends a transaction block or its failure
    /// (`ROLLBACK TO SAVEPOINT`): the only kinds a failed block still runs.
    pub(crate) fn ends_block(&self) -> bool {
        matches!(self, Command::End { .. } | Command::RollbackTo { .. })
    }
}

/// Takes the locking clause out of `query`: `None` without one. `modes`
/// are the clauses' strengths when the parser had to read `FOR NO KEY
/// UPDATE` / `FOR KEY SHARE` as `FOR UPDATE` / `FOR SHARE` (empty
/// otherwise). One clause, on the query's one table (`OF` naming it by
/// name or alias); more are `0A000`.
fn locking_clause(
    mut query: Box<ast::Query>,
    modes: &[RowLockMode],
) -> Result<(Box<ast::Query>, Option<RowLocking>), SqlError> {
    let locks = std::mem::take(&mut query.locks);
    let [lock] = locks.as_slice() else {
        if locks.is_empty() {
            return Ok((query, None));
        }
        return Err(SqlError::unsupported("more than one locking clause"));
    };
    let mode = match (modes.first(), &lock.lock_type) {
        (Some(m), _) => *m,
        (None, ast::LockType::Update) => RowLockMode::Update,
        (None, ast::LockType::Share) => RowLockMode::Share,
    };
    let wait = match lock.nonblock {
        None => RowWait::Block,
        Some(ast::NonBlock::Nowait) => RowWait::NoWait,
        Some(ast::NonBlock::SkipLocked) => RowWait::SkipLocked,
    };
    if let (Some(of), ast::SetExpr::Select(sel)) = (&lock.of, query.body.as_ref()) {
        let of = object_name(of)?;
        let named = sel.from.iter().any(|t| match &t.relation {
            ast::TableFactor::Table { name, alias, .. } => match alias {
                Some(a) => crate::expr::ident_name(&a.name) == of,
                None => object_name(name).is_ok_and(|n| n == of),
            },
            _ => false,
        });
        if !named {
            return Err(SqlError::new(
                SqlState::UNDEFINED_TABLE,
                format!("relation \"{of}\" in {} clause not found in FROM clause", mode.clause()),
            ));
        }
    }
    Ok((query, Some(RowLocking { mode, wait })))
}

pub(crate) fn stmt_kind(s: &ast::Statement) -> String {
    let text = s.to_string();
    text.split_whitespace().take(2).collect::<Vec<_>>().join(" ").to_ascii_uppercase()
}

/// `READ ONLY` (true) or `READ WRITE` (false) among a statement's
/// transaction modes, the last one given.
pub(crate) fn access_mode_of(modes: &[ast::TransactionMode]) -> Option<bool> {
    modes.iter().rev().find_map(|m| match m {
        ast::TransactionMode::AccessMode(ast::TransactionAccessMode::ReadOnly) => Some(true),
        ast::TransactionMode::AccessMode(ast::TransactionAccessMode::ReadWrite) => Some(false),
        _ => None,
    })
}

/// The isolation level among `modes` (`BEGIN`/`SET TRANSACTION`), if any:
/// `READ UNCOMMITTED` is `READ COMMITTED`, as in PostgreSQL; `SERIALIZABLE`
/// is not supported (`0A000`).
pub(crate) fn isolation_of(modes: &[ast::TransactionMode]) -> Result<Option<IsolationLevel>, SqlError> {
    let mut level = None;
    for m in modes {
        if let ast::TransactionMode::IsolationLevel(l) = m {
            level = Some(isolation_named(&l.to_string())?);
        }
    }
    Ok(level)
}

/// The isolation level called `name` (as `transaction_isolation` takes it).
pub(crate) fn isolation_named(name: &str) -> Result<IsolationLevel, SqlError> {
    match name.trim().to_ascii_lowercase().as_str() {
        "read committed" | "read uncommitted" => Ok(IsolationLevel::ReadCommitted),
        "repeatable read" => Ok(IsolationLevel::RepeatableRead),
        "serializable" => {
            Err(SqlError::unsupported("SERIALIZABLE isolation (turnstile offers READ COMMITTED and REPEATABLE READ)"))
        }
        other => Err(SqlError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("invalid value for parameter \"transaction_isolation\": \"{other}\""),
        )),
    }
}
