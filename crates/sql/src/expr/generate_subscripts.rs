//! `generate_subscripts(array, dim)` in the select list: the subscripts
//! of the array's dimension `dim` (it has one), from its lower bound, as
//! SQLAlchemy's Inspector numbers an index's columns
//! (`generate_subscripts(pg_index.indkey, 1)`). An array counts from 1, a
//! catalog vector (`int2vector`, `oidvector`) from 0, as in PostgreSQL.
//!
//! The call compiles to [`Expr::Func`] of [`GENERATE_SUBSCRIPTS_IN_SELECT`];
//! the select list's `ProjectSet` (`plan/select_srf.rs`) evaluates it with
//! [`subscripts`]; anywhere else it is `0A000`.
//!
//! ```
//! use turnstile_sql::expr::generate_subscripts::subscripts;
//! use turnstile_sql::value::Datum;
//! assert_eq!(subscripts(&Datum::Text("3 1".into()), 1), [Datum::Int(0), Datum::Int(1)]);
//! assert_eq!(subscripts(&Datum::Array(vec![Datum::Null]), 1), [Datum::Int(1)]);
//! assert!(subscripts(&Datum::Array(vec![Datum::Null]), 2).is_empty());
//! ```

use super::functions::def::{Call, Eval, FuncDef};
use super::{Compiler, Expr};
use crate::error::SqlError;
use crate::value::{Datum, SqlType};
use sqlparser::ast;
use turnstile_lock::SqlState;

/// The call in the select list (see the module header).
pub static GENERATE_SUBSCRIPTS_IN_SELECT: FuncDef = FuncDef::custom(
    "generate_subscripts",
    |_, call: &Call<'_>| Err(call.no_such_arity()),
    Eval::Values(|_, _| Err(SqlError::unsupported("a set-returning function (generate_subscripts) here"))),
);

/// The subscripts of `value`'s dimension `dim`; none for NULL or another
/// dimension.
pub fn subscripts(value: &Datum, dim: i64) -> Vec<Datum> {
    let (lower, n) = match value {
        Datum::Array(items) => (1, items.len()),
        Datum::Text(vector) => (0, vector.split_ascii_whitespace().count()),
        _ => return Vec::new(),
    };
    if dim != 1 {
        return Vec::new();
    }
    (0..n as i64).map(|i| Datum::Int(lower + i)).collect()
}

impl Compiler<'_> {
    /// `generate_subscripts(array, dim)`.
    pub(super) fn generate_subscripts_call(&mut self, args: &[ast::Expr]) -> Result<(Expr, SqlType), SqlError> {
        let [arr, dim] = args else {
            return Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("function generate_subscripts with {} arguments does not exist", args.len()),
            ));
        };
        let (a, ta) = self.compile(arr, None)?;
        let (d, td) = self.compile(dim, Some(SqlType::Int4))?;
        if !(matches!(ta, SqlType::Array(_) | SqlType::Text) && (td.is_integer() || td == SqlType::Unknown)) {
            return Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("function generate_subscripts({}, {}) does not exist", ta.name(), td.name()),
            ));
        }
        Ok((Expr::Func(&GENERATE_SUBSCRIPTS_IN_SELECT, vec![a, d]), SqlType::Int4))
    }
}
