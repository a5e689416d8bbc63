//! The transaction status log: one 64-bit word per transaction id that can
//! still be asked about (PostgreSQL's `pg_xact`, with room for a commit
//! sequence number), and a summary of the rest.
//!
//! | word | meaning |
//! |---|---|
//! | [`IN_PROGRESS`] (0) | assigned, not ended (or never assigned) |
//! | [`ABORTED`] | rolled back; its writes count for nobody ([`super::visibility`]) and were undone before this was set |
//! | [`COMMITTING`] | `csn` commit under way: its number is being drawn (a reader waits, a few instructions) |
//! | [`COMMITTED`] | committed (`procarray` snapshots need no number) |
//! | `>= FIRST_CSN` | committed with this commit sequence number (`csn`) |
//!
//! A word changes only from `IN_PROGRESS` to one of the others, by the
//! transaction's own backend, and (`csn`) from `COMMITTING` to a number.
//! Transaction ids are 64-bit: they never wrap around, so there is no
//! freezing and no anti-wraparound VACUUM.
//!
//! # What is kept: bounded by what can still be asked
//!
//! Ids are grouped in segments of `2^segment_bits`. A segment is in one of
//! three forms ([`Word`] is what a lookup answers):
//!
//! 1. **Words** ([`Word::Exact`]): a segment that holds an id not yet ended
//!    (or is the newest). It lives in a slot of a fixed ring
//!    (`segment % ring`; each slot's buffer is allocated once and reused),
//!    or in an overflow map, freed when summarised, when a transaction that
//!    has not ended keeps the slot's earlier segment in this form.
//! 2. **A range** ([`Word::Range`]): once every id of a segment has ended,
//!    [`XactLog::summarise`] replaces its words by the lowest and highest
//!    commit number among them — allowed only when every snapshot still
//!    published either sees all of its commits (highest ≤ snapshot) or none
//!    (lowest > snapshot), so the range answers every question a word did.
//!    Adjacent ranges merge under the same test. A long `REPEATABLE READ`
//!    snapshot therefore keeps in word form only the segment of the ids
//!    that were running when it was taken.
//! 3. **Settled** ([`Word::Settled`]): ids below [`XactLog::base`], whose
//!    commits every snapshot sees ([`XactLog::advance_base`], at the
//!    horizon). Nothing is kept for them.
//!
//! Aborted ids are forgotten when their segment is summarised: a rollback
//! undoes every write before the id is marked aborted, so no tuple refers
//! to it any more. A rollback whose undo did not complete is the exception:
//! its id is kept in [`XactLog::mark_failed`]'s set (which the engine
//! writes to disk) and answers [`ABORTED`] for ever, also across a restart.
//! Memory therefore depends on the span of the transactions still running
//! and of the oldest published snapshot, not on how many have ever run.
//!
//! # Reading without a lock
//!
//! A lookup loads the base, then the ring slot's tag, the word and the tag
//! again (a seqlock): a slot is reused for a newer segment only after its
//! segment was summarised (inserted as a range first, then its tag
//! cleared), so a reader that finds the tag changed looks for the range.
//! Ranges, overflow segments and failed ids sit behind read-write locks,
//! taken only for ids that are neither settled nor in the ring.

use std::collections::{BTreeSet, HashMap};
use std::sync::OnceLock;
use turnstile_sync::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use turnstile_sync::sync::{Arc, Mutex, RwLock};

/// A transaction id (64-bit: it never wraps around).
pub type Xid = u64;

/// Assigned, not ended.
pub const IN_PROGRESS: u64 = 0;
/// Rolled back.
pub const ABORTED: u64 = 1;
/// A `csn` commit is drawing its number.
pub const COMMITTING: u64 = 2;
/// Committed (`procarray` snapshots).
pub const COMMITTED: u64 = 3;
/// The first commit sequence number.
pub const FIRST_CSN: u64 = 4;

/// Ring slots of word segments (a segment whose slot is still taken goes
/// to the overflow map). A slot's buffer is allocated once and reused, so
/// the ring costs at most `RING` segments of words for the engine's life.
const RING: usize = 16;

