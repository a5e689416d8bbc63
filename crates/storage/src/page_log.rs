//! Logging page changes: before-images, deltas and full-page images, as
//! PostgreSQL's generic WAL records (`generic_xlog.c`) do.
//!
//! An access method changes pages the way it always has — through a
//! [`crate::PageWriteGuard`] — and brackets the change:
//!
//! 1. [`crate::PageWriteGuard::begin_change`] before the first byte
//!    changes: the guard keeps a before-image of the page (the base of a
//!    delta, and what the page goes back to if the change is never
//!    logged: a failed insertion leaves no page holding a change the log
//!    lacks);
//! 2. the access method changes the page(s);
//! 3. [`crate::BufferPool::log_change`] with every guard the change
//!    touched and the record's own data (for the heap: what recovery needs
//!    to take an unfinished transaction's change back): one record for the
//!    whole change, so a B-tree split's pages are redone together or not
//!    at all. It stamps each page with the record's end LSN and marks it
//!    dirty, all before the content locks are released.
//!
//! # A page's image in a record
//!
//! * **Delta** — the byte ranges that differ from the before-image, as
//!   fragments `offset u16, length u16, bytes` (ranges closer than a
//!   fragment header are merged). The checksum and the LSN
//!   ([`page::UNLOGGED_HEADER`]) are never part of a delta.
//! * **Full image** — the whole page but its hole (the free bytes between
//!   `lower` and `upper`). A page is logged whole when its LSN is not past
//!   the last checkpoint's redo point: the first change after a checkpoint
//!   (PostgreSQL's full-page writes), so a page torn by a crash mid-write is
//!   rebuilt from the log rather than read back. A new page (zero LSN) is
//!   logged whole for the same reason.
//!
//! # Record data layout (little-endian)
//!
//! ```text
//! u8  number of pages
//! per page: u32 db, u32 rel, u8 fork, u32 block, u8 kind (0 delta, 1 full image), u16 length, bytes
//!   full image bytes: u16 hole offset, u16 hole length, then the page without the hole
//! the rest: the access method's data
//! ```
//!
//! A record with `info` 0, of any resource manager, holds whole images
//! only: [`crate::BufferPool::log_change`] adds one when a checkpoint's
//! redo point moved past a change while it was being logged as a delta.
//!
//! # Rules
//!
//! * **WAL before data.** A page is written to its file only once the log
//!   is durable up to its LSN ([`RedoLog::flush`], called by every write-back).
//! * **Redo is idempotent.** [`redo_page`] applies a page's image only when
//!   the page's LSN is below the record's end; afterwards the page carries
//!   that LSN.
//!
//! ```
//! use turnstile_storage::page::{self, PageBuf, PAGE_SIZE};
//! use turnstile_storage::page_log::{apply_delta, encode_delta};
//! let mut before: Box<PageBuf> = Box::new([0; PAGE_SIZE]);
//! page::init(&mut before, 0);
//! let mut after = before.clone();
//! page::add_item(&mut after, b"hello").unwrap();
//! let mut delta = Vec::new();
//! encode_delta(&before, &after, &mut delta);
//! assert!(delta.len() < 32, "a small change is a small delta");
//! apply_delta(&mut before, &delta).unwrap();
//! assert_eq!(before[..], after[..]);
//! ```

use crate::page::{self, PageBuf, HEADER_SIZE, PAGE_SIZE};
use crate::rel::{BlockNumber, BufferTag, Fork, RelFileId};
use turnstile_sync::sync::atomic::{fence, AtomicU64, Ordering};

/// The log the buffer pool and the access methods write page changes to
/// (the write-ahead log; a trait so that this crate's buffer pool does not
/// depend on how records are inserted and flushed).
pub trait RedoLog: Send + Sync + std::fmt::Debug {
    /// Inserts one record; returns its end LSN.
    fn insert(&self, kind: RecordKind, parts: &[&[u8]], full_pages: usize) -> crate::Result<u64>;
    /// Returns once the log is durable up to `lsn`.
    fn flush(&self, lsn: u64) -> crate::Result<()>;
    /// The redo point of the last checkpoint: a page whose LSN is not past
    /// it is logged whole on its next change.
    fn redo_point(&self) -> u64;
    /// Called after inserting a record that logged a delta for a page
    /// whose LSN was past `seen` (a [`RedoLog::redo_point`] read before
    /// the insertion): whether a checkpoint may have put its redo point
    /// before that record since — then the page must be logged whole
    /// again ([`RedoPoint::moved_since`]).
    fn redo_moved_since(&self, seen: u64) -> bool;
}

