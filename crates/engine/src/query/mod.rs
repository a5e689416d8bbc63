//! The typed query API: what the workloads W1–W6 ask of the engine,
//! without SQL text.
//!
//! A [`Query`] reads one table (`FROM`), optionally equi-joins more tables
//! to it, filters with `column = value` or `column = $n` predicates, and
//! projects columns. Columns are named `table.column`, or just `column`
//! when only one table of the query has it.
//!
//! ```
//! use turnstile_engine::query::{Operand, Query};
//! // SELECT a.aid, b.bbalance FROM accounts a JOIN branches b ON a.bid = b.bid
//! //  WHERE a.aid_parent = $1
//! let q = Query::from("accounts")
//!     .join("branches", "accounts.bid", "bid")
//!     .filter("accounts.aid_parent", Operand::Param(1))
//!     .select(&["accounts.aid", "branches.bbalance"]);
//! assert_eq!(q.tables(), ["accounts", "branches"]);
//! ```
//!
//! A [`plan::Planner`] turns a query into a [`plan::Plan`] (taking the
//! planner's locks); an [`exec::Executor`] runs a plan (taking the
//! executor's locks). Both borrow what they need from a session — its
//! relation cache and lock-manager backend, and for the executor its
//! block cache — for one call; the [`Session`](crate::Session) owns the
//! statement cycle around them (activity, transaction, lock release) and
//! the plan cache of prepared statements. Neither depends on the session.

pub mod exec;
pub mod plan;

use crate::types::Value;
use std::fmt;

/// The right-hand side of a predicate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operand {
    /// A constant.
    Const(Value),
    /// The `n`th parameter (`$n`, from 1).
    Param(usize),
}

impl<T: Into<Value>> From<T> for Operand {
    fn from(v: T) -> Operand {
        Operand::Const(v.into())
    }
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Const(v) => write!(f, "{v}"),
            Operand::Param(n) => write!(f, "${n}"),
        }
    }
}

/// `column = operand`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Predicate {
    /// The column, `table.column` or `column`.
    pub column: String,
    /// What it must equal.
    pub value: Operand,
}

/// `JOIN table ON left = table.right`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Join {
    /// The joined table.
    pub table: String,
    /// A column of an earlier table of the query.
    pub left: String,
    /// A column of the joined table.
    pub right: String,
}

/// A `SELECT`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    from: String,
    joins: Vec<Join>,
    filters: Vec<Predicate>,
    select: Option<Vec<String>>,
}

impl Query {
    /// `SELECT * FROM table`.
    pub fn from(table: impl Into<String>) -> Query {
        Query { from: table.into(), joins: Vec::new(), filters: Vec::new(), select: None }
    }

    /// Adds `WHERE column = value`.
    pub fn filter(mut self, column: impl Into<String>, value: impl Into<Operand>) -> Query {
        self.filters.push(Predicate { column: column.into(), value: value.into() });
        self
    }

    /// Adds `JOIN table ON left = table.right`.
    pub fn join(mut self, table: impl Into<String>, left: impl Into<String>, right: impl Into<String>) -> Query {
        self.joins.push(Join { table: table.into(), left: left.into(), right: right.into() });
        self
    }

    /// Projects these columns (default: every column of every table).
    pub fn select(mut self, columns: &[&str]) -> Query {
        self.select = Some(columns.iter().map(|c| (*c).to_owned()).collect());
        self
    }

    /// The query's tables: `FROM` first, then each join's.
    pub fn tables(&self) -> Vec<&str> {
        std::iter::once(self.from.as_str()).chain(self.joins.iter().map(|j| j.table.as_str())).collect()
    }

    /// The joins, in order.
    pub fn joins(&self) -> &[Join] {
        &self.joins
    }

    /// The predicates.
    pub fn filters(&self) -> &[Predicate] {
        &self.filters
    }

    /// The projection, if not `*`.
    pub fn projection(&self) -> Option<&[String]> {
        self.select.as_deref()
    }

    /// The highest parameter number used (`$n`), 0 if none.
    pub fn param_count(&self) -> usize {
        self.filters
            .iter()
            .filter_map(|p| match p.value {
                Operand::Param(n) => Some(n),
                Operand::Const(_) => None,
            })
            .max()
            .unwrap_or(0)
    }
}

impl fmt::Display for Query {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.select {
            Some(cols) => write!(f, "SELECT {} FROM {}", cols.join(", "), self.from)?,
            None => write!(f, "SELECT * FROM {}", self.from)?,
        }
        for j in &self.joins {
            write!(f, " JOIN {} ON {} = {}.{}", j.table, j.left, j.table, j.right)?;
        }
        for (i, p) in self.filters.iter().enumerate() {
            write!(f, "{} {} = {}", if i == 0 { " WHERE" } else { " AND" }, p.column, p.value)?;
        }
        Ok(())
    }
}

/// How a session runs a query (pgbench's `-M`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueryMode {
    /// Plan every execution (`-M simple`): the planner locks every relation
    /// it considers, then the executor runs the fresh plan.
    Simple,
    /// Plan once, keep the plan (`-M prepared`, a generic plan): every
    /// execution still locks every relation and index the plan touches, as
    /// PostgreSQL's `AcquireExecutorLocks` does.
    Prepared,
}

/// A query that is not valid against the catalog.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QueryError {
    /// No table of the query has this column.
    #[error("column \"{0}\" does not exist")]
    UnknownColumn(String),
    /// Several tables of the query have this column.
    #[error("column reference \"{0}\" is ambiguous")]
    AmbiguousColumn(String),
    /// The query names the same table twice.
    #[error("table name \"{0}\" specified more than once")]
    DuplicateTable(String),
    /// `$n` has no value.
    #[error("there is no parameter ${0}")]
    MissingParam(usize),
    /// The values given for parameters do not match the query.
    #[error("bind message supplies {got} parameters, but the query requires {expected}")]
    ParamCount {
        /// Parameters the query uses.
        expected: usize,
        /// Values given.
        got: usize,
    },
    /// A predicate compares a column with a value of another type.
    #[error("operator does not exist: {column} = {value}")]
    TypeMismatch {
        /// The column.
        column: String,
        /// The value.
        value: String,
    },
    /// Joins compare columns of different types.
    #[error("join columns {left} and {right} have different types")]
    JoinTypeMismatch {
        /// Left column.
        left: String,
        /// Right column.
        right: String,
    },
    /// The relation is an index or otherwise not a table.
    #[error("\"{0}\" is not a table")]
    NotATable(String),
}
