//! The heap: a table's rows on slotted 8 kB pages.
//!
//! A heap page is the storage crate's generic page (line pointers growing
//! up, tuples growing down, no special space); a tuple is a one-byte header
//! followed by one encoded row ([`crate::types::encode_row`]). A tuple
//! keeps its [`Tid`] while it lives: an update rewrites it on its page
//! ([`replace_row`], compacting the page if the row grows) or, when keys
//! change or the page is full, inserts the new row elsewhere and marks the
//! old one dead (`crate::dml`).
//!
//! | tuple byte | meaning |
//! |---|---|
//! | 0 | flags: [`DEAD`] — deleted, replaced by a moved update, or the insert that made it failed or was rolled back; scans and fetches skip it |
//! | 1.. | the row |
//!
//! There is no MVCC: `DEAD` can be cleared again by the undo of the
//! transaction that set it (which holds the row's write lock until it
//! ends). VACUUM (`crate::vacuum`) removes dead tuples that no open
//! transaction holds: their line pointers become unused (length 0, reused
//! by later inserts) and the page is compacted.
//!
//! `fillfactor` ([`fillfactor_reserve`]): an insert leaves that share of a
//! page free, unless the page is empty.
//!
//! # What protects what
//!
//! * A page's bytes: its buffer's content lock — shared to read tuples,
//!   exclusive to add one or change one in place. One content lock at a
//!   time; none is held while waiting for the relation-extension lock.
//! * Which page an inserter uses: the free-space map hands a page to one
//!   inserter at a time ([`turnstile_storage::fsm::FreeSpaceMap::claim`]
//!   removes it); the inserter records what is left when it is done, so two
//!   inserters never race for the last bytes of one page.
//! * The relation's length: the relation-extension lock, inside
//!   [`Extender`] (`storage.extend` picks `classic` or `bulk`).
//!
//! A sequential scan reads a page's tuples under a shared lock into a local
//! batch and releases the lock before returning them (PostgreSQL's
//! page-at-a-time mode), so a slow consumer never blocks inserters.

use crate::tid::Tid;
use crate::types::{encode_row, fixed_column_span, CodecError, ColumnType, Value};
use turnstile_storage::page::{self, MAX_ITEM_SIZE};
use turnstile_storage::rel::{BufferTag, Fork, RelFileId};
use turnstile_storage::{BufferPool, Extender, ExtensionLocker, PinnedBuffer, StorageError};

/// Tuple flag: the row was taken back by the statement that inserted it.
pub const DEAD: u8 = 0x01;
/// Bytes before the row in a tuple.
pub const TUPLE_HEADER: usize = 1;
/// The largest encoded row a page holds.
pub const MAX_ROW_SIZE: usize = MAX_ITEM_SIZE - TUPLE_HEADER;

fn live_row(tuple: &[u8]) -> Option<&[u8]> {
    match tuple.split_first() {
        Some((flags, row)) if flags & DEAD == 0 => Some(row),
        _ => None,
    }
}

fn make_tuple(row: &[u8]) -> Vec<u8> {
    let mut t = Vec::with_capacity(TUPLE_HEADER + row.len());
    t.push(0);
    t.extend_from_slice(row);
    t
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

/// Inserts one encoded row into `rel`, using a page from the free-space
/// map or a new one from relation extension. `pool` is the pool `ext`
/// extends through.
pub fn insert<L: ExtensionLocker>(
    pool: &BufferPool,
    ext: &mut Extender<'_, L>,
    rel: RelFileId,
    row: &[u8],
) -> Result<Tid, HeapError> {
    insert_reserving(pool, ext, rel, row, 0)
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
    reserve: usize,
) -> Result<Tid, HeapError> {
    if row.len() > MAX_ROW_SIZE {
        return Err(HeapError::TupleTooLarge { size: row.len() });
    }
    let tuple = &make_tuple(row);
    let want = (tuple.len() + page::ITEM_ID_SIZE + reserve).min(MAX_ROW_SIZE + TUPLE_HEADER + page::ITEM_ID_SIZE);
    loop {
        let buf = ext.get_page(rel, want)?;
        if let Some(tid) = place(pool, rel, &buf, tuple, reserve) {
            return Ok(tid);
        }
    }
}

/// Whether `tuple` may go on `content` leaving `reserve` bytes free.
fn room_for(content: &page::PageBuf, tuple: &[u8], reserve: usize) -> bool {
    reserve == 0 || page::item_count(content) == 0 || page::free_space(content) >= tuple.len() + reserve
}

/// Adds `tuple` to the pinned page and records the space left; `None` if
/// it no longer fits (the page's space is recorded, so it is not offered
/// again for this size).
fn place(pool: &BufferPool, rel: RelFileId, buf: &PinnedBuffer<'_>, tuple: &[u8], reserve: usize) -> Option<Tid> {
    let mut content = buf.lock_exclusive();
    let slot = if room_for(&content, tuple, reserve) { page::add_item_reusing(&mut content, tuple) } else { None };
    if slot.is_some() {
        content.mark_dirty();
    }
    let free = page::free_space(&content);
    drop(content);
    pool.fsm().record(rel, buf.block(), free);
    slot.map(|s| Tid::new(buf.block(), s as u16))
}

/// Many inserts into one relation by one backend (COPY): keeps the current
/// page pinned until it is full, as PostgreSQL's `BulkInsertState` does.
#[derive(Debug)]
pub struct BulkInserter<'p> {
    pool: &'p BufferPool,
    rel: RelFileId,
    current: Option<PinnedBuffer<'p>>,
    reserve: usize,
}

