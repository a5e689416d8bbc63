//! Cancelling a lock wait from another thread ([`CancelHandle`]): the
//! server's answer to PostgreSQL's `CancelRequest`.

mod common;

use common::*;
use std::sync::mpsc::channel;
use std::thread;
use turnstile_lock::{Acquired, CancelHandle, LockError, LockMode::*, Wait};

/// A second thread cancels a backend queued behind an AccessExclusive
/// holder: the wait ends with `Canceled`, the request left the queue, and
/// a request queued behind it is granted.
#[test]
fn a_second_thread_cancels_a_real_wait() {
    let m = manager(|_| {});
    let t = rel(7);
    let mut holder = m.register().unwrap();
    holder.lock(t, Share, Wait::Block).unwrap();
    // `b` asks for AccessExclusive and queues; `c`'s Share request would be
    // compatible with the holder but may not pass b's queued request.
    let mut b = m.register().unwrap();
    let b_id = b.id();
    let cancel: CancelHandle = b.cancel_handle();
    let (tx, rx) = channel();
    let b_thread = thread::spawn(move || {
        let result = b.lock(t, AccessExclusive, Wait::Block);
        tx.send(result.clone()).unwrap();
        // The backend is still usable: its other locks are intact and it
        // can lock again.
        b.lock(rel(8), AccessShare, Wait::Block).unwrap();
        b.release_all();
        result
    });
    eventually("b is queued", || m.is_waiting(b_id));
    let mut c = m.register().unwrap();
    let c_id = c.id();
    let c_thread = thread::spawn(move || {
        let r = c.lock(t, Share, Wait::Block).map(|_| ());
        c.release_all();
        r
    });
    eventually("c is queued behind b", || m.is_waiting(c_id));
    assert_eq!(m.waiters(&t), 2);

    let canceller = thread::spawn(move || cancel.cancel());
    assert!(canceller.join().unwrap(), "the backend exists");
    let result = rx.recv_timeout(PATIENCE).expect("the cancelled wait ended");
    assert_eq!(result, Err(LockError::Canceled { waiting_for: Some((t, AccessExclusive)) }));
    assert!(result.unwrap_err().to_string().contains("canceling statement due to user request"));
    // b's request left the queue, so c no longer waits behind it.
    c_thread.join().unwrap().unwrap();
    b_thread.join().unwrap().unwrap_err();

    assert_eq!(m.waiters(&t), 0);
    m.check_invariants();
    let rows = m.locks();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert!(rows[0].granted && rows[0].backend == holder.id());
    holder.release_all();
    m.check_invariants();
    assert_eq!(m.occupancy().lock_objects, 0);
    assert!(m.locks().is_empty());
}

/// A cancel that arrives before the wait starts ends the wait as soon as
/// it would begin; the pending request is consumed by it.
#[test]
fn a_pending_cancel_ends_the_next_wait() {
    let m = manager(|_| {});
    let t = rel(1);
    let mut a = m.register().unwrap();
    let mut b = m.register().unwrap();
    a.lock(t, AccessExclusive, Wait::Block).unwrap();
    assert!(b.cancel_handle().cancel());
    // A request that does not wait is not affected.
    assert_eq!(b.lock(rel(2), AccessShare, Wait::Block), Ok(Acquired::New));
    let err = b.lock(t, AccessShare, Wait::Block).unwrap_err();
    assert_eq!(err, LockError::Canceled { waiting_for: Some((t, AccessShare)) });
    assert_eq!(b.check_cancel(), Ok(()), "the wait consumed the request");
    assert_eq!(m.waiters(&t), 0);
    m.check_invariants();
    a.release_all();
    b.release_all();
    m.check_invariants();
    assert_eq!(m.occupancy().lock_objects, 0);
}

/// `check_cancel` consumes a request, `clear_cancel` drops it, and a
/// handle of a dropped backend cancels nothing — not even the backend
/// registered next in the same slot.
#[test]
fn check_clear_and_stale_handles() {
    let m = manager(|c| c.lock.max_backends = 1);
    let b = m.register().unwrap();
    let handle = b.cancel_handle();
    assert_eq!(b.check_cancel(), Ok(()));
    assert!(handle.clone().cancel());
    assert_eq!(b.check_cancel(), Err(LockError::Canceled { waiting_for: None }));
    assert_eq!(b.check_cancel(), Ok(()), "consumed");
    assert!(handle.cancel());
    b.clear_cancel();
    assert_eq!(b.check_cancel(), Ok(()), "cleared");
    assert!(handle.cancel());
    drop(b);
    let again = m.register().unwrap();
    assert_eq!(again.id(), handle.backend_id(), "the same slot");
    assert_eq!(again.check_cancel(), Ok(()), "registration clears a pending cancel");
    assert!(!handle.cancel(), "a stale handle cancels nothing");
    assert_eq!(again.check_cancel(), Ok(()));
}

/// A lock granted while the cancel is being processed is kept, and the
/// request stays pending for the statement's next check.
#[test]
fn a_cancel_racing_a_grant_keeps_the_queue_clean() {
    // Many rounds of a racing release and cancel: whichever wins, the
    // waiter ends either holding the lock (cancel still pending) or
    // cancelled, and the table is clean.
    let m = manager(|_| {});
    let t = rel(3);
    for _ in 0..200 {
        let mut a = m.register().unwrap();
        let mut b = m.register().unwrap();
        let b_id = b.id();
        a.lock(t, AccessExclusive, Wait::Block).unwrap();
        let handle = b.cancel_handle();
        let waiter = thread::spawn(move || {
            let r = b.lock(t, AccessShare, Wait::Block);
            (r, b)
        });
        eventually("b is queued", || m.is_waiting(b_id));
        let releaser = thread::spawn(move || a.release_all());
        assert!(handle.cancel());
        releaser.join().unwrap();
        let (r, mut b) = waiter.join().unwrap();
        // Either the wait consumed the cancel, or the grant came first and
        // the cancel (sent before the join) is still pending.
        let pending = b.check_cancel().is_err();
        match r {
            Ok(Acquired::New) => assert!(pending, "a cancel that lost to the grant stays pending"),
            Err(LockError::Canceled { .. }) => assert!(!pending, "the wait consumed the cancel"),
            other => panic!("unexpected {other:?}"),
        }
        b.release_all();
        drop(b);
        m.check_invariants();
        assert_eq!(m.occupancy().lock_objects, 0);
    }
}
