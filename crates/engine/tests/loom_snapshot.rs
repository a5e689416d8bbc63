//! loom models of the snapshot protocols (`mvcc/snapshot.rs`), each run
//! under both `txn.snapshot` settings, `procarray` and `csn`:
//!
//! 1. **Commits made in order are seen in order**: T1 commits, then T2
//!    (one writer thread commits both); a snapshot taken
//!    concurrently satisfies `sees(T2) ⇒ sees(T1)`, and what it sees does
//!    not change later — a snapshot that answered "invisible" for an id
//!    and "visible" afterwards would show half of one commit's writes.
//! 2. **A completed commit is seen**: a snapshot taken after a commit
//!    returned (observed through a flag, or after a join) sees it.
//! 3. **The horizon is never ahead of a snapshot**: a VACUUM thread
//!    computes `horizon()` while a commit and a snapshot run; if
//!    `all_visible(horizon, x)`, the snapshot — taken concurrently — and
//!    one taken afterwards both see `x`.
//!
//! At most one thread of a model can be waiting out a `csn` commit's
//! `COMMITTING` word (or any other spin) at a time: loom would otherwise
//! alternate two yielding threads without end.
//!
//! The protocol's real code runs: the lock is the real `LwLock` and every
//! atomic comes from the `turnstile_sync::sync` facade. The status log has
//! 8-id segments (`Snapshots::with_segment_bits`), allocated before the
//! threads start (the segment directory's `OnceLock` is std's and no part
//! of the model).
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test --release
//! -p turnstile-engine --test loom_snapshot --target-dir target/loom`
#![cfg(loom)]

use turnstile_engine::mvcc::{Snapshots, FIRST_XID};
use turnstile_sync::config::SnapshotProtocol;
use turnstile_sync::sync::atomic::{AtomicBool, Ordering};
use turnstile_sync::sync::{thread, Arc};
use turnstile_sync::LwLockPolicy;

const PROTOCOLS: [SnapshotProtocol; 2] = [SnapshotProtocol::Procarray, SnapshotProtocol::Csn];

/// Backend slots of a model: writers, readers and a spare.
const SLOTS: usize = 4;

/// Status-log segments of 2^3 ids: every id of a model is in the first.
const SEGMENT_BITS: u32 = 3;

/// The shared state with every slot connected, as each profile sets it up
/// (`classic`: barging locks, `scalable`: fair ones).
fn snapshots(protocol: SnapshotProtocol) -> Arc<Snapshots> {
    let policy = match protocol {
        SnapshotProtocol::Procarray => LwLockPolicy::Barging,
        SnapshotProtocol::Csn => LwLockPolicy::Fair,
    };
    let s = Snapshots::with_segment_bits(protocol, policy, SLOTS, FIRST_XID, SEGMENT_BITS);
    for slot in 0..SLOTS {
        s.register(slot);
    }
    // Allocates the first segment now, outside the model's threads.
    assert_eq!(s.clog().status(FIRST_XID), 0);
    Arc::new(s)
}

#[test]
fn commits_made_in_order_are_seen_in_order() {
    for protocol in PROTOCOLS {
        // `first_gets_lower_id`: T1 holds the lower id, or the higher one
        // (a transaction that started later can commit first).
        for first_gets_lower_id in [true, false] {
            loom::model(move || {
                let s = snapshots(protocol);
                let (a, b) = (s.assign_xid(0).unwrap(), s.assign_xid(1).unwrap());
                let ((t1, slot1), (t2, slot2)) = if first_gets_lower_id { ((a, 0), (b, 1)) } else { ((b, 1), (a, 0)) };
                let writer = {
                    let s = s.clone();
                    thread::spawn(move || {
                        s.commit(slot1, t1).unwrap();
                        s.commit(slot2, t2).unwrap();
                    })
                };
                let snap = s.take(2);
                let (saw1, saw2) = (s.sees(&snap, t1, 0), s.sees(&snap, t2, 0));
                assert!(
                    !saw2 || saw1,
                    "{protocol:?}: {snap:?} sees T2 ({t2}) but not T1 ({t1}), which committed first"
                );
                writer.join().unwrap();
                assert_eq!(s.sees(&snap, t1, 0), saw1, "{protocol:?}: {snap:?} changed its mind about T1 ({t1})");
                assert_eq!(s.sees(&snap, t2, 0), saw2, "{protocol:?}: {snap:?} changed its mind about T2 ({t2})");
                s.release(2);
            });
        }
    }
}

#[test]
fn a_commit_that_completed_before_a_snapshot_is_seen() {
    for protocol in PROTOCOLS {
        loom::model(move || {
            let s = snapshots(protocol);
            let x = s.assign_xid(0).unwrap();
            let done = Arc::new(AtomicBool::new(false));
            let writer = {
                let (s, done) = (s.clone(), done.clone());
                thread::spawn(move || {
                    s.commit(0, x).unwrap();
                    done.store(true, Ordering::SeqCst);
                })
            };
            let committed_before = done.load(Ordering::SeqCst);
            let snap = s.take(1);
            let saw = s.sees(&snap, x, 0);
            assert!(saw || !committed_before, "{protocol:?}: {snap:?} misses {x}, whose commit had returned");
            writer.join().unwrap();
            assert_eq!(s.sees(&snap, x, 0), saw, "{protocol:?}: {snap:?} changed its mind about {x}");
            s.release(1);
            let after = s.take(1);
            assert!(s.sees(&after, x, 0), "{protocol:?}: {after:?}, taken after the join, misses {x}");
        });
    }
}

#[test]
fn the_horizon_is_never_ahead_of_a_snapshot() {
    for protocol in PROTOCOLS {
        loom::model(move || {
            let s = snapshots(protocol);
            let x = s.assign_xid(0).unwrap();
            let writer = {
                let s = s.clone();
                thread::spawn(move || s.commit(0, x).unwrap())
            };
            let vacuum = {
                let s = s.clone();
                thread::spawn(move || {
                    let h = s.horizon();
                    (h, s.all_visible(h, x))
                })
            };
            let snap = s.take(1);
            writer.join().unwrap();
            let (h, all_visible) = vacuum.join().unwrap();
            // Checked after the joins: two threads waiting out `COMMITTING`
            // at once would let loom alternate them without end. The
            // snapshot's number was fixed by `take`.
            let saw = s.sees(&snap, x, 0);
            if all_visible {
                assert!(saw, "{protocol:?}: {x} is all-visible at {h:?} but {snap:?}, taken meanwhile, misses it");
                let after = s.take(2);
                assert!(s.sees(&after, x, 0), "{protocol:?}: {x} is all-visible at {h:?} but {after:?} misses it");
                s.release(2);
            }
            s.release(1);
        });
    }
}
