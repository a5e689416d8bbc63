//! loom models of the write-ahead log's concurrent core, under both
//! `wal.insert` profiles, on the real types of `turnstile_storage::wal`:
//!
//! * **reservation**: two inserters never get overlapping ranges
//!   (`classic`: `insertpos_lck` under a `WALInsert` lock; `scalable`: one
//!   `fetch_add`);
//! * **written prefix**: what a flusher may write — `classic`'s
//!   `wait_insertions` result, `scalable`'s link-buffer tail — never
//!   passes a copy that has not finished, and every byte below it reads
//!   as its inserter wrote it;
//! * **redo point**: a checkpoint taking its redo point while a change is
//!   logged as a delta — the record lies before the new redo point, or its
//!   writer sees the point moved and logs the page whole after it
//!   ([`RedoPoint`]);
//! * **flush/wake-up handshake**: no committer sleeps for ever
//!   (`classic`: `WALWrite` taken with `lock_exclusive_or_wait`;
//!   `scalable`: the WAL writer's [`WriterBell`] and the flush
//!   [`WaitList`]). A lost wake-up leaves every thread parked, which loom
//!   reports as a deadlock.
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test --release
//! -p turnstile-storage --test loom_wal --target-dir target/loom`
#![cfg(loom)]

use loom::sync::atomic::{AtomicU64, Ordering};
use loom::sync::Arc;
use loom::thread;
use turnstile_storage::page_log::RedoPoint;
use turnstile_storage::wal::classic::ClassicReservation;
use turnstile_storage::wal::link::LinkBuf;
use turnstile_storage::wal::notify::WaitList;
use turnstile_storage::wal::ring::Ring;
use turnstile_storage::wal::scalable::{WriterBell, IDLE};
use turnstile_sync::{LwLock, LwLockPolicy, Tranche};

/// Records of the models: 32 bytes (the smallest record), so the link
/// buffer has a slot per record; the ring holds four.
const REC: u64 = 32;
const RING: u64 = 128;

/// A record's words: its inserter's tag.
fn bytes(tag: u8) -> Vec<u8> {
    vec![tag; REC as usize]
}

/// Every byte of `[from, to)` is some inserter's tag (none is left zero,
/// i.e. unwritten), and each record is one tag throughout.
fn check_prefix(ring: &Ring, from: u64, to: u64) {
    let mut out = Vec::new();
    ring.load(from, to, &mut out);
    for rec in out.chunks(REC as usize) {
        assert!(rec[0] != 0, "a byte below the written prefix was not copied yet");
        assert!(rec.iter().all(|&b| b == rec[0]), "a record below the prefix is torn");
    }
}

/// A model with room for the spinlock's and the LWLocks' retries.
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.max_branches = 20_000;
    b.check(f);
}

#[test]
fn classic_reservations_never_overlap() {
    model(|| {
        let res = Arc::new(ClassicReservation::new(0, 2));
        let r2 = Arc::clone(&res);
        let t = thread::spawn(move || {
            let ins = r2.begin(1, REC);
            ins.start
        });
        let mine = res.begin(0, REC).start;
        let theirs = t.join().unwrap();
        assert_ne!(mine, theirs, "two reservations overlap");
        assert_eq!(mine.max(theirs), REC);
        assert_eq!(res.position(), 2 * REC);
    });
}

#[test]
fn classic_written_prefix_waits_for_insertions() {
    model(|| {
        let res = Arc::new(ClassicReservation::new(0, 2));
        let ring = Arc::new(Ring::new(RING));
        let inserter = {
            let (res, ring) = (Arc::clone(&res), Arc::clone(&ring));
            thread::spawn(move || {
                let ins = res.begin(1, REC);
                ring.store(ins.start, &bytes(1));
            })
        };
        // A flusher: everything below what it may write is copied.
        let (finished, _) = res.wait_insertions(REC);
        check_prefix(&ring, 0, finished);
        inserter.join().unwrap();
        let (finished, _) = res.wait_insertions(REC);
        assert_eq!(finished, REC);
        check_prefix(&ring, 0, REC);
    });
}

#[test]
fn scalable_reservation_and_link_buffer() {
    loom::model(|| {
        let reserved = Arc::new(AtomicU64::new(0));
        let ring = Arc::new(Ring::new(RING));
        let link = Arc::new(LinkBuf::new(RING, 0));
        let inserters: Vec<_> = (0..2u8)
            .map(|i| {
                let (reserved, ring, link) = (Arc::clone(&reserved), Arc::clone(&ring), Arc::clone(&link));
                thread::spawn(move || {
                    let start = reserved.fetch_add(REC, Ordering::Relaxed);
                    ring.store(start, &bytes(i + 1));
                    link.complete(start, start + REC);
                    start
                })
            })
            .collect();
        // The WAL writer: the tail never passes an unfinished copy.
        let tail = link.advance();
        check_prefix(&ring, 0, tail);
        let starts: Vec<u64> = inserters.into_iter().map(|h| h.join().unwrap()).collect();
        assert_ne!(starts[0], starts[1], "two reservations overlap");
        assert_eq!(link.advance(), 2 * REC);
        check_prefix(&ring, 0, 2 * REC);
    });
}

