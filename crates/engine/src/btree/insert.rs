//! Insertion: find the leaf, check uniqueness, add the entry, and split
//! full pages up to a new root (Lehman & Yao, with PostgreSQL's refinements).
//!
//! # The leaf lock (`btree.leaf_insert_lock`, Postgres Pro 2018)
//!
//! The descent takes shared locks on inner pages only (`BTree::descend`).
//! Then:
//!
//! * `share_then_exclusive` (PostgreSQL ≤ 11): lock the leaf *shared*,
//!   move right (shared) to the covering leaf, release it, lock it again
//!   *exclusive*, move right again if it split meanwhile. Every insert
//!   takes the leaf's content lock twice, and the shared acquisitions of
//!   concurrent inserters queue behind — and in front of — each other's
//!   exclusive ones.
//! * `exclusive` (PostgreSQL 12, Korotkov's patch): lock the leaf
//!   exclusive directly after the last inner page.
//!
//! # Splitting a page `L` (lock held exclusive)
//!
//! 1. Choose the split point `m` among the entries plus the new one so both
//!    halves fit (byte-balanced; 90/10 when appending at the end of the
//!    rightmost leaf, so ascending keys fill pages as PostgreSQL's
//!    fillfactor does).
//! 2. Allocate a page `R` and lock it exclusive (no one can reach it yet).
//!    Write `R` completely: entries `m..`, the old high key, the old right
//!    link.
//! 3. Only then rewrite `L`: entries `..m`, high key = separator, right
//!    link = `R`. From this moment a reader that finds its key `≥` `L`'s
//!    high key moves right into `R` — right half written before the left
//!    is relinked, the L&Y order.
//! 4. Release `R`; keep `L` locked. Lock the parent (the descent stack's
//!    entry for the next level, moving right on that level while the
//!    separator is `≥` its high key); only then release `L`; insert the
//!    downlink `(separator → R)` in the parent, which may split in turn.
//!    If `L` was the only page of its level (leftmost and rightmost: the
//!    root), make a new root holding `(−∞ → L, separator → R)` and point
//!    the metapage at it, with `L`, the new root and the metapage locked.
//!
//! Releasing `L` once its parent is locked is Lehman & Yao's original
//! order. PostgreSQL keeps the left child locked until the downlink is in
//! (it must clear the child's incomplete-split flag, which exists for WAL
//! replay); turnstile has no WAL, and places downlinks by key rather than
//! by searching the parent for the child's block, so two splits racing to
//! one parent may insert their downlinks in either order.

use super::alloc::PageAllocator;
use super::error::{BtreeError, KeyError, Result};
use super::key::{self, display_key, has_null, leaf_entry};
use super::log::BtreeOp;
use super::meta::{self, META_BLOCK};
use super::page::{self, Bad, Opaque, FLAG_LEFTMOST, MAX_ENTRY, USABLE};
use super::root_cache::CachedRoot;
use super::tree::{BTree, Descent, StackEntry};
use crate::tid::Tid;
use crate::types::Value;
use turnstile_storage::page::{PageBuf, PAGE_SIZE};
use turnstile_storage::{BlockNumber, PageWriteGuard, StorageError};
use turnstile_sync::config::LeafInsertLock;

/// Fill of the left half, in tenths, when a rightmost leaf splits because
/// of an append at its end (PostgreSQL's leaf fillfactor, 90).
const APPEND_SPLIT_TENTHS: usize = 9;

impl<'p> BTree<'p> {
    /// Inserts `(key, tid)`; `key` has one value per index column.
    ///
    /// In a unique index, fails with [`BtreeError::UniqueViolation`] if a
    /// key equal to `key` (without NULLs) is present; the check and the
    /// insert happen under the same exclusive lock of the first leaf that
    /// can hold `key`, so two concurrent inserts of one key cannot both
    /// succeed. New pages come from `alloc`.
    pub fn insert(&self, alloc: &mut impl PageAllocator<'p>, key: &[Value], tid: Tid) -> Result<()> {
        self.insert_checked(alloc, key, tid, &mut |_| Ok(true))
    }

