//! `x ~ ANY (array)` and its kin (`~*`, `!~`, `!~*`; `ALL`): a regular
//! expression match of `x` against each pattern of the array, folded with
//! SQL's three-valued OR (`ANY`) or AND (`ALL`), as PostgreSQL's
//! `ScalarArrayOpExpr` folds any operator: true as soon as one pattern
//! matches (ANY), else NULL when `x` or a pattern is NULL, else false; an
//! empty array makes ANY false and ALL true; a NULL array gives NULL.
//!
//! The call compiles to [`Expr::Func`] of [`REGEX_ANY`] over `x`, the
//! array and a constant naming the operator ([`mode`]); each pattern is
//! compiled when the row is evaluated (`2201B` for a bad one).

use super::functions::def::{Call, Eval, FuncDef};
use super::regex::Pattern;
use super::{Compiler, EvalEnv, Expr};
use crate::error::SqlError;
use crate::value::{Datum, SqlType};
use sqlparser::ast;
use turnstile_lock::SqlState;

/// `case_insensitive` bit of the mode argument (`~*`, `!~*`).
const CASE_INSENSITIVE: i64 = 1;
/// `negated` bit of the mode argument (`!~`, `!~*`).
const NEGATED: i64 = 2;
/// `ALL` bit of the mode argument (else `ANY`).
const ALL: i64 = 4;

/// The mode argument of [`REGEX_ANY`] for an operator and quantifier.
pub fn mode(case_insensitive: bool, negated: bool, all: bool) -> i64 {
    i64::from(case_insensitive) * CASE_INSENSITIVE + i64::from(negated) * NEGATED + i64::from(all) * ALL
}

/// The quantified match, called through [`Expr::Func`] (no SQL name).
pub static REGEX_ANY: FuncDef =
    FuncDef::custom("textregexeq_any", |_, call: &Call<'_>| Err(call.no_such_arity()), Eval::Values(regex_any))
        .called_on_null();

fn regex_any(a: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    let Datum::Array(patterns) = &a[1] else { return Ok(Datum::Null) };
    let m = if let Datum::Int(m) = a[2] { m } else { 0 };
    let any = m & ALL == 0;
    let x = a[0].to_text(SqlType::Text).filter(|_| !a[0].is_null());
    let mut saw_null = false;
    for p in patterns {
        let (Some(s), Some(source)) = (x.as_deref(), p.to_text(SqlType::Text).filter(|_| !p.is_null())) else {
            saw_null = true;
            continue;
        };
        let hit = Pattern::new(&source, m & CASE_INSENSITIVE != 0)?.is_match(s) != (m & NEGATED != 0);
        if hit == any {
            return Ok(Datum::Bool(any));
        }
    }
    Ok(if saw_null { Datum::Null } else { Datum::Bool(!any) })
}

/// The regular-expression operator `op` is: (case-insensitive, negated).
pub(super) fn regex_operator(op: &ast::BinaryOperator) -> Option<(bool, bool)> {
    use ast::BinaryOperator as B;
    Some(match op {
        B::PGRegexMatch => (false, false),
        B::PGRegexIMatch => (true, false),
        B::PGRegexNotMatch => (false, true),
        B::PGRegexNotIMatch => (true, true),
        _ => return None,
    })
}

impl Compiler<'_> {
    /// `left op ANY|ALL (right)` for a regular-expression `op` over an
    /// array of patterns.
    pub(super) fn regex_quantified(
        &mut self,
        left: &ast::Expr,
        right: &ast::Expr,
        (case_insensitive, negated): (bool, bool),
        any: bool,
    ) -> Result<(Expr, SqlType), SqlError> {
        let (x, tx) = self.compile(left, Some(SqlType::Text))?;
        let (arr, ta) = self.compile(right, Some(SqlType::Array(&SqlType::Text)))?;
        let elem = ta.element().unwrap_or(ta);
        if !tx.is_string() || !elem.is_string() {
            return Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("operator does not exist: {} ~ {}", tx.name(), elem.name()),
            ));
        }
        let x = self.coerce(x, tx, SqlType::Text)?;
        let m = Expr::Const(Datum::Int(mode(case_insensitive, negated, !any)));
        Ok((Expr::Func(&REGEX_ANY, vec![x, arr, m]), SqlType::Bool))
    }
}
