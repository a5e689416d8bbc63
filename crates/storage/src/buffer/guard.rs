//! What holds a buffer: a pin ([`PinnedBuffer`], and the pool's own
//! victims and new buffers), and the content-lock guards taken through a
//! pin ([`PageReadGuard`], [`PageWriteGuard`]). Each unpins or unlocks
//! when dropped.

use super::desc::{BufferDesc, BufferId, Frame, DIRTY, IO_IN_PROGRESS, TAG_VALID, VALID};
use super::pool::BufferPool;
use crate::error::Result;
use crate::page::{self, PageBuf};
use crate::rel::{BlockNumber, BufferTag};
use std::ops::{Deref, DerefMut};
use turnstile_sync::{LwLockExclusiveGuard, LwLockSharedGuard};

/// A pin taken directly under the header lock; dropped by unpinning.
pub(super) struct PinGuard<'a>(pub(super) &'a BufferDesc);

impl Drop for PinGuard<'_> {
    fn drop(&mut self) {
        self.0.unpin();
    }
}

/// A buffer pinned only by its owner, clean and unmapped: the result of a
/// victim search. Dropping it unpins it and puts it on the free list.
#[must_use = "a victim is given back to the free list when dropped"]
#[derive(Debug)]
pub(crate) struct Victim<'a> {
    pub(super) pool: &'a BufferPool,
    pub(crate) id: BufferId,
}

impl<'a> Victim<'a> {
    /// Zeroes the victim's page (PostgreSQL's `MemSet` of a new buffer
    /// before `smgrextend`). Nobody else can hold its content lock: it is
    /// pinned only by us and unmapped.
    pub(crate) fn zero_page(&self) {
        self.pool.descs[self.id as usize].content.lock_exclusive().fill(0);
    }

    pub(super) fn into_pinned(self, tag: BufferTag) -> PinnedBuffer<'a> {
        let me = std::mem::ManuallyDrop::new(self);
        PinnedBuffer { pool: me.pool, id: me.id, tag }
    }
}

impl Drop for Victim<'_> {
    fn drop(&mut self) {
        let desc = &self.pool.descs[self.id as usize];
        let unmapped = desc.load() & TAG_VALID == 0;
        desc.unpin();
        if unmapped {
            self.pool.clock.free(self.id);
        }
    }
}

/// A newly mapped block whose page is not initialised yet (see
/// [`BufferPool::install_new`]).
pub(crate) struct NewBuffer<'a> {
    pub(crate) buf: PinnedBuffer<'a>,
    /// The I/O lock of a fresh buffer; `None` when a reader mapped the
    /// block first.
    pub(super) io: Option<LwLockExclusiveGuard<'a, ()>>,
}

impl<'a> NewBuffer<'a> {
    /// Initialises the page (an empty page with no special space), marks
    /// the buffer `VALID` and releases its I/O lock.
    pub(crate) fn init(self) -> Result<PinnedBuffer<'a>> {
        let pool = self.buf.pool;
        let desc = &pool.descs[self.buf.id as usize];
        match self.io {
            Some(io) => {
                page::init(&mut desc.content.lock_exclusive(), 0);
                {
                    let mut h = desc.lock_header();
                    debug_assert!(h.state & IO_IN_PROGRESS != 0, "a new buffer's I/O flag cleared by someone else");
                    h.state = (h.state & !IO_IN_PROGRESS) | VALID;
                }
                drop(io);
            }
            None => {
                pool.make_valid(&self.buf)?;
                let mut content = desc.content.lock_exclusive();
                if page::is_new(&content) {
                    page::init(&mut content, 0);
                }
            }
        }
        Ok(self.buf)
    }
}

/// A pin on a buffer holding a valid page: while it lives the buffer is
/// never evicted or re-tagged. Dropping it unpins.
#[must_use = "the buffer is unpinned when dropped"]
#[derive(Debug)]
pub struct PinnedBuffer<'a> {
    pub(super) pool: &'a BufferPool,
    pub(super) id: BufferId,
    pub(super) tag: BufferTag,
}

impl<'a> PinnedBuffer<'a> {
    /// The block this buffer holds.
    pub fn tag(&self) -> BufferTag {
        self.tag
    }

    /// The block number.
    pub fn block(&self) -> BlockNumber {
        self.tag.block
    }

    /// The buffer's index in the pool.
    pub fn buffer_id(&self) -> BufferId {
        self.id
    }

    fn desc(&self) -> &'a BufferDesc {
        &self.pool.descs[self.id as usize]
    }

    /// Locks the page for reading.
    pub fn lock_shared(&self) -> PageReadGuard<'_> {
        PageReadGuard { guard: self.desc().content.lock_shared() }
    }

    /// Locks the page for writing.
    pub fn lock_exclusive(&self) -> PageWriteGuard<'_> {
        self.write_guard(self.desc().content.lock_exclusive())
    }

    /// Locks the page for writing if nobody holds its lock.
    pub fn try_lock_exclusive(&self) -> Option<PageWriteGuard<'_>> {
        Some(self.write_guard(self.desc().content.try_lock_exclusive()?))
    }

    fn write_guard<'g>(&'g self, guard: LwLockExclusiveGuard<'g, Frame>) -> PageWriteGuard<'g> {
        PageWriteGuard { guard, desc: self.desc(), pool: self.pool, tag: self.tag, change: Change::None }
    }
}

