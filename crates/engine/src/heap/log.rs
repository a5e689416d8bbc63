//! The heap's write-ahead log records ([`turnstile_storage::page_log`]
//! carries the pages; this module the heap's own data in each record).
//!
//! Every change of a heap page is one record of resource manager
//! [`RMGR_HEAP`] whose page image redoes it. A change of one tuple made
//! for a transaction also carries what recovery needs to take it back if
//! that transaction never commits:
//!
//! | `info` | change | data after the page image |
//! |---|---|---|
//! | [`HeapOp::Insert`] | a tuple added | `slot u16` |
//! | [`HeapOp::Header`] | a tuple's header changed (`xmax`, `DEAD`, `ctid`) | `slot u16`, the header as it was |
//! | [`HeapOp::Tuple`] | a tuple rewritten (in place, restored) | `slot u16`, the whole tuple as it was |
//! | [`HeapOp::Page`] | anything else (VACUUM's pruning, a new page) | none: never taken back |
//!
//! Undo (recovery, [`undo_tuple`]) walks an unfinished transaction's
//! records newest first and puts each tuple back as it was: an inserted
//! tuple becomes [`super::DEAD`], a rewritten one gets its old bytes. Row
//! locks keep every other transaction off those tuples until the
//! transaction ends, so the old bytes are still the right ones; an undo
//! step is itself logged (with the same transaction id), and taking the
//! steps back in the same reverse order on a second crash ends in the same
//! state.

use super::tuple::{TupleHeader, DEAD, TUPLE_HEADER};
use super::HeapError;
use crate::mvcc::Xid;
use crate::tid::Tid;
use turnstile_storage::page;
use turnstile_storage::page_log::RecordKind;
use turnstile_storage::rel::{BufferTag, Fork, RelFileId};
use turnstile_storage::{BufferPool, PageWriteGuard};

/// The heap's resource-manager id in WAL records.
pub const RMGR_HEAP: u8 = 1;

/// What a heap record did (its `info`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum HeapOp {
    /// A tuple added at a slot.
    Insert = 1,
    /// A tuple rewritten; its old bytes follow.
    Tuple = 2,
    /// A page change no transaction takes back.
    Page = 3,
    /// A tuple's header changed; its old header follows.
    Header = 4,
}

impl HeapOp {
    /// The op of a record's `info`.
    pub fn from_info(info: u8) -> Option<HeapOp> {
        [HeapOp::Insert, HeapOp::Tuple, HeapOp::Page, HeapOp::Header].into_iter().find(|op| *op as u8 == info)
    }
}

/// Logs the insert of the tuple at `slot` (begun with `begin_change`).
pub(crate) fn log_insert(
    pool: &BufferPool,
    g: &mut PageWriteGuard<'_>,
    xid: Xid,
    slot: usize,
) -> Result<(), HeapError> {
    let kind = RecordKind { xid, rmgr: RMGR_HEAP, info: HeapOp::Insert as u8 };
    pool.log_change(kind, &mut [g], &(slot as u16).to_le_bytes())?;
    Ok(())
}

/// Logs the rewrite of the tuple at `slot` for `xid`, whose bytes were
/// `before`.
pub(crate) fn log_tuple(
    pool: &BufferPool,
    g: &mut PageWriteGuard<'_>,
    xid: Xid,
    slot: usize,
    before: &[u8],
) -> Result<(), HeapError> {
    log_before(pool, g, RecordKind { xid, rmgr: RMGR_HEAP, info: HeapOp::Tuple as u8 }, slot, before)
}

/// Logs the change of the header of the tuple at `slot` for `xid`; it was
/// `before`.
pub(crate) fn log_header(
    pool: &BufferPool,
    g: &mut PageWriteGuard<'_>,
    xid: Xid,
    slot: usize,
    before: &[u8; TUPLE_HEADER],
) -> Result<(), HeapError> {
    log_before(pool, g, RecordKind { xid, rmgr: RMGR_HEAP, info: HeapOp::Header as u8 }, slot, before)
}

fn log_before(
    pool: &BufferPool,
    g: &mut PageWriteGuard<'_>,
    kind: RecordKind,
    slot: usize,
    before: &[u8],
) -> Result<(), HeapError> {
    if pool.redo_log().is_none() {
        g.mark_dirty();
        return Ok(());
    }
    let mut data = Vec::with_capacity(2 + before.len());
    data.extend_from_slice(&(slot as u16).to_le_bytes());
    data.extend_from_slice(before);
    pool.log_change(kind, &mut [g], &data)?;
    Ok(())
}

/// Logs a page change no transaction takes back.
pub(crate) fn log_page(pool: &BufferPool, g: &mut PageWriteGuard<'_>) -> Result<(), HeapError> {
    let kind = RecordKind { xid: 0, rmgr: RMGR_HEAP, info: HeapOp::Page as u8 };
    pool.log_change(kind, &mut [g], &[])?;
    Ok(())
}

/// Takes back one heap change of an unfinished transaction (recovery):
/// `op` and `data` are the record's, `block` its page's. Logged as a
/// change of `xid`.
pub fn undo_tuple(
    pool: &BufferPool,
    rel: RelFileId,
    block: u32,
    xid: Xid,
    op: HeapOp,
    data: &[u8],
) -> Result<(), HeapError> {
    let Some(slot) = data.get(..2).map(|s| u16::from_le_bytes([s[0], s[1]])) else { return Ok(()) };
    let tid = Tid::new(block, slot);
    let buf = pool.read_buffer(BufferTag::new(rel, Fork::Main, block))?;
    let mut g = buf.lock_exclusive();
    g.begin_change();
    let current = page::item(&g, usize::from(slot)).filter(|t| TupleHeader::read(t).is_some());
    let Some(current) = current.map(<[u8]>::to_vec) else { return Err(HeapError::NoSuchTuple { rel, tid }) };
    match op {
        HeapOp::Insert => {
            let item = page::item_mut(&mut g, usize::from(slot)).expect("read above");
            let mut h = TupleHeader::read(item).expect("read above");
            h.flags |= DEAD;
            h.write(item);
        }
        HeapOp::Tuple => {
            if !page::replace_item(&mut g, usize::from(slot), &data[2..]) {
                return Err(HeapError::NoSuchTuple { rel, tid });
            }
        }
        HeapOp::Header => {
            let item = page::item_mut(&mut g, usize::from(slot)).expect("read above");
            match (item.get_mut(..TUPLE_HEADER), data.get(2..2 + TUPLE_HEADER)) {
                (Some(to), Some(from)) => to.copy_from_slice(from),
                _ => return Err(HeapError::NoSuchTuple { rel, tid }),
            }
        }
        HeapOp::Page => return Ok(()),
    }
    log_tuple(pool, &mut g, xid, usize::from(slot), &current)
}
