//! The cached metapage (PostgreSQL's `rd_amcache`, filled by
//! `_bt_getroot`): where the root was last seen, so that a descent can
//! pin and lock the root directly instead of reading block 0 first.
//!
//! Reading the metapage costs a buffer look-up, a pin and a shared
//! content lock on a page that *every* descent of the index touches; with
//! one index scan per partition it is a third of a query's buffer accesses
//! (workload W1). Its contents change only when the root splits, so each
//! handle (and, through the session's relation cache, each backend) keeps a
//! copy: a [`CachedRoot`].
//!
//! # Why a stale root is harmless, and how it is noticed
//!
//! Pages are never deleted or reused for another purpose, and a page keeps
//! its level forever. A root that has split since it was cached is still
//! the leftmost page of its level, so a Lehman–Yao descent from it finds
//! every key — it only walks further than needed (right along the old
//! root's level). So, as PostgreSQL does, the descent checks the page it
//! lands on, under the shared lock it takes anyway:
//!
//! * it is a sound tree page on the cached level, and
//! * it is alone on that level: leftmost *and* rightmost.
//!
//! A page alone on its level is the root: a level above it exists only
//! after the split of the level's only page, which gave that page a right
//! sibling that never goes away. If the check fails the cache is **stale**:
//! the descent releases the page, reads the metapage (refreshing the
//! cache) and starts again from the root it names, with the usual strict
//! checks — so a corrupt page or metapage is still reported as
//! [`super::BtreeError::Corrupt`] by the descent that reads it. At most one
//! refresh happens per descent.
//!
//! A cached root on level 0 is a leaf, which the descent returns *unlocked*
//! (its caller locks it in the mode it needs): the caller makes the check
//! when it first locks it (`Descent::unverified_root`). Locking it an extra
//! time in the descent would cost a shared lock per insert on a one-page
//! index — the share-then-exclusive pattern Postgres Pro 2018 removes. PostgreSQL
//! pays that relock (`_bt_search` on a leaf root in write mode).
//!
//! The inserting handle that splits the root points its cache at the new
//! root itself; other handles discover the split by the check above.
//!
//! # What the cache may not outlive
//!
//! A cached root is a block number of *one* relation file. The owner of a
//! cache keyed by relation id (the session's relation cache,
//! [`crate::catalog::AmCache`]) forgets it whenever DDL invalidates the
//! relation cache, so a dropped and re-created index is never descended
//! from a block of its predecessor. Even then the check above keeps the
//! descent correct: a block of another tree that passes it is that tree's
//! root.
//!
//! # The cell
//!
//! A handle is `Sync` (threads may share one), so the cached root is one
//! atomic word, loaded and stored `Relaxed`: it is only a hint, and the
//! page it names is read under that page's content lock, whose acquire
//! orders the read. Two threads refreshing at once may store their roots in
//! either order; an older root is merely stale, and noticed as such.

use super::meta::META_BLOCK;
use turnstile_storage::BlockNumber;
use turnstile_sync::sync::atomic::{AtomicU64, Ordering};

/// Where an index's root was last seen: a copy of the metapage's root
/// block and level (PostgreSQL keeps the whole `BTMetaPageData` in
/// `rd_amcache`; the root and its level are what a descent needs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CachedRoot {
    /// The root block as of the last metapage read (never the metapage's
    /// own block 0).
    pub root: BlockNumber,
    /// The root's level then (0: the root was a leaf).
    pub level: u16,
}

/// Counters of one handle's root cache (or, summed, of a backend's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RootCacheStats {
    /// Reads of the metapage to find the root: descents with nothing
    /// cached, refreshes of a stale cache, parent look-ups after a root
    /// split, `BTree::open`. Not the structure check's read.
    pub metapage_reads: u64,
    /// Descents that found the cached root stale (not alone on its level
    /// any more, or not the page it was) and refreshed it.
    pub stale_roots: u64,
}

