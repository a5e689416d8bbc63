//! Subqueries in expressions (PostgreSQL's `SubLink`): `EXISTS (…)`, a
//! scalar `(SELECT …)`, `x [NOT] IN (SELECT …)`, `x op ANY|ALL (SELECT
//! …)` and `ARRAY(SELECT …)`.
//!
//! # Design
//!
//! A subquery is planned by the plan layer *before* the expressions of its
//! query level are compiled (the plan layer has the catalog; this module
//! does not): each one becomes a [`PlannedSubquery`] in the level's
//! [`Scope`](super::Scope), and the compiler, meeting the subquery in an
//! expression, finds its plan there and builds an [`Expr::SubLink`].
//!
//! A correlated subquery reads columns of the enclosing row. While it is
//! planned, the enclosing scope is its [`OuterScope`]: a name the
//! subquery's own columns do not have is looked up there and *captured*,
//! as PostgreSQL's `PARAM_EXEC` parameters are: the enclosing level
//! evaluates each captured expression on its row ([`SubLink::captures`])
//! and the subquery reads the `k`th value as [`Expr::Outer`]`(k)`. A name
//! two levels out is captured by the middle level first, so every level
//! only ever reads its own row or its own captured values.
//!
//! Evaluation runs the subquery's plan through [`SubqueryPlan::rows`] with
//! the captured values and the engine session of the [`EvalEnv`]; the
//! engine takes the locks of the relations it reads, as for any query.
//!
//! NULL semantics are SQL's: `x IN (…)` is true when some row equals `x`,
//! else NULL when `x` or some row is NULL, else false; `ALL` is the dual;
//! a scalar subquery of no rows is NULL and of two rows `21000`.

use super::eval::quantify;
use super::{resolve_in, BinOp, EvalEnv, Expr, ScopeCol};
use crate::error::SqlError;
use crate::value::{Datum, SqlType};
use sqlparser::ast;
use std::sync::{Arc, Mutex};
use turnstile_lock::SqlState;

/// A planned query that an expression runs: its output types and rows.
pub trait SubqueryPlan: std::fmt::Debug + Send + Sync {
    /// The types of its (visible) output columns.
    fn types(&self) -> &[SqlType];
    /// Runs it: `env.outer` holds the values it captured from the
    /// enclosing row, `env.session` the engine session.
    fn rows(&self, env: &mut EvalEnv<'_>) -> Result<Vec<Vec<Datum>>, SqlError>;
}

/// A subquery of a query level, planned, with what it captured from that
/// level's row.
#[derive(Clone, Debug)]
pub struct PlannedSubquery {
    /// The subquery as parsed (what the compiler looks it up by).
    pub query: ast::Query,
    /// Its plan.
    pub plan: Arc<dyn SubqueryPlan>,
    /// Expressions on the enclosing level's row whose values the plan
    /// reads as [`Expr::Outer`]`(k)`.
    pub captures: Vec<Expr>,
}

/// What a subquery expression tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubLinkKind {
    /// `EXISTS (…)`: whether it returns a row.
    Exists,
    /// `(SELECT …)`: its one value (NULL for no row, `21000` for two).
    Scalar,
    /// `x op ANY (…)` (`IN` is `= ANY`): some row satisfies `op`.
    Any(BinOp),
    /// `x op ALL (…)` (`NOT IN` is `NOT (= ANY)`): every row does.
    All(BinOp),
    /// `ARRAY(SELECT …)`: its one column's values as an array.
    Array,
}

/// A subquery in an expression.
#[derive(Clone, Debug)]
pub struct SubLink {
    /// What it tests.
    pub kind: SubLinkKind,
    /// The plan.
    pub plan: Arc<dyn SubqueryPlan>,
    /// Evaluated on the current row, passed as the subquery's
    /// [`EvalEnv::outer`].
    pub captures: Vec<Expr>,
    /// The left operand of `ANY`/`ALL`, brought to `cmp_type`.
    pub lhs: Option<Expr>,
    /// The type `ANY`/`ALL` compare in; the subquery's column is cast to
    /// it from `rhs_type` when they differ.
    pub cmp_type: SqlType,
    /// The subquery's column type.
    pub rhs_type: SqlType,
}

