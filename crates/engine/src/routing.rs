//! Routing a row inserted through a table to the relation that takes it:
//! the partition whose bound holds the row's partition key, as
//! PostgreSQL's `ExecFindPartition` does, or the table itself — refused
//! when it is a partition whose bound does not hold the row, as
//! PostgreSQL's `ExecPartitionCheck` refuses it.

use crate::catalog::{RelCache, RelEntry, RelId};
use crate::error::{EngineError, Result};
use crate::types::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// The relation of `target` that takes `row`: `target` itself (refused
/// when `target` is a partition whose bound does not hold the row), or the
/// partition whose bound holds the row's partition key. A partition met
/// for the first time is locked with `lock`, then its definition read
/// (its indexes), then its indexes locked (`ExecOpenIndices`); `leaves`
/// remembers it for the statement's next rows.
pub(crate) fn route(
    target: &Arc<RelEntry>,
    row: &[Value],
    leaves: &mut HashMap<RelId, Arc<RelEntry>>,
    relcache: &mut RelCache,
    catalog: &crate::catalog::Catalog,
    lock: &mut dyn FnMut(RelId) -> std::result::Result<(), turnstile_lock::LockError>,
) -> Result<Arc<RelEntry>> {
    let Some(key) = target.rel.partition_key else {
        if let (Some(parent), Some(bound)) = (target.rel.parent, target.rel.bound.as_ref()) {
            let parent_key = relcache.get(catalog, parent)?.rel.partition_key;
            if parent_key.is_some_and(|k| !row.get(k.column).is_some_and(|v| bound.contains(v))) {
                return Err(EngineError::OutsidePartition { table: target.rel.name.clone() });
            }
        }
        return Ok(Arc::clone(target));
    };
    let value = row
        .get(key.column)
        .ok_or(crate::types::CodecError::Arity { expected: target.column_types.len(), got: row.len() })?;
    let &(id, _) = target
        .partitions
        .iter()
        .find(|(_, b)| b.contains(value))
        .ok_or_else(|| EngineError::NoPartition { table: target.rel.name.clone(), key: value.to_string() })?;
    if let Some(e) = leaves.get(&id) {
        return Ok(Arc::clone(e));
    }
    lock(id)?;
    let e = relcache.get(catalog, id)?;
    for ix in &e.indexes {
        lock(ix.id)?;
    }
    leaves.insert(id, Arc::clone(&e));
    Ok(e)
}
