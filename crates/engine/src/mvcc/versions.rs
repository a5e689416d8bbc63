//! The version store: the older versions of rows updated in place.
//!
//! An `UPDATE` that keeps every index key and fits on the row's page
//! rewrites the tuple where it is (its TID and index entries stay), with
//! the updater's id as the new `xmin`. The version it replaced is pushed
//! here first, on a chain keyed by relation and TID, newest first, each
//! with the id of the transaction that replaced it (InnoDB's and Oracle's
//! undo-based versions, kept in memory: after a restart no snapshot
//! older than the heap exists).
//!
//! A reader whose snapshot does not see the tuple's `xmin` walks the chain
//! to the first version whose own `xmin` it sees. A version is needed only
//! while some snapshot does not see the transaction that replaced it: once
//! that transaction is [`Snapshots::all_visible`], it and every older
//! version of the chain go ([`VersionStore::prune`]); chains are pruned
//! when pushed to and by every VACUUM and background vacuum pass.
//!
//! # A bounded store
//!
//! The store holds at most `txn.version_store_limit_bytes` of older
//! versions (each counted as its row plus [`VERSION_OVERHEAD`]). Past the
//! limit, [`VersionStore::admit`] refuses, and the `UPDATE` writes the
//! replaced version to the heap as a new tuple version instead
//! ([`crate::heap::spill`]): memory stays bounded however long a snapshot
//! lives, and the heap grows instead, as PostgreSQL's does. Its size, the
//! fallbacks and the pruned versions are counted
//! ([`VersionStoreStats`], the `pg_stat_version_store` view).
//!
//! # Locks
//!
//! Each shard is a mutex. A tuple's chain is pushed to and popped from
//! only under its page's exclusive content lock, and read under at least a
//! shared one, so a reader sees the tuple and its chain in step. The
//! order is always page content lock, then shard.

use super::snapshot::{Horizon, Snapshots};
use super::Xid;
use crate::tid::Tid;
use std::collections::HashMap;
use std::sync::{Arc, PoisonError};
use turnstile_storage::RelFileId;
use turnstile_sync::sync::counter::{AtomicU64, Ordering};
use turnstile_sync::sync::{Mutex, MutexGuard};

/// Bytes counted per version besides its row: the version's record, its
/// place in the chain and the row's reference count.
pub const VERSION_OVERHEAD: u64 = 64;

const SHARDS: usize = 64;

/// One older version of a row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OldVersion {
    /// The transaction that wrote this version.
    pub xmin: Xid,
    /// The transaction that replaced it with the next newer one.
    pub replaced_by: Xid,
    /// The encoded row.
    pub row: Arc<[u8]>,
}

type Key = (RelFileId, Tid);

/// The chains of every row updated in place, sharded by row.
#[derive(Debug)]
pub struct VersionStore {
    shards: Vec<Mutex<HashMap<Key, Vec<OldVersion>>>>,
    limit: u64,
    bytes: AtomicU64,
    versions: AtomicU64,
    refused: AtomicU64,
    pruned: AtomicU64,
}

/// The store's size and counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VersionStoreStats {
    /// Versions held.
    pub versions: u64,
    /// Bytes held (rows plus [`VERSION_OVERHEAD`] each).
    pub bytes: u64,
    /// `txn.version_store_limit_bytes`.
    pub limit_bytes: u64,
    /// Updates whose replaced version went to the heap (at the limit, or
    /// for a row whose older versions are there already).
    pub fallbacks: u64,
    /// Versions dropped because no snapshot could need them.
    pub pruned: u64,
}

impl Default for VersionStore {
    fn default() -> Self {
        VersionStore::new(u64::MAX)
    }
}

fn cost(v: &OldVersion) -> u64 {
    v.row.len() as u64 + VERSION_OVERHEAD
}

fn shard_of(key: &Key) -> usize {
    let h = u64::from(key.0.rel).wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ u64::from(key.1.block).wrapping_mul(0xc2b2_ae3d_27d4_eb4f)
        ^ u64::from(key.1.slot);
    (h ^ (h >> 29)) as usize % SHARDS
}

impl VersionStore {
    /// A store that holds at most `limit` bytes of versions.
    pub fn new(limit: u64) -> VersionStore {
        VersionStore {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            limit,
            bytes: AtomicU64::new(0),
            versions: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            pruned: AtomicU64::new(0),
        }
    }

    /// Whether a version of `row_len` bytes may be pushed.
    pub fn admit(&self, row_len: usize) -> bool {
        self.bytes.load(Ordering::Relaxed).saturating_add(row_len as u64 + VERSION_OVERHEAD) <= self.limit
    }

    /// Whether an update of this run spilled a version to the heap.
    pub fn has_spilled(&self) -> bool {
        self.refused.load(Ordering::Relaxed) > 0
    }

