//! The heap: a table's rows on slotted 8 kB pages.
//!
//! A heap page is the storage crate's generic page (line pointers growing
//! up, tuples growing down, no special space); a tuple is a 15-byte header
//! ([`tuple`]: flags, `xmin`, `xmax`, `ctid`) followed by one encoded row
//! ([`crate::types::encode_row`]). Which version of a row a reader sees is
//! decided by [`crate::mvcc::visibility::seen`] under the page's content lock ([`crate::mvcc`]).
//!
//! An update either rewrites the tuple where it is ([`update_in_place`]:
//! the TID and index entries stay, the replaced version goes to the version
//! store) or, when keys change or the page is full, inserts the new version
//! elsewhere and sets the old one's `xmax` and `ctid` (`crate::dml`). A
//! delete sets `xmax`. VACUUM (`crate::vacuum`) removes tuples no snapshot
//! can see: their line pointers become unused (length 0, reused by later
//! inserts) and the page is compacted.
//!
//! `fillfactor` ([`fillfactor_reserve`]): an insert leaves that share of a
//! page free, unless the page is empty.
//!
//! # What protects what
//!
//! * A page's bytes: its buffer's content lock — shared to read tuples,
//!   exclusive to add one or change one in place. One content lock at a
//!   time; none is held while waiting for the relation-extension lock.
//!   A tuple's version chain is changed only under the exclusive lock of
//!   its page ([`crate::mvcc::versions`]).
//! * Which page an inserter uses: the free-space map hands a page to one
//!   inserter at a time ([`turnstile_storage::fsm::FreeSpaceMap::claim`]
//!   removes it); the inserter records what is left when it is done, so two
//!   inserters never race for the last bytes of one page.
//! * The relation's length: the relation-extension lock, inside
//!   [`Extender`] (`storage.extend` picks `classic` or `bulk`).
//!
//! A sequential scan reads a page's visible versions under a shared lock
//! into a local batch and releases the lock before returning them
//! (PostgreSQL's page-at-a-time mode), so a slow consumer never blocks
//! inserters.

pub mod log;
pub mod spill;
pub mod tuple;

use crate::mvcc::visibility;
pub use crate::mvcc::visibility::{seen, Seen};
use crate::mvcc::{Horizon, OldVersion, Snapshots, VersionStore, Visibility, Xid};
use crate::tid::Tid;
use crate::types::{encode_row, fixed_column_span, CodecError, ColumnType, Value};
use std::sync::Arc;
pub use tuple::{make_tuple, TupleHeader, DEAD, HAS_VERSIONS, MOVED, SPILLED, TUPLE_HEADER, VERSION};
use turnstile_storage::page::{self, MAX_ITEM_SIZE};
use turnstile_storage::rel::{BufferTag, Fork, RelFileId};
use turnstile_storage::{BufferPool, Extender, ExtensionLocker, PinnedBuffer, StorageError};

/// The largest encoded row a page holds.
pub const MAX_ROW_SIZE: usize = MAX_ITEM_SIZE - TUPLE_HEADER;

/// The row of a tuple that is not [`DEAD`] (whatever its `xmax`).
fn undead_row(tuple: &[u8]) -> Option<&[u8]> {
    match TupleHeader::read(tuple) {
        Some(h) if !h.is_dead() => Some(&tuple[TUPLE_HEADER..]),
        _ => None,
    }
}

/// A heap operation that failed; nothing was changed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HeapError {
    /// The storage layer failed (I/O, checksum, all buffers pinned…).
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// A row could not be encoded or a stored tuple decoded.
    #[error(transparent)]
    Codec(#[from] CodecError),
    /// A row too large for one page.
    #[error("row of {size} bytes does not fit on a page (at most {MAX_ROW_SIZE})")]
    TupleTooLarge {
        /// Encoded size.
        size: usize,
    },
    /// No tuple at this address.
    #[error("no tuple at {tid} in relation {rel}")]
    NoSuchTuple {
        /// The relation.
        rel: RelFileId,
        /// The address.
        tid: Tid,
    },
}

/// Inserts one encoded row, written by transaction `xmin`, into `rel`, using a page from the free-space
/// map or a new one from relation extension. `pool` is the pool `ext`
/// extends through.
pub fn insert<L: ExtensionLocker>(
    pool: &BufferPool,
    ext: &mut Extender<'_, L>,
    rel: RelFileId,
    row: &[u8],
    xmin: Xid,
) -> Result<Tid, HeapError> {
    insert_reserving(pool, ext, rel, row, xmin, 0)
}

