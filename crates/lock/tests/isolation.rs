//! Deterministic ports of PostgreSQL's isolation tests for the lock
//! manager (`src/test/isolation/specs/deadlock-*.spec`, NOWAIT, lock
//! timeout). Each session is a thread with its own backend; the expected
//! step outcomes are those of PostgreSQL's expected output files.

mod common;

use common::*;
use std::time::{Duration, Instant};
use turnstile_lock::{LockError, LockMode::*, LockTag, Wait};
use turnstile_sync::activity::ActivityTable;
use turnstile_sync::Profile;

fn short() -> Duration {
    Duration::from_millis(10)
}

/// `deadlock-simple`: two sessions hold AccessShare and both ask for
/// AccessExclusive. The second request closes the cycle and fails at once.
#[test]
fn deadlock_simple() {
    for profile in Profile::ALL {
        let m = manager(|c| {
            let lock = c.lock.clone();
            *c = turnstile_sync::Config::preset(profile);
            c.lock.deadlock_timeout_ms = lock.deadlock_timeout_ms;
            c.lock.max_backends = lock.max_backends;
        });
        let (s1, s2) = (Session::new(&m, "s1"), Session::new(&m, "s2"));
        let a1 = rel(1);
        s1.lock(a1, AccessShare).ok();
        s2.lock(a1, AccessShare).ok();
        s1.lock(a1, AccessExclusive).waiting();
        let err = s2.lock(a1, AccessExclusive).err();
        let LockError::Deadlock { cycle } = &err else { panic!("{profile}: expected a deadlock, got {err}") };
        let backends: Vec<_> = cycle.iter().map(|e| (e.backend, e.blocked_by)).collect();
        assert_eq!(backends, vec![(s2.id, s1.id), (s1.id, s2.id)], "{err}");
        assert!(cycle.iter().all(|e| e.tag == a1 && e.mode == AccessExclusive));
        // s2's transaction aborted, releasing its AccessShare: s1 proceeds.
        s1.completed().unwrap();
        s1.commit().ok();
        s2.commit().ok();
        assert_eq!(m.stats().deadlocks, 1);
        m.check_invariants();
        assert_eq!(m.occupancy().lock_objects, 0);
    }
}

/// `deadlock-hard`: an 8-session cycle of AccessExclusive locks; only s8
/// has a short `deadlock_timeout`, so s8 is the victim, and the others
/// complete in turn as each commits.
#[test]
fn deadlock_hard() {
    let m = manager(|_| {});
    let names = ["s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8"];
    let s: Vec<Session> = names.iter().map(|n| Session::new(&m, n)).collect();
    s[7].set_deadlock_timeout(short());
    let table = |i: usize| rel(100 + i as u32);
    for (i, session) in s.iter().enumerate() {
        session.lock(table(i), AccessExclusive).ok();
    }
    for (i, session) in s.iter().enumerate().take(7) {
        session.lock(table(i + 1), AccessExclusive).waiting();
    }
    let started = Instant::now();
    s[7].lock(table(0), AccessExclusive).waiting();
    let err = s[7].completed().unwrap_err();
    assert!(started.elapsed() >= short());
    let LockError::Deadlock { cycle } = &err else { panic!("expected a deadlock, got {err}") };
    assert_eq!(cycle.len(), 8, "{err}");
    // The cycle starts at the checker and follows s8 → s1 → s2 → … → s8.
    for (k, edge) in cycle.iter().enumerate() {
        let i = (7 + k) % 8;
        assert_eq!(edge.backend, s[i].id, "{err}");
        assert_eq!(edge.blocked_by, s[(i + 1) % 8].id, "{err}");
        assert_eq!(edge.tag, table((i + 1) % 8));
        assert_eq!(edge.mode, AccessExclusive);
        assert!(!edge.soft);
    }
    // s8 aborted: s7 gets a8, then each commit lets the previous one in.
    s[6].completed().unwrap();
    s[7].commit().ok();
    for i in (0..7).rev() {
        s[i].commit().ok();
        if i > 0 {
            s[i - 1].completed().unwrap();
        }
    }
    assert_eq!(m.stats().deadlocks, 1);
    m.check_invariants();
    assert_eq!(m.occupancy().lock_objects, 0);
}

