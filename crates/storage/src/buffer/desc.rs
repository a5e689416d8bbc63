//! Buffer descriptors: one atomic state word per buffer, the buffer's tag,
//! its I/O lock and its content lock (PostgreSQL's `BufferDesc`).
//!
//! # State word
//!
//! | bits   | name               | meaning and invariant |
//! |--------|--------------------|-----------------------|
//! | 0..18  | refcount           | pins held on the buffer, by anyone; `> 0` ⇒ the buffer is never chosen as a victim, its tag never changes |
//! | 18..22 | usage count        | clock-sweep popularity, `≤ MAX_USAGE_COUNT`; a pin raises it, a sweep pass lowers it |
//! | 22     | [`LOCKED`]         | the header lock: its holder may change the tag and any bit with a plain store; everyone else changes the word only by CAS from a value without `LOCKED` |
//! | 23     | [`DIRTY`]          | the page differs from disk; set only under an exclusive content lock; set ⇒ `VALID` |
//! | 24     | [`VALID`]          | the page holds the block's contents; set ⇒ `TAG_VALID` |
//! | 25     | [`TAG_VALID`]      | the tag names a block and the mapping table points here: `TAG_VALID ⇔ mapping[tag] = this buffer` (both changed under the tag's partition lock, exclusive) |
//! | 26     | [`IO_IN_PROGRESS`] | a read-in, write-out or new-page initialisation is running; set ⇔ its performer holds the buffer's I/O lock exclusive |
//! | 27     | [`IO_ERROR`]       | the last I/O on this buffer failed |
//!
//! The tag (relation, fork, block) is stored in two atomics written only
//! under the header lock; it may be read with the header lock, or while
//! holding a pin on a `TAG_VALID` buffer (a pin freezes it).
//!
//! # The pin / eviction handshake
//!
//! A pin is a CAS `refcount += 1` on a word without `LOCKED`. A victim is
//! chosen only by setting `LOCKED` with a CAS on a word whose refcount is
//! 0. Both are CASes on the same word, so one of them sees the other: a
//! pinned buffer is never chosen, and a buffer being chosen is not pinned
//! until the chooser has pinned it itself and released the header. Before
//! re-tagging, the evictor takes the old tag's partition lock exclusive
//! and re-checks under the header lock that its own pin is the only one;
//! a reader pins only while holding that partition's lock (shared) and
//! finding the mapping entry, so it either pinned first (the evictor gives
//! up) or finds no entry (it never sees the re-tagged buffer).
//! `tests/loom_pin.rs` model-checks this.

use crate::page::PAGE_SIZE;
use crate::rel::{BufferTag, Fork, RelFileId};
use crate::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use turnstile_sync::{LwLock, LwLockPolicy, Tranche};

/// A buffer's page memory: one frame of the pool's mapping.
pub(crate) type Frame = turnstile_sync::frames::Frame<PAGE_SIZE>;

/// Index of a buffer in the pool.
pub type BufferId = u32;

/// Mask of the pin count.
pub const REFCOUNT_MASK: u32 = (1 << 18) - 1;
/// One pin.
pub const REFCOUNT_ONE: u32 = 1;
/// Shift of the usage count.
pub const USAGE_SHIFT: u32 = 18;
/// Mask of the usage count.
pub const USAGE_MASK: u32 = 0xf << USAGE_SHIFT;
/// One unit of usage count.
pub const USAGE_ONE: u32 = 1 << USAGE_SHIFT;
/// Highest usage count (PostgreSQL's `BM_MAX_USAGE_COUNT`).
pub const MAX_USAGE_COUNT: u32 = 5;
/// The header lock.
pub const LOCKED: u32 = 1 << 22;
/// The page is newer than its disk copy.
pub const DIRTY: u32 = 1 << 23;
/// The page is loaded.
pub const VALID: u32 = 1 << 24;
/// The tag is valid and mapped.
pub const TAG_VALID: u32 = 1 << 25;
/// An I/O is running.
pub const IO_IN_PROGRESS: u32 = 1 << 26;
/// The last I/O failed.
pub const IO_ERROR: u32 = 1 << 27;

const FLAGS: u32 = LOCKED | DIRTY | VALID | TAG_VALID | IO_IN_PROGRESS | IO_ERROR;
const _: () = assert!(REFCOUNT_MASK & USAGE_MASK == 0, "refcount and usage overlap");
const _: () = assert!((REFCOUNT_MASK | USAGE_MASK) & FLAGS == 0, "counts and flags overlap");
const _: () = assert!(MAX_USAGE_COUNT <= USAGE_MASK >> USAGE_SHIFT, "usage count does not fit");
const _: () = assert!(FLAGS.count_ones() == 6, "flags share a bit");

/// The pin count in `state`.
#[inline(always)]
pub const fn refcount(state: u32) -> u32 {
    state & REFCOUNT_MASK
}

