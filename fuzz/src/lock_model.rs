//! Fuzz target: lock-operation sequences against a reference model.
//!
//! Arbitrary bytes become a sequence of `lock` (NOWAIT), `unlock`,
//! `release_all` and re-lock calls by three backends on one lock manager
//! (small partitions, 16 fast-path slots, few strong-lock counters, so the
//! fast path fills, overflows and transfers). The model is the definition
//! of the lock table — a multiset of `(backend, tag, mode)` — and predicts
//! every result: a held lock is only counted again, a request conflicting
//! with another backend's hold is refused, anything else is granted;
//! unlocking what is not held is `NotHeld`. After every call the
//! `locks` view must list exactly the model's holds, and at the end the
//! table, the fast path and the strong-lock counters must be empty.
//!
//! Shared by `fuzz/fuzz_targets/lock_ops.rs` (cargo fuzz) and
//! `crates/lock/tests/model.rs` (proptest, in CI).

use std::collections::{BTreeMap, BTreeSet};
use turnstile_lock::{Acquired, Backend, LockError, LockManager, LockMode, LockTag, Wait};
use turnstile_sync::{Config, Profile};

/// Backends in a sequence.
pub const BACKENDS: usize = 3;
/// Most operations run per input.
const OPS_MAX: usize = 2000;

const MODES: [LockMode; 8] = [
    LockMode::AccessShare,
    LockMode::RowShare,
    LockMode::RowExclusive,
    LockMode::ShareUpdateExclusive,
    LockMode::Share,
    LockMode::ShareRowExclusive,
    LockMode::Exclusive,
    LockMode::AccessExclusive,
];

/// 24 relations (enough to overflow a 16-slot fast-path group), then one
/// tag of every other kind.
fn tag(i: u8) -> LockTag {
    match i % 30 {
        r @ 0..=23 => LockTag::relation(1, u32::from(r)),
        24 => LockTag::advisory(1, 7),
        25 => LockTag::tuple(1, 3, 0, 1),
        26 => LockTag::page(1, 3, 0),
        27 => LockTag::transaction_id(1, 99),
        28 => LockTag::object(1, 1259, 3, 0),
        _ => LockTag::relation_extend(1, 3),
    }
}

/// Runs the target on `data`: byte 0 picks the profile and the fast-path
/// size, then 3 bytes per operation.
pub fn lock_sequence(data: &[u8]) {
    let Some((&setup, ops)) = data.split_first() else { return };
    let mut config = Config::preset(if setup & 1 == 0 { Profile::Classic } else { Profile::Scalable });
    config.lock.partitions = 4;
    config.lock.strong_lock_counters = 16;
    config.lock.fast_path_slots = 16;
    config.lock.fast_path_slots_max = if setup & 2 == 0 { 16 } else { 64 };
    config.lock.max_backends = BACKENDS as u32;
    let manager = LockManager::new(&config).expect("a valid configuration");
    let mut backends: Vec<Backend> = (0..BACKENDS).map(|_| manager.register().expect("a backend slot")).collect();
    let ids: Vec<usize> = backends.iter().map(Backend::id).collect();
    // The model: (backend index, tag, mode) → times acquired.
    let mut model: BTreeMap<(usize, LockTag, LockMode), u32> = BTreeMap::new();

    for op in ops.chunks_exact(3).take(OPS_MAX) {
        let b = (op[0] as usize >> 2) % BACKENDS;
        let (t, mode) = (tag(op[1]), MODES[op[2] as usize % 8]);
        match op[0] & 3 {
            0 | 1 => {
                let result = backends[b].lock(t, mode, Wait::NoWait);
                let count = model.get(&(b, t, mode)).copied().unwrap_or(0);
                let blocked = model.keys().any(|&(o, ot, om)| o != b && ot == t && om.conflicts_with(mode));
                match (count > 0, blocked, &result) {
                    (true, _, Ok(Acquired::AlreadyHeld)) => *model.get_mut(&(b, t, mode)).unwrap() += 1,
                    (false, false, Ok(Acquired::New)) => {
                        model.insert((b, t, mode), 1);
                    }
                    (false, true, Err(LockError::NotAvailable { .. })) => {}
                    _ => panic!(
                        "backend {b} lock {mode} on {t}: model says held {count}, blocked {blocked}; got {result:?}"
                    ),
                }
            }
            2 => {
                let result = backends[b].unlock(t, mode);
                match model.get_mut(&(b, t, mode)) {
                    Some(count) => {
                        assert_eq!(result, Ok(()), "backend {b} unlock {mode} on {t}, held {count} times");
                        *count -= 1;
                        if *count == 0 {
                            model.remove(&(b, t, mode));
                        }
                    }
                    None => assert!(
                        matches!(result, Err(LockError::NotHeld { .. })),
                        "backend {b} unlock of unheld {mode} on {t}: {result:?}"
                    ),
                }
            }
            _ => {
                backends[b].release_all();
                model.retain(|&(o, _, _), _| o != b);
            }
        }
        // The view lists exactly the model's holds, each once, none waiting.
        let rows = manager.locks();
        assert!(rows.iter().all(|r| r.granted), "a NOWAIT-only sequence left a waiter: {rows:?}");
        let seen: BTreeSet<(usize, LockTag, LockMode)> = rows.iter().map(|r| (r.backend, r.tag, r.mode)).collect();
        assert_eq!(seen.len(), rows.len(), "a hold listed twice: {rows:?}");
        let expected: BTreeSet<(usize, LockTag, LockMode)> = model.keys().map(|&(b, t, m)| (ids[b], t, m)).collect();
        assert_eq!(seen, expected, "the locks view disagrees with the model");
        for &(b, t, m) in model.keys() {
            assert!(backends[b].holds(&t, m));
        }
    }
    manager.check_invariants();
    for b in &mut backends {
        b.release_all();
    }
    let o = manager.occupancy();
    assert_eq!((o.lock_objects, o.fast_path_entries, o.strong_locks), (0, 0, 0), "left behind: {o:?}");
    assert!(manager.locks().is_empty());
}
