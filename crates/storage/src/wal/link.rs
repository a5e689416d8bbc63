//! [`LinkBuf`]: the contiguously-written prefix of the ring without a
//! global lock (InnoDB 8.0's `link_buf`, WL#10310), for `wal.insert =
//! scalable`.
//!
//! An inserter that finished copying `[start, end)` stores `end` in slot
//! `start / 32 mod slots` (records are at least 32 bytes, so two records
//! of one lap never share a slot). The one consumer, the WAL writer,
//! follows the links from its `tail`: while `slot(tail) > tail`, the record
//! at `tail` is complete and `tail` moves to its end.
//!
//! Invariants:
//! * `tail` = the end of the longest prefix of records all copied
//!   (`copied`); every byte below it is in the ring (published by the
//!   `Release` store of the link, read after the `Acquire` load of it).
//! * A slot's stale value, from an earlier lap, is `≤ tail` when `tail`
//!   reaches the slot's next record: the older record ended one lap
//!   earlier. So no slot is ever cleared.
//! * A record is copied only once its bytes are free in the ring
//!   (`written + capacity ≥ end`), hence after the consumer passed the
//!   record that used the slot a lap before.
//!
//! The consumer, before it sleeps, announces it and re-reads the link
//! after a `SeqCst` fence, and an inserter reads that announcement after
//! its link store and a `SeqCst` fence ([`super::scalable::WriterBell`]):
//! one of the two sees the other (`tests/loom_wal.rs` checks it). The
//! link store is `Release` (it publishes the record's words) and the
//! consumer's loads `Acquire`.
//!
//! ```
//! use turnstile_storage::wal::link::LinkBuf;
//! let link = LinkBuf::new(1024, 64);
//! link.complete(96, 160);
//! assert_eq!(link.advance(), 64, "the record at 64 is not copied yet");
//! link.complete(64, 96);
//! assert_eq!(link.advance(), 160);
//! ```

use super::record::HEADER_BYTES;
use crate::sync::atomic::{AtomicU64, Ordering};

/// The link buffer.
#[derive(Debug)]
pub struct LinkBuf {
    slots: Box<[AtomicU64]>,
    mask: u64,
    tail: AtomicU64,
}

impl LinkBuf {
    /// Links for a ring of `ring_bytes`, whose copied prefix starts at `start`.
    pub fn new(ring_bytes: u64, start: u64) -> LinkBuf {
        let n = (ring_bytes / HEADER_BYTES as u64).max(1);
        assert!(n.is_power_of_two(), "the link buffer's size is a power of two");
        LinkBuf { slots: (0..n).map(|_| AtomicU64::new(0)).collect(), mask: n - 1, tail: AtomicU64::new(start) }
    }

    fn slot(&self, start: u64) -> &AtomicU64 {
        &self.slots[((start / HEADER_BYTES as u64) & self.mask) as usize]
    }

    /// The record `[start, end)` is fully copied.
    #[inline]
    pub fn complete(&self, start: u64, end: u64) {
        debug_assert!(end > start, "an empty record");
        self.slot(start).store(end, Ordering::Release);
    }

    /// Whether the record at the current tail is complete (the consumer's
    /// re-check before it sleeps).
    pub fn has_next(&self) -> bool {
        let tail = self.tail.load(Ordering::Relaxed);
        self.slot(tail).load(Ordering::Acquire) > tail
    }

    /// Follows the links from the tail and returns the new copied prefix.
    /// One consumer at a time (the WAL writer).
    pub fn advance(&self) -> u64 {
        let mut tail = self.tail.load(Ordering::Relaxed);
        loop {
            let end = self.slot(tail).load(Ordering::Acquire);
            if end <= tail {
                break;
            }
            tail = end;
        }
        self.tail.store(tail, Ordering::Release);
        tail
    }

    /// The copied prefix as last advanced.
    pub fn tail(&self) -> u64 {
        self.tail.load(Ordering::Acquire)
    }
}
