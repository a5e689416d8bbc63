//! Ending a transaction: `COMMIT`'s and `ROLLBACK`'s last step, and the
//! undo log applied in reverse (see [`crate::txn`] for what each logged
//! change takes back, and [`crate::mvcc`] for why undo runs before the
//! transaction is marked aborted).
//!
//! # Failures
//!
//! * **Undo.** A step that fails (an I/O error, a checksum failure on the
//!   page) does not stop the others; the first failure is returned as
//!   [`EngineError::UndoFailed`] with its cause and the number of writes
//!   left in place. The transaction still ends as aborted: by the rules of
//!   [`crate::mvcc::visibility`] an aborted transaction's writes count for
//!   nobody, restored or not, so readers, writers, unique checks and
//!   VACUUM all treat the rows as if the undo had succeeded — but the
//!   caller is told that it did not. `ROLLBACK` returns the error; a
//!   failed statement outside a block returns its own error and logs the
//!   undo's ([`crate::error::log_error`]); so does a session dropped in a
//!   block.
//! * **The undo log's limit** (`txn.undo_limit_bytes`): the write that
//!   crosses it is still logged (so it can be taken back), then the
//!   statement fails with [`EngineError::UndoLimit`] (`54000`). The
//!   transaction can be rolled back; nothing is ever kept without undo.
//! * **An undo that left writes in place** (a failure, or a version that
//!   no longer fits its page) marks the transaction: when it aborts, its
//!   id is recorded on disk as aborted for ever
//!   ([`crate::mvcc::Snapshots::mark_failed`]), so its writes stay
//!   invisible across a restart too.
//! * **Ending** fails if the status log has no word for the transaction's
//!   id ([`crate::mvcc::clog::NoStatusWord`], `XX000`), or if the commit
//!   record could not be made durable (the write-ahead log failed: the
//!   transaction ends aborted, and the log accepts nothing more until the
//!   server restarts and recovers); its row locks are released all the
//!   same.

use crate::catalog::RelId;
use crate::error::{log_error, EngineError, Internal, InvalidTransactionState, Result};
use crate::heap::{self, HeapError};
use crate::session::Session;
use crate::txn::{RollbackReport, TxnMark, Undo};
use std::collections::HashSet;
use std::sync::Arc;
use turnstile_storage::RelFileId;
use turnstile_sync::activity::BackendState;

impl Session {
    /// `ROLLBACK`: undoes the transaction's inserts, updates and deletes
    /// (newest first), then ends it and releases its row write locks and
    /// every heavyweight lock — also when undoing fails, in which case
    /// [`EngineError::UndoFailed`] is returned. DDL is not undone: the
    /// report names it.
    pub fn rollback(&mut self) -> Result<RollbackReport> {
        if !self.in_transaction {
            return Err(InvalidTransactionState::NoneInProgress.into());
        }
        self.activity.set_query("ROLLBACK");
        let undone = self.undo_all();
        self.in_transaction = false;
        let ended = self.finish_txn(false);
        self.release_xact_locks();
        self.activity.set_state(BackendState::Idle);
        let report = undone?;
        ended?;
        Ok(report)
    }

    /// Records a DDL statement of an open transaction block (a rollback
    /// reports it as kept).
    pub(crate) fn note_ddl(&mut self, what: &str) {
        if self.in_transaction {
            self.txn.note_ddl(what);
        }
    }

    /// Logs `u`, the undo of a write just made; fails with
    /// [`EngineError::UndoLimit`] once the log holds more than
    /// `txn.undo_limit_bytes` (the write is logged all the same, so the
    /// failed statement is undone in full).
    pub(crate) fn log_undo(&mut self, u: Undo) -> Result<()> {
        self.txn.log(u, self.engine.config().txn.undo_limit_bytes)
    }

    /// The end of a statement outside a transaction block: a failed one is
    /// undone; either way its row locks are released (the caller then
    /// releases the heavyweight locks). The statement's error is what the
    /// caller sees; an undo failure besides it is logged with its cause.
    pub(crate) fn end_statement_txn<R>(&mut self, out: Result<R>) -> Result<R> {
        if self.txn.xid.is_none() && self.txn.undo.is_empty() {
            self.txn.ddl.clear();
            return out;
        }
        let failed = out.is_err();
        if failed && self.txn.wrote() {
            if let Err(e) = self.undo_all() {
                log_error("undoing a failed statement", &e);
            }
        }
        let ended = self.finish_txn(!failed);
        let out = out?;
        ended?;
        Ok(out)
    }

    /// Aborts an open transaction when the session ends (failures are
    /// logged: nobody is left to return them to).
    pub(crate) fn abort_on_exit(&mut self) {
        let open = self.in_transaction;
        if open && self.txn.wrote() {
            if let Err(e) = self.undo_all() {
                log_error("undoing the transaction of a closing session", &e);
            }
        }
        // Outside a block a statement has already ended its transaction.
        if let Err(e) = self.finish_txn(!open) {
            log_error("ending the transaction of a closing session", &e);
        }
    }

