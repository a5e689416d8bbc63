//! Writing transactions: transaction ids, row write locks and the undo log.
//!
//! Row versions and snapshots are [`crate::mvcc`]'s; this module keeps
//! what a writer needs besides:
//!
//! * **Row locks.** A transaction that updates, deletes or locks a row
//!   (`SELECT … FOR UPDATE | FOR NO KEY UPDATE | FOR SHARE | FOR KEY SHARE`)
//!   first takes the row's lock in a [`RowLockMode`], a
//!   `(relation, TID) → [(xid, mode)]` entry in a shared, sharded map
//!   ([`Transactions`]), kept until the transaction ends (or a savepoint
//!   before it is rolled back to). The modes and their conflicts are
//!   PostgreSQL's `LockTupleMode`s: `UPDATE` takes `FOR NO KEY UPDATE`,
//!   `DELETE` takes `FOR UPDATE`; two `FOR SHARE` holders coexist, and both
//!   block a writer. A transaction asking again for a row it holds in a
//!   weaker mode upgrades its entry (the holders list never names one xid
//!   twice). A requester that conflicts with a holder waits exactly as
//!   PostgreSQL's `heap_update`/`heap_lock_tuple` do: it takes the
//!   heavyweight *tuple* lock (`LockTag::tuple`, in the mode PostgreSQL's
//!   `tupleLockExtraInfo` gives the row-lock mode; it orders the waiters),
//!   then waits for the holder's *transaction id* lock
//!   (`LockTag::transaction_id`, share — the holder has it exclusive since
//!   it got its xid), then lets both go and retries. `NOWAIT` fails at
//!   the first conflict (`55P03`) and `SKIP LOCKED` passes the row by,
//!   neither touching the tuple lock. The waits are heavyweight lock waits, so `pg_locks` shows them
//!   (`tuple`, `transactionid`), lock timeouts apply and the deadlock
//!   detector sees cycles through rows. A row's read-modify-write therefore
//!   runs with the row owned, on its newest version: concurrent
//!   `abalance = abalance + delta` updates never lose one. Readers take no
//!   row lock.
//! * **Undo.** Every insert, update and delete of the transaction is logged
//!   with what is needed to take it back: an insert is marked dead, an
//!   in-place update gets back the version it replaced (from the version
//!   store), a moved update's new tuple is marked dead and the old one's
//!   `xmax` cleared, a delete's `xmax` cleared. [`crate::Session::rollback`]
//!   applies the log in reverse *before* the transaction is marked aborted
//!   (see [`crate::mvcc`] for why); a statement that fails outside a
//!   transaction block is undone the same way.
//!
//! ## Limits (documented, not hidden)
//!
//! * A unique-index check treats an entry whose tuple is deleted by
//!   another open transaction (a delete or key update not yet committed)
//!   as a conflict, where PostgreSQL would wait for that transaction: the
//!   error is raised at once (`23505`).
//! * Lock escalation: after [`ESCALATE_ROWS`] row locks on one relation, a
//!   transaction takes `ExclusiveLock` on the relation instead (it blocks
//!   every other writer and VACUUM, not readers) and stops adding row locks
//!   for it — a 10-million-row `UPDATE` does not fill memory.
//! * The undo log holds at most `txn.undo_limit_bytes` bytes (256 MiB by
//!   default): the write that crosses the limit fails its statement with
//!   `54000` ([`crate::EngineError::UndoLimit`]), and the transaction can be
//!   rolled back. No write is ever kept without its undo.
//! * DDL is not undone: a rollback names each DDL statement of the
//!   transaction in [`RollbackReport::kept_ddl`].

use crate::catalog::RelId;
use crate::mvcc::{Horizon, Snapshots, VersionStore, Xid};
use crate::tid::Tid;
use std::collections::HashMap;
use turnstile_lock::LockMode;
use turnstile_sync::sync::atomic::{AtomicU64, Ordering};
use turnstile_sync::sync::{Mutex, MutexGuard};

/// Row locks a transaction takes on one relation before it locks the
/// whole relation `ExclusiveLock` instead.
pub const ESCALATE_ROWS: usize = 10_000;
/// Database field of transaction-id lock tags (xids are cluster-wide).
pub(crate) const XID_DATABASE: u32 = 0;
const SHARDS: usize = 64;

/// A row: relation and TID.
pub type RowKey = (RelId, Tid);

