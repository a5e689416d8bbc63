//! Bulk build (`create_index` on a loaded table, PostgreSQL's
//! `nbtsort.c`): sort the entries, fill leaves left to right to
//! [`LEAF_FILL_TENTHS`], build each upper level from the one below, and
//! write the pages straight through the storage manager — the index is new
//! and not yet visible, so nothing else can have its pages in the pool.
//!
//! Pages are laid out level by level: the metapage at block 0, the leaves
//! from block 1, then each upper level; a page's right sibling is the next
//! block. The metapage is written last, so a build that fails halfway
//! leaves no metapage pointing into a half-written tree.

use super::error::{BtreeError, Result};
use super::key::{self, display_key, split_entry};
use super::meta::{self, META_BLOCK};
use super::page::{self, Opaque, FLAG_LEFTMOST, MAX_ENTRY, USABLE};
use super::tree::{BTree, BtreeOptions};
use crate::tid::Tid;
use crate::types::Value;
use turnstile_storage::page::{PageBuf, PAGE_SIZE};
use turnstile_storage::{BlockNumber, BufferPool, BufferTag, Fork, PageStore, RelFileId};

/// Fill of a leaf built in bulk, in tenths (PostgreSQL's default leaf
/// fillfactor, 90), leaving room for later inserts before the first split.
pub const LEAF_FILL_TENTHS: usize = 9;
/// Fill of an inner page built in bulk, in tenths (PostgreSQL: 70).
pub const INNER_FILL_TENTHS: usize = 7;
/// Pages written per storage call.
const WRITE_BATCH_PAGES: usize = 64;

impl<'p> BTree<'p> {
    /// Builds an index over `entries` (unsorted) in `rel`, whose main fork
    /// must exist (the storage manager's `create`) and have no blocks yet. Fails with [`BtreeError::UniqueViolation`] when the
    /// index is unique and two entries share a key without NULLs.
    pub fn build(
        pool: &'p BufferPool,
        rel: RelFileId,
        opts: BtreeOptions,
        entries: impl IntoIterator<Item = (Vec<Value>, Tid)>,
    ) -> Result<BTree<'p>> {
        let tree = BTree::attach(pool, rel, opts)?;
        let store = pool.store().as_ref();
        let nblocks = store.nblocks(rel, Fork::Main)?;
        if nblocks != 0 {
            return Err(BtreeError::NotEmpty { index: tree.opts.name.clone(), nblocks });
        }
        let sorted = tree.sorted_entries(entries)?;

        let mut w = Writer { pool, store, rel, next: 0, pending: Vec::new() };
        // A placeholder metapage; the real one is written when the root is known.
        w.push(Box::new([0; PAGE_SIZE]))?;
        let mut level = 0u16;
        let max_key_len = sorted.iter().map(Vec::len).max().unwrap_or(0);
        let leaf_items = sorted.iter().map(|e| Item { key: e, stored: e, child: None });
        let mut downlinks = pack_level(&mut w, level, leaf_items, max_key_len, LEAF_FILL_TENTHS)?;
        while downlinks.len() > 1 {
            level += 1;
            let items = downlinks.iter().map(|(child, low)| Item { key: low, stored: low, child: Some(*child) });
            downlinks = pack_level(&mut w, level, items, max_key_len, INNER_FILL_TENTHS)?;
        }
        w.flush()?;
        let root = downlinks[0].0;
        let mut m: Box<PageBuf> = Box::new([0; PAGE_SIZE]);
        meta::write(&mut m, tree.meta_for(root, level));
        let mut metapage = [m];
        let tag = BufferTag::new(rel, Fork::Main, META_BLOCK);
        pool.log_new_pages(super::log::kind(super::log::BtreeOp::Build), tag, &mut metapage)?;
        page_out(store, rel, META_BLOCK, &mut metapage[0])?;
        tree.root_cache.set(super::root_cache::CachedRoot { root, level });
        // No fsync here: durability comes from `Engine::flush` (pool flush +
        // smgr sync of every file), the engine's only durability point.
        // `sync_all` here would fsync every file the smgr ever touched, once
        // per index built — quadratic when loading a thousand partitions.
        Ok(tree)
    }

    /// Encodes and sorts the entries, rejecting duplicates.
    fn sorted_entries(&self, entries: impl IntoIterator<Item = (Vec<Value>, Tid)>) -> Result<Vec<Vec<u8>>> {
        let types = &self.opts.key_types;
        let mut out = Vec::new();
        for (k, tid) in entries {
            if k.len() != types.len() {
                return Err(self.key_error(super::error::KeyError::ColumnCount { expected: types.len(), got: k.len() }));
            }
            let e = key::leaf_entry(&key::encode_key(types, &k).map_err(|e| self.key_error(e))?, tid);
            if e.len() > MAX_ENTRY {
                return Err(BtreeError::EntryTooLarge { index: self.opts.name.clone(), size: e.len(), max: MAX_ENTRY });
            }
            out.push(e);
        }
        out.sort_unstable();
        for w in out.windows(2) {
            let (Some((ka, tid)), Some((kb, _))) = (split_entry(&w[0]), split_entry(&w[1])) else {
                unreachable!("every entry has a TID suffix");
            };
            if ka != kb {
                continue;
            }
            let decoded = key::decode_key(types, ka).expect("encoded just above");
            if w[0] == w[1] {
                return Err(BtreeError::DuplicateEntry {
                    index: self.opts.name.clone(),
                    key: display_key(&decoded),
                    tid,
                });
            }
            if self.opts.unique && !key::has_null(&decoded) {
                return Err(BtreeError::UniqueViolation { index: self.opts.name.clone(), key: decoded });
            }
        }
        Ok(out)
    }
}