    /// As [`BTree::insert`], but in a unique index an existing entry with
    /// the same key conflicts only if `conflicts(its tid)` says so: the
    /// caller looks at the heap tuple (PostgreSQL's `_bt_check_unique`
    /// fetches it) and answers `false` for a tuple that is dead for good;
    /// an error reading it (a storage fault) fails the insert as it is.
    /// `conflicts` runs with the leaf (and possibly a right sibling) locked;
    /// it may take heap page locks, never index page locks.
    ///
    /// When entries of `key` that do not conflict continue on pages to the
    /// right, the new entry's place may be there: the insert moves right
    /// with lock coupling (the right page is locked before the left one is
    /// released), so another inserter of `key`, which must pass the first
    /// leaf, cannot overtake it.
    pub fn insert_checked(
        &self,
        alloc: &mut impl PageAllocator<'p>,
        key: &[Value],
        tid: Tid,
        conflicts: &mut dyn FnMut(Tid) -> Result<bool, StorageError>,
    ) -> Result<()> {
        let types = &self.opts.key_types;
        if key.len() != types.len() {
            return Err(self.key_error(KeyError::ColumnCount { expected: types.len(), got: key.len() }));
        }
        let kb = key::encode_key(types, key).map_err(|e| self.key_error(e))?;
        let entry = leaf_entry(&kb, tid);
        if entry.len() > MAX_ENTRY {
            return Err(BtreeError::EntryTooLarge { index: self.opts.name.clone(), size: entry.len(), max: MAX_ENTRY });
        }
        // A unique insert descends to the first leaf that can hold `key`
        // with any TID (all inserters of `key` meet there); others go
        // straight to the entry's own place.
        let check_unique = self.opts.unique && !has_null(key);
        let probe: &[u8] = if check_unique { &kb } else { &entry };
        let mut d = self.descend(probe)?;
        if self.opts.leaf_insert_lock == LeafInsertLock::ShareThenExclusive {
            self.walk_leaf_shared(&mut d, probe)?;
        }
        let mut moves = 0;
        loop {
            let block = d.leaf.block();
            let g = d.leaf.lock_exclusive();
            if std::mem::take(&mut d.unverified_root) && self.root_is_stale(&g, 0) {
                drop(g);
                d = self.descend_refreshed(probe)?;
                continue;
            }
            let bad = |r: Bad| self.corrupt(block, r);
            let op = self.tree_page(&g, block, 0)?;
            if let Some(right) = self.right_of(&g, &op, block, probe)? {
                d.leaf = self.move_right(g, block, right, &mut moves)?;
                continue;
            }
            if check_unique {
                if self.unique_conflict(&g, block, &op, &kb, conflicts)? {
                    return Err(BtreeError::UniqueViolation { index: self.opts.name.clone(), key: key.to_vec() });
                }
                // Entries of `key` that do not conflict may continue to
                // the right, and the new entry's place with them.
                if page::beyond_high_key(&g, &op, &entry).map_err(bad)? {
                    return self.insert_right(alloc, g, block, op, &entry, key, tid, &mut d.stack, 0);
                }
            }
            return self.place(alloc, g, block, op, &entry, key, tid, &mut d.stack);
        }
    }

    /// Moves right from the locked leaf `g` (coupled: the right page is
    /// locked before `g` is released) until the page covers `entry`, and
    /// places it there.
    #[allow(clippy::too_many_arguments)]
    fn insert_right(
        &self,
        alloc: &mut impl PageAllocator<'p>,
        g: PageWriteGuard<'_>,
        block: BlockNumber,
        op: Opaque,
        entry: &[u8],
        key: &[Value],
        tid: Tid,
        stack: &mut Vec<StackEntry>,
        mut moves: u32,
    ) -> Result<()> {
        let right = op.right.ok_or_else(|| self.corrupt(block, "a page with a high key has no right link"))?;
        if right == block {
            return Err(self.corrupt(right, "right links lead back to the leaf being inserted into"));
        }
        self.count_move(&mut moves, block)?;
        let rpin = self.pin(right)?;
        let rg = rpin.lock_exclusive();
        drop(g);
        let rop = self.tree_page(&rg, right, 0)?;
        if page::beyond_high_key(&rg, &rop, entry).map_err(|r| self.corrupt(right, r))? {
            return self.insert_right(alloc, rg, right, rop, entry, key, tid, stack, moves);
        }
        self.place(alloc, rg, right, rop, entry, key, tid, stack)
    }