/// A row lock's strength: PostgreSQL's `LockTupleMode`, weakest first
/// (a mode covers every weaker one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RowLockMode {
    /// `FOR KEY SHARE`: the row's key must not change or go away.
    KeyShare = 0,
    /// `FOR SHARE`: the row must not change.
    Share = 1,
    /// `FOR NO KEY UPDATE`, and `UPDATE`: changes that keep the key.
    NoKeyUpdate = 2,
    /// `FOR UPDATE`, and `DELETE`: anything.
    Update = 3,
}

/// `CONFLICTS[a]` bit `b` set ⇔ modes `a` and `b` held by two transactions
/// conflict (PostgreSQL's row-lock conflict table; symmetric).
const CONFLICTS: [u8; 4] = [
    1 << 3,                         // KeyShare: Update
    (1 << 2) | (1 << 3),            // Share: NoKeyUpdate, Update
    (1 << 1) | (1 << 2) | (1 << 3), // NoKeyUpdate: Share, NoKeyUpdate, Update
    0b1111,                         // Update: everything
];

impl RowLockMode {
    /// Whether `self` and `other`, held by two transactions, conflict.
    pub const fn conflicts(self, other: RowLockMode) -> bool {
        CONFLICTS[self as usize] & (1 << other as usize) != 0
    }

    /// The heavyweight tuple-lock mode a waiter for this row-lock mode
    /// takes (PostgreSQL's `tupleLockExtraInfo`): waiters in modes that do
    /// not conflict queue together.
    pub const fn tuple_lock_mode(self) -> LockMode {
        match self {
            RowLockMode::KeyShare => LockMode::AccessShare,
            RowLockMode::Share => LockMode::RowShare,
            RowLockMode::NoKeyUpdate => LockMode::Exclusive,
            RowLockMode::Update => LockMode::AccessExclusive,
        }
    }

    /// The clause: `FOR UPDATE`, `FOR NO KEY UPDATE`, `FOR SHARE`, `FOR KEY SHARE`.
    pub const fn clause(self) -> &'static str {
        match self {
            RowLockMode::KeyShare => "FOR KEY SHARE",
            RowLockMode::Share => "FOR SHARE",
            RowLockMode::NoKeyUpdate => "FOR NO KEY UPDATE",
            RowLockMode::Update => "FOR UPDATE",
        }
    }
}

/// How a row-lock request waits for a conflicting holder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowWait {
    /// Waits (lock timeouts and the deadlock detector apply).
    Block,
    /// `NOWAIT`: fails at once (`55P03`).
    NoWait,
    /// `SKIP LOCKED`: passes the row by.
    SkipLocked,
}

/// A `SELECT`'s locking clause.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowLocking {
    /// The strength.
    pub mode: RowLockMode,
    /// What a conflict does.
    pub wait: RowWait,
}

/// What [`Transactions::try_lock_row`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowGrant {
    /// The transaction held the row in this mode or a stronger one.
    AlreadyHeld,
    /// Newly taken.
    New,
    /// The transaction's weaker mode (given) was raised.
    Upgraded(RowLockMode),
}

/// The holders of one row's lock: pairwise compatible modes, one entry per
/// transaction (one holder is by far the common case, kept without a heap
/// allocation).
#[derive(Clone, Debug)]
enum Holders {
    One((Xid, RowLockMode)),
    Many(Vec<(Xid, RowLockMode)>),
}

impl Holders {
    fn as_slice(&self) -> &[(Xid, RowLockMode)] {
        match self {
            Holders::One(h) => std::slice::from_ref(h),
            Holders::Many(v) => v,
        }
    }

    /// Sets `xid`'s mode (adding it if absent).
    fn set(&mut self, xid: Xid, mode: RowLockMode) {
        match self {
            Holders::One(h) if h.0 == xid => h.1 = mode,
            Holders::One(h) => *self = Holders::Many(vec![*h, (xid, mode)]),
            Holders::Many(v) => match v.iter_mut().find(|h| h.0 == xid) {
                Some(h) => h.1 = mode,
                None => v.push((xid, mode)),
            },
        }
    }

    /// Removes `xid`; whether nobody holds the row any more.
    fn remove(&mut self, xid: Xid) -> bool {
        match self {
            Holders::One(h) => h.0 == xid,
            Holders::Many(v) => {
                v.retain(|h| h.0 != xid);
                let empty = v.is_empty();
                if let [one] = v[..] {
                    *self = Holders::One(one);
                }
                empty
            }
        }
    }
}

