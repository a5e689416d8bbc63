//! Building catalog rows: one constructor per PostgreSQL column type the
//! system relations use, so each row reads as a list of typed values.
//!
//! Columns of array types (`reloptions`, `conkey`, `datacl`, …) are real
//! arrays ([`OID_ARRAY`], …), so that `= ANY(col)`, `unnest(col)` and
//! `array_to_string(col, …)` work on them as in PostgreSQL; `aclitem[]`
//! is `text[]` of the same text (`{=c/postgres,postgres=CTc/postgres}`).
//! Vector and `pg_node_tree` columns (`indkey`, `adbin`, …) hold
//! PostgreSQL's text form of the value (`1 2`, the expression's SQL for a
//! node tree, which `pg_get_expr` returns as it is).

use crate::value::{Datum, SqlType};

/// `oid[]`.
pub(crate) const OID_ARRAY: SqlType = SqlType::Array(&SqlType::Oid);
/// `text[]`.
pub(crate) const TEXT_ARRAY: SqlType = SqlType::Array(&SqlType::Text);
/// `aclitem[]`, shown as the `text[]` of its items.
pub(crate) const ACL_ARRAY: SqlType = SqlType::Array(&SqlType::Text);
/// `int2[]`.
pub(crate) const INT2_ARRAY: SqlType = SqlType::Array(&SqlType::Int2);
/// `"char"[]`.
pub(crate) const CHAR_ARRAY: SqlType = SqlType::Array(&SqlType::QChar);

/// A `text[]` (or `aclitem[]`) of `items`.
pub(crate) fn text_array<S: Into<String>>(items: impl IntoIterator<Item = S>) -> Datum {
    Datum::Array(items.into_iter().map(|s| Datum::Text(s.into())).collect())
}

/// An `oid` (or `regproc` shown as a number).
pub(crate) fn oid(v: u32) -> Datum {
    Datum::Int(v.into())
}

/// An integer (`int2`, `int4`, `int8`, `xid`).
pub(crate) fn int(v: i64) -> Datum {
    Datum::Int(v)
}

/// A `bool`.
pub(crate) fn boolean(v: bool) -> Datum {
    Datum::Bool(v)
}

/// A `name`, `text` or `varchar`.
pub(crate) fn text(v: impl Into<String>) -> Datum {
    Datum::Text(v.into())
}

/// A `"char"`.
pub(crate) fn ch(v: char) -> Datum {
    Datum::Text(v.to_string())
}

/// SQL's `YES`/`NO` (`information_schema.yes_or_no`).
pub(crate) fn yes_no(v: bool) -> Datum {
    text(if v { "YES" } else { "NO" })
}

/// NULL.
pub(crate) const NULL: Datum = Datum::Null;

/// An `int2vector`'s text (`1 2`) of zero-based column numbers.
pub(crate) fn int2vector(columns: &[usize]) -> Datum {
    // An expression's position (`IndexDef::EXPRESSION`, `usize::MAX`)
    // wraps to PostgreSQL's 0.
    text(columns.iter().map(|c| c.wrapping_add(1).to_string()).collect::<Vec<_>>().join(" "))
}

/// An `oidvector`'s text (`1978 3126`).
pub(crate) fn oidvector(oids: impl Iterator<Item = u32>) -> Datum {
    text(oids.map(|o| o.to_string()).collect::<Vec<_>>().join(" "))
}
