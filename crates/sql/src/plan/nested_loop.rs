//! One step of the nested-loop join of a [`Source::Rows`](super::Source::Rows):
//! the rows so far joined with one FROM item's rows, on the item's `ON`
//! (a LEFT join pads an unmatched row with NULLs), then WHERE's
//! conjuncts placed at this item (`pushdown.rs`).
//!
//! The candidate row is built in one buffer: the left row is copied once
//! per left row and only the item's columns per candidate, and a row is
//! allocated only when it passes, so a step over large catalog relations
//! costs their comparisons, not a cross product's allocations.

use super::RowItem;
use crate::error::SqlError;
use crate::expr::EvalEnv;
use crate::value::Datum;

/// `rows` joined with `produced` (the item's rows) as `item` says.
pub(super) fn join_step(
    rows: Vec<Vec<Datum>>,
    produced: &[Vec<Datum>],
    item: &RowItem,
    env: &mut EvalEnv<'_>,
) -> Result<Vec<Vec<Datum>>, SqlError> {
    let mut joined = Vec::new();
    for left in rows {
        let base = left.len();
        let mut buf = left;
        let mut matched = false;
        for right in produced {
            buf.truncate(base);
            buf.extend_from_slice(right);
            if let Some(on) = &item.on {
                if !on.test(&buf, env)? {
                    continue;
                }
            }
            matched = true;
            if passes(item, &buf, env)? {
                joined.push(buf.clone());
            }
        }
        if item.left && !matched {
            buf.truncate(base);
            buf.extend(std::iter::repeat_n(Datum::Null, item.width));
            if passes(item, &buf, env)? {
                joined.push(buf);
            }
        }
    }
    Ok(joined)
}

/// Whether `row` passes the WHERE conjuncts placed at `item`.
fn passes(item: &RowItem, row: &[Datum], env: &mut EvalEnv<'_>) -> Result<bool, SqlError> {
    item.filter.as_ref().map_or(Ok(true), |f| f.test(row, env))
}
