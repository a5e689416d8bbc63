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
//! An entry whose row an upsert placed speculatively and has not yet
//! confirmed is waited for on the insertion's token, not on its
//! transaction (`speculative.rs`): the check then sees the row confirmed
//! (and waits for the transaction) or taken back (no conflict).
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
use crate::speculative::{SpeculationLocks, Token, WaitOn};
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
    /// What the last check met and must wait for, if anything.
    pub(crate) wait_for: Option<WaitOn>,
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
            self.wait_for = Some(WaitOn::Transaction(h.xmax));
        } else if visibility::in_progress(snaps, h.xmin, self.own) {
            self.wait_for = Some(self.txns.speculations().wait_target(&(self.file, tid), h.xmin));
        } else {
            // The header was read before the writer's status: a
            // speculative row killed (marked dead) in between, by a
            // transaction that then committed, would count. The kill
            // precedes the commit, so a second read sees it
            // (`tests/loom_speculative.rs` found this race).
            let Some(h) = crate::heap::latest_header(self.pool, self.file, tid)? else { return Ok(false) };
            if !visibility::unique_conflict(snaps, &h, Some(self.own)) {
                return Ok(false);
            }
            if visibility::in_progress(snaps, h.xmax, self.own) {
                self.wait_for = Some(WaitOn::Transaction(h.xmax));
            }
        }
        Ok(true)
    }

    /// Takes what to wait for, if the last check met a running writer.
    pub(crate) fn take_wait(&mut self) -> Option<WaitOn> {
        self.wait_for.take()
    }
}

/// The lock manager's side of the speculative-insertion handshake: the
/// token is [`LockTag::speculative_token`], the transaction its
/// transaction-id lock (PostgreSQL's `XactLockTableWait`).
impl SpeculationLocks for Backend {
    type Error = turnstile_lock::LockError;

    fn lock_token(&mut self, xid: Xid, token: Token) -> std::result::Result<(), Self::Error> {
        self.lock(LockTag::speculative_token(XID_DATABASE, xid, token), LockMode::Exclusive, Wait::Block).map(drop)
    }

    fn unlock_token(&mut self, xid: Xid, token: Token) -> std::result::Result<(), Self::Error> {
        self.unlock(LockTag::speculative_token(XID_DATABASE, xid, token), LockMode::Exclusive)
    }

    fn wait(&mut self, on: WaitOn) -> std::result::Result<(), Self::Error> {
        let tag = match on {
            WaitOn::Token(xid, token) => LockTag::speculative_token(XID_DATABASE, xid, token),
            WaitOn::Transaction(xid) => LockTag::transaction_id(XID_DATABASE, xid),
        };
        self.lock(tag, LockMode::Share, Wait::Block)?;
        self.unlock(tag, LockMode::Share)
    }
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
        let Some(on) = (if inserted.is_err() { check.take_wait() } else { None }) else { break };
        ext.locker().wait(on)?;
        inserted = tree.insert_checked(ext, key, tid, &mut |t| check.conflicts(t));
    }
    Ok(inserted)
}

/// Inserts row `row` of `leaf` (its heap tuple `tid`, written by `xid`)
/// into every index of `leaf`, unique indexes first so that a violation
/// leaves as few entries behind (they point at a tuple the caller then
/// marks dead, and are skipped by scans). A violation is `23505` with the
/// index's constraint and key named.
pub(crate) fn insert_entries<'p>(
    engine: &'p crate::Engine,
    relcache: &mut crate::catalog::RelCache,
    ext: &mut turnstile_storage::Extender<'p, &mut Backend>,
    (leaf, row): (&crate::catalog::RelEntry, &[crate::types::Value]),
    tid: Tid,
    xid: Xid,
) -> Result<()> {
    let (pool, config) = (engine.pool(), engine.config());
    let file = RelFileId::new(leaf.rel.db, leaf.rel.id);
    for ix in leaf.indexes.iter().filter(|i| i.unique).chain(leaf.indexes.iter().filter(|i| !i.unique)) {
        let key = ix.key.values(row)?;
        let key_types = ix.key.types().to_vec();
        let opts = crate::btree::BtreeOptions::new(ix.name.clone(), key_types, ix.unique, config);
        let root = relcache.amcache(engine.catalog()).root(ix.id);
        let tree = crate::btree::BTree::attach(pool, RelFileId::new(leaf.rel.db, ix.id), opts)?.with_cached_root(root);
        let mut check = UniqueCheck::new(pool, engine.txns(), file, xid);
        let inserted = insert_waiting(&tree, ext, &key, tid, &mut check);
        relcache.amcache(engine.catalog()).remember(ix.id, &tree);
        inserted?.map_err(|e| crate::EngineError::from_index(e, &leaf.rel.name, || ix.key_names(&leaf.rel)))?;
    }
    Ok(())
}