/// The shared half: snapshots and transaction status, the version store,
/// the row write locks, and the dead-row counts the background vacuum reads.
#[derive(Debug)]
pub struct Transactions {
    snapshots: Snapshots,
    versions: VersionStore,
    rows: Vec<Mutex<HashMap<RowKey, Holders>>>,
    /// The last horizon computed, encoded ([`encode_horizon`]; 0: none).
    horizon: AtomicU64,
    /// Rows deleted or moved away per relation file since its last VACUUM.
    dead: Mutex<HashMap<turnstile_storage::RelFileId, u64>>,
    /// Unconfirmed speculative insertions (`crate::speculative`).
    speculations: crate::speculative::Speculations<(turnstile_storage::RelFileId, Tid)>,
}

impl Default for Transactions {
    fn default() -> Self {
        let snapshots = Snapshots::new(
            turnstile_sync::config::SnapshotProtocol::Csn,
            turnstile_sync::LwLockPolicy::Fair,
            64,
            crate::mvcc::FIRST_XID,
        );
        Transactions::new(snapshots, u64::MAX)
    }
}

fn encode_horizon(h: Horizon) -> u64 {
    match h {
        Horizon::Xid(x) => x << 1,
        Horizon::Csn(c) => (c << 1) | 1,
    }
}

fn shard(key: &RowKey) -> usize {
    let h = u64::from(key.0).wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ u64::from(key.1.block).wrapping_mul(0xc2b2_ae3d_27d4_eb4f)
        ^ u64::from(key.1.slot);
    (h ^ (h >> 29)) as usize % SHARDS
}

impl Transactions {
    /// The shared transaction state over `snapshots`.
    pub fn new(snapshots: Snapshots, version_store_limit: u64) -> Transactions {
        Transactions {
            snapshots,
            versions: VersionStore::new(version_store_limit),
            rows: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            horizon: AtomicU64::new(0),
            dead: Mutex::new(HashMap::new()),
            speculations: crate::speculative::Speculations::new(),
        }
    }

    /// The unconfirmed speculative insertions, by heap file and TID.
    pub fn speculations(&self) -> &crate::speculative::Speculations<(turnstile_storage::RelFileId, Tid)> {
        &self.speculations
    }

    /// The snapshot protocol and transaction status.
    pub fn snapshots(&self) -> &Snapshots {
        &self.snapshots
    }

    /// The older versions of rows updated in place.
    pub fn versions(&self) -> &VersionStore {
        &self.versions
    }

    /// What a reader with `snapshot`, in transaction `own` (0: none), sees.
    pub fn visibility<'a>(&'a self, snapshot: &'a crate::mvcc::Snapshot, own: Xid) -> crate::mvcc::Visibility<'a> {
        crate::mvcc::Visibility { snapshot, own, snapshots: &self.snapshots, versions: &self.versions }
    }

    /// Computes the horizon now and remembers it for [`Transactions::last_horizon`].
    pub fn refresh_horizon(&self) -> Horizon {
        let h = self.snapshots.horizon();
        self.horizon.store(encode_horizon(h), Ordering::Relaxed);
        h
    }

    /// The horizon last computed (an older horizon is always safe to use).
    pub fn last_horizon(&self) -> Option<Horizon> {
        let v = self.horizon.load(Ordering::Relaxed);
        match (v, v & 1) {
            (0, _) => None,
            (_, 0) => Some(Horizon::Xid(v >> 1)),
            _ => Some(Horizon::Csn(v >> 1)),
        }
    }

    /// Counts `n` rows of `file` deleted or moved away (the background
    /// vacuum's trigger).
    pub(crate) fn note_dead(&self, file: turnstile_storage::RelFileId, n: u64) {
        if n > 0 {
            *self.dead.lock().unwrap_or_else(std::sync::PoisonError::into_inner).entry(file).or_default() += n;
        }
    }

