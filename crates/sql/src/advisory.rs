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

use crate::error::SqlError;
use crate::expr::{object_name, Compiler, Scope};
use crate::value::SqlType;
use sqlparser::ast;
use turnstile_engine::advisory::AdvisoryLevel;
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
    pub(crate) fn returns_void(&self) -> bool {
        matches!(self.op, Op::Lock { wait: true, .. } | Op::UnlockAll)
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

pub(crate) fn no_such_function(call: &Call, n: usize) -> SqlError {
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
