//! Victim selection and write-back: finding a buffer to reuse (from the
//! caller's ring or the clock sweep), writing a dirty one back first —
//! alone, or in runs of consecutive blocks with one `pwritev` each — and
//! removing its old mapping entry.

use super::desc::{refcount, BufferDesc, DIRTY, IO_ERROR, IO_IN_PROGRESS, REFCOUNT_ONE, TAG_VALID, USAGE_MASK, VALID};
use super::guard::Victim;
use super::pool::BufferPool;
use super::ring::Ring;
use crate::error::{Result, StorageError};
use crate::page::{self, PageBuf, PAGE_SIZE};
use crate::stats::Counter;
use turnstile_sync::LwLockExclusiveGuard;

/// How a write-back gets its checksums onto the pages it writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Checksums {
    /// The caller holds the content locks exclusive and stamped them in
    /// place: write the pages as they are.
    Stamped,
    /// The caller holds the content locks shared: write checksummed copies.
    Copy,
}

/// The most pages one write-back `pwritev` carries (512 kB).
pub const MAX_WRITE_RUN: usize = 16;

/// How many times [`BufferPool::victim`] may find its candidate re-pinned,
/// re-dirtied or content-locked before it gives up, per pool buffer.
const VICTIM_RETRIES_PER_BUFFER: usize = 4;

