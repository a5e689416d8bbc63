//! # Durability: the engine's side of the write-ahead log
//!
//! The log itself — records, insertion under both profiles, group commit,
//! the WAL writer, segments — is `turnstile_storage::wal`; how a page
//! change becomes a record is `turnstile_storage::page_log`. This module
//! decides what is logged when, writes the transaction records, takes
//! checkpoints and recovers after a crash.
//!
//! ## What is logged
//!
//! | change | record |
//! |---|---|
//! | a heap page (insert, delete, in-place update, restore, VACUUM) | [`crate::heap::log`]: the page's delta or image, and the tuple as it was |
//! | B-tree pages (insert, split, downlink, new root, vacuum, build) | [`crate::btree::log`]: the pages, a split's two halves in one record |
//! | `COMMIT`, `ROLLBACK` of a transaction that wrote | [`records`]: commit / abort |
//! | a relation cut short (`TRUNCATE`, `VACUUM FULL`'s tail, `REINDEX`) | [`records`]: truncate, logged and flushed before the file is cut |
//! | the catalog (`CREATE`, `DROP`, `ALTER`) | none: the catalog file is replaced atomically and fsynced by each DDL statement (`crate::catalog`) |
//!
//! ## The rules
//!
//! 1. **WAL before data**: a page is written only once the log is durable
//!    up to its LSN (the buffer pool asks the log, `turnstile_storage::page_log`).
//! 2. **Durable before visible**: `COMMIT` inserts its record and, with
//!    `synchronous_commit` on, waits until it is durable before the
//!    transaction becomes visible to snapshots and its locks are released
//!    — unless the transaction logged nothing of its own (it changed only
//!    unlogged tables): then, as in PostgreSQL, it does not wait
//!    (`xact_wal.rs`), since a crash empties what it changed anyway.
//! 3. **Whole pages after a checkpoint**: the first change of a page after
//!    a checkpoint's redo point logs the whole page, so a page torn by a
//!    crash mid-write is rebuilt from the log (PostgreSQL's full-page
//!    writes; chosen over InnoDB's doublewrite buffer because the log
//!    already carries every change in order, and the cost falls on the
//!    first change per checkpoint, not on every page write).
//! 4. **Undo information travels with the change**: a heap record of a
//!    transaction carries the tuple as it was, so recovery can take back
//!    the writes of a transaction that never committed (turnstile writes
//!    in place).
//!
//! ## Checkpoints ([`checkpoint`])
//!
//! A checkpoint takes the insert position as its redo point (changes from
//! now on log whole pages first), writes every dirty buffer (each after its
//! WAL) and fsyncs every file, then records the redo point — and the start
//! of the oldest transaction still running, whose undo information recovery
//! may need — in the `control` file, and removes the WAL segments before
//! both. Writers are not stopped. Checkpoints run every
//! `wal.checkpoint_timeout_s`, when `wal.max_wal_size` bytes were written
//! since the last, on `CHECKPOINT`, and at a clean shutdown.
//!
//! ## Recovery ([`recovery`])
//!
//! At start: read from the oldest position the control file names; redo
//! every page change from the redo point on (a page is skipped when its LSN
//! shows the change is there); collect the undo information of each
//! transaction until its commit or abort record. At the end of the log
//! (a torn or zeroed tail ends it; a bad record followed by good ones is
//! corruption and refuses to start), the transactions left without an end
//! are losers: their changes are taken back newest first, each step logged,
//! and an abort record written for each. A checkpoint then makes the
//! result the new starting point. So no write of a transaction that did
//! not commit survives a crash, however large; every transaction id of an
//! earlier run that left rows behind is one that committed.

pub(crate) mod checkpoint;
pub(crate) mod control;
pub mod records;
pub(crate) mod recovery;
mod sequence_log;
mod xact_wal;

use crate::mvcc::Xid;
use std::sync::Arc;
use turnstile_storage::page_log::{RecordKind, RedoLog, RedoPoint};
use turnstile_storage::wal::{Lsn, Wal, WalRecord};
use turnstile_storage::StorageError;
use turnstile_sync::sync::atomic::{AtomicU64, Ordering};

/// The engine's write-ahead log: the storage crate's [`Wal`], the current
/// redo point, and where each backend's running transaction began in the
/// log (its undo information starts there).
#[derive(Debug)]
pub struct EngineLog {
    wal: Wal,
    redo: RedoPoint,
    /// Per backend slot: the insert position when its transaction got an
    /// id (0: none running). Written only by the slot's owner.
    starts: Box<[AtomicU64]>,
    /// A checkpoint's data write or fsync failed: no checkpoint may
    /// complete until the server restarts and recovers.
    data_unsafe: turnstile_sync::sync::counter::AtomicBool,
    /// Sequence states logged and recovered (`sequence_log.rs`).
    sequences: sequence_log::SequenceStates,
    /// Whether a committing transaction wrote WAL of its own (`xact_wal.rs`).
    xact_wal: xact_wal::XactWal,
}

