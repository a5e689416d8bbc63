//! Logging a change of locked pages as one record, and WAL before data
//! ([`crate::page_log`] has the record layout and the rules).

use super::guard::{Change, ChangedPage};
use super::pool::BufferPool;
use super::scratch;
use crate::error::{Result, StorageError};
use crate::page::{self, PageBuf};
use crate::page_log::{self, ImageKind, RecordKind, RedoLog};
use crate::rel::BufferTag;
use std::cell::RefCell;
use std::sync::Arc;

thread_local! {
    /// The record being built and a page image's scratch, reused.
    static BUFS: RefCell<(Vec<u8>, Vec<u8>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

impl BufferPool {
    /// Attaches the write-ahead log: from now on [`BufferPool::log_change`]
    /// logs, and a page is written back only once the log is durable up to
    /// its LSN. Fails if a log is attached already.
    pub fn set_redo_log(&self, log: Arc<dyn RedoLog>) -> Result<()> {
        self.redo.set(log).map_err(|_| StorageError::Config("a write-ahead log is attached already".into()))
    }

    /// Marks `rel` unlogged (or logged again): from now on its changes
    /// are not written to the WAL.
    pub fn set_unlogged(&self, rel: crate::rel::RelFileId, unlogged: bool) {
        self.unlogged.set(rel, unlogged);
    }

    /// Whether `rel` is unlogged.
    pub fn is_unlogged(&self, rel: crate::rel::RelFileId) -> bool {
        self.unlogged.contains(rel, self as *const BufferPool as usize)
    }

    /// The attached write-ahead log, if any.
    pub fn redo_log(&self) -> Option<&Arc<dyn RedoLog>> {
        self.redo.get()
    }

    /// Logs the change just made to `pages` (each begun with
    /// [`PageWriteGuard::begin_change`], and all still locked) as one
    /// record with the access method's `data`, stamps each page with the
    /// record's end LSN and marks it dirty. Returns that LSN (0 when no log
    /// is attached: the pages are only marked dirty).
    pub fn log_change(&self, kind: RecordKind, pages: &mut [&mut dyn ChangedPage], data: &[u8]) -> Result<u64> {
        let log = self.redo_log().filter(|_| !pages.first_mut().is_some_and(|g| self.is_unlogged(g.parts().tag.rel)));
        let Some(log) = log else {
            for g in pages.iter_mut() {
                g.parts().mark_dirty();
            }
            return Ok(0);
        };
        debug_assert!(pages.iter_mut().all(|g| std::ptr::eq(g.parts().pool, self)), "a page of another pool");
        // A checkpoint may have begun since `begin_change`: a page not
        // changed since its redo point is logged whole after all.
        let redo = log.redo_point();
        let (lsn, deltas) = BUFS.with(|b| {
            let (rec, img) = &mut *b.borrow_mut();
            rec.clear();
            rec.push(u8::try_from(pages.len()).expect("a change touches few pages"));
            let (mut fulls, mut deltas) = (0, 0);
            for g in pages.iter_mut() {
                let g = g.parts();
                img.clear();
                let kind = match &*g.change {
                    Change::Delta(before) if page::lsn(before) > redo => {
                        deltas += 1;
                        page_log::encode_delta(before, g.page, img);
                        ImageKind::Delta
                    }
                    Change::Delta(_) | Change::Full(_) | Change::None => {
                        page_log::encode_full(g.page, img);
                        fulls += 1;
                        ImageKind::Full
                    }
                };
                page_log::encode_page(g.tag, kind, img, rec);
            }
            log.insert(kind, &[rec, data], fulls).map(|lsn| (lsn, deltas))
        })?;
        for g in pages.iter_mut() {
            let g = g.parts();
            if let Change::Delta(before) | Change::Full(before) = std::mem::replace(g.change, Change::None) {
                scratch::give(before);
            }
            page::set_lsn(g.page, lsn);
            g.mark_dirty();
        }
        if deltas > 0 && log.redo_moved_since(redo) {
            // The redo point moved while the record was inserted, and it
            // may lie before the record: what follows it for these pages
            // must start from a whole image (a torn write of the page by
            // that checkpoint is repaired from it).
            return self.log_images(log.as_ref(), kind, pages);
        }
        Ok(lsn)
    }

    /// Logs each page of `pages` whole, in one record, and stamps them.
    fn log_images(&self, log: &dyn RedoLog, kind: RecordKind, pages: &mut [&mut dyn ChangedPage]) -> Result<u64> {
        let kind = RecordKind { xid: 0, info: 0, ..kind };
        let lsn = BUFS.with(|b| {
            let (rec, img) = &mut *b.borrow_mut();
            rec.clear();
            rec.push(u8::try_from(pages.len()).expect("a change touches few pages"));
            for g in pages.iter_mut() {
                let g = g.parts();
                img.clear();
                page_log::encode_full(g.page, img);
                page_log::encode_page(g.tag, ImageKind::Full, img, rec);
            }
            log.insert(kind, &[rec], pages.len())
        })?;
        for g in pages.iter_mut() {
            page::set_lsn(g.parts().page, lsn);
        }
        Ok(lsn)
    }

    /// Logs pages written outside the pool (an index build): each as a
    /// full image in a record of its own, stamped with its LSN; returns
    /// once the log is durable up to the last (WAL before data), so the
    /// caller may write them. Nothing without a log.
    pub fn log_new_pages(&self, kind: RecordKind, first: BufferTag, pages: &mut [Box<PageBuf>]) -> Result<()> {
        let Some(log) = self.redo_log().filter(|_| !self.is_unlogged(first.rel)) else { return Ok(()) };
        let mut last = 0;
        BUFS.with(|b| {
            let (rec, img) = &mut *b.borrow_mut();
            for (i, p) in pages.iter_mut().enumerate() {
                let tag = BufferTag { block: first.block + i as u32, ..first };
                rec.clear();
                img.clear();
                rec.push(1);
                page_log::encode_full(p, img);
                page_log::encode_page(tag, ImageKind::Full, img, rec);
                last = log.insert(kind, &[rec], 1)?;
                page::set_lsn(p, last);
            }
            Ok::<_, StorageError>(())
        })?;
        log.flush(last)
    }

    /// WAL before data: returns once the log is durable up to the highest
    /// LSN among `pages`, which are about to be written.
    pub(super) fn wal_before_data<'p>(&self, pages: impl IntoIterator<Item = &'p PageBuf>) -> Result<()> {
        let Some(log) = self.redo_log() else { return Ok(()) };
        let lsn = pages.into_iter().map(page::lsn).max().unwrap_or(0);
        if lsn > 0 {
            log.flush(lsn)?;
        }
        Ok(())
    }
}
