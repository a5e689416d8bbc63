//! Writing transactions: transaction ids, row write locks and the undo log.
//!
//! There is no MVCC, so two things PostgreSQL gets from tuple headers
//! (`xmax`) are kept here instead:
//!
//! * **Row write locks.** A transaction that updates or deletes a row first
//!   takes the row's write lock, a `(relation, TID) → xid` entry in a shared,
//!   sharded map ([`Transactions`]), kept until the transaction ends. A second
//!   writer that finds the entry waits exactly as PostgreSQL's
//!   `heap_update` does: it takes the heavyweight *tuple* lock
//!   (`LockTag::tuple`, exclusive; it orders the waiters), then waits for the
//!   holder's *transaction id* lock (`LockTag::transaction_id`, share — the
//!   holder has it exclusive since it got its xid), then lets both go and
//!   retries. The waits are heavyweight lock waits, so `pg_locks` shows them
//!   (`tuple`, `transactionid`), lock timeouts apply and the deadlock
//!   detector sees cycles through rows. A row's read-modify-write therefore
//!   runs with the row owned: concurrent `abalance = abalance + delta`
//!   updates never lose one.
//! * **Undo.** Every insert, update and delete of the transaction is logged
//!   with what is needed to take it back (the row's before-image for an
//!   in-place update). [`crate::Session::rollback`] applies the log in
//!   reverse; a statement that fails outside a transaction block is undone
//!   the same way. This is sound because every row the log touches is still
//!   write-locked by the transaction (inserted rows excepted, see below), and
//!   VACUUM does not reclaim a dead tuple whose row is write-locked.
//!
//! Plain readers take no row lock and see every change as soon as it is
//! made, as before (no snapshot isolation).
//!
//! ## Limits (documented, not hidden)
//!
//! * Inserted rows are not write-locked (COPY would fill the map): another
//!   transaction may update or delete a row inserted by a transaction still
//!   open. If that one rolls back, an unchanged row goes; a row changed
//!   since by another transaction stays (its insert is then not undone).
//! * A unique-index check treats an entry whose tuple is dead but
//!   write-locked by another open transaction (a delete or key update not
//!   yet committed) as a conflict, where PostgreSQL would wait for that
//!   transaction: the error is raised at once (`23505`).
//! * Lock escalation: after [`ESCALATE_ROWS`] row locks on one relation, a
//!   transaction takes `ExclusiveLock` on the relation instead (it blocks
//!   every other writer and VACUUM, not readers) and stops adding row locks
//!   for it — a 10-million-row `UPDATE` does not fill memory.
//! * The undo log holds at most [`UNDO_LIMIT`] bytes of before-images;
//!   beyond that, writes are not logged and a rollback reports how many it
//!   could not undo ([`RollbackReport::kept_writes`]).
//! * DDL is not undone: a rollback names each DDL statement of the
//!   transaction in [`RollbackReport::kept_ddl`].

use crate::catalog::RelId;
use crate::tid::Tid;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use turnstile_sync::sync::atomic::{AtomicU32, Ordering};

/// Row locks a transaction takes on one relation before it locks the
/// whole relation `ExclusiveLock` instead.
pub const ESCALATE_ROWS: usize = 10_000;
/// Bytes of before-images the undo log keeps; writes beyond are not logged.
pub const UNDO_LIMIT: usize = 256 << 20;
/// Database field of transaction-id lock tags (xids are cluster-wide).
pub(crate) const XID_DATABASE: u32 = 0;
const SHARDS: usize = 64;

/// A row: relation and TID.
pub type RowKey = (RelId, Tid);

/// The shared half: the xid counter and the row write locks.
#[derive(Debug)]
pub struct Transactions {
    next_xid: AtomicU32,
    rows: Vec<Mutex<HashMap<RowKey, u32>>>,
}

