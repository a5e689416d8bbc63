//! Advisory-lock functions: `pg_advisory_lock`, `pg_try_advisory_lock`,
//! `pg_advisory_unlock`, `pg_advisory_xact_lock`,
//! `pg_try_advisory_xact_lock`, their `_shared` forms (each with a
//! `bigint` key or two `int` keys) and `pg_advisory_unlock_all`, on the
//! engine's advisory locks (`turnstile_engine::advisory`).
//!
//! They take locks in the session's lock-manager backend, so they run as
//! a statement of their own: a query that is exactly one such call
//! (`SELECT pg_advisory_lock($1) [AS name]`, no `FROM`) — the form
//! applications and psql sessions use. Called as an item of another select
//! list (over a table, beside other items) they are `0A000`; nested in a
//! larger expression, `42883` — never a wrong answer.

use crate::error::{Severity, SqlError};
use crate::expr::{object_name, Compiler, EvalEnv, Scope};
use crate::session::{eng, SqlSession};
use crate::statement::{FieldInfo, Outcome};
use crate::value::{Datum, SqlType};
use sqlparser::ast;
use turnstile_engine::advisory::{AdvisoryKey, AdvisoryLevel};
use turnstile_lock::SqlState;

/// What an advisory-lock function does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    /// `pg_[try_]advisory[_xact]_lock[_shared]`.
    Lock { level: AdvisoryLevel, wait: bool },
    /// `pg_advisory_unlock[_shared]`.
    Unlock,
    /// `pg_advisory_unlock_all`.
    UnlockAll,
}

/// One advisory-lock call: the function, and the result column's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Call {
    pub(crate) op: Op,
    pub(crate) shared: bool,
    /// The function's name (PostgreSQL's result column name) or the alias.
    pub(crate) column: String,
}

impl Call {
    /// `void` (`pg_advisory_lock`, …) or `boolean` (the `try` and unlock forms).
    fn returns_void(&self) -> bool {
        matches!(self.op, Op::Lock { wait: true, .. } | Op::UnlockAll)
    }

    /// The result column.
    pub(crate) fn field(&self) -> FieldInfo {
        let (type_oid, type_len) = if self.returns_void() { (2278, 4) } else { (SqlType::Bool.oid(), 1) };
        FieldInfo { name: self.column.clone(), table_oid: 0, column: 0, type_oid, type_len, type_modifier: -1 }
    }
}

/// The advisory function called `name`, if it is one.
fn op_named(name: &str) -> Option<(Op, bool)> {
    let (base, shared) = match name.strip_suffix("_shared") {
        Some(b) => (b, true),
        None => (name, false),
    };
    let lock = |level, wait| Some((Op::Lock { level, wait }, shared));
    match base {
        "pg_advisory_lock" => lock(AdvisoryLevel::Session, true),
        "pg_try_advisory_lock" => lock(AdvisoryLevel::Session, false),
        "pg_advisory_xact_lock" => lock(AdvisoryLevel::Transaction, true),
        "pg_try_advisory_xact_lock" => lock(AdvisoryLevel::Transaction, false),
        "pg_advisory_unlock" => Some((Op::Unlock, shared)),
        "pg_advisory_unlock_all" if !shared => Some((Op::UnlockAll, false)),
        _ => None,
    }
}

/// `query` as one advisory-lock call, if it is `SELECT f(args) [AS name]`
/// with `f` an advisory function and nothing else; `0A000` if an advisory
/// function is an item of a select list of another shape. (Nested deeper,
/// the expression compiler does not know it: `42883`.)
pub(crate) fn as_call(query: &ast::Query) -> Result<Option<(Call, Vec<ast::Expr>)>, SqlError> {
    let ast::SetExpr::Select(sel) = query.body.as_ref() else { return Ok(None) };
    // Only the select list's top-level calls are looked at: this runs for
    // every SELECT parsed, so it must not walk or print the whole query.
    let advisory = |e: &ast::Expr| match e {
        ast::Expr::Function(f) => object_name(&f.name).ok().and_then(|n| op_named(&n).map(|op| (n, op, f.clone()))),
        _ => None,
    };
    let mut calls = sel.projection.iter().filter_map(|p| match p {
        ast::SelectItem::UnnamedExpr(e) => advisory(e).map(|c| (c, None)),
        ast::SelectItem::ExprWithAlias { expr, alias } => {
            advisory(expr).map(|c| (c, Some(crate::expr::ident_name(alias))))
        }
        _ => None,
    });
    let Some(((name, (op, shared), f), alias)) = calls.next() else { return Ok(None) };
    let plain = query.with.is_none()
        && query.order_by.is_none()
        && query.limit_clause.is_none()
        && query.locks.is_empty()
        && sel.from.is_empty()
        && sel.selection.is_none()
        && sel.having.is_none()
        && sel.distinct.is_none()
        && sel.projection.len() == 1;
    if !plain {
        return Err(SqlError::unsupported("an advisory-lock function inside a larger query"));
    }
    let call = Call { op, shared, column: alias.unwrap_or(name) };
    let ast::FunctionArguments::List(list) = &f.args else {
        return if f.args == ast::FunctionArguments::None && call.op == Op::UnlockAll {
            Ok(Some((call, Vec::new())))
        } else {
            Err(no_such_function(&call, 0))
        };
    };
    let mut args = Vec::with_capacity(list.args.len());
    for a in &list.args {
        match a {
            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => args.push(e.clone()),
            _ => return Err(SqlError::unsupported("named or * arguments to an advisory-lock function")),
        }
    }
    let ok = if call.op == Op::UnlockAll { args.is_empty() } else { matches!(args.len(), 1 | 2) };
    if !ok {
        return Err(no_such_function(&call, args.len()));
    }
    Ok(Some((call, args)))
}

