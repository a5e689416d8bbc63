//! Heavyweight locks through the protocol: one backend thread per
//! connection, so waiters block only themselves; Postgres Pro 2018's
//! diagnosis with psql while a session waits; 64 waiters; deadlock; cancel.

mod common;

use common::{cancel, error_code, have_tools, Raw, TestServer};
use std::time::{Duration, Instant};
use turnstile_sync::config::Profile;

/// Polls `sql` (one integer) on `raw` until it reaches `want`.
fn wait_for_count(raw: &mut Raw, sql: &str, want: i64) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let msgs = raw.query(sql);
        let n = msgs.iter().find_map(|m| match m {
            pgwire::messages::PgWireBackendMessage::DataRow(r) => {
                let d = &r.data[4..];
                std::str::from_utf8(d).ok()?.parse::<i64>().ok()
            }
            _ => None,
        });
        if n == Some(want) {
            return;
        }
        assert!(Instant::now() < deadline, "{sql}: {n:?}, want {want}; {msgs:?}");
        // Polled: the waiters are other threads' sessions.
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn holder_of_access_exclusive(srv: &TestServer, table: &str) -> Raw {
    let mut holder = srv.raw("postgres");
    for sql in ["BEGIN".to_string(), format!("LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")] {
        let msgs = holder.query(&sql);
        assert_eq!(error_code(&msgs), None, "{sql}: {msgs:?}");
    }
    holder
}

#[test]
fn psql_diagnoses_a_session_waiting_on_a_lock() {
    if !have_tools(&["psql"]) {
        return;
    }
    let srv = TestServer::start(Profile::Scalable, &[]);
    srv.psql_ok("postgres", &["CREATE TABLE t (a int)", "INSERT INTO t VALUES (1)"]);
    let mut holder = holder_of_access_exclusive(&srv, "t");
    let mut waiter = srv.raw("postgres");
    waiter.send(&[pgwire::messages::PgWireFrontendMessage::Query(pgwire::messages::simplequery::Query::new(
        "SELECT count(*) FROM t".into(),
    ))]);
    wait_for_count(&mut holder, "SELECT count(*) FROM pg_locks WHERE NOT granted", 1);
    let out =
        srv.psql_ok("postgres", &["SELECT wait_event_type, wait_event, count(*) FROM pg_stat_activity GROUP BY 1, 2"]);
    assert!(out.lines().any(|l| l == "Lock|relation|1"), "Postgres Pro 2018's query:\n{out}");
    let out =
        srv.psql_ok("postgres", &["SELECT mode, granted FROM pg_locks WHERE locktype = 'relation' AND NOT granted"]);
    assert_eq!(out.trim(), "AccessShareLock|f", "{out}");
    assert_eq!(error_code(&holder.query("COMMIT")), None);
    let msgs = waiter.until_ready();
    assert_eq!(error_code(&msgs), None, "the waiter finishes after the commit: {msgs:?}");
}

#[test]
fn sixty_four_waiters_on_access_exclusive_all_finish() {
    let srv = TestServer::start(Profile::Classic, &["lock.max_backends=80"]);
    let mut setup = srv.raw("postgres");
    assert_eq!(error_code(&setup.query("CREATE TABLE t (a int); INSERT INTO t VALUES (1), (2)")), None);
    let mut holder = holder_of_access_exclusive(&srv, "t");
    let mut waiters: Vec<Raw> = (0..64).map(|_| srv.raw("postgres")).collect();
    for w in &mut waiters {
        w.send(&[pgwire::messages::PgWireFrontendMessage::Query(pgwire::messages::simplequery::Query::new(
            "SELECT count(*) FROM t".into(),
        ))]);
    }
    wait_for_count(&mut holder, "SELECT count(*) FROM pg_locks WHERE NOT granted", 64);
    assert_eq!(error_code(&holder.query("COMMIT")), None);
    for (i, w) in waiters.iter_mut().enumerate() {
        let msgs = w.until_ready();
        assert_eq!(error_code(&msgs), None, "waiter {i}: {msgs:?}");
        assert!(msgs.iter().any(|m| matches!(m, pgwire::messages::PgWireBackendMessage::DataRow(_))), "waiter {i}");
    }
}