/// Bytes a heap page keeps free for updates under `fillfactor` percent
/// (PostgreSQL's `RelationGetTargetPageFreeSpace`); 0 for 100 or none.
pub fn fillfactor_reserve(fillfactor: Option<u8>) -> usize {
    fillfactor.map_or(0, |ff| page::PAGE_SIZE * usize::from(100 - ff.clamp(10, 100)) / 100)
}

/// As [`insert`], leaving at least `reserve` bytes free on a page that
/// already holds tuples ([`fillfactor_reserve`]); an empty page takes the
/// row regardless, as in PostgreSQL.
pub fn insert_reserving<L: ExtensionLocker>(
    pool: &BufferPool,
    ext: &mut Extender<'_, L>,
    rel: RelFileId,
    row: &[u8],
    xmin: Xid,
    reserve: usize,
) -> Result<Tid, HeapError> {
    insert_with_header(pool, ext, rel, &TupleHeader::new(xmin), row, reserve)
}

/// As [`insert_reserving`], with the whole header given.
pub(crate) fn insert_with_header<L: ExtensionLocker>(
    pool: &BufferPool,
    ext: &mut Extender<'_, L>,
    rel: RelFileId,
    header: &TupleHeader,
    row: &[u8],
    reserve: usize,
) -> Result<Tid, HeapError> {
    if row.len() > MAX_ROW_SIZE {
        return Err(HeapError::TupleTooLarge { size: row.len() });
    }
    let tuple = &make_tuple(header, row);
    let want = (tuple.len() + page::ITEM_ID_SIZE + reserve).min(MAX_ROW_SIZE + TUPLE_HEADER + page::ITEM_ID_SIZE);
    loop {
        let buf = ext.get_page(rel, want)?;
        if let Some(tid) = place(pool, rel, &buf, tuple, header.xmin, reserve)? {
            return Ok(tid);
        }
    }
}

/// Whether `tuple` may go on `content` leaving `reserve` bytes free.
fn room_for(content: &page::PageBuf, tuple: &[u8], reserve: usize) -> bool {
    reserve == 0 || page::item_count(content) == 0 || page::free_space(content) >= tuple.len() + reserve
}

/// Adds `tuple` (of transaction `xid`) to the pinned page and records the
/// space left; `None` if it no longer fits (the page's space is recorded,
/// so it is not offered again for this size).
fn place(
    pool: &BufferPool,
    rel: RelFileId,
    buf: &PinnedBuffer<'_>,
    tuple: &[u8],
    xid: Xid,
    reserve: usize,
) -> Result<Option<Tid>, HeapError> {
    let mut content = buf.lock_exclusive();
    let slot = add_logged(pool, &mut content, tuple, xid, reserve)?;
    let free = page::free_space(&content);
    drop(content);
    pool.fsm().record(rel, buf.block(), free);
    Ok(slot.map(|s| Tid::new(buf.block(), s as u16)))
}

/// Adds `tuple` to the locked page if it fits leaving `reserve` bytes, and
/// logs it: the slot, or `None` (nothing changed).
fn add_logged(
    pool: &BufferPool,
    content: &mut turnstile_storage::PageWriteGuard<'_>,
    tuple: &[u8],
    xid: Xid,
    reserve: usize,
) -> Result<Option<usize>, HeapError> {
    if !room_for(content, tuple, reserve) {
        return Ok(None);
    }
    content.begin_change();
    let Some(slot) = page::add_item_reusing(content, tuple) else { return Ok(None) };
    log::log_insert(pool, content, xid, slot)?;
    Ok(Some(slot))
}

/// Many inserts into one relation by one backend (COPY): keeps the current
/// page pinned until it is full, as PostgreSQL's `BulkInsertState` does.
#[derive(Debug)]
pub struct BulkInserter<'p> {
    pool: &'p BufferPool,
    rel: RelFileId,
    current: Option<PinnedBuffer<'p>>,
    reserve: usize,
    xmin: Xid,
}

impl<'p> BulkInserter<'p> {
    /// A bulk inserter into `rel` of `pool` for transaction `xmin`.
    pub fn new(pool: &'p BufferPool, rel: RelFileId, xmin: Xid) -> BulkInserter<'p> {
        BulkInserter { pool, rel, current: None, reserve: 0, xmin }
    }

    /// Leaves `reserve` bytes free on each page ([`fillfactor_reserve`]).
    pub fn with_reserve(mut self, reserve: usize) -> BulkInserter<'p> {
        self.reserve = reserve;
        self
    }

