//! The index handle ([`BTree`]): creating and opening an index, and the
//! descent from the root to a leaf that every operation starts with — from
//! the handle's cached root when it has one ([`super::root_cache`]), else
//! from the metapage.

use super::alloc::PageAllocator;
use super::error::{BtreeError, Result};
use super::log::BtreeOp;
use super::meta::{self, Meta, META_BLOCK};
use super::page::{self, Opaque, FLAG_LEFTMOST};
use super::root_cache::{CachedRoot, RootCacheStats, RootCell};
use crate::types::ColumnType;
use std::borrow::Cow;
use turnstile_storage::page::PageBuf;
use turnstile_storage::{BlockNumber, BufferPool, BufferTag, Fork, PinnedBuffer, RelFileId};
use turnstile_sync::config::{BtreeConfig, LeafInsertLock};
use turnstile_sync::Config;

/// What an index is: the part of its definition the B-tree needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BtreeOptions {
    /// The index's name, for error messages.
    pub name: String,
    /// The key columns' types, in key order.
    pub key_types: Vec<ColumnType>,
    /// Whether keys must be unique (NULLs never conflict).
    pub unique: bool,
    /// How inserts lock their leaf (`btree.leaf_insert_lock`,
    /// Postgres Pro 2018).
    pub leaf_insert_lock: LeafInsertLock,
    /// Whether a scan's first leaf checks the probe against the page's
    /// edges before its binary search (`btree.edge_precheck`).
    pub edge_precheck: bool,
}

impl BtreeOptions {
    /// Options for index `name` on columns of `key_types`, taking the
    /// leaf-lock mode from `config`.
    pub fn new(name: impl Into<String>, key_types: Vec<ColumnType>, unique: bool, config: &Config) -> BtreeOptions {
        BtreeOptions::with_btree_config(name, key_types, unique, &config.btree)
    }

    /// [`BtreeOptions::new`] from the `btree` section alone.
    pub fn with_btree_config(
        name: impl Into<String>,
        key_types: Vec<ColumnType>,
        unique: bool,
        btree: &BtreeConfig,
    ) -> BtreeOptions {
        BtreeOptions {
            name: name.into(),
            key_types,
            unique,
            leaf_insert_lock: btree.leaf_insert_lock,
            edge_precheck: btree.edge_precheck,
        }
    }
}

impl From<BtreeOptions> for Cow<'_, BtreeOptions> {
    fn from(opts: BtreeOptions) -> Self {
        Cow::Owned(opts)
    }
}

impl<'a> From<&'a BtreeOptions> for Cow<'a, BtreeOptions> {
    fn from(opts: &'a BtreeOptions) -> Self {
        Cow::Borrowed(opts)
    }
}

/// A handle on one B-tree index stored in `rel`'s main fork, read and
/// written through the buffer pool. Cheap to hold; any number of threads
/// may use one handle (or their own handles) concurrently.
///
/// The handle caches where the root is ([`BTree::cached_root`]), so only
/// its first descent reads the metapage; a caller that re-attaches per
/// statement carries the cache over with [`BTree::with_cached_root`].
#[derive(Debug, Clone)]
pub struct BTree<'p> {
    pub(super) pool: &'p BufferPool,
    pub(super) rel: RelFileId,
    /// Owned, or borrowed from a plan that probes the index once per
    /// execution (no copy of the name and key types per probe).
    pub(super) opts: Cow<'p, BtreeOptions>,
    pub(super) root_cache: RootCell,
}

/// Where a descent ended: the leaf that covers the probe (unlocked, pinned;
/// it may have split since, so the caller moves right after locking it),
/// and the inner pages passed on the way, lowest level last.
pub(super) struct Descent<'p> {
    pub(super) leaf: PinnedBuffer<'p>,
    pub(super) stack: Vec<StackEntry>,
    /// The leaf is the cached root (level 0), taken on trust: the caller,
    /// when it first locks it, clears this and, if [`BTree::root_is_stale`]
    /// says so, releases it and continues with [`BTree::descend_refreshed`].
    pub(super) unverified_root: bool,
}

