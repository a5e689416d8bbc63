//! A unique check that waits, as PostgreSQL's `_bt_check_unique` with
//! `XactLockTableWait`: when a new key meets an entry whose row a
//! transaction still running inserted (or deleted), the insert does not
//! decide yet. It waits for that transaction — on its transaction-id lock,
//! `ShareLock`, taken and given back at once, so `pg_locks`, the deadlock
//! detector and `lock_timeout` see the wait — and then inserts the key
//! again: `23505` if the other committed a conflicting key, success if it
//! rolled back (or committed the delete).
//!
//! The B-tree calls [`UniqueCheck::conflicts`] under the leaf's exclusive
//! content lock, where nothing may wait: an entry of a running transaction
//! counts as a conflict there and is remembered; the caller sees the
//! insert refused, finds [`UniqueCheck::wait_for`] set, releases nothing
//! but the page (the B-tree already has), waits, and retries. The index
//! entry was not placed, so a retry starts from a clean state; the heap
//! tuple stays where it is.
//!
//! | the entry's row, newest version | decision |
//! |---|---|
//! | dead, or inserted by an aborted transaction | no conflict |
//! | deleted by a committed transaction, or by this one | no conflict |
//! | deleted by a running transaction | wait for the deleter |
//! | inserted by a running transaction (not deleted) | wait for the inserter |
//! | otherwise | conflict (`23505`) |

use crate::error::Result;
use crate::mvcc::{visibility, Xid};
use crate::tid::Tid;
use crate::txn::{Transactions, XID_DATABASE};
use turnstile_lock::{Backend, LockMode, LockTag, Wait};
use turnstile_storage::{BufferPool, RelFileId, StorageError};

/// Retries of one index insertion after waits, before the insert gives up
/// with the conflict it met (a key taken and given back that often by
/// other transactions).
pub(crate) const UNIQUE_RETRIES_MAX: usize = 1000;

/// One index insertion's unique check.
pub(crate) struct UniqueCheck<'a> {
    pool: &'a BufferPool,
    txns: &'a Transactions,
    file: RelFileId,
    own: Xid,
    /// The running transaction the last check met, if any.
    pub(crate) wait_for: Option<Xid>,
}

impl<'a> UniqueCheck<'a> {
    /// The check of a key of transaction `own` against rows of heap `file`.
    pub(crate) fn new(pool: &'a BufferPool, txns: &'a Transactions, file: RelFileId, own: Xid) -> Self {
        UniqueCheck { pool, txns, file, own, wait_for: None }
    }

    /// Whether the entry pointing at `tid` blocks the new key (a running
    /// transaction's entry does, and is remembered in `wait_for`).
    pub(crate) fn conflicts(&mut self, tid: Tid) -> std::result::Result<bool, StorageError> {
        let Some(h) = crate::heap::latest_header(self.pool, self.file, tid)? else { return Ok(false) };
        let snaps = self.txns.snapshots();
        if !visibility::unique_conflict(snaps, &h, Some(self.own)) {
            return Ok(false);
        }
        if visibility::in_progress(snaps, h.xmax, self.own) {
            self.wait_for = Some(h.xmax);
        } else if visibility::in_progress(snaps, h.xmin, self.own) {
            self.wait_for = Some(h.xmin);
        }
        Ok(true)
    }

    /// Takes the transaction to wait for, if the last check met one.
    pub(crate) fn take_wait(&mut self) -> Option<Xid> {
        self.wait_for.take()
    }
}

/// Waits until transaction `xid` ends (PostgreSQL's `XactLockTableWait`):
/// its transaction-id lock in `ShareLock`, given back at once.
pub(crate) fn wait_for_transaction(backend: &mut Backend, xid: Xid) -> Result<()> {
    let tag = LockTag::transaction_id(XID_DATABASE, xid);
    backend.lock(tag, LockMode::Share, Wait::Block)?;
    backend.unlock(tag, LockMode::Share)?;
    Ok(())
}

/// Inserts `key` → `tid` into `tree` with `check` as its unique check,
/// waiting for each running transaction the check meets and trying again
/// (at most [`UNIQUE_RETRIES_MAX`] times). The outer error is the wait's
/// (a lock timeout, a deadlock, a cancel); the inner one the index's
/// (`23505` once the conflict is decided).
pub(crate) fn insert_waiting<'p>(
    tree: &crate::btree::BTree<'p>,
    ext: &mut turnstile_storage::Extender<'p, &mut Backend>,
    key: &[crate::types::Value],
    tid: Tid,
    check: &mut UniqueCheck<'_>,
) -> Result<std::result::Result<(), crate::btree::BtreeError>> {
    let mut inserted = tree.insert_checked(ext, key, tid, &mut |t| check.conflicts(t));
    for _ in 0..UNIQUE_RETRIES_MAX {
        let Some(xid) = (if inserted.is_err() { check.take_wait() } else { None }) else { break };
        wait_for_transaction(ext.locker(), xid)?;
        inserted = tree.insert_checked(ext, key, tid, &mut |t| check.conflicts(t));
    }
    Ok(inserted)
}
