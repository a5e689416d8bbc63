//! [`Wal`]: the write-ahead log a server inserts into and flushes, with
//! its WAL writer thread; [`Shared`]: what the profiles' code shares.

use super::classic::Classic;
use super::record::{align, encode, HEADER_BYTES, MAX_RECORD_BYTES};
use super::ring::Ring;
use super::scalable::Scalable;
use super::segment::{self, SegmentWriter};
use super::stats::{WalCounters, WalStats};
use super::{Lsn, WalError, WalRecord};
use crate::io::StorageIo;
use crate::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use crate::sync::thread::{self, JoinHandle, Thread};
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use turnstile_sync::config::{WalConfig, WalInsert};
use turnstile_sync::CachePadded;

const OPEN: u8 = 0;
const STOPPING: u8 = 1;
const FAILED: u8 = 2;

/// The profile's insertion machinery.
#[derive(Debug)]
pub enum Inserter {
    /// PostgreSQL 15's.
    Classic(Box<Classic>),
    /// Lock-free.
    Scalable(Box<Scalable>),
}

/// State shared by the inserters, the flushers and the WAL writer.
#[derive(Debug)]
pub struct Shared {
    /// The knobs.
    pub config: WalConfig,
    dir: PathBuf,
    io: Arc<dyn StorageIo>,
    /// The in-memory WAL.
    pub ring: Ring,
    max_record: u64,
    /// The stream is written to the OS below this (ring bytes below it are free).
    pub written: CachePadded<AtomicU64>,
    /// The stream is durable below this.
    pub flushed: CachePadded<AtomicU64>,
    state: AtomicU8,
    /// Counters for [`WalStats`].
    pub counters: WalCounters,
    /// Writers in a transaction (`commit_siblings`).
    pub active_writers: CachePadded<AtomicU64>,
    inserter: Inserter,
    writer_thread: OnceLock<Thread>,
}

impl Shared {
    /// The WAL writer's handle, once it runs.
    #[inline]
    pub fn writer_thread(&self) -> Option<&Thread> {
        self.writer_thread.get()
    }

    /// `Err(Failed)` if an earlier write or sync failed.
    #[inline]
    pub fn check_failed(&self) -> Result<(), WalError> {
        if self.is_failed() {
            Err(WalError::Failed)
        } else {
            Ok(())
        }
    }

    /// Whether an earlier write or sync failed.
    #[inline]
    pub fn is_failed(&self) -> bool {
        self.state.load(Ordering::Acquire) == FAILED
    }

    /// Whether the log is shutting down (or failed).
    pub fn is_stopping(&self) -> bool {
        self.state.load(Ordering::Acquire) != OPEN
    }

    /// Marks the log failed after `err` and wakes every sleeper.
    pub fn fail(&self, err: &WalError) {
        if self.state.swap(FAILED, Ordering::AcqRel) != FAILED {
            eprintln!("PANIC: write-ahead log failed: {err}");
        }
        if let Inserter::Scalable(s) = &self.inserter {
            s.wake_all();
        }
        if let Some(w) = self.writer_thread() {
            w.unpark();
        }
    }

    /// Under `WALWrite` (`classic`): writes the ring up to `upto` and, if
    /// `sync`, makes it durable. An error fails the log.
    pub fn write_locked(&self, w: &mut SegmentWriter, upto: u64, sync: bool) -> Result<(), WalError> {
        let result = (|| {
            let written = self.written.load(Ordering::Relaxed);
            if upto > written {
                w.write_from_ring(&self.ring, written, upto, &self.counters)?;
                self.written.store(upto, Ordering::Release);
            }
            let written = self.written.load(Ordering::Relaxed);
            if sync && self.flushed.load(Ordering::Relaxed) < written {
                w.sync(&self.counters)?;
                self.flushed.store(written, Ordering::Release);
            }
            Ok(())
        })();
        if let Err(e) = &result {
            self.fail(e);
        }
        result
    }

