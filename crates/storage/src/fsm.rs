//! The free-space map: which pages of a relation have room, so inserters
//! reuse them before extending (PostgreSQL's FSM, kept in memory).
//!
//! Bulk extension adds more pages than the extender needs and records the
//! spares here (seed 001); other inserters [`FreeSpaceMap::claim`] them
//! instead of queueing on the extension lock.
//!
//! # What protects what
//!
//! | data | protected by |
//! |---|---|
//! | relation → per-relation map | an `LwLock` (tranche `FreeSpaceMap`), shared for lookups |
//! | one relation's page → free bytes | that relation's own `LwLock` (same tranche) |
//!
//! A claim *removes* the page it returns, so two inserters are never sent
//! to the same page at once (PostgreSQL hands the same page to both and
//! lets the loser retry); the claimer re-records what is left after its
//! insert. Invariant: a page appears at most once, with the free bytes
//! last recorded, and only if they are at least [`MIN_USEFUL_FREE`].

use crate::rel::{BlockNumber, RelFileId};
use crate::sync::Arc;
use hashbrown::HashMap;
use std::collections::BTreeMap;
use turnstile_sync::{LwLock, LwLockPolicy, Tranche};

/// Pages with less free space than this are not worth recording.
pub const MIN_USEFUL_FREE: usize = 32;

type RelMap = LwLock<BTreeMap<BlockNumber, u16>>;

/// The map of every relation.
#[derive(Debug)]
pub struct FreeSpaceMap {
    policy: LwLockPolicy,
    rels: LwLock<HashMap<RelFileId, Arc<RelMap>>>,
}

impl FreeSpaceMap {
    /// An empty map whose locks use `policy`.
    pub fn new(policy: LwLockPolicy) -> FreeSpaceMap {
        FreeSpaceMap { policy, rels: LwLock::new(Tranche::FreeSpaceMap, policy, HashMap::new()) }
    }

    fn rel(&self, rel: RelFileId) -> Arc<RelMap> {
        if let Some(m) = self.rels.lock_shared().get(&rel) {
            return Arc::clone(m);
        }
        let mut rels = self.rels.lock_exclusive();
        Arc::clone(
            rels.entry(rel)
                .or_insert_with(|| Arc::new(LwLock::new(Tranche::FreeSpaceMap, self.policy, BTreeMap::new()))),
        )
    }

    /// Records that `block` of `rel` has `free` bytes available.
    pub fn record(&self, rel: RelFileId, block: BlockNumber, free: usize) {
        let map = self.rel(rel);
        let mut pages = map.lock_exclusive();
        if free >= MIN_USEFUL_FREE {
            pages.insert(block, free.min(u16::MAX as usize) as u16);
        } else {
            pages.remove(&block);
        }
    }

    /// Records many pages with the same free space (the spares of one
    /// bulk extension) under one lock acquisition.
    pub fn record_many(&self, rel: RelFileId, blocks: impl IntoIterator<Item = BlockNumber>, free: usize) {
        if free < MIN_USEFUL_FREE {
            return;
        }
        let map = self.rel(rel);
        let mut pages = map.lock_exclusive();
        for b in blocks {
            pages.insert(b, free.min(u16::MAX as usize) as u16);
        }
    }

    /// Takes the lowest-numbered page of `rel` with at least `needed` bytes
    /// free out of the map and returns it.
    pub fn claim(&self, rel: RelFileId, needed: usize) -> Option<BlockNumber> {
        let map = self.rel(rel);
        let mut pages = map.lock_exclusive();
        let block = pages.iter().find(|(_, &free)| free as usize >= needed).map(|(&b, _)| b)?;
        pages.remove(&block);
        Some(block)
    }

    /// Forgets pages of `rel` numbered `from` and above (after truncation).
    pub fn truncate(&self, rel: RelFileId, from: BlockNumber) {
        let map = self.rel(rel);
        map.lock_exclusive().split_off(&from);
    }

    /// Pages of `rel` recorded now.
    pub fn pages(&self, rel: RelFileId) -> usize {
        self.rels.lock_shared().get(&rel).map_or(0, |m| m.lock_shared().len())
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

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
}
