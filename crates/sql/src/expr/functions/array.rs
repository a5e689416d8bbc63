//! Array functions: `array_to_string`, `array_length`, `cardinality`,
//! `array_lower`/`array_upper`, `array_remove`, and `array_cat`/
//! `array_append`/`array_prepend`, which are also the `||` operator on arrays
//! ([`concat`]).
//!
//! Arrays here are one-dimensional with lower bound 1
//! ([`crate::value::array`]), so dimension 1 is the only one with a
//! length; any other is NULL, as PostgreSQL answers for a dimension an
//! array does not have. An empty array has no dimensions at all
//! (`array_length('{}'::int[], 1)` is NULL).
//!
//! `||` follows PostgreSQL's operator resolution: `anyarray || anyarray`
//! (`array_cat`, which takes a NULL side as an empty array),
//! `anyarray || anyelement` (`array_append`) and `anyelement || anyarray`
//! (`array_prepend`); an untyped literal on one side is read as the other
//! side's array type.
//!
//! ```
//! use turnstile_sql::expr::functions::lookup;
//! assert!(lookup("array_to_string").is_some());
//! assert!(lookup("array_cat").is_some());
//! ```

use super::def::{Call, Eval, FuncDef};
use crate::error::SqlError;
use crate::expr::{Compiler, EvalEnv, Expr};
use crate::value::{Datum, SqlType};
use turnstile_lock::SqlState;

/// `array_to_string(array, delimiter [, null_string])`: the elements'
/// text joined by `delimiter`, NULL elements skipped (or written as
/// `null_string`). NULL when the array or the delimiter is NULL.
pub static ARRAY_TO_STRING: FuncDef =
    FuncDef::custom("array_to_string", resolve_to_string, Eval::Values(array_to_string)).called_on_null();

/// `array_length(array, dimension)`.
pub static ARRAY_LENGTH: FuncDef =
    FuncDef::custom("array_length", resolve_dimension, Eval::Values(|a, _| Ok(dimension(a, |n| n as i64))));

/// `array_upper(array, dimension)`: the last subscript.
pub static ARRAY_UPPER: FuncDef =
    FuncDef::custom("array_upper", resolve_dimension, Eval::Values(|a, _| Ok(dimension(a, |n| n as i64))));

/// `array_lower(array, dimension)`: the first subscript, always 1 here.
pub static ARRAY_LOWER: FuncDef =
    FuncDef::custom("array_lower", resolve_dimension, Eval::Values(|a, _| Ok(dimension(a, |_| 1))));

/// `cardinality(array)`: the number of elements (0 for an empty array).
pub static CARDINALITY: FuncDef = FuncDef::custom("cardinality", resolve_cardinality, Eval::Values(cardinality));

/// `array_cat(a, b)`: `a`'s elements then `b`'s; a NULL side counts as
/// empty (NULL only when both are).
pub static ARRAY_CAT: FuncDef = FuncDef::custom("array_cat", resolve_cat, Eval::Values(array_cat)).called_on_null();

/// `array_append(array, element)`: a NULL array is empty.
pub static ARRAY_APPEND: FuncDef =
    FuncDef::custom("array_append", resolve_append, Eval::Values(array_append)).called_on_null();

/// `array_prepend(element, array)`: a NULL array is empty.
pub static ARRAY_PREPEND: FuncDef =
    FuncDef::custom("array_prepend", resolve_prepend, Eval::Values(array_prepend)).called_on_null();

/// `array_remove(array, element)`: the array without the elements equal
/// to `element` (without its NULLs when `element` is NULL); NULL for a
/// NULL array.
pub static ARRAY_REMOVE: FuncDef =
    FuncDef::custom("array_remove", resolve_append, Eval::Values(array_remove)).called_on_null();

/// `42883` for an argument that is not an array.
fn not_array(name: &str, t: SqlType) -> SqlError {
    SqlError::new(SqlState::UNDEFINED_FUNCTION, format!("function {name}({}) does not exist", t.name()))
}

/// An array argument: its expression and array type (an untyped literal
/// is read as `text[]`).
fn array_arg(c: &mut Compiler<'_>, e: &sqlparser::ast::Expr, name: &str) -> Result<(Expr, SqlType), SqlError> {
    let (x, t) = c.compile(e, None)?;
    match t {
        SqlType::Array(_) => Ok((x, t)),
        SqlType::Unknown => {
            let text_array = SqlType::Array(&SqlType::Text);
            c.compile(e, Some(text_array))
        }
        t => Err(not_array(name, t)),
    }
}

/// A text argument.
fn text_arg(c: &mut Compiler<'_>, e: &sqlparser::ast::Expr) -> Result<Expr, SqlError> {
    let (x, t) = c.compile(e, Some(SqlType::Text))?;
    c.coerce(x, t, SqlType::Text)
}

