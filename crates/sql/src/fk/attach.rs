//! `ALTER TABLE parent ATTACH PARTITION t FOR VALUES …` with foreign
//! keys: each row of `t` is checked against the keys of `parent` and its
//! ancestors before `t` becomes a partition, its referenced row locked
//! `FOR KEY SHARE` as an insert's check locks it (PostgreSQL's
//! `RI_FKey_check` per row): the attach waits for a transaction deleting
//! that row, and until the attaching transaction ends the row cannot be
//! deleted. Outside a transaction block the check and the attach run in a
//! transaction of their own, so the locks last until the attach is done.

use super::enforce::EveryRow;
use super::partitions::keys_of;
use super::violation::not_present;
use crate::error::SqlError;
use crate::session::SqlSession;
use turnstile_engine::catalog::{ForeignKey, PartitionBound};
use turnstile_engine::query::{Col, Operand, Query};
use turnstile_engine::txn::{RowLockMode, RowLocking, RowWait};
use turnstile_engine::types::Value;

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
        self.in_own_transaction(|s| {
            s.check_attached_rows(parent, partition)?;
            s.es.attach_partition(parent, partition, bound)?;
            Ok(())
        })
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