    /// Adds `entry` to the locked leaf `g`, which covers it, splitting it
    /// if it is full.
    #[allow(clippy::too_many_arguments)]
    fn place(
        &self,
        alloc: &mut impl PageAllocator<'p>,
        mut g: PageWriteGuard<'_>,
        block: BlockNumber,
        op: Opaque,
        entry: &[u8],
        key: &[Value],
        tid: Tid,
        stack: &mut Vec<StackEntry>,
    ) -> Result<()> {
        let bad = |r: Bad| self.corrupt(block, r);
        let pos = page::lower_bound(&g, entry).map_err(bad)?;
        if pos < page::count(&g) && page::entry(&g, pos).map_err(bad)? == entry {
            return Err(BtreeError::DuplicateEntry { index: self.opts.name.clone(), key: display_key(key), tid });
        }
        g.begin_change();
        if page::insert_at(&mut g, pos, entry) {
            return self.log(BtreeOp::Insert, &mut [&mut g]);
        }
        let pins = self.root_pins(alloc, &op)?;
        let (sep, right) = self.split(alloc, &mut g, block, &op, entry, pos)?;
        self.insert_downlink(alloc, g, block, op, stack, sep, right, pins)
    }

    /// The classic path's first visit to the leaf: shared lock (checking
    /// an unverified cached root, re-descending if it is stale), move right
    /// while `probe ≥ high key`, release. Leaves `d.leaf` at the covering
    /// leaf.
    fn walk_leaf_shared(&self, d: &mut Descent<'p>, probe: &[u8]) -> Result<()> {
        let mut moves = 0;
        loop {
            let block = d.leaf.block();
            let p = d.leaf.lock_shared();
            if std::mem::take(&mut d.unverified_root) && self.root_is_stale(&p, 0) {
                drop(p);
                *d = self.descend_refreshed(probe)?;
                continue;
            }
            let op = self.tree_page(&p, block, 0)?;
            if let Some(right) = self.right_of(&p, &op, block, probe)? {
                d.leaf = self.move_right(p, block, right, &mut moves)?;
                continue;
            }
            return Ok(());
        }
    }

    /// Whether an entry with key bytes `kb` that `conflicts` exists,
    /// starting at the leaf `p` (locked exclusive by the caller, and the
    /// first leaf that can hold `kb`). While the entries with `kb` could
    /// continue on the right sibling (every entry of this page from `kb`
    /// on starts with `kb` and its high key starts with `kb`), the sibling
    /// is locked shared *while `p` stays locked* — a left-to-right lock
    /// coupling, so the answer holds until `p` is released.
    fn unique_conflict(
        &self,
        p: &PageBuf,
        block: BlockNumber,
        op: &Opaque,
        kb: &[u8],
        conflicts: &mut dyn FnMut(Tid) -> Result<bool, StorageError>,
    ) -> Result<bool> {
        let bad = |b: BlockNumber| move |r: Bad| self.corrupt(b, r);
        // `Some(true)`: a conflict; `Some(false)`: the run of `kb` ends on
        // this page; `None`: it may continue to the right.
        let mut scan_page = |p: &PageBuf, b: BlockNumber| -> Result<Option<bool>> {
            let mut i = page::lower_bound(p, kb).map_err(bad(b))?;
            while i < page::count(p) {
                let e = page::entry(p, i).map_err(bad(b))?;
                if !e.starts_with(kb) {
                    return Ok(Some(false));
                }
                let (_, tid) =
                    key::split_entry(e).ok_or_else(|| self.corrupt(b, "a leaf entry is too short to hold a TID"))?;
                if conflicts(tid)? {
                    return Ok(Some(true));
                }
                i += 1;
            }
            Ok(None)
        };
        if let Some(answer) = scan_page(p, block)? {
            return Ok(answer);
        }
        let Some(mut high) = page::high_key(p, op).map_err(bad(block))?.map(<[u8]>::to_vec) else {
            return Ok(false);
        };
        let mut next = op.right;
        let mut moves = 0;
        while high.starts_with(kb) {
            let Some(right) = next else { break };
            if right == block {
                // Locking it again would wait for ourselves.
                return Err(self.corrupt(right, "right links lead back to the leaf being inserted into"));
            }
            let rpin = self.pin(right)?;
            let rp = rpin.lock_shared();
            let rop = self.tree_page(&rp, right, 0)?;
            if let Some(answer) = scan_page(&rp, right)? {
                return Ok(answer);
            }
            match page::high_key(&rp, &rop).map_err(bad(right))? {
                Some(h) => high = h.to_vec(),
                None => break,
            }
            next = rop.right;
            self.count_move(&mut moves, right)?;
        }
        Ok(false)
    }

