//! loom models of the fast-path / strong-lock handshake (the central
//! correctness argument of the crate documentation), run on the real code
//! of both protocols (`lock.fast_path_protocol = lwlock | lockfree`):
//!
//! ```text
//! RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 \
//!     cargo test --release -p turnstile-lock --test loom_fastpath --target-dir target/loom
//! ```
//!
//! 1. a weak locker and a strong locker never both hold;
//! 2. a transferred lock is released exactly once;
//! 3. a strong locker's transfer races the owner's `release_all`;
//! 4. the array grows while a strong locker scans.
//!
//! The configuration is tiny (one partition, one group of 16 slots, one
//! strong-lock counter, two backends) so every interleaving is explored
//! quickly.

#![cfg(loom)]

use std::sync::Arc;
use turnstile_lock::{LockError, LockManager, LockMode, LockTag, Wait};
use turnstile_sync::config::LockConfig;
use turnstile_sync::sync::atomic::{AtomicBool, Ordering};
use turnstile_sync::sync::thread;
use turnstile_sync::{FastPathProtocol, LwLockPolicy};

fn tiny(fast_path_slots_max: u32, fast_path_protocol: FastPathProtocol) -> Arc<LockManager> {
    let config = LockConfig {
        partitions: 1,
        fast_path_slots: 16,
        fast_path_slots_max,
        fast_path_protocol,
        strong_lock_counters: 1,
        max_locks: 8,
        max_backends: 2,
        deadlock_timeout_ms: 1000,
        lock_timeout_ms: 0,
    };
    LockManager::with_lock_config(&config, LwLockPolicy::Fair).unwrap()
}

fn assert_empty(m: &LockManager) {
    m.check_invariants();
    let o = m.occupancy();
    assert_eq!((o.lock_objects, o.fast_path_entries, o.strong_locks), (0, 0, 0), "{o:?}");
}

/// A weak (fast-path) and a strong locker on one relation are never both
/// inside their critical sections.
#[test]
fn weak_and_strong_lockers_never_both_hold() {
    for protocol in FastPathProtocol::ALL {
        weak_and_strong(protocol);
    }
}

fn weak_and_strong(protocol: FastPathProtocol) {
    loom::model(move || {
        let m = tiny(16, protocol);
        let t = LockTag::relation(1, 1);
        let weak_in = Arc::new(AtomicBool::new(false));
        let strong_in = Arc::new(AtomicBool::new(false));
        let weak = {
            let (m, weak_in, strong_in) = (Arc::clone(&m), Arc::clone(&weak_in), Arc::clone(&strong_in));
            thread::spawn(move || {
                let mut b = m.register().unwrap();
                b.lock(t, LockMode::AccessShare, Wait::Block).unwrap();
                weak_in.store(true, Ordering::SeqCst);
                assert!(!strong_in.load(Ordering::SeqCst), "weak and strong lock held together");
                weak_in.store(false, Ordering::SeqCst);
                b.unlock(t, LockMode::AccessShare).unwrap();
            })
        };
        let mut b = m.register().unwrap();
        b.lock(t, LockMode::AccessExclusive, Wait::Block).unwrap();
        strong_in.store(true, Ordering::SeqCst);
        assert!(!weak_in.load(Ordering::SeqCst), "strong and weak lock held together");
        strong_in.store(false, Ordering::SeqCst);
        b.unlock(t, LockMode::AccessExclusive).unwrap();
        weak.join().unwrap();
        drop(b);
        assert_empty(&m);
    });
}

/// A fast-path lock that a strong locker transfers while its owner
/// releases it is released exactly once: from the slot if the owner got
/// there first, from the shared table otherwise.
#[test]
fn a_transferred_lock_is_released_exactly_once() {
    for protocol in FastPathProtocol::ALL {
        released_once(protocol);
    }
}