#[test]
fn a_deadlock_fails_exactly_one_of_two_sessions_with_40p01() {
    let srv = TestServer::start(Profile::Scalable, &[]);
    let mut setup = srv.raw("postgres");
    assert_eq!(error_code(&setup.query("CREATE TABLE t1 (a int); CREATE TABLE t2 (a int)")), None);
    let mut a = holder_of_access_exclusive(&srv, "t1");
    let mut b = holder_of_access_exclusive(&srv, "t2");
    let q = |sql: &str| {
        pgwire::messages::PgWireFrontendMessage::Query(pgwire::messages::simplequery::Query::new(sql.into()))
    };
    a.send(&[q("LOCK TABLE t2 IN ACCESS EXCLUSIVE MODE")]);
    wait_for_count(&mut setup, "SELECT count(*) FROM pg_locks WHERE NOT granted", 1);
    b.send(&[q("LOCK TABLE t1 IN ACCESS EXCLUSIVE MODE")]);
    // Each session on its own thread: the survivor's answer comes only once
    // the victim's locks are gone.
    let run = |mut r: Raw| {
        std::thread::spawn(move || {
            let msgs = r.until_ready();
            let code = error_code(&msgs);
            let end = r.query(if code.is_some() { "ROLLBACK" } else { "COMMIT" });
            assert_eq!(error_code(&end), None, "{end:?}");
            code
        })
    };
    let (ta, tb) = (run(a), run(b));
    let codes = [ta.join().unwrap(), tb.join().unwrap()];
    let deadlocks = codes.iter().filter(|c| c.as_deref() == Some("40P01")).count();
    let ok = codes.iter().filter(|c| c.is_none()).count();
    assert_eq!((deadlocks, ok), (1, 1), "{codes:?}");
}

#[test]
fn cancel_request_ends_a_lock_wait_with_57014() {
    let srv = TestServer::start(Profile::Scalable, &[]);
    let mut setup = srv.raw("postgres");
    assert_eq!(error_code(&setup.query("CREATE TABLE t (a int)")), None);
    let mut holder = holder_of_access_exclusive(&srv, "t");
    let mut waiter = srv.raw("postgres");
    let key = waiter.key.expect("BackendKeyData");
    // A wrong secret cancels nothing.
    cancel(srv.port, (key.0, key.1.wrapping_add(1)));
    waiter.send(&[pgwire::messages::PgWireFrontendMessage::Query(pgwire::messages::simplequery::Query::new(
        "SELECT count(*) FROM t".into(),
    ))]);
    wait_for_count(&mut holder, "SELECT count(*) FROM pg_locks WHERE NOT granted", 1);
    cancel(srv.port, key);
    let msgs = waiter.until_ready();
    assert_eq!(error_code(&msgs).as_deref(), Some("57014"), "{msgs:?}");
    // The holder never noticed; the waiter's session goes on.
    assert_eq!(error_code(&holder.query("COMMIT")), None);
    assert_eq!(error_code(&waiter.query("SELECT count(*) FROM t")), None);
}

#[test]
fn cancel_request_ends_a_running_statement_with_57014() {
    let srv = TestServer::start(Profile::Classic, &[]);
    let mut sleeper = srv.raw("postgres");
    let key = sleeper.key.expect("BackendKeyData");
    let started = Instant::now();
    sleeper.send(&[pgwire::messages::PgWireFrontendMessage::Query(pgwire::messages::simplequery::Query::new(
        "SELECT pg_sleep(30)".into(),
    ))]);
    let mut observer = srv.raw("postgres");
    wait_for_count(
        &mut observer,
        "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(30)%' AND pid <> pg_backend_pid()",
        1,
    );
    cancel(srv.port, key);
    let msgs = sleeper.until_ready();
    assert_eq!(error_code(&msgs).as_deref(), Some("57014"), "{msgs:?}");
    assert!(started.elapsed() < Duration::from_secs(20), "canceled, not finished");
}