    fn insert_position(&self) -> u64 {
        match &self.inserter {
            Inserter::Classic(c) => c.reservation.position(),
            Inserter::Scalable(s) => s.position(),
        }
    }
}

/// The write-ahead log. `Send + Sync`; dropping it shuts it down.
#[derive(Debug)]
pub struct Wal {
    shared: Arc<Shared>,
    writer: Mutex<Option<JoinHandle<()>>>,
}

thread_local!(static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) });

impl Wal {
    /// Opens the log in `dir` to insert at `end`: the end of WAL that
    /// recovery found, or [`Lsn::first`]`(config.segment_size)` on a new
    /// directory. Segments after `end`'s are removed and `end`'s segment
    /// is zeroed from `end` on; the WAL writer thread starts.
    pub fn open(dir: &Path, io: Arc<dyn StorageIo>, config: &WalConfig, end: Lsn) -> Result<Wal, WalError> {
        if end.0 % 8 != 0 {
            return Err(WalError::BadStart { lsn: end, reason: "not 8-byte aligned" });
        }
        if end.0 < config.segment_size {
            return Err(WalError::BadStart { lsn: end, reason: "before the first segment" });
        }
        segment::prepare_end(dir, &*io, config.segment_size, end, config.fsync)?;
        let seg = SegmentWriter::new(dir, Arc::clone(&io), config.segment_size, config.fsync, config.init_zero);
        let ring_bytes = config.buffers;
        let (inserter, writer_seg) = match config.insert {
            WalInsert::Classic => {
                (Inserter::Classic(Box::new(Classic::new(end.0, config.insert_locks as usize, seg))), None)
            }
            WalInsert::Scalable => (Inserter::Scalable(Box::new(Scalable::new(end.0, ring_bytes))), Some(seg)),
        };
        let shared = Arc::new(Shared {
            config: config.clone(),
            dir: dir.to_path_buf(),
            io,
            ring: Ring::new(ring_bytes),
            max_record: (ring_bytes / 2).min(MAX_RECORD_BYTES),
            written: CachePadded::new(AtomicU64::new(end.0)),
            flushed: CachePadded::new(AtomicU64::new(end.0)),
            state: AtomicU8::new(OPEN),
            counters: WalCounters::default(),
            active_writers: CachePadded::new(AtomicU64::new(0)),
            inserter,
            writer_thread: OnceLock::new(),
        });
        let sh = Arc::clone(&shared);
        let handle = thread::spawn(move || run_writer(&sh, writer_seg));
        // The writer needs no handle of its own; requesters find it here.
        let _ = shared.writer_thread.set(handle.thread().clone());
        Ok(Wal { shared, writer: Mutex::new(Some(handle)) })
    }

    /// Inserts `rec`; returns the END of the record (the start of the next).
    pub fn insert(&self, rec: &WalRecord<'_>) -> Result<Lsn, WalError> {
        self.insert_flagged(rec, false)
    }

    /// Inserts `rec`, a full-page image (counted in `wal_fpi`).
    pub fn insert_fpi(&self, rec: &WalRecord<'_>) -> Result<Lsn, WalError> {
        self.insert_flagged(rec, true)
    }

    fn insert_flagged(&self, rec: &WalRecord<'_>, fpi: bool) -> Result<Lsn, WalError> {
        let sh = &*self.shared;
        if sh.is_stopping() {
            return Err(if sh.is_failed() { WalError::Failed } else { WalError::ShutDown });
        }
        let len = align((HEADER_BYTES + rec.payload_len()) as u64);
        if len > sh.max_record {
            return Err(WalError::RecordTooLarge { len, max: sh.max_record });
        }
        let end = SCRATCH.with(|scratch| {
            let mut buf = scratch.borrow_mut();
            let partial = encode(rec, fpi, &mut buf);
            match &sh.inserter {
                Inserter::Classic(c) => c.insert(sh, &mut buf, partial),
                Inserter::Scalable(s) => s.insert(sh, &mut buf, partial),
            }
        })?;
        sh.counters.count_record(len, fpi);
        Ok(end)
    }