    /// Inserts one encoded row.
    pub fn insert<L: ExtensionLocker>(&mut self, ext: &mut Extender<'p, L>, row: &[u8]) -> Result<Tid, HeapError> {
        if row.len() > MAX_ROW_SIZE {
            return Err(HeapError::TupleTooLarge { size: row.len() });
        }
        let tuple = &make_tuple(&TupleHeader::new(self.xmin), row);
        if let Some(buf) = &self.current {
            let mut content = buf.lock_exclusive();
            if let Some(slot) = add_logged(self.pool, &mut content, tuple, self.xmin, self.reserve)? {
                return Ok(Tid::new(buf.block(), slot as u16));
            }
        }
        self.finish_page();
        loop {
            let want =
                (tuple.len() + page::ITEM_ID_SIZE + self.reserve).min(MAX_ROW_SIZE + TUPLE_HEADER + page::ITEM_ID_SIZE);
            let buf = ext.get_page(self.rel, want)?;
            let placed = add_logged(self.pool, &mut buf.lock_exclusive(), tuple, self.xmin, self.reserve)?;
            let block = buf.block();
            self.current = Some(buf);
            match placed {
                Some(slot) => return Ok(Tid::new(block, slot as u16)),
                None => self.finish_page(),
            }
        }
    }

    /// Records the current page's free space and unpins it.
    fn finish_page(&mut self) {
        if let Some(buf) = self.current.take() {
            let free = page::free_space(&buf.lock_shared());
            self.pool.fsm().record(self.rel, buf.block(), free);
        }
    }
}

impl Drop for BulkInserter<'_> {
    fn drop(&mut self) {
        self.finish_page();
    }
}

/// The row at `tid`, copied out: the tuple's own version, whatever its
/// `xmax` (a [`DEAD`] tuple is not there).
pub fn fetch(pool: &BufferPool, rel: RelFileId, tid: Tid) -> Result<Vec<u8>, HeapError> {
    let buf = pool.read_buffer(BufferTag::new(rel, Fork::Main, tid.block))?;
    let content = buf.lock_shared();
    let row = page::item(&content, usize::from(tid.slot)).and_then(undead_row);
    Ok(row.ok_or(HeapError::NoSuchTuple { rel, tid })?.to_vec())
}

/// The tuple at `tid` as it is now, header and row (also a [`DEAD`] one).
pub fn latest(pool: &BufferPool, rel: RelFileId, tid: Tid) -> Result<(TupleHeader, Vec<u8>), HeapError> {
    let buf = pool.read_buffer(BufferTag::new(rel, Fork::Main, tid.block))?;
    let content = buf.lock_shared();
    let tuple = page::item(&content, usize::from(tid.slot)).filter(|t| t.len() >= TUPLE_HEADER);
    let tuple = tuple.ok_or(HeapError::NoSuchTuple { rel, tid })?;
    let header = TupleHeader::read(tuple).ok_or(HeapError::NoSuchTuple { rel, tid })?;
    Ok((header, tuple[TUPLE_HEADER..].to_vec()))
}

/// The header of the tuple at `tid` (its newest version), or `None` if
/// there is none: a unique check's look at the heap. Only a storage fault
/// fails it.
pub fn latest_header(pool: &BufferPool, rel: RelFileId, tid: Tid) -> Result<Option<TupleHeader>, StorageError> {
    let buf = pool.read_buffer(BufferTag::new(rel, Fork::Main, tid.block))?;
    let content = buf.lock_shared();
    Ok(page::item(&content, usize::from(tid.slot)).and_then(TupleHeader::read))
}

/// Calls `f` with the version of the row at `tid` that `vis` sees, while
/// its page is share-locked (no copy); `Ok(None)` if it sees none.
pub fn with_visible<R>(
    pool: &BufferPool,
    rel: RelFileId,
    tid: Tid,
    vis: &Visibility<'_>,
    f: impl FnOnce(&[u8]) -> R,
) -> Result<Option<R>, HeapError> {
    let buf = pool.read_buffer(BufferTag::new(rel, Fork::Main, tid.block))?;
    let content = buf.lock_shared();
    let Some(tuple) = page::item(&content, usize::from(tid.slot)) else { return Ok(None) };
    let (head, xmin) = match seen(tuple, rel, tid, vis) {
        Seen::Spilled { head, xmin } => (head, xmin),
        other => return Ok(other.row().map(f)),
    };
    drop(content);
    Ok(spill::older_spilled(pool, rel, tid, head, xmin, vis)?.map(|row| f(&row)))
}

