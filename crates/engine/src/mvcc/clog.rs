//! The transaction status log: one 32-bit word per transaction id of this
//! run (PostgreSQL's `pg_xact`, with room for a commit sequence number).
//!
//! | word | meaning |
//! |---|---|
//! | [`IN_PROGRESS`] (0) | assigned, not ended (or never assigned) |
//! | [`ABORTED`] | rolled back; its writes count for nobody ([`super::visibility`]) and were undone before this was set (an undo that failed was reported with its cause) |
//! | [`COMMITTING`] | `csn` commit under way: its number is being drawn (a reader waits, a few instructions) |
//! | [`COMMITTED`] | committed (`procarray` snapshots need no number) |
//! | `>= FIRST_CSN` | committed with this commit sequence number (`csn`) |
//!
//! A word changes only from `IN_PROGRESS` to one of the others, by the
//! transaction's own backend, and (`csn`) from `COMMITTING` to a number.
//! [`XactLog::set`] fails ([`NoStatusWord`]) for an id the log has no word
//! for, rather than losing the status.
//! Reads are plain atomic loads: a visibility check costs one load.
//!
//! Transaction ids below [`XactLog::base`] belong to an earlier run of the
//! engine and count as committed and visible to every snapshot: a clean
//! shutdown rolls back every open transaction through its undo log, so no
//! tuple written by an aborted transaction of an earlier run remains.
//!
//! The words live in segments of `2^segment_bits` ids, allocated on first
//! use and kept until the engine closes (4 bytes per transaction id).

use std::sync::OnceLock;
use turnstile_sync::sync::atomic::{AtomicU32, Ordering};

/// Assigned, not ended.
pub const IN_PROGRESS: u32 = 0;
/// Rolled back.
pub const ABORTED: u32 = 1;
/// A `csn` commit is drawing its number.
pub const COMMITTING: u32 = 2;
/// Committed (`procarray` snapshots).
pub const COMMITTED: u32 = 3;
/// The first commit sequence number.
pub const FIRST_CSN: u32 = 4;

/// Segments in the directory: with 2^16-id segments, every 32-bit id has one.
const SEGMENTS: usize = 1 << 16;

/// A transaction id the log has no status word for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the transaction status log has no room for transaction id {xid} (this run's first id is {base})")]
pub struct NoStatusWord {
    /// The id.
    pub xid: u32,
    /// The log's first id ([`XactLog::base`]).
    pub base: u32,
}

/// The status word of every transaction id since `base`.
#[derive(Debug)]
pub struct XactLog {
    base: u32,
    segment_bits: u32,
    segments: Box<[OnceLock<Box<[AtomicU32]>>]>,
}

impl XactLog {
    /// A log whose first transaction id is `base`, with segments of
    /// 2^16 ids.
    pub fn new(base: u32) -> XactLog {
        XactLog::with_segment_bits(base, 16)
    }

    /// A log with segments of `2^bits` ids (small ones for loom models).
    pub fn with_segment_bits(base: u32, bits: u32) -> XactLog {
        let count = (1usize << (32 - bits)).min(SEGMENTS);
        XactLog { base, segment_bits: bits, segments: (0..count).map(|_| OnceLock::new()).collect() }
    }

    /// The first transaction id of this run; older ids are committed and
    /// visible to everyone.
    pub fn base(&self) -> u32 {
        self.base
    }

    fn word(&self, xid: u32) -> Option<&AtomicU32> {
        let off = xid.checked_sub(self.base)? as usize;
        let seg = off >> self.segment_bits;
        let at = off & ((1 << self.segment_bits) - 1);
        let segment = self.segments.get(seg)?;
        let words = segment.get_or_init(|| (0..1usize << self.segment_bits).map(|_| AtomicU32::new(0)).collect());
        words.get(at)
    }

    /// The status word of `xid` ([`COMMITTED`] for ids before [`XactLog::base`]).
    #[inline]
    pub fn status(&self, xid: u32) -> u32 {
        if xid < self.base {
            return COMMITTED;
        }
        self.word(xid).map_or(IN_PROGRESS, |w| w.load(Ordering::SeqCst))
    }

    /// Sets the status word of `xid` (its own backend only). Fails for an
    /// id the log has no word for (one of an earlier run, or beyond the
    /// last segment): its status would otherwise be lost.
    pub fn set(&self, xid: u32, status: u32) -> Result<(), NoStatusWord> {
        let w = self.word(xid).ok_or(NoStatusWord { xid, base: self.base })?;
        w.store(status, Ordering::SeqCst);
        Ok(())
    }

    /// `status` after waiting out [`COMMITTING`] (a committer between
    /// drawing its number and storing it).
    #[inline]
    pub fn settled(&self, xid: u32) -> u32 {
        loop {
            let s = self.status(xid);
            if s != COMMITTING {
                return s;
            }
            turnstile_sync::sync::thread::yield_now();
        }
    }

    /// Whether `xid` committed (waiting out a commit under way).
    pub fn committed(&self, xid: u32) -> bool {
        self.settled(xid) >= COMMITTED
    }

    /// Whether `xid` rolled back.
    pub fn aborted(&self, xid: u32) -> bool {
        self.status(xid) == ABORTED
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn ids_before_the_base_are_committed_and_new_ones_start_in_progress() {
        let log = XactLog::with_segment_bits(100, 4);
        assert_eq!(log.status(7), COMMITTED);
        assert_eq!(log.status(100), IN_PROGRESS);
        log.set(100, ABORTED).unwrap();
        log.set(117, FIRST_CSN + 9).unwrap();
        assert_eq!(log.set(7, COMMITTED), Err(NoStatusWord { xid: 7, base: 100 }), "an earlier run's id");
        assert!(log.set(100 + (1 << 28), COMMITTED).is_err(), "beyond the last segment");
        assert!(log.aborted(100) && !log.committed(100));
        assert_eq!(log.settled(117), FIRST_CSN + 9);
        assert!(log.committed(117));
        assert_eq!(log.status(116), IN_PROGRESS, "a neighbour in another segment is untouched");
    }
}
