//! Unit tests of the LWLock: shared and exclusive grants, the fair and
//! barging policies, wake-ups and the wait counters (the loom models are in
//! `tests/loom_lwlock.rs`).

use super::*;
use crate::stats::tranche_stats;
use crate::sync::counter::AtomicBool;
use std::time::Duration;

fn all() -> [LwLockPolicy; 2] {
    LwLockPolicy::ALL
}

#[test]
fn try_variants_respect_holders() {
    for policy in all() {
        let lock = LwLock::new(Tranche::Test, policy, 5);
        let s1 = lock.try_lock_shared().unwrap();
        let s2 = lock.try_lock_shared().unwrap();
        assert!(lock.try_lock_exclusive().is_none());
        drop((s1, s2));
        let x = lock.try_lock_exclusive().unwrap();
        assert!(lock.try_lock_shared().is_none());
        assert!(lock.try_lock_exclusive().is_none());
        drop(x);
        assert!(!lock.is_locked());
    }
}

#[test]
fn fair_blocks_new_readers_behind_a_queued_writer_and_barging_does_not() {
    for policy in all() {
        let lock = Arc::new(LwLock::new(Tranche::Test, policy, 0));
        let reader = lock.lock_shared();
        let writer = {
            let lock = Arc::clone(&lock);
            std::thread::spawn(move || *lock.lock_exclusive() += 1)
        };
        while !lock.has_exclusive_waiter() {
            std::thread::sleep(Duration::from_millis(1));
        }
        let late_reader = lock.try_lock_shared();
        match policy {
            LwLockPolicy::Fair => assert!(late_reader.is_none(), "fair let a reader pass a queued writer"),
            LwLockPolicy::Barging => assert!(late_reader.is_some(), "barging queued a reader behind a writer"),
        }
        drop(late_reader);
        drop(reader);
        writer.join().unwrap();
        assert_eq!(*lock.lock_shared(), 1);
    }
}

#[test]
fn counters_are_kept_per_tranche() {
    let before = tranche_stats(Tranche::Catalog);
    let lock = Arc::new(LwLock::new(Tranche::Catalog, LwLockPolicy::Fair, ()));
    let held = lock.lock_exclusive();
    let waiter = {
        let lock = Arc::clone(&lock);
        std::thread::spawn(move || drop(lock.lock_shared()))
    };
    std::thread::sleep(Duration::from_millis(20));
    drop(held);
    waiter.join().unwrap();
    let delta = tranche_stats(Tranche::Catalog).since(&before);
    assert_eq!(delta.acquisitions, 2);
    assert_eq!(delta.waits, 1);
    assert!(delta.wait_ns >= 10_000_000, "wait time {} ns", delta.wait_ns);
}

#[test]
fn timed_exclusive_reports_zero_uncontended_and_the_wait_behind_a_holder() {
    const HELD: Duration = Duration::from_millis(30);
    for policy in all() {
        let lock = Arc::new(LwLock::new(Tranche::Test, policy, 0u64));
        let (mut g, wait_ns) = lock.lock_exclusive_timed();
        assert_eq!(wait_ns, 0, "{policy}: uncontended acquisition reported a wait");
        *g += 1;
        // Held shared, so a barging writer cannot slip in either: it
        // waits for the reader to leave.
        drop(g);
        let reader = lock.lock_shared();
        let writer = {
            let lock = Arc::clone(&lock);
            std::thread::spawn(move || {
                let (mut g, wait_ns) = lock.lock_exclusive_timed();
                *g += 1;
                wait_ns
            })
        };
        while !lock.has_exclusive_waiter() {
            std::thread::sleep(Duration::from_millis(1));
        }
        let queued = std::time::Instant::now();
        std::thread::sleep(HELD);
        let held_ns = queued.elapsed().as_nanos() as u64;
        drop(reader);
        let wait_ns = writer.join().unwrap();
        assert!(wait_ns >= held_ns, "{policy}: waited {wait_ns} ns behind a {held_ns} ns hold");
        assert!(wait_ns < 10_000_000_000, "{policy}: waited {wait_ns} ns behind a {held_ns} ns hold");
        let (g, wait_ns) = lock.lock_exclusive_timed();
        assert_eq!((*g, wait_ns), (2, 0), "{policy}");
    }
}

#[test]
fn a_waiting_thread_shows_its_tranche_in_its_activity_slot() {
    let table = crate::activity::ActivityTable::new(2);
    let lock = Arc::new(LwLock::new(Tranche::BufferMapping, LwLockPolicy::Fair, ()));
    let held = lock.lock_exclusive();
    let done = Arc::new(AtomicBool::new(false));
    let waiter = {
        let (lock, table, done) = (Arc::clone(&lock), Arc::clone(&table), Arc::clone(&done));
        std::thread::spawn(move || {
            let me = table.register().unwrap();
            let _attached = me.attach();
            drop(lock.lock_shared());
            done.store(true, Ordering::Relaxed);
        })
    };
    let mut seen = None;
    for _ in 0..2000 {
        if let Some(row) = table.snapshot().into_iter().find(|r| r.wait_event.is_some()) {
            seen = Some((row.wait_event_type, row.wait_event));
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    drop(held);
    waiter.join().unwrap();
    assert!(done.load(Ordering::Relaxed));
    assert_eq!(seen, Some((Some("LWLock"), Some("BufferMapping"))));
}

/// Many threads, both modes, an invariant checked inside every critical
/// section: an exclusive holder is alone, shared holders see no writer.
#[test]
fn stress_mutual_exclusion_both_policies() {
    for policy in all() {
        let lock = Arc::new(LwLock::new(Tranche::Test, policy, (0u64, 0u64)));
        let readers_inside = Arc::new(AtomicU32::new(0));
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let (lock, inside) = (Arc::clone(&lock), Arc::clone(&readers_inside));
                std::thread::spawn(move || {
                    for i in 0..5_000u64 {
                        if (i + t) % 4 == 0 {
                            let mut g = lock.lock_exclusive();
                            assert_eq!(inside.load(Ordering::SeqCst), 0, "writer with readers inside");
                            g.0 += 1;
                            g.1 += 1;
                        } else {
                            let g = lock.lock_shared();
                            inside.fetch_add(1, Ordering::SeqCst);
                            assert_eq!(g.0, g.1, "reader saw a half-done write");
                            inside.fetch_sub(1, Ordering::SeqCst);
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert!(lock.is_idle(), "{policy}: flags left behind at quiescence: {lock:?}");
        let g = lock.lock_shared();
        assert_eq!(g.0, 8 * 5_000 / 4, "{policy}: lost exclusive sections");
        assert!(!lock.has_exclusive_waiter());
        assert!(!lock.is_idle(), "{policy}: a holder that the state word does not show");
    }
}
