//! The fast path end to end: slot counts per profile, growth, transfers by
//! strong lockers, release of transferred locks, and the views.

mod common;

use common::*;
use std::sync::Arc;
use std::thread;
use std::time::Duration;
use turnstile_lock::{LockError, LockManager, LockMode::*, LockTag, Wait};
use turnstile_sync::sync::counter::{AtomicBool, AtomicU32, Ordering};
use turnstile_sync::{Config, FastPathProtocol, Profile};

fn preset(profile: Profile) -> Arc<LockManager> {
    LockManager::new(&Config::preset(profile)).unwrap()
}

/// `profile` with the fast path run by `protocol`.
fn with_protocol(profile: Profile, protocol: FastPathProtocol) -> Arc<LockManager> {
    let mut c = Config::preset(profile);
    c.lock.fast_path_protocol = protocol;
    LockManager::new(&c).unwrap()
}

/// Every profile with every protocol.
fn every_combination() -> Vec<(String, Arc<LockManager>)> {
    let mut all = Vec::new();
    for profile in Profile::ALL {
        for protocol in FastPathProtocol::ALL {
            all.push((format!("{profile}/{protocol}"), with_protocol(profile, protocol)));
        }
    }
    all
}

#[test]
fn classic_keeps_sixteen_locks_on_the_fast_path_and_counts_the_overflow() {
    let m = preset(Profile::Classic);
    let mut b = m.register().unwrap();
    for round in 0..3 {
        for r in 0..1000 {
            b.lock(rel(r), AccessShare, Wait::Block).unwrap();
        }
        let s = b.stats();
        assert_eq!(s.fast_path_acquires, 16 * (round + 1));
        assert_eq!(s.shared_acquires, 984 * (round + 1));
        assert_eq!(s.fast_path_overflows, 984 * (round + 1));
        assert_eq!(s.fast_path_grows, 0, "classic never grows");
        b.release_all();
    }
    assert_eq!(m.occupancy().lock_objects, 0);
}

#[test]
fn scalable_grows_until_two_thousand_relations_stay_on_the_fast_path() {
    for protocol in FastPathProtocol::ALL {
        grows_until_two_thousand(with_protocol(Profile::Scalable, protocol));
    }
}

fn grows_until_two_thousand(m: Arc<LockManager>) {
    let mut b = m.register().unwrap();
    for r in 0..2000 {
        b.lock(rel(r), RowExclusive, Wait::Block).unwrap();
    }
    let first = b.stats();
    assert_eq!(first.shared_acquires, 0);
    assert!(first.fast_path_grows >= 1);
    assert_eq!(m.occupancy().fast_path_entries, 2000);
    b.release_all();
    for r in 0..2000 {
        b.lock(rel(r), RowExclusive, Wait::Block).unwrap();
    }
    let second = b.stats().since(&first);
    assert_eq!((second.shared_acquires, second.fast_path_grows, second.partition_lock_acquires), (0, 0, 0));
    // Locks held across growth are found by a strong locker: it scans the
    // group the relation maps to in the grown array.
    let mut strong = m.register().unwrap();
    let err = strong.lock(rel(3), Share, Wait::NoWait).unwrap_err();
    assert!(matches!(err, LockError::NotAvailable { .. }));
    assert_eq!(strong.stats().transfers, 1);
    b.release_all();
    strong.lock(rel(3), Share, Wait::NoWait).unwrap();
    strong.release_all();
    m.check_invariants();
    let o = m.occupancy();
    assert_eq!((o.lock_objects, o.fast_path_entries, o.strong_locks), (0, 0, 0));
}

/// Growth with locks already claimed by a strong locker: the claimed ones
/// are released from the shared table, once, the others from the slots.
#[test]
fn growth_after_a_transfer_keeps_every_lock_released_once() {
    for protocol in FastPathProtocol::ALL {
        let mut c = Config::preset(Profile::Scalable);
        c.lock.fast_path_protocol = protocol;
        c.lock.fast_path_slots = 16;
        let m = LockManager::new(&c).unwrap();
        let (mut owner, mut strong) = (m.register().unwrap(), m.register().unwrap());
        for r in 0..8 {
            owner.lock(rel(r), AccessShare, Wait::Block).unwrap();
        }
        // Exclusive coexists with AccessShare: transferred, then granted.
        strong.lock(rel(3), Exclusive, Wait::Block).unwrap();
        for r in 8..100 {
            owner.lock(rel(r), AccessShare, Wait::Block).unwrap();
        }
        assert!(owner.stats().fast_path_grows >= 2, "{protocol}");
        owner.unlock(rel(3), AccessShare).unwrap();
        assert!(matches!(owner.unlock(rel(3), AccessShare), Err(LockError::NotHeld { .. })));
        m.check_invariants();
        owner.release_all();
        strong.release_all();
        m.check_invariants();
        let o = m.occupancy();
        assert_eq!((o.lock_objects, o.fast_path_entries, o.strong_locks), (0, 0, 0), "{protocol}");
    }
}

