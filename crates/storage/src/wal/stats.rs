//! [`WalStats`] (PostgreSQL's `pg_stat_wal`, plus the lab's count of shared
//! acquisitions) and the counters behind it.
//!
//! The per-record counters (records, full-page images, bytes, shared
//! acquisitions) are striped over cache-padded cells chosen by thread, so
//! counting is no shared write that the `scalable` path would otherwise
//! not have; a snapshot sums the stripes.

use crate::sync::counter::{AtomicU64, Ordering};
use std::time::Instant;
use turnstile_sync::CachePadded;

/// Stripes of the per-record counters.
const STRIPES: usize = 32;

/// `pg_stat_wal`'s fields and the shared acquisitions on the WAL path.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct WalStats {
    /// Records inserted.
    pub wal_records: u64,
    /// Of which full-page images.
    pub wal_fpi: u64,
    /// Bytes inserted, headers and padding included.
    pub wal_bytes: u64,
    /// Times an inserter found the ring full and had to wait for (or do) a
    /// write.
    pub wal_buffers_full: u64,
    /// `write` calls.
    pub wal_write: u64,
    /// `fdatasync` calls.
    pub wal_sync: u64,
    /// Milliseconds spent writing.
    pub wal_write_time: f64,
    /// Milliseconds spent in `fdatasync`.
    pub wal_sync_time: f64,
    /// Acquisitions of shared locks on the insert and flush paths: the
    /// reservation spinlock, `WALInsert` and `WALWrite` locks (including
    /// a `WALInsert` lock taken shared to wait out an insertion). A sleep
    /// queue's mutex taken only to sleep is not one (as the wait queue
    /// inside an `LwLock` is not).
    pub shared_acquisitions: u64,
}

#[derive(Debug, Default)]
struct Stripe {
    records: AtomicU64,
    fpi: AtomicU64,
    bytes: AtomicU64,
    acquisitions: AtomicU64,
}

/// The live counters.
#[derive(Debug)]
pub struct WalCounters {
    stripes: Box<[CachePadded<Stripe>]>,
    buffers_full: AtomicU64,
    write: AtomicU64,
    sync: AtomicU64,
    write_ns: AtomicU64,
    sync_ns: AtomicU64,
}

impl Default for WalCounters {
    fn default() -> Self {
        WalCounters {
            stripes: (0..STRIPES).map(|_| CachePadded::new(Stripe::default())).collect(),
            buffers_full: AtomicU64::new(0),
            write: AtomicU64::new(0),
            sync: AtomicU64::new(0),
            write_ns: AtomicU64::new(0),
            sync_ns: AtomicU64::new(0),
        }
    }
}

/// This thread's number, for striping and for the choice of an
/// insertion lock (PostgreSQL: `MyProc->pgprocno % NUM_XLOGINSERT_LOCKS`).
pub(crate) fn thread_number() -> usize {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    thread_local!(static NUMBER: usize = NEXT.fetch_add(1, Ordering::Relaxed) as usize);
    NUMBER.with(|n| *n)
}

impl WalCounters {
    fn stripe(&self) -> &Stripe {
        &self.stripes[thread_number() % STRIPES]
    }

    /// One record of `bytes` bytes inserted.
    #[inline]
    pub fn count_record(&self, bytes: u64, fpi: bool) {
        let s = self.stripe();
        s.records.fetch_add(1, Ordering::Relaxed);
        s.bytes.fetch_add(bytes, Ordering::Relaxed);
        if fpi {
            s.fpi.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// `n` shared-lock acquisitions on the WAL path.
    #[inline]
    pub fn count_acquisitions(&self, n: u64) {
        self.stripe().acquisitions.fetch_add(n, Ordering::Relaxed);
    }

    /// The ring was full.
    pub fn count_buffers_full(&self) {
        self.buffers_full.fetch_add(1, Ordering::Relaxed);
    }

    /// A write that began at `started` ended.
    pub fn count_write(&self, started: Instant) {
        self.write.fetch_add(1, Ordering::Relaxed);
        self.write_ns.fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }

    /// An `fdatasync` that began at `started` ended.
    pub fn count_sync(&self, started: Instant) {
        self.sync.fetch_add(1, Ordering::Relaxed);
        self.sync_ns.fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }

    /// A snapshot.
    pub fn snapshot(&self) -> WalStats {
        let sum = |f: fn(&Stripe) -> &AtomicU64| self.stripes.iter().map(|s| f(s).load(Ordering::Relaxed)).sum();
        WalStats {
            wal_records: sum(|s| &s.records),
            wal_fpi: sum(|s| &s.fpi),
            wal_bytes: sum(|s| &s.bytes),
            wal_buffers_full: self.buffers_full.load(Ordering::Relaxed),
            wal_write: self.write.load(Ordering::Relaxed),
            wal_sync: self.sync.load(Ordering::Relaxed),
            wal_write_time: self.write_ns.load(Ordering::Relaxed) as f64 / 1e6,
            wal_sync_time: self.sync_ns.load(Ordering::Relaxed) as f64 / 1e6,
            shared_acquisitions: sum(|s| &s.acquisitions),
        }
    }
}