/// `array_to_string`: the array is cast to `text[]` (each element by its
/// type's output function), then joined.
fn resolve_to_string(c: &mut Compiler<'_>, call: &Call<'_>) -> Result<(Expr, SqlType), SqlError> {
    call.arity(2, 3)?;
    let (arr, t) = array_arg(c, &call.args[0], call.name)?;
    let text_array = SqlType::Array(&SqlType::Text);
    let mut args = vec![if t == text_array { arr } else { Expr::Cast(Box::new(arr), t, text_array) }];
    for a in &call.args[1..] {
        args.push(text_arg(c, a)?);
    }
    Ok((Expr::Func(call.def, args), SqlType::Text))
}

fn array_to_string(a: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    let (Datum::Array(items), Datum::Text(sep)) = (&a[0], &a[1]) else { return Ok(Datum::Null) };
    let null_text = match a.get(2) {
        Some(Datum::Text(s)) => Some(s.as_str()),
        _ => None,
    };
    Ok(Datum::Text(join(items, sep, null_text)))
}

/// Text elements joined by `sep`; a NULL element is skipped, or written as
/// `null_text` when there is one.
fn join(items: &[Datum], sep: &str, null_text: Option<&str>) -> String {
    let mut out = String::new();
    let mut first = true;
    for item in items {
        let piece = match (item, null_text) {
            (Datum::Text(s), _) => s.as_str(),
            (_, Some(n)) => n,
            (_, None) => continue,
        };
        if !first {
            out.push_str(sep);
        }
        out.push_str(piece);
        first = false;
    }
    out
}

/// `(array, int4)`.
fn resolve_dimension(c: &mut Compiler<'_>, call: &Call<'_>) -> Result<(Expr, SqlType), SqlError> {
    call.arity(2, 2)?;
    let (arr, _) = array_arg(c, &call.args[0], call.name)?;
    let (d, td) = c.compile(&call.args[1], Some(SqlType::Int4))?;
    if !td.is_integer() {
        return Err(call.no_such_types(&[SqlType::Unknown, td]));
    }
    Ok((Expr::Func(call.def, vec![arr, d]), SqlType::Int4))
}

/// `f(length)` of dimension 1 of a non-empty array, else NULL.
fn dimension(a: &[Datum], f: impl Fn(usize) -> i64) -> Datum {
    match (&a[0], &a[1]) {
        (Datum::Array(items), Datum::Int(1)) if !items.is_empty() => Datum::Int(f(items.len())),
        _ => Datum::Null,
    }
}

fn resolve_cardinality(c: &mut Compiler<'_>, call: &Call<'_>) -> Result<(Expr, SqlType), SqlError> {
    call.arity(1, 1)?;
    let (arr, _) = array_arg(c, &call.args[0], call.name)?;
    Ok((Expr::Func(call.def, vec![arr]), SqlType::Int4))
}

fn cardinality(a: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    Ok(match &a[0] {
        Datum::Array(items) => Datum::Int(items.len() as i64),
        _ => Datum::Null,
    })
}

/// The argument expressions of a call compiled one by one.
fn compile_all(c: &mut Compiler<'_>, call: &Call<'_>) -> Result<Vec<(Expr, SqlType)>, SqlError> {
    call.args.iter().map(|a| c.compile(a, None)).collect()
}

fn resolve_cat(c: &mut Compiler<'_>, call: &Call<'_>) -> Result<(Expr, SqlType), SqlError> {
    call.arity(2, 2)?;
    let mut args = compile_all(c, call)?;
    let (b, tb) = args.pop().ok_or_else(|| call.no_such_arity())?;
    let (a, ta) = args.pop().ok_or_else(|| call.no_such_arity())?;
    concat(c, (a, ta), (b, tb), &call.args[0], &call.args[1])
}

fn resolve_append(c: &mut Compiler<'_>, call: &Call<'_>) -> Result<(Expr, SqlType), SqlError> {
    call.arity(2, 2)?;
    let (arr, t) = array_arg(c, &call.args[0], call.name)?;
    let elem = t.element().unwrap_or(SqlType::Text);
    let (x, tx) = c.compile(&call.args[1], Some(elem))?;
    let x = c.coerce(x, tx, elem)?;
    Ok((Expr::Func(call.def, vec![arr, x]), t))
}

fn resolve_prepend(c: &mut Compiler<'_>, call: &Call<'_>) -> Result<(Expr, SqlType), SqlError> {
    call.arity(2, 2)?;
    let (arr, t) = array_arg(c, &call.args[1], call.name)?;
    let elem = t.element().unwrap_or(SqlType::Text);
    let (x, tx) = c.compile(&call.args[0], Some(elem))?;
    let x = c.coerce(x, tx, elem)?;
    Ok((Expr::Func(call.def, vec![x, arr]), t))
}

