//! Savepoints: PostgreSQL's subtransactions, on the transaction's undo log
//! and lock lists.
//!
//! A [`Savepoint`] remembers where the transaction stood: the lengths of
//! its undo log, DDL list and row-lock list ([`crate::txn`]), the relations
//! it had escalated, and every heavyweight lock the backend held with its
//! acquisition count. [`Session::rollback_to`] puts all of that back, as
//! PostgreSQL's `RollbackToSavepoint` (an aborted subtransaction) does:
//!
//! * the writes since are undone, newest first, through the same undo
//!   steps as a full rollback;
//! * row locks taken since are released and upgrades since are taken back
//!   to the mode held before (waiters wake on the heavyweight locks they
//!   retry through);
//! * heavyweight locks acquired since are released, acquisition by
//!   acquisition — relation locks (`LOCK TABLE`, a query's), the tuple
//!   locks of a wait, transaction-level advisory locks — except the
//!   transaction's own transaction-id lock (the transaction keeps its
//!   xid) and session-level advisory locks (a subtransaction does not own
//!   them, in PostgreSQL either).
//!
//! Releasing a savepoint (`RELEASE SAVEPOINT`) keeps everything: its work
//! becomes the enclosing transaction's, so the engine has nothing to do;
//! the SQL layer forgets the savepoint and the ones after it.
//!
//! Invariant after `rollback_to(sp)`: `txn.undo.len() == sp.undo`,
//! `txn.row_locks.len() == sp.row_locks`, and for every `(tag, mode)` not
//! excepted above, acquisitions held == acquisitions held at `sp`.

use crate::error::{InvalidTransactionState, Result};
use crate::session::Session;
use crate::txn::{RollbackReport, TxnMark};
use std::collections::HashMap;
use turnstile_lock::{LockMode, LockTag};

/// Where a transaction stood when a savepoint was set.
#[derive(Clone, Debug)]
pub struct Savepoint {
    txn: TxnMark,
    /// Heavyweight locks held then: acquisitions per `(tag, mode)`.
    locks: HashMap<(LockTag, LockMode), u32>,
}

impl Session {
    /// `SAVEPOINT`: marks where the open transaction stands. Outside a
    /// transaction block it is an error (the SQL layer answers `25P01`).
    pub fn savepoint(&mut self) -> Result<Savepoint> {
        if !self.in_transaction {
            return Err(InvalidTransactionState::OutsideBlock("SAVEPOINT").into());
        }
        let locks = self.backend.held_locks().into_iter().map(|(t, m, n)| ((t, m), n)).collect();
        Ok(Savepoint { txn: self.txn.mark(), locks })
    }

    /// `ROLLBACK TO SAVEPOINT`: undoes the writes made since `sp` and
    /// releases the row and heavyweight locks taken since (see the module
    /// documentation). Locks are released also when undoing fails, in
    /// which case the first error is returned.
    pub fn rollback_to(&mut self, sp: &Savepoint) -> Result<RollbackReport> {
        if !self.in_transaction {
            return Err(InvalidTransactionState::OutsideBlock("ROLLBACK TO SAVEPOINT").into());
        }
        let undone = self.undo_since(&sp.txn);
        // Row locks, newest first: a lock upgraded twice goes back step by step.
        let engine = std::sync::Arc::clone(&self.engine);
        if let Some(xid) = self.txn.xid {
            let from = sp.txn.row_locks.min(self.txn.row_locks.len());
            for (key, before) in self.txn.row_locks.split_off(from).into_iter().rev() {
                if before.is_none() {
                    self.txn.untook_row_lock(key.0);
                }
                engine.txns().restore_row_lock(key, xid, before);
            }
        }
        self.txn.escalated = sp.txn.escalated.clone();
        let own_xid = self.txn.xid;
        for (tag, mode, n) in self.backend.held_locks() {
            let then = sp.locks.get(&(tag, mode)).copied().unwrap_or(0);
            let session = self.session_advisory_count(&tag, mode);
            let excess = n.saturating_sub(then.max(session));
            let own = own_xid.is_some_and(|x| tag == LockTag::transaction_id(crate::txn::XID_DATABASE, x));
            if own {
                continue;
            }
            for _ in 0..excess {
                // Held (just listed): an error here would be a broken
                // invariant of the lock manager, not the caller's.
                let released = self.backend.unlock(tag, mode);
                debug_assert!(released.is_ok(), "{tag} {mode} listed as held: {released:?}");
            }
        }
        undone
    }
}
