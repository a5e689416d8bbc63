//! Older versions spilled to the heap, when the version store is full.
//!
//! An `UPDATE` that keeps a row's index keys and fits on its page rewrites
//! the tuple in place and keeps the replaced version in the in-memory
//! version store ([`crate::mvcc::versions`]). That store is bounded
//! (`txn.version_store_limit_bytes`). Past the limit — a snapshot held for
//! hours keeps every version since it began — the update writes a new tuple
//! version instead, as PostgreSQL does, and this engine writes it where it
//! costs the least: the **replaced** version goes to the heap as a
//! [`VERSION`] tuple (anywhere in the relation, never indexed), and the
//! row's tuple is still rewritten in place, marked [`SPILLED`], with `ctid`
//! pointing at that copy. Each copy's `ctid` points at the next older one
//! while it is [`SPILLED`] too; after the last, the chain goes on in the
//! version store. So memory stays bounded however long a snapshot lives,
//! the heap grows instead (the copies, which VACUUM removes once every
//! snapshot sees their replacer), and — unlike a new version of the row
//! itself — an update adds no index entry, so index scans of a hot row do
//! not grow longer with every update (PostgreSQL's HOT chains avoid the
//! same cost within a page).
//!
//! | who | what it does with [`SPILLED`] / [`VERSION`] |
//! |---|---|
//! | a reader that does not see the tuple's `xmin` | walks the copies, newest first, to the first whose `xmin` it sees ([`older_spilled`]), then the version store; each copy's `xmax` must be the `xmin` of the version it came from, else the chain was reclaimed and the row did not exist for the reader |
//! | scans, updaters, unique checks, index builds | skip [`VERSION`] tuples: they are not rows ([`crate::mvcc::visibility`]) |
//! | VACUUM | removes a copy once its replacer is aborted or seen by every snapshot |
//! | rollback of a spilled update | writes the copy back in place and marks it [`DEAD`] ([`restore_spilled`]) |
//! | an update that moves a spilled row (a key changed) | moves the copies' versions into the version store first ([`unspill`]): `ctid` then names the new place |
//!
//! A row once spilled keeps spilling (its chain must stay newest first),
//! until an update moves it. No function here holds two page locks at
//! once: a chain is walked page by page.

use super::{insert_with_header, HeapError, TupleHeader, DEAD, HAS_VERSIONS, SPILLED, TUPLE_HEADER, VERSION};
use crate::mvcc::{OldVersion, VersionStore, Visibility, Xid};
use crate::tid::Tid;
use turnstile_storage::page;
use turnstile_storage::rel::{BufferTag, Fork, RelFileId};
use turnstile_storage::{BufferPool, Extender, ExtensionLocker};

/// The version an in-place update displaces, when the version store had
/// no room for it ([`super::InPlace::StoreFull`]).
#[derive(Debug)]
pub struct Displaced {
    /// Its header.
    pub header: TupleHeader,
    /// Its row.
    pub row: Vec<u8>,
}

/// One link of a chain: the copy at a TID, if it is the one that `newer`
/// (an `xmin`) replaced.
fn link(pool: &BufferPool, rel: RelFileId, at: Tid, newer: Xid) -> Result<Option<(TupleHeader, Vec<u8>)>, HeapError> {
    let buf = pool.read_buffer(BufferTag::new(rel, Fork::Main, at.block))?;
    let content = buf.lock_shared();
    let Some(t) = page::item(&content, usize::from(at.slot)) else { return Ok(None) };
    let Some(h) = TupleHeader::read(t) else { return Ok(None) };
    if h.flags & VERSION == 0 || h.flags & DEAD != 0 || h.xmax != newer {
        return Ok(None);
    }
    Ok(Some((h, t[TUPLE_HEADER..].to_vec())))
}

/// Rewrites the row at `tid` in place with `row`, written by `xid`, after
/// copying the version it replaces (`old`) to the heap as a [`VERSION`]
/// tuple. Returns `false`, leaving the row alone, when the page has no room
/// for the new row: the caller moves the row. A tuple without
/// [`HAS_VERSIONS`] has no chain: the caller first forgets any chain an
/// earlier tuple at `tid` left in the version store.
pub fn update_spilling<L: ExtensionLocker>(
    pool: &BufferPool,
    ext: &mut Extender<'_, L>,
    rel: RelFileId,
    tid: Tid,
    row: &[u8],
    xid: Xid,
    old: &Displaced,
) -> Result<bool, HeapError> {
    let spilled = old.header.flags & SPILLED != 0;
    let copy = TupleHeader {
        flags: VERSION | if spilled { SPILLED } else { 0 },
        xmin: old.header.xmin,
        xmax: xid,
        ctid: if spilled { old.header.ctid } else { Tid::default() },
    };
    let at = insert_with_header(pool, ext, rel, &copy, &old.row, 0)?;
    let buf = pool.read_buffer(BufferTag::new(rel, Fork::Main, tid.block))?;
    let mut content = buf.lock_exclusive();
    let slot = usize::from(tid.slot);
    // The caller holds the row's write lock: the tuple is as it was read.
    let before = page::item(&content, slot).map(<[u8]>::to_vec).unwrap_or_default();
    let same = TupleHeader::read(&before).is_some_and(|h| h == old.header);
    let header = TupleHeader { flags: HAS_VERSIONS | SPILLED, xmin: xid, xmax: 0, ctid: at };
    if same {
        content.begin_change();
    }
    if !same || !page::replace_item(&mut content, slot, &super::make_tuple(&header, row)) {
        drop(content);
        super::mark_dead(pool, rel, at)?;
        if !same {
            return Err(HeapError::NoSuchTuple { rel, tid });
        }
        return Ok(false);
    }
    super::log::log_tuple(pool, &mut content, xid, slot, &before)?;
    Ok(true)
}

