//! loom models of `LwLock` (run with `RUSTFLAGS="--cfg loom"`, bounded by
//! `LOOM_MAX_PREEMPTIONS`; see `.ci/run`).
//!
//! loom explores every interleaving of the model threads (up to the
//! preemption bound). A lost wake-up shows up as loom's "deadlock" failure:
//! every thread parked with nobody left to unpark it. Mutual exclusion is
//! checked twice: by an explicit holder count, and by loom's own tracking of
//! the `UnsafeCell` accesses made through the guards.
#![cfg(loom)]

use turnstile_sync::sync::atomic::{AtomicUsize, Ordering};
use turnstile_sync::sync::{thread, Arc};
use turnstile_sync::{LwLock, LwLockPolicy, Tranche};

const POLICIES: [LwLockPolicy; 2] = LwLockPolicy::ALL;

/// Holder bookkeeping independent of the lock: `exclusive`, `shared`.
#[derive(Default)]
struct Holders {
    exclusive: AtomicUsize,
    shared: AtomicUsize,
}

fn exclusive_section(lock: &LwLock<usize>, holders: &Holders) {
    let mut g = lock.lock_exclusive();
    assert_eq!(holders.exclusive.fetch_add(1, Ordering::SeqCst), 0, "two exclusive holders");
    assert_eq!(holders.shared.load(Ordering::SeqCst), 0, "exclusive holder beside a shared one");
    *g += 1;
    holders.exclusive.fetch_sub(1, Ordering::SeqCst);
}

fn shared_section(lock: &LwLock<usize>, holders: &Holders) {
    let g = lock.lock_shared();
    holders.shared.fetch_add(1, Ordering::SeqCst);
    assert_eq!(holders.exclusive.load(Ordering::SeqCst), 0, "shared holder beside an exclusive one");
    let _ = *g;
    holders.shared.fetch_sub(1, Ordering::SeqCst);
}

#[test]
fn exclusive_lockers_never_lose_a_wakeup() {
    for policy in POLICIES {
        loom::model(move || {
            let lock = Arc::new(LwLock::new(Tranche::Test, policy, 0usize));
            let holders = Arc::new(Holders::default());
            let t = {
                let (lock, holders) = (lock.clone(), holders.clone());
                thread::spawn(move || exclusive_section(&lock, &holders))
            };
            exclusive_section(&lock, &holders);
            t.join().unwrap();
            assert!(lock.is_idle(), "{policy}: flags left at quiescence");
            assert_eq!(*lock.lock_shared(), 2);
        });
    }
}

/// Three exclusive lockers: a woken waiter retries while another barges
/// (`fair`, `barging`), and the `WAKING` gate keeps a release from waking a
/// second waiter before the first has run — still nobody is left asleep.
#[test]
fn three_exclusive_lockers_never_lose_a_wakeup() {
    for policy in POLICIES {
        loom::model(move || {
            let lock = Arc::new(LwLock::new(Tranche::Test, policy, 0usize));
            let holders = Arc::new(Holders::default());
            let threads: Vec<_> = (0..2)
                .map(|_| {
                    let (lock, holders) = (lock.clone(), holders.clone());
                    thread::spawn(move || exclusive_section(&lock, &holders))
                })
                .collect();
            exclusive_section(&lock, &holders);
            for t in threads {
                t.join().unwrap();
            }
            assert!(lock.is_idle(), "{policy}: flags left at quiescence");
            assert_eq!(*lock.lock_shared(), 3);
        });
    }
}

#[test]
fn shared_and_exclusive_lockers_are_mutually_exclusive_and_all_finish() {
    for policy in POLICIES {
        loom::model(move || {
            let lock = Arc::new(LwLock::new(Tranche::Test, policy, 0usize));
            let holders = Arc::new(Holders::default());
            let reader = {
                let (lock, holders) = (lock.clone(), holders.clone());
                thread::spawn(move || shared_section(&lock, &holders))
            };
            let writer = {
                let (lock, holders) = (lock.clone(), holders.clone());
                thread::spawn(move || exclusive_section(&lock, &holders))
            };
            shared_section(&lock, &holders);
            reader.join().unwrap();
            writer.join().unwrap();
            assert!(lock.is_idle(), "{policy}: flags left at quiescence");
            assert_eq!(*lock.lock_shared(), 1);
        });
    }
}