/// An inner page a descent went through (PostgreSQL's `BTStack`): where
/// to start looking for the parent when a child splits.
#[derive(Clone, Copy, Debug)]
pub(super) struct StackEntry {
    pub(super) block: BlockNumber,
    pub(super) level: u16,
}

/// After this many right-moves in one walk the walk checks that it has
/// not visited more pages than the relation has: a right-link cycle in a
/// corrupt index is an error, not an endless loop.
const MOVES_BEFORE_CYCLE_CHECK: u32 = 256;

impl<'p> BTree<'p> {
    /// Creates an empty index in `rel`, whose main fork must exist (the
    /// storage manager's `create`) and have no blocks yet:
    /// the metapage (block 0) and an empty root leaf, allocated through
    /// `alloc` (relation extension) and written through the pool.
    pub fn create(
        pool: &'p BufferPool,
        alloc: &mut impl PageAllocator<'p>,
        rel: RelFileId,
        opts: BtreeOptions,
    ) -> Result<BTree<'p>> {
        let tree = BTree::attach(pool, rel, opts)?;
        let nblocks = pool.store().nblocks(rel, Fork::Main)?;
        if nblocks != 0 {
            return Err(BtreeError::NotEmpty { index: tree.opts.name.clone(), nblocks });
        }
        let meta_pin = alloc.allocate(rel)?;
        if meta_pin.block() != META_BLOCK {
            return Err(BtreeError::NotEmpty { index: tree.opts.name.clone(), nblocks: meta_pin.block() });
        }
        let root_pin = alloc.allocate(rel)?;
        let mut root = root_pin.lock_exclusive();
        tree.check_fresh(&root, root_pin.block())?;
        root.begin_change();
        let fits = page::build(&mut root, Opaque { right: None, level: 0, flags: FLAG_LEFTMOST }, None, []);
        assert!(fits, "an empty page fits");
        let mut m = meta_pin.lock_exclusive();
        tree.check_fresh(&m, META_BLOCK)?;
        m.begin_change();
        meta::write(&mut m, tree.meta_for(root_pin.block(), 0));
        tree.log(BtreeOp::Create, &mut [&mut root, &mut m])?;
        tree.root_cache.set(CachedRoot { root: root_pin.block(), level: 0 });
        Ok(tree)
    }

    /// Opens the existing index in `rel`, checking its metapage against
    /// `opts` (and caching the root it names).
    pub fn open(pool: &'p BufferPool, rel: RelFileId, opts: BtreeOptions) -> Result<BTree<'p>> {
        let tree = BTree::attach(pool, rel, opts)?;
        let m = tree.meta_for_root()?;
        if usize::from(m.ncols) != tree.opts.key_types.len() || m.unique != tree.opts.unique {
            return Err(BtreeError::Definition {
                index: tree.opts.name.clone(),
                reason: format!(
                    "the metapage says {} columns, unique = {}; the definition {} columns, unique = {}",
                    m.ncols,
                    m.unique,
                    tree.opts.key_types.len(),
                    tree.opts.unique
                ),
            });
        }
        Ok(tree)
    }

    /// A handle on the existing index in `rel` without any I/O: the caller
    /// vouches for `opts` (the catalog's definition), where [`BTree::open`]
    /// checks them against the metapage at the cost of one more metapage
    /// lock. Nothing is cached yet: the first descent reads the metapage;
    /// every descent verifies each page it visits. Use it on hot paths that
    /// re-attach per statement, with [`BTree::with_cached_root`].
    ///
    /// `opts` may be owned or borrowed (`&BtreeOptions`, e.g. from a plan).
    pub fn attach(pool: &'p BufferPool, rel: RelFileId, opts: impl Into<Cow<'p, BtreeOptions>>) -> Result<BTree<'p>> {
        let opts = opts.into();
        if opts.key_types.is_empty() || opts.key_types.len() > usize::from(u16::MAX) {
            return Err(BtreeError::Definition {
                index: opts.name.clone(),
                reason: format!("an index needs 1 to {} key columns, got {}", u16::MAX, opts.key_types.len()),
            });
        }
        Ok(BTree { pool, rel, opts, root_cache: RootCell::new(None) })
    }

    /// The handle, with `root` as where the root was last seen — what an
    /// earlier handle on *this same relation file* returned from
    /// [`BTree::cached_root`] (PostgreSQL's `rd_amcache`). Descents start
    /// there without reading the metapage; a root that has split since is
    /// noticed and refreshed ([`super::root_cache`]). `None` leaves the
    /// cache as it is.
    #[must_use]
    pub fn with_cached_root(self, root: Option<CachedRoot>) -> BTree<'p> {
        if let Some(r) = root {
            self.root_cache.set(r);
        }
        self
    }

    /// Where this handle last saw the root (from the metapage, or from its
    /// own root split), to hand to the next handle on the same relation
    /// file; `None` before the first descent.
    pub fn cached_root(&self) -> Option<CachedRoot> {
        self.root_cache.get()
    }

    /// This handle's metapage reads and stale cached roots.
    pub fn root_cache_stats(&self) -> RootCacheStats {
        self.root_cache.stats()
    }

    /// The index's name.
    pub fn name(&self) -> &str {
        &self.opts.name
    }

    /// The relation holding the index.
    pub fn rel(&self) -> RelFileId {
        self.rel
    }

    /// The index's options.
    pub fn options(&self) -> &BtreeOptions {
        &self.opts
    }

    /// The buffer pool the index is read through.
    pub fn pool(&self) -> &'p BufferPool {
        self.pool
    }

    pub(super) fn meta_for(&self, root: BlockNumber, level: u16) -> Meta {
        Meta { root, level, ncols: self.opts.key_types.len() as u16, unique: self.opts.unique }
    }

    /// Logs the change of `pages` (each begun with `begin_change`).
    pub(super) fn log(&self, op: BtreeOp, pages: &mut [&mut dyn turnstile_storage::ChangedPage]) -> Result<()> {
        self.pool.log_change(super::log::kind(op), pages, &[])?;
        Ok(())
    }

    pub(super) fn corrupt(&self, block: BlockNumber, reason: impl Into<String>) -> BtreeError {
        BtreeError::Corrupt { index: self.opts.name.clone(), block, reason: reason.into() }
    }

    /// Pins `block` of the index.
    pub(super) fn pin(&self, block: BlockNumber) -> Result<PinnedBuffer<'p>> {
        Ok(self.pool.read_buffer(BufferTag::new(self.rel, Fork::Main, block))?)
    }

    /// Checks a locked page of the tree proper and that it is on `level`.
    pub(super) fn tree_page(&self, p: &PageBuf, block: BlockNumber, level: u16) -> Result<Opaque> {
        let op = page::tree_opaque(p).map_err(|r| self.corrupt(block, r))?;
        if op.level != level {
            return Err(self.corrupt(block, format!("page is on level {}, expected level {level}", op.level)));
        }
        Ok(op)
    }

    /// Checks that a page just allocated is empty (new, or initialised by
    /// the extender without special space).
    pub(super) fn check_fresh(&self, p: &PageBuf, block: BlockNumber) -> Result<()> {
        let h = turnstile_storage::page::header(p);
        if turnstile_storage::page::is_new(p) || (turnstile_storage::page::item_count(p) == 0 && h.upper == h.special) {
            Ok(())
        } else {
            Err(self.corrupt(block, "a page handed out for a new B-tree page is not empty"))
        }
    }

    /// Reads the metapage (shared lock held only while copying it),
    /// leaving the root cache alone: for the structure check, which must
    /// see the real metapage.
    pub(super) fn meta(&self) -> Result<Meta> {
        let pin = self.pin(META_BLOCK)?;
        let p = pin.lock_shared();
        meta::read(&p).map_err(|r| self.corrupt(META_BLOCK, r))
    }

    /// Reads the metapage to find the root, and caches the root it names.
    fn meta_for_root(&self) -> Result<Meta> {
        self.root_cache.note_metapage_read();
        let m = self.meta()?;
        self.root_cache.set(CachedRoot { root: m.root, level: m.level });
        Ok(m)
    }

    /// Whether the locked page `p` is not (any more) the root a cached
    /// [`CachedRoot`] on `level` promised: not a sound tree page on
    /// `level`, or not alone on it — PostgreSQL's check in `_bt_getroot`
    /// (level, leftmost, rightmost). See [`super::root_cache`].
    pub(super) fn root_is_stale(&self, p: &PageBuf, level: u16) -> bool {
        match page::tree_opaque(p) {
            Ok(op) => op.level != level || !op.is_leftmost() || !op.is_rightmost(),
            Err(_) => true,
        }
    }

    /// Counts one right-move of a walk and fails on a right-link cycle.
    pub(super) fn count_move(&self, moves: &mut u32, block: BlockNumber) -> Result<()> {
        *moves += 1;
        if *moves % MOVES_BEFORE_CYCLE_CHECK == 0 {
            let nblocks = self.pool.store().nblocks(self.rel, Fork::Main)?;
            if *moves > nblocks {
                return Err(self.corrupt(block, "right links form a cycle"));
            }
        }
        Ok(())
    }

    /// The Lehman–Yao test every walk makes on a page it has locked (`p`,
    /// block `block`, special space `op`): `None` if the page covers
    /// `probe`, else — `probe ≥` its high key, so the page split after
    /// whoever pointed here read it — the right sibling to move to with
    /// [`BTree::move_right`].
    pub(super) fn right_of(
        &self,
        p: &PageBuf,
        op: &Opaque,
        block: BlockNumber,
        probe: &[u8],
    ) -> Result<Option<BlockNumber>> {
        if page::beyond_high_key(p, op, probe).map_err(|r| self.corrupt(block, r))? {
            return Ok(Some(op.right.expect("a page with a high key has a right link")));
        }
        Ok(None)
    }

    /// The right-move of a walk, from `block` (locked by `guard`, shared
    /// or exclusive) to `right`: releases the page, counts the move
    /// (failing on a right-link cycle), and pins `right` for the caller to
    /// lock. Never holds two content locks.
    pub(super) fn move_right<G>(
        &self,
        guard: G,
        block: BlockNumber,
        right: BlockNumber,
        moves: &mut u32,
    ) -> Result<PinnedBuffer<'p>> {
        drop(guard);
        self.count_move(moves, block)?;
        self.pin(right)
    }

    /// Descends from the root to the leaf level for `probe`, holding one
    /// shared content lock at a time (L&Y): on each inner page, move right
    /// while `probe ≥ high key` (the page split after its parent was
    /// read), then follow the downlink covering `probe`. The leaf itself is
    /// *not* locked: the caller locks it in the mode it needs and moves
    /// right from there — after checking it, if the descent says
    /// [`Descent::unverified_root`].
    ///
    /// The root is the cached one if there is one, checked when its lock
    /// is taken (and refreshed from the metapage if stale); else the
    /// metapage's, which is then cached.
    pub(super) fn descend(&self, probe: &[u8]) -> Result<Descent<'p>> {
        match self.root_cache.get() {
            Some(root) => self.descend_from(probe, root, true),
            None => {
                let m = self.meta_for_root()?;
                self.descend_from(probe, CachedRoot { root: m.root, level: m.level }, false)
            }
        }
    }

    /// [`BTree::descend`] after finding the cached root stale: counts it,
    /// reads the metapage (caching its root) and descends from there.
    pub(super) fn descend_refreshed(&self, probe: &[u8]) -> Result<Descent<'p>> {
        self.root_cache.note_stale();
        let m = self.meta_for_root()?;
        self.descend_from(probe, CachedRoot { root: m.root, level: m.level }, false)
    }

    /// The descent from `start`; `cached` says it came from the cache and
    /// must be checked before it is trusted (else it came from the
    /// metapage, and a page that does not match is corruption).
    fn descend_from(&self, probe: &[u8], start: CachedRoot, cached: bool) -> Result<Descent<'p>> {
        let (mut block, mut level) = (start.root, start.level);
        let mut stack = Vec::with_capacity(usize::from(level));
        let mut moves = 0;
        let mut pin = match self.pin(block) {
            Ok(pin) => pin,
            // E.g. a block beyond the end of the file: the metapage's root
            // gets the strict treatment, which reports a real error again.
            Err(_) if cached => return self.descend_refreshed(probe),
            Err(e) => return Err(e),
        };
        let mut unverified_root = cached;
        while level > 0 {
            let p = pin.lock_shared();
            if std::mem::take(&mut unverified_root) && self.root_is_stale(&p, level) {
                drop(p);
                return self.descend_refreshed(probe);
            }
            let op = self.tree_page(&p, block, level)?;
            if let Some(right) = self.right_of(&p, &op, block, probe)? {
                pin = self.move_right(p, block, right, &mut moves)?;
                block = right;
                continue;
            }
            let (_, child) = page::child_for(&p, probe).map_err(|r| self.corrupt(block, r))?;
            drop(p);
            stack.push(StackEntry { block, level });
            block = child;
            level -= 1;
            pin = self.pin(block)?;
        }
        Ok(Descent { leaf: pin, stack, unverified_root })
    }

    /// The leftmost page of `level`, found from the root by following
    /// first downlinks: where a split looks for its parent when its
    /// descent did not pass through that level (the root split after the
    /// descent read the metapage or checked the cached root). Reads the
    /// metapage, not the cache: a cached root may be below `level`.
    pub(super) fn leftmost_at(&self, level: u16) -> Result<BlockNumber> {
        let m = self.meta_for_root()?;
        if m.level < level {
            return Err(self.corrupt(META_BLOCK, format!("level {level} is above the root (level {})", m.level)));
        }
        let (mut block, mut at) = (m.root, m.level);
        while at > level {
            let pin = self.pin(block)?;
            let p = pin.lock_shared();
            self.tree_page(&p, block, at)?;
            let first = page::entry(&p, 0).and_then(page::downlink).map_err(|r| self.corrupt(block, r))?;
            block = first.0;
            at -= 1;
        }
        Ok(block)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Value;
    use std::sync::Arc;
    use turnstile_lock::LockManager;
    use turnstile_storage::io::OsIo;
    use turnstile_storage::{Extender, PoolOptions, Smgr, SmgrOptions};
    use turnstile_sync::config::ExtendStrategy;
    use turnstile_sync::LwLockPolicy;

    #[test]
    fn create_refuses_a_used_relation_and_open_checks_the_definition() {
        let dir = tempfile::tempdir().unwrap();
        let smgr = Smgr::open_with(
            dir.path(),
            SmgrOptions { segment_blocks: 64, max_open_files: 4, ..Default::default() },
            Arc::new(OsIo),
        )
        .unwrap();
        let options = PoolOptions {
            shared_buffers: 32,
            mapping_partitions: 4,
            policy: LwLockPolicy::Fair,
            lookup_hints: true,
            huge_pages: false,
            prefault: false,
        };
        let pool = BufferPool::with_options(options, smgr.clone()).unwrap();
        let rel = RelFileId::new(1, 42);
        smgr.create(rel, Fork::Main).unwrap();
        let locks = LockManager::new(&Config::default()).unwrap();
        let mut ext = Extender::new(&pool, locks.register().unwrap(), ExtendStrategy::Classic, 1);
        let opts = BtreeOptions::new("i", vec![ColumnType::Int4], true, &Config::default());
        let tree = BTree::create(&pool, &mut ext, rel, opts.clone()).unwrap();
        tree.insert(&mut ext, &[Value::Int4(1)], crate::tid::Tid::new(0, 0)).unwrap();
        assert!(matches!(BTree::create(&pool, &mut ext, rel, opts.clone()), Err(BtreeError::NotEmpty { .. })));
        assert_eq!(BTree::open(&pool, rel, opts.clone()).unwrap().search(&[Value::Int4(1)]).unwrap().len(), 1);
        assert_eq!(BTree::attach(&pool, rel, opts.clone()).unwrap().search(&[Value::Int4(1)]).unwrap().len(), 1);
        let two_cols = BtreeOptions { key_types: vec![ColumnType::Int4, ColumnType::Int4], ..opts.clone() };
        assert!(matches!(BTree::open(&pool, rel, two_cols), Err(BtreeError::Definition { .. })));
        let no_cols = BtreeOptions { key_types: vec![], ..opts };
        assert!(matches!(BTree::open(&pool, rel, no_cols), Err(BtreeError::Definition { .. })));
    }
}
