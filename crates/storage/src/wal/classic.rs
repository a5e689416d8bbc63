//! `wal.insert = classic`: PostgreSQL 15's insertion and flush
//! (`xlog.c`: `ReserveXLogInsertLocation`, `WALInsertLockAcquire`,
//! `WaitXLogInsertionsToFinish`, `XLogFlush`).
//!
//! * **Reservation** under one spinlock, `insertpos_lck`, guarding the
//!   insert position (an atomic only so that safe Rust may read it; every
//!   change is under the spinlock).
//! * **Copy** under one of `wal.insert_locks` `WALInsert` LWLocks, chosen
//!   by thread. The holder publishes the start of its insertion in the
//!   slot's `inserting_at` — inside the spinlock's critical section, so a
//!   flusher that read the insert position under the spinlock sees every
//!   insertion reserved before it — and stores [`IDLE`] (`Release`) when
//!   the copy is done.
//! * **Flush**: wait for the insertions below the target (taking each
//!   busy slot's lock shared, to sleep until its holder finishes), then
//!   `WALWrite` with `LWLockAcquireOrWait` semantics: whoever gets it
//!   writes and `fdatasync`s everything finished; the others wake, find
//!   their LSN flushed (group commit), or retry. `commit_delay` sleeps
//!   under the lock when `commit_siblings` other writers are active, then
//!   extends the target to whatever finished meanwhile without waiting.
//! * **Ring full**: the inserter (holding its slot, whose `inserting_at`
//!   is already past what it needs written) waits for the insertions
//!   below, takes `WALWrite` and writes; counted in `wal_buffers_full`.
//!
//! Nobody waits for an insertion while holding `WALWrite`: an inserter
//! that needs room would otherwise wait for `WALWrite` while its holder
//! waits for it. Insertions wait only for insertions that start earlier,
//! so the waits cannot form a cycle.

use super::record::{seal, HEADER_BYTES};
use super::segment::SegmentWriter;
use super::stats::thread_number;
use super::{Lsn, Shared, WalError};
use crate::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;
use turnstile_sync::{CachePadded, LwLock, LwLockPolicy, Tranche};

/// `inserting_at` of a slot with no insertion at a known position.
pub const IDLE: u64 = u64::MAX;

/// PostgreSQL's `slock_t`: a test-and-test-and-set spinlock.
#[derive(Debug, Default)]
pub struct SpinLock(AtomicBool);

/// Releases a [`SpinLock`] when dropped.
#[must_use]
#[derive(Debug)]
pub struct SpinGuard<'a>(&'a SpinLock);

impl SpinLock {
    /// Spins until it holds the lock.
    #[inline]
    pub fn lock(&self) -> SpinGuard<'_> {
        #[cfg(not(loom))]
        let backoff = crossbeam_utils::Backoff::new();
        while self.0.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
            // loom: one failed try, then let the holder run.
            #[cfg(loom)]
            crate::sync::thread::yield_now();
            #[cfg(not(loom))]
            while self.0.load(Ordering::Relaxed) {
                if backoff.is_completed() {
                    crate::sync::thread::yield_now();
                } else {
                    backoff.snooze();
                }
            }
        }
        SpinGuard(self)
    }
}

impl Drop for SpinGuard<'_> {
    fn drop(&mut self) {
        self.0 .0.store(false, Ordering::Release);
    }
}

/// One `WALInsert` lock and the position of its holder's insertion.
#[derive(Debug)]
pub struct InsertSlot {
    lock: LwLock<()>,
    inserting_at: AtomicU64,
}

/// The reservation and the insertion slots: the part of `classic` the
/// loom model runs.
#[derive(Debug)]
pub struct ClassicReservation {
    insertpos_lck: SpinLock,
    /// The insert position (`CurrBytePos`); changed only under `insertpos_lck`.
    pos: AtomicU64,
    slots: Box<[CachePadded<InsertSlot>]>,
}

/// An insertion in progress: its slot's lock is held.
#[must_use]
#[derive(Debug)]
pub struct Insertion<'a> {
    slot: &'a InsertSlot,
    _guard: turnstile_sync::LwLockExclusiveGuard<'a, ()>,
    /// The reserved start.
    pub start: u64,
}

impl Drop for Insertion<'_> {
    fn drop(&mut self) {
        self.slot.inserting_at.store(IDLE, Ordering::Release);
    }
}

impl ClassicReservation {
    /// Starts inserting at `start`, with `locks` insertion locks.
    pub fn new(start: u64, locks: usize) -> ClassicReservation {
        let slot = || {
            CachePadded::new(InsertSlot {
                lock: LwLock::new(Tranche::WalInsert, LwLockPolicy::Barging, ()),
                inserting_at: AtomicU64::new(IDLE),
            })
        };
        ClassicReservation {
            insertpos_lck: SpinLock::default(),
            pos: AtomicU64::new(start),
            slots: (0..locks.max(1)).map(|_| slot()).collect(),
        }
    }

    /// The insert position (no lock: a statistic).
    pub fn position(&self) -> u64 {
        self.pos.load(Ordering::Acquire)
    }

