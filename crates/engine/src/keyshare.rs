//! The key-share fast path: `FOR KEY SHARE` row locks kept in each
//! backend's own slots (`txn.key_share_fast_path`, on under `scalable`).
//!
//! A foreign key's check locks the referenced row `FOR KEY SHARE`. With a
//! hot parent row (every order line references one customer), every
//! inserting transaction locks that one row: in PostgreSQL the lockers go
//! into one multixact, whose SLRU and locks were a many-core bottleneck;
//! in turnstile's shared row-lock table ([`crate::txn::Transactions`]) they
//! go into one holder list under one shard mutex. Yet key-share locks
//! conflict only with `FOR UPDATE` (a DELETE or a key UPDATE), which is
//! rare on a parent row. So this module applies PostgreSQL's fast-path
//! protocol for weak *relation* locks (`FastPathStrongRelationLocks`) to
//! key-share *row* locks:
//!
//! - **Weak (key-share) locker**, under its own slot's mutex: sets its
//!   `active` flag, then reads the row's stripe counter `strong[s]`; if 0
//!   and a slot is free, records `(row, xid)` there — no shared structure
//!   touched. Otherwise it takes the shared table's path.
//! - **Strong (`FOR UPDATE`) locker**, before it asks the shared table:
//!   increments `strong[s]` (kept until its transaction ends), then, for
//!   each backend whose `active` flag is set, takes that slot's mutex and
//!   moves its key-share locks on the row into the shared table (as the
//!   same transaction's holders), marking them moved. The shared table
//!   then shows the conflict and the strong locker waits as usual.
//! - **Release** at transaction end: the slot is emptied; moved locks are
//!   released from the shared table.
//!
//! Why no lock is missed: the weak locker's `active = true; read
//! strong[s]` and the strong locker's `strong[s] += 1; read active` are
//! sequentially consistent (Dekker's pattern), so at least one sees the
//! other's write: either the weak locker sees the count and takes the
//! shared path, or the strong locker sees the flag and waits on the slot's
//! mutex for the record to be complete, then moves it. Invariant: while
//! `strong[s] > 0` no slot gains a lock on a row of stripe `s`; every lock
//! on such a row that a slot kept from before is in the shared table.
//!
//! A slot holds [`KEY_SHARE_SLOTS`] locks; a transaction that needs more
//! uses the shared table for the rest. Locks in slots are not shown by the
//! shared table's views until they are moved (as PostgreSQL's fast-path
//! locks are not in its shared lock table).
//!
//! ```
//! use turnstile_engine::keyshare::KEY_SHARE_SLOTS;
//! assert!(KEY_SHARE_SLOTS >= 1);
//! ```

use crate::mvcc::Xid;
use crate::txn::{RowKey, RowLockMode, Transactions};
use std::sync::PoisonError;
use turnstile_sync::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use turnstile_sync::sync::Mutex;
use turnstile_sync::CachePadded;

/// Key-share locks one backend keeps in its own slots at most.
pub const KEY_SHARE_SLOTS: usize = 16;

/// Stripes of the strong-locker counters (a power of two); a row's stripe
/// is its hash modulo this.
const STRONG_STRIPES: usize = 1024;

/// One backend's slots: its own mutex, uncontended unless a strong locker
/// moves its locks.
#[derive(Default)]
struct Slot {
    /// Set while `held` may be non-empty (read by strong lockers without
    /// the mutex).
    active: AtomicBool,
    /// Acquisitions of the shared row-lock table's shard locks by this
    /// backend (row locks taken and released there), for the lab.
    shared_ops: AtomicU64,
    inner: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    /// `(row, xid, moved to the shared table)`.
    locks: Vec<(RowKey, Xid, bool)>,
    /// Stripes this backend's transaction raised as a strong locker.
    strong: Vec<usize>,
}

/// Every backend's key-share slots and the strong-locker counters.
pub struct KeyShares {
    enabled: bool,
    slots: Box<[CachePadded<Slot>]>,
    strong: Box<[CachePadded<AtomicU32>]>,
}

impl std::fmt::Debug for KeyShares {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyShares")
            .field("enabled", &self.enabled)
            .field("backends", &self.slots.len())
            .field("shared_acquisitions", &self.shared_acquisitions())
            .finish()
    }
}

fn stripe(key: &RowKey) -> usize {
    let (rel, tid) = *key;
    let h = (u64::from(rel) << 40) ^ (u64::from(tid.block) << 16) ^ u64::from(tid.slot);
    (h.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 54) as usize % STRONG_STRIPES
}

impl KeyShares {
    /// Slots for `backends` backends; `enabled`: `txn.key_share_fast_path`.
    pub fn new(backends: usize, enabled: bool) -> KeyShares {
        KeyShares {
            enabled,
            slots: (0..backends).map(|_| CachePadded::new(Slot::default())).collect(),
            strong: (0..STRONG_STRIPES).map(|_| CachePadded::new(AtomicU32::new(0))).collect(),
        }
    }