/// Changes the header of the tuple at `tid` under its page's exclusive lock.
pub(crate) fn change_header(
    pool: &BufferPool,
    rel: RelFileId,
    tid: Tid,
    change: impl FnOnce(&mut TupleHeader),
) -> Result<(), HeapError> {
    let buf = pool.read_buffer(BufferTag::new(rel, Fork::Main, tid.block))?;
    let mut content = buf.lock_exclusive();
    let slot = usize::from(tid.slot);
    let tuple = page::item(&content, slot).filter(|t| t.len() >= TUPLE_HEADER);
    let old = TupleHeader::read(tuple.ok_or(HeapError::NoSuchTuple { rel, tid })?)
        .ok_or(HeapError::NoSuchTuple { rel, tid })?;
    let mut h = old;
    change(&mut h);
    // The transaction the change is made for: the new deleter, the one
    // whose delete is taken back, or the inserter whose row dies.
    let xid = [h.xmax, old.xmax, h.xmin].into_iter().find(|&x| x != 0).unwrap_or(0);
    let mut before = [0; TUPLE_HEADER];
    old.write(&mut before);
    content.begin_change();
    h.write(page::item_mut(&mut content, slot).expect("read above"));
    log::log_header(pool, &mut content, xid, slot, &before)
}

/// Marks the tuple at `tid` [`DEAD`]: its insert failed or was rolled back.
pub fn mark_dead(pool: &BufferPool, rel: RelFileId, tid: Tid) -> Result<(), HeapError> {
    change_header(pool, rel, tid, |h| h.flags |= DEAD)
}

/// Sets the tuple's `xmax` (a delete, or with `moved_to` an update that
/// wrote the next version there); `xmax == 0` takes either back.
pub fn set_xmax(
    pool: &BufferPool,
    rel: RelFileId,
    tid: Tid,
    xmax: Xid,
    moved_to: Option<Tid>,
) -> Result<(), HeapError> {
    change_header(pool, rel, tid, |h| {
        h.xmax = xmax;
        match moved_to {
            // A spilled row was unspilled first ([`spill::unspill`]).
            Some(to) if xmax != 0 => {
                h.flags = (h.flags | MOVED) & !SPILLED;
                h.ctid = to;
            }
            _ if h.flags & MOVED != 0 => {
                h.flags &= !MOVED;
                h.ctid = Tid::default();
            }
            // A delete keeps a spilled row's chain.
            _ => {}
        }
    })
}

/// The version store and horizon an in-place update prunes with.
#[derive(Clone, Copy, Debug)]
pub struct VersionSink<'a> {
    /// The snapshot protocol and transaction status.
    pub snapshots: &'a Snapshots,
    /// Where replaced versions go.
    pub versions: &'a VersionStore,
    /// The last horizon computed (the pushed-to chain is pruned at it).
    pub horizon: Option<Horizon>,
}

/// What [`update_in_place`] did.
#[derive(Debug)]
pub enum InPlace {
    /// The row was rewritten in place; the replaced version is in the store.
    Done,
    /// The page has no room for the new row: the caller moves the row.
    NoRoom,
    /// The version store is at its limit (or the row's older versions are
    /// in the heap already): nothing changed; the caller spills the
    /// displaced version ([`spill::update_spilling`]).
    StoreFull(spill::Displaced),
}

/// Replaces the row at `tid` with `row`, written by `xid`, on its page,
/// keeping its TID (the row may grow into the page's free space); the
/// replaced version goes to the version store.
pub fn update_in_place(
    pool: &BufferPool,
    rel: RelFileId,
    tid: Tid,
    row: &[u8],
    xid: Xid,
    sink: VersionSink<'_>,
) -> Result<InPlace, HeapError> {
    if row.len() > MAX_ROW_SIZE {
        return Err(HeapError::TupleTooLarge { size: row.len() });
    }
    let buf = pool.read_buffer(BufferTag::new(rel, Fork::Main, tid.block))?;
    let mut content = buf.lock_exclusive();
    let slot = usize::from(tid.slot);
    let old = page::item(&content, slot).filter(|t| t.len() >= TUPLE_HEADER);
    let old = old.ok_or(HeapError::NoSuchTuple { rel, tid })?;
    let old_header = TupleHeader::read(old).ok_or(HeapError::NoSuchTuple { rel, tid })?;
    if old_header.is_dead() {
        return Err(HeapError::NoSuchTuple { rel, tid });
    }
    if old_header.flags & SPILLED != 0 || !sink.versions.admit(old.len() - TUPLE_HEADER) {
        sink.versions.note_fallback();
        return Ok(InPlace::StoreFull(spill::Displaced { header: old_header, row: old[TUPLE_HEADER..].to_vec() }));
    }
    let old_tuple = old.to_vec();
    let old_row: Arc<[u8]> = Arc::from(&old[TUPLE_HEADER..]);
    let header = TupleHeader { flags: HAS_VERSIONS, xmin: xid, xmax: 0, ctid: Tid::default() };
    content.begin_change();
    if !page::replace_item(&mut content, slot, &make_tuple(&header, row)) {
        return Ok(InPlace::NoRoom);
    }
    log::log_tuple(pool, &mut content, xid, slot, &old_tuple)?;
    let old = OldVersion { xmin: old_header.xmin, replaced_by: xid, row: old_row };
    let fresh = old_header.flags & HAS_VERSIONS == 0;
    sink.versions.push(rel, tid, old, sink.horizon.map(|h| (sink.snapshots, h)), fresh);
    Ok(InPlace::Done)
}

