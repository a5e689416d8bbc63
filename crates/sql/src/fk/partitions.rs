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
//! - `ALTER TABLE parent ATTACH PARTITION t` checks each row of `t`
//!   against the keys of `parent` and its ancestors before `t` becomes a
//!   partition, locking each referenced row `FOR KEY SHARE` as an insert
//!   would (`SqlSession::attach_partition_checked`): it waits for a
//!   transaction deleting that row, and until it ends the row cannot be
//!   deleted.

use super::enforce::EveryRow;
use super::violation::not_present;
use crate::error::SqlError;
use crate::session::SqlSession;
use turnstile_engine::catalog::{CatalogData, ForeignKey, PartitionBound, RelId, Relation};
use turnstile_engine::query::{Col, Operand, Query};
use turnstile_engine::txn::{RowLockMode, RowLocking, RowWait};
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

impl SqlSession {
    /// `ALTER TABLE parent ATTACH PARTITION partition FOR VALUES …`, after
    /// checking the rows of `partition` against the foreign keys of
    /// `parent` and its ancestors (in a transaction of its own outside a
    /// block, so the parent rows stay locked until the attach is done).
    pub(crate) fn attach_partition_checked(
        &mut self,
        parent: &str,
        partition: &str,
        bound: PartitionBound,
    ) -> Result<(), SqlError> {
        let own = !self.es.in_transaction();
        if own {
            self.es.begin()?;
        }
        let done = self.check_attached_rows(parent, partition).and_then(|()| {
            self.es.attach_partition(parent, partition, bound)?;
            Ok(())
        });
        match (own, done) {
            (false, r) => r,
            (true, Ok(())) => Ok(self.es.commit()?),
            (true, Err(e)) => {
                self.es.rollback()?;
                Err(e)
            }
        }
    }

    fn check_attached_rows(&mut self, parent: &str, partition: &str) -> Result<(), SqlError> {
        let cat = self.es.engine().catalog().snapshot();
        let Some(p) = cat.find(self.es.database(), parent) else { return Ok(()) };
        let keys: Vec<ForeignKey> = keys_of(&cat, p.id).into_iter().cloned().collect();
        if keys.is_empty() {
            return Ok(());
        }
        let rows = self.es.scan_all(partition)?;
        let locking = RowLocking { mode: RowLockMode::KeyShare, wait: RowWait::Block };
        for k in &keys {
            let Some(referenced) = cat.relations.get(&k.ref_table) else { continue };
            let q = k.ref_columns.iter().enumerate().fold(Query::from(referenced.name.clone()), |q, (i, &c)| {
                q.filter(Col::at(0, c), Operand::Param(i + 1))
            });
            for row in &rows {
                let key: Vec<Value> = k.columns.iter().map(|&c| row.get(c).cloned().unwrap_or(Value::Null)).collect();
                if key.iter().any(|v| matches!(v, Value::Null)) {
                    continue;
                }
                if self.es.select_locking(&q, &key, locking, Some(1), &mut EveryRow)?.is_empty() {
                    let columns = p.column_names(&k.columns);
                    return Err(not_present(partition, &k.name, &referenced.name, &columns, &key));
                }
            }
        }
        Ok(())
    }
}