/// What the log knows about one transaction id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Word {
    /// Its status word (see the module's table).
    Exact(u64),
    /// Ended, in a summarised segment: committed with a number in
    /// `lo..=hi` (`procarray`: [`COMMITTED`]), or aborted and undone.
    Range {
        /// The lowest commit number of the segment.
        lo: u64,
        /// The highest.
        hi: u64,
    },
    /// Below [`XactLog::base`]: committed and seen by every snapshot.
    Settled,
}

/// A summarised run of ids (`start..end`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Range {
    start: Xid,
    end: Xid,
    lo: u64,
    hi: u64,
}

/// A segment of words.
type Words = Box<[AtomicU64]>;

#[derive(Debug)]
struct RingSlot {
    /// The segment held, plus one (0: none).
    tag: AtomicU64,
    words: OnceLock<Words>,
}

impl RingSlot {
    fn new() -> RingSlot {
        RingSlot { tag: AtomicU64::new(0), words: OnceLock::new() }
    }
}

/// Memory of the log now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LogSize {
    /// Segments kept as words (ring and overflow).
    pub word_segments: u64,
    /// Word buffers allocated (each `2^segment_bits` words; ring buffers are reused).
    pub word_buffers: u64,
    /// Summarised ranges.
    pub ranges: u64,
    /// Ids whose rollback left writes in place.
    pub failed: u64,
    /// Bytes of all of the above.
    pub bytes: u64,
}

/// The status of every transaction id that can still be asked about.
#[derive(Debug)]
pub struct XactLog {
    base: AtomicU64,
    segment_bits: u32,
    ring: Box<[RingSlot]>,
    /// Segments in word form whose ring slot was taken.
    overflow: RwLock<HashMap<u64, Arc<Words>>>,
    overflow_any: AtomicBool,
    /// Summarised runs above the base, sorted.
    ranges: RwLock<Vec<Range>>,
    failed: RwLock<BTreeSet<Xid>>,
    failed_any: AtomicBool,
    /// Serialises claims of ring slots and summarising.
    claim: Mutex<()>,
}

/// A transaction id the log has no status word for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the transaction status log has no word for transaction id {xid}: it ended or was never assigned")]
pub struct NoStatusWord {
    /// The id.
    pub xid: Xid,
}

impl XactLog {
    /// A log whose first transaction id is `base`, with segments of 2^12
    /// ids (32 KiB of words; the ring holds 16 of them, 512 KiB).
    pub fn new(base: Xid) -> XactLog {
        XactLog::with_segment_bits(base, 12)
    }

    /// A log with segments of `2^bits` ids (small ones for loom models).
    pub fn with_segment_bits(base: Xid, bits: u32) -> XactLog {
        XactLog {
            base: AtomicU64::new(base),
            segment_bits: bits,
            ring: (0..RING).map(|_| RingSlot::new()).collect(),
            overflow: RwLock::new(HashMap::new()),
            overflow_any: AtomicBool::new(false),
            ranges: RwLock::new(Vec::new()),
            failed: RwLock::new(BTreeSet::new()),
            failed_any: AtomicBool::new(false),
            claim: Mutex::new(()),
        }
    }

    /// Ids below it are settled: committed and seen by every snapshot
    /// (unless [`XactLog::mark_failed`]).
    pub fn base(&self) -> Xid {
        self.base.load(Ordering::SeqCst)
    }

    fn segment(&self, xid: Xid) -> u64 {
        xid >> self.segment_bits
    }

    fn offset(&self, xid: Xid) -> usize {
        (xid & ((1 << self.segment_bits) - 1)) as usize
    }

    fn slot(&self, segment: u64) -> &RingSlot {
        &self.ring[(segment % RING as u64) as usize]
    }

