//! The free-space map: which pages of a relation have room, so inserters
//! reuse them before extending (PostgreSQL's FSM, kept in memory).
//!
//! Relation extension adds more pages than the extender needs and records
//! the spares here (Freund 2020: `bulk`'s `k − 1` spares, `classic`'s
//! `RelationAddExtraBlocks`); other inserters [`FreeSpaceMap::claim`] them
//! instead of queueing on the extension lock.
//!
//! # Layout
//!
//! Each relation's map is a binary max tree over its block numbers, the
//! structure of one PostgreSQL FSM page (`fsm_set_avail`,
//! `fsm_search_avail`) without the on-disk levels: a leaf per block holds
//! the free bytes last recorded for it, each inner node the maximum of its
//! two children. With `cap` leaves (a power of two) in `tree[cap..2·cap]`:
//!
//! * `tree[cap + b]` = free bytes recorded for block `b`, `0` = not in the map;
//! * `tree[i] = max(tree[2i], tree[2i + 1])` for `1 ≤ i < cap`;
//! * `pages` = number of leaves `≠ 0`.
//!
//! Recording a page and claiming one are `O(log cap)` — a COPY records
//! every page it fills, so a linear search would make each claim scan the
//! whole relation under the map's exclusive lock. A claim descends from
//! the root always into the leftmost child with enough room, so it finds
//! the *lowest-numbered* page with room. `cap` doubles when a block past
//! it is recorded; the map costs 4 bytes per block of the relation.
//!
//! # What protects what
//!
//! | data | protected by |
//! |---|---|
//! | relation → per-relation map | an `LwLock` (tranche `FreeSpaceMap`, `lwlock.policy`), shared for lookups |
//! | one relation's tree and page count | that relation's own `LwLock` (same tranche, same policy) |
//! | the relation's `max_free` hint | written under that `LwLock`, read without it |
//!
//! A relation's own lock is taken exclusively by every claim and record
//! (shared only by [`FreeSpaceMap::pages`], a statistic), for well under
//! a microsecond. Both locks follow `lwlock.policy`. Under either policy
//! a release wakes the head waiter to retry while the running backend may
//! take the free lock, as PostgreSQL's LWLocks do. A release that handed
//! the lock to the sleeping head waiter (an earlier `fair`) formed a
//! convoy on this exclusive-only lock when inserters outnumbered the
//! cores — every hand-over waited for a wake-up while runnable backends
//! queued behind it (W4 at 16 clients on 2 cores: 14.8 of 16 backends in
//! `LWLock:FreeSpaceMap`). `turnstile micro extend` reports which policy
//! the map followed.
//!
//! `max_free = tree[1]` whenever the relation's lock is not held
//! exclusively: a claim that the hint already rules out (`max_free <
//! needed`, the usual case for a bulk load whose pages are all nearly
//! full) returns without taking the lock, as PostgreSQL's `fsm_search`
//! gives up after reading the root's value. A hint read while another
//! backend records a page may be stale; the map is advice either way
//! (PostgreSQL's is too), and the hint is never stale across a lock both
//! backends took — the relation-extension lock orders the extender's
//! record before the waiter's recheck.
//!
//! A claim *removes* the page it returns, so two inserters are never sent
//! to the same page at once (PostgreSQL hands the same page to both and
//! lets the loser retry); the claimer re-records what is left after its
//! insert. Invariant: a page appears at most once, with the free bytes
//! last recorded, and only if they are at least [`MIN_USEFUL_FREE`].

use crate::rel::{BlockNumber, RelFileId};
use crate::sync::atomic::{AtomicU16, Ordering};
use crate::sync::Arc;
use hashbrown::HashMap;
use turnstile_sync::{LwLock, LwLockExclusiveGuard, LwLockPolicy, Tranche};

/// Pages with less free space than this are not worth recording.
pub const MIN_USEFUL_FREE: usize = 32;

/// One relation's map and its lock-free hint.
#[derive(Debug)]
struct RelMap {
    /// `tree[1]` of `space`, stored under its exclusive lock.
    max_free: AtomicU16,
    space: LwLock<RelSpace>,
}

impl RelMap {
    /// The tree, locked exclusively; the hint is refreshed when the guard
    /// drops.
    fn write(&self) -> RelMapWriteGuard<'_> {
        RelMapWriteGuard { space: self.space.lock_exclusive(), max_free: &self.max_free }
    }
}

/// Exclusive access to one relation's tree (see [`RelMap::write`]).
struct RelMapWriteGuard<'a> {
    space: LwLockExclusiveGuard<'a, RelSpace>,
    max_free: &'a AtomicU16,
}

impl Drop for RelMapWriteGuard<'_> {
    fn drop(&mut self) {
        // Relaxed: the hint is advice; ordering with the pages it points
        // to comes from the buffer locks the claimer then takes.
        self.max_free.store(self.space.tree[1], Ordering::Relaxed);
    }
}

/// The map of every relation.
#[derive(Debug)]
pub struct FreeSpaceMap {
    rels: LwLock<HashMap<RelFileId, Arc<RelMap>>>,
}

