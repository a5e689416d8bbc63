//! # The B-tree: Lehman & Yao over the buffer pool
//!
//! A concurrent B+-tree in the style of PostgreSQL's `nbtree` (its
//! `src/backend/access/nbtree/README` is the reference; the ideas are
//! reimplemented here, not the code). Every page has a **right link** to
//! its right sibling and a **high key** bounding its entries from above,
//! so a reader that arrives at a page after it split — it read the
//! downlink before the split — notices that its key is `≥` the high key
//! and **moves right** instead of blocking or restarting. Readers hold at
//! most one content lock; inserts hold one except while splitting.
//!
//! ```text
//!  block 0: metapage ── root, level
//!                         │
//!  level 2:            [ −∞ | k40 ]──▶ ∅
//!                       │      └──────────────┐
//!  level 1:   [ −∞ | k20 ] ─────────────▶ [ −∞ | k60 ]──▶ ∅        high key of the left page = k40
//!              │      └────┐               │     └────┐
//!  level 0:  [ leaf ]──▶[ leaf ]──▶ … ──▶[ leaf ]──▶[ leaf ]──▶ ∅  entries key‖tid, sorted by memcmp
//! ```
//!
//! ## Keys
//!
//! Keys are encoded so that `memcmp` is SQL order ([`key`]); a leaf entry
//! is `key ‖ tid`, the heap TID being the last tie-breaker (PostgreSQL 12+),
//! so all entries are distinct and each has exactly one place. Separators
//! in inner pages are copies of leaf entries; the first separator of each
//! inner page is empty, i.e. −∞.
//!
//! ## Pages ([`page`], [`meta`])
//!
//! | block | contents |
//! |---|---|
//! | 0 | the metapage: magic, version, root block, root level, key columns, unique flag |
//! | ≥ 1 | tree pages: storage header; slot 0 = high key (empty on a rightmost page = +∞); slots 1.. = entries ascending; 16-byte special space = magic `TBT1`, right link, level, flags (`META`, `LEFTMOST`) |
//!
//! Invariants, for a page `P` on level `l` with low bound `lo(P)` (its left
//! sibling's high key, −∞ for the leftmost page) and high key `hk(P)`:
//!
//! * `lo(P) ≤ e < hk(P)` for every leaf entry `e` of `P`; entries strictly
//!   increase; `hk(P) = lo(right(P))`.
//! * Inner entry `i` of `P` is `(sep_i, child_i)` with `sep_0 = −∞` standing
//!   for `lo(P)`, and `lo(child_i) = sep_i`: the downlinks of level `l`, in
//!   order, are the pages of level `l − 1` in right-link order — except
//!   that a split's new right page may briefly have no downlink yet (it is
//!   reachable through its left sibling's right link meanwhile).
//! * `level(child) = level(parent) − 1`; leaves are level 0; the metapage's
//!   root is the only page of the top level.
//! * Pages are never deleted and entries never move left: a split moves
//!   the upper part of a page to a *new* page on its right.
//!
//! [`BTree::check`] verifies all of these on a quiescent tree.
//!
//! ## What protects what
//!
//! | data | protected by |
//! |---|---|
//! | a page's bytes | its buffer's content `LwLock` (tranche `BufferContent`): shared to read, exclusive to change |
//! | root block and level | the metapage's content lock; changed only by a root split |
//! | a handle's cached root block and level ([`root_cache`]) | nothing: a hint, trusted only after the page it names is locked and found alone on the cached level |
//! | which page covers a key | nothing beyond the page's own lock: a reader verifies the page's high key after locking it and moves right if the key is beyond it |
//! | new pages | the relation-extension lock and free-space map, via [`PageAllocator`] (the storage crate's `Extender`) |
//!
//! ## Lock order (content locks)
//!
//! 1. **Descents and scans** hold one content lock at a time: the metapage
//!    (released before the root is locked) unless the handle has the root
//!    cached, then each page on the way down, releasing a page before
//!    locking its child or right sibling. A cached root found stale is
//!    released before the metapage is locked.
//! 2. **The leaf of an insert** is locked exclusive; `leaf_insert_lock`
//!    decides whether a shared visit precedes it ([`insert`]).
//! 3. **Unique check**: while holding the leaf exclusive, the right
//!    sibling may be locked shared (then its right sibling, one at a
//!    time) — left to right on one level.
//! 4. **Split of page `L`**: `L` (exclusive) and the newly allocated page
//!    `R` (exclusive; unreachable by anyone else until `L` links to it)
//!    are held together; `R` is released first. Then, **with `L` still
//!    locked**, the parent is locked exclusive — moving right on the
//!    parent level means releasing one parent page before locking the next,
//!    so at most `L` + one parent page are held — and only when the parent
//!    covering the separator is locked is `L` released. The parent's own
//!    split repeats this one level up. For a **root split**: `L`, the new
//!    root (new page, exclusive) and then the metapage (exclusive) are
//!    held together and released metapage, root, `L`.
//! 5. Page allocation (extension lock, free-space map, victim search) may
//!    happen while holding the pages of step 4; the extender waits only
//!    on locks of pages no B-tree code can reach yet.
//!
//! Every acquisition while another content lock is held goes either
//! left-to-right on one level, or from a level to the level above (the
//! metapage counting as the top): a global order (level, then position
//! in the level) that pages keep forever, since a split inserts the new
//! page immediately to the right of the old one. Hence no deadlock.
//!
//! ## Why it is correct (Lehman & Yao)
//!
//! *Searches never miss an entry.* Entries only move right, into a page
//! that is written completely before its left sibling's right link and
//! high key are changed to point to it, atomically under `L`'s exclusive
//! lock. A reader that followed a downlink to `P` before `P` split sees,
//! once it locks `P`, either the old `P` (the entry is there) or the new
//! `P` with high key `hk`; if its key is `≥ hk` the entry is to the right,
//! and moving right along right links reaches it, because the right
//! neighbours of a page cover exactly the keys above its high key. A page
//! reached through a stale root is still the leftmost page of its level,
//! so moving right from it works too — which is why a cached root
//! ([`root_cache`]) needs no invalidation by the backend that splits it:
//! readers check it is still alone on its level only to avoid walking that
//! level, and refresh it from the metapage when it is not.
//!
//! *Scans return each entry once, in order*: see [`scan`].
//!
//! *Inserts put each entry in its one place.* The insert holds the leaf
//! exclusive after moving right until `entry < hk`, so the leaf covers
//! the entry at the moment of the insert. A split finds its parent by
//! moving right from the page the descent came through (a parent only
//! splits rightwards); a split whose descent started at a root that has
//! since split finds the new parent level from the metapage's root
//! (leftmost page of the level, then right). The downlink is placed by key
//! (separators are unique), so two splits racing to the same parent
//! insert in any order.
//!
//! *Unique inserts cannot both succeed.* All inserters of key `k` descend
//! with `k` without a TID and so meet at the same first leaf that can hold
//! `k` — moving right past any page whose high key is `≤ k`. The check and
//! the insert happen under that leaf's exclusive lock; entries of `k` can
//! continue on the right only if the high key starts with `k`, and then
//! the check follows right links with the leaf still locked (step 3).
//!
//! ## Files
//!
//! [`key`] encoding · [`page`] layout · [`meta`] metapage ·
//! [`root_cache`] the cached metapage (`rd_amcache`) · [`tree`] handle
//! and descent · [`insert`] inserts and splits · [`scan`] search
//! and range scans · [`build`] bulk build · [`vacuum`] VACUUM's entry
//! removal · [`check`] structure check ·
//! [`alloc`] where new pages come from · [`error`].

pub mod alloc;
pub mod build;
pub mod check;
pub mod error;
pub mod insert;
pub mod key;
pub mod log;
pub mod meta;
pub mod page;
pub mod root_cache;
pub mod scan;
pub mod tree;
pub mod vacuum;

pub use alloc::PageAllocator;
pub use check::CheckReport;
pub use error::{BtreeError, KeyError, Result};
pub use root_cache::{CachedRoot, RootCacheStats};
pub use scan::{IndexEntry, RangeScan};
pub use tree::{BTree, BtreeOptions};
