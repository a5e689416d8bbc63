//! `wal.insert = scalable`: no shared lock per record (InnoDB 8.0's
//! redo log, WL#10310; Aether's flush pipelining).
//!
//! * **Reservation**: one `fetch_add` on the insert position.
//! * **Copy** into the ring with no lock, then the record's link in the
//!   [`LinkBuf`]; if the WAL writer sleeps waiting for copies
//!   ([`WriterBell`]), the inserter rings it.
//! * **Ring full**: the inserter raises `space_request`, rings the writer,
//!   and sleeps in the space [`WaitList`] until `written` covers it
//!   (`wal_buffers_full`).
//! * **Flush**: a committer raises `flush_request` to its LSN (`fetch_max`),
//!   rings the writer unless it is running, and sleeps in the flush
//!   [`WaitList`] until `flushed` covers it.
//! * **The WAL writer** loops: follow the links to the copied prefix; if a
//!   flush, room, half a ring or the `wal.writer_delay_ms` timer asks for
//!   it, write `[written, copied)` and, if a flush is wanted, `fdatasync`;
//!   publish `written`/`flushed` and wake exactly the sleepers they cover.
//!   While one `fdatasync` runs, later commits queue up and the next
//!   covers them all (group commit without a lock). Before a flush that
//!   a commit asked for, the writer may hold back, while other
//!   transactions write, until a second commit's record is copied or
//!   `wal.group_wait_us` passes ([`Gather`]).

use super::gather::Gather;
use super::link::LinkBuf;
use super::notify::WaitList;
use super::record::seal;
use super::segment::SegmentWriter;
use super::{Lsn, Shared, WalError};
use crate::sync::atomic::{fence, AtomicU64, AtomicU8, Ordering};
use crate::sync::thread::Thread;
use std::time::{Duration, Instant};
use turnstile_sync::CachePadded;

/// The writer is working.
pub const RUNNING: u8 = 0;
/// The writer sleeps until a request or its timer.
pub const IDLE: u8 = 1;
/// The writer sleeps until an inserter completes a copy.
pub const WAIT_COPY: u8 = 2;

/// The handshake between the WAL writer and the threads that need it:
/// the writer announces that it sleeps, a `SeqCst` fence, re-checks for
/// work, and parks; a requester publishes its request (or its copy's
/// link), a `SeqCst` fence, reads the announcement and unparks. One sees
/// the other. A wake-up before the park is kept as the park token.
#[derive(Debug)]
pub struct WriterBell {
    state: CachePadded<AtomicU8>,
}

impl Default for WriterBell {
    fn default() -> Self {
        WriterBell { state: CachePadded::new(AtomicU8::new(RUNNING)) }
    }
}

impl WriterBell {
    /// The writer is about to sleep in `state` (re-check for work next).
    pub fn sleeping(&self, state: u8) {
        self.state.store(state, Ordering::SeqCst);
        fence(Ordering::SeqCst);
    }

    /// The writer is awake.
    pub fn awake(&self) {
        self.state.store(RUNNING, Ordering::SeqCst);
    }

    /// After publishing a request: wakes `writer` if it sleeps.
    #[inline]
    pub fn ring(&self, writer: &Thread) {
        fence(Ordering::SeqCst);
        if self.state.load(Ordering::SeqCst) != RUNNING {
            writer.unpark();
        }
    }

    /// After completing a copy: wakes `writer` only if it waits for copies.
    #[inline]
    pub fn ring_for_copy(&self, writer: &Thread) {
        fence(Ordering::SeqCst);
        if self.state.load(Ordering::SeqCst) == WAIT_COPY {
            writer.unpark();
        }
    }
}

/// The `scalable` state of a [`super::Wal`].
#[derive(Debug)]
pub struct Scalable {
    reserved: CachePadded<AtomicU64>,
    /// The copied prefix.
    pub link: LinkBuf,
    flush_request: CachePadded<AtomicU64>,
    space_request: CachePadded<AtomicU64>,
    /// The writer's sleep announcement.
    pub bell: WriterBell,
    flush_waiters: WaitList,
    space_waiters: WaitList,
}

impl Scalable {
    /// Starts at `start` with a ring of `ring_bytes`.
    pub fn new(start: u64, ring_bytes: u64) -> Scalable {
        Scalable {
            reserved: CachePadded::new(AtomicU64::new(start)),
            link: LinkBuf::new(ring_bytes, start),
            flush_request: CachePadded::new(AtomicU64::new(start)),
            space_request: CachePadded::new(AtomicU64::new(start)),
            bell: WriterBell::default(),
            flush_waiters: WaitList::new(64),
            space_waiters: WaitList::new(16),
        }
    }

    /// The insert position.
    pub fn position(&self) -> u64 {
        self.reserved.load(Ordering::Acquire)
    }

    /// Inserts the encoded record `buf`; returns its end.
    pub fn insert(&self, sh: &Shared, buf: &mut [u8], partial_crc: u32) -> Result<Lsn, WalError> {
        let len = buf.len() as u64;
        let start = self.reserved.fetch_add(len, Ordering::Relaxed);
        let end = start + len;
        seal(buf, partial_crc, Lsn(start));
        let cap = sh.ring.capacity();
        if sh.written.load(Ordering::Acquire) + cap < end {
            sh.counters.count_buffers_full();
            self.space_request.fetch_max(end - cap, Ordering::SeqCst);
            if let Some(w) = sh.writer_thread() {
                self.bell.ring(w);
            }
            self.space_waiters.wait(end - cap, || sh.written.load(Ordering::SeqCst), || sh.is_failed());
            sh.check_failed()?;
        }
        sh.ring.store(start, buf);
        self.link.complete(start, end);
        if let Some(w) = sh.writer_thread() {
            self.bell.ring_for_copy(w);
        }
        Ok(Lsn(end))
    }

