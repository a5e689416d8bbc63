//! The order of two values under one ORDER BY key, shared by the
//! executor's sorts, row locking's ordering and ordered aggregates.
//!
//! ```
//! use std::cmp::Ordering;
//! use turnstile_sql::value::{compare_key, Datum};
//! assert_eq!(compare_key(&Datum::Int(1), &Datum::Int(2), false, false), Ordering::Less);
//! assert_eq!(compare_key(&Datum::Null, &Datum::Int(2), false, false), Ordering::Greater);
//! assert_eq!(compare_key(&Datum::Null, &Datum::Int(2), true, true), Ordering::Less);
//! ```

use super::Datum;
use std::cmp::Ordering;

/// One ORDER BY key's order of two values: ascending or descending
/// (`desc`), NULLs before or after every other value (`nulls_first`).
pub fn compare_key(x: &Datum, y: &Datum, desc: bool, nulls_first: bool) -> Ordering {
    match (x.is_null(), y.is_null()) {
        (true, true) => Ordering::Equal,
        (true, false) if nulls_first => Ordering::Less,
        (true, false) => Ordering::Greater,
        (false, true) if nulls_first => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ if desc => x.cmp_sql(y).reverse(),
        _ => x.cmp_sql(y),
    }
}
