//! Multi-version concurrency control: row versions, snapshots and
//! transaction status — `READ COMMITTED` and `REPEATABLE READ` as
//! PostgreSQL means them.
//!
//! # Row versions
//!
//! Every heap tuple carries the id of the transaction that wrote it
//! (`xmin`), of the one that deleted it or moved it away (`xmax`, 0 if
//! none) and, for a moved row, where its next version is (`ctid`); see
//! [`crate::heap`]. An `UPDATE` that keeps the row's index keys and fits on
//! its page rewrites the tuple in place and keeps the version it replaced
//! in the [`VersionStore`]; any other `UPDATE` writes a new tuple and sets
//! the old one's `xmax` and `ctid` (PostgreSQL's non-HOT update). A
//! `DELETE` sets `xmax`.
//!
//! Every rule that decides which version a reader, a writer, a unique
//! check or VACUUM sees is stated once, in [`visibility`].
//!
//! # Reading
//!
//! A statement reads with a [`Snapshot`] ([`snapshot`]): the version of a
//! row it sees is the tuple if it sees the tuple's `xmin` (and not its
//! `xmax`), else the newest older version whose `xmin` it sees, else none.
//! A transaction sees its own writes. Readers take no row lock and never
//! wait for writers; writers never wait for readers.
//!
//! # Transaction status
//!
//! [`clog::XactLog`] keeps one word per transaction id that can still be
//! asked about: in progress, aborted, committed, or (under `csn`) the
//! commit's sequence number. A visibility check is a few atomic loads and
//! takes no lock. A rollback first undoes the
//! transaction's writes through its undo log ([`crate::txn`]) and only
//! then marks it aborted, so a tuple written by an aborted transaction is
//! already marked dead (or restored) when anyone could treat the id as
//! finished. The visibility rules ignore an aborted transaction's writes
//! all the same (PostgreSQL's rule), so an undo that failed — reported
//! with its cause, never silently — still leaves no aborted write visible
//! while the engine runs. The log keeps a word only for ids that can still
//! be asked about and summarises the rest ([`clog`]); a rollback whose undo
//! did not complete is kept aborted for ever, on disk (`xact_failed`). A
//! restart treats every other id of an earlier run as committed
//! ([`clog::XactLog::base`]), and the 64-bit id counter resumes from a
//! limit kept on disk (`xid_limit` in the data directory).
//!
//! # Writing: PostgreSQL's `READ COMMITTED` rule
//!
//! `UPDATE` and `DELETE` find the rows whose snapshot version matches
//! their `WHERE`, then take each row's write lock (waiting for a writer
//! that holds it). If the row changed after the snapshot — a transaction
//! the snapshot does not see committed a newer version — `READ COMMITTED`
//! re-checks the `WHERE` on the newest version (following a moved row to
//! its new place) and acts on it or skips it, as `EvalPlanQual` does;
//! `REPEATABLE READ` fails with `40001` instead.
//!
//! # Reclaiming
//!
//! VACUUM ([`crate::vacuum`]) removes tuples whose deleter every snapshot
//! sees, and their index entries; it and a background pass every
//! `txn.autovacuum_naptime_ms` prune the version store at the current
//! [`Horizon`].

pub mod clog;
pub mod snapshot;
pub mod versions;
pub mod visibility;

pub use clog::Xid;
pub use snapshot::{Horizon, Snapshot, SnapshotStats, Snapshots};
pub use versions::{OldVersion, VersionStore, VersionStoreStats};

/// The first transaction id handed out (PostgreSQL's `FirstNormalTransactionId`).
pub const FIRST_XID: Xid = 3;

/// A transaction's isolation level.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum IsolationLevel {
    /// A snapshot per statement (PostgreSQL's default).
    #[default]
    ReadCommitted,
    /// One snapshot for the whole transaction; a write to a row changed
    /// since fails with `40001`.
    RepeatableRead,
}

impl IsolationLevel {
    /// The level's name as `SHOW transaction_isolation` prints it.
    pub const fn name(self) -> &'static str {
        match self {
            IsolationLevel::ReadCommitted => "read committed",
            IsolationLevel::RepeatableRead => "repeatable read",
        }
    }
}

/// What a reader needs to pick the version of a row it sees.
#[derive(Clone, Copy, Debug)]
pub struct Visibility<'a> {
    /// The reader's snapshot.
    pub snapshot: &'a Snapshot,
    /// The reader's own transaction id (0: none assigned yet).
    pub own: Xid,
    /// The snapshot protocol and transaction status.
    pub snapshots: &'a Snapshots,
    /// The older versions of rows updated in place.
    pub versions: &'a VersionStore,
}

impl Visibility<'_> {
    /// Whether the reader sees the writes of `xid`.
    #[inline]
    pub fn sees(&self, xid: Xid) -> bool {
        self.snapshots.sees(self.snapshot, xid, self.own)
    }
}
