//! SELECT and INSERT: compiled once (names resolved against the catalog,
//! equality predicates pushed down into the engine's typed [`Query`], the
//! rest compiled to [`Expr`]s), then run many times.
//!
//! The relation access always goes through the engine's planner and
//! executor (`Session::query`, or `prepare`/`execute` for a cached generic
//! plan), so the engine takes PostgreSQL's locks; this layer only
//! evaluates what the engine does not: residual predicates, expressions,
//! aggregates, grouping, ordering and limits.

mod arbiter;
mod bind;
mod dml;
mod dml_cte;
mod exec;
mod from;
mod group;
mod item;
mod modify_from;
mod nested_loop;
mod order;
mod predicate;
mod pushdown;
mod query;
mod recursive;
mod returning;
mod select_srf;
mod set_function;
mod setop;
pub mod shorthand;
mod sublink;
mod target;
mod upsert;
mod using;
mod walk;
mod window;
pub(crate) use exec::count_arg;
pub(crate) use order::compare_key;

use exec::series_bounds;

use crate::error::SqlError;
use crate::expr::{AggSpec, Compiler, EvalEnv, Expr, OuterScope, Scope, Services};
use crate::value::SqlType;
use crate::views::View;
use crate::FieldInfo;
use std::sync::Mutex;
use turnstile_engine::query::Query;
use turnstile_engine::session::Prepared;
use turnstile_engine::types::ColumnType;
use turnstile_engine::Session;
use turnstile_lock::SqlState;

pub use dml::{
    check_assignable, compile_delete, compile_insert, compile_insert_in, compile_update, InsertPlan, InsertSource,
    ModifyPlan,
};
pub use dml_cte::DmlCte;
use query::over_rows;
pub use query::{compile_query, compile_select};
pub use returning::{Affected, Returning};
pub use set_function::SetFunction;
pub use setop::{SetOpKind, SetOpPlan};
pub use window::{WindowFunc, WindowPlan};

/// How many custom plans before a generic one (`plan_cache_mode = auto`).
const CUSTOM_PLANS: u32 = 5;

/// Where a SELECT's input rows come from.
#[derive(Debug)]
pub enum Source {
    /// No FROM: one empty row.
    One,
    /// Engine tables (joined by the engine), with pushed-down filters.
    Engine {
        /// The typed query (projection: every column of every table).
        query: Query,
        /// Engine parameter `$k+1` = this expression, coerced to the column type.
        pushed: Vec<(Expr, ColumnType)>,
        /// Plan cache state.
        cache: Box<Mutex<PlanCache>>,
    },
    /// Sources joined here in a nested loop: views, `generate_series`,
    /// tables the engine cannot join.
    Rows(Vec<RowItem>),
}

/// One materialised FROM item and how it joins the ones before it.
#[derive(Debug)]
pub struct RowItem {
    /// What produces its rows.
    pub producer: Producer,
    /// Number of columns.
    pub width: usize,
    /// Join condition (on the combined row so far), if any.
    pub on: Option<Expr>,
    /// LEFT JOIN.
    pub left: bool,
    /// WHERE's conjuncts that read no column past this item's, applied
    /// to the rows once it is joined (`pushdown.rs`).
    pub filter: Option<Expr>,
}

/// A materialised row producer.
#[derive(Debug)]
pub enum Producer {
    /// A system view.
    View(View),
    /// `generate_series(start, stop [, step])`.
    Series(Expr, Expr, Option<Expr>),
    /// Another set-returning function (`unnest`, …) of one argument, and
    /// whether its rows are numbered (`WITH ORDINALITY`).
    Function(SetFunction, Expr, bool),
    /// A subquery in FROM or a common table expression: its rows.
    Query(Box<SelectPlan>),
    /// A set operation's combined rows.
    SetOp(Box<SetOpPlan>),
    /// A recursive common table expression's rows (`recursive.rs`).
    Recursive(std::sync::Arc<recursive::RecursiveCte>),
    /// The working table a recursive term reads (`recursive.rs`).
    WorkTable(std::sync::Arc<recursive::WorkTable>),
    /// A data-modifying statement's `RETURNING` rows (`dml_cte.rs`).
    Dml(std::sync::Arc<dml_cte::DmlCte>),
    /// A query with data-modifying statements: `body`'s rows, each of
    /// `ctes` run once (`dml_cte.rs`).
    WithDml {
        /// The main query.
        body: Box<SelectPlan>,
        /// Every data-modifying statement, in `WITH` order (the main one
        /// last, when the body is one).
        ctes: Vec<std::sync::Arc<dml_cte::DmlCte>>,
    },
    /// A table the engine scans on its own (a join the engine does not
    /// run): its query, with pushed-down `column = $k` filters.
    Table {
        /// The one-table engine query.
        query: Query,
        /// Engine parameter `$k+1` = this expression, coerced to the column type.
        pushed: Vec<(Expr, ColumnType)>,
    },
}