/// A checkpoint's redo point as writers read it, and the handshake that
/// keeps a delta from landing after a redo point unnoticed.
///
/// A checkpoint takes the insert position as its redo point. A writer
/// decides "delta or whole page" against the redo point it read before
/// inserting; if a checkpoint read the insert position after the writer
/// reserved its place, the record lies after the new redo point though it
/// carries only a delta, and a page torn later could not be rebuilt.
/// PostgreSQL closes the window by changing `RedoRecPtr` under every WAL
/// insertion lock; `scalable` insertion takes no lock, so:
///
/// * the checkpoint ([`RedoPoint::advance`]) first publishes "moving"
///   (`u64::MAX`: every page is logged whole meanwhile), then — after a
///   `SeqCst` fence — reads the insert position, then publishes it;
/// * the writer, after its reservation, fences and reads the redo point
///   again ([`RedoPoint::moved_since`]).
///
/// Of the two fenced reads at least one sees the other side's write (the
/// store-buffering pattern): either the checkpoint's position includes
/// the writer's record (the record lies before the redo point, and its
/// delta is never replayed), or the writer sees the point moved and logs
/// the page whole right after the record, before it unlocks the page. The
/// loom model `redo_point_handshake` (`tests/loom_wal.rs`) checks it.
#[derive(Debug)]
pub struct RedoPoint(AtomicU64);

/// The redo point while a checkpoint is taking it.
const MOVING: u64 = u64::MAX;

impl RedoPoint {
    /// Starts at `lsn`.
    pub fn new(lsn: u64) -> RedoPoint {
        RedoPoint(AtomicU64::new(lsn))
    }

    /// The current redo point (`u64::MAX` while a checkpoint takes one).
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }

    /// Moves the redo point to `insert_position()`, read as described
    /// above; returns it.
    pub fn advance(&self, insert_position: impl FnOnce() -> u64) -> u64 {
        self.0.store(MOVING, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        let redo = insert_position();
        self.0.store(redo, Ordering::SeqCst);
        redo
    }

    /// After a reservation: whether the redo point differs from `seen`.
    pub fn moved_since(&self, seen: u64) -> bool {
        fence(Ordering::SeqCst);
        self.0.load(Ordering::SeqCst) != seen
    }
}

/// Who a record is for and what it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordKind {
    /// The transaction that made the change (0: none).
    pub xid: u64,
    /// The resource manager that redoes (and undoes) it.
    pub rmgr: u8,
    /// The resource manager's code for the change.
    pub info: u8,
}

/// How a page is carried by a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ImageKind {
    /// Byte ranges against the page as it was.
    Delta = 0,
    /// The whole page but its hole.
    Full = 1,
}