    /// Counts an update whose replaced version went to the heap instead.
    pub fn note_fallback(&self) {
        self.refused.fetch_add(1, Ordering::Relaxed);
    }

    /// Its size and counters.
    pub fn stats(&self) -> VersionStoreStats {
        VersionStoreStats {
            versions: self.versions.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            limit_bytes: self.limit,
            fallbacks: self.refused.load(Ordering::Relaxed),
            pruned: self.pruned.load(Ordering::Relaxed),
        }
    }

    fn added(&self, v: &OldVersion) {
        self.bytes.fetch_add(cost(v), Ordering::Relaxed);
        self.versions.fetch_add(1, Ordering::Relaxed);
    }

    fn removed<'v>(&self, gone: impl IntoIterator<Item = &'v OldVersion>) {
        for v in gone {
            self.bytes.fetch_sub(cost(v), Ordering::Relaxed);
            self.versions.fetch_sub(1, Ordering::Relaxed);
        }
    }

    fn shard(&self, key: &Key) -> MutexGuard<'_, HashMap<Key, Vec<OldVersion>>> {
        self.shards[shard_of(key)].lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Pushes the version `old` of the row at `tid` (under the page's
    /// exclusive lock), pruning the chain at a horizon first if one is given.
    /// `fresh`: the tuple had no chain (no [`crate::heap::HAS_VERSIONS`]
    /// flag), so anything found under its TID belonged to an earlier tuple
    /// there (a truncated relation) and is dropped.
    pub fn push(&self, rel: RelFileId, tid: Tid, old: OldVersion, prune: Option<(&Snapshots, Horizon)>, fresh: bool) {
        let mut shard = self.shard(&(rel, tid));
        let chain = shard.entry((rel, tid)).or_default();
        if fresh {
            self.removed(chain.iter());
            chain.clear();
        }
        if let Some((snapshots, h)) = prune {
            let cut = prune_chain(chain, snapshots, h);
            self.pruned.fetch_add(cut.len() as u64, Ordering::Relaxed);
            self.removed(cut.iter());
        }
        self.added(&old);
        chain.insert(0, old);
    }

    /// Takes back the newest version of the row at `tid` if `xid` replaced
    /// it (the undo of an in-place update, under the page's exclusive lock).
    pub fn pop(&self, rel: RelFileId, tid: Tid, xid: Xid) -> Option<OldVersion> {
        let mut shard = self.shard(&(rel, tid));
        let chain = shard.get_mut(&(rel, tid))?;
        if chain.first().is_some_and(|v| v.replaced_by == xid) {
            let v = chain.remove(0);
            self.removed([&v]);
            if chain.is_empty() {
                shard.remove(&(rel, tid));
            }
            return Some(v);
        }
        None
    }

    /// The newest version of the row at `tid` whose `xmin` passes `sees`
    /// (under the page's content lock); `None` if the row did not exist for
    /// that reader.
    pub fn find(&self, rel: RelFileId, tid: Tid, mut sees: impl FnMut(Xid) -> bool) -> Option<Arc<[u8]>> {
        let shard = self.shard(&(rel, tid));
        shard.get(&(rel, tid))?.iter().find(|v| sees(v.xmin)).map(|v| Arc::clone(&v.row))
    }

    /// Forgets the chain of the row at `tid` (its tuple was reclaimed).
    pub fn forget(&self, rel: RelFileId, tid: Tid) {
        if let Some(chain) = self.shard(&(rel, tid)).remove(&(rel, tid)) {
            self.removed(chain.iter());
        }
    }

    /// Drops every version no snapshot can need any more; returns how many.
    pub fn prune(&self, snapshots: &Snapshots, horizon: Horizon) -> u64 {
        let mut dropped = 0;
        for shard in &self.shards {
            let mut shard = shard.lock().unwrap_or_else(PoisonError::into_inner);
            shard.retain(|_, chain| {
                let cut = prune_chain(chain, snapshots, horizon);
                self.removed(cut.iter());
                dropped += cut.len() as u64;
                !chain.is_empty()
            });
        }
        self.pruned.fetch_add(dropped, Ordering::Relaxed);
        dropped
    }

    /// Versions held, over all chains.
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().map_or(0, |m| m.values().map(Vec::len).sum())).sum()
    }

    /// Whether no version is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Cuts `chain` (newest first) at the first version whose replacer every
/// snapshot sees: no reader can need it or anything older. Returns what
/// was cut.
fn prune_chain(chain: &mut Vec<OldVersion>, snapshots: &Snapshots, horizon: Horizon) -> Vec<OldVersion> {
    match chain.iter().position(|v| snapshots.all_visible(horizon, v.replaced_by)) {
        Some(cut) => chain.split_off(cut),
        None => Vec::new(),
    }
}
