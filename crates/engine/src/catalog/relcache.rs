//! The relation cache: per backend, each relation's definition with its
//! partitions and its index list *with each index's column set* (Geier 2022),
//! built once from the catalog and thrown away when DDL bumps the catalog
//! generation.
//!
//! As in PostgreSQL, the cache is backend-local: a look-up takes no lock at
//! all. Invalidation is one atomic load of the catalog's generation; the
//! caller holds a heavyweight lock on the relation before it looks it up,
//! and DDL changes the catalog only under `AccessExclusive`, so the
//! definition read is the one that stays valid while the lock is held.
//!
//! With the column sets at hand, a planner decides which indexes can serve
//! a predicate without opening or locking the others.
//!
//! Each index's cached metapage — its root block and level — is kept here
//! too ([`AmCache`], PostgreSQL's `rd_amcache`), and thrown away with the
//! entries.

use super::amcache::AmCache;
use super::index_key::{IndexExprCompiler, IndexKey};
use super::model::*;
use super::store::{Catalog, CatalogError};
use crate::types::ColumnType;
use std::collections::HashMap;
use std::sync::Arc;

/// What the cache knows of one index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexInfo {
    /// The index's relation id.
    pub id: RelId,
    /// Its name.
    pub name: String,
    /// Column numbers of its key in the indexed table, in key order
    /// ([`IndexDef::EXPRESSION`] where a part is an expression: no plain
    /// column filter matches it).
    pub columns: Vec<usize>,
    /// Its key, ready to compute from a row (expressions compiled).
    pub key: IndexKey,
    /// Whether keys are unique.
    pub unique: bool,
    /// Whether it is the primary key.
    pub primary: bool,
}

impl IndexInfo {
    /// The key's parts as messages name them (`DETAIL: Key (lower(key))=…`):
    /// a column's name, an expression's text.
    pub fn key_names(&self, table: &Relation) -> Vec<String> {
        let mut exprs = self.key.expression_texts();
        self.columns
            .iter()
            .map(|&c| match c {
                IndexDef::EXPRESSION => exprs.next().unwrap_or_default(),
                c => table.column_names(&[c]).remove(0),
            })
            .collect()
    }

    /// The key's leading column ([`IndexDef::EXPRESSION`] when the key
    /// opens with an expression).
    pub fn leading_column(&self) -> usize {
        self.columns.first().copied().unwrap_or(IndexDef::EXPRESSION)
    }
}

/// One cached relation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelEntry {
    /// The catalog definition.
    pub rel: Relation,
    /// Column types in column order.
    pub column_types: Vec<ColumnType>,
    /// For a partitioned table: its partitions (id and bound), in creation order.
    pub partitions: Vec<(RelId, PartitionBound)>,
    /// Its indexes with their column sets, in creation order.
    pub indexes: Vec<IndexInfo>,
}

impl RelEntry {
    fn build(data: &CatalogData, rel: &Relation, compiler: Option<&dyn IndexExprCompiler>) -> RelEntry {
        let column_types = rel.column_types();
        let names: Vec<String> = rel.columns.iter().map(|c| c.name.clone()).collect();
        RelEntry {
            rel: rel.clone(),
            column_types: column_types.clone(),
            partitions: data.partitions_of(rel.id).filter_map(|p| p.bound.clone().map(|b| (p.id, b))).collect(),
            indexes: data
                .indexes_of(rel.id)
                .filter_map(|ix| {
                    ix.index.as_ref().map(|def| IndexInfo {
                        id: ix.id,
                        name: ix.name.clone(),
                        columns: def.columns.clone(),
                        key: IndexKey::build(def, &column_types, compiler.map(|c| (c, names.as_slice()))),
                        unique: def.unique,
                        primary: def.primary,
                    })
                })
                .collect(),
        }
    }
}

/// A backend's relation cache.
#[derive(Debug, Default)]
pub struct RelCache {
    generation: u64,
    by_id: HashMap<RelId, Arc<RelEntry>>,
    by_name: HashMap<(DbId, String), RelId>,
    builds: u64,
    /// The indexes' cached roots: valid for `generation`, like the entries.
    amcache: AmCache,
}

impl RelCache {
    /// An empty cache.
    pub fn new() -> RelCache {
        RelCache::default()
    }

    /// Entries built since the cache was created (each is a catalog read).
    pub fn builds(&self) -> u64 {
        self.builds
    }

    fn validate(&mut self, catalog: &Catalog) {
        let current = catalog.published_generation();
        if current != self.generation {
            self.by_id.clear();
            self.by_name.clear();
            self.amcache.clear();
            self.generation = current;
        }
    }

    /// The cached index roots, after the same invalidation check as every
    /// look-up: empty if DDL ran since they were cached. The caller holds
    /// a lock on each index it uses, so a root it remembers afterwards is
    /// of a relation that still exists.
    #[inline]
    pub fn amcache(&mut self, catalog: &Catalog) -> &mut AmCache {
        self.validate(catalog);
        &mut self.amcache
    }

    /// The cached index roots without the invalidation check (counters,
    /// inspection).
    pub fn amcache_unchecked(&self) -> &AmCache {
        &self.amcache
    }

