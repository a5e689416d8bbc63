//! WHERE's conjuncts applied inside a nested-loop FROM
//! ([`Source::Rows`]) as soon as the columns they read are joined, as
//! PostgreSQL's planner places each qualification at the lowest join
//! that supplies its relations. Without it, a comma join of catalog
//! relations (pgjdbc's `getImportedKeys` joins nine, with
//! `generate_series(1, 32)` among them) would build its whole cross
//! product before WHERE cut it.
//!
//! A conjunct that reads columns up to item `k` filters the rows right
//! after item `k` is joined. That is WHERE's answer for inner and LEFT
//! joins alike: a later join only adds columns to the rows it keeps (a
//! LEFT join keeps every row on its left side), so a row WHERE would drop
//! at the end is dropped earlier instead, and a row it keeps is extended
//! as before. A conjunct that reads no column filters after the first
//! item. Other sources keep WHERE as one residual filter.

use super::{Producer, RowItem, Source};
use crate::expr::Expr;

/// Attaches each of `conjuncts` to the item of a [`Source::Rows`] after
/// which it can run; returns those left for the residual filter (all of
/// them for another source).
pub(super) fn push_filters(source: &mut Source, conjuncts: Vec<Expr>) -> Vec<Expr> {
    let Source::Rows(items) = source else { return conjuncts };
    if items.is_empty() || matches!(items.as_slice(), [RowItem { producer: Producer::Series(..), .. }]) {
        // pgbench's `INSERT … SELECT … FROM generate_series` streams its
        // one item (`dml.rs`): nothing to gain, and the residual keeps it.
        return conjuncts;
    }
    let mut ends = Vec::with_capacity(items.len());
    let mut end = 0;
    for item in items.iter() {
        end += item.width;
        ends.push(end);
    }
    for c in conjuncts {
        let mut cols = Vec::new();
        columns_used(&c, &mut cols);
        let k = cols.iter().max().map_or(0, |&m| ends.iter().position(|&e| m < e).unwrap_or(items.len() - 1));
        let item = &mut items[k];
        item.filter = Some(match item.filter.take() {
            Some(f) => Expr::And(Box::new(f), Box::new(c)),
            None => c,
        });
    }
    Vec::new()
}

/// The row columns `x` reads (a subquery's: its operand and captures).
fn columns_used(x: &Expr, out: &mut Vec<usize>) {
    match x {
        Expr::Col(c) => out.push(*c),
        Expr::Const(_) | Expr::Param(_) | Expr::Agg(_) | Expr::Outer(_) => {}
        Expr::SubLink(link) => link.lhs.iter().chain(&link.captures).for_each(|a| columns_used(a, out)),
        Expr::Bin(_, _, a, b) | Expr::And(a, b) | Expr::Or(a, b) | Expr::Like(a, b, _) => {
            columns_used(a, out);
            columns_used(b, out);
        }
        Expr::Not(a) | Expr::Neg(a, _) | Expr::IsNull(a, _) | Expr::IsBool(a, _, _) | Expr::Cast(a, _, _) => {
            columns_used(a, out)
        }
        Expr::Func(_, args) | Expr::Array(args) => args.iter().for_each(|a| columns_used(a, out)),
        Expr::Regex(m) => {
            columns_used(&m.x, out);
            columns_used(&m.pattern, out);
        }
        Expr::Quantified(_, _, _, a, b, _) => {
            columns_used(a, out);
            columns_used(b, out);
        }
        Expr::InList(a, list, _) => {
            columns_used(a, out);
            list.iter().for_each(|a| columns_used(a, out));
        }
        Expr::Case(op, whens, els) => {
            op.iter().for_each(|o| columns_used(o, out));
            for (c, r) in whens {
                columns_used(c, out);
                columns_used(r, out);
            }
            els.iter().for_each(|e| columns_used(e, out));
        }
    }
}
