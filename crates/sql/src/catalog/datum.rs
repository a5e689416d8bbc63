//! Building catalog rows: one constructor per PostgreSQL column type the
//! system relations use, so each row reads as a list of typed values.
//!
//! Columns of array, vector and `pg_node_tree` types (`relacl`, `indkey`,
//! `adbin`, …) hold PostgreSQL's text form of the value (`{fillfactor=70}`,
//! `1 2`, the expression's SQL for a node tree, which `pg_get_expr`
//! returns as it is), typed `text` until the SQL layer has array types.

use crate::value::Datum;

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
    text(columns.iter().map(|c| (c + 1).to_string()).collect::<Vec<_>>().join(" "))
}

/// An `oidvector`'s text (`1978 3126`).
pub(crate) fn oidvector(oids: impl Iterator<Item = u32>) -> Datum {
    text(oids.map(|o| o.to_string()).collect::<Vec<_>>().join(" "))
}