/// What a query level passes to the queries nested in it.
#[derive(Clone, Debug, Default)]
pub struct QueryCx {
    /// Common table expressions in view, innermost last: (name, column
    /// aliases, query).
    pub ctes: Vec<(String, Vec<String>, std::sync::Arc<sqlparser::ast::Query>)>,
    /// The data-modifying common table expressions in view: (name,
    /// statement).
    pub dml: Vec<(String, std::sync::Arc<dml_cte::DmlCte>)>,
    /// The enclosing query level, when this one is a subquery in an
    /// expression.
    pub outer: Option<std::sync::Arc<OuterScope>>,
    /// The names bound by `WITH RECURSIVE` in view (`recursive.rs`).
    pub recursive: Vec<(String, recursive::RecursiveName)>,
}

impl QueryCx {
    /// The common table expression `name`, innermost first.
    pub fn cte(&self, name: &str) -> Option<&(String, Vec<String>, std::sync::Arc<sqlparser::ast::Query>)> {
        self.ctes.iter().rev().find(|(n, _, _)| n == name)
    }

    /// What `name` reads when `WITH RECURSIVE` bound it last.
    pub fn recursive(&self, name: &str) -> Option<&recursive::RecursiveName> {
        self.recursive.iter().rev().find(|(n, _)| n == name).map(|(_, r)| r)
    }

    /// Binds `name` to a recursive CTE (or its working table), hiding any
    /// CTE of that name defined before.
    pub fn bind_recursive(&mut self, name: &str, binding: recursive::RecursiveName) {
        self.ctes.retain(|(n, _, _)| n != name);
        self.dml.retain(|(n, _)| n != name);
        self.recursive.push((name.to_owned(), binding));
    }

    /// The data-modifying common table expression `name`, if it is one
    /// and no plain one of that name was defined after it.
    pub fn dml_cte(&self, name: &str) -> Option<&std::sync::Arc<dml_cte::DmlCte>> {
        let plain = self.ctes.iter().rposition(|(n, _, _)| n == name);
        let found = self.dml.iter().rposition(|(n, _)| n == name)?;
        match plain {
            Some(p) if p > found => None,
            _ => Some(&self.dml[found].1),
        }
    }
}

/// A prepared statement's engine plan and how often it ran.
#[derive(Debug, Default)]
pub struct PlanCache {
    runs: u32,
    prepared: Option<Prepared>,
}

/// How the plan cache chooses (`plan_cache_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheMode {
    /// Custom plans for the first five executions, then generic.
    Auto,
    /// Always custom.
    ForceCustom,
    /// Always generic.
    ForceGeneric,
}

/// A compiled SELECT.
#[derive(Debug)]
pub struct SelectPlan {
    /// Input.
    pub source: Source,
    /// The input scope.
    pub scope: Scope,
    /// WHERE, minus what was pushed down.
    pub residual: Option<Expr>,
    /// Aggregate calls.
    pub aggs: Vec<AggSpec>,
    /// GROUP BY keys.
    pub group_by: Vec<Expr>,
    /// Whether the query aggregates (GROUP BY or an aggregate call).
    pub grouped: bool,
    /// Window function calls, each appending a column to the input rows
    /// (`window.rs`).
    pub windows: Vec<WindowPlan>,
    /// HAVING.
    pub having: Option<Expr>,
    /// Output expressions (visible, then hidden sort keys).
    pub outputs: Vec<Expr>,
    /// Output types.
    pub out_types: Vec<SqlType>,
    /// Visible output columns.
    pub fields: std::sync::Arc<[FieldInfo]>,
    /// Sort keys: output index, descending, nulls first.
    pub order: Vec<(usize, bool, bool)>,
    /// DISTINCT.
    pub distinct: bool,
    /// LIMIT.
    pub limit: Option<Expr>,
    /// OFFSET.
    pub offset: Option<Expr>,
}

/// What a compile needs from the session.
pub struct Catalog<'a> {
    /// The engine session (catalog look-ups only; no locks).
    pub session: &'a Session,
    /// The sequences (which columns are identity columns).
    pub sequences: &'a crate::sequence::Sequences,
}

/// A table's definition as the front end sees it.
#[derive(Clone, Debug)]
pub struct TableDef {
    /// Relation id (OID).
    pub oid: u32,
    /// Column names.
    pub names: Vec<String>,
    /// Engine column types.
    pub types: Vec<ColumnType>,
    /// Front-end types.
    pub sql_types: Vec<SqlType>,
    /// Each column's DEFAULT expression (SQL text), if it has one.
    pub defaults: Vec<Option<String>>,
}