/// `deadlock-soft`: d2 waits for e1 (soft), e1 for d1 (hard), d1 for e2
/// (soft), e2 for d2 (hard). d2's check re-orders a2's queue, letting d1
/// pass e2; nobody is aborted.
#[test]
fn deadlock_soft() {
    let m = manager(|_| {});
    let (d1, d2, e1, e2) =
        (Session::new(&m, "d1"), Session::new(&m, "d2"), Session::new(&m, "e1"), Session::new(&m, "e2"));
    d2.set_deadlock_timeout(short());
    let (a1, a2) = (rel(1), rel(2));
    d1.lock(a1, AccessShare).ok();
    d2.lock(a2, AccessShare).ok();
    e1.lock(a1, AccessExclusive).waiting();
    e2.lock(a2, AccessExclusive).waiting();
    d1.lock(a2, AccessShare).waiting();
    d2.lock(a1, AccessShare).waiting();
    d1.completed().unwrap(); // step d1a2: <... completed>
    assert!(d2.is_waiting() && e1.is_waiting() && e2.is_waiting());
    d1.commit().ok();
    e1.completed().unwrap();
    e1.commit().ok();
    d2.completed().unwrap();
    d2.commit().ok();
    e2.completed().unwrap();
    e2.commit().ok();
    let stats = m.stats();
    assert_eq!((stats.deadlocks, stats.soft_deadlocks_resolved), (0, 1));
    m.check_invariants();
}

/// `deadlock-soft-2`: s1 must jump over both s3 and s4 on a2.
#[test]
fn deadlock_soft_2() {
    let m = manager(|_| {});
    let s: Vec<Session> = ["s1", "s2", "s3", "s4"].iter().map(|n| Session::new(&m, n)).collect();
    s[0].set_deadlock_timeout(short());
    let (a1, a2) = (rel(1), rel(2));
    s[0].lock(a1, ShareUpdateExclusive).ok();
    s[1].lock(a2, AccessShare).ok();
    s[1].lock(a1, ShareUpdateExclusive).waiting();
    s[2].lock(a2, AccessExclusive).waiting();
    s[3].lock(a2, AccessExclusive).waiting();
    s[0].lock(a2, ShareUpdateExclusive).waiting();
    s[0].completed().unwrap();
    s[0].commit().ok();
    s[1].completed().unwrap();
    s[1].commit().ok();
    s[2].completed().unwrap();
    s[2].commit().ok();
    s[3].completed().unwrap();
    s[3].commit().ok();
    assert_eq!(m.stats().deadlocks, 0);
    m.check_invariants();
}

/// NOWAIT: a request that would wait fails at once and leaves nothing
/// behind; one that would not wait succeeds.
#[test]
fn nowait() {
    let m = manager(|_| {});
    let (s1, s2) = (Session::new(&m, "s1"), Session::new(&m, "s2"));
    s1.lock(rel(1), Share).ok();
    let err = s2.step(|b| b.lock(rel(1), RowExclusive, Wait::NoWait).map(|_| ())).err();
    assert_eq!(err, LockError::NotAvailable { tag: rel(1), mode: RowExclusive });
    assert!(err.to_string().contains("could not obtain"), "{err}");
    s2.step(|b| b.lock(rel(1), AccessShare, Wait::NoWait).map(|_| ())).ok();
    assert_eq!(m.waiters(&rel(1)), 0);
    assert_eq!(m.locks().iter().filter(|r| !r.granted).count(), 0);
    // Queued requests count too: behind a waiting AccessExclusive, even a
    // compatible AccessShare would wait.
    let s3 = Session::new(&m, "s3");
    s3.lock(rel(2), AccessShare).ok();
    s1.lock(rel(2), AccessExclusive).waiting();
    let err = s2.step(|b| b.lock(rel(2), AccessShare, Wait::NoWait).map(|_| ())).err();
    assert!(matches!(err, LockError::NotAvailable { .. }));
    s3.commit().ok();
    s1.completed().unwrap();
    assert_eq!(m.stats().not_available, 2);
    m.check_invariants();
}

/// Regression: a NOWAIT request whose wait would close a deadlock cycle got
/// `Deadlock` and was counted in `stats().deadlocks`. Two sessions hold
/// Share, one queues for Exclusive, and the other asks for Exclusive with
/// NOWAIT: PostgreSQL's `LockAcquireExtended` with `dontWait` answers "not
/// available", and reports a deadlock only to a caller willing to wait.
#[test]
fn nowait_that_would_close_a_deadlock_cycle_is_not_available() {
    for profile in turnstile_sync::Profile::ALL {
        let m = manager(|c| {
            let lock = c.lock.clone();
            *c = turnstile_sync::Config::preset(profile);
            c.lock.deadlock_timeout_ms = lock.deadlock_timeout_ms;
            c.lock.max_backends = lock.max_backends;
        });
        let (s1, s2) = (Session::new(&m, "s1"), Session::new(&m, "s2"));
        let t = rel(1);
        s1.lock(t, Share).ok();
        s2.lock(t, Share).ok();
        s1.lock(t, Exclusive).waiting();
        let err = s2.step(move |b| b.lock(t, Exclusive, Wait::NoWait).map(|_| ())).err();
        assert_eq!(err, LockError::NotAvailable { tag: t, mode: Exclusive }, "{profile}");
        let stats = m.stats();
        assert_eq!((stats.deadlocks, stats.not_available), (0, 1), "{profile}: {stats:?}");
        // The refused request left nothing behind: s2's transaction,
        // aborted by the error, released its Share, and s1 is granted.
        s1.completed().unwrap();
        m.check_invariants();
        s1.commit().ok();
        m.check_invariants();
        assert_eq!(m.occupancy().lock_objects, 0, "{profile}");
    }
}