    /// Ends the transaction — committed, or (its writes undone) aborted —
    /// in the transaction status and the snapshot protocol, then releases
    /// its row write locks and forgets it (the caller releases the
    /// heavyweight locks next, waking row waiters).
    pub(crate) fn finish_txn(&mut self, commit: bool) -> Result<()> {
        let mut ended: Result<()> = Ok(());
        if let Some(xid) = self.txn.xid {
            let txns = self.engine.txns();
            let slot = self.activity.backend();
            let log = self.engine.log();
            // Durable before visible: the commit record first. A commit
            // the log could not make durable did not happen: the
            // transaction ends aborted (recovery takes its writes back).
            let logged = if commit { log.commit(xid, self.synchronous_commit).map(drop) } else { Ok(()) };
            if commit && logged.is_ok() {
                ended = txns.snapshots().commit(slot, xid).map_err(|e| Internal::from(e).into());
                if ended.is_ok() {
                    for (&rel, &n) in &self.txn.dead {
                        txns.note_dead(RelFileId::new(self.db, rel), n);
                    }
                }
            } else {
                if self.txn.undo_incomplete {
                    // Writes were left in place: the id must never count as
                    // committed, in this run or after a restart.
                    if let Err(e) = txns.snapshots().mark_failed(xid) {
                        log_error(
                            &format!("recording transaction {xid} as aborted on disk"),
                            &EngineError::XidLimit(e.to_string()),
                        );
                    }
                }
                ended = txns.snapshots().abort(slot, xid).map_err(|e| Internal::from(e).into());
                if let Err(e) = log.abort(xid) {
                    log_error(&format!("logging the abort of transaction {xid}"), &e.into());
                }
                if let Err(e) = logged {
                    ended = Err(e.into());
                }
            }
            log.xact_ended(slot);
            txns.unlock_rows(self.txn.row_locks.iter().map(|(k, _)| k), xid);
            self.engine.key_shares().release(self.activity.backend(), xid, txns, self.txn.row_locks.len());
        }
        self.txn.clear();
        self.drop_snapshot();
        ended
    }

    /// Applies the undo log in reverse; returns what was undone.
    fn undo_all(&mut self) -> Result<RollbackReport> {
        self.undo_since(&TxnMark::default())
    }

    /// Applies the undo log in reverse back to `mark` (a savepoint's, or
    /// the empty mark: the whole transaction); returns what was undone
    /// (DDL statements after the mark are reported kept), or
    /// [`EngineError::UndoFailed`] with the first failure.
    pub(crate) fn undo_since(&mut self, mark: &TxnMark) -> Result<RollbackReport> {
        let ddl_from = mark.ddl.min(self.txn.ddl.len());
        let mut report = RollbackReport { kept_ddl: self.txn.ddl.split_off(ddl_from), ..RollbackReport::default() };
        let mut first_error = None;
        let live: HashSet<RelId> = self.engine.catalog().snapshot().relations.keys().copied().collect();
        let from = mark.undo.min(self.txn.undo.len());
        let undo = self.txn.undo.split_off(from);
        self.txn.set_undo_bytes(mark.undo_bytes);
        for u in undo.into_iter().rev() {
            match self.undo_one(&u, &live, &mut report) {
                Ok(true) => {}
                Ok(false) => report.kept_writes += 1,
                Err(e) => {
                    report.kept_writes += 1;
                    first_error.get_or_insert(e);
                }
            }
        }
        if report.kept_writes > 0 {
            self.txn.undo_incomplete = true;
        }
        match first_error {
            Some(e) => Err(EngineError::UndoFailed { kept: report.kept_writes, source: Box::new(e) }),
            None => Ok(report),
        }
    }

    /// Takes back one logged change (counted in `report`); whether it could
    /// be. A change to a relation dropped since (DDL is kept) or a tuple
    /// gone already (its relation truncated) counts as undone.
    fn undo_one(&self, u: &Undo, live: &HashSet<RelId>, report: &mut RollbackReport) -> Result<bool> {
        let engine = Arc::clone(&self.engine);
        let pool = engine.pool();
        let xid = self.txn.xid.unwrap_or(0);
        let file = |rel| RelFileId::new(self.db, rel);
        let gone = |r: std::result::Result<(), HeapError>| match r {
            Ok(()) | Err(HeapError::NoSuchTuple { .. }) => Ok(true),
            Err(e) => Err(EngineError::from(e)),
        };
        Ok(match u {
            Undo::Insert { rel, tid } if live.contains(rel) => {
                report.undone_inserts += 1;
                gone(heap::mark_dead(pool, file(*rel), *tid))?
            }
            Undo::Update { rel, tid } if live.contains(rel) => {
                report.undone_updates += 1;
                match heap::restore_in_place(pool, file(*rel), *tid, xid, engine.txns().versions()) {
                    Ok(done) => done,
                    Err(HeapError::NoSuchTuple { .. }) => true,
                    Err(e) => return Err(e.into()),
                }
            }
            Undo::Move { rel, old, new } if live.contains(rel) => {
                report.undone_updates += 1;
                gone(heap::mark_dead(pool, file(*rel), *new))? & gone(heap::set_xmax(pool, file(*rel), *old, 0, None))?
            }
            Undo::Delete { rel, tid } if live.contains(rel) => {
                report.undone_deletes += 1;
                gone(heap::set_xmax(pool, file(*rel), *tid, 0, None))?
            }
            _ => true,
        })
    }
}