/// Takes back `xid`'s in-place update of the row at `tid`: the version it
/// replaced is written back. Returns `false` if that version is not there
/// or no longer fits on the page (the update then stays).
pub fn restore_in_place(
    pool: &BufferPool,
    rel: RelFileId,
    tid: Tid,
    xid: Xid,
    versions: &VersionStore,
) -> Result<bool, HeapError> {
    let buf = pool.read_buffer(BufferTag::new(rel, Fork::Main, tid.block))?;
    let mut content = buf.lock_exclusive();
    let slot = usize::from(tid.slot);
    match page::item(&content, slot).and_then(TupleHeader::read) {
        Some(h) if h.xmin == xid && h.flags & SPILLED != 0 => {
            // The replaced version is in the heap: restored page by page.
            drop(content);
            return spill::restore_spilled(pool, rel, tid, xid);
        }
        Some(h) if h.xmin == xid => {}
        _ => return Ok(false),
    }
    let Some(old) = versions.pop(rel, tid, xid) else { return Ok(false) };
    let header = TupleHeader { flags: HAS_VERSIONS, xmin: old.xmin, xmax: 0, ctid: Tid::default() };
    let current = page::item(&content, slot).map(<[u8]>::to_vec).unwrap_or_default();
    content.begin_change();
    if !page::replace_item(&mut content, slot, &make_tuple(&header, &old.row)) {
        versions.push(rel, tid, old, None, false);
        return Ok(false);
    }
    log::log_tuple(pool, &mut content, xid, slot, &current)?;
    Ok(true)
}

/// Sets fixed-size column `column` of the tuple at `tid` to `value` in
/// place (the row keeps its size: `UPDATE … SET aid_parent = aid`). A NULL
/// stored value or a NULL `value` cannot be updated in place.
pub fn update_fixed_column(
    pool: &BufferPool,
    rel: RelFileId,
    tid: Tid,
    types: &[ColumnType],
    column: usize,
    value: &Value,
) -> Result<(), HeapError> {
    let ty = *types.get(column).ok_or(CodecError::Arity { expected: types.len(), got: column + 1 })?;
    let type_error = || CodecError::Type { column, value: value.to_string(), ty };
    let bytes: Vec<u8> = crate::types::fixed_bytes(ty, value).ok_or_else(type_error)?;
    let buf = pool.read_buffer(BufferTag::new(rel, Fork::Main, tid.block))?;
    let mut content = buf.lock_exclusive();
    let slot = usize::from(tid.slot);
    let before = page::item(&content, slot).map(<[u8]>::to_vec);
    let header = before.as_deref().and_then(TupleHeader::read).filter(|h| !h.is_dead());
    let (Some(before), Some(header)) = (before, header) else { return Err(HeapError::NoSuchTuple { rel, tid }) };
    let (at, size) = fixed_column_span(types, &before[TUPLE_HEADER..], column)?.ok_or_else(type_error)?;
    debug_assert_eq!(size, bytes.len());
    content.begin_change();
    let row = &mut page::item_mut(&mut content, slot).expect("read above")[TUPLE_HEADER..];
    row[at..at + size].copy_from_slice(&bytes);
    log::log_tuple(pool, &mut content, header.xmin, slot, &before)
}

/// A sequential scan: in block and slot order, page at a time, the version
/// of each row a snapshot sees ([`HeapScan::visible`]) or every tuple not
/// [`DEAD`] as it is now ([`HeapScan::new`]: index builds, maintenance).
/// Blocks added after the scan started are not visited (the scan reads the
/// relation's length once, as PostgreSQL's `heapgetpage` does).
#[derive(Debug)]
pub struct HeapScan<'p> {
    pool: &'p BufferPool,
    rel: RelFileId,
    vis: Option<Visibility<'p>>,
    current: Option<&'p Snapshots>,
    next_block: u32,
    nblocks: u32,
    batch: Vec<(Tid, Vec<u8>)>,
    pos: usize,
}