    /// Takes the counts of [`Transactions::note_dead`], resetting them.
    pub(crate) fn take_dead(&self) -> HashMap<turnstile_storage::RelFileId, u64> {
        std::mem::take(&mut *self.dead.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
    }

    fn shard(&self, key: &RowKey) -> MutexGuard<'_, HashMap<RowKey, Holders>> {
        // A poisoned shard only means a thread panicked while holding it;
        // the map itself is always consistent (single inserts/removes).
        self.rows[shard(key)].lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes the lock of row `key` in `mode` for `xid`, unless another
    /// transaction holds it in a conflicting mode: `Err(holder)` names one
    /// such transaction (the one to wait for).
    pub fn try_lock_row(&self, key: RowKey, xid: Xid, mode: RowLockMode) -> Result<RowGrant, Xid> {
        let mut map = self.shard(&key);
        let Some(holders) = map.get_mut(&key) else {
            map.insert(key, Holders::One((xid, mode)));
            return Ok(RowGrant::New);
        };
        let mine = holders.as_slice().iter().find(|h| h.0 == xid).map(|h| h.1);
        if mine.is_some_and(|m| m >= mode) {
            return Ok(RowGrant::AlreadyHeld);
        }
        if let Some(&(other, _)) = holders.as_slice().iter().find(|h| h.0 != xid && h.1.conflicts(mode)) {
            return Err(other);
        }
        holders.set(xid, mode);
        Ok(mine.map_or(RowGrant::New, RowGrant::Upgraded))
    }

    /// The transactions holding a lock on `key`, with their modes.
    pub fn row_holders(&self, key: RowKey) -> Vec<(Xid, RowLockMode)> {
        self.shard(&key).get(&key).map(|h| h.as_slice().to_vec()).unwrap_or_default()
    }

    /// Releases `xid`'s locks on the rows `keys`.
    pub fn unlock_rows<'k>(&self, keys: impl IntoIterator<Item = &'k RowKey>, xid: Xid) {
        for key in keys {
            let mut map = self.shard(key);
            if map.get_mut(key).is_some_and(|h| h.remove(xid)) {
                map.remove(key);
            }
        }
    }

    /// Puts `xid`'s lock on `key` back to `mode` (a savepoint's rollback
    /// undoing an upgrade); `None` releases it.
    pub(crate) fn restore_row_lock(&self, key: RowKey, xid: Xid, mode: Option<RowLockMode>) {
        let mut map = self.shard(&key);
        match (mode, map.get_mut(&key)) {
            (Some(m), Some(h)) => h.set(xid, m),
            (None, Some(h)) => {
                if h.remove(xid) {
                    map.remove(&key);
                }
            }
            (Some(m), None) => {
                map.insert(key, Holders::One((xid, m)));
            }
            (None, None) => {}
        }
    }

    /// Rows locked now, over all transactions.
    pub fn row_locks_held(&self) -> usize {
        self.rows.iter().map(|s| s.lock().map_or(0, |m| m.len())).sum()
    }
}

/// One logged change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Undo {
    /// A row inserted at `tid`: undone by marking it dead.
    Insert { rel: RelId, tid: Tid },
    /// A row updated in place: undone by writing back the version it
    /// replaced (kept in the version store).
    Update { rel: RelId, tid: Tid },
    /// A row moved from `old` (its `xmax` set) to `new`: undone by marking
    /// `new` dead and clearing `old`'s `xmax`.
    Move { rel: RelId, old: Tid, new: Tid },
    /// A row deleted (its `xmax` set): undone by clearing it.
    Delete { rel: RelId, tid: Tid },
}

impl Undo {
    fn bytes(&self) -> u64 {
        std::mem::size_of::<Undo>() as u64
    }
}

/// What [`crate::Session::rollback`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RollbackReport {
    /// Inserted rows taken back.
    pub undone_inserts: u64,
    /// Updated rows restored.
    pub undone_updates: u64,
    /// Deleted rows restored.
    pub undone_deletes: u64,
    /// Writes whose undo failed or found nothing to restore; they stay
    /// (a failure is also returned, [`crate::EngineError::UndoFailed`]).
    pub kept_writes: u64,
    /// DDL statements of the transaction: DDL is not transactional here
    /// and stays (the SQL layer warns about each).
    pub kept_ddl: Vec<String>,
}

impl RollbackReport {
    /// Whether every change of the transaction was taken back.
    pub fn complete(&self) -> bool {
        self.kept_writes == 0 && self.kept_ddl.is_empty()
    }
}

