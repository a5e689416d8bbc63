//! `ALTER TABLE parent ATTACH PARTITION table FOR VALUES …` and `ALTER
//! INDEX parent ATTACH PARTITION index`, which pg_dump writes for a
//! partitioned table: the partitions are created as plain tables, then
//! attached, and their indexes attached to the parent's.
//!
//! Locks, as PostgreSQL takes them: `ShareUpdateExclusiveLock` on the
//! parent (table or index), `AccessExclusiveLock` on the table attached
//! (and on the index attached). Before the catalog changes, every row of
//! the table is checked against the bound (`23514` for one outside it,
//! PostgreSQL's partition constraint); the indexes the attachment
//! creates are built. Like every DDL here, neither is undone by a
//! rollback ([`crate::RollbackReport::kept_ddl`]).

use crate::catalog::{CatalogError, PartitionBound, RelKind};
use crate::error::{EngineError, Result};
use crate::heap::HeapScan;
use crate::session::Session;
use crate::types::decode_row;
use std::sync::Arc;
use turnstile_lock::LockMode;

impl Session {
    /// `ALTER TABLE parent ATTACH PARTITION name FOR VALUES bound`.
    pub fn attach_partition(&mut self, parent: &str, name: &str, bound: PartitionBound) -> Result<()> {
        self.statement(&format!("ALTER TABLE {parent} ATTACH PARTITION {name}"), |s| {
            let p = s.lock_by_name(parent, LockMode::ShareUpdateExclusive)?;
            let Some(key) = p.rel.partition_key else {
                return Err(CatalogError::WrongKind { name: parent.into(), expected: "a partitioned table" }.into());
            };
            let t = s.lock_by_name(name, LockMode::AccessExclusive)?;
            if t.rel.kind != RelKind::Table {
                return Err(CatalogError::WrongKind { name: name.into(), expected: "a table" }.into());
            }
            s.note_ddl(&format!("ALTER TABLE {parent} ATTACH PARTITION {name}"));
            let engine = Arc::clone(&s.engine);
            let file = s.file(t.rel.id);
            for item in HeapScan::visible(engine.pool(), file, s.visibility())? {
                let row = decode_row(&t.column_types, &item?.1)?;
                if !row.get(key.column).is_some_and(|k| bound.contains(k)) {
                    return Err(EngineError::PartitionConstraint { table: name.to_owned() });
                }
            }
            s.backend.check_cancel()?;
            let (_, created) = engine.catalog().attach_partition(s.db, parent, name, bound)?;
            s.create_storage(&created)?;
            for ix in &created {
                s.build_index(ix)?;
            }
            Ok(())
        })
    }

    /// `ALTER INDEX parent ATTACH PARTITION name`.
    pub fn attach_index(&mut self, parent: &str, name: &str) -> Result<()> {
        self.statement(&format!("ALTER INDEX {parent} ATTACH PARTITION {name}"), |s| {
            s.lock_by_name(parent, LockMode::ShareUpdateExclusive)?;
            s.lock_by_name(name, LockMode::AccessExclusive)?;
            s.note_ddl(&format!("ALTER INDEX {parent} ATTACH PARTITION {name}"));
            s.engine.catalog().attach_index(s.db, parent, name)?;
            Ok(())
        })
    }
}