    /// Splits the exclusively locked page `g` (block `block`, special
    /// space `op`) while inserting `new` at entry position `pos`. Returns
    /// the separator (the new right page's low bound, now `g`'s high key)
    /// and the new right page. See the module documentation for the order
    /// of writes.
    fn split(
        &self,
        alloc: &mut impl PageAllocator<'p>,
        g: &mut PageWriteGuard<'_>,
        block: BlockNumber,
        op: &Opaque,
        new: &[u8],
        pos: usize,
    ) -> Result<(Vec<u8>, BlockNumber)> {
        let bad = |r: Bad| self.corrupt(block, r);
        let old: Box<PageBuf> = Box::new(**g);
        let mut entries =
            (0..page::count(&old)).map(|i| page::entry(&old, i)).collect::<Result<Vec<_>, _>>().map_err(bad)?;
        entries.insert(pos, new);
        let old_high = page::high_key(&old, op).map_err(bad)?;
        let leaf = op.is_leaf();
        let append = leaf && op.is_rightmost() && pos + 1 == entries.len();
        let m = choose_split(&entries, old_high.map_or(0, <[u8]>::len), leaf, append)
            .ok_or_else(|| self.corrupt(block, "no split point leaves both halves within a page"))?;
        let (separator, right_first) = if leaf {
            (entries[m].to_vec(), None)
        } else {
            let (child, sep) = page::downlink(entries[m]).map_err(bad)?;
            (sep.to_vec(), Some(page::inner_entry(child, &[])))
        };

        // The right half first: complete before anything points to it.
        let rpin = alloc.allocate(self.rel)?;
        let rblock = rpin.block();
        let mut r = rpin.lock_exclusive();
        self.check_fresh(&r, rblock)?;
        r.begin_change();
        g.begin_change();
        let right_op = Opaque { right: op.right, level: op.level, flags: 0 };
        let right_entries: Vec<&[u8]> = match &right_first {
            None => entries[m..].to_vec(),
            Some(first) => std::iter::once(first.as_slice()).chain(entries[m + 1..].iter().copied()).collect(),
        };
        assert!(page::build(&mut r, right_op, old_high, right_entries), "choose_split checked the right half fits");

        // Then relink the left half to it.
        let mut left: Box<PageBuf> = Box::new([0; PAGE_SIZE]);
        let left_op = Opaque { right: Some(rblock), level: op.level, flags: op.flags & FLAG_LEFTMOST };
        assert!(
            page::build(&mut left, left_op, Some(&separator), entries[..m].iter().copied()),
            "choose_split checked the left half fits"
        );
        **g = *left;
        // One record: after a crash both halves are there or neither is.
        self.log(BtreeOp::Split, &mut [&mut r, g])?;
        drop(r);
        Ok((separator, rblock))
    }

