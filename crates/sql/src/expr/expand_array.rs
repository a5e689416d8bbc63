//! `information_schema._pg_expandarray(anyarray)`: PostgreSQL's helper
//! that returns `SETOF RECORD (x anyelement, n int)`, one record per
//! element with its position from 1, which pgjdbc's `getPrimaryKeys` and
//! `getIndexInfo` call in the select list over `pg_index.indkey`
//! (`(information_schema._pg_expandarray(i.indkey)).n`, and the record
//! itself as a column read later as `(result.KEYS).x`).
//!
//! The call compiles to [`Expr::Func`] of [`EXPANDARRAY_IN_SELECT`] typed
//! [`SqlType::Record`]; the select list's `ProjectSet`
//! (`plan/select_srf.rs`) evaluates it with [`expand_array`]. Evaluating
//! it anywhere else is `0A000`, as for a select-list `unnest`. The
//! argument is an array or a catalog vector (`int2vector`,
//! `oidvector`), whose elements turnstile reads as `bigint`
//! (`subscript.rs`).
//!
//! ```
//! use turnstile_sql::expr::expand_array::expand_array;
//! use turnstile_sql::value::Datum;
//! let rows = expand_array(&Datum::Text("3 1".into()));
//! assert_eq!(rows, [Datum::Array(vec![Datum::Int(3), Datum::Int(1)]), Datum::Array(vec![Datum::Int(1), Datum::Int(2)])]);
//! assert!(expand_array(&Datum::Null).is_empty());
//! ```

use super::functions::def::{Call, Eval, FuncDef};
use super::{Compiler, Expr};
use crate::error::SqlError;
use crate::value::{Datum, SqlType};
use sqlparser::ast;
use turnstile_lock::SqlState;

/// The call in the select list (see the module header).
pub static EXPANDARRAY_IN_SELECT: FuncDef = FuncDef::custom(
    "_pg_expandarray",
    |_, call: &Call<'_>| Err(call.no_such_arity()),
    Eval::Values(|_, _| Err(SqlError::unsupported("a set-returning function (_pg_expandarray) here"))),
);

/// Whether `name` is `information_schema._pg_expandarray` (the function
/// is only reached through its schema, as in PostgreSQL, whose search
/// path does not hold `information_schema`).
pub(crate) fn is_expand_array(name: &ast::ObjectName) -> bool {
    let parts: Vec<String> = name.0.iter().filter_map(|p| p.as_ident().map(super::ident_name)).collect();
    matches!(parts.as_slice(), [schema, f] if schema == "information_schema" && f == "_pg_expandarray")
}

/// The records `(x, n)` of `value`'s elements; none for NULL.
pub fn expand_array(value: &Datum) -> Vec<Datum> {
    let items: Vec<Datum> = match value {
        Datum::Array(items) => items.clone(),
        Datum::Text(vector) => {
            vector.split_ascii_whitespace().map(|s| s.parse().map_or(Datum::Null, Datum::Int)).collect()
        }
        _ => Vec::new(),
    };
    items.into_iter().enumerate().map(|(i, x)| Datum::Array(vec![x, Datum::Int(i as i64 + 1)])).collect()
}

/// The record type `(x elem, n int4)`.
fn record_of(elem: SqlType) -> Option<SqlType> {
    const N: (&str, SqlType) = ("n", SqlType::Int4);
    Some(SqlType::Record(match elem {
        SqlType::Int2 => &[("x", SqlType::Int2), N],
        SqlType::Int4 => &[("x", SqlType::Int4), N],
        SqlType::Int8 => &[("x", SqlType::Int8), N],
        SqlType::Oid => &[("x", SqlType::Oid), N],
        SqlType::Text => &[("x", SqlType::Text), N],
        SqlType::Name => &[("x", SqlType::Name), N],
        SqlType::Bool => &[("x", SqlType::Bool), N],
        SqlType::QChar => &[("x", SqlType::QChar), N],
        SqlType::Float8 => &[("x", SqlType::Float8), N],
        _ => return None,
    }))
}

impl Compiler<'_> {
    /// `information_schema._pg_expandarray(arg)`.
    pub(super) fn expand_array_call(&mut self, args: &[ast::Expr]) -> Result<(Expr, SqlType), SqlError> {
        let [arg] = args else {
            return Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("function information_schema._pg_expandarray with {} arguments does not exist", args.len()),
            ));
        };
        let (x, t) = self.compile(arg, None)?;
        let elem = match t {
            SqlType::Array(e) => *e,
            // A catalog vector column (`indkey`).
            SqlType::Text => SqlType::Int8,
            other => {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!("function information_schema._pg_expandarray({}) does not exist", other.name()),
                ))
            }
        };
        let ty = record_of(elem).ok_or_else(|| SqlError::unsupported(&format!("_pg_expandarray over {}", t.name())))?;
        Ok((Expr::Func(&EXPANDARRAY_IN_SELECT, vec![x]), ty))
    }
}
