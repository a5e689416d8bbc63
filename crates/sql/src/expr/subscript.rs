//! Subscripts: `a[i]` of an array (lower bound 1) and of the vector
//! columns of the system catalogs (`indkey[0]`, `prattrs[s]`), which keep
//! PostgreSQL's text form (`1 2`, [`crate::catalog::datum`]) and, as
//! `int2vector`/`oidvector` do, count from 0. A subscript outside the
//! value, or a NULL one, gives NULL, as in PostgreSQL; slices (`a[1:2]`)
//! are not here.
//!
//! ```
//! use turnstile_sql::expr::subscript::element;
//! use turnstile_sql::value::Datum;
//! let a = Datum::Array(vec![Datum::Int(7), Datum::Int(8)]);
//! assert_eq!(element(&a, 2), Datum::Int(8));
//! assert_eq!(element(&a, 3), Datum::Null);
//! assert_eq!(element(&Datum::Text("3 1".into()), 0), Datum::Int(3));
//! ```

use super::functions::def::{Call, Eval, FuncDef};
use super::{Compiler, EvalEnv, Expr};
use crate::error::SqlError;
use crate::value::{Datum, SqlType};
use sqlparser::ast;

/// The element at `index` of an array (from 1) or of a vector's text
/// (from 0); NULL outside it.
pub fn element(value: &Datum, index: i64) -> Datum {
    match value {
        Datum::Array(items) => usize::try_from(index - 1).ok().and_then(|i| items.get(i)).cloned(),
        Datum::Text(vector) => usize::try_from(index)
            .ok()
            .and_then(|i| vector.split_ascii_whitespace().nth(i))
            .and_then(|s| s.parse::<i64>().ok())
            .map(Datum::Int),
        _ => None,
    }
    .unwrap_or(Datum::Null)
}

/// The subscript operation, called through [`Expr::Func`] (it is not a
/// function SQL can name: PostgreSQL's `array_subscript_handler` is its
/// subscripting support routine).
pub static SUBSCRIPT: FuncDef =
    FuncDef::custom("array_subscript_handler", |_, call: &Call<'_>| Err(call.no_such_arity()), Eval::Values(at));

fn at(a: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    Ok(match &a[1] {
        Datum::Int(i) => element(&a[0], *i),
        _ => Datum::Null,
    })
}

impl Compiler<'_> {
    /// `root[i][j]…`: each subscript applied in turn.
    pub(super) fn subscript(
        &mut self,
        root: &ast::Expr,
        chain: &[ast::AccessExpr],
    ) -> Result<(Expr, SqlType), SqlError> {
        let (mut x, mut t) = self.compile(root, None)?;
        for access in chain {
            let ast::AccessExpr::Subscript(ast::Subscript::Index { index }) = access else {
                return Err(SqlError::unsupported(&format!("the access {access}")));
            };
            let elem = match t {
                SqlType::Array(e) => *e,
                // A catalog vector column (`int2vector`, `oidvector`).
                SqlType::Text => SqlType::Int8,
                other => {
                    return Err(SqlError::new(
                        turnstile_lock::SqlState::DATATYPE_MISMATCH,
                        format!("cannot subscript type {} because it does not support subscripting", other.name()),
                    ))
                }
            };
            let (i, ti) = self.compile(index, Some(SqlType::Int4))?;
            if !(ti.is_integer() || ti == SqlType::Unknown) {
                return Err(SqlError::new(
                    turnstile_lock::SqlState::DATATYPE_MISMATCH,
                    "array subscript must have type integer",
                ));
            }
            x = Expr::Func(&SUBSCRIPT, vec![x, i]);
            t = elem;
        }
        Ok((x, t))
    }
}
