//! Foreign keys and partitioned tables, as PostgreSQL 15 has them: a key
//! defined on a partitioned table holds for every partition (PostgreSQL
//! clones it onto each), on both sides.
//!
//! - A row written to a partition directly is checked against the keys of
//!   the partition's ancestors too ([`keys_of`], [`referencing`]).
//! - Errors name the partition a row is in, as PostgreSQL's clone
//!   triggers do ([`leaf_for`]): `insert or update on table "pfk1"`,
//!   `update or delete on table "ppk1"`.
//! - A key that references a partitioned table is cloned by PostgreSQL
//!   onto the referencing table once per referenced partition, named by
//!   `ChooseConstraintName` (`pfk_a_fkey1`, `pfk_a_fkey2`, … in partition
//!   order); a delete on the referenced side reports that clone's name
//!   ([`clone_name`]).
//! - `ALTER TABLE … ATTACH PARTITION` checks the rows it brings in
//!   (`attach.rs`).

use turnstile_engine::catalog::{CatalogData, ForeignKey, RelId, Relation};
use turnstile_engine::types::Value;

/// How deep partitions nest at most (a partition of a partition …): a
/// bound on the walks below.
const PARTITION_DEPTH_MAX: usize = 32;

/// `table` and its ancestors, nearest first.
pub(crate) fn lineage(cat: &CatalogData, table: RelId) -> Vec<RelId> {
    let mut out = vec![table];
    let mut at = table;
    while let Some(parent) = cat.relations.get(&at).and_then(|r| r.parent) {
        if out.len() > PARTITION_DEPTH_MAX || out.contains(&parent) {
            break;
        }
        out.push(parent);
        at = parent;
    }
    out
}

/// The foreign keys whose rows `table`'s rows are (its own and its
/// ancestors').
pub(crate) fn keys_of(cat: &CatalogData, table: RelId) -> Vec<&ForeignKey> {
    lineage(cat, table).into_iter().flat_map(|t| cat.foreign_keys_of(t)).collect()
}

/// The foreign keys that reference `table` or one of its ancestors.
pub(crate) fn referencing(cat: &CatalogData, table: RelId) -> Vec<&ForeignKey> {
    lineage(cat, table).into_iter().flat_map(|t| cat.referencing(t)).collect()
}

/// The relation with storage under `table` that holds `row` (routed by
/// each level's partition key); `table` itself when it is not partitioned
/// or no partition takes the row.
pub(crate) fn leaf_for<'c>(cat: &'c CatalogData, table: &'c Relation, row: &[Value]) -> &'c Relation {
    let mut at = table;
    for _ in 0..PARTITION_DEPTH_MAX {
        let Some(key) = at.partition_key else { break };
        let Some(v) = row.get(key.column) else { break };
        let Some(next) = cat.partitions_of(at.id).find(|p| p.bound.as_ref().is_some_and(|b| b.contains(v))) else {
            break;
        };
        at = next;
    }
    at
}

/// The name of `k`'s clone for the referenced partition holding `row`:
/// `k`'s own name when `k` references a table that is not partitioned.
pub(crate) fn clone_name(cat: &CatalogData, k: &ForeignKey, row: &[Value]) -> String {
    let Some(parent) = cat.relations.get(&k.ref_table) else { return k.name.clone() };
    let Some(key) = parent.partition_key else { return k.name.clone() };
    let ordinal = row
        .get(key.column)
        .and_then(|v| cat.partitions_of(parent.id).position(|p| p.bound.as_ref().is_some_and(|b| b.contains(v))));
    match ordinal {
        Some(i) => format!("{}{}", k.name, i + 1),
        None => k.name.clone(),
    }
}