    /// The entry of relation `id`.
    pub fn get(&mut self, catalog: &Catalog, id: RelId) -> Result<Arc<RelEntry>, CatalogError> {
        self.validate(catalog);
        if let Some(e) = self.by_id.get(&id) {
            return Ok(Arc::clone(e));
        }
        let data = catalog.snapshot();
        let rel = data.relations.get(&id).ok_or_else(|| CatalogError::UnknownRelation(format!("with id {id}")))?;
        Ok(self.insert(&data, rel, catalog.index_expr_compiler()))
    }

    /// The entry of relation `name` in database `db`.
    pub fn resolve(&mut self, catalog: &Catalog, db: DbId, name: &str) -> Result<Arc<RelEntry>, CatalogError> {
        self.validate(catalog);
        if let Some(e) = self.by_name.get(&(db, name.to_owned())).and_then(|id| self.by_id.get(id)) {
            return Ok(Arc::clone(e));
        }
        let data = catalog.snapshot();
        let rel = data.find(db, name).ok_or_else(|| CatalogError::UnknownRelation(name.to_owned()))?;
        Ok(self.insert(&data, rel, catalog.index_expr_compiler()))
    }

    fn insert(
        &mut self,
        data: &CatalogData,
        rel: &Relation,
        compiler: Option<&dyn IndexExprCompiler>,
    ) -> Arc<RelEntry> {
        // Built from a snapshot at least as new as `self.generation`: if DDL
        // ran in between, the next look-up sees a newer generation and
        // drops it.
        let entry = Arc::new(RelEntry::build(data, rel, compiler));
        self.builds += 1;
        self.by_name.insert((rel.db, rel.name.clone()), rel.id);
        self.by_id.insert(rel.id, Arc::clone(&entry));
        entry
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnstile_sync::LwLockPolicy;

    #[test]
    fn entries_carry_index_column_sets_and_are_rebuilt_after_ddl() {
        let dir = tempfile::tempdir().unwrap();
        let c = Catalog::open(dir.path(), LwLockPolicy::Fair).unwrap();
        let db = c.database("postgres").unwrap();
        let cols: Vec<(String, ColumnType)> = (0..60).map(|i| (format!("col{i}"), ColumnType::Int4)).collect();
        let cols: Vec<(&str, ColumnType)> = cols.iter().map(|(n, t)| (n.as_str(), *t)).collect();
        c.create_table(db, "synth", &cols, None).unwrap();
        for (name, _) in &cols[..10] {
            c.create_index(db, "synth", &format!("synth_{name}"), &[name], false, false).unwrap();
        }
        let mut cache = RelCache::new();
        let e = cache.resolve(&c, db, "synth").unwrap();
        assert_eq!(e.indexes.len(), 10);
        assert_eq!(e.indexes[5].columns, vec![5]);
        let again = cache.resolve(&c, db, "synth").unwrap();
        assert!(Arc::ptr_eq(&e, &again));
        assert_eq!(cache.builds(), 1);
        c.create_index(db, "synth", "synth_col10", &["col10"], false, false).unwrap();
        let rebuilt = cache.get(&c, e.rel.id).unwrap();
        assert_eq!(rebuilt.indexes.len(), 11);
        assert_eq!(cache.builds(), 2);
        assert!(matches!(cache.resolve(&c, db, "nope"), Err(CatalogError::UnknownRelation(_))));
    }

    /// Regression guard for `rd_amcache` invalidation: a root cached for a
    /// relation id must not survive DDL, even if the id came back naming
    /// another file (drop + create reusing ids).
    #[test]
    fn cached_index_roots_are_forgotten_on_ddl() {
        use crate::btree::{BTree, BtreeOptions};
        use turnstile_storage::io::OsIo;
        use turnstile_storage::{BufferPool, Fork, PoolOptions, RelFileId, Smgr, SmgrOptions};
        let dir = tempfile::tempdir().unwrap();
        let c = Catalog::open(dir.path(), LwLockPolicy::Fair).unwrap();
        let db = c.database("postgres").unwrap();
        c.create_table(db, "t", &[("k", ColumnType::Int4)], None).unwrap();
        let ix = c.create_index(db, "t", "t_k", &["k"], false, false).unwrap()[0].id;
        let smgr = Smgr::open_with(
            dir.path(),
            SmgrOptions { segment_blocks: 64, max_open_files: 4, ..Default::default() },
            Arc::new(OsIo),
        )
        .unwrap();
        let options = PoolOptions {
            shared_buffers: 16,
            mapping_partitions: 4,
            policy: LwLockPolicy::Fair,
            lookup_hints: true,
            huge_pages: false,
            prefault: false,
        };
        let pool = BufferPool::with_options(options, smgr.clone()).unwrap();
        let file = RelFileId::new(db, ix);
        smgr.create(file, Fork::Main).unwrap();
        let opts = BtreeOptions::new("t_k", vec![ColumnType::Int4], false, &turnstile_sync::Config::default());
        let tree = BTree::build(&pool, file, opts, []).unwrap();
        let mut cache = RelCache::new();
        cache.amcache(&c).remember(ix, &tree);
        assert_eq!(cache.amcache(&c).root(ix), tree.cached_root());
        assert!(cache.amcache(&c).root(ix).is_some());
        c.create_table(db, "u", &[("k", ColumnType::Int4)], None).unwrap();
        assert_eq!(cache.amcache_unchecked().root(ix), tree.cached_root(), "nothing checked the generation yet");
        assert_eq!(cache.amcache(&c).root(ix), None, "DDL invalidates the cached roots with the entries");
        assert!(cache.amcache(&c).is_empty());
    }
}