impl<'p> BulkInserter<'p> {
    /// A bulk inserter into `rel` of `pool`.
    pub fn new(pool: &'p BufferPool, rel: RelFileId) -> BulkInserter<'p> {
        BulkInserter { pool, rel, current: None, reserve: 0 }
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
        let tuple = &make_tuple(row);
        if let Some(buf) = &self.current {
            let mut content = buf.lock_exclusive();
            let slot = if room_for(&content, tuple, self.reserve) {
                page::add_item_reusing(&mut content, tuple)
            } else {
                None
            };
            if let Some(slot) = slot {
                content.mark_dirty();
                return Ok(Tid::new(buf.block(), slot as u16));
            }
        }
        self.finish_page();
        loop {
            let want =
                (tuple.len() + page::ITEM_ID_SIZE + self.reserve).min(MAX_ROW_SIZE + TUPLE_HEADER + page::ITEM_ID_SIZE);
            let buf = ext.get_page(self.rel, want)?;
            let placed = {
                let mut content = buf.lock_exclusive();
                let slot = if room_for(&content, tuple, self.reserve) {
                    page::add_item_reusing(&mut content, tuple)
                } else {
                    None
                };
                if slot.is_some() {
                    content.mark_dirty();
                }
                slot
            };
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

/// The row at `tid`, copied out (a dead tuple is not there).
pub fn fetch(pool: &BufferPool, rel: RelFileId, tid: Tid) -> Result<Vec<u8>, HeapError> {
    with_row(pool, rel, tid, <[u8]>::to_vec)
}

/// Calls `f` with the row at `tid` while its page is share-locked (no copy).
pub fn with_row<R>(pool: &BufferPool, rel: RelFileId, tid: Tid, f: impl FnOnce(&[u8]) -> R) -> Result<R, HeapError> {
    let buf = pool.read_buffer(BufferTag::new(rel, Fork::Main, tid.block))?;
    let content = buf.lock_shared();
    let row = page::item(&content, usize::from(tid.slot)).and_then(live_row);
    Ok(f(row.ok_or(HeapError::NoSuchTuple { rel, tid })?))
}

/// Marks the tuple at `tid` dead: the statement that inserted it failed.
pub fn mark_dead(pool: &BufferPool, rel: RelFileId, tid: Tid) -> Result<(), HeapError> {
    let buf = pool.read_buffer(BufferTag::new(rel, Fork::Main, tid.block))?;
    let mut content = buf.lock_exclusive();
    let tuple = page::item_mut(&mut content, usize::from(tid.slot)).ok_or(HeapError::NoSuchTuple { rel, tid })?;
    let flags = tuple.first_mut().ok_or(HeapError::NoSuchTuple { rel, tid })?;
    *flags |= DEAD;
    content.mark_dirty();
    Ok(())
}

/// Sets or clears the [`DEAD`] flag of the tuple at `tid` (delete, and its
/// undo). Returns whether it was dead before.
pub fn set_dead(pool: &BufferPool, rel: RelFileId, tid: Tid, dead: bool) -> Result<bool, HeapError> {
    let buf = pool.read_buffer(BufferTag::new(rel, Fork::Main, tid.block))?;
    let mut content = buf.lock_exclusive();
    let tuple = page::item_mut(&mut content, usize::from(tid.slot))
        .filter(|t| !t.is_empty())
        .ok_or(HeapError::NoSuchTuple { rel, tid })?;
    let was = tuple[0] & DEAD != 0;
    if dead {
        tuple[0] |= DEAD;
    } else {
        tuple[0] &= !DEAD;
    }
    content.mark_dirty();
    Ok(was)
}

/// What is at a TID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TupleState {
    /// A live tuple.
    Live,
    /// A tuple marked [`DEAD`], still taking space until VACUUM.
    Dead,
    /// No tuple (never there, or reclaimed by VACUUM).
    Missing,
}

/// The state of the tuple at `tid` (read under a shared content lock).
pub fn tuple_state(pool: &BufferPool, rel: RelFileId, tid: Tid) -> Result<TupleState, HeapError> {
    if tid.block >= pool.store().nblocks(rel, Fork::Main)? {
        return Ok(TupleState::Missing);
    }
    let buf = pool.read_buffer(BufferTag::new(rel, Fork::Main, tid.block))?;
    let content = buf.lock_shared();
    Ok(match page::item(&content, usize::from(tid.slot)).and_then(|t| t.first()) {
        None => TupleState::Missing,
        Some(flags) if flags & DEAD != 0 => TupleState::Dead,
        Some(_) => TupleState::Live,
    })
}

/// Replaces the live row at `tid` with `row`, on its page, keeping its TID
/// (the row may grow into the page's free space). Returns `false`,
/// changing nothing, when the page has no room: the caller moves the row.
pub fn replace_row(pool: &BufferPool, rel: RelFileId, tid: Tid, row: &[u8]) -> Result<bool, HeapError> {
    if row.len() > MAX_ROW_SIZE {
        return Err(HeapError::TupleTooLarge { size: row.len() });
    }
    let tuple = make_tuple(row);
    let buf = pool.read_buffer(BufferTag::new(rel, Fork::Main, tid.block))?;
    let mut content = buf.lock_exclusive();
    let slot = usize::from(tid.slot);
    if page::item(&content, slot).and_then(live_row).is_none() {
        return Err(HeapError::NoSuchTuple { rel, tid });
    }
    let done = page::replace_item(&mut content, slot, &tuple);
    if done {
        content.mark_dirty();
    }
    Ok(done)
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
    let bytes: Vec<u8> = match value.coerce(ty).ok_or_else(type_error)? {
        Value::Int4(v) => v.to_le_bytes().to_vec(),
        Value::Int8(v) | Value::Timestamp(v) => v.to_le_bytes().to_vec(),
        Value::Bool(b) => vec![u8::from(b)],
        _ => return Err(type_error().into()),
    };
    let buf = pool.read_buffer(BufferTag::new(rel, Fork::Main, tid.block))?;
    let mut content = buf.lock_exclusive();
    let tuple = page::item_mut(&mut content, usize::from(tid.slot))
        .filter(|t| t.first().is_some_and(|f| f & DEAD == 0))
        .ok_or(HeapError::NoSuchTuple { rel, tid })?;
    let row = &mut tuple[TUPLE_HEADER..];
    let (at, size) = fixed_column_span(types, row, column)?.ok_or_else(type_error)?;
    debug_assert_eq!(size, bytes.len());
    row[at..at + size].copy_from_slice(&bytes);
    content.mark_dirty();
    Ok(())
}

/// A sequential scan: every tuple of `rel` in block and slot order, page at
/// a time. Blocks added after the scan started are not visited (the scan
/// reads the relation's length once, as PostgreSQL's `heapgetpage` does).
#[derive(Debug)]
pub struct HeapScan<'p> {
    pool: &'p BufferPool,
    rel: RelFileId,
    next_block: u32,
    nblocks: u32,
    batch: Vec<(Tid, Vec<u8>)>,
    pos: usize,
}

impl<'p> HeapScan<'p> {
    /// Starts a scan of `rel`.
    pub fn new(pool: &'p BufferPool, rel: RelFileId) -> Result<HeapScan<'p>, HeapError> {
        let nblocks = pool.store().nblocks(rel, Fork::Main)?;
        Ok(HeapScan { pool, rel, next_block: 0, nblocks, batch: Vec::new(), pos: 0 })
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
            for slot in 0..page::item_count(&content) {
                if let Some(row) = page::item(&content, slot).and_then(live_row) {
                    self.batch.push((Tid::new(block, slot as u16), row.to_vec()));
                }
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

/// Encodes `row` for `types` and inserts it.
pub fn insert_row<L: ExtensionLocker>(
    pool: &BufferPool,
    ext: &mut Extender<'_, L>,
    rel: RelFileId,
    types: &[ColumnType],
    row: &[Value],
) -> Result<Tid, HeapError> {
    insert(pool, ext, rel, &encode_row(types, row)?)
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
                tids.push((i, insert_row(&pool, &mut ext, rel, &TYPES, &row(i)).unwrap()));
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
        let mut bulk = BulkInserter::new(&pool, rel);
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
                        insert_row(pool, &mut ext, rel, &TYPES, &row(t * per_thread + i)).unwrap();
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
        assert!(matches!(insert(&pool, &mut ext, rel, &big), Err(HeapError::TupleTooLarge { .. })));
    }
}