impl Default for Transactions {
    fn default() -> Self {
        Transactions { next_xid: AtomicU32::new(FIRST_XID), rows: (0..SHARDS).map(|_| Mutex::default()).collect() }
    }
}

/// The first transaction id handed out (PostgreSQL's `FirstNormalTransactionId`).
const FIRST_XID: u32 = 3;

fn shard(key: &RowKey) -> usize {
    let h = u64::from(key.0).wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ u64::from(key.1.block).wrapping_mul(0xc2b2_ae3d_27d4_eb4f)
        ^ u64::from(key.1.slot);
    (h ^ (h >> 29)) as usize % SHARDS
}

impl Transactions {
    /// A new transaction id (wraps past `u32::MAX` to 3; ids
    /// only name running transactions, so reuse after 4 billion is harmless).
    pub fn assign_xid(&self) -> u32 {
        loop {
            let x = self.next_xid.fetch_add(1, Ordering::Relaxed);
            if x >= FIRST_XID {
                return x;
            }
        }
    }

    fn shard(&self, key: &RowKey) -> std::sync::MutexGuard<'_, HashMap<RowKey, u32>> {
        // A poisoned shard only means a thread panicked while holding it;
        // the map itself is always consistent (single inserts/removes).
        self.rows[shard(key)].lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes the write lock of `key` for `xid`: `Ok(true)` if newly taken,
    /// `Ok(false)` if `xid` already held it, `Err(holder)` if another
    /// transaction holds it.
    pub fn try_lock_row(&self, key: RowKey, xid: u32) -> Result<bool, u32> {
        let mut map = self.shard(&key);
        match map.get(&key) {
            Some(&h) if h == xid => Ok(false),
            Some(&h) => Err(h),
            None => {
                map.insert(key, xid);
                Ok(true)
            }
        }
    }

    /// The transaction holding the write lock of `key`, if any.
    pub fn row_holder(&self, key: RowKey) -> Option<u32> {
        self.shard(&key).get(&key).copied()
    }

    /// Releases the write locks `keys` held by `xid`.
    pub fn unlock_rows(&self, keys: &[RowKey], xid: u32) {
        for key in keys {
            let mut map = self.shard(key);
            if map.get(key) == Some(&xid) {
                map.remove(key);
            }
        }
    }

    /// Row write locks currently held, over all transactions.
    pub fn row_locks_held(&self) -> usize {
        self.rows.iter().map(|s| s.lock().map_or(0, |m| m.len())).sum()
    }
}

/// One logged change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Undo {
    /// A row inserted at `tid` (its encoded bytes have checksum `crc`):
    /// undone by marking it dead — if the tuple there still has those
    /// bytes (inserted rows are not row-locked, so another transaction may
    /// have changed it, or deleted it and let VACUUM give the slot to
    /// another row).
    Insert { rel: RelId, tid: Tid, crc: u32 },
    /// A row changed in place: undone by writing `before` back.
    Update { rel: RelId, tid: Tid, before: Vec<u8> },
    /// A row moved from `old` (now dead) to `new`: undone by killing `new`
    /// and reviving `old`.
    Move { rel: RelId, old: Tid, new: Tid },
    /// A row deleted (marked dead): undone by reviving it.
    Delete { rel: RelId, tid: Tid },
}

impl Undo {
    fn bytes(&self) -> usize {
        std::mem::size_of::<Undo>()
            + match self {
                Undo::Update { before, .. } => before.len(),
                _ => 0,
            }
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
    /// Writes that could not be undone because the undo log was full
    /// ([`UNDO_LIMIT`]); they stay.
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
    pub(crate) xid: Option<u32>,
    pub(crate) undo: Vec<Undo>,
    undo_bytes: usize,
    pub(crate) kept_writes: u64,
    pub(crate) ddl: Vec<String>,
    pub(crate) row_locks: Vec<RowKey>,
    per_rel: HashMap<RelId, usize>,
    /// Relations locked `ExclusiveLock` after [`ESCALATE_ROWS`] row locks.
    pub(crate) escalated: HashSet<RelId>,
}

impl Txn {
    /// Logs `u` (or counts it as kept if the log is full).
    pub(crate) fn log(&mut self, u: Undo) {
        let b = u.bytes();
        // Once one write is dropped, later ones are too: a rollback then
        // undoes a prefix of the history, never a history with holes.
        if self.kept_writes > 0 || self.undo_bytes + b > UNDO_LIMIT {
            self.kept_writes += 1;
            return;
        }
        self.undo_bytes += b;
        self.undo.push(u);
    }