    /// Makes room for the words of `xid`'s segment (its assigner calls this
    /// before anyone can set the id's status).
    pub fn claim(&self, xid: Xid) {
        let seg = self.segment(xid);
        let slot = self.slot(seg);
        if slot.tag.load(Ordering::SeqCst) == seg + 1 {
            return;
        }
        let _claim = self.claim.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let tag = slot.tag.load(Ordering::SeqCst);
        if tag == seg + 1 || self.read_overflow(seg).is_some() {
            return;
        }
        if tag == 0 {
            let words = slot.words.get_or_init(|| self.fresh_words());
            self.reset(seg, words);
            slot.tag.store(seg + 1, Ordering::SeqCst);
        } else {
            let words = self.fresh_words();
            self.reset(seg, &words);
            let mut o = self.overflow.write().unwrap_or_else(std::sync::PoisonError::into_inner);
            o.insert(seg, Arc::new(words));
            self.overflow_any.store(true, Ordering::SeqCst);
        }
    }

    /// Readies `words` for segment `seg`: in progress, except the ids below
    /// the base (never assigned in this log: the first segment of a run),
    /// which count as ended so that the segment can be summarised.
    fn reset(&self, seg: u64, words: &[AtomicU64]) {
        let start = seg << self.segment_bits;
        let base = self.base.load(Ordering::SeqCst);
        for (i, w) in words.iter().enumerate() {
            w.store(if start + (i as u64) < base { ABORTED } else { IN_PROGRESS }, Ordering::SeqCst);
        }
    }

    /// Whether `xid` is the first id of its segment.
    pub fn starts_segment(&self, xid: Xid) -> bool {
        self.offset(xid) == 0
    }

    fn fresh_words(&self) -> Words {
        (0..1usize << self.segment_bits).map(|_| AtomicU64::new(IN_PROGRESS)).collect()
    }

    fn read_overflow(&self, seg: u64) -> Option<Arc<Words>> {
        if !self.overflow_any.load(Ordering::SeqCst) {
            return None;
        }
        self.overflow.read().unwrap_or_else(std::sync::PoisonError::into_inner).get(&seg).cloned()
    }

    /// What the log knows about `xid`.
    #[inline]
    pub fn lookup(&self, xid: Xid) -> Word {
        if xid < self.base.load(Ordering::SeqCst) {
            return self.settled_or_failed(xid);
        }
        let seg = self.segment(xid);
        let slot = self.slot(seg);
        if slot.tag.load(Ordering::SeqCst) == seg + 1 {
            if let Some(words) = slot.words.get() {
                let w = words[self.offset(xid)].load(Ordering::SeqCst);
                if slot.tag.load(Ordering::SeqCst) == seg + 1 {
                    return Word::Exact(w);
                }
            }
        }
        self.lookup_slow(xid, seg)
    }

    #[cold]
    fn lookup_slow(&self, xid: Xid, seg: u64) -> Word {
        if let Some(words) = self.read_overflow(seg) {
            return Word::Exact(words[self.offset(xid)].load(Ordering::SeqCst));
        }
        if self.failed_any.load(Ordering::SeqCst)
            && self.failed.read().unwrap_or_else(std::sync::PoisonError::into_inner).contains(&xid)
        {
            return Word::Exact(ABORTED);
        }
        {
            let ranges = self.ranges.read().unwrap_or_else(std::sync::PoisonError::into_inner);
            let i = ranges.partition_point(|r| r.end <= xid);
            if let Some(r) = ranges.get(i).filter(|r| r.start <= xid) {
                return Word::Range { lo: r.lo, hi: r.hi };
            }
        }
        // Summarised and settled meanwhile (the base moves before a range
        // goes), or not claimed yet: an id just assigned.
        if xid < self.base.load(Ordering::SeqCst) {
            return self.settled_or_failed(xid);
        }
        let slot = self.slot(seg);
        match slot.words.get() {
            Some(words) if slot.tag.load(Ordering::SeqCst) == seg + 1 => {
                Word::Exact(words[self.offset(xid)].load(Ordering::SeqCst))
            }
            _ => Word::Exact(IN_PROGRESS),
        }
    }

    fn settled_or_failed(&self, xid: Xid) -> Word {
        if self.failed_any.load(Ordering::SeqCst)
            && self.failed.read().unwrap_or_else(std::sync::PoisonError::into_inner).contains(&xid)
        {
            return Word::Exact(ABORTED);
        }
        Word::Settled
    }