fn released_once(protocol: FastPathProtocol) {
    loom::model(move || {
        let m = tiny(16, protocol);
        let t = LockTag::relation(1, 1);
        let mut owner = m.register().unwrap();
        owner.lock(t, LockMode::RowExclusive, Wait::Block).unwrap();
        let releaser = thread::spawn(move || {
            owner.unlock(t, LockMode::RowExclusive).unwrap();
            assert!(matches!(owner.unlock(t, LockMode::RowExclusive), Err(LockError::NotHeld { .. })));
        });
        let mut strong = m.register().unwrap();
        strong.lock(t, LockMode::Share, Wait::Block).unwrap();
        strong.unlock(t, LockMode::Share).unwrap();
        releaser.join().unwrap();
        drop(strong);
        assert_empty(&m);
    });
}

/// A strong locker scanning a backend whose fast path grows (re-hashing
/// every entry) at the same time still finds the lock it must conflict
/// with.
#[test]
fn a_scan_during_growth_still_finds_the_lock() {
    for protocol in FastPathProtocol::ALL {
        scan_during_growth(protocol);
    }
}

fn scan_during_growth(protocol: FastPathProtocol) {
    // Seventeen locks, a growth re-hashing every slot and the views' scans
    // are many atomic operations in one execution: more than loom's
    // default branch budget, though few of them can interleave.
    let mut model = loom::model::Builder::new();
    model.max_branches = 20_000;
    model.check(move || {
        let m = tiny(32, protocol);
        let mut weak = m.register().unwrap();
        // Fill the only group, then let the 17th lock grow the array.
        for r in 0..16 {
            weak.lock(LockTag::relation(1, r), LockMode::AccessShare, Wait::Block).unwrap();
        }
        let grower = thread::spawn(move || {
            weak.lock(LockTag::relation(1, 16), LockMode::AccessShare, Wait::Block).unwrap();
            weak
        });
        let mut strong = m.register().unwrap();
        let err = strong.lock(LockTag::relation(1, 5), LockMode::AccessExclusive, Wait::NoWait).unwrap_err();
        assert!(matches!(err, LockError::NotAvailable { .. }), "{err}");
        let mut weak = grower.join().unwrap();
        // The 17th lock grew the array — or went to the shared table (the
        // counter was already bumped), or took the slot the transfer freed.
        let s = weak.stats();
        assert_eq!(s.fast_path_acquires + s.shared_acquires, 17, "{s:?}");
        assert!(s.fast_path_grows <= 1);
        weak.release_all();
        drop((weak, strong));
        assert_empty(&m);
    });
}

/// A strong locker transfers a fast-path lock while its owner ends its
/// transaction with `release_all` (which, under `lockfree`, clears few
/// slots each with an atomic read-modify-write, and many with plain stores
/// while holding its own fast-path lock — both are modelled): the lock is
/// released exactly once, the owner's other fast-path locks too, and the
/// strong locker is granted.
#[test]
fn a_transfer_races_release_all() {
    for protocol in FastPathProtocol::ALL {
        // 1 + 1 fast-path locks: `release_all`'s atomic path; 1 + 5: more
        // than `RELEASE_ALL_ATOMIC_MAX` (4, `src/backend/release.rs`), its locked one.
        for others in [1, 5] {
            transfer_vs_release_all(protocol, others);
        }
    }
}

fn transfer_vs_release_all(protocol: FastPathProtocol, others: u32) {
    loom::model(move || {
        let m = tiny(16, protocol);
        let t = LockTag::relation(1, 1);
        let mut owner = m.register().unwrap();
        owner.lock(t, LockMode::AccessShare, Wait::Block).unwrap();
        for r in 0..others {
            owner.lock(LockTag::relation(1, 2 + r), LockMode::RowExclusive, Wait::Block).unwrap();
        }
        let ender = thread::spawn(move || {
            owner.release_all();
            assert_eq!(owner.held_count(), 0);
            owner
        });
        let mut strong = m.register().unwrap();
        strong.lock(t, LockMode::Share, Wait::Block).unwrap();
        strong.unlock(t, LockMode::Share).unwrap();
        let owner = ender.join().unwrap();
        drop((owner, strong));
        assert_empty(&m);
    });
}