    /// Takes insertion lock `which` and reserves `len` bytes: two shared
    /// acquisitions. Dropping the result ends the insertion.
    pub fn begin(&self, which: usize, len: u64) -> Insertion<'_> {
        let slot = &self.slots[which % self.slots.len()];
        let guard = slot.lock.lock_exclusive();
        let start = {
            let _spin = self.insertpos_lck.lock();
            let start = self.pos.load(Ordering::Relaxed);
            self.pos.store(start + len, Ordering::Relaxed);
            slot.inserting_at.store(start, Ordering::Relaxed);
            start
        };
        Insertion { slot, _guard: guard, start }
    }

    /// Waits until every insertion below `upto` (clamped to the insert
    /// position) is copied; returns how far the stream is then complete
    /// and the shared acquisitions it made.
    pub fn wait_insertions(&self, upto: u64) -> (u64, u64) {
        let reserved = {
            let _spin = self.insertpos_lck.lock();
            self.pos.load(Ordering::Relaxed)
        };
        let upto = upto.min(reserved);
        let (mut finished, mut acquisitions) = (reserved, 1);
        for slot in self.slots.iter() {
            loop {
                let at = slot.inserting_at.load(Ordering::Acquire);
                if at == IDLE {
                    break;
                }
                if at >= upto {
                    finished = finished.min(at);
                    break;
                }
                // Sleep until the holder finishes (`LWLockWaitForVar`).
                drop(slot.lock.lock_shared());
                acquisitions += 1;
            }
        }
        (finished, acquisitions)
    }

    /// How far the stream is complete, at least `lower` (which must be
    /// complete), without waiting: for use under `WALWrite`.
    pub fn finished_now(&self, lower: u64) -> u64 {
        let mut finished = self.position();
        for slot in self.slots.iter() {
            let at = slot.inserting_at.load(Ordering::Acquire);
            if at != IDLE {
                finished = finished.min(at);
            }
        }
        finished.max(lower)
    }
}

/// The `classic` state of a [`super::Wal`].
#[derive(Debug)]
pub struct Classic {
    /// Reservation and insertion slots.
    pub reservation: ClassicReservation,
    write_lock: LwLock<SegmentWriter>,
}

impl Classic {
    /// Starts at `start`.
    pub fn new(start: u64, locks: usize, writer: SegmentWriter) -> Classic {
        Classic {
            reservation: ClassicReservation::new(start, locks),
            write_lock: LwLock::new(Tranche::WalWrite, LwLockPolicy::Barging, writer),
        }
    }

    /// Inserts the encoded record `buf`; returns its end.
    pub fn insert(&self, sh: &Shared, buf: &mut [u8], partial_crc: u32) -> Result<Lsn, WalError> {
        let len = buf.len() as u64;
        let ins = self.reservation.begin(thread_number(), len);
        sh.counters.count_acquisitions(2);
        let (start, end) = (ins.start, ins.start + len);
        seal(buf, partial_crc, Lsn(start));
        let cap = sh.ring.capacity();
        if sh.written.load(Ordering::Acquire) + cap < end {
            sh.counters.count_buffers_full();
            while sh.written.load(Ordering::Acquire) + cap < end {
                sh.check_failed()?;
                let (finished, n) = self.reservation.wait_insertions(end - cap);
                let mut w = self.write_lock.lock_exclusive();
                sh.counters.count_acquisitions(n + 1);
                sh.write_locked(&mut w, finished, false)?;
            }
        }
        sh.ring.store(start, buf);
        drop(ins);
        debug_assert!(len >= HEADER_BYTES as u64);
        Ok(Lsn(end))
    }

    /// `XLogFlush`: returns once the stream is durable up to `upto`.
    pub fn flush(&self, sh: &Shared, upto: u64) -> Result<(), WalError> {
        loop {
            if sh.flushed.load(Ordering::Acquire) >= upto {
                return Ok(());
            }
            sh.check_failed()?;
            let (finished, n) = self.reservation.wait_insertions(upto);
            sh.counters.count_acquisitions(n);
            let Some(mut w) = self.write_lock.lock_exclusive_or_wait() else {
                continue; // someone flushed meanwhile: look again
            };
            sh.counters.count_acquisitions(1);
            if sh.flushed.load(Ordering::Acquire) >= upto {
                return Ok(());
            }
            let mut target = finished;
            let c = &sh.config;
            if c.commit_delay_us > 0
                && c.fsync
                && sh.active_writers.load(Ordering::Relaxed).saturating_sub(1) >= u64::from(c.commit_siblings)
            {
                std::thread::sleep(Duration::from_micros(c.commit_delay_us));
                target = self.reservation.finished_now(target);
            }
            return sh.write_locked(&mut w, target, true);
        }
    }

    /// The WAL writer's background flush (asynchronous commits).
    pub fn background_flush(&self, sh: &Shared) -> Result<(), WalError> {
        let pos = self.reservation.position();
        if sh.flushed.load(Ordering::Acquire) < pos {
            self.flush(sh, pos)?;
        }
        Ok(())
    }
}
