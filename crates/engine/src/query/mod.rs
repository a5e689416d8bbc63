//! The typed query API: what the workloads W1–W6 ask of the engine,
//! without SQL text.
//!
//! A [`Query`] reads one table (`FROM`), optionally equi-joins more tables
//! to it, filters with `column = value` or `column = $n` predicates, and
//! projects columns. A column is a [`Col`]: a name that only one table of
//! the query has, a name qualified by its table ([`Col::of`]), or — from a
//! binder that has already resolved it, such as the SQL layer's — the
//! table's position in the query and the column's number ([`Col::at`]).
//! Names are looked up in the catalog as they are; the engine never takes
//! a string apart.
//!
//! ```
//! use turnstile_engine::query::{Col, Operand, Query};
//! // SELECT a.aid, b.bbalance FROM accounts a JOIN branches b ON a.bid = b.bid
//! //  WHERE a.aid_parent = $1
//! let q = Query::from("accounts")
//!     .join("branches", Col::of("accounts", "bid"), "bid")
//!     .filter(Col::of("accounts", "aid_parent"), Operand::Param(1))
//!     .select([Col::of("accounts", "aid"), Col::of("branches", "bbalance")]);
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
mod tuple;

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

/// A column a query refers to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Col {
    /// A column name that exactly one table of the query has (`42702`
    /// when several have it).
    Name(String),
    /// `table.column`: a column of the query's table named `table`.
    Of(String, String),
    /// Already resolved: column number `column` (from 0) of the query's
    /// `table`-th table (0 = `FROM`, then the joins in order).
    At {
        /// The table's position in the query.
        table: usize,
        /// The column's number in the table.
        column: usize,
    },
}

impl Col {
    /// `table.column`.
    pub fn of(table: impl Into<String>, column: impl Into<String>) -> Col {
        Col::Of(table.into(), column.into())
    }

    /// The `table`-th table's column number `column` (resolved by a binder).
    pub fn at(table: usize, column: usize) -> Col {
        Col::At { table, column }
    }
}

impl From<&str> for Col {
    fn from(name: &str) -> Col {
        Col::Name(name.to_owned())
    }
}

impl From<String> for Col {
    fn from(name: String) -> Col {
        Col::Name(name)
    }
}

impl fmt::Display for Col {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Col::Name(c) => f.write_str(c),
            Col::Of(t, c) => write!(f, "{t}.{c}"),
            Col::At { table, column } => write!(f, "${table}.#{column}"),
        }
    }
}

/// `column = operand`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Predicate {
    /// The column.
    pub column: Col,
    /// What it must equal.
    pub value: Operand,
}

/// `JOIN table ON left = table.right`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Join {
    /// The joined table.
    pub table: String,
    /// A column of an earlier table of the query.
    pub left: Col,
    /// A column of the joined table (a [`Col::Name`] is looked up there).
    pub right: Col,
}

/// A `SELECT`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    from: String,
    joins: Vec<Join>,
    filters: Vec<Predicate>,
    select: Option<Vec<Col>>,
    /// `WHERE (key of index) = (values)`: see [`Query::filter_index_key`].
    index_key: Option<(String, Vec<Operand>)>,
}

impl Query {
    /// `SELECT * FROM table`.
    pub fn from(table: impl Into<String>) -> Query {
        Query { from: table.into(), joins: Vec::new(), filters: Vec::new(), select: None, index_key: None }
    }

    /// Adds `WHERE column = value`.
    pub fn filter(mut self, column: impl Into<Col>, value: impl Into<Operand>) -> Query {
        self.filters.push(Predicate { column: column.into(), value: value.into() });
        self
    }

    /// Adds `WHERE (key of index) = (values…)`: rows whose key in index
    /// `index` of the table — columns or expressions over them — equals
    /// `values`, part by part (an `ON CONFLICT` arbiter's probe). Read by
    /// the engine's row-changing calls and [`crate::Session::select_by_key`]
    /// only; the planner refuses it (`0A000`).
    pub fn filter_index_key(mut self, index: impl Into<String>, values: Vec<Operand>) -> Query {
        self.index_key = Some((index.into(), values));
        self
    }

    /// The index-key filter of [`Query::filter_index_key`].
    pub fn index_key(&self) -> Option<(&str, &[Operand])> {
        self.index_key.as_ref().map(|(n, v)| (n.as_str(), v.as_slice()))
    }

    /// Adds `JOIN table ON left = table.right`.
    pub fn join(mut self, table: impl Into<String>, left: impl Into<Col>, right: impl Into<Col>) -> Query {
        self.joins.push(Join { table: table.into(), left: left.into(), right: right.into() });
        self
    }

    /// Projects these columns (default: every column of every table).
    pub fn select<C: Into<Col>>(mut self, columns: impl IntoIterator<Item = C>) -> Query {
        self.select = Some(columns.into_iter().map(Into::into).collect());
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
    pub fn projection(&self) -> Option<&[Col]> {
        self.select.as_deref()
    }

    /// The highest parameter number used (`$n`), 0 if none.
    pub fn param_count(&self) -> usize {
        self.filters
            .iter()
            .map(|p| &p.value)
            .chain(self.index_key.iter().flat_map(|(_, v)| v.iter()))
            .filter_map(|v| match v {
                Operand::Param(n) => Some(*n),
                Operand::Const(_) => None,
            })
            .max()
            .unwrap_or(0)
    }
}

impl fmt::Display for Query {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.select {
            Some(cols) => {
                let cols: Vec<String> = cols.iter().map(Col::to_string).collect();
                write!(f, "SELECT {} FROM {}", cols.join(", "), self.from)?
            }
            None => write!(f, "SELECT * FROM {}", self.from)?,
        }
        for j in &self.joins {
            match &j.right {
                Col::Name(c) => write!(f, " JOIN {} ON {} = {}.{c}", j.table, j.left, j.table)?,
                other => write!(f, " JOIN {} ON {} = {other}", j.table, j.left)?,
            }
        }
        for (i, p) in self.filters.iter().enumerate() {
            write!(f, "{} {} = {}", if i == 0 { " WHERE" } else { " AND" }, p.column, p.value)?;
        }
        if let Some((index, values)) = &self.index_key {
            let values: Vec<String> = values.iter().map(Operand::to_string).collect();
            let and = if self.filters.is_empty() { " WHERE" } else { " AND" };
            write!(f, "{and} KEY OF {index} = ({})", values.join(", "))?;
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
    /// A plan that does not fit its own tables (a planner bug, reported
    /// instead of a panic).
    #[error("invalid plan: {0}")]
    InvalidPlan(String),
}