    /// Whether the fast path is on.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The weak locker's fast path: records `xid`'s key-share lock on
    /// `key` in `backend`'s slots. `false`: take the shared table's path.
    pub(crate) fn try_lock(&self, backend: usize, key: RowKey, xid: Xid) -> bool {
        let Some(slot) = self.slots.get(backend).filter(|_| self.enabled) else { return false };
        let mut held = slot.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if held.locks.iter().any(|(k, x, _)| *k == key && *x == xid) {
            return true;
        }
        if held.locks.len() >= KEY_SHARE_SLOTS {
            return false;
        }
        slot.active.store(true, Ordering::SeqCst);
        if self.strong[stripe(&key)].load(Ordering::SeqCst) != 0 {
            return false;
        }
        held.locks.push((key, xid, false));
        true
    }

    /// The strong locker's step before it asks the shared table for `key`
    /// in a mode that conflicts with key-share: raises the row's stripe
    /// (until `backend`'s transaction ends) and moves every slot's
    /// key-share lock on `key` into `txns`.
    pub(crate) fn before_strong(&self, backend: usize, key: RowKey, txns: &Transactions) {
        let Some(own) = self.slots.get(backend).filter(|_| self.enabled) else { return };
        let s = stripe(&key);
        {
            let mut held = own.inner.lock().unwrap_or_else(PoisonError::into_inner);
            if !held.strong.contains(&s) {
                held.strong.push(s);
                self.strong[s].fetch_add(1, Ordering::SeqCst);
                own.active.store(true, Ordering::SeqCst);
            }
        }
        for slot in self.slots.iter().filter(|slot| slot.active.load(Ordering::SeqCst)) {
            let mut held = slot.inner.lock().unwrap_or_else(PoisonError::into_inner);
            for (k, xid, moved) in held.locks.iter_mut().filter(|(k, _, moved)| *k == key && !*moved) {
                // No transaction holds `key` FOR UPDATE while a slot keeps
                // a lock on it (the invariant above), so this is granted.
                let granted = txns.try_lock_row(*k, *xid, RowLockMode::KeyShare);
                debug_assert!(granted.is_ok(), "a moved key-share lock conflicted");
                *moved = true;
            }
        }
    }

    /// Ends `backend`'s transaction `xid` here: its slot is emptied, locks
    /// moved to `txns` released there, its stripes lowered. `shared_rows`:
    /// the row locks the transaction releases from the shared table itself
    /// (counted for the lab).
    pub(crate) fn release(&self, backend: usize, xid: Xid, txns: &Transactions, shared_rows: usize) {
        let Some(slot) = self.slots.get(backend) else { return };
        slot.shared_ops.fetch_add(shared_rows as u64, Ordering::Relaxed);
        if !slot.active.load(Ordering::SeqCst) {
            return;
        }
        let mut held = slot.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let moved: Vec<RowKey> = held.locks.iter().filter(|(_, x, m)| *m && *x == xid).map(|(k, _, _)| *k).collect();
        if !moved.is_empty() {
            slot.shared_ops.fetch_add(moved.len() as u64, Ordering::Relaxed);
            txns.unlock_rows(&moved, xid);
        }
        held.locks.retain(|(_, x, _)| *x != xid);
        for s in held.strong.drain(..) {
            self.strong[s].fetch_sub(1, Ordering::SeqCst);
        }
        if held.locks.is_empty() {
            slot.active.store(false, Ordering::SeqCst);
        }
    }

    /// Counts one acquisition of the shared row-lock table by `backend`.
    pub(crate) fn count_shared(&self, backend: usize) {
        if let Some(slot) = self.slots.get(backend) {
            slot.shared_ops.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Acquisitions of the shared row-lock table's locks, all backends
    /// (row locks taken there and released there).
    pub fn shared_acquisitions(&self) -> u64 {
        self.slots.iter().map(|s| s.shared_ops.load(Ordering::Relaxed)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tid::Tid;

    #[test]
    fn a_strong_locker_moves_the_slots_locks_and_blocks_new_ones() {
        let dir = tempfile::tempdir().unwrap();
        let engine = crate::Engine::open(dir.path(), turnstile_sync::Config::default()).unwrap();
        let txns = engine.txns();
        let ks = KeyShares::new(4, true);
        let key: RowKey = (16384, Tid { block: 0, slot: 1 });
        assert!(ks.try_lock(0, key, 100));
        assert!(ks.try_lock(1, key, 101));
        assert!(txns.row_holders(key).is_empty(), "slots keep their locks out of the shared table");
        ks.before_strong(2, key, txns);
        let mut holders = txns.row_holders(key);
        holders.sort_unstable_by_key(|h| h.0);
        assert_eq!(holders, vec![(100, RowLockMode::KeyShare), (101, RowLockMode::KeyShare)]);
        assert_eq!(txns.try_lock_row(key, 102, RowLockMode::Update), Err(100));
        assert!(!ks.try_lock(3, key, 103), "no fast path while a strong locker is about");
        ks.release(0, 100, txns, 0);
        ks.release(1, 101, txns, 0);
        assert!(txns.row_holders(key).is_empty());
        ks.release(2, 102, txns, 0);
        assert!(ks.try_lock(3, key, 103), "the stripe is lowered when the strong locker ends");
    }

    #[test]
    fn off_it_refuses_every_lock() {
        let ks = KeyShares::new(2, false);
        assert!(!ks.try_lock(0, (1, Tid { block: 0, slot: 1 }), 5));
    }
}