    /// The status word of `xid`: [`COMMITTED`] for a settled or summarised
    /// committed id (its number is no longer known).
    #[inline]
    pub fn status(&self, xid: Xid) -> u64 {
        match self.lookup(xid) {
            Word::Exact(w) => w,
            Word::Range { .. } | Word::Settled => COMMITTED,
        }
    }

    fn word(&self, xid: Xid) -> Option<WordRef<'_>> {
        let seg = self.segment(xid);
        let slot = self.slot(seg);
        if slot.tag.load(Ordering::SeqCst) == seg + 1 {
            return slot.words.get().map(|w| WordRef::Ring(&w[self.offset(xid)]));
        }
        self.read_overflow(seg).map(|w| WordRef::Overflow(w, self.offset(xid)))
    }

    /// Sets the status word of `xid` (its own backend only, after
    /// [`XactLog::claim`]). Fails for an id the log has no word for (never
    /// claimed, or ended already and summarised): its status would
    /// otherwise be lost.
    pub fn set(&self, xid: Xid, status: u64) -> Result<(), NoStatusWord> {
        match self.word(xid).ok_or(NoStatusWord { xid })? {
            WordRef::Ring(w) => w.store(status, Ordering::SeqCst),
            WordRef::Overflow(words, at) => words[at].store(status, Ordering::SeqCst),
        }
        Ok(())
    }

    /// Keeps `xid` aborted for ever: its rollback left writes in place.
    pub fn mark_failed(&self, xid: Xid) {
        self.failed.write().unwrap_or_else(std::sync::PoisonError::into_inner).insert(xid);
        self.failed_any.store(true, Ordering::SeqCst);
    }

    /// The ids marked with [`XactLog::mark_failed`].
    pub fn failed_ids(&self) -> Vec<Xid> {
        self.failed.read().unwrap_or_else(std::sync::PoisonError::into_inner).iter().copied().collect()
    }

    /// `status` after waiting out [`COMMITTING`] (a committer between
    /// drawing its number and storing it).
    #[inline]
    pub fn settled(&self, xid: Xid) -> Word {
        loop {
            match self.lookup(xid) {
                Word::Exact(COMMITTING) => turnstile_sync::sync::thread::yield_now(),
                w => return w,
            }
        }
    }

    /// Whether `xid` committed (waiting out a commit under way).
    pub fn committed(&self, xid: Xid) -> bool {
        match self.settled(xid) {
            Word::Exact(w) => w >= COMMITTED,
            Word::Range { .. } | Word::Settled => true,
        }
    }

    /// Whether `xid` rolled back (and, once summarised, left writes in place).
    pub fn aborted(&self, xid: Xid) -> bool {
        self.lookup(xid) == Word::Exact(ABORTED)
    }

    /// Summarises every segment in word form below `next` (the next id to
    /// be assigned) whose ids have all ended and whose commit numbers
    /// `unambiguous(lo, hi)` accepts (every published snapshot sees all of
    /// them or none; see the module documentation). Returns how many.
    pub fn summarise(&self, next: Xid, unambiguous: impl Fn(u64, u64) -> bool) -> u64 {
        let _claim = self.claim.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut done = 0;
        let mut candidates: Vec<(u64, Option<Arc<Words>>)> = Vec::new();
        for slot in self.ring.iter() {
            let tag = slot.tag.load(Ordering::SeqCst);
            if tag != 0 {
                candidates.push((tag - 1, None));
            }
        }
        if self.overflow_any.load(Ordering::SeqCst) {
            let o = self.overflow.read().unwrap_or_else(std::sync::PoisonError::into_inner);
            candidates.extend(o.iter().map(|(&s, w)| (s, Some(Arc::clone(w)))));
        }
        candidates.sort_unstable_by_key(|c| c.0);
        for (seg, over) in candidates {
            let start = seg << self.segment_bits;
            let end = start + (1 << self.segment_bits);
            if end > next {
                continue;
            }
            let words: &[AtomicU64] = match &over {
                Some(w) => w,
                None => match self.slot(seg).words.get() {
                    Some(w) => w,
                    None => continue,
                },
            };
            let Some((lo, hi)) = ended_range(words) else { continue };
            if !unambiguous(lo, hi) {
                continue;
            }
            self.insert_range(Range { start, end, lo, hi }, &unambiguous);
            match over {
                Some(_) => {
                    let mut o = self.overflow.write().unwrap_or_else(std::sync::PoisonError::into_inner);
                    o.remove(&seg);
                    self.overflow_any.store(!o.is_empty(), Ordering::SeqCst);
                }
                None => self.slot(seg).tag.store(0, Ordering::SeqCst),
            }
            done += 1;
        }
        done
    }

    fn insert_range(&self, r: Range, unambiguous: &impl Fn(u64, u64) -> bool) {
        let mut ranges = self.ranges.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        let i = ranges.partition_point(|x| x.start < r.start);
        ranges.insert(i, r);
        // Merge with the neighbours when the merged range stays unambiguous.
        for at in [i, i.saturating_sub(1)] {
            if at + 1 < ranges.len() {
                let (a, b) = (ranges[at], ranges[at + 1]);
                let (lo, hi) = merged(a, b);
                if a.end == b.start && unambiguous(lo, hi) {
                    ranges[at] = Range { start: a.start, end: b.end, lo, hi };
                    ranges.remove(at + 1);
                }
            }
        }
    }

    /// Moves the base over the summarised ranges that start at it and that
    /// `settled(range_end, hi)` accepts (every snapshot, present and
    /// future, sees all of their commits). Returns the base.
    pub fn advance_base(&self, settled: impl Fn(Xid, u64) -> bool) -> Xid {
        let _claim = self.claim.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut base = self.base.load(Ordering::SeqCst);
        let ranges = self.ranges.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        let mut gone = 0;
        for r in &ranges {
            if r.end <= base {
                gone += 1;
                continue;
            }
            if r.start > base || !settled(r.end, r.hi) {
                break;
            }
            base = r.end;
            gone += 1;
        }
        if gone > 0 {
            // The base moves first: a reader that misses the range finds it.
            self.base.store(base, Ordering::SeqCst);
            self.ranges.write().unwrap_or_else(std::sync::PoisonError::into_inner).retain(|r| r.end > base);
        }
        base
    }

    /// What the log holds now.
    pub fn size(&self) -> LogSize {
        let word_bytes = (8u64 << self.segment_bits) + 16;
        let ring_segments = self.ring.iter().filter(|s| s.tag.load(Ordering::SeqCst) != 0).count() as u64;
        let ring_buffers = self.ring.iter().filter(|s| s.words.get().is_some()).count() as u64;
        let overflow = self.overflow.read().map_or(0, |o| o.len()) as u64;
        let ranges = self.ranges.read().map_or(0, |r| r.len()) as u64;
        let failed = self.failed.read().map_or(0, |f| f.len()) as u64;
        LogSize {
            word_segments: ring_segments + overflow,
            word_buffers: ring_buffers + overflow,
            ranges,
            failed,
            bytes: (ring_buffers + overflow) * word_bytes
                + ranges * std::mem::size_of::<Range>() as u64
                + failed * 32
                + (RING * std::mem::size_of::<RingSlot>()) as u64,
        }
    }
}

enum WordRef<'a> {
    Ring(&'a AtomicU64),
    Overflow(Arc<Words>, usize),
}

/// The lowest and highest commit number of `words` if every id has ended
/// (`(0, 0)` when none committed), else `None`.
fn ended_range(words: &[AtomicU64]) -> Option<(u64, u64)> {
    let (mut lo, mut hi) = (u64::MAX, 0);
    for w in words {
        match w.load(Ordering::SeqCst) {
            IN_PROGRESS | COMMITTING => return None,
            ABORTED => {}
            s => {
                lo = lo.min(s);
                hi = hi.max(s);
            }
        }
    }
    Some(if hi == 0 { (0, 0) } else { (lo, hi) })
}

/// The commit numbers of two adjacent ranges together (a range without
/// commits, `(0, 0)`, adds nothing).
fn merged(a: Range, b: Range) -> (u64, u64) {
    match (a.hi, b.hi) {
        (0, _) => (b.lo, b.hi),
        (_, 0) => (a.lo, a.hi),
        _ => (a.lo.min(b.lo), a.hi.max(b.hi)),
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