impl BufferPool {
    /// A victim buffer: pinned only by the caller, clean, unmapped (step 2).
    /// A dirty candidate is written back alone, as PostgreSQL's
    /// `FlushBuffer` does.
    pub(crate) fn victim(&self, mut ring: Option<&mut Ring>) -> Result<Victim<'_>> {
        for _ in 0..self.descs.len() * VICTIM_RETRIES_PER_BUFFER {
            let (victim, state) = self.candidate(ring.as_deref_mut())?;
            let desc = &self.descs[victim.id as usize];
            if state & DIRTY != 0 {
                // Someone holding the content lock is using the page: pick
                // another victim rather than wait (PostgreSQL does the same).
                let Some(content) = desc.content.try_lock_shared() else { continue };
                if self.write_back(desc, &content)? {
                    self.counters.add(Counter::DirtyWritebacks, 1);
                }
            }
            if self.unmap(&victim, state) {
                return Ok(victim);
            }
        }
        Err(StorageError::AllBuffersPinned { shared_buffers: self.descs.len() })
    }

    /// `n` victims (see [`BufferPool::victim`]), all or none. Dirty
    /// candidates holding consecutive blocks of one relation are written
    /// back together, one `pwritev` per run of up to [`MAX_WRITE_RUN`]
    /// pages (Freund 2020: 16 × 8 kB per call instead of 16 calls) — with a
    /// bulk-write ring they are exactly that: the pages of an earlier bulk
    /// extension.
    pub(crate) fn victims(&self, n: usize, mut ring: Option<&mut Ring>) -> Result<Vec<Victim<'_>>> {
        let mut out = Vec::with_capacity(n);
        let mut attempts = 0;
        while out.len() < n {
            let wanted = n - out.len();
            attempts += wanted;
            if attempts > self.descs.len() * VICTIM_RETRIES_PER_BUFFER + n {
                return Err(StorageError::AllBuffersPinned { shared_buffers: self.descs.len() });
            }
            let mut candidates = Vec::with_capacity(wanted);
            for _ in 0..wanted {
                candidates.push(self.candidate(ring.as_deref_mut())?);
            }
            // Clean the dirty ones whose content lock is free, in runs.
            // Only we pin them, so nobody else wants their content lock:
            // take it exclusive and stamp the checksum in place, which
            // saves the copy a shared-lock write-back needs.
            let mut busy = vec![false; candidates.len()];
            let mut dirty = Vec::new();
            for (i, (victim, state)) in candidates.iter().enumerate() {
                if state & DIRTY == 0 {
                    continue;
                }
                let desc: &BufferDesc = &self.descs[victim.id as usize];
                match desc.content.try_lock_exclusive() {
                    Some(mut content) => {
                        let tag = desc.tag();
                        page::set_checksum(&mut content, tag.block);
                        dirty.push((tag, desc, content));
                    }
                    None => busy[i] = true,
                }
            }
            dirty.sort_by_key(|(tag, _, _)| *tag);
            let written = {
                let items: Vec<(&BufferDesc, &PageBuf)> = dirty.iter().map(|(_, d, c)| (*d, &***c)).collect();
                self.write_back_runs(&items, Checksums::Stamped)
            };
            drop(dirty);
            self.counters.add(Counter::DirtyWritebacks, written? as u64);
            for ((victim, state), busy) in candidates.into_iter().zip(busy) {
                if !busy && self.unmap(&victim, state) {
                    out.push(victim);
                }
            }
        }
        Ok(out)
    }

    /// Picks a candidate from `ring` or the clock sweep and pins it under
    /// its header lock (PostgreSQL's `PinBuffer_Locked`); returns it with
    /// the state it had then.
    fn candidate(&self, ring: Option<&mut Ring>) -> Result<(Victim<'_>, u32)> {
        let (id, mut h) = match ring {
            Some(r) => match r.next(&self.descs) {
                Some(found) => found,
                None => {
                    let found = self.clock.victim(&self.descs)?;
                    r.put(found.0);
                    found
                }
            },
            None => self.clock.victim(&self.descs)?,
        };
        debug_assert_eq!(refcount(h.state), 0);
        h.state += REFCOUNT_ONE;
        let state = h.state;
        drop(h);
        Ok((Victim { pool: self, id }, state))
    }

    /// Removes a clean candidate's old mapping entry. `false` if it was
    /// pinned or dirtied again meanwhile: not a victim after all.
    fn unmap(&self, victim: &Victim<'_>, state: u32) -> bool {
        if state & TAG_VALID == 0 {
            return true;
        }
        let desc = &self.descs[victim.id as usize];
        let old = desc.tag();
        let mut map = self.lock_mapping_exclusive(&old);
        let mut h = desc.lock_header();
        if refcount(h.state) != 1 || h.state & DIRTY != 0 {
            return false;
        }
        h.state &= !(TAG_VALID | VALID | IO_ERROR | USAGE_MASK);
        drop(h);
        let removed = map.remove(&old);
        debug_assert_eq!(removed, Some(victim.id), "mapping and TAG_VALID disagree");
        drop(map);
        self.counters.add(Counter::Evictions, 1);
        true
    }

    /// Writes back the dirty buffers among `items` (sorted by tag; each
    /// pinned by the caller with its content lock held shared), one
    /// `pwritev` per run of consecutive blocks. Returns the pages written.
    pub(super) fn write_back_runs(&self, items: &[(&BufferDesc, &PageBuf)], checksums: Checksums) -> Result<usize> {
        let mut written = 0;
        let mut start = 0;
        while start < items.len() {
            let first = items[start].0.tag();
            let mut end = start + 1;
            while end < items.len() && end - start < MAX_WRITE_RUN {
                let tag = items[end].0.tag();
                if (tag.rel, tag.fork) != (first.rel, first.fork) || tag.block != first.block + (end - start) as u32 {
                    break;
                }
                end += 1;
            }
            written += self.write_back_run(&items[start..end], checksums)?;
            start = end;
        }
        Ok(written)
    }

    /// Writes one run of consecutive dirty buffers. Buffers someone else
    /// cleaned first split the run.
    fn write_back_run(&self, run: &[(&BufferDesc, &PageBuf)], checksums: Checksums) -> Result<usize> {
        // I/O locks in buffer order; nobody else holds several.
        let mut order: Vec<usize> = (0..run.len()).collect();
        order.sort_by_key(|&i| run[i].0 as *const BufferDesc as usize);
        let mut ios: Vec<Option<LwLockExclusiveGuard<'_, ()>>> = (0..run.len()).map(|_| None).collect();
        for i in order {
            ios[i] = Some(run[i].0.io.lock_exclusive());
        }
        let mut still_dirty = vec![false; run.len()];
        for (i, (desc, _)) in run.iter().enumerate() {
            let mut h = desc.lock_header();
            if h.state & DIRTY != 0 {
                h.state |= IO_IN_PROGRESS;
                still_dirty[i] = true;
            }
        }
        let mut result = Ok(0);
        let mut i = 0;
        while i < run.len() {
            if !still_dirty[i] {
                i += 1;
                continue;
            }
            let mut j = i;
            while j < run.len() && still_dirty[j] {
                j += 1;
            }
            let first = run[i].0.tag();
            let outcome = self.wal_before_data(run[i..j].iter().map(|(_, p)| *p)).and_then(|()| match checksums {
                Checksums::Stamped => {
                    let refs: Vec<&PageBuf> = run[i..j].iter().map(|(_, p)| *p).collect();
                    self.store.write_pages(first, &refs)
                }
                Checksums::Copy => with_scratch_run(j - i, |copies| {
                    for (k, copy) in copies.iter_mut().enumerate() {
                        copy.copy_from_slice(run[i + k].1);
                        page::set_checksum(copy, first.block + k as u32);
                    }
                    let refs: Vec<&PageBuf> = copies.iter().map(|c| &**c).collect();
                    self.store.write_pages(first, &refs)
                }),
            });
            for (desc, _) in &run[i..j] {
                let mut h = desc.lock_header();
                debug_assert!(h.state & IO_IN_PROGRESS != 0, "IO_IN_PROGRESS cleared under the I/O lock's holder");
                h.state &= !IO_IN_PROGRESS;
                if outcome.is_ok() {
                    h.state &= !(DIRTY | IO_ERROR);
                } else {
                    h.state |= IO_ERROR;
                }
            }
            match outcome {
                Ok(()) => {
                    self.counters.add(Counter::Writes, (j - i) as u64);
                    if let Ok(n) = &mut result {
                        *n += j - i;
                    }
                }
                Err(e) => {
                    // Clear IO_IN_PROGRESS on the rest before reporting.
                    for (k, (desc, _)) in run.iter().enumerate().skip(j) {
                        if still_dirty[k] {
                            desc.lock_header().state &= !IO_IN_PROGRESS;
                        }
                    }
                    return Err(e);
                }
            }
            i = j;
        }
        drop(ios);
        result
    }

    /// Writes a dirty buffer's page out (PostgreSQL's `FlushBuffer`): the
    /// caller pins it and holds its content lock shared, so the page
    /// cannot change while its checksummed copy is written. Returns
    /// whether a write happened (the buffer may have been cleaned by
    /// someone else first).
    pub(super) fn write_back(&self, desc: &BufferDesc, content: &PageBuf) -> Result<bool> {
        let _io = desc.io.lock_exclusive();
        {
            let mut h = desc.lock_header();
            if h.state & DIRTY == 0 {
                return Ok(false);
            }
            h.state |= IO_IN_PROGRESS;
        }
        let tag = desc.tag();
        let result = self.wal_before_data([content]).and_then(|()| {
            with_scratch(|copy| {
                copy.copy_from_slice(content);
                page::set_checksum(copy, tag.block);
                self.store.write_pages(tag, &[copy])
            })
        });
        let mut h = desc.lock_header();
        debug_assert!(h.state & IO_IN_PROGRESS != 0, "IO_IN_PROGRESS cleared under the I/O lock's holder");
        h.state &= !IO_IN_PROGRESS;
        match result {
            Ok(()) => {
                h.state &= !(DIRTY | IO_ERROR);
                drop(h);
                self.counters.add(Counter::Writes, 1);
                Ok(true)
            }
            Err(e) => {
                h.state |= IO_ERROR;
                Err(e)
            }
        }
    }
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Box<PageBuf>> = std::cell::RefCell::new(Box::new([0; PAGE_SIZE]));
}

thread_local! {
    static SCRATCH_RUN: std::cell::RefCell<Vec<Box<PageBuf>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `f` on `n` scratch pages of this thread (the checksummed copies
/// of a write-back run).
fn with_scratch_run<R>(n: usize, f: impl FnOnce(&mut [Box<PageBuf>]) -> R) -> R {
    SCRATCH_RUN.with(|s| match s.try_borrow_mut() {
        Ok(mut pages) => {
            while pages.len() < n {
                pages.push(Box::new([0; PAGE_SIZE]));
            }
            f(&mut pages[..n])
        }
        Err(_) => f(&mut (0..n).map(|_| Box::new([0; PAGE_SIZE])).collect::<Vec<_>>()),
    })
}

/// Runs `f` on this thread's scratch page (the checksummed copy written
/// out, so the shared page is never modified by a write-out).
fn with_scratch<R>(f: impl FnOnce(&mut PageBuf) -> R) -> R {
    SCRATCH.with(|s| match s.try_borrow_mut() {
        Ok(mut page) => f(&mut page),
        Err(_) => f(&mut Box::new([0; PAGE_SIZE])),
    })
}