/// Why a record's page data could not be decoded or applied.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("malformed page change in WAL record: {0}")]
pub struct MalformedChange(pub &'static str);

const FRAGMENT_HEADER: usize = 4;

fn logged(i: usize) -> bool {
    !page::UNLOGGED_HEADER.iter().any(|r| r.contains(&i))
}

/// Appends to `out` the fragments that turn `before` into `after`.
pub fn encode_delta(before: &PageBuf, after: &PageBuf, out: &mut Vec<u8>) {
    let differs = |i: usize| before[i] != after[i] && logged(i);
    let mut i = 0;
    while i < PAGE_SIZE {
        if !differs(i) {
            i += 1;
            continue;
        }
        let start = i;
        let mut end = i + 1;
        // Extend over equal gaps shorter than a fragment header.
        let mut j = end;
        while j < PAGE_SIZE && j - end <= FRAGMENT_HEADER {
            if differs(j) {
                end = j + 1;
            }
            j += 1;
        }
        out.extend_from_slice(&(start as u16).to_le_bytes());
        out.extend_from_slice(&((end - start) as u16).to_le_bytes());
        out.extend_from_slice(&after[start..end]);
        i = end;
    }
}

/// Applies fragments made by [`encode_delta`] to `page`.
pub fn apply_delta(page: &mut PageBuf, mut delta: &[u8]) -> Result<(), MalformedChange> {
    while !delta.is_empty() {
        let head = delta.get(..FRAGMENT_HEADER).ok_or(MalformedChange("truncated fragment header"))?;
        let at = u16::from_le_bytes([head[0], head[1]]) as usize;
        let len = u16::from_le_bytes([head[2], head[3]]) as usize;
        let bytes = delta.get(FRAGMENT_HEADER..FRAGMENT_HEADER + len).ok_or(MalformedChange("truncated fragment"))?;
        page.get_mut(at..at + len).ok_or(MalformedChange("fragment past the page's end"))?.copy_from_slice(bytes);
        delta = &delta[FRAGMENT_HEADER + len..];
    }
    Ok(())
}

/// The free bytes between `lower` and `upper` of an initialised page, left
/// out of its full image (none for a new or malformed page).
fn hole(p: &PageBuf) -> (usize, usize) {
    let h = page::header(p);
    let (lower, upper) = (h.lower as usize, h.upper as usize);
    if h.version == 0 || lower < HEADER_SIZE || upper < lower || upper > PAGE_SIZE {
        (0, 0)
    } else {
        (lower, upper - lower)
    }
}

/// Appends `p`'s full image (without its hole) to `out`.
pub fn encode_full(p: &PageBuf, out: &mut Vec<u8>) {
    let (at, len) = hole(p);
    out.extend_from_slice(&(at as u16).to_le_bytes());
    out.extend_from_slice(&(len as u16).to_le_bytes());
    if len == 0 {
        out.extend_from_slice(&p[..]);
    } else {
        out.extend_from_slice(&p[..at]);
        out.extend_from_slice(&p[at + len..]);
    }
}

/// Rebuilds a page from a full image made by [`encode_full`].
pub fn apply_full(p: &mut PageBuf, image: &[u8]) -> Result<(), MalformedChange> {
    let head = image.get(..4).ok_or(MalformedChange("truncated full-page image"))?;
    let at = u16::from_le_bytes([head[0], head[1]]) as usize;
    let len = u16::from_le_bytes([head[2], head[3]]) as usize;
    let body = &image[4..];
    if at.checked_add(len).is_none_or(|end| end > PAGE_SIZE) || body.len() + len != PAGE_SIZE {
        return Err(MalformedChange("full-page image of the wrong size"));
    }
    p[..at].copy_from_slice(&body[..at]);
    p[at..at + len].fill(0);
    p[at + len..].copy_from_slice(&body[at..]);
    Ok(())
}

/// Appends one page's entry (see the module's layout) to `out`.
pub(crate) fn encode_page(tag: BufferTag, kind: ImageKind, image: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&tag.rel.db.to_le_bytes());
    out.extend_from_slice(&tag.rel.rel.to_le_bytes());
    out.push(tag.fork as u8);
    out.extend_from_slice(&tag.block.to_le_bytes());
    out.push(kind as u8);
    out.extend_from_slice(&(image.len() as u16).to_le_bytes());
    out.extend_from_slice(image);
}

/// One page of a decoded record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageImage<'a> {
    /// The page.
    pub tag: BufferTag,
    /// How it is carried.
    pub kind: ImageKind,
    /// The delta's fragments or the full image.
    pub image: &'a [u8],
}

/// A page-change record's pages and the access method's data.
pub fn decode(mut data: &[u8]) -> Result<(Vec<PageImage<'_>>, &[u8]), MalformedChange> {
    let n = *data.first().ok_or(MalformedChange("empty record"))?;
    data = &data[1..];
    let mut pages = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let head = data.get(..16).ok_or(MalformedChange("truncated page entry"))?;
        let u32_at = |i: usize| u32::from_le_bytes(head[i..i + 4].try_into().expect("4 bytes"));
        let fork = match head[8] {
            0 => Fork::Main,
            1 => Fork::FreeSpace,
            2 => Fork::VisibilityMap,
            _ => return Err(MalformedChange("unknown fork")),
        };
        let kind = match head[13] {
            0 => ImageKind::Delta,
            1 => ImageKind::Full,
            _ => return Err(MalformedChange("unknown page image kind")),
        };
        let len = u16::from_le_bytes([head[14], head[15]]) as usize;
        let image = data.get(16..16 + len).ok_or(MalformedChange("truncated page image"))?;
        let block: BlockNumber = u32_at(9);
        pages.push(PageImage { tag: BufferTag::new(RelFileId::new(u32_at(0), u32_at(4)), fork, block), kind, image });
        data = &data[16 + len..];
    }
    Ok((pages, data))
}