    /// Returns once the stream is durable up to `upto`.
    pub fn flush(&self, sh: &Shared, upto: u64) -> Result<(), WalError> {
        if sh.flushed.load(Ordering::Acquire) >= upto {
            return Ok(());
        }
        sh.check_failed()?;
        let upto = upto.min(self.position());
        self.flush_request.fetch_max(upto, Ordering::SeqCst);
        if let Some(w) = sh.writer_thread() {
            self.bell.ring(w);
        }
        self.flush_waiters.wait(upto, || sh.flushed.load(Ordering::SeqCst), || sh.is_failed());
        if sh.flushed.load(Ordering::Acquire) >= upto {
            Ok(())
        } else {
            Err(WalError::Failed)
        }
    }

    /// Wakes every sleeper (failure).
    pub fn wake_all(&self) {
        self.flush_waiters.wake_all();
        self.space_waiters.wake_all();
    }

    /// The WAL writer's loop; returns at shutdown (after writing and
    /// syncing everything inserted) or at the first I/O error (having
    /// failed the log).
    pub fn run_writer(&self, sh: &Shared, mut seg: SegmentWriter) {
        let delay = Duration::from_millis(sh.config.writer_delay_ms);
        let gather_max = if sh.config.fsync { sh.config.group_wait_us } else { 0 };
        let mut gather = Gather::new(Duration::from_micros(gather_max));
        let mut last_sync = Instant::now();
        loop {
            let mut copied = self.link.advance();
            let (written, flushed) = (sh.written.load(Ordering::Relaxed), sh.flushed.load(Ordering::Relaxed));
            let stopping = sh.is_stopping();
            let timer = last_sync.elapsed() >= delay;
            let wants = self.wants(sh, copied, written, flushed, stopping, timer);
            if let Some(sync) = wants {
                if sync && !stopping && !timer && self.flush_request.load(Ordering::SeqCst) > flushed {
                    if let Some(wait) = gather.wait_for(sh.active_writers.load(Ordering::Relaxed)) {
                        let caught = self.gather(sh, wait);
                        gather.record_wait(caught);
                        copied = self.link.advance();
                    }
                }
                if let Err(e) = self.write_out(sh, &mut seg, copied, sync) {
                    sh.fail(&e);
                    return;
                }
                if sync {
                    last_sync = Instant::now();
                }
                continue;
            }
            if stopping && copied >= self.position() {
                return;
            }
            let waiting_copy = self.flush_request.load(Ordering::SeqCst) > copied
                || self.space_request.load(Ordering::SeqCst) > copied
                || stopping;
            self.bell.sleeping(if waiting_copy { WAIT_COPY } else { IDLE });
            // Re-check after the announcement: a request or copy published
            // before it is seen here; one after it rings the bell.
            let copied = self.link.advance();
            let timer = last_sync.elapsed() >= delay;
            if self.wants(sh, copied, written, flushed, sh.is_stopping(), timer).is_none()
                && !(sh.is_stopping() && copied >= self.position())
            {
                let left = delay.saturating_sub(last_sync.elapsed()).max(Duration::from_millis(1));
                super::park_timeout(if waiting_copy { left.min(Duration::from_millis(10)) } else { left });
            }
            self.bell.awake();
        }
    }

    /// Holds a commit's flush back for up to `wait`, until a later flush
    /// request arrives and its record is copied (or the log stops, or an
    /// inserter needs room); returns whether a later request came. The
    /// writer sleeps meanwhile: a requester rings the bell, and a copy
    /// rings it once a later request is known (`WAIT_COPY`).
    fn gather(&self, sh: &Shared, wait: Duration) -> bool {
        let first = self.flush_request.load(Ordering::SeqCst);
        let deadline = Instant::now() + wait;
        loop {
            let request = self.flush_request.load(Ordering::SeqCst);
            let caught = request > first;
            self.bell.sleeping(if caught { WAIT_COPY } else { IDLE });
            let request = self.flush_request.load(Ordering::SeqCst);
            let caught = request > first;
            let done = (caught && self.link.advance() >= request)
                || sh.is_stopping()
                || self.space_request.load(Ordering::SeqCst) > sh.written.load(Ordering::SeqCst);
            let now = Instant::now();
            if done || now >= deadline {
                self.bell.awake();
                return caught;
            }
            super::park_timeout(deadline - now);
            self.bell.awake();
        }
    }

    /// `Some(sync)` if there is something to write or sync now.
    fn wants(&self, sh: &Shared, copied: u64, written: u64, flushed: u64, stopping: bool, timer: bool) -> Option<bool> {
        let sync = copied > flushed && (self.flush_request.load(Ordering::SeqCst) > flushed || timer || stopping);
        let write = copied > written
            && (sync
                || self.space_request.load(Ordering::SeqCst) > written
                || copied - written >= sh.ring.capacity() / 2);
        (sync || write).then_some(sync)
    }

    fn write_out(&self, sh: &Shared, seg: &mut SegmentWriter, copied: u64, sync: bool) -> Result<(), WalError> {
        let written = sh.written.load(Ordering::Relaxed);
        if copied > written {
            seg.write_from_ring(&sh.ring, written, copied, &sh.counters)?;
            sh.written.store(copied, Ordering::SeqCst);
            self.space_waiters.wake(written, copied);
        }
        if sync {
            seg.sync(&sh.counters)?;
            let flushed = sh.flushed.swap(copied, Ordering::SeqCst);
            self.flush_waiters.wake(flushed, copied);
        }
        Ok(())
    }
}
