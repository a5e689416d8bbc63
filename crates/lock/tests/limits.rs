//! Limits and user errors: a full lock table, too many backends, releasing
//! what is not held, and that nothing leaks afterwards.

use std::sync::Arc;
use turnstile_lock::{Acquired, LockError, LockManager, LockMode::*, LockTag, Wait};
use turnstile_sync::Config;

fn small(max_locks: u32, partitions: u32) -> Arc<LockManager> {
    let mut c = Config::default();
    c.lock.max_locks = max_locks;
    c.lock.partitions = partitions;
    c.lock.max_backends = 4;
    LockManager::new(&c).unwrap()
}

#[test]
fn a_full_lock_table_is_an_error_with_a_hint_and_nothing_leaks() {
    for partitions in [1, 4, 64] {
        let m = small(100, partitions);
        let mut a = m.register().unwrap();
        let mut b = m.register().unwrap();
        // Share is strong: it bypasses the fast path, one object per table.
        let mut taken = 0;
        let err = loop {
            match a.lock(LockTag::relation(1, taken), Share, Wait::NoWait) {
                Ok(_) => taken += 1,
                Err(e) => break e,
            }
            assert!(taken <= 100, "more lock objects than lock.max_locks");
        };
        assert_eq!(taken, 100, "{partitions} partitions: every unit usable");
        assert_eq!(err, LockError::OutOfLockMemory { max_locks: 100 });
        assert!(err.to_string().contains("lock.max_locks"), "{err}");
        // Other kinds of tags fail the same way; the failed strong lock
        // gave its strong-lock count back.
        assert!(matches!(
            b.lock(LockTag::advisory(1, 7), Exclusive, Wait::Block),
            Err(LockError::OutOfLockMemory { .. })
        ));
        assert!(matches!(
            b.lock(LockTag::relation(1, 5000), AccessExclusive, Wait::Block),
            Err(LockError::OutOfLockMemory { .. })
        ));
        assert_eq!(m.occupancy().strong_locks, 100);
        // Existing objects still take new holders, and the fast path
        // needs no shared memory at all.
        b.lock(LockTag::relation(1, 3), AccessShare, Wait::NoWait).unwrap();
        // (A relation whose strong-lock counter the 100 Share locks left at
        // zero; about one in ten shares one with them.)
        let fast = (6000..6050).find(|&r| b.lock(LockTag::relation(1, r), AccessShare, Wait::NoWait).is_ok());
        assert!(fast.is_some(), "no fast-path lock possible with a full table");
        assert_eq!(b.stats().fast_path_acquires, 1);
        b.lock(LockTag::relation(1, 3), Share, Wait::NoWait).unwrap();
        m.check_invariants();
        a.release_all();
        b.release_all();
        let o = m.occupancy();
        assert_eq!((o.lock_objects, o.free_capacity, o.strong_locks, o.fast_path_entries), (0, 100, 0, 0));
        // The whole capacity is usable again, from the other backend.
        for rel in 0..100 {
            b.lock(LockTag::relation(2, rel), Share, Wait::NoWait).unwrap();
        }
        m.check_invariants();
    }
}

#[test]
fn registering_past_max_backends_is_an_error_and_dropping_frees_the_slot_and_the_locks() {
    let m = small(1000, 4);
    let mut backends: Vec<_> = (0..4).map(|_| m.register().unwrap()).collect();
    let err = m.register().unwrap_err();
    assert_eq!(err, LockError::TooManyBackends { max_backends: 4 });
    assert!(err.to_string().contains("lock.max_backends"));
    let t = LockTag::relation(1, 1);
    backends[1].lock(t, AccessShare, Wait::Block).unwrap();
    backends[2].lock(LockTag::relation(1, 2), AccessExclusive, Wait::Block).unwrap();
    let freed = backends.remove(1).id();
    drop(backends.remove(1));
    let again = m.register().unwrap();
    assert_eq!(again.id(), freed, "the first free slot is reused");
    // Nothing the dropped backends held remains.
    backends[0].lock(t, AccessExclusive, Wait::NoWait).unwrap();
    backends[0].lock(LockTag::relation(1, 2), AccessExclusive, Wait::NoWait).unwrap();
    assert_eq!(again.stats().fast_path_acquires, 0, "per-backend counters start at registration");
    m.check_invariants();
    drop((backends, again));
    m.check_invariants();
    assert_eq!(m.occupancy().lock_objects, 0);
}

#[test]
fn releasing_a_lock_not_held_is_an_error_not_a_panic() {
    let m = small(1000, 4);
    let mut b = m.register().unwrap();
    let t = LockTag::relation(1, 1);
    assert_eq!(b.unlock(t, AccessShare), Err(LockError::NotHeld { tag: t, mode: AccessShare }));
    assert_eq!(b.lock(t, AccessShare, Wait::Block), Ok(Acquired::New));
    assert_eq!(b.lock(t, AccessShare, Wait::Block), Ok(Acquired::AlreadyHeld));
    assert!(matches!(b.unlock(t, RowShare), Err(LockError::NotHeld { .. })), "held in another mode");
    b.unlock(t, AccessShare).unwrap();
    assert!(b.holds(&t, AccessShare), "acquired twice, released once");
    b.unlock(t, AccessShare).unwrap();
    assert!(!b.holds(&t, AccessShare));
    let err = b.unlock(t, AccessShare).unwrap_err();
    assert!(err.to_string().contains("AccessShareLock"), "{err}");
    let adv = LockTag::advisory(1, 99);
    b.lock(adv, Exclusive, Wait::Block).unwrap();
    b.unlock(adv, Exclusive).unwrap();
    assert!(b.unlock(adv, Exclusive).is_err());
    m.check_invariants();
    assert_eq!(m.occupancy().lock_objects, 0);
}

#[test]
fn an_invalid_configuration_is_an_error() {
    let mut c = Config::default();
    c.lock.partitions = 48;
    let err = LockManager::new(&c).unwrap_err();
    assert!(err.to_string().contains("lock.partitions"), "{err}");
}
