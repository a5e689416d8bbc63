//! A relation's files as DDL makes and removes them: creating the storage
//! of new relations (marking unlogged ones in the buffer pool first),
//! removing dropped ones' buffers and files, and building an index into
//! its new, empty file.

use crate::btree::{BTree, BtreeOptions};
use crate::catalog::Relation;
use crate::error::{EngineError, Result};
use crate::heap::HeapScan;
use crate::session::Session;
use crate::types::decode_row;
use turnstile_storage::Fork;

impl Session {
    /// Creates the main fork of every relation of `rels` that has storage.
    pub(crate) fn create_storage(&mut self, rels: &[Relation]) -> Result<()> {
        for r in rels.iter().filter(|r| r.kind.has_storage()) {
            if r.unlogged {
                self.engine.pool().set_unlogged(self.file(r.id), true);
            }
            self.engine.smgr().create(self.file(r.id), Fork::Main)?;
        }
        Ok(())
    }

    /// Drops the buffers and removes the files of `rels`.
    pub(crate) fn remove_relations(&self, rels: &[Relation]) -> Result<()> {
        for rel in rels.iter().filter(|r| r.kind.has_storage()) {
            let file = self.file(rel.id);
            self.engine.pool().drop_relation_buffers(file, Fork::Main, 0)?;
            if self.engine.smgr().exists(file, Fork::Main)? {
                self.engine.smgr().remove(file)?;
            }
        }
        Ok(())
    }

    /// Builds index `ix` over its table's rows (sorted, packed bottom-up).
    pub(crate) fn build_index(&mut self, ix: &Relation) -> Result<()> {
        let Some(def) = ix.index.as_ref() else { return Ok(()) };
        let table = self.rel_entry(def.table)?;
        let pool = self.engine.pool();
        let names: Vec<String> = table.rel.columns.iter().map(|c| c.name.clone()).collect();
        let compiler = self.engine.catalog().index_expr_compiler().map(|c| (c, names.as_slice()));
        let key = crate::catalog::IndexKey::build(def, &table.column_types, compiler);
        let mut entries = Vec::new();
        for item in HeapScan::current(pool, self.file(def.table), self.engine.txns().snapshots())? {
            let (tid, bytes) = item?;
            let row = decode_row(&table.column_types, &bytes)?;
            entries.push((key.values(&row)?, tid));
        }
        let opts = BtreeOptions::new(ix.name.clone(), key.types().to_vec(), def.unique, self.engine.config());
        BTree::build(pool, self.file(ix.id), opts, entries)
            .map_err(|e| EngineError::from_index(e, &table.rel.name, || def.key_names(&table.rel)))?;
        Ok(())
    }
}
