//! Crash recovery at start: redo, then undo of the transactions that never
//! ended (the rules are in [`super`]).

use super::control::Control;
use super::records::{self, SmgrOp, RMGR_SEQ, RMGR_SMGR, RMGR_XACT};
use super::EngineLog;
use crate::error::{EngineError, Result};
use crate::heap::log::{undo_tuple, HeapOp, RMGR_HEAP};
use crate::mvcc::Xid;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use turnstile_storage::io::StorageIo;
use turnstile_storage::page::{PageBuf, PAGE_SIZE};
use turnstile_storage::page_log::{self, ImageKind, PageImage};
use turnstile_storage::wal::{Lsn, WalReader};
use turnstile_storage::{BufferPool, BufferTag, Fork, RelFileId, Smgr, StorageError};

/// One change an unfinished transaction may have to take back.
#[derive(Debug)]
pub(crate) struct UndoStep {
    rel: RelFileId,
    block: u32,
    op: HeapOp,
    data: Vec<u8>,
}

/// What the redo pass found.
#[derive(Debug, Default)]
pub(crate) struct Redone {
    /// Where the log ends: the next record goes there.
    pub end: Lsn,
    /// Records read.
    pub records: u64,
    /// Page images applied.
    pub pages: u64,
    /// Per transaction without an end record, its changes in log order.
    pub pending: BTreeMap<Xid, Vec<UndoStep>>,
    /// Whether the server had not shut down cleanly (unlogged relations
    /// are emptied).
    pub crashed: bool,
    /// Each sequence's last logged state (`sequence_log.rs`).
    pub sequences: std::collections::HashMap<String, u64>,
}

/// Reads the log from where `control` says and redoes every change from
/// its redo point on into `pool` (which has no log attached yet).
/// `known`: the relations the catalog has (a change to a relation that is
/// not there was dropped later, and is skipped).
pub(crate) fn redo(
    wal_dir: &Path,
    io: Arc<dyn StorageIo>,
    control: Option<Control>,
    first: Lsn,
    pool: &BufferPool,
    smgr: &Smgr,
    known: &HashSet<RelFileId>,
) -> Result<Redone> {
    let start = control.map_or(first, |c| Lsn(c.start()));
    let redo_from = control.map_or(first.0, |c| c.redo);
    let mut reader = WalReader::new(wal_dir, io, start).map_err(StorageError::from)?;
    let mut out = Redone { end: start, ..Redone::default() };
    while let Some((lsn, end, header, data)) = reader.next().map_err(StorageError::from)? {
        out.records += 1;
        let replay = lsn.0 >= redo_from;
        match header.rmgr {
            RMGR_XACT => {
                out.pending.remove(&header.xid);
            }
            RMGR_SMGR if replay && header.info == SmgrOp::Truncate as u8 => {
                let (rel, fork, blocks) = records::decode_truncate(&data).ok_or_else(|| malformed(lsn))?;
                truncate_for_redo(pool, smgr, rel, fork, blocks)?;
            }
            RMGR_SMGR => {}
            RMGR_SEQ => {
                let (key, state) = records::decode_seq_log(&data).ok_or_else(|| malformed(lsn))?;
                out.sequences.insert(key, state);
            }
            _ => {
                let (pages, rest) = page_log::decode(&data).map_err(|_| malformed(lsn))?;
                if replay {
                    for img in &pages {
                        out.pages += u64::from(redo_image(pool, smgr, known, img, end.0)?);
                    }
                }
                let op = HeapOp::from_info(header.info).filter(|op| *op != HeapOp::Page);
                if let (RMGR_HEAP, Some(op), Some(img)) = (header.rmgr, op, pages.first()) {
                    if header.xid != 0 {
                        let step = UndoStep { rel: img.tag.rel, block: img.tag.block, op, data: rest.to_vec() };
                        out.pending.entry(header.xid).or_default().push(step);
                    }
                }
            }
        }
    }
    out.end = reader.end_lsn();
    Ok(out)
}

fn malformed(lsn: Lsn) -> EngineError {
    EngineError::Recovery(format!("malformed WAL record at {lsn}"))
}

/// Applies one page image; returns whether it changed the page.
fn redo_image(
    pool: &BufferPool,
    smgr: &Smgr,
    known: &HashSet<RelFileId>,
    img: &PageImage<'_>,
    end: u64,
) -> Result<bool> {
    let BufferTag { rel, fork, block } = img.tag;
    if !smgr.exists(rel, fork)? {
        if !known.contains(&rel) {
            return Ok(false);
        }
        smgr.create(rel, fork)?;
    }
    let n = smgr.nblocks(rel, fork)?;
    if block >= n {
        smgr.extend(rel, fork, block + 1 - n)?;
    }
    let buf = match pool.read_buffer(img.tag) {
        // A page torn by the crash: a whole image rebuilds it.
        Err(StorageError::Page(_)) if img.kind == ImageKind::Full => {
            let zero: Box<PageBuf> = Box::new([0; PAGE_SIZE]);
            smgr.write(rel, fork, block, &zero)?;
            pool.read_buffer(img.tag)?
        }
        other => other?,
    };
    let mut g = buf.lock_exclusive();
    let applied = page_log::redo_page(&mut g, img, end)
        .map_err(|e| EngineError::Recovery(format!("{e} (page {} of {rel})", img.tag.block)))?;
    if applied {
        g.mark_dirty();
    }
    Ok(applied)
}

fn truncate_for_redo(pool: &BufferPool, smgr: &Smgr, rel: RelFileId, fork: Fork, blocks: u32) -> Result<()> {
    pool.drop_relation_buffers(rel, fork, blocks)?;
    if smgr.exists(rel, fork)? && smgr.nblocks(rel, fork)? > blocks {
        smgr.truncate(rel, fork, blocks)?;
    }
    pool.fsm().truncate(rel, blocks);
    Ok(())
}

/// Takes back the changes of every transaction in `pending`, newest first,
/// through `pool` (whose log is attached: each step is logged), and logs
/// an abort record for each. Returns the transactions whose undo failed
/// (their ids must stay aborted for ever).
pub(crate) fn undo(
    pool: &BufferPool,
    smgr: &Smgr,
    log: &EngineLog,
    pending: BTreeMap<Xid, Vec<UndoStep>>,
) -> Result<Vec<Xid>> {
    let mut failed = Vec::new();
    for (xid, steps) in pending {
        let mut ok = true;
        for step in steps.iter().rev() {
            if !smgr.exists(step.rel, Fork::Main)? {
                continue;
            }
            if let Err(e) = undo_tuple(pool, step.rel, step.block, xid, step.op, &step.data) {
                crate::error::log_error(&format!("recovery: taking back a change of transaction {xid}"), &e.into());
                ok = false;
            }
        }
        if !ok {
            failed.push(xid);
        }
        log.abort(xid)?;
    }
    Ok(failed)
}