impl FreeSpaceMap {
    /// An empty map whose locks (the relation directory's and each
    /// relation's) use `policy` (`lwlock.policy`).
    pub fn new(policy: LwLockPolicy) -> FreeSpaceMap {
        FreeSpaceMap { rels: LwLock::new(Tranche::FreeSpaceMap, policy, HashMap::new()) }
    }

    /// The admission policy the map's locks follow.
    pub fn policy(&self) -> LwLockPolicy {
        self.rels.policy()
    }

    fn rel(&self, rel: RelFileId) -> Arc<RelMap> {
        if let Some(m) = self.rels.lock_shared().get(&rel) {
            return Arc::clone(m);
        }
        let policy = self.policy();
        let mut rels = self.rels.lock_exclusive();
        Arc::clone(rels.entry(rel).or_insert_with(|| {
            Arc::new(RelMap {
                max_free: AtomicU16::new(0),
                space: LwLock::new(Tranche::FreeSpaceMap, policy, RelSpace::new()),
            })
        }))
    }

    /// Records that `block` of `rel` has `free` bytes available.
    pub fn record(&self, rel: RelFileId, block: BlockNumber, free: usize) {
        let map = self.rel(rel);
        map.write().space.set(block, leaf_value(free));
    }

    /// Records many pages with the same free space (the spares of one
    /// bulk extension) under one lock acquisition.
    pub fn record_many(&self, rel: RelFileId, blocks: impl IntoIterator<Item = BlockNumber>, free: usize) {
        let value = leaf_value(free);
        if value == 0 {
            return;
        }
        let map = self.rel(rel);
        let mut guard = map.write();
        for b in blocks {
            guard.space.set(b, value);
        }
    }

    /// Takes the lowest-numbered page of `rel` with at least `needed` bytes
    /// free out of the map and returns it.
    pub fn claim(&self, rel: RelFileId, needed: usize) -> Option<BlockNumber> {
        // Leaves of 0 mean "not recorded": never match them.
        let needed = u16::try_from(needed.max(1)).ok()?;
        let map = self.rel(rel);
        if map.max_free.load(Ordering::Relaxed) < needed {
            return None;
        }
        let mut guard = map.write();
        let block = guard.space.lowest_with(needed)?;
        guard.space.set(block, 0);
        Some(block)
    }

    /// Forgets pages of `rel` numbered `from` and above (after truncation).
    pub fn truncate(&self, rel: RelFileId, from: BlockNumber) {
        let map = self.rel(rel);
        map.write().space.truncate(from);
    }

    /// Pages of `rel` recorded now.
    pub fn pages(&self, rel: RelFileId) -> usize {
        self.rels.lock_shared().get(&rel).map_or(0, |m| m.space.lock_shared().pages)
    }
}

/// The leaf value for `free` bytes: `0` (not recorded) below
/// [`MIN_USEFUL_FREE`], saturated at `u16::MAX` (a page has 8 kB).
fn leaf_value(free: usize) -> u16 {
    if free < MIN_USEFUL_FREE {
        0
    } else {
        u16::try_from(free).unwrap_or(u16::MAX)
    }
}

/// One relation's map: the max tree of the module docs.
#[derive(Debug)]
struct RelSpace {
    /// `tree[0]` unused, inner nodes `1..cap`, leaves `cap..2·cap`.
    tree: Vec<u16>,
    /// Leaves; a power of two.
    cap: usize,
    /// Leaves `≠ 0`.
    pages: usize,
}

impl RelSpace {
    /// Leaves of a fresh map (grown by doubling).
    const INITIAL_LEAVES: usize = 64;

    fn new() -> RelSpace {
        RelSpace { tree: vec![0; 2 * Self::INITIAL_LEAVES], cap: Self::INITIAL_LEAVES, pages: 0 }
    }

    /// Sets block `block`'s leaf to `value` and repairs its ancestors.
    fn set(&mut self, block: BlockNumber, value: u16) {
        let b = block as usize;
        if b >= self.cap {
            if value == 0 {
                return;
            }
            self.grow(b + 1);
        }
        let mut i = self.cap + b;
        let old = self.tree[i];
        if old == value {
            return;
        }
        self.tree[i] = value;
        self.pages = self.pages + usize::from(value != 0) - usize::from(old != 0);
        while i > 1 {
            i /= 2;
            let max = self.tree[2 * i].max(self.tree[2 * i + 1]);
            if self.tree[i] == max {
                // Unchanged here, so unchanged above.
                break;
            }
            self.tree[i] = max;
        }
    }

    /// The lowest block whose leaf is at least `needed` (`needed ≥ 1`).
    fn lowest_with(&self, needed: u16) -> Option<BlockNumber> {
        debug_assert!(needed >= 1);
        if self.tree[1] < needed {
            return None;
        }
        let mut i = 1;
        while i < self.cap {
            i *= 2;
            if self.tree[i] < needed {
                i += 1;
            }
            debug_assert!(self.tree[i] >= needed, "a parent is the max of its children");
        }
        Some((i - self.cap) as BlockNumber)
    }