/// Real threads: weak lockers take and release AccessShare (fast path)
/// on a few relations while strong lockers take AccessExclusive on them;
/// a weak and a strong holder are never inside together, and every lock
/// ends released once.
#[test]
fn weak_and_strong_lockers_exclude_each_other_under_load() {
    for (name, m) in every_combination() {
        // Per relation: weak holders, and 1 << 16 while a strong one holds.
        let inside: Arc<Vec<AtomicU32>> = Arc::new((0..4).map(|_| AtomicU32::new(0)).collect());
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        for w in 0..3u32 {
            let (m, inside, stop) = (Arc::clone(&m), Arc::clone(&inside), Arc::clone(&stop));
            threads.push(thread::spawn(move || {
                let mut b = m.register().unwrap();
                let mut i = w;
                while !stop.load(Ordering::Relaxed) {
                    let r = i % 4;
                    i = i.wrapping_mul(7).wrapping_add(3);
                    b.lock(rel(r), AccessShare, Wait::Block).unwrap();
                    let before = inside[r as usize].fetch_add(1, Ordering::SeqCst);
                    assert!(before < 1 << 16, "a weak lock granted while a strong one is held");
                    inside[r as usize].fetch_sub(1, Ordering::SeqCst);
                    if i % 3 == 0 {
                        b.release_all();
                    } else {
                        b.unlock(rel(r), AccessShare).unwrap();
                    }
                }
            }));
        }
        let strong = {
            let (m, inside) = (Arc::clone(&m), Arc::clone(&inside));
            thread::spawn(move || {
                let mut b = m.register().unwrap();
                for round in 0..300u32 {
                    let r = round % 4;
                    b.lock(rel(r), AccessExclusive, Wait::Block).unwrap();
                    let before = inside[r as usize].swap(1 << 16, Ordering::SeqCst);
                    assert_eq!(before, 0, "a strong lock granted while a weak one is held");
                    inside[r as usize].store(0, Ordering::SeqCst);
                    b.unlock(rel(r), AccessExclusive).unwrap();
                }
            })
        };
        strong.join().unwrap_or_else(|_| panic!("{name}: strong locker failed"));
        stop.store(true, Ordering::Relaxed);
        for t in threads {
            t.join().unwrap_or_else(|_| panic!("{name}: weak locker failed"));
        }
        m.check_invariants();
        let o = m.occupancy();
        assert_eq!((o.lock_objects, o.fast_path_entries, o.strong_locks), (0, 0, 0), "{name}");
        assert!(m.stats().fast_path_acquires > 0, "{name}");
    }
}

#[test]
fn a_growing_fast_path_stops_at_its_maximum() {
    let mut c = Config::default();
    c.lock.fast_path_slots = 16;
    c.lock.fast_path_slots_max = 64;
    let m = LockManager::new(&c).unwrap();
    let mut b = m.register().unwrap();
    for r in 0..200 {
        b.lock(rel(r), AccessShare, Wait::Block).unwrap();
    }
    let s = b.stats();
    assert_eq!(s.fast_path_grows, 2, "16 → 32 → 64 slots");
    assert!(s.fast_path_acquires <= 64 && s.fast_path_acquires >= 48, "{}", s.fast_path_acquires);
    assert_eq!(s.fast_path_acquires + s.shared_acquires, 200);
    assert_eq!(s.fast_path_overflows, s.shared_acquires);
}