// Two links are the same when they run the same plan on the same
// captures (plans have no equality of their own).
impl PartialEq for SubLink {
    fn eq(&self, other: &SubLink) -> bool {
        self.kind == other.kind
            && Arc::ptr_eq(&self.plan, &other.plan)
            && self.captures == other.captures
            && self.lhs == other.lhs
    }
}

/// The enclosing query level of a subquery being planned: its columns,
/// its own enclosing level, and what the subquery captured from it.
#[derive(Debug, Default)]
pub struct OuterScope {
    /// The enclosing level's columns.
    pub cols: Vec<ScopeCol>,
    /// The level around that one, if it is itself a subquery.
    pub parent: Option<Arc<OuterScope>>,
    /// Captured expressions on the enclosing level's row (a column of it,
    /// or a value it captured itself), in [`Expr::Outer`] order.
    pub captures: Mutex<Vec<Expr>>,
}

impl OuterScope {
    /// The captured expressions (after planning).
    pub fn take_captures(&self) -> Vec<Expr> {
        self.captures.lock().map(|mut c| std::mem::take(&mut *c)).unwrap_or_default()
    }

    /// `[qual.]name` looked up in the enclosing levels: the outer value
    /// that carries it into the subquery and its type, `None` when no
    /// level has it.
    pub fn resolve(&self, qual: Option<&str>, name: &str) -> Result<Option<(Expr, SqlType)>, SqlError> {
        let (captured, ty) = match resolve_in(&self.cols, qual, name, &[]) {
            Ok(c) => (Expr::Col(c), self.cols[c].ty),
            Err(e) if e.code == SqlState::AMBIGUOUS_COLUMN => return Err(e),
            Err(_) => match &self.parent {
                Some(p) => match p.resolve(qual, name)? {
                    Some(found) => found,
                    None => return Ok(None),
                },
                None => return Ok(None),
            },
        };
        let mut caps =
            self.captures.lock().map_err(|_| SqlError::new(SqlState::INTERNAL_ERROR, "subquery captures poisoned"))?;
        let k = match caps.iter().position(|c| *c == captured) {
            Some(k) => k,
            None => {
                caps.push(captured);
                caps.len() - 1
            }
        };
        Ok(Some((Expr::Outer(k), ty)))
    }
}

/// `cardinality_violation`.
const CARDINALITY_VIOLATION: SqlState = SqlState::from_code("21000");

/// `21000`: a scalar subquery returned more than one row.
fn cardinality() -> SqlError {
    SqlError::new(CARDINALITY_VIOLATION, "more than one row returned by a subquery used as an expression")
}

impl SubLink {
    /// Runs the subquery for `row` and applies the test.
    pub fn eval(&self, row: &[Datum], env: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
        let mut outer = Vec::with_capacity(self.captures.len());
        for c in &self.captures {
            outer.push(c.eval(row, env)?);
        }
        let lhs = self.lhs.as_ref().map(|l| l.eval(row, env)).transpose()?;
        let rows = {
            let mut sub = EvalEnv {
                params: env.params,
                aggs: &[],
                services: &mut *env.services,
                outer: &outer,
                session: env.session.as_deref_mut(),
            };
            self.plan.rows(&mut sub)?
        };
        match self.kind {
            SubLinkKind::Exists => Ok(Datum::Bool(!rows.is_empty())),
            SubLinkKind::Scalar => match rows.len() {
                0 => Ok(Datum::Null),
                1 => Ok(rows.into_iter().next().and_then(|r| r.into_iter().next()).unwrap_or(Datum::Null)),
                _ => Err(cardinality()),
            },
            SubLinkKind::Array => {
                Ok(Datum::Array(rows.into_iter().map(|r| r.into_iter().next().unwrap_or(Datum::Null)).collect()))
            }
            SubLinkKind::Any(op) => self.quantified(op, lhs, rows, true),
            SubLinkKind::All(op) => self.quantified(op, lhs, rows, false),
        }
    }

