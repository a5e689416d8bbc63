//! The conflict table against PostgreSQL's documented one ("Table 13.2.
//! Conflicting Lock Modes"), mode by mode — first as a table, then through
//! the lock manager, with the held lock on the fast path and in the shared
//! table.

use turnstile_lock::{LockError, LockManager, LockMode, LockMode::*, LockTag, Wait};
use turnstile_sync::{Config, Profile};

/// PostgreSQL's documentation, transcribed: for each requested mode, the
/// existing modes it conflicts with (X).
///
/// | requested \ existing | ACCESS SHARE | ROW SHARE | ROW EXCL. | SHARE UPDATE EXCL. | SHARE | SHARE ROW EXCL. | EXCL. | ACCESS EXCL. |
const DOCUMENTED: [(LockMode, &str); 8] = [
    (AccessShare, "       X"),
    (RowShare, "      XX"),
    (RowExclusive, "    XXXX"),
    (ShareUpdateExclusive, "   XXXXX"),
    (Share, "  XX XXX"),
    (ShareRowExclusive, "  XXXXXX"),
    (Exclusive, " XXXXXXX"),
    (AccessExclusive, "XXXXXXXX"),
];

#[test]
fn the_table_matches_the_documentation_mode_by_mode() {
    for (requested, row) in DOCUMENTED {
        for (existing, mark) in LockMode::ALL.iter().zip(row.chars()) {
            assert_eq!(
                requested.conflicts_with(*existing),
                mark == 'X',
                "{requested} requested while {existing} is held"
            );
        }
    }
}

#[test]
fn the_lock_manager_enforces_the_table_for_every_pair_in_both_profiles() {
    for profile in Profile::ALL {
        let manager = LockManager::new(&Config::preset(profile)).unwrap();
        let mut holder = manager.register().unwrap();
        let mut requester = manager.register().unwrap();
        for (i, held) in LockMode::ALL.into_iter().enumerate() {
            for (j, wanted) in LockMode::ALL.into_iter().enumerate() {
                let tag = LockTag::relation(1, 1000 + (i * 8 + j) as u32);
                holder.lock(tag, held, Wait::NoWait).unwrap();
                let result = requester.lock(tag, wanted, Wait::NoWait);
                let expected_conflict = DOCUMENTED[j].1.as_bytes()[i] == b'X';
                match result {
                    Ok(_) => assert!(!expected_conflict, "{profile}: {wanted} granted while {held} held"),
                    Err(LockError::NotAvailable { .. }) => {
                        assert!(expected_conflict, "{profile}: {wanted} refused while {held} held")
                    }
                    Err(e) => panic!("{profile}: unexpected {e}"),
                }
                // A backend never conflicts with itself.
                requester.release_all();
                holder.lock(tag, wanted, Wait::NoWait).unwrap();
                holder.release_all();
            }
        }
        manager.check_invariants();
        let o = manager.occupancy();
        assert_eq!((o.lock_objects, o.fast_path_entries, o.strong_locks), (0, 0, 0));
    }
}

#[test]
fn a_backend_never_conflicts_with_itself() {
    let manager = LockManager::new(&Config::default()).unwrap();
    let mut b = manager.register().unwrap();
    let t = LockTag::relation(1, 5);
    for mode in LockMode::ALL {
        b.lock(t, mode, Wait::NoWait).unwrap();
    }
    assert_eq!(b.held_count(), 8);
    manager.check_invariants();
    b.release_all();
    manager.check_invariants();
}