fn no_such_function(call: &Call, n: usize) -> SqlError {
    let name = call.column.clone();
    SqlError::new(
        SqlState::UNDEFINED_FUNCTION,
        format!("function {name}({}) does not exist", vec!["unknown"; n].join(", ")),
    )
}

/// Compiles the arguments: one `bigint` key or two `int` keys. The
/// parameter types they infer (Describe) are added to `params`.
pub(crate) fn compile_args(args: &[ast::Expr], params: &mut Vec<SqlType>) -> Result<Vec<crate::expr::Expr>, SqlError> {
    let empty = Scope::default();
    let want = if args.len() == 1 { SqlType::Int8 } else { SqlType::Int4 };
    let mut out = Vec::with_capacity(args.len());
    for a in args {
        let (x, t) = Compiler { scope: &empty, params, aggs: None }.compile(a, Some(want))?;
        out.push(if t == want { x } else { crate::expr::Expr::Cast(Box::new(x), t, want) });
    }
    Ok(out)
}

impl SqlSession {
    /// Runs one advisory-lock call.
    pub(crate) fn run_advisory(
        &mut self,
        call: &Call,
        args: &[ast::Expr],
        values: &[Datum],
    ) -> Result<Outcome, SqlError> {
        let mut ptypes = values.iter().map(|_| SqlType::Unknown).collect();
        let exprs = compile_args(args, &mut ptypes)?;
        let mut keys = Vec::with_capacity(exprs.len());
        for x in &exprs {
            let d = x.eval(&[], &mut EvalEnv { params: values, aggs: &[], services: &mut self.ctx })?;
            keys.push(match d {
                Datum::Int(v) => v,
                // A NULL key: the function is strict, its result NULL.
                _ => return Ok(self.advisory_row(call, None)),
            });
        }
        let key = match keys.as_slice() {
            [] => None,
            [k] => Some(AdvisoryKey::Int8(*k)),
            [a, b] => Some(AdvisoryKey::Int4Pair(*a as i32, *b as i32)),
            _ => return Err(no_such_function(call, keys.len())),
        };
        let out = match (call.op, key) {
            (Op::UnlockAll, _) => {
                eng(self.es.advisory_unlock_all())?;
                None
            }
            (Op::Lock { level, wait }, Some(k)) => {
                let got = eng(self.es.advisory_lock(k, call.shared, level, wait))?;
                (!wait).then_some(got)
            }
            (Op::Unlock, Some(k)) => {
                let released = eng(self.es.advisory_unlock(k, call.shared))?;
                if !released {
                    let mode = if call.shared { "ShareLock" } else { "ExclusiveLock" };
                    self.notice(Severity::Warning, SqlState::WARNING, format!("you don't own a lock of type {mode}"));
                }
                Some(released)
            }
            (Op::Lock { .. } | Op::Unlock, None) => return Err(no_such_function(call, 0)),
        };
        Ok(self.advisory_row(call, Some(out)))
    }

    /// The one-row result: `out` is `None` for a `void` result, `Some(b)`
    /// for a boolean; an outer `None` is a NULL (a NULL key).
    fn advisory_row(&self, call: &Call, out: Option<Option<bool>>) -> Outcome {
        let value = match out {
            None => None,
            Some(None) => Some(String::new()),
            Some(Some(b)) => Some(if b { "t" } else { "f" }.to_owned()),
        };
        Outcome::Rows { fields: vec![call.field()].into(), rows: vec![vec![value]].into(), tag: "SELECT 1".into() }
    }
}