    /// Inserts the downlink `(separator → right)` for a split of `child`
    /// (block `child_block`, special space `child_op` as before the split),
    /// which the caller still holds exclusive: see the module
    /// documentation, step 4.
    #[allow(clippy::too_many_arguments)]
    fn insert_downlink(
        &self,
        alloc: &mut impl PageAllocator<'p>,
        child: PageWriteGuard<'_>,
        child_block: BlockNumber,
        child_op: Opaque,
        stack: &mut Vec<StackEntry>,
        separator: Vec<u8>,
        right: BlockNumber,
        pins: Option<RootPins<'p>>,
    ) -> Result<()> {
        let level = child_op.level.checked_add(1).ok_or_else(|| self.corrupt(child_block, "level out of range"))?;
        if child_op.is_leftmost() && child_op.is_rightmost() {
            let pins = match pins {
                Some(p) => p,
                None => RootPins { root: alloc.allocate(self.rel)?, meta: self.pin(META_BLOCK)? },
            };
            return self.new_root(child, child_block, level, &separator, right, pins);
        }
        let mut pblock = loop {
            match stack.pop() {
                Some(e) if e.level == level => break e.block,
                Some(e) if e.level < level => continue,
                Some(e) => {
                    stack.push(e);
                    break self.leftmost_at(level)?;
                }
                // The descent began at a root that has split since: start
                // from the leftmost page of the parent level.
                None => break self.leftmost_at(level)?,
            }
        };
        let downlink = page::inner_entry(right, &separator);
        let mut moves = 0;
        let mut ppin = self.pin(pblock)?;
        let (mut parent, pop) = loop {
            if pblock == child_block {
                // Locking it again would wait for ourselves.
                return Err(self.corrupt(pblock, "a page is its own parent"));
            }
            let p = ppin.lock_exclusive();
            let pop = self.tree_page(&p, pblock, level)?;
            if let Some(next) = self.right_of(&p, &pop, pblock, &separator)? {
                ppin = self.move_right(p, pblock, next, &mut moves)?;
                pblock = next;
                continue;
            }
            break (p, pop);
        };
        // The parent that covers the separator is locked: the child may go.
        drop(child);
        let (i, _) = page::child_for(&parent, &separator).map_err(|r| self.corrupt(pblock, r))?;
        parent.begin_change();
        if page::insert_at(&mut parent, i + 1, &downlink) {
            return self.log(BtreeOp::Downlink, &mut [&mut parent]);
        }
        let pins = self.root_pins(alloc, &pop)?;
        let (sep2, right2) = self.split(alloc, &mut parent, pblock, &pop, &downlink, i + 1)?;
        self.insert_downlink(alloc, parent, pblock, pop, stack, sep2, right2, pins)
    }

    /// Grows the tree by one level: a new root over `child` (the old root,
    /// locked exclusive) and its new right sibling.
    fn new_root(
        &self,
        child: PageWriteGuard<'_>,
        child_block: BlockNumber,
        level: u16,
        separator: &[u8],
        right: BlockNumber,
        pins: RootPins<'p>,
    ) -> Result<()> {
        let RootPins { root: rpin, meta: mpin } = pins;
        let root_block = rpin.block();
        let mut root = rpin.lock_exclusive();
        self.check_fresh(&root, root_block)?;
        root.begin_change();
        let entries = [page::inner_entry(child_block, &[]), page::inner_entry(right, separator)];
        let op = Opaque { right: None, level, flags: FLAG_LEFTMOST };
        assert!(page::build(&mut root, op, None, entries.iter().map(Vec::as_slice)), "two downlinks fit");
        let mut m = mpin.lock_exclusive();
        let old = meta::read(&m).map_err(|r| self.corrupt(META_BLOCK, r))?;
        if old.root != child_block || old.level + 1 != level {
            return Err(self.corrupt(
                META_BLOCK,
                format!(
                    "the metapage's root is block {} on level {}, but block {child_block} is the only page of level {}",
                    old.root,
                    old.level,
                    level - 1
                ),
            ));
        }
        m.begin_change();
        meta::write(&mut m, self.meta_for(root_block, level));
        self.log(BtreeOp::NewRoot, &mut [&mut root, &mut m])?;
        // The splitting handle knows the new root: its cache follows
        // (other handles find their cached root no longer alone on its level).
        self.root_cache.set(CachedRoot { root: root_block, level });
        drop(m);
        drop(root);
        drop(child);
        Ok(())
    }

