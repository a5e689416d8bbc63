//! [`Ring`]: the in-memory WAL buffer (`wal.buffers` bytes), a ring of
//! 8-byte atomic words addressed by LSN.
//!
//! Records are 8-byte aligned, so every word belongs to one record and
//! inserters copy into disjoint words with no lock (`Relaxed` stores:
//! a plain `mov` on x86). What publishes the words to the writer is the
//! profile's completion store (`Release` or stronger): the insertion slot
//! of `classic`, the link buffer of `scalable`. The writer's matching
//! `Acquire` load precedes its `Relaxed` word loads.
//!
//! Invariant: an inserter copies `[start, end)` only once
//! `written + capacity ≥ end`, so it never overwrites bytes not yet written
//! out.
//!
//! ```
//! use turnstile_storage::wal::ring::Ring;
//! let ring = Ring::new(64);
//! ring.store(56, &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
//! let mut out = Vec::new();
//! ring.load(56, 72, &mut out);
//! assert_eq!(out[8], 9);
//! ```

use crate::sync::atomic::{AtomicU64, Ordering};

/// The ring of words.
#[derive(Debug)]
pub struct Ring {
    words: Box<[AtomicU64]>,
    mask: u64,
}

impl Ring {
    /// A ring of `bytes` bytes (a power of two, at least 8).
    pub fn new(bytes: u64) -> Ring {
        assert!(bytes.is_power_of_two() && bytes >= 8, "the WAL ring is a power of two of at least 8 bytes");
        let n = (bytes / 8) as usize;
        Ring { words: (0..n).map(|_| AtomicU64::new(0)).collect(), mask: bytes / 8 - 1 }
    }

    /// Bytes the ring holds.
    pub fn capacity(&self) -> u64 {
        (self.mask + 1) * 8
    }

    /// Copies `bytes` (a multiple of 8 long) to positions `at..`.
    #[inline]
    pub fn store(&self, at: u64, bytes: &[u8]) {
        debug_assert!(at % 8 == 0 && bytes.len() % 8 == 0, "unaligned ring copy");
        debug_assert!(bytes.len() as u64 <= self.capacity(), "a copy larger than the ring");
        for (word, chunk) in (at / 8..).zip(bytes.chunks_exact(8)) {
            let v = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
            self.words[(word & self.mask) as usize].store(v, Ordering::Relaxed);
        }
    }

    /// Appends the bytes at positions `from..to` to `out`.
    pub fn load(&self, from: u64, to: u64, out: &mut Vec<u8>) {
        debug_assert!(from % 8 == 0 && to % 8 == 0 && to - from <= self.capacity(), "bad ring range");
        out.reserve((to - from) as usize);
        for word in from / 8..to / 8 {
            out.extend_from_slice(&self.words[(word & self.mask) as usize].load(Ordering::Relaxed).to_le_bytes());
        }
    }
}
