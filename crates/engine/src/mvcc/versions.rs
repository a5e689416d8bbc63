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
//! # Locks
//!
//! Each shard is a mutex. A tuple's chain is pushed to and popped from
//! only under its page's exclusive content lock, and read under at least a
//! shared one, so a reader sees the tuple and its chain in step. The
//! order is always page content lock, then shard.

use super::snapshot::{Horizon, Snapshots};
use crate::tid::Tid;
use std::collections::HashMap;
use std::sync::{Arc, PoisonError};
use turnstile_storage::RelFileId;
use turnstile_sync::sync::{Mutex, MutexGuard};

const SHARDS: usize = 64;

/// One older version of a row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OldVersion {
    /// The transaction that wrote this version.
    pub xmin: u32,
    /// The transaction that replaced it with the next newer one.
    pub replaced_by: u32,
    /// The encoded row.
    pub row: Arc<[u8]>,
}

type Key = (RelFileId, Tid);

/// The chains of every row updated in place, sharded by row.
#[derive(Debug)]
pub struct VersionStore {
    shards: Vec<Mutex<HashMap<Key, Vec<OldVersion>>>>,
}

impl Default for VersionStore {
    fn default() -> Self {
        VersionStore { shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect() }
    }
}

fn shard_of(key: &Key) -> usize {
    let h = u64::from(key.0.rel).wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ u64::from(key.1.block).wrapping_mul(0xc2b2_ae3d_27d4_eb4f)
        ^ u64::from(key.1.slot);
    (h ^ (h >> 29)) as usize % SHARDS
}

impl VersionStore {
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
            chain.clear();
        }
        if let Some((snapshots, h)) = prune {
            prune_chain(chain, snapshots, h);
        }
        chain.insert(0, old);
    }

    /// Takes back the newest version of the row at `tid` if `xid` replaced
    /// it (the undo of an in-place update, under the page's exclusive lock).
    pub fn pop(&self, rel: RelFileId, tid: Tid, xid: u32) -> Option<OldVersion> {
        let mut shard = self.shard(&(rel, tid));
        let chain = shard.get_mut(&(rel, tid))?;
        if chain.first().is_some_and(|v| v.replaced_by == xid) {
            let v = chain.remove(0);
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
    pub fn find(&self, rel: RelFileId, tid: Tid, mut sees: impl FnMut(u32) -> bool) -> Option<Arc<[u8]>> {
        let shard = self.shard(&(rel, tid));
        shard.get(&(rel, tid))?.iter().find(|v| sees(v.xmin)).map(|v| Arc::clone(&v.row))
    }

    /// Forgets the chain of the row at `tid` (its tuple was reclaimed).
    pub fn forget(&self, rel: RelFileId, tid: Tid) {
        self.shard(&(rel, tid)).remove(&(rel, tid));
    }

    /// Drops every version no snapshot can need any more; returns how many.
    pub fn prune(&self, snapshots: &Snapshots, horizon: Horizon) -> u64 {
        let mut dropped = 0;
        for shard in &self.shards {
            let mut shard = shard.lock().unwrap_or_else(PoisonError::into_inner);
            shard.retain(|_, chain| {
                let before = chain.len();
                prune_chain(chain, snapshots, horizon);
                dropped += (before - chain.len()) as u64;
                !chain.is_empty()
            });
        }
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
/// snapshot sees: no reader can need it or anything older.
fn prune_chain(chain: &mut Vec<OldVersion>, snapshots: &Snapshots, horizon: Horizon) {
    if let Some(cut) = chain.iter().position(|v| snapshots.all_visible(horizon, v.replaced_by)) {
        chain.truncate(cut);
    }
}