    pub(super) fn key_error(&self, source: KeyError) -> BtreeError {
        BtreeError::Key { index: self.opts.name.clone(), source }
    }
}

/// The split point `m` (entries `..m` stay left, `m..` go right) that best
/// balances the halves' bytes — or puts 90 % left for an `append` — among
/// those where both halves fit, with their high keys: the left one is
/// entry `m` (its key part on an inner page), the right one the old high
/// key. On an inner page entry `m` moves right with its key truncated to
/// −∞ (a bare downlink).
/// The pages a root split needs besides its two halves — the new root and
/// the metapage — pinned before the split changes anything, so that a
/// failure to get them (a full disk, a read error) leaves the tree as it
/// was rather than a split root no parent level points to.
struct RootPins<'p> {
    root: turnstile_storage::PinnedBuffer<'p>,
    meta: turnstile_storage::PinnedBuffer<'p>,
}

impl<'p> BTree<'p> {
    /// [`RootPins`] when the page with special space `op` is the root.
    fn root_pins(&self, alloc: &mut impl PageAllocator<'p>, op: &Opaque) -> Result<Option<RootPins<'p>>> {
        if !(op.is_leftmost() && op.is_rightmost()) {
            return Ok(None);
        }
        let meta = self.pin(META_BLOCK)?;
        Ok(Some(RootPins { root: alloc.allocate(self.rel)?, meta }))
    }
}

fn choose_split(entries: &[&[u8]], old_high_len: usize, leaf: bool, append: bool) -> Option<usize> {
    let n = entries.len();
    if n < 2 {
        return None;
    }
    let mut prefix = Vec::with_capacity(n + 1);
    prefix.push(0usize);
    for e in entries {
        prefix.push(prefix.last().copied().unwrap_or(0) + page::footprint(e.len()));
    }
    let total = prefix[n];
    let target_tenths = if append { APPEND_SPLIT_TENTHS } else { 5 };
    let mut best: Option<(usize, usize)> = None;
    for m in 1..n {
        let (left, right) = if leaf {
            (prefix[m] + page::footprint(entries[m].len()), total - prefix[m] + page::footprint(old_high_len))
        } else {
            let sep_len = entries[m].len().saturating_sub(page::DOWNLINK_SIZE);
            (
                prefix[m] + page::footprint(sep_len),
                page::footprint(page::DOWNLINK_SIZE) + total - prefix[m + 1] + page::footprint(old_high_len),
            )
        };
        if left > USABLE || right > USABLE {
            continue;
        }
        let score = (left * 10).abs_diff(target_tenths * (left + right));
        if best.is_none_or(|(s, _)| score < s) {
            best = Some((score, m));
        }
    }
    best.map(|(_, m)| m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_points_balance_bytes_and_appends_fill_the_left_page() {
        let small = vec![1u8; 20];
        let entries: Vec<&[u8]> = (0..100).map(|_| small.as_slice()).collect();
        assert_eq!(choose_split(&entries, 20, true, false), Some(50));
        let m = choose_split(&entries, 0, true, true).unwrap();
        assert!((88..=91).contains(&m), "append split at {m}");
        let big = vec![2u8; MAX_ENTRY];
        let three = [big.as_slice(), big.as_slice(), big.as_slice()];
        assert!(choose_split(&three, MAX_ENTRY, true, false).is_some(), "maximal entries can always split");
        let mut inner = page::inner_entry(1, &big);
        inner.truncate(MAX_ENTRY + page::DOWNLINK_SIZE);
        let four = [inner.as_slice(), inner.as_slice(), inner.as_slice(), inner.as_slice()];
        assert!(choose_split(&four, MAX_ENTRY, false, false).is_some());
        assert_eq!(choose_split(&three[..1], 0, true, false), None);
    }
}