/// The session-local half: the current transaction's xid, undo log and
/// row locks.
#[derive(Debug, Default)]
pub(crate) struct Txn {
    pub(crate) xid: Option<Xid>,
    pub(crate) undo: Vec<Undo>,
    undo_bytes: u64,
    pub(crate) ddl: Vec<String>,
    /// Row locks taken, oldest first, each with the mode the transaction
    /// held before (`None`: newly taken; a mode: upgraded from it).
    pub(crate) row_locks: Vec<(RowKey, Option<RowLockMode>)>,
    per_rel: HashMap<RelId, usize>,
    /// Relations locked instead of their rows after [`ESCALATE_ROWS`] row
    /// locks, with the relation lock taken (`ShareLock` for share row
    /// locks, `ExclusiveLock` for update row locks).
    pub(crate) escalated: HashMap<RelId, LockMode>,
    /// Rows deleted or moved away per relation (counted at commit).
    pub(crate) dead: HashMap<RelId, u64>,
    /// An undo of this transaction left writes in place: if it aborts, its
    /// id stays aborted for ever ([`crate::mvcc::Snapshots::mark_failed`]).
    pub(crate) undo_incomplete: bool,
    /// The last speculative insertion token this session took
    /// (`crate::speculative`; wraps).
    pub(crate) speculative_token: crate::speculative::Token,
}

impl Txn {
    /// Logs `u`, the undo of a write just made; fails with
    /// [`crate::EngineError::UndoLimit`] once the log holds more than
    /// `limit_bytes` (`txn.undo_limit_bytes`). The write is logged all the
    /// same, so the failed statement is undone in full.
    pub(crate) fn log(&mut self, u: Undo, limit_bytes: u64) -> Result<(), crate::EngineError> {
        self.undo_bytes += u.bytes();
        self.undo.push(u);
        if self.undo_bytes > limit_bytes {
            return Err(crate::EngineError::UndoLimit { limit_bytes });
        }
        Ok(())
    }

    /// Counts a row of `rel` deleted or moved away.
    pub(crate) fn note_dead(&mut self, rel: RelId) {
        *self.dead.entry(rel).or_default() += 1;
    }

    /// Notes a DDL statement (reported as kept by a rollback).
    pub(crate) fn note_ddl(&mut self, what: &str) {
        self.ddl.push(what.to_owned());
    }

    /// Records a newly taken row lock; returns whether the relation has now
    /// reached [`ESCALATE_ROWS`].
    pub(crate) fn took_row_lock(&mut self, key: RowKey, before: Option<RowLockMode>) -> bool {
        self.row_locks.push((key, before));
        if before.is_some() {
            return false;
        }
        let n = self.per_rel.entry(key.0).or_default();
        *n += 1;
        *n >= ESCALATE_ROWS
    }

    /// Undoes the count of [`Txn::took_row_lock`] for a lock given back.
    pub(crate) fn untook_row_lock(&mut self, rel: RelId) {
        if let Some(n) = self.per_rel.get_mut(&rel) {
            *n = n.saturating_sub(1);
        }
    }

    /// Whether anything was written (so a rollback has work to do).
    pub(crate) fn wrote(&self) -> bool {
        !self.undo.is_empty()
    }

    /// Resets the undo log's byte count (after a savepoint's rollback cut
    /// the log back).
    pub(crate) fn set_undo_bytes(&mut self, bytes: u64) {
        self.undo_bytes = bytes;
    }

    /// Where the transaction stands now, for a savepoint.
    pub(crate) fn mark(&self) -> TxnMark {
        TxnMark {
            undo: self.undo.len(),
            undo_bytes: self.undo_bytes,
            ddl: self.ddl.len(),
            row_locks: self.row_locks.len(),
            escalated: self.escalated.clone(),
        }
    }

    /// Forgets everything (after the row locks were released).
    pub(crate) fn clear(&mut self) {
        // Keeps the vectors' capacity: every autocommit INSERT logs a row.
        self.xid = None;
        self.undo.clear();
        self.undo_bytes = 0;
        self.undo_incomplete = false;
        self.ddl.clear();
        self.row_locks.clear();
        if !self.per_rel.is_empty() {
            self.per_rel.clear();
        }
        if !self.escalated.is_empty() {
            self.escalated.clear();
        }
        if !self.dead.is_empty() {
            self.dead.clear();
        }
    }
}