/// The usage count in `state`.
#[inline(always)]
pub const fn usage_count(state: u32) -> u32 {
    (state & USAGE_MASK) >> USAGE_SHIFT
}

/// One buffer's descriptor. See the module documentation.
///
/// `repr(C)`, in this order, so that a buffer hit — pin CAS, tag check,
/// content-lock CAS, page pointer — touches one cache line of the
/// descriptor (the wait queues and the I/O lock come after): PostgreSQL
/// packs its `BufferDesc` into one line for the same reason.
#[derive(Debug)]
#[repr(C)]
pub(crate) struct BufferDesc {
    pub(crate) state: AtomicU32,
    /// `db << 32 | rel`, written under the header lock.
    tag_rel: AtomicU64,
    /// `fork << 32 | block`, written under the header lock.
    tag_block: AtomicU64,
    /// The page, behind its content lock (tranche `BufferContent`).
    pub(crate) content: LwLock<Frame>,
    /// Held exclusive by whoever performs I/O on the buffer
    /// (`IO_IN_PROGRESS`); waiters for that I/O queue on it (tranche
    /// `BufferIO`, PostgreSQL ≤ 13's `io_in_progress_lock`).
    pub(crate) io: LwLock<()>,
}

impl BufferDesc {
    pub(crate) fn new(policy: LwLockPolicy, frame: Frame) -> BufferDesc {
        BufferDesc {
            state: AtomicU32::new(0),
            tag_rel: AtomicU64::new(0),
            tag_block: AtomicU64::new(0),
            io: LwLock::new(Tranche::BufferIo, policy, ()),
            content: LwLock::new(Tranche::BufferContent, policy, frame),
        }
    }

    /// The tag. Meaningful under the header lock, or with a pin on a
    /// `TAG_VALID` buffer.
    #[inline]
    pub(crate) fn tag(&self) -> BufferTag {
        let r = self.tag_rel.load(Ordering::Relaxed);
        let b = self.tag_block.load(Ordering::Relaxed);
        BufferTag::new(RelFileId::new((r >> 32) as u32, r as u32), Fork::from_u8((b >> 32) as u8), b as u32)
    }

    /// Takes the header lock, spinning while someone else holds it.
    #[inline]
    pub(crate) fn lock_header(&self) -> HeaderGuard<'_> {
        let backoff = crossbeam_utils::Backoff::new();
        loop {
            let old = self.state.fetch_or(LOCKED, Ordering::Acquire);
            if old & LOCKED == 0 {
                return HeaderGuard { desc: self, state: old | LOCKED };
            }
            while self.state.load(Ordering::Relaxed) & LOCKED != 0 {
                snooze(&backoff);
            }
        }
    }

    /// Takes the header lock only if the buffer is unpinned, for victim
    /// selection: `None` if it is pinned (or became so).
    #[inline]
    pub(crate) fn lock_header_if_unpinned(&self) -> Option<HeaderGuard<'_>> {
        let backoff = crossbeam_utils::Backoff::new();
        let mut old = self.state.load(Ordering::Relaxed);
        loop {
            if refcount(old) != 0 {
                return None;
            }
            if old & LOCKED != 0 {
                snooze(&backoff);
                old = self.state.load(Ordering::Relaxed);
                continue;
            }
            match self.state.compare_exchange_weak(old, old | LOCKED, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return Some(HeaderGuard { desc: self, state: old | LOCKED }),
                Err(now) => old = now,
            }
        }
    }

    /// Adds a pin (PostgreSQL's `PinBuffer`). With a ring strategy the
    /// usage count only goes from 0 to 1, so ring buffers stay cheap to
    /// reuse; otherwise it rises up to [`MAX_USAGE_COUNT`]. Returns the new
    /// state.
    #[inline]
    pub(crate) fn pin(&self, ring: bool) -> u32 {
        let backoff = crossbeam_utils::Backoff::new();
        let mut old = self.state.load(Ordering::Relaxed);
        loop {
            if old & LOCKED != 0 {
                snooze(&backoff);
                old = self.state.load(Ordering::Relaxed);
                continue;
            }
            debug_assert!(refcount(old) < REFCOUNT_MASK, "pin count overflow");
            let mut new = old + REFCOUNT_ONE;
            let usage = usage_count(old);
            if (ring && usage == 0) || (!ring && usage < MAX_USAGE_COUNT) {
                new += USAGE_ONE;
            }
            match self.state.compare_exchange_weak(old, new, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return new,
                Err(now) => old = now,
            }
        }
    }

    /// Drops a pin (PostgreSQL's `UnpinBuffer`).
    #[inline]
    pub(crate) fn unpin(&self) {
        let backoff = crossbeam_utils::Backoff::new();
        let mut old = self.state.load(Ordering::Relaxed);
        loop {
            if old & LOCKED != 0 {
                snooze(&backoff);
                old = self.state.load(Ordering::Relaxed);
                continue;
            }
            assert!(refcount(old) > 0, "unpinned a buffer nobody pinned");
            match self.state.compare_exchange_weak(old, old - REFCOUNT_ONE, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => return,
                Err(now) => old = now,
            }
        }
    }

    /// Sets `bits` in the state word by CAS (outside the header lock).
    #[inline]
    pub(crate) fn set_flags(&self, bits: u32) {
        let backoff = crossbeam_utils::Backoff::new();
        let mut old = self.state.load(Ordering::Relaxed);
        loop {
            if old & LOCKED != 0 {
                snooze(&backoff);
                old = self.state.load(Ordering::Relaxed);
                continue;
            }
            if old & bits == bits {
                return;
            }
            match self.state.compare_exchange_weak(old, old | bits, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => return,
                Err(now) => old = now,
            }
        }
    }

    /// The current state (a racy snapshot unless pinned or locked).
    #[inline]
    pub(crate) fn load(&self) -> u32 {
        self.state.load(Ordering::Acquire)
    }
}