#[test]
fn a_strong_lock_moves_weak_fast_path_locks_and_their_owner_releases_them_once() {
    for (name, m) in every_combination() {
        let (weak, strong) = (Session::new(&m, "weak"), Session::new(&m, "strong"));
        let t = rel(77);
        weak.lock(t, AccessShare).ok();
        weak.lock(t, RowExclusive).ok();
        weak.lock(rel(78), AccessShare).ok();
        assert!(m.locks().iter().all(|r| r.fastpath));
        strong.lock(t, AccessExclusive).waiting();
        // Both of weak's modes on t were moved to the shared table.
        let rows = m.locks();
        let on_t: Vec<_> = rows.iter().filter(|r| r.tag == t && r.granted).collect();
        assert_eq!(on_t.len(), 2);
        assert!(on_t.iter().all(|r| !r.fastpath && r.backend == weak.id));
        let waiting: Vec<_> = rows.iter().filter(|r| !r.granted).collect();
        assert_eq!(waiting.len(), 1);
        assert!(waiting[0].wait_start.is_some() && waiting[0].mode == AccessExclusive, "{name}");
        assert!(rows.iter().any(|r| r.tag == rel(78) && r.fastpath), "other relations stay");
        // Releasing finds the moved locks in the shared table, once.
        weak.step(move |b| b.unlock(t, AccessShare)).ok();
        assert!(strong.is_waiting());
        weak.commit().ok();
        strong.completed().unwrap();
        // While the strong lock is held, weak lockers use the shared table.
        weak.lock(t, AccessShare).waiting();
        strong.commit().ok();
        weak.completed().unwrap();
        let weak_row = m.locks().into_iter().find(|r| r.tag == t).unwrap();
        assert!(!weak_row.fastpath && weak_row.granted);
        weak.commit().ok();
        // The strong counter is back to zero: the fast path is used again.
        weak.lock(t, AccessShare).ok();
        assert!(m.locks().iter().all(|r| r.fastpath));
        weak.commit().ok();
        let o = m.occupancy();
        assert_eq!((o.lock_objects, o.fast_path_entries, o.strong_locks), (0, 0, 0));
        assert_eq!(m.stats().transfers, 2);
        m.check_invariants();
    }
}

#[test]
fn release_all_notices_a_transferred_lock_among_many() {
    for protocol in FastPathProtocol::ALL {
        release_all_notices(with_protocol(Profile::Scalable, protocol));
    }
}

fn release_all_notices(m: Arc<LockManager>) {
    let (weak, strong) = (Session::new(&m, "weak"), Session::new(&m, "strong"));
    weak.step(|b| {
        for r in 0..500 {
            b.lock(rel(r), AccessShare, Wait::Block)?;
        }
        Ok(())
    })
    .ok();
    strong.lock(rel(250), Exclusive).ok(); // Exclusive coexists with AccessShare
    strong.lock(rel(251), AccessExclusive).waiting();
    weak.commit().ok(); // releases 498 from the slots, 2 from the shared table
    strong.completed().unwrap();
    strong.commit().ok();
    let o = m.occupancy();
    assert_eq!((o.lock_objects, o.fast_path_entries, o.strong_locks), (0, 0, 0));
    m.check_invariants();
}

#[test]
fn a_failed_strong_request_gives_back_its_counter() {
    let m = preset(Profile::Scalable);
    let (a, b) = (Session::new(&m, "a"), Session::new(&m, "b"));
    a.lock(rel(1), AccessShare).ok();
    b.step(|b| b.lock(rel(1), AccessExclusive, Wait::Timeout(Duration::from_millis(100))).map(|_| ())).waiting();
    assert!(matches!(b.completed(), Err(LockError::Timeout { .. })));
    assert_eq!(m.occupancy().strong_locks, 0);
    a.commit().ok();
    a.lock(rel(1), AccessShare).ok();
    assert!(m.locks().iter().all(|r| r.fastpath), "fast path usable again");
}

#[test]
fn views_show_every_kind_of_tag() {
    let m = preset(Profile::Scalable);
    let mut b = m.register().unwrap();
    let tags = [
        LockTag::relation(3, 10),
        LockTag::relation_extend(3, 10),
        LockTag::page(3, 10, 4),
        LockTag::tuple(3, 10, 4, 2),
        LockTag::transaction_id(3, 900),
        LockTag::object(3, 1259, 10, 0),
        LockTag::advisory(3, 1 << 40),
    ];
    for t in tags {
        b.lock(t, ShareUpdateExclusive, Wait::Block).unwrap();
    }
    let mut types: Vec<_> = m.locks().into_iter().map(|r| (r.locktype, r.database, r.relation)).collect();
    types.sort();
    assert_eq!(types.len(), 7);
    assert!(types.contains(&("extend", 3, Some(10))));
    assert!(types.contains(&("transactionid", 3, None)));
    assert!(types.contains(&("advisory", 3, None)));
    assert_eq!(m.stats().shared_acquires, 7);
}

