//! Whether a transaction wrote WAL of its own (PostgreSQL's
//! `XactLastRecEnd`, `RecordTransactionCommit`'s `wrote_xlog`).
//!
//! A transaction that got an id but logged nothing — it changed only
//! unlogged tables, which crash recovery empties anyway — leaves nothing a
//! crash could lose that recovery would keep. Its `COMMIT` inserts the
//! commit record and returns without waiting for it to be durable, as
//! PostgreSQL's does; the next flush (the WAL writer's, or any later
//! synchronous commit, whose record comes after it) makes it durable.
//! Without this, every `COPY` into an unlogged table (W4) waited for an
//! `fdatasync` that protects nothing.
//!
//! How it is known, without shared work per record:
//!
//! * every record of a transaction's change to a logged relation carries
//!   the transaction's id (the heap records), or is made durable by the
//!   operation itself before it returns (`TRUNCATE`'s cut, an index
//!   build's pages, a sequence's state); B-tree records carry no id but
//!   accompany the heap record of the same change;
//! * each thread remembers the transaction that last got an id on it
//!   ([`XactWal::started`]) and whether a record with that id was inserted
//!   on it since ([`XactWal::inserted`]);
//! * a record with an id that is not the thread's own — a session driven
//!   from another thread than the one it got its id on, or two sessions
//!   interleaved on one thread — bumps one shared counter instead. It
//!   never happens in the server (one thread per connection).
//!
//! [`XactWal::wrote`] answers "wrote nothing" only when the committing
//! thread is the one the transaction got its id on, no record with its id
//! was inserted there, and the shared counter has not moved since it got
//! its id. The answer may be too cautious (a flush that was not needed),
//! never wrong.

use crate::mvcc::Xid;
use std::cell::Cell;
use turnstile_sync::sync::atomic::{AtomicU64, Ordering};

/// The transaction that last got an id on this thread.
#[derive(Clone, Copy)]
struct Running {
    xid: Xid,
    wrote: bool,
    /// [`XactWal::foreign`] when it got its id.
    foreign_at_start: u64,
}

thread_local! {
    static RUNNING: Cell<Option<Running>> = const { Cell::new(None) };
}

/// The shared half: records whose transaction is not their thread's.
#[derive(Debug, Default)]
pub(crate) struct XactWal {
    foreign: AtomicU64,
}

impl XactWal {
    /// Transaction `xid` got its id on this thread.
    pub(crate) fn started(&self, xid: Xid) {
        let foreign_at_start = self.foreign.load(Ordering::Acquire);
        RUNNING.with(|r| r.set(Some(Running { xid, wrote: false, foreign_at_start })));
    }

    /// A record of transaction `xid` (0: of none) was inserted on this
    /// thread.
    pub(crate) fn inserted(&self, xid: Xid) {
        if xid == 0 {
            return;
        }
        RUNNING.with(|r| match r.get() {
            Some(run) if run.xid == xid => {
                if !run.wrote {
                    r.set(Some(Running { wrote: true, ..run }));
                }
            }
            _ => {
                self.foreign.fetch_add(1, Ordering::AcqRel);
            }
        });
    }

    /// Whether transaction `xid`, committing on this thread, may have
    /// written WAL of its own (see the module's rules).
    pub(crate) fn wrote(&self, xid: Xid) -> bool {
        let quiet = RUNNING.with(|r| {
            r.get().is_some_and(|run| {
                run.xid == xid && !run.wrote && run.foreign_at_start == self.foreign.load(Ordering::Acquire)
            })
        });
        !quiet
    }

    /// The transaction running on this thread ended.
    pub(crate) fn ended(&self) {
        RUNNING.with(|r| r.set(None));
    }
}

#[cfg(test)]
mod tests {
    use super::XactWal;

    #[test]
    fn only_a_transaction_that_logged_nothing_of_its_own_counts_as_quiet() {
        let w = XactWal::default();
        w.started(7);
        w.inserted(0);
        assert!(!w.wrote(7), "records without an id are not the transaction's");
        w.inserted(7);
        assert!(w.wrote(7));
        w.ended();
        assert!(w.wrote(8), "a transaction this thread never started");

        w.started(9);
        std::thread::scope(|s| {
            s.spawn(|| w.inserted(9));
        });
        assert!(w.wrote(9), "a record of it inserted on another thread");

        w.started(10);
        w.started(11);
        assert!(w.wrote(10), "another transaction got an id on this thread since");
        assert!(!w.wrote(11));
        w.inserted(10);
        assert!(w.wrote(11), "a record of another transaction makes every quiet answer cautious");
    }
}