/// A savepoint's view of a [`Txn`]: the lengths of its logs then (the
/// default: an empty transaction).
#[derive(Clone, Debug, Default)]
pub(crate) struct TxnMark {
    pub(crate) undo: usize,
    pub(crate) undo_bytes: u64,
    pub(crate) ddl: usize,
    pub(crate) row_locks: usize,
    pub(crate) escalated: HashMap<RelId, LockMode>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_lock_has_one_holder_until_released() {
        let t = Transactions::default();
        let (a, b) = (t.snapshots().assign_xid(0).unwrap(), t.snapshots().assign_xid(1).unwrap());
        assert_ne!(a, b);
        let key = (16384, Tid::new(3, 7));
        let u = RowLockMode::Update;
        assert_eq!(t.try_lock_row(key, a, u), Ok(RowGrant::New));
        assert_eq!(t.try_lock_row(key, a, u), Ok(RowGrant::AlreadyHeld));
        assert_eq!(t.try_lock_row(key, b, u), Err(a));
        t.unlock_rows(&[key], b);
        assert_eq!(t.row_holders(key), vec![(a, u)], "only the holder releases");
        t.unlock_rows(&[key], a);
        assert_eq!(t.try_lock_row(key, b, u), Ok(RowGrant::New));
        assert_eq!(t.row_locks_held(), 1);
    }

    #[test]
    fn row_lock_modes_follow_postgresqls_conflict_table() {
        use RowLockMode::*;
        let all = [KeyShare, Share, NoKeyUpdate, Update];
        // PostgreSQL's documentation, "Conflicting Row-Level Locks".
        let want = |a: RowLockMode, b: RowLockMode| match (a.min(b), a.max(b)) {
            (KeyShare, Update) => true,
            (KeyShare, _) => false,
            (Share, Share) => false,
            _ => true,
        };
        for a in all {
            for b in all {
                assert_eq!(a.conflicts(b), want(a, b), "{a:?} vs {b:?}");
                assert_eq!(a.conflicts(b), b.conflicts(a));
            }
        }
    }

    #[test]
    fn two_share_holders_coexist_and_block_a_writer_until_both_leave() {
        let t = Transactions::default();
        let (a, b, c) = (1000, 1001, 1002);
        let key = (16384, Tid::new(0, 1));
        assert_eq!(t.try_lock_row(key, a, RowLockMode::Share), Ok(RowGrant::New));
        assert_eq!(t.try_lock_row(key, b, RowLockMode::Share), Ok(RowGrant::New));
        assert!(t.try_lock_row(key, c, RowLockMode::NoKeyUpdate).is_err());
        assert_eq!(t.try_lock_row(key, c, RowLockMode::KeyShare), Ok(RowGrant::New));
        t.unlock_rows(&[key], a);
        assert_eq!(t.try_lock_row(key, c, RowLockMode::NoKeyUpdate), Err(b));
        t.unlock_rows(&[key], b);
        assert_eq!(t.try_lock_row(key, c, RowLockMode::NoKeyUpdate), Ok(RowGrant::Upgraded(RowLockMode::KeyShare)));
        t.restore_row_lock(key, c, Some(RowLockMode::KeyShare));
        assert_eq!(t.row_holders(key), vec![(c, RowLockMode::KeyShare)]);
        t.restore_row_lock(key, c, None);
        assert_eq!(t.row_locks_held(), 0);
    }

    #[test]
    fn the_undo_log_refuses_a_write_past_its_limit_but_keeps_its_undo() {
        let mut txn = Txn::default();
        let per = std::mem::size_of::<Undo>() as u64;
        txn.log(Undo::Update { rel: 1, tid: Tid::new(0, 0) }, 2 * per).unwrap();
        let mark = txn.mark();
        txn.log(Undo::Insert { rel: 1, tid: Tid::new(0, 2) }, 2 * per).unwrap();
        let err = txn.log(Undo::Delete { rel: 1, tid: Tid::new(0, 3) }, 2 * per).unwrap_err();
        assert!(matches!(err, crate::EngineError::UndoLimit { limit_bytes } if limit_bytes == 2 * per), "{err}");
        assert_eq!(err.sqlstate(), turnstile_lock::SqlState::PROGRAM_LIMIT_EXCEEDED);
        assert_eq!(txn.undo.len(), 3, "the write past the limit is logged, so it can be undone");
        assert!(txn.wrote());
        assert_eq!(mark.undo_bytes, per);
        txn.clear();
        assert!(!txn.wrote());
    }
}