/// Regression: in `classic`, a group whose entries were all transferred by
/// strong lockers must not stay "full" in the owner's bookkeeping after
/// the owner released them (PostgreSQL recounts the group on release).
#[test]
fn a_group_emptied_by_transfers_is_usable_again_after_release() {
    for protocol in FastPathProtocol::ALL {
        group_emptied(with_protocol(Profile::Classic, protocol));
    }
}

fn group_emptied(m: Arc<LockManager>) {
    let mut owner = m.register().unwrap();
    let mut strong = m.register().unwrap();
    for r in 0..16 {
        owner.lock(rel(r), AccessShare, Wait::Block).unwrap();
    }
    for r in 0..16 {
        assert!(matches!(strong.lock(rel(r), AccessExclusive, Wait::NoWait), Err(LockError::NotAvailable { .. })));
    }
    assert_eq!(m.occupancy().fast_path_entries, 0, "all 16 moved to the shared table");
    owner.release_all();
    let before = owner.stats();
    for r in 100..116 {
        owner.lock(rel(r), AccessShare, Wait::Block).unwrap();
    }
    assert_eq!(owner.stats().since(&before).fast_path_acquires, 16);
    owner.release_all();
    // The same through single releases.
    for r in 0..16 {
        owner.lock(rel(r), AccessShare, Wait::Block).unwrap();
    }
    for r in 0..16 {
        let _ = strong.lock(rel(r), AccessExclusive, Wait::NoWait);
    }
    for r in 0..16 {
        owner.unlock(rel(r), AccessShare).unwrap();
    }
    let before = owner.stats();
    owner.lock(rel(200), AccessShare, Wait::Block).unwrap();
    assert_eq!(owner.stats().since(&before).fast_path_acquires, 1);
    m.check_invariants();
}

/// Re-acquisitions are counted wherever the lock lives: in a fast-path
/// slot, in the shared table because a strong lock was present, or in the
/// shared table after a transfer; `holds`, `held_count` and the releases
/// agree, and each lock is released from where it is, once.
#[test]
fn reacquired_locks_are_counted_wherever_they_live() {
    for (name, m) in every_combination() {
        let (mut a, mut strong) = (m.register().unwrap(), m.register().unwrap());
        let (fast, shared, moved) = (rel(1), rel(2), rel(3));
        strong.lock(shared, Exclusive, Wait::Block).unwrap(); // AccessShare coexists
        for _ in 0..3 {
            a.lock(fast, AccessShare, Wait::Block).unwrap();
            a.lock(shared, AccessShare, Wait::Block).unwrap();
            a.lock(moved, RowExclusive, Wait::Block).unwrap();
        }
        strong.lock(moved, Share, Wait::NoWait).unwrap_err(); // transfers, then refuses
        assert_eq!(a.held_count(), 3, "{name}");
        assert!(a.holds(&fast, AccessShare) && a.holds(&shared, AccessShare) && a.holds(&moved, RowExclusive));
        assert!(!a.holds(&fast, RowShare), "{name}");
        let s = a.stats();
        assert_eq!((s.fast_path_acquires, s.shared_acquires), (2, 1), "{name}: {s:?}");
        for _ in 0..2 {
            for (t, mode) in [(fast, AccessShare), (shared, AccessShare), (moved, RowExclusive)] {
                a.unlock(t, mode).unwrap();
                assert!(a.holds(&t, mode), "{name}");
            }
        }
        for (t, mode) in [(fast, AccessShare), (shared, AccessShare), (moved, RowExclusive)] {
            a.unlock(t, mode).unwrap();
            assert!(!a.holds(&t, mode), "{name}");
            assert!(matches!(a.unlock(t, mode), Err(LockError::NotHeld { .. })), "{name}");
        }
        assert_eq!(a.held_count(), 0, "{name}");
        strong.release_all();
        m.check_invariants();
        let o = m.occupancy();
        assert_eq!((o.lock_objects, o.fast_path_entries, o.strong_locks), (0, 0, 0), "{name}");
    }
}
