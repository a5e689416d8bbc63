//! Set operations: `UNION`, `INTERSECT` and `EXCEPT`, with or without
//! `ALL` (PostgreSQL's `SetOp`/`Append` nodes), over two compiled branches.
//!
//! Both branches run to completion (each through the engine, taking its
//! locks), their rows are cast to the columns' common types, and then
//! combined: `UNION ALL` appends; the others count rows by value (NULLs
//! equal, as `IS NOT DISTINCT FROM`) in a hash map. Without `ALL` every
//! result row appears once; with `ALL`, `INTERSECT ALL` keeps `min(m, n)`
//! copies of a row found `m` times on the left and `n` on the right, and
//! `EXCEPT ALL` `max(m - n, 0)`, in the left branch's order.

use super::{Run, SelectPlan};
use crate::error::SqlError;
use crate::value::{Datum, SqlType};
use std::collections::HashMap;

/// Which set operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetOpKind {
    /// `UNION`.
    Union,
    /// `INTERSECT`.
    Intersect,
    /// `EXCEPT`.
    Except,
}

impl SetOpKind {
    /// The keyword (for messages).
    pub fn name(self) -> &'static str {
        match self {
            SetOpKind::Union => "UNION",
            SetOpKind::Intersect => "INTERSECT",
            SetOpKind::Except => "EXCEPT",
        }
    }
}

/// A compiled set operation.
#[derive(Debug)]
pub struct SetOpPlan {
    /// Which operation.
    pub kind: SetOpKind,
    /// `ALL`: keep duplicates.
    pub all: bool,
    /// The left branch.
    pub left: SelectPlan,
    /// The right branch.
    pub right: SelectPlan,
    /// The result's column types (both branches are cast to them).
    pub types: Vec<SqlType>,
}

impl SetOpPlan {
    /// Runs both branches and combines their rows.
    pub fn rows(&self, run: &mut Run<'_>) -> Result<Vec<Vec<Datum>>, SqlError> {
        let left = cast_rows(self.left.run_values(&mut run.nested())?, &self.left, &self.types)?;
        let right = cast_rows(self.right.run_values(&mut run.nested())?, &self.right, &self.types)?;
        Ok(combine(self.kind, self.all, left, right))
    }
}

/// A branch's rows cast to the result's types where its own differ.
fn cast_rows(mut rows: Vec<Vec<Datum>>, branch: &SelectPlan, types: &[SqlType]) -> Result<Vec<Vec<Datum>>, SqlError> {
    let from = &branch.out_types[..types.len()];
    if from == types {
        return Ok(rows);
    }
    for r in &mut rows {
        for ((d, f), t) in r.iter_mut().zip(from).zip(types) {
            if f != t && !d.is_null() {
                let v = std::mem::replace(d, Datum::Null);
                *d = crate::expr::cast_datum(v, *f, *t)?;
            }
        }
    }
    Ok(rows)
}

/// `left kind [ALL] right`.
pub(super) fn combine(kind: SetOpKind, all: bool, left: Vec<Vec<Datum>>, right: Vec<Vec<Datum>>) -> Vec<Vec<Datum>> {
    if kind == SetOpKind::Union {
        let mut out = left;
        out.extend(right);
        if !all {
            let mut seen = std::collections::HashSet::new();
            out.retain(|r| seen.insert(r.clone()));
        }
        return out;
    }
    let mut counts: HashMap<Vec<Datum>, usize> = HashMap::new();
    for r in right {
        *counts.entry(r).or_default() += 1;
    }
    let mut emitted: HashMap<Vec<Datum>, usize> = HashMap::new();
    let mut out = Vec::new();
    for r in left {
        let n = counts.get(&r).copied().unwrap_or(0);
        let done = emitted.entry(r.clone()).or_default();
        let keep = match (kind, all) {
            (SetOpKind::Intersect, false) => n > 0 && *done == 0,
            (SetOpKind::Intersect, true) => *done < n,
            (_, false) => n == 0 && *done == 0,
            // EXCEPT ALL: the first n copies cancel against the right's.
            (_, true) => {
                *done += 1;
                *done > n
            }
        };
        if keep {
            if !(kind == SetOpKind::Except && all) {
                *done += 1;
            }
            out.push(r);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(v: &[i64]) -> Vec<Vec<Datum>> {
        v.iter().map(|&x| vec![if x < 0 { Datum::Null } else { Datum::Int(x) }]).collect()
    }

    #[test]
    fn set_operations_count_duplicates_as_postgresql() {
        let (l, r) = (rows(&[1, 1, 2, 3, -1, -1]), rows(&[1, 3, 3, -1, 4]));
        assert_eq!(combine(SetOpKind::Union, true, l.clone(), r.clone()).len(), 11);
        assert_eq!(combine(SetOpKind::Union, false, l.clone(), r.clone()), rows(&[1, 2, 3, -1, 4]));
        assert_eq!(combine(SetOpKind::Intersect, false, l.clone(), r.clone()), rows(&[1, 3, -1]));
        assert_eq!(combine(SetOpKind::Intersect, true, l.clone(), r.clone()), rows(&[1, 3, -1]));
        assert_eq!(combine(SetOpKind::Except, false, l.clone(), r.clone()), rows(&[2]));
        assert_eq!(combine(SetOpKind::Except, true, l, r), rows(&[1, 2, -1]));
    }
}
