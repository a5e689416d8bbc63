//! What savepoints and session-level locks need from a backend: the list of
//! held locks with their counts (`held_locks`) under both fast-path
//! protocols, and a transaction end that keeps some acquisitions
//! (`release_all_except`).

use turnstile_lock::{LockManager, LockMode::*, LockTag, Wait};
use turnstile_sync::config::{Config, Profile};

#[test]
fn held_locks_lists_every_lock_with_its_count_and_release_all_except_keeps_what_it_is_told() {
    for profile in [Profile::Classic, Profile::Scalable] {
        let m = LockManager::new(&Config::preset(profile)).unwrap();
        let mut a = m.register().unwrap();
        let mut b = m.register().unwrap();
        let rel = LockTag::relation(1, 100);
        let adv = LockTag::advisory(1, 42);
        let pair = LockTag::advisory_pair(1, 0, 42);
        assert_ne!(adv, pair, "the two key forms are different locks");
        a.lock(rel, AccessShare, Wait::Block).unwrap();
        a.lock(rel, AccessShare, Wait::Block).unwrap();
        a.lock(adv, Exclusive, Wait::Block).unwrap();
        a.lock(adv, Exclusive, Wait::Block).unwrap();
        a.lock(pair, Share, Wait::Block).unwrap();
        let mut held = a.held_locks();
        held.sort();
        let mut want = vec![(rel, AccessShare, 2), (adv, Exclusive, 2), (pair, Share, 1)];
        want.sort();
        assert_eq!(held, want, "{profile:?}");
        // Keep one acquisition of the advisory lock; everything else goes.
        a.release_all_except(&mut |t, m| u32::from(*t == adv && m == Exclusive));
        assert_eq!(a.held_locks(), vec![(adv, Exclusive, 1)], "{profile:?}");
        b.lock(rel, AccessExclusive, Wait::NoWait).unwrap();
        b.lock(pair, Exclusive, Wait::NoWait).unwrap();
        assert!(b.lock(adv, Share, Wait::NoWait).is_err(), "the kept lock is still granted");
        a.unlock(adv, Exclusive).unwrap();
        assert!(a.unlock(adv, Exclusive).is_err(), "one acquisition was kept, not two");
        b.lock(adv, Share, Wait::NoWait).unwrap();
        b.release_all();
        assert_eq!(b.held_locks(), vec![]);
    }
}