#[test]
fn try_lock_never_breaks_exclusion() {
    for policy in POLICIES {
        loom::model(move || {
            let lock = Arc::new(LwLock::new(Tranche::Test, policy, 0usize));
            let holders = Arc::new(Holders::default());
            let t = {
                let (lock, holders) = (lock.clone(), holders.clone());
                thread::spawn(move || {
                    if let Some(mut g) = lock.try_lock_exclusive() {
                        assert_eq!(holders.shared.load(Ordering::SeqCst), 0);
                        *g += 1;
                    }
                })
            };
            shared_section(&lock, &holders);
            t.join().unwrap();
        });
    }
}

/// Under `fair`, once an exclusive waiter is queued, a
/// shared request that arrives later is granted only after it — also when
/// it arrives between the writer's wake-up and its retry (loom runs the
/// reader at every point of the release and the wake-up).
#[test]
fn a_queued_writer_is_not_passed_by_a_later_reader() {
    for policy in [LwLockPolicy::Fair] {
        loom::model(move || {
            let lock = Arc::new(LwLock::new(Tranche::Test, policy, 0usize));
            let ticket = Arc::new(AtomicUsize::new(0));
            let held = lock.lock_shared();
            let writer = {
                let (lock, ticket) = (lock.clone(), ticket.clone());
                thread::spawn(move || {
                    let _g = lock.lock_exclusive();
                    ticket.fetch_add(1, Ordering::SeqCst)
                })
            };
            while !lock.has_exclusive_waiter() {
                thread::yield_now();
            }
            let reader = {
                let (lock, ticket) = (lock.clone(), ticket.clone());
                thread::spawn(move || {
                    let _g = lock.lock_shared();
                    ticket.fetch_add(1, Ordering::SeqCst)
                })
            };
            drop(held);
            let w = writer.join().unwrap();
            let r = reader.join().unwrap();
            assert!(w < r, "{policy}: the later reader was granted before the queued writer");
            assert!(lock.is_idle(), "{policy}: flags left at quiescence");
        });
    }
}

/// Under `fair` an exclusive newcomer may take the lock between a queued
/// writer's wake-up and its retry (no hand-off, so no convoy); the writer
/// then re-queues at the head, and a reader that came after it (here the
/// main thread, once it has released) still does not pass it.
#[test]
fn fair_a_barging_writer_does_not_let_a_later_reader_pass_the_woken_one() {
    loom::model(|| {
        let lock = Arc::new(LwLock::new(Tranche::Test, LwLockPolicy::Fair, 0usize));
        let held = lock.lock_shared();
        let writer = {
            let lock = lock.clone();
            thread::spawn(move || *lock.lock_exclusive() += 1)
        };
        while !lock.has_exclusive_waiter() {
            thread::yield_now();
        }
        let barger = {
            let lock = lock.clone();
            thread::spawn(move || *lock.lock_exclusive() += 10)
        };
        drop(held);
        let seen = *lock.lock_shared();
        assert_eq!(seen % 10, 1, "the later reader passed the queued writer (saw {seen})");
        writer.join().unwrap();
        barger.join().unwrap();
        assert!(lock.is_idle(), "flags left at quiescence");
        assert_eq!(*lock.lock_shared(), 11);
    });
}

/// `lock_exclusive_timed` is `lock_exclusive` plus a report (`lock_exclusive`
/// is built on it, so the models above check its exclusion and wake-ups):
/// a locker that found the lock held and queued reports a wait (`> 0`,
/// loom has no clock), and one granted on the fast path reports none.
#[test]
fn timed_exclusive_reports_a_wait_exactly_when_it_queued() {
    for policy in POLICIES {
        loom::model(move || {
            let lock = Arc::new(LwLock::new(Tranche::Test, policy, 0usize));
            let held = lock.lock_shared();
            let writer = {
                let lock = lock.clone();
                thread::spawn(move || {
                    let (mut g, wait_ns) = lock.lock_exclusive_timed();
                    *g += 1;
                    wait_ns
                })
            };
            while !lock.has_exclusive_waiter() {
                thread::yield_now();
            }
            drop(held);
            assert!(writer.join().unwrap() > 0, "a queued writer reported no wait");
            let (g, wait_ns) = lock.lock_exclusive_timed();
            assert_eq!((*g, wait_ns), (1, 0), "an uncontended writer reported a wait");
        });
    }
}