/// Lock timeout: the wait ends with `Timeout` after the configured time;
/// leaving the queue wakes a request it was holding back.
#[test]
fn lock_timeout() {
    let m = manager(|_| {});
    let (s1, s2, s3) = (Session::new(&m, "s1"), Session::new(&m, "s2"), Session::new(&m, "s3"));
    s1.lock(rel(1), AccessShare).ok();
    let started = Instant::now();
    s2.step(|b| {
        b.set_lock_timeout(Some(Duration::from_millis(300)));
        b.lock(rel(1), AccessExclusive, Wait::Block).map(|_| ())
    })
    .waiting();
    // s3's AccessShare is compatible with s1 but queues behind s2.
    s3.lock(rel(1), AccessShare).waiting();
    let err = s2.completed().unwrap_err();
    let waited = started.elapsed();
    let LockError::Timeout { tag, mode, waited: reported } = err else { panic!("expected a timeout, got {err}") };
    assert_eq!((tag, mode), (rel(1), AccessExclusive));
    assert!(reported >= Duration::from_millis(300) && waited >= Duration::from_millis(300), "{reported:?}");
    s3.completed().unwrap(); // woken when s2 left the queue
                             // An explicit per-request timeout works the same way.
    s2.step(|b| b.lock(rel(1), AccessExclusive, Wait::Timeout(Duration::from_millis(100))).map(|_| ())).waiting();
    assert!(matches!(s2.completed(), Err(LockError::Timeout { .. })));
    assert_eq!(m.stats().timeouts, 2);
    assert_eq!(m.waiters(&rel(1)), 0);
    m.check_invariants();
}

/// A waiting backend shows `Lock` / `<lock type>` in its activity slot.
#[test]
fn a_waiting_backend_shows_its_lock_type() {
    let m = manager(|_| {});
    let activity = ActivityTable::new(4);
    let holder = Session::new(&m, "holder");
    let ext = LockTag::relation_extend(1, 7);
    holder.lock(rel(7), AccessExclusive).ok();
    holder.lock(ext, Exclusive).ok();
    for (tag, mode, expected) in [(rel(7), AccessShare, "relation"), (ext, Exclusive, "extend")] {
        let waiter = Session::new(&m, "waiter");
        let table = std::sync::Arc::clone(&activity);
        waiter
            .step(move |b| {
                let slot = table.register().unwrap();
                let _attached = slot.attach();
                b.lock(tag, mode, Wait::Block).map(|_| ())
            })
            .waiting();
        eventually("the wait event is published", || {
            activity.snapshot().iter().any(|r| r.wait_event == Some(expected))
        });
        let row = activity.snapshot().into_iter().find(|r| r.wait_event.is_some()).unwrap();
        assert_eq!(row.wait_event_type, Some("Lock"));
        assert_eq!(m.waiters(&tag), 1);
        holder.step(move |b| b.unlock(tag, if tag == ext { Exclusive } else { AccessExclusive })).ok();
        waiter.completed().unwrap();
        waiter.commit().ok();
    }
    let stats = m.stats();
    assert_eq!(stats.waits_of(turnstile_lock::LockTagKind::Relation), 1);
    assert_eq!(stats.waits_of(turnstile_lock::LockTagKind::RelationExtend), 1);
    assert!(stats.wait_ns_of(turnstile_lock::LockTagKind::Relation) > 0);
}

/// Extension-lock waits never run the deadlock check.
#[test]
fn extension_waits_are_not_deadlock_checked() {
    let m = manager(|c| c.lock.deadlock_timeout_ms = 1);
    let (s1, s2) = (Session::new(&m, "s1"), Session::new(&m, "s2"));
    let ext = LockTag::relation_extend(1, 9);
    s1.lock(ext, Exclusive).ok();
    s2.lock(ext, Exclusive).waiting();
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(m.stats().deadlock_checks, 0);
    s1.commit().ok();
    s2.completed().unwrap();
}