fn snooze(backoff: &crossbeam_utils::Backoff) {
    #[cfg(loom)]
    {
        let _ = backoff;
        crate::sync::thread::yield_now();
    }
    #[cfg(not(loom))]
    backoff.snooze();
}

/// The header lock of one buffer; dropping it publishes `state` (without
/// `LOCKED`) with one `Release` store.
#[must_use = "the header lock is released when the guard is dropped"]
pub(crate) struct HeaderGuard<'a> {
    desc: &'a BufferDesc,
    /// The state word as it will be published (with `LOCKED` while held).
    pub(crate) state: u32,
}

impl HeaderGuard<'_> {
    /// Re-tags the buffer (header lock held, so nobody reads a torn tag).
    pub(crate) fn set_tag(&mut self, tag: BufferTag) {
        let r = (u64::from(tag.rel.db) << 32) | u64::from(tag.rel.rel);
        let b = (u64::from(tag.fork as u8) << 32) | u64::from(tag.block);
        self.desc.tag_rel.store(r, Ordering::Relaxed);
        self.desc.tag_block.store(b, Ordering::Relaxed);
    }
}

impl Drop for HeaderGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        debug_assert!(self.state & LOCKED != 0);
        self.desc.state.store(self.state & !LOCKED, Ordering::Release);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use turnstile_sync::CachePadded;

    fn frames(n: usize) -> Vec<Frame> {
        turnstile_sync::frames::frames(n, false).unwrap()
    }

    #[test]
    fn descriptors_do_not_share_cache_lines() {
        let descs: Vec<CachePadded<BufferDesc>> =
            frames(3).into_iter().map(|f| CachePadded::new(BufferDesc::new(LwLockPolicy::Fair, f))).collect();
        assert_eq!(std::mem::align_of::<CachePadded<BufferDesc>>() % 128, 0);
        assert_eq!(std::mem::size_of::<CachePadded<BufferDesc>>() % 128, 0);
        let a = &descs[0].state as *const _ as usize;
        let b = &descs[1].state as *const _ as usize;
        assert!(b - a >= 128, "state words {a:#x} and {b:#x} share a line");
    }

    #[test]
    fn a_buffer_hit_touches_one_line_of_the_descriptor() {
        let mut d = BufferDesc::new(LwLockPolicy::Fair, frames(1).remove(0));
        let base = &d as *const BufferDesc as usize;
        let end_of = |p: usize, size: usize| p + size - base;
        assert!(end_of(&d.state as *const _ as usize, 4) <= 64);
        assert!(end_of(&d.tag_block as *const _ as usize, 8) <= 64);
        // The content lock's state word is its first field (`repr(C)`).
        assert!(end_of(&d.content as *const _ as usize, 4) <= 64);
        let page_pointer = d.content.get_mut() as *mut Frame as usize;
        assert!(end_of(page_pointer, 8) <= 64, "the page pointer is {} bytes in", page_pointer - base);
    }

    #[test]
    fn pin_and_header_lock_exclude_each_other() {
        let d = BufferDesc::new(LwLockPolicy::Fair, frames(1).remove(0));
        assert_eq!(refcount(d.pin(false)), 1);
        assert!(d.lock_header_if_unpinned().is_none(), "a pinned buffer was locked as a victim");
        d.unpin();
        let mut h = d.lock_header_if_unpinned().expect("unpinned");
        h.set_tag(BufferTag::new(RelFileId::new(3, 4), Fork::FreeSpace, 99));
        h.state |= TAG_VALID;
        drop(h);
        assert_eq!(d.tag(), BufferTag::new(RelFileId::new(3, 4), Fork::FreeSpace, 99));
        // Ring pins stop the usage count at 1; normal pins climb to the maximum.
        for _ in 0..10 {
            d.pin(true);
        }
        assert_eq!(usage_count(d.load()), 1);
        for _ in 0..10 {
            d.pin(false);
        }
        assert_eq!(usage_count(d.load()), MAX_USAGE_COUNT);
        assert_eq!(refcount(d.load()), 20);
    }
}