/// Redoes one page of a record ending at `end_lsn` on `p`: applies the
/// image unless the page already carries this change or a later one, and
/// stamps `end_lsn`. Returns whether it applied anything.
pub fn redo_page(p: &mut PageBuf, img: &PageImage<'_>, end_lsn: u64) -> Result<bool, MalformedChange> {
    if img.kind == ImageKind::Delta && page::lsn(p) >= end_lsn {
        return Ok(false);
    }
    match img.kind {
        ImageKind::Delta => apply_delta(p, img.image)?,
        // A full image is applied whatever the page holds: the page may be
        // torn, so its LSN proves nothing.
        ImageKind::Full => apply_full(p, img.image)?,
    }
    page::set_lsn(p, end_lsn);
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn init() -> Box<PageBuf> {
        let mut p: Box<PageBuf> = Box::new([0; PAGE_SIZE]);
        page::init(&mut p, 0);
        p
    }

    #[test]
    fn deltas_and_full_images_rebuild_the_page() {
        let before = init();
        let mut after = before.clone();
        for i in 0..30u8 {
            page::add_item(&mut after, &[i; 120]).unwrap();
        }
        page::item_mut(&mut after, 3).unwrap()[5] = 0xff;
        page::set_lsn(&mut after, 77);
        page::set_checksum(&mut after, 1);
        let mut delta = Vec::new();
        encode_delta(&before, &after, &mut delta);
        let mut redone = before.clone();
        apply_delta(&mut redone, &delta).unwrap();
        assert_eq!(page::lsn(&redone), 0, "the LSN is not part of a delta");
        page::set_lsn(&mut redone, 77);
        page::set_checksum(&mut redone, 1);
        assert_eq!(redone[..], after[..]);

        let mut full = Vec::new();
        encode_full(&after, &mut full);
        assert!(full.len() < PAGE_SIZE / 2, "the hole is left out: {} bytes", full.len());
        let mut torn: Box<PageBuf> = Box::new([0xaa; PAGE_SIZE]);
        apply_full(&mut torn, &full).unwrap();
        assert_eq!(torn[..], after[..]);
    }

    #[test]
    fn records_round_trip_and_redo_is_idempotent() {
        let before = init();
        let mut after = before.clone();
        page::add_item(&mut after, b"row").unwrap();
        let mut delta = Vec::new();
        encode_delta(&before, &after, &mut delta);
        let tag = BufferTag::new(RelFileId::new(5, 16384), Fork::Main, 9);
        let mut rec = vec![1];
        encode_page(tag, ImageKind::Delta, &delta, &mut rec);
        rec.extend_from_slice(b"undo");
        let (pages, rest) = decode(&rec).unwrap();
        assert_eq!((pages.len(), pages[0].tag, rest), (1, tag, &b"undo"[..]));
        let mut p = before.clone();
        assert!(redo_page(&mut p, &pages[0], 100).unwrap());
        assert!(!redo_page(&mut p, &pages[0], 100).unwrap(), "a page at the record's LSN is not redone again");
        assert_eq!(page::item(&p, 0), Some(&b"row"[..]));
        assert_eq!(page::lsn(&p), 100);
    }

    #[test]
    fn malformed_records_are_errors_not_panics() {
        let mut p = init();
        for bad in [&[0u8, 0x20, 3][..], &[0xff, 0x1f, 9, 0, 1], &[]] {
            let _ = apply_delta(&mut p, bad);
        }
        assert!(apply_delta(&mut p, &[0xff, 0x1f, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]).is_err());
        assert!(apply_full(&mut p, &[0, 0, 0, 0, 1]).is_err());
        assert!(decode(&[2, 0, 0]).is_err());
        assert!(decode(&[]).is_err());
    }
}