impl Drop for PinnedBuffer<'_> {
    #[inline]
    fn drop(&mut self) {
        // Paired with the check where the pin was taken: a pin freezes the
        // tag, so the buffer still holds this block.
        debug_assert!(
            self.desc().load() & TAG_VALID != 0 && self.desc().tag() == self.tag,
            "a pinned buffer was re-tagged"
        );
        self.desc().unpin();
    }
}

/// Shared access to a pinned page; released on drop.
#[must_use = "the content lock is released when the guard is dropped"]
pub struct PageReadGuard<'b> {
    guard: LwLockSharedGuard<'b, Frame>,
}

impl Deref for PageReadGuard<'_> {
    type Target = PageBuf;
    fn deref(&self) -> &PageBuf {
        &self.guard
    }
}

/// Exclusive access to a pinned page; released on drop. A change that
/// must survive a crash is bracketed by [`PageWriteGuard::begin_change`]
/// and [`BufferPool::log_change`] ([`crate::page_log`]); one that need
/// not (a hint) calls [`PageWriteGuard::mark_dirty`] after changing the
/// page.
#[must_use = "the content lock is released when the guard is dropped"]
pub struct PageWriteGuard<'b> {
    guard: LwLockExclusiveGuard<'b, Frame>,
    desc: &'b BufferDesc,
    pool: &'b BufferPool,
    tag: BufferTag,
    pub(super) change: Change,
}

/// What a guard keeps between [`PageWriteGuard::begin_change`] and
/// [`BufferPool::log_change`].
/// Either way the guard keeps the page as it was: a change that is never
/// logged (its record's insertion failed: the log has failed) is put back
/// when the guard drops, so no page holds a change the log lacks.
pub(super) enum Change {
    /// No change begun (or no log attached).
    None,
    /// The page will be logged whole; the page as it was.
    Full(Box<PageBuf>),
    /// The page as it was, to log a delta against.
    Delta(Box<PageBuf>),
}

impl PageWriteGuard<'_> {
    /// Marks the buffer dirty (PostgreSQL's `MarkBufferDirty`): it will be
    /// written back before reuse and by [`BufferPool::flush_all`].
    pub fn mark_dirty(&mut self) {
        self.desc.set_flags(DIRTY);
    }

    /// The block this guard locks.
    pub fn tag(&self) -> BufferTag {
        self.tag
    }

    /// Starts a logged change of this page: keeps its before-image, and
    /// notes whether it will be logged whole (its first change since the
    /// last checkpoint's redo point) or as a delta. Should the change never
    /// be logged, dropping the guard puts the before-image back. Nothing
    /// when the pool has no log.
    pub fn begin_change(&mut self) {
        let Some(log) = self.pool.redo_log() else { return };
        if !matches!(self.change, Change::None) || self.pool.is_unlogged(self.tag.rel) {
            return;
        }
        let mut before = super::scratch::take();
        before.copy_from_slice(&self[..]);
        self.change = if page::lsn(self) <= log.redo_point() { Change::Full(before) } else { Change::Delta(before) };
    }
}

/// A locked page whose change [`BufferPool::log_change`] logs: a
/// [`PageWriteGuard`] (a trait so that one record can hold guards of
/// different lifetimes).
pub trait ChangedPage {
    /// The guard's parts the logging needs.
    #[doc(hidden)]
    fn parts(&mut self) -> PageParts<'_>;
}

/// What [`ChangedPage::parts`] lends.
#[doc(hidden)]
pub struct PageParts<'a> {
    pub(super) page: &'a mut PageBuf,
    pub(super) change: &'a mut Change,
    pub(super) desc: &'a BufferDesc,
    pub(super) pool: &'a BufferPool,
    pub(super) tag: BufferTag,
}

impl ChangedPage for PageWriteGuard<'_> {
    fn parts(&mut self) -> PageParts<'_> {
        PageParts { page: &mut self.guard, change: &mut self.change, desc: self.desc, pool: self.pool, tag: self.tag }
    }
}

impl PageParts<'_> {
    pub(super) fn mark_dirty(&self) {
        self.desc.set_flags(DIRTY);
    }
}

impl Drop for PageWriteGuard<'_> {
    fn drop(&mut self) {
        if let Change::Delta(before) | Change::Full(before) = std::mem::replace(&mut self.change, Change::None) {
            // A change begun but never logged (an error on the way, or a
            // panic): the page goes back to what the log knows of it, so
            // no write can take the change to disk, where recovery would
            // not know to take it back.
            if before[..] != self[..] {
                self.guard.copy_from_slice(&before[..]);
            }
            super::scratch::give(before);
        }
    }
}

impl Deref for PageWriteGuard<'_> {
    type Target = PageBuf;
    fn deref(&self) -> &PageBuf {
        &self.guard
    }
}

impl DerefMut for PageWriteGuard<'_> {
    fn deref_mut(&mut self) -> &mut PageBuf {
        &mut self.guard
    }
}