/// `l || r` where a side is an array (`la`, `ra`: the sides compiled
/// without a hint): `array_cat`, `array_append` or `array_prepend`, as
/// PostgreSQL resolves the operator.
pub(crate) fn concat(
    c: &mut Compiler<'_>,
    (a, ta): (Expr, SqlType),
    (b, tb): (Expr, SqlType),
    l: &sqlparser::ast::Expr,
    r: &sqlparser::ast::Expr,
) -> Result<(Expr, SqlType), SqlError> {
    let no_operator = || {
        SqlError::new(SqlState::UNDEFINED_FUNCTION, format!("operator does not exist: {} || {}", ta.name(), tb.name()))
    };
    // An untyped string literal (compiled as text) is the other side's array type.
    let untyped = |e: &sqlparser::ast::Expr| matches!(e, sqlparser::ast::Expr::Value(v) if matches!(v.value, sqlparser::ast::Value::SingleQuotedString(_)));
    let ta = if ta.element().is_none() && untyped(l) { SqlType::Unknown } else { ta };
    let tb = if tb.element().is_none() && untyped(r) { SqlType::Unknown } else { tb };
    match (ta, tb) {
        (SqlType::Array(_), SqlType::Array(_)) => {
            let b = c.coerce(b, tb, ta)?;
            Ok((Expr::Func(&ARRAY_CAT, vec![a, b]), ta))
        }
        (SqlType::Array(_), SqlType::Unknown) => {
            let (b, tb) = c.compile(r, Some(ta))?;
            Ok((Expr::Func(&ARRAY_CAT, vec![a, c.coerce(b, tb, ta)?]), ta))
        }
        (SqlType::Unknown, SqlType::Array(_)) => {
            let (a, ta) = c.compile(l, Some(tb))?;
            Ok((Expr::Func(&ARRAY_CAT, vec![c.coerce(a, ta, tb)?, b]), tb))
        }
        (SqlType::Array(e), t) => {
            let b = c.coerce(b, t, *e).map_err(|_| no_operator())?;
            Ok((Expr::Func(&ARRAY_APPEND, vec![a, b]), ta))
        }
        (t, SqlType::Array(e)) => {
            let a = c.coerce(a, t, *e).map_err(|_| no_operator())?;
            Ok((Expr::Func(&ARRAY_PREPEND, vec![a, b]), tb))
        }
        _ => Err(no_operator()),
    }
}

fn items(d: &Datum) -> &[Datum] {
    match d {
        Datum::Array(v) => v,
        _ => &[],
    }
}

fn array_cat(a: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    if a[0].is_null() && a[1].is_null() {
        return Ok(Datum::Null);
    }
    Ok(Datum::Array(items(&a[0]).iter().chain(items(&a[1])).cloned().collect()))
}

fn array_append(a: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    Ok(Datum::Array(items(&a[0]).iter().chain(std::iter::once(&a[1])).cloned().collect()))
}

fn array_remove(a: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    if a[0].is_null() {
        return Ok(Datum::Null);
    }
    let equal = |d: &Datum| match (d.is_null(), a[1].is_null()) {
        (true, true) => true,
        (false, false) => d.cmp_sql(&a[1]).is_eq(),
        _ => false,
    };
    Ok(Datum::Array(items(&a[0]).iter().filter(|d| !equal(d)).cloned().collect()))
}

fn array_prepend(a: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    Ok(Datum::Array(std::iter::once(&a[0]).chain(items(&a[1])).cloned().collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arr(v: &[&str]) -> Vec<Datum> {
        v.iter().map(|s| if *s == "NULL" { Datum::Null } else { Datum::Text((*s).into()) }).collect()
    }

    #[test]
    fn joins_and_skips_nulls_as_postgresql() {
        assert_eq!(join(&arr(&["a", "NULL", "b"]), ", ", None), "a, b");
        assert_eq!(join(&arr(&["NULL", "a", "NULL"]), ",", Some("*")), "*,a,*");
        assert_eq!(join(&arr(&[]), ", ", None), "");
    }

    #[test]
    fn dimensions_beyond_the_first_are_null() {
        let a = Datum::Array(arr(&["x", "y"]));
        assert_eq!(dimension(&[a.clone(), Datum::Int(1)], |n| n as i64), Datum::Int(2));
        assert_eq!(dimension(&[a, Datum::Int(2)], |n| n as i64), Datum::Null);
        assert_eq!(dimension(&[Datum::Array(vec![]), Datum::Int(1)], |n| n as i64), Datum::Null);
    }
}
