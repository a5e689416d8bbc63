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
    /// `SELECT` (and `VALUES`, `TABLE`).
    Select { query: Box<ast::Query>, plan: PlanSlot<SelectPlan> },
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
    },
    /// `COMMIT`/`END` (`commit`) or `ROLLBACK`/`ABORT`.
    End { commit: bool },
    /// `SHOW name` / `SHOW ALL`.
    Show { variable: Vec<ast::Ident> },
    /// `EXPLAIN [ANALYZE] statement`.
    Explain { analyze: bool, statement: Box<ast::Statement> },
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
        let a = match parsed {
            Parsed::Empty => return Ok(Command::Empty),
            Parsed::Pre(p) => return Ok(Command::Pre(p)),
            Parsed::Ast(a) => a,
        };
        Ok(match *a {
            S::Query(query) => Command::Select { query, plan: PlanSlot::default() },
            S::Insert(i) => Command::Insert { insert: Box::new(i), plan: PlanSlot::default() },
            S::Update(u) => Command::Update { update: Box::new(u), plan: PlanSlot::default() },
            S::Delete(d) => Command::Delete { delete: Box::new(d), plan: PlanSlot::default() },
            S::StartTransaction { statements, exception, begin, modes, .. } => {
                if !statements.is_empty() || exception.is_some() {
                    return Err(SqlError::unsupported("BEGIN … END blocks"));
                }
                Command::Begin { start: !begin, isolation: isolation_of(&modes)? }
            }
            S::Commit { chain: false, .. } => Command::End { commit: true },
            S::Rollback { chain: false, savepoint: None } => Command::End { commit: false },
            S::Rollback { savepoint: Some(_), .. } => return Err(SqlError::unsupported("ROLLBACK TO SAVEPOINT")),
            S::ShowVariable { variable } => Command::Show { variable },
            S::Explain { analyze, statement, .. } => Command::Explain { analyze, statement },
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
            Command::End { commit: false } => "ROLLBACK".into(),
            Command::Show { .. } => "SHOW".into(),
            Command::Explain { .. } => "EXPLAIN".into(),
            Command::Execute { .. } => "EXECUTE".into(),
            Command::Pre(p) => match p {
                PreStmt::Vacuum { .. } => "VACUUM",
                PreStmt::Analyze(_) => "ANALYZE",
                PreStmt::Checkpoint => "CHECKPOINT",
                PreStmt::CopyFrom { .. } | PreStmt::CopyTo { .. } => "COPY",
            }
            .into(),
            Command::Utility(a) => stmt_kind(a).split_whitespace().next().unwrap_or("").to_owned(),
        }
    }

    /// Whether the statement ends a transaction block: the only kind a
    /// failed block still runs.
    pub(crate) fn ends_block(&self) -> bool {
        matches!(self, Command::End { .. })
    }
}

pub(crate) fn stmt_kind(s: &ast::Statement) -> String {
    let text = s.to_string();
    text.split_whitespace().take(2).collect::<Vec<_>>().join(" ").to_ascii_uppercase()
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