impl<'p> HeapScan<'p> {
    /// Starts a scan of every tuple of `rel` not marked [`DEAD`].
    pub fn new(pool: &'p BufferPool, rel: RelFileId) -> Result<HeapScan<'p>, HeapError> {
        let nblocks = pool.store().nblocks(rel, Fork::Main)?;
        Ok(HeapScan { pool, rel, vis: None, current: None, next_block: 0, nblocks, batch: Vec::new(), pos: 0 })
    }

    /// Starts a scan of the newest version of each row of `rel` that is not
    /// deleted by a committed transaction (index builds, DDL checks: what
    /// PostgreSQL's `SnapshotAny` scans keep after pruning).
    pub fn current(pool: &'p BufferPool, rel: RelFileId, snapshots: &'p Snapshots) -> Result<HeapScan<'p>, HeapError> {
        let mut scan = HeapScan::new(pool, rel)?;
        scan.current = Some(snapshots);
        Ok(scan)
    }

    /// Starts a scan of the versions of `rel`'s rows that `vis` sees.
    pub fn visible(pool: &'p BufferPool, rel: RelFileId, vis: Visibility<'p>) -> Result<HeapScan<'p>, HeapError> {
        let mut scan = HeapScan::new(pool, rel)?;
        scan.vis = Some(vis);
        Ok(scan)
    }

    fn load_next_page(&mut self) -> Result<bool, HeapError> {
        self.batch.clear();
        self.pos = 0;
        while self.next_block < self.nblocks {
            let block = self.next_block;
            self.next_block += 1;
            let buf = self.pool.read_buffer(BufferTag::new(self.rel, Fork::Main, block))?;
            let content = buf.lock_shared();
            if page::is_new(&content) {
                continue;
            }
            let mut spilled = Vec::new();
            for slot in 0..page::item_count(&content) {
                let Some(tuple) = page::item(&content, slot) else { continue };
                let tid = Tid::new(block, slot as u16);
                match &self.vis {
                    None => {
                        let wanted = |h: TupleHeader| match self.current {
                            Some(s) => visibility::for_build(s, &h),
                            None => !h.is_dead() && h.flags & VERSION == 0,
                        };
                        if TupleHeader::read(tuple).is_some_and(wanted) {
                            self.batch.push((tid, tuple[TUPLE_HEADER..].to_vec()));
                        }
                    }
                    Some(vis) => match visibility::seen(tuple, self.rel, tid, vis) {
                        Seen::Spilled { head, xmin } => {
                            spilled.push((self.batch.len(), head, xmin));
                            self.batch.push((tid, Vec::new()));
                        }
                        other => {
                            if let Some(row) = other.row() {
                                self.batch.push((tid, row.to_vec()));
                            }
                        }
                    },
                }
            }
            drop(content);
            if let (Some(vis), false) = (&self.vis, spilled.is_empty()) {
                resolve_spilled(self.pool, self.rel, vis, &mut self.batch, &spilled)?;
            }
            if !self.batch.is_empty() {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

impl Iterator for HeapScan<'_> {
    type Item = Result<(Tid, Vec<u8>), HeapError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.batch.len() {
            match self.load_next_page() {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => {
                    self.next_block = self.nblocks;
                    return Some(Err(e));
                }
            }
        }
        let item = std::mem::take(&mut self.batch[self.pos]);
        self.pos += 1;
        Some(Ok(item))
    }
}

/// Calls `f` with each row of `rel` that `vis` sees, in block and slot
/// order, page at a time under the page's shared content lock, as
/// PostgreSQL's page-at-a-time `heapgetpage` reads: no row is copied, so a
/// scan that keeps few of its rows allocates nothing for the others. `f`
/// must not lock another buffer (it runs under this page's content lock);
/// `per_page` runs between pages, without the lock (cancel checks). Blocks
/// added after the scan started are not visited.
pub fn scan_visible<E: From<HeapError>>(
    pool: &BufferPool,
    rel: RelFileId,
    vis: &Visibility<'_>,
    mut per_page: impl FnMut() -> Result<(), E>,
    mut f: impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<(), E> {
    let nblocks = pool.store().nblocks(rel, Fork::Main).map_err(HeapError::from)?;
    for block in 0..nblocks {
        per_page()?;
        let buf = pool.read_buffer(BufferTag::new(rel, Fork::Main, block)).map_err(HeapError::from)?;
        let content = buf.lock_shared();
        if page::is_new(&content) {
            continue;
        }
        let mut spilled = Vec::new();
        for slot in 0..page::item_count(&content) {
            let Some(tuple) = page::item(&content, slot) else { continue };
            let tid = Tid::new(block, slot as u16);
            match visibility::seen(tuple, rel, tid, vis) {
                Seen::Spilled { head, xmin } => spilled.push((tid, head, xmin)),
                other => {
                    if let Some(row) = other.row() {
                        f(row)?;
                    }
                }
            }
        }
        drop(content);
        // Spilled rows come after the page's others (no page lock is held
        // while their chains are walked).
        for (tid, head, xmin) in spilled {
            if let Some(row) = spill::older_spilled(pool, rel, tid, head, xmin, vis).map_err(E::from)? {
                f(&row)?;
            }
        }
    }
    Ok(())
}

/// Fills the placeholders of spilled rows in a scan's `batch` (index,
/// chain head, tuple `xmin`), and drops those whose row the reader does
/// not see.
fn resolve_spilled(
    pool: &BufferPool,
    rel: RelFileId,
    vis: &Visibility<'_>,
    batch: &mut Vec<(Tid, Vec<u8>)>,
    spilled: &[(usize, Tid, Xid)],
) -> Result<(), HeapError> {
    let mut unseen = Vec::new();
    for &(i, head, xmin) in spilled {
        match spill::older_spilled(pool, rel, batch[i].0, head, xmin, vis)? {
            Some(row) => batch[i].1 = row,
            None => unseen.push(i),
        }
    }
    for i in unseen.into_iter().rev() {
        batch.remove(i);
    }
    Ok(())
}

/// Encodes `row` for `types` and inserts it.
pub fn insert_row<L: ExtensionLocker>(
    pool: &BufferPool,
    ext: &mut Extender<'_, L>,
    rel: RelFileId,
    types: &[ColumnType],
    row: &[Value],
    xmin: Xid,
) -> Result<Tid, HeapError> {
    insert(pool, ext, rel, &encode_row(types, row)?, xmin)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::decode_row;
    use std::sync::Arc;
    use turnstile_lock::{Backend, LockManager};
    use turnstile_storage::{PoolOptions, Smgr, SmgrOptions};
    use turnstile_sync::config::ExtendStrategy;
    use turnstile_sync::LwLockPolicy;

    const TYPES: [ColumnType; 4] = [ColumnType::Int4, ColumnType::Int8, ColumnType::Text, ColumnType::Int4];

    fn backend() -> Backend {
        static MANAGER: std::sync::OnceLock<Arc<LockManager>> = std::sync::OnceLock::new();
        MANAGER.get_or_init(|| LockManager::new(&turnstile_sync::Config::default()).unwrap()).register().unwrap()
    }

    fn setup(dir: &std::path::Path, buffers: usize) -> (Arc<Smgr>, BufferPool) {
        let smgr = Smgr::open_with(
            dir,
            SmgrOptions { segment_blocks: 64, max_open_files: 16, ..Default::default() },
            Arc::new(turnstile_storage::io::OsIo),
        )
        .unwrap();
        let options = PoolOptions {
            shared_buffers: buffers,
            mapping_partitions: 8,
            policy: LwLockPolicy::Fair,
            lookup_hints: true,
            huge_pages: false,
            prefault: false,
        };
        (smgr.clone(), BufferPool::with_options(options, smgr).unwrap())
    }

    fn row(i: i32) -> Vec<Value> {
        vec![
            Value::Int4(i),
            if i % 5 == 0 { Value::Null } else { Value::Int8(i64::from(i) * 1_000_000_007) },
            Value::Text(format!("filler-{}", "x".repeat((i % 97) as usize))),
            Value::Int4(0),
        ]
    }

    #[test]
    fn rows_round_trip_through_insert_fetch_scan_and_survive_eviction() {
        let dir = tempfile::tempdir().unwrap();
        let (smgr, pool) = setup(dir.path(), 16);
        let rel = RelFileId::new(5, 16384);
        smgr.create(rel, Fork::Main).unwrap();
        let n = 8000;
        let mut tids = Vec::new();
        for strategy in [ExtendStrategy::Classic, ExtendStrategy::Bulk] {
            let mut ext = Extender::new(&pool, backend(), strategy, 16);
            for i in 0..n / 2 {
                let i = i + tids.len() as i32;
                tids.push((i, insert_row(&pool, &mut ext, rel, &TYPES, &row(i), 3).unwrap()));
            }
        }
        assert!(smgr.nblocks(rel, Fork::Main).unwrap() > 16, "the pool must have evicted pages");
        for (i, tid) in &tids {
            assert_eq!(decode_row(&TYPES, &fetch(&pool, rel, *tid).unwrap()).unwrap(), row(*i));
        }
        let scanned: Vec<(Tid, Vec<u8>)> = HeapScan::new(&pool, rel).unwrap().map(Result::unwrap).collect();
        assert_eq!(scanned.len(), tids.len());
        let mut expected: Vec<Tid> = tids.iter().map(|(_, t)| *t).collect();
        expected.sort();
        assert_eq!(scanned.iter().map(|(t, _)| *t).collect::<Vec<_>>(), expected, "scan order is TID order");
        assert!(matches!(fetch(&pool, rel, Tid::new(0, 999)), Err(HeapError::NoSuchTuple { .. })));
    }

    #[test]
    fn bulk_inserter_fills_pages_and_in_place_update_changes_one_column() {
        let dir = tempfile::tempdir().unwrap();
        let (smgr, pool) = setup(dir.path(), 64);
        let rel = RelFileId::new(5, 16385);
        smgr.create(rel, Fork::Main).unwrap();
        let mut ext = Extender::new(&pool, backend(), ExtendStrategy::Bulk, 8);
        let mut bulk = BulkInserter::new(&pool, rel, 3);
        let tids: Vec<Tid> =
            (0..2000).map(|i| bulk.insert(&mut ext, &encode_row(&TYPES, &row(i)).unwrap()).unwrap()).collect();
        drop(bulk);
        for (i, tid) in tids.iter().enumerate() {
            update_fixed_column(&pool, rel, *tid, &TYPES, 3, &Value::Int4(i as i32 * 2)).unwrap();
        }
        pool.flush_all().unwrap();
        for (i, tid) in tids.iter().enumerate() {
            let got = decode_row(&TYPES, &fetch(&pool, rel, *tid).unwrap()).unwrap();
            assert_eq!(got[3], Value::Int4(i as i32 * 2));
            assert_eq!(got[0], Value::Int4(i as i32));
        }
        let null_tid = tids[0];
        let err = update_fixed_column(&pool, rel, null_tid, &TYPES, 1, &Value::Int8(1)).unwrap_err();
        assert!(matches!(err, HeapError::Codec(_)), "updating a NULL in place must be refused: {err}");
        let err = update_fixed_column(&pool, rel, null_tid, &TYPES, 2, &Value::Int4(1)).unwrap_err();
        assert!(matches!(err, HeapError::Codec(_)));
        mark_dead(&pool, rel, tids[1]).unwrap();
        assert!(matches!(fetch(&pool, rel, tids[1]), Err(HeapError::NoSuchTuple { .. })));
        assert!(update_fixed_column(&pool, rel, tids[1], &TYPES, 3, &Value::Int4(1)).is_err());
        let live = HeapScan::new(&pool, rel).unwrap().count();
        assert_eq!(live, tids.len() - 1, "a scan returned a dead tuple");
    }

    #[test]
    fn concurrent_inserters_lose_no_row() {
        let dir = tempfile::tempdir().unwrap();
        let (smgr, pool) = setup(dir.path(), 64);
        let rel = RelFileId::new(5, 16386);
        smgr.create(rel, Fork::Main).unwrap();
        let per_thread = 800;
        std::thread::scope(|s| {
            for t in 0..8 {
                let pool = &pool;
                s.spawn(move || {
                    let mut ext = Extender::new(pool, backend(), ExtendStrategy::Bulk, 16);
                    for i in 0..per_thread {
                        insert_row(pool, &mut ext, rel, &TYPES, &row(t * per_thread + i), 3).unwrap();
                    }
                });
            }
        });
        let mut seen: Vec<i32> = HeapScan::new(&pool, rel)
            .unwrap()
            .map(|r| match decode_row(&TYPES, &r.unwrap().1).unwrap()[0] {
                Value::Int4(v) => v,
                ref other => panic!("bad row {other:?}"),
            })
            .collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..8 * per_thread).collect::<Vec<_>>());
    }

    #[test]
    fn oversized_rows_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (smgr, pool) = setup(dir.path(), 16);
        let rel = RelFileId::new(5, 16387);
        smgr.create(rel, Fork::Main).unwrap();
        let mut ext = Extender::new(&pool, backend(), ExtendStrategy::Bulk, 4);
        let big = vec![0u8; MAX_ROW_SIZE + 1];
        assert!(matches!(insert(&pool, &mut ext, rel, &big, 3), Err(HeapError::TupleTooLarge { .. })));
    }
}