/// The newest older version of the row at `tid` that `vis` sees, walking
/// the spilled copies from `head` (the tuple's `ctid`; the tuple's own
/// `xmin` is `xmin`), then the version store. `None`: the row did not
/// exist for the reader. Call it without the row's page lock.
pub fn older_spilled(
    pool: &BufferPool,
    rel: RelFileId,
    tid: Tid,
    head: Tid,
    xmin: Xid,
    vis: &Visibility<'_>,
) -> Result<Option<Vec<u8>>, HeapError> {
    let (mut at, mut newer) = (head, xmin);
    loop {
        let Some((h, row)) = link(pool, rel, at, newer)? else { return Ok(None) };
        if vis.sees(h.xmin) {
            return Ok(Some(row));
        }
        if h.flags & SPILLED == 0 {
            break;
        }
        (at, newer) = (h.ctid, h.xmin);
    }
    // A spilled row never pushes to its chain in the store: reading it
    // without the page lock is safe.
    Ok(vis.versions.find(rel, tid, |x| vis.sees(x)).map(|r| r.to_vec()))
}

/// Takes back `xid`'s spilled in-place update of the row at `tid`: the
/// copy at the tuple's `ctid` is written back in place and marked
/// [`DEAD`]. Returns `false` if the tuple is not `xid`'s spilled version or
/// the copy no longer fits on the page (the update then stays).
pub fn restore_spilled(pool: &BufferPool, rel: RelFileId, tid: Tid, xid: Xid) -> Result<bool, HeapError> {
    let Some(current) = super::latest_header(pool, rel, tid)? else { return Ok(false) };
    if current.xmin != xid || current.flags & SPILLED == 0 {
        return Ok(false);
    }
    let Some((copy, row)) = link(pool, rel, current.ctid, xid)? else { return Ok(false) };
    let header = TupleHeader {
        flags: HAS_VERSIONS | (copy.flags & SPILLED),
        xmin: copy.xmin,
        xmax: 0,
        ctid: if copy.flags & SPILLED != 0 { copy.ctid } else { Tid::default() },
    };
    let buf = pool.read_buffer(BufferTag::new(rel, Fork::Main, tid.block))?;
    let mut content = buf.lock_exclusive();
    let slot = usize::from(tid.slot);
    let before = page::item(&content, slot).map(<[u8]>::to_vec).unwrap_or_default();
    if TupleHeader::read(&before) != Some(current) {
        return Ok(false);
    }
    content.begin_change();
    if !page::replace_item(&mut content, slot, &super::make_tuple(&header, &row)) {
        return Ok(false);
    }
    super::log::log_tuple(pool, &mut content, xid, slot, &before)?;
    drop(content);
    super::mark_dead(pool, rel, current.ctid)?;
    Ok(true)
}

/// Before an update moves the row at `tid` (header `h`) to a new tuple:
/// its spilled versions go to the version store (beyond its limit: the
/// move needs `ctid` for the new place), newest at the head, and the tuple
/// is no longer [`SPILLED`]. The copies stay until VACUUM removes them.
pub fn unspill(
    pool: &BufferPool,
    rel: RelFileId,
    tid: Tid,
    h: &TupleHeader,
    versions: &VersionStore,
) -> Result<(), HeapError> {
    if h.flags & SPILLED == 0 {
        return Ok(());
    }
    let mut chain = Vec::new();
    let (mut at, mut newer) = (h.ctid, h.xmin);
    while let Some((c, row)) = link(pool, rel, at, newer)? {
        chain.push(OldVersion { xmin: c.xmin, replaced_by: c.xmax, row: row.into() });
        if c.flags & SPILLED == 0 {
            break;
        }
        (at, newer) = (c.ctid, c.xmin);
    }
    for v in chain.into_iter().rev() {
        versions.push(rel, tid, v, None, false);
    }
    super::change_header(pool, rel, tid, |h| {
        h.flags &= !SPILLED;
        h.ctid = Tid::default();
    })
}