    /// Returns when the WAL is durable up to `upto` (clamped to the insert
    /// position); concurrent flushes share one `fdatasync`.
    pub fn flush(&self, upto: Lsn) -> Result<(), WalError> {
        let sh = &*self.shared;
        let upto = upto.0.min(sh.insert_position());
        match &sh.inserter {
            Inserter::Classic(c) => c.flush(sh, upto),
            Inserter::Scalable(s) => s.flush(sh, upto),
        }
    }

    /// What COMMIT calls: with `wal.synchronous_commit` on, [`Wal::flush`];
    /// off, returns at once (the WAL writer flushes within
    /// `wal.writer_delay_ms`).
    pub fn commit_flush(&self, upto: Lsn) -> Result<(), WalError> {
        if self.shared.config.synchronous_commit {
            self.flush(upto)
        } else {
            self.shared.check_failed()
        }
    }

    /// A transaction that writes began (`commit_siblings` counts these).
    pub fn enter_writer(&self) {
        self.shared.active_writers.fetch_add(1, Ordering::Relaxed);
    }

    /// A transaction that writes ended.
    pub fn leave_writer(&self) {
        let _ = self.shared.active_writers.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
    }

    /// The insert position (`pg_current_wal_insert_lsn()`).
    pub fn insert_lsn(&self) -> Lsn {
        Lsn(self.shared.insert_position())
    }

    /// The durable end (`pg_current_wal_flush_lsn()`).
    pub fn flushed_lsn(&self) -> Lsn {
        Lsn(self.shared.flushed.load(Ordering::Acquire))
    }

    /// `pg_stat_wal`.
    pub fn stats(&self) -> WalStats {
        self.shared.counters.snapshot()
    }

    /// Whether an earlier write or sync failed (the server must stop).
    pub fn is_failed(&self) -> bool {
        self.shared.is_failed()
    }

    /// Removes the segments wholly before `lsn` (a checkpoint's redo
    /// point); never the segment being written.
    pub fn remove_before(&self, lsn: Lsn) -> Result<(), WalError> {
        let sh = &*self.shared;
        let limit = Lsn(lsn.0.min(sh.written.load(Ordering::Acquire)));
        segment::remove_before(&sh.dir, &*sh.io, sh.config.segment_size, limit)
    }

    /// Stops the WAL writer after a final flush of everything inserted.
    /// Later inserts return [`WalError::ShutDown`]; insertions already
    /// under way must have returned before (the caller stops its writers
    /// first).
    pub fn shutdown(&self) {
        let sh = &*self.shared;
        if let Inserter::Classic(c) = &sh.inserter {
            let _ = c.flush(sh, c.reservation.position());
        }
        let _ = sh.state.compare_exchange(OPEN, STOPPING, Ordering::AcqRel, Ordering::Acquire);
        if let Some(w) = sh.writer_thread() {
            w.unpark();
        }
        let handle = self.writer.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(h) = handle {
            let _ = h.join();
        }
    }
}

impl Drop for Wal {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// The WAL writer thread: under `scalable` it does every write and sync;
/// under `classic` it flushes asynchronous commits every
/// `wal.writer_delay_ms` (PostgreSQL's walwriter).
fn run_writer(sh: &Shared, seg: Option<SegmentWriter>) {
    match (&sh.inserter, seg) {
        (Inserter::Scalable(s), Some(seg)) => s.run_writer(sh, seg),
        (Inserter::Classic(c), _) => {
            let delay = Duration::from_millis(sh.config.writer_delay_ms);
            while !sh.is_stopping() {
                super::park_timeout(delay);
                if c.background_flush(sh).is_err() {
                    return;
                }
            }
        }
        (Inserter::Scalable(_), None) => unreachable!("the scalable writer owns the segment writer"),
    }
}
