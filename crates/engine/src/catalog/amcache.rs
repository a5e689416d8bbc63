//! A backend's cached index metapages: PostgreSQL's `rd_amcache`, the
//! copy of a B-tree's metapage a backend keeps in its relation-cache entry
//! so that descents read the root directly (`_bt_getroot`).
//!
//! B-tree handles are attached per statement (per index scan, per index
//! insert), each with its own [`CachedRoot`] ([`crate::btree::root_cache`]);
//! this map carries the root from one handle to the next, keyed by the
//! index's relation id:
//!
//! ```text
//!   hint = amcache.root(index)                    one hash look-up
//!   tree = BTree::attach(…).with_cached_root(hint)
//!   … descents: no metapage read while the cached root is still the root …
//!   amcache.remember(index, &tree)                the root as the handle last saw it
//! ```
//!
//! # Invariants
//!
//! * `roots[id]` is a root that the metapage of relation `id`'s file named
//!   at some point during the relation cache's current generation (read
//!   by, or made by a root split in, a handle on that file).
//! * It is forgotten whenever the relation cache is invalidated (any DDL:
//!   [`super::RelCache`] clears the map with its entries), so after
//!   `DROP INDEX` + `CREATE INDEX` a root of the old file is never used for
//!   the new one — even if the two had the same relation id.
//!
//! A root that has merely split since is not forgotten here: the descent
//! notices (the page is no longer alone on its level) and refreshes the
//! handle's copy, which `remember` brings back. Like the rest of the
//! relation cache the map is backend-local and takes no lock; its size is
//! bounded by the number of indexes the backend touched since the last DDL.

use super::model::RelId;
use crate::btree::{BTree, CachedRoot, RootCacheStats};
use hashbrown::HashMap;

/// A backend's cached B-tree roots, by index relation id.
#[derive(Debug, Default)]
pub struct AmCache {
    roots: HashMap<RelId, CachedRoot>,
    stats: RootCacheStats,
}

impl AmCache {
    /// An empty cache.
    pub fn new() -> AmCache {
        AmCache::default()
    }

    /// The cached root of index `index`, to start a handle with
    /// ([`BTree::with_cached_root`]).
    #[inline]
    pub fn root(&self, index: RelId) -> Option<CachedRoot> {
        self.roots.get(&index).copied()
    }

    /// Keeps the root `tree` (a handle on index `index`) last saw, and adds
    /// its counters to the backend's.
    pub fn remember(&mut self, index: RelId, tree: &BTree<'_>) {
        self.stats.add(tree.root_cache_stats());
        if let Some(root) = tree.cached_root() {
            self.roots.insert(index, root);
        }
    }

    /// Forgets every cached root (the counters stay).
    pub fn clear(&mut self) {
        self.roots.clear();
    }

    /// Indexes with a cached root.
    pub fn len(&self) -> usize {
        self.roots.len()
    }

    /// Whether no root is cached.
    pub fn is_empty(&self) -> bool {
        self.roots.is_empty()
    }

    /// Metapage reads and stale roots of every handle remembered so far.
    pub fn stats(&self) -> RootCacheStats {
        self.stats
    }
}
