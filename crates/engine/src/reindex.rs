//! `REINDEX INDEX name` and `REINDEX TABLE name`: each index rebuilt from
//! its table's rows into an emptied file, under PostgreSQL's locks — the
//! table (and each partition) `ShareLock`, so reads go on and writes wait,
//! and each index `AccessExclusiveLock`. A partitioned index or table
//! rebuilds every partition's index. Like other DDL it is not undone by a
//! rollback (it changes no data a reader sees).

use crate::catalog::{CatalogError, RelId, RelKind, Relation};
use crate::error::Result;
use crate::session::Session;
use turnstile_lock::LockMode;
use turnstile_storage::RelFileId;

impl Session {
    /// `REINDEX {INDEX | TABLE} name`: rebuilds the index `name`, or every
    /// index of table `name` (partitions included). Returns the number of
    /// indexes rebuilt.
    pub fn reindex(&mut self, name: &str) -> Result<usize> {
        self.statement(&format!("REINDEX {name}"), |s| {
            s.note_ddl(&format!("REINDEX {name}"));
            let catalog = s.engine.catalog().snapshot();
            let rel = catalog.find(s.db, name).ok_or_else(|| CatalogError::UnknownRelation(name.to_owned()))?;
            // The table whose rows the indexes are built from, and the
            // relations whose indexes are rebuilt.
            let (table, roots): (RelId, Vec<RelId>) = match (&rel.index, rel.kind) {
                (Some(def), _) => (def.table, vec![rel.id]),
                (None, RelKind::Table | RelKind::PartitionedTable) => (rel.id, vec![rel.id]),
                (None, _) => {
                    return Err(CatalogError::WrongKind { name: name.to_owned(), expected: "a table or index" }.into())
                }
            };
            for id in s.engine.catalog().dependents(table) {
                if catalog.relations.get(&id).is_some_and(|r| r.index.is_none()) {
                    s.lock_relation(id, LockMode::Share)?;
                }
            }
            let mut indexes: Vec<Relation> = Vec::new();
            for root in roots {
                // A table's partitions and indexes; an index's partitions
                // (the indexes of the partitions that belong to it).
                let mut ids = s.engine.catalog().dependents(root);
                ids.extend(
                    catalog
                        .relations
                        .values()
                        .filter(|r| r.index.as_ref().is_some_and(|d| d.parent == Some(root)))
                        .map(|r| r.id),
                );
                for id in ids {
                    let Some(r) = catalog.relations.get(&id) else { continue };
                    if r.kind == RelKind::Index && !indexes.iter().any(|x| x.id == id) {
                        indexes.push(r.clone());
                    }
                }
            }
            for ix in &indexes {
                s.lock_relation(ix.id, LockMode::AccessExclusive)?;
            }
            let engine = std::sync::Arc::clone(&s.engine);
            for ix in &indexes {
                let file = RelFileId::new(s.db, ix.id);
                engine.truncate_relation(file, 0)?;
            }
            // Cached index roots of every backend point into the old files.
            engine.catalog().invalidate()?;
            for ix in &indexes {
                s.build_index(ix)?;
            }
            Ok(indexes.len())
        })
    }
}