    /// Notes a DDL statement (reported as kept by a rollback).
    pub(crate) fn note_ddl(&mut self, what: &str) {
        self.ddl.push(what.to_owned());
    }

    /// Records a newly taken row lock; returns whether the relation has now
    /// reached [`ESCALATE_ROWS`].
    pub(crate) fn took_row_lock(&mut self, key: RowKey) -> bool {
        self.row_locks.push(key);
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
        !self.undo.is_empty() || self.kept_writes > 0
    }

    /// Forgets everything (after the row locks were released).
    pub(crate) fn clear(&mut self) {
        // Keeps the vectors' capacity: every autocommit INSERT logs a row.
        self.xid = None;
        self.undo.clear();
        self.undo_bytes = 0;
        self.kept_writes = 0;
        self.ddl.clear();
        self.row_locks.clear();
        if !self.per_rel.is_empty() {
            self.per_rel.clear();
        }
        if !self.escalated.is_empty() {
            self.escalated.clear();
        }
    }
}

/// Whether an index entry pointing at `tid` of relation `rel` (file
/// `file`) conflicts with a new unique key: a live tuple does; a dead one
/// does if another open transaction holds its row lock (its delete or key
/// change may still be rolled back); a missing one does not. An error
/// reading the heap counts as a conflict (the safe answer).
pub(crate) fn unique_conflict(
    pool: &turnstile_storage::BufferPool,
    txns: &Transactions,
    file: turnstile_storage::RelFileId,
    rel: RelId,
    my_xid: Option<u32>,
    tid: Tid,
) -> bool {
    match crate::heap::tuple_state(pool, file, tid) {
        Ok(crate::heap::TupleState::Live) | Err(_) => true,
        Ok(crate::heap::TupleState::Dead) => txns.row_holder((rel, tid)).is_some_and(|h| Some(h) != my_xid),
        Ok(crate::heap::TupleState::Missing) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_lock_has_one_holder_until_released() {
        let t = Transactions::default();
        let (a, b) = (t.assign_xid(), t.assign_xid());
        assert_ne!(a, b);
        let key = (16384, Tid::new(3, 7));
        assert_eq!(t.try_lock_row(key, a), Ok(true));
        assert_eq!(t.try_lock_row(key, a), Ok(false));
        assert_eq!(t.try_lock_row(key, b), Err(a));
        t.unlock_rows(&[key], b);
        assert_eq!(t.row_holder(key), Some(a), "only the holder releases");
        t.unlock_rows(&[key], a);
        assert_eq!(t.try_lock_row(key, b), Ok(true));
        assert_eq!(t.row_locks_held(), 1);
    }

    #[test]
    fn the_undo_log_stops_at_its_limit_and_counts_what_it_drops() {
        let mut txn = Txn::default();
        let big = vec![0u8; UNDO_LIMIT / 2];
        txn.log(Undo::Update { rel: 1, tid: Tid::new(0, 0), before: big.clone() });
        txn.log(Undo::Update { rel: 1, tid: Tid::new(0, 1), before: big });
        txn.log(Undo::Insert { rel: 1, tid: Tid::new(0, 2), crc: 0 });
        assert_eq!(txn.undo.len(), 1);
        assert_eq!(txn.kept_writes, 2, "after the first dropped write, every later one is dropped");
        assert!(txn.wrote());
    }
}