impl EngineLog {
    pub(crate) fn new(wal: Wal, redo: u64, backends: usize) -> EngineLog {
        EngineLog {
            wal,
            redo: RedoPoint::new(redo),
            starts: (0..backends).map(|_| AtomicU64::new(0)).collect(),
            data_unsafe: turnstile_sync::sync::counter::AtomicBool::new(false),
            sequences: sequence_log::SequenceStates::default(),
            xact_wal: xact_wal::XactWal::default(),
        }
    }

    /// The log.
    pub fn wal(&self) -> &Wal {
        &self.wal
    }

    /// Transaction `xid` of backend `slot` got its id (on this thread):
    /// its first record comes after the insert position now.
    pub(crate) fn xact_started(&self, slot: usize, xid: Xid) {
        if let Some(s) = self.starts.get(slot) {
            s.store(self.wal.insert_lsn().0, Ordering::Release);
        }
        self.xact_wal.started(xid);
        self.wal.enter_writer();
    }

    /// The transaction of backend `slot` ended (committed or aborted).
    pub(crate) fn xact_ended(&self, slot: usize) {
        if let Some(s) = self.starts.get(slot) {
            s.store(0, Ordering::Release);
        }
        self.xact_wal.ended();
        self.wal.leave_writer();
    }

    /// The oldest position a running transaction's records may start at
    /// (`u64::MAX`: none running).
    pub(crate) fn oldest_start(&self) -> u64 {
        self.starts.iter().map(|s| s.load(Ordering::Acquire)).filter(|&s| s != 0).min().unwrap_or(u64::MAX)
    }

    /// Logs `xid`'s commit and, when `synchronous` (the session's
    /// `synchronous_commit`) and the transaction wrote WAL of its own
    /// (`xact_wal.rs`: one that changed only unlogged tables did not),
    /// returns once it is durable.
    pub(crate) fn commit(&self, xid: Xid, synchronous: bool) -> Result<Lsn, StorageError> {
        let end = self.insert_xact(xid, records::XactOp::Commit)?;
        if synchronous && self.xact_wal.wrote(xid) {
            self.wal.commit_flush(end).map_err(StorageError::from)?;
        }
        Ok(end)
    }

    /// Logs `xid`'s abort (not flushed: a lost abort record makes the
    /// transaction a loser, undone again).
    pub(crate) fn abort(&self, xid: Xid) -> Result<Lsn, StorageError> {
        self.insert_xact(xid, records::XactOp::Abort)
    }

    fn insert_xact(&self, xid: Xid, op: records::XactOp) -> Result<Lsn, StorageError> {
        let rec = WalRecord { xid, rmgr: records::RMGR_XACT, info: op as u8, parts: &[] };
        self.wal.insert(&rec).map_err(StorageError::from)
    }

    /// Starts a checkpoint: changes from now on log whole pages first.
    /// Returns the redo point.
    pub(crate) fn begin_checkpoint(&self) -> u64 {
        self.redo.advance(|| self.wal.insert_lsn().0)
    }
}

#[cfg(test)]
thread_local! {
    /// Run by this thread's next page-change insertion, before it (tests
    /// use it to start a checkpoint between a change's before-image and
    /// its record).
    pub(crate) static BEFORE_PAGE_INSERT: std::cell::Cell<Option<Box<dyn FnOnce()>>> =
        const { std::cell::Cell::new(None) };
}

impl RedoLog for EngineLog {
    fn insert(&self, kind: RecordKind, parts: &[&[u8]], full_pages: usize) -> Result<u64, StorageError> {
        #[cfg(test)]
        if let Some(hook) = BEFORE_PAGE_INSERT.take() {
            hook();
        }
        let rec = WalRecord { xid: kind.xid, rmgr: kind.rmgr, info: kind.info, parts };
        self.xact_wal.inserted(kind.xid);
        let lsn = if full_pages > 0 { self.wal.insert_fpi(&rec) } else { self.wal.insert(&rec) };
        Ok(lsn.map_err(StorageError::from)?.0)
    }

    fn flush(&self, lsn: u64) -> Result<(), StorageError> {
        self.wal.flush(Lsn(lsn)).map_err(StorageError::from)
    }

    fn redo_point(&self) -> u64 {
        self.redo.get()
    }

    fn redo_moved_since(&self, seen: u64) -> bool {
        self.redo.moved_since(seen)
    }
}

/// The engine's log as the buffer pool holds it.
pub(crate) fn as_redo_log(log: &Arc<EngineLog>) -> Arc<dyn RedoLog> {
    log.clone()
}