    /// Makes room for at least `leaves` leaves (doubling at least).
    fn grow(&mut self, leaves: usize) {
        let cap = leaves.next_power_of_two().max(2 * self.cap);
        let mut tree = vec![0; 2 * cap];
        tree[cap..cap + self.cap].copy_from_slice(&self.tree[self.cap..]);
        self.tree = tree;
        self.cap = cap;
        self.rebuild();
    }

    /// Clears the leaves of blocks `from` and above.
    fn truncate(&mut self, from: BlockNumber) {
        let from = (from as usize).min(self.cap);
        let cleared = self.tree[self.cap + from..].iter().filter(|&&v| v != 0).count();
        self.tree[self.cap + from..].fill(0);
        self.pages -= cleared;
        self.rebuild();
    }

    /// Asserts the invariants of the module docs (tests: `O(cap)`).
    #[cfg(all(test, not(loom)))]
    fn check(&self) {
        assert_eq!(self.tree.len(), 2 * self.cap);
        assert!(self.cap.is_power_of_two());
        for i in 1..self.cap {
            assert_eq!(self.tree[i], self.tree[2 * i].max(self.tree[2 * i + 1]), "node {i}");
        }
        let leaves = &self.tree[self.cap..];
        assert!(leaves.iter().all(|&v| v == 0 || usize::from(v) >= MIN_USEFUL_FREE));
        assert_eq!(self.pages, leaves.iter().filter(|&&v| v != 0).count());
    }

    /// Recomputes every inner node from the leaves.
    fn rebuild(&mut self) {
        for i in (1..self.cap).rev() {
            self.tree[i] = self.tree[2 * i].max(self.tree[2 * i + 1]);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn claims_remove_and_small_pages_are_not_kept() {
        let fsm = FreeSpaceMap::new(LwLockPolicy::Fair);
        let r = RelFileId::new(1, 1);
        fsm.record_many(r, [3, 1, 2], 8000);
        fsm.record(r, 9, 10);
        fsm.record(r, 7, 100);
        assert_eq!(fsm.pages(r), 4);
        assert_eq!(fsm.claim(r, 8000), Some(1));
        assert_eq!(fsm.claim(r, 8000), Some(2));
        assert_eq!(fsm.claim(r, 50), Some(3));
        assert_eq!(fsm.claim(r, 8000), None);
        assert_eq!(fsm.claim(r, 50), Some(7));
        fsm.record_many(r, 10..20, 8000);
        fsm.truncate(r, 15);
        assert_eq!(fsm.pages(r), 5);
    }

    #[test]
    fn a_full_page_recorded_again_leaves_the_map() {
        let fsm = FreeSpaceMap::new(LwLockPolicy::Fair);
        let r = RelFileId::new(1, 2);
        fsm.record(r, 5, 8000);
        fsm.record(r, 5, 3);
        assert_eq!(fsm.pages(r), 0);
        assert_eq!(fsm.claim(r, 1), None);
        assert_eq!(fsm.claim(r, 0), None, "an empty leaf is never handed out");
        assert_eq!(fsm.claim(r, 70_000), None, "more than any page holds");
    }

    /// The tree against a plain ordered map (the previous linear-scan
    /// implementation) on random records, claims and truncations, across
    /// several doublings.
    #[test]
    fn the_tree_claims_what_a_linear_scan_would() {
        let seed = 0x5eed_f5f5_u64;
        println!("seed {seed:#x}");
        let mut rng = seed;
        let mut next = move |bound: u64| {
            // splitmix64
            rng = rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = rng;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) % bound
        };
        let fsm = FreeSpaceMap::new(LwLockPolicy::Fair);
        let r = RelFileId::new(1, 3);
        let mut model: BTreeMap<BlockNumber, usize> = BTreeMap::new();
        for step in 0..20_000 {
            match next(10) {
                0..=4 => {
                    let block = next(5000) as BlockNumber;
                    let free = next(8200) as usize;
                    fsm.record(r, block, free);
                    if free >= MIN_USEFUL_FREE {
                        model.insert(block, free);
                    } else {
                        model.remove(&block);
                    }
                }
                5..=8 => {
                    let needed = next(8200) as usize;
                    let expected = model.iter().find(|(_, &f)| f >= needed.max(1)).map(|(&b, _)| b);
                    if let Some(b) = expected {
                        model.remove(&b);
                    }
                    assert_eq!(fsm.claim(r, needed), expected, "step {step}, needed {needed}, seed {seed:#x}");
                }
                _ => {
                    if next(50) == 0 {
                        let from = next(5000) as BlockNumber;
                        fsm.truncate(r, from);
                        model.split_off(&from);
                    }
                }
            }
            assert_eq!(fsm.pages(r), model.len(), "step {step}, seed {seed:#x}");
            if step % 997 == 0 {
                let map = fsm.rel(r);
                let space = map.space.lock_shared();
                space.check();
                assert_eq!(map.max_free.load(Ordering::Relaxed), space.tree[1], "the hint is the root");
            }
        }
        fsm.rel(r).space.lock_shared().check();
    }
}
