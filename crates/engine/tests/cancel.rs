//! Cancelling a statement from another thread: lock waits (relation and
//! row) and long loops fail with `EngineError::Canceled` (`57014`).

use std::time::{Duration, Instant};
use turnstile_engine::query::Query;
use turnstile_engine::types::ColumnType::Int4;
use turnstile_engine::types::Value;
use turnstile_engine::{Engine, EngineError};
use turnstile_lock::LockMode;
use turnstile_sync::Config;

fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn a_relation_lock_wait_and_a_row_lock_wait_are_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut a = engine.session().unwrap();
    a.create_table("t", &[("k", Int4), ("v", Int4)], None).unwrap();
    a.insert_many("t", (0..10).map(|i| vec![Value::Int4(i), Value::Int4(0)])).unwrap();
    let mut b = engine.session().unwrap();
    let cancel = b.cancel_handle();
    let bump = |r: &[Value]| {
        let mut new = r.to_vec();
        new[1] = Value::Int4(r[1].as_i64().unwrap() as i32 + 1);
        Ok(Some(new))
    };
    for waits_on in ["relation", "transactionid"] {
        a.begin().unwrap();
        if waits_on == "relation" {
            a.lock_table("t", LockMode::AccessExclusive).unwrap();
        } else {
            a.update_rows(&Query::from("t").filter("k", 3), &[], &mut bump.clone()).unwrap();
        }
        let err = std::thread::scope(|s| {
            let waiter = s.spawn(|| b.update_rows(&Query::from("t").filter("k", 3), &[], &mut bump.clone()));
            wait_until("the waiter to queue", || {
                engine.locks_view().iter().any(|r| !r.granted && r.locktype == waits_on)
            });
            assert!(cancel.cancel());
            waiter.join().unwrap().unwrap_err()
        });
        assert!(matches!(err, EngineError::Canceled), "{waits_on}: {err}");
        assert_eq!(err.sqlstate(), "57014");
        a.commit().unwrap();
    }
    // The cancelled session works on; a stale cancel is dropped at the
    // start of the next statement.
    assert!(cancel.cancel());
    assert_eq!(b.update_rows(&Query::from("t").filter("k", 3), &[], &mut bump.clone()).unwrap(), 1);
    assert_eq!(b.query(&Query::from("t").filter("k", 3), &[]).unwrap()[0][1], Value::Int4(2));
}

#[test]
fn a_long_update_is_cancelled_between_rows_and_undone() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut s = engine.session().unwrap();
    s.create_table("t", &[("k", Int4), ("v", Int4)], None).unwrap();
    s.insert_many("t", (0..5000).map(|i| vec![Value::Int4(i), Value::Int4(0)])).unwrap();
    let cancel = s.cancel_handle();
    let mut seen = 0;
    let err = s
        .update_rows(&Query::from("t"), &[], &mut |r| {
            seen += 1;
            if seen == 100 {
                cancel.cancel(); // as the server's CancelRequest would, mid-statement
            }
            let mut new = r.to_vec();
            new[1] = Value::Int4(1);
            Ok(Some(new))
        })
        .unwrap_err();
    assert!(matches!(err, EngineError::Canceled), "{err}");
    assert!(seen < 5000, "the loop did not stop at the cancel");
    let rows = s.scan_all("t").unwrap();
    assert!(rows.iter().all(|r| r[1] == Value::Int4(0)), "the cancelled statement's updates were kept");
    assert_eq!(engine.txns().row_locks_held(), 0);
}

#[test]
fn with_outer_statements_a_cancel_between_two_calls_ends_the_next_lock_wait() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut a = engine.session().unwrap();
    a.create_table("t", &[("k", Int4)], None).unwrap();
    let mut b = engine.session().unwrap();
    b.set_outer_statements(true);
    // Without the fix the wait would not end: a lock timeout makes that a failure, not a hang.
    b.backend_mut().set_lock_timeout(Some(Duration::from_secs(2)));
    let cancel = b.cancel_handle();
    a.begin().unwrap();
    a.lock_table("t", LockMode::AccessExclusive).unwrap();
    // The cancel arrives between two engine calls of one outer statement:
    // the next call's lock wait must end with it, not wait for `a`.
    assert!(cancel.cancel());
    let err = b.query(&Query::from("t"), &[]).unwrap_err();
    assert!(matches!(err, EngineError::Canceled), "{err}");
    a.commit().unwrap();
    // The outer caller drops stale cancels itself; afterwards the session works on.
    b.backend().clear_cancel();
    assert_eq!(b.query(&Query::from("t"), &[]).unwrap().len(), 0);
}