/// Opens the log of the data directory `dir` after redoing it into `pool`
/// (recovery's first half): returns the log, attached to `pool`, and the
/// transactions that [`finish_recovery`] must take back.
pub(crate) fn open_log(
    dir: &std::path::Path,
    io: Arc<dyn turnstile_storage::io::StorageIo>,
    config: &turnstile_sync::Config,
    pool: &turnstile_storage::BufferPool,
    smgr: &turnstile_storage::Smgr,
    catalog: &crate::catalog::Catalog,
) -> crate::error::Result<(Arc<EngineLog>, recovery::Redone)> {
    let control = control::Control::read(dir)
        .map_err(|e| crate::error::EngineError::Recovery(format!("could not read the control file: {e}")))?;
    let snapshot = catalog.snapshot();
    let with_storage = || snapshot.relations.values().filter(|r| r.kind.has_storage());
    let known: std::collections::HashSet<_> =
        with_storage().map(|r| turnstile_storage::RelFileId::new(r.db, r.id)).collect();
    for r in with_storage().filter(|r| r.unlogged) {
        pool.set_unlogged(turnstile_storage::RelFileId::new(r.db, r.id), true);
    }
    let wal_dir = dir.join(WAL_DIR);
    let first = Lsn::first(config.wal.segment_size);
    let mut redone = recovery::redo(&wal_dir, io.clone(), control, first, pool, smgr, &known)?;
    redone.crashed = control.is_some_and(|c| !c.clean);
    let wal = Wal::open(&wal_dir, io, &config.wal, redone.end).map_err(StorageError::from)?;
    let mut log = EngineLog::new(wal, control.map_or(0, |c| c.redo), config.lock.max_backends as usize);
    log.sequences = sequence_log::SequenceStates::recovered(std::mem::take(&mut redone.sequences));
    let log = Arc::new(log);
    pool.set_redo_log(as_redo_log(&log))?;
    Ok((log, redone))
}

/// Recovery's second half, on the open engine: takes back the writes of
/// the transactions that never ended, keeps those whose undo failed
/// aborted for ever, takes a checkpoint and starts the checkpointer.
pub(crate) fn finish_recovery(engine: &Arc<crate::Engine>, redone: recovery::Redone) -> crate::error::Result<()> {
    let failed = recovery::undo(engine.pool(), engine.smgr(), engine.log(), redone.pending)?;
    for xid in failed {
        engine.txns().snapshots().mark_failed(xid).map_err(|e| crate::error::EngineError::XidLimit(e.to_string()))?;
    }
    if redone.crashed {
        reset_unlogged(engine)?;
    }
    engine.checkpoint()?;
    checkpoint::start(engine);
    Ok(())
}

/// After a crash, every unlogged relation is emptied (its changes were
/// never logged, so nothing says what they were): a table keeps no row,
/// an index is rebuilt empty (PostgreSQL copies their init forks).
fn reset_unlogged(engine: &Arc<crate::Engine>) -> crate::error::Result<()> {
    let snapshot = engine.catalog().snapshot();
    for r in snapshot.relations.values().filter(|r| r.unlogged && r.kind.has_storage()) {
        let file = turnstile_storage::RelFileId::new(r.db, r.id);
        if !engine.smgr().exists(file, turnstile_storage::Fork::Main)? {
            continue;
        }
        engine.truncate_relation(file, 0)?;
        if let Some(def) = &r.index {
            let key_types = r.columns.iter().map(|c| c.ty).collect();
            let opts = crate::btree::BtreeOptions::new(r.name.clone(), key_types, def.unique, engine.config());
            crate::btree::BTree::build(engine.pool(), file, opts, std::iter::empty())?;
        }
    }
    engine.catalog().invalidate()?;
    Ok(())
}

/// The WAL's directory in a data directory (PostgreSQL's name).
pub const WAL_DIR: &str = "pg_wal";

impl EngineLog {
    /// Whether a checkpoint's data write or fsync failed in this process.
    pub fn data_unsafe(&self) -> bool {
        self.data_unsafe.load(turnstile_sync::sync::counter::Ordering::Acquire)
    }

    pub(crate) fn set_data_unsafe(&self) {
        self.data_unsafe.store(true, turnstile_sync::sync::counter::Ordering::Release);
    }
}

impl crate::Engine {
    /// Cuts `file`'s `fork` to its first `keep` blocks, logged first: the
    /// truncate record is made durable before the file shrinks, so redo
    /// never re-creates what was cut (PostgreSQL's `smgrtruncate` rule).
    pub(crate) fn truncate_relation(&self, file: turnstile_storage::RelFileId, keep: u32) -> crate::error::Result<()> {
        let fork = turnstile_storage::Fork::Main;
        let data = records::encode_truncate(file, fork, keep);
        let rec =
            WalRecord { xid: 0, rmgr: records::RMGR_SMGR, info: records::SmgrOp::Truncate as u8, parts: &[&data] };
        let wal = self.log().wal();
        let end = wal.insert(&rec).map_err(StorageError::from)?;
        wal.flush(end).map_err(StorageError::from)?;
        self.pool().drop_relation_buffers(file, fork, keep)?;
        self.smgr().truncate(file, fork, keep)?;
        self.pool().fsm().truncate(file, keep);
        Ok(())
    }
}