impl RootCacheStats {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: RootCacheStats) {
        self.metapage_reads += other.metapage_reads;
        self.stale_roots += other.stale_roots;
    }
}

/// Word value of "nothing cached": block 0 is the metapage, never a root.
const EMPTY: u64 = 0;
/// Bits 0..32 of the word: the root block.
const BLOCK_MASK: u64 = 0xFFFF_FFFF;
/// Bits 32..48 of the word: the root's level. Bits 48..64 are zero.
const LEVEL_SHIFT: u32 = 32;

const _: () = assert!(META_BLOCK as u64 == EMPTY, "the empty word must name the metapage, which is never a root");
const _: () = assert!(BlockNumber::MAX as u64 == BLOCK_MASK, "a block number fills bits 0..32");
const _: () = assert!(LEVEL_SHIFT + u16::BITS <= u64::BITS, "the level fits above the block");

/// A handle's cached root: one atomic word, [`EMPTY`] or
/// `level << LEVEL_SHIFT | root` with `root ≠ 0`; and its counters.
#[derive(Debug, Default)]
pub(super) struct RootCell {
    word: AtomicU64,
    metapage_reads: AtomicU64,
    stale_roots: AtomicU64,
}

impl RootCell {
    /// A cell holding `root`, with zero counters.
    pub(super) fn new(root: Option<CachedRoot>) -> RootCell {
        RootCell { word: AtomicU64::new(pack(root)), ..RootCell::default() }
    }

    /// The cached root, if any.
    #[inline]
    pub(super) fn get(&self) -> Option<CachedRoot> {
        let w = self.word.load(Ordering::Relaxed);
        (w != EMPTY).then_some(CachedRoot { root: (w & BLOCK_MASK) as BlockNumber, level: (w >> LEVEL_SHIFT) as u16 })
    }

    /// Caches `root` (read from the metapage, or just made by a root split).
    pub(super) fn set(&self, root: CachedRoot) {
        self.word.store(pack(Some(root)), Ordering::Relaxed);
    }

    /// Counts one metapage read.
    pub(super) fn note_metapage_read(&self) {
        self.metapage_reads.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts one stale cached root.
    pub(super) fn note_stale(&self) {
        self.stale_roots.fetch_add(1, Ordering::Relaxed);
    }

    /// The counters.
    pub(super) fn stats(&self) -> RootCacheStats {
        RootCacheStats {
            metapage_reads: self.metapage_reads.load(Ordering::Relaxed),
            stale_roots: self.stale_roots.load(Ordering::Relaxed),
        }
    }
}

impl Clone for RootCell {
    /// A clone starts from the same root and counts from zero: counters
    /// belong to one handle.
    fn clone(&self) -> RootCell {
        RootCell::new(self.get())
    }
}

fn pack(root: Option<CachedRoot>) -> u64 {
    match root {
        // A root at block 0 would read as "empty": nothing is cached,
        // which only costs a metapage read (the descent then reports the
        // metapage's impossible root as corruption).
        Some(r) if r.root != META_BLOCK => (u64::from(r.level) << LEVEL_SHIFT) | u64::from(r.root),
        _ => EMPTY,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_word_round_trips_and_block_zero_means_empty() {
        let c = RootCell::new(None);
        assert_eq!(c.get(), None);
        for r in [CachedRoot { root: 1, level: 0 }, CachedRoot { root: u32::MAX, level: u16::MAX }] {
            c.set(r);
            assert_eq!(c.get(), Some(r));
        }
        c.set(CachedRoot { root: META_BLOCK, level: 3 });
        assert_eq!(c.get(), None);
        c.set(CachedRoot { root: 9, level: 2 });
        c.note_metapage_read();
        c.note_stale();
        let copy = c.clone();
        assert_eq!(copy.get(), Some(CachedRoot { root: 9, level: 2 }));
        assert_eq!(copy.stats(), RootCacheStats::default());
        assert_eq!(c.stats(), RootCacheStats { metapage_reads: 1, stale_roots: 1 });
    }
}