    /// `lhs op ANY` (`any`) or `ALL` over the first column of `rows`.
    fn quantified(&self, op: BinOp, lhs: Option<Datum>, rows: Vec<Vec<Datum>>, any: bool) -> Result<Datum, SqlError> {
        let values = rows.into_iter().map(|r| r.into_iter().next().unwrap_or(Datum::Null));
        quantify(op, self.cmp_type, self.rhs_type, lhs.unwrap_or(Datum::Null), values, any)
    }
}

impl super::Compiler<'_> {
    /// A name the scope does not have (`err`), looked up in the enclosing
    /// query levels: an outer reference, or `err`.
    pub(super) fn outer_column(
        &mut self,
        qual: Option<&str>,
        name: &str,
        err: SqlError,
    ) -> Result<(Expr, SqlType), SqlError> {
        if err.code == SqlState::AMBIGUOUS_COLUMN {
            return Err(err);
        }
        match &self.scope.outer {
            Some(outer) => outer.resolve(qual, name)?.ok_or(err),
            None => Err(err),
        }
    }

    /// The subquery `q` (planned for this scope) as a [`SubLink`] of
    /// `kind`, with `lhs` as the left operand of `ANY`/`ALL`.
    pub(super) fn sublink(
        &mut self,
        q: &ast::Query,
        kind: SubLinkKind,
        lhs: Option<&ast::Expr>,
    ) -> Result<(Expr, SqlType), SqlError> {
        let planned = self
            .scope
            .subqueries
            .iter()
            .find(|p| p.query == *q)
            .cloned()
            .ok_or_else(|| SqlError::unsupported("a subquery in this position"))?;
        let types = planned.plan.types();
        let rhs_type = match (kind, types) {
            (SubLinkKind::Exists, _) => SqlType::Bool,
            (_, [t]) => *t,
            (SubLinkKind::Scalar | SubLinkKind::Array, _) => {
                return Err(SqlError::new(SqlState::SYNTAX_ERROR, "subquery must return only one column"))
            }
            _ => {
                let msg =
                    if types.len() > 1 { "subquery has too many columns" } else { "subquery has too few columns" };
                return Err(SqlError::new(SqlState::SYNTAX_ERROR, msg));
            }
        };
        let (lhs, cmp_type) = match lhs {
            Some(l) => {
                let (x, t) = self.compile(l, Some(rhs_type))?;
                let op = match kind {
                    SubLinkKind::Any(op) | SubLinkKind::All(op) => op,
                    _ => BinOp::Eq,
                };
                let ct = super::comparison_type(t, rhs_type).ok_or_else(|| {
                    SqlError::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!("operator does not exist: {} {} {}", t.name(), op_symbol(op), rhs_type.name()),
                    )
                })?;
                (Some(self.coerce(x, t, ct)?), ct)
            }
            None => (None, rhs_type),
        };
        let ty = match kind {
            SubLinkKind::Scalar => rhs_type,
            SubLinkKind::Array => SqlType::array_of(rhs_type)
                .ok_or_else(|| SqlError::unsupported(&format!("arrays of type {}", rhs_type.name())))?,
            _ => SqlType::Bool,
        };
        let link = SubLink { kind, plan: planned.plan, captures: planned.captures, lhs, cmp_type, rhs_type };
        Ok((Expr::SubLink(Box::new(link)), ty))
    }
}

/// The SQL spelling of a comparison operator (for messages).
pub(crate) fn op_symbol(op: BinOp) -> &'static str {
    match op {
        BinOp::Eq => "=",
        BinOp::Ne => "<>",
        BinOp::Lt => "<",
        BinOp::Le => "<=",
        BinOp::Gt => ">",
        BinOp::Ge => ">=",
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::Mod => "%",
        BinOp::Concat => "||",
    }
}