#[test]
fn scalable_link_slots_are_reused_a_lap_later() {
    // A ring of four records: the fifth record reuses the first's slot
    // once the writer has passed it.
    loom::model(|| {
        let link = Arc::new(LinkBuf::new(RING, 0));
        for k in 0..4 {
            link.complete(k * REC, (k + 1) * REC);
        }
        assert_eq!(link.advance(), RING);
        let l2 = Arc::clone(&link);
        let t = thread::spawn(move || l2.complete(RING + REC, RING + 2 * REC));
        link.complete(RING, RING + REC);
        let tail = link.advance();
        assert!(tail == RING + REC || tail == RING + 2 * REC, "tail {tail}");
        t.join().unwrap();
        assert_eq!(link.advance(), RING + 2 * REC);
    });
}

#[test]
fn classic_group_commit_handshake() {
    // Two committers flush through `WALWrite` with acquire-or-wait: each
    // returns with its LSN flushed; none sleeps for ever.
    loom::model(|| {
        let write = Arc::new(LwLock::new(Tranche::Test, LwLockPolicy::Barging, ()));
        let flushed = Arc::new(AtomicU64::new(0));
        let reserved = Arc::new(AtomicU64::new(0));
        let committers: Vec<_> = (0..2)
            .map(|_| {
                let (write, flushed, reserved) = (Arc::clone(&write), Arc::clone(&flushed), Arc::clone(&reserved));
                thread::spawn(move || {
                    let mine = reserved.fetch_add(REC, Ordering::SeqCst) + REC;
                    loop {
                        if flushed.load(Ordering::Acquire) >= mine {
                            return;
                        }
                        let Some(_guard) = write.lock_exclusive_or_wait() else { continue };
                        if flushed.load(Ordering::Acquire) < mine {
                            // Writes and syncs everything inserted so far.
                            flushed.store(reserved.load(Ordering::SeqCst), Ordering::Release);
                        }
                        return;
                    }
                })
            })
            .collect();
        for c in committers {
            c.join().unwrap();
        }
        assert_eq!(flushed.load(Ordering::Acquire), 2 * REC);
    });
}

#[test]
fn scalable_flush_wakeup_handshake() {
    // A committer publishes its flush request, rings the writer's bell and
    // sleeps in the flush wait list; the writer flushes what is asked,
    // wakes the covered sleepers, and sleeps when nothing is asked.
    loom::model(|| {
        let bell = Arc::new(WriterBell::default());
        let request = Arc::new(AtomicU64::new(0));
        let flushed = Arc::new(AtomicU64::new(0));
        let waiters = Arc::new(WaitList::new(1));
        let writer = {
            let (bell, request, flushed, waiters) =
                (Arc::clone(&bell), Arc::clone(&request), Arc::clone(&flushed), Arc::clone(&waiters));
            thread::spawn(move || loop {
                let want = request.load(Ordering::SeqCst);
                let done = flushed.load(Ordering::SeqCst);
                if want > done {
                    flushed.store(want, Ordering::SeqCst);
                    waiters.wake(done, want);
                    if want >= REC {
                        return;
                    }
                    continue;
                }
                bell.sleeping(IDLE);
                if request.load(Ordering::SeqCst) <= flushed.load(Ordering::SeqCst) {
                    thread::park();
                }
                bell.awake();
            })
        };
        let writer_thread = writer.thread().clone();
        request.fetch_max(REC, Ordering::SeqCst);
        bell.ring(&writer_thread);
        waiters.wait(REC, || flushed.load(Ordering::SeqCst), || false);
        assert!(flushed.load(Ordering::SeqCst) >= REC);
        writer.join().unwrap();
    });
}

/// One change logged while a checkpoint takes its redo point: `reserve`
/// places the record (returns its end), `position` is what the checkpoint
/// reads. The writer read the redo point (`seen`) before reserving and
/// logs a delta unless that read saw a checkpoint in progress; afterwards
/// it asks whether the point moved. A delta must not lie after the new
/// redo point unnoticed, unless the point is the one it was decided
/// against. The log holds one record past the old redo point (0) already,
/// so the new point differs from it.
fn redo_point_model(reserve: impl Fn() -> u64 + Send + Sync + 'static, position: impl Fn() -> u64 + Send + 'static) {
    let point = Arc::new(RedoPoint::new(0));
    let p2 = Arc::clone(&point);
    let checkpoint = thread::spawn(move || p2.advance(position));
    let seen = point.get();
    let delta = seen != u64::MAX;
    let end = reserve();
    let moved = point.moved_since(seen);
    let redo = checkpoint.join().unwrap();
    assert!(
        !delta || moved || end <= redo || redo == seen,
        "a delta decided against redo point {seen} lies after the new one ({redo}, record end {end}) unnoticed"
    );
}

#[test]
fn redo_point_handshake_classic() {
    model(|| {
        let res = Arc::new(ClassicReservation::new(REC, 2));
        let r2 = Arc::clone(&res);
        redo_point_model(move || res.begin(0, REC).start + REC, move || r2.position());
    });
}

#[test]
fn redo_point_handshake_scalable() {
    model(|| {
        // `Scalable::insert`'s reservation and `Scalable::position`.
        let reserved = Arc::new(AtomicU64::new(REC));
        let r2 = Arc::clone(&reserved);
        redo_point_model(move || reserved.fetch_add(REC, Ordering::Relaxed) + REC, move || r2.load(Ordering::Acquire));
    });
}