/// One entry to pack: its sort key, the bytes stored (the leaf entry, or
/// the separator of a downlink) and, on inner levels, the child.
struct Item<'a> {
    key: &'a [u8],
    stored: &'a [u8],
    child: Option<BlockNumber>,
}

impl Item<'_> {
    /// The bytes this item takes as the first entry of a page (an inner
    /// page's first separator is truncated to −∞).
    fn bytes(&self, first: bool) -> Vec<u8> {
        match self.child {
            None => self.stored.to_vec(),
            Some(c) => page::inner_entry(c, if first { &[] } else { self.stored }),
        }
    }

    /// The length of [`Item::bytes`].
    fn len(&self, first: bool) -> usize {
        match self.child {
            None => self.stored.len(),
            Some(_) => page::DOWNLINK_SIZE + if first { 0 } else { self.stored.len() },
        }
    }
}

/// Packs one level left to right into consecutive blocks and returns the
/// downlinks for the level above: each page's block and low key (the key
/// of its first item; empty for the leftmost page).
fn pack_level<'a>(
    w: &mut Writer<'_>,
    level: u16,
    items: impl Iterator<Item = Item<'a>>,
    max_key_len: usize,
    fill_tenths: usize,
) -> Result<Vec<(BlockNumber, Vec<u8>)>> {
    let fill = USABLE * fill_tenths / 10;
    let mut items = items.peekable();
    let mut up = Vec::new();
    let mut page_items: Vec<Vec<u8>> = Vec::new();
    let mut low: Vec<u8> = Vec::new();
    let mut used = 0usize;
    let mut first_page = true;
    while let Some(item) = items.next() {
        if page_items.is_empty() {
            low = if first_page { Vec::new() } else { item.key.to_vec() };
        }
        let bytes = item.bytes(page_items.is_empty());
        used += page::footprint(bytes.len());
        page_items.push(bytes);
        let Some(next) = items.peek() else { break };
        // Add the next item only if the page stays within the fill target
        // and keeps room for any high key of this level after it;
        // otherwise close the page with the next item's key as high key
        // (which the previous test left room for).
        let with_next = used + page::footprint(next.len(false));
        if with_next > fill || with_next + page::footprint(max_key_len) > USABLE {
            let block = w.next;
            let op = Opaque { right: Some(block + 1), level, flags: if first_page { FLAG_LEFTMOST } else { 0 } };
            w.push(make_page(op, Some(next.key), &page_items))?;
            up.push((block, std::mem::take(&mut low)));
            page_items.clear();
            used = 0;
            first_page = false;
        }
    }
    let block = w.next;
    let op = Opaque { right: None, level, flags: if first_page { FLAG_LEFTMOST } else { 0 } };
    w.push(make_page(op, None, &page_items))?;
    up.push((block, low));
    Ok(up)
}

fn make_page(op: Opaque, high_key: Option<&[u8]>, items: &[Vec<u8>]) -> Box<PageBuf> {
    let mut p: Box<PageBuf> = Box::new([0; PAGE_SIZE]);
    let fits = page::build(&mut p, op, high_key, items.iter().map(Vec::as_slice));
    assert!(fits, "pack_level closes a page before it overflows");
    p
}

/// Checksums `p` for `block` and writes it.
fn page_out(store: &dyn PageStore, rel: RelFileId, block: BlockNumber, p: &mut PageBuf) -> Result<()> {
    turnstile_storage::page::set_checksum(p, block);
    store.write_pages(BufferTag::new(rel, Fork::Main, block), &[p])?;
    Ok(())
}

/// Appends pages to the relation in batches.
struct Writer<'s> {
    pool: &'s BufferPool,
    store: &'s dyn PageStore,
    rel: RelFileId,
    /// The block the next pushed page gets.
    next: BlockNumber,
    pending: Vec<Box<PageBuf>>,
}

impl Writer<'_> {
    fn push(&mut self, page: Box<PageBuf>) -> Result<BlockNumber> {
        let block = self.next;
        self.pending.push(page);
        self.next += 1;
        if self.pending.len() >= WRITE_BATCH_PAGES {
            self.flush()?;
        }
        Ok(block)
    }

    fn flush(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let n = self.pending.len() as u32;
        let first = self.store.extend(self.rel, Fork::Main, n)?;
        assert_eq!(first + n, self.next, "only the build extends a new index");
        let tag = BufferTag::new(self.rel, Fork::Main, first);
        self.pool.log_new_pages(super::log::kind(super::log::BtreeOp::Build), tag, &mut self.pending)?;
        for (i, p) in self.pending.iter_mut().enumerate() {
            turnstile_storage::page::set_checksum(p, first + i as BlockNumber);
        }
        let pages: Vec<&PageBuf> = self.pending.iter().map(|p| &**p).collect();
        self.store.write_pages(BufferTag::new(self.rel, Fork::Main, first), &pages)?;
        self.pending.clear();
        Ok(())
    }
}