impl Catalog<'_> {
    /// The `GENERATED ALWAYS AS IDENTITY` columns of `table`.
    pub fn always_identity(&self, table: &str) -> Vec<String> {
        let owned = self.sequences.owned_by(self.session.database(), table);
        let always =
            owned.iter().filter_map(|s| s.owner.as_ref().filter(|o| o.identity == crate::sequence::Identity::Always));
        always.map(|o| o.column.clone()).collect()
    }

    /// The attribute numbers (from 1) of table `oid`'s primary key, empty
    /// when it has none.
    pub fn primary_key(&self, oid: u32) -> Vec<i16> {
        let snapshot = self.session.engine().catalog().snapshot();
        let pk = snapshot.indexes_of(oid).find_map(|r| r.index.as_ref().filter(|i| i.primary));
        pk.map(|i| i.columns.iter().map(|&c| (c + 1) as i16).collect()).unwrap_or_default()
    }

    /// Table `oid`'s part in foreign keys: whether it references another
    /// table, whether one references it, and whether assigning `columns`
    /// changes a key (a unique index's column) — PostgreSQL's
    /// `FOR UPDATE` row lock rather than `FOR NO KEY UPDATE`.
    pub fn fk_roles(&self, oid: u32, columns: &[usize]) -> (bool, bool, bool) {
        let snapshot = self.session.engine().catalog().snapshot();
        let child = !crate::fk::partitions::keys_of(&snapshot, oid).is_empty();
        let parent = !crate::fk::partitions::referencing(&snapshot, oid).is_empty();
        (child, parent, crate::fk::is_key_update(&snapshot, oid, columns))
    }

    /// The table `name`, `42P01` if unknown.
    pub fn table(&self, name: &str) -> Result<TableDef, SqlError> {
        let engine = self.session.engine();
        let rel = engine
            .catalog()
            .relation(self.session.database(), name)
            .map_err(|_| SqlError::new(SqlState::UNDEFINED_TABLE, format!("relation \"{name}\" does not exist")))?;
        Ok(TableDef {
            oid: rel.id,
            names: rel.columns.iter().map(|c| c.name.clone()).collect(),
            types: rel.columns.iter().map(|c| c.ty).collect(),
            sql_types: rel.columns.iter().map(|c| SqlType::of_column(c.ty)).collect(),
            defaults: rel.columns.iter().map(|c| c.default.clone()).collect(),
        })
    }
}

/// Input to a SELECT's execution.
pub struct Run<'a> {
    /// Evaluation environment (parameters, services, and the engine
    /// session, which subqueries run on too).
    pub env: EvalEnv<'a>,
    /// The plan cache mode.
    pub cache_mode: CacheMode,
    /// Force a fresh (custom) plan: the statement is not a saved one.
    pub one_shot: bool,
}

impl Run<'_> {
    /// The engine session (`XX000` if a caller lent it elsewhere).
    pub fn session(&mut self) -> Result<&mut Session, SqlError> {
        self.env.session.as_deref_mut().ok_or_else(no_session)
    }

    /// A run of a nested query (a subquery in FROM, a set operation's
    /// branch): the same parameters, outer values, services and session,
    /// always a fresh plan.
    pub fn nested(&mut self) -> Run<'_> {
        Run {
            env: EvalEnv {
                params: self.env.params,
                aggs: &[],
                services: &mut *self.env.services,
                outer: self.env.outer,
                session: self.env.session.as_deref_mut(),
            },
            cache_mode: self.cache_mode,
            one_shot: true,
        }
    }
}

/// `XX000`: the engine session is not at hand (an engine callback holds it).
pub(crate) fn no_session() -> SqlError {
    SqlError::new(SqlState::INTERNAL_ERROR, "no engine session for this evaluation")
}

/// Parameter types and an expression compiler over a scope.
pub(super) fn compiler<'a>(
    scope: &'a Scope,
    params: &'a mut Vec<SqlType>,
    aggs: Option<&'a mut Vec<AggSpec>>,
) -> Compiler<'a> {
    Compiler { scope, params, aggs }
}

/// Checks the session's cancel flag (57014).
pub fn check_cancel(s: &dyn Services) -> Result<(), SqlError> {
    if s.cancel_flag().swap(false, crate::sync::atomic::Ordering::AcqRel) {
        return Err(SqlError::new(SqlState::QUERY_CANCELED, "canceling statement due to user request"));
    }
    Ok(())
}
