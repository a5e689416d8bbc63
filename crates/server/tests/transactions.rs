//! How a transaction ends, through the protocol, under both profiles: every
//! exit that is not COMMIT rolls back (disconnect, broken connection,
//! killed client, `pg_terminate_backend`, shutdown); an error aborts the
//! block at once (its locks free, `25P02` until ROLLBACK); a deadlock's
//! victim frees its locks at the error; `statement_timeout`,
//! `idle_in_transaction_session_timeout` and `pg_cancel_backend`; settings
//! that are transactional. Expected outputs were taken from PostgreSQL 15.

mod common;

use common::{error_code, have_tools, ready_status, Raw, TestServer};
use pgwire::messages::PgWireBackendMessage as B;
use pgwire::messages::PgWireFrontendMessage as F;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use turnstile_sync::config::Profile;

const PROFILES: [Profile; 2] = [Profile::Classic, Profile::Scalable];
const BASE: &str = "1|c1\n2|c2\n3|c3";

/// A server with table `t` holding `BASE`.
fn server_with_table(profile: Profile) -> TestServer {
    let srv = TestServer::start(profile, &[]);
    srv.psql_ok(
        "postgres",
        &["CREATE TABLE t (id int PRIMARY KEY, v text)", "INSERT INTO t VALUES (1, 'c1'), (2, 'c2'), (3, 'c3')"],
    );
    srv
}

fn rows(srv: &TestServer) -> String {
    srv.psql_ok("postgres", &["SELECT id, v FROM t ORDER BY id"]).trim().to_owned()
}

/// Polls `t`'s rows until they are `BASE` (the ending backend rolls back on
/// its own thread), at most 10 s; the rows last seen.
fn rows_become_base(srv: &TestServer) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let r = rows(srv);
        if r == BASE || Instant::now() > deadline {
            return r;
        }
        // Polled: the rollback runs on the other session's thread.
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn ok(raw: &mut Raw, sql: &str) -> Vec<B> {
    let msgs = raw.query(sql);
    assert_eq!(error_code(&msgs), None, "{sql}: {msgs:?}");
    msgs
}

/// A session left inside `BEGIN; INSERT id=4; UPDATE id=1`.
fn open_transaction(srv: &TestServer) -> Raw {
    let mut a = srv.raw("postgres");
    for sql in ["BEGIN", "INSERT INTO t VALUES (4, 'uncommitted')", "UPDATE t SET v = 'uncommitted' WHERE id = 1"] {
        ok(&mut a, sql);
    }
    a
}

fn pid(raw: &Raw) -> i32 {
    raw.key.expect("BackendKeyData").0
}

/// The first text column of the first DataRow.
fn first_value(msgs: &[B]) -> Option<String> {
    msgs.iter().find_map(|m| match m {
        B::DataRow(r) => std::str::from_utf8(&r.data[4..]).ok().map(str::to_owned),
        _ => None,
    })
}

fn error_message(msgs: &[B]) -> Option<String> {
    msgs.iter().find_map(|m| match m {
        B::ErrorResponse(e) => e.fields.iter().find(|(k, _)| *k == b'M').map(|(_, v)| v.clone()),
        _ => None,
    })
}

fn send_query(raw: &mut Raw, sql: &str) {
    raw.send(&[F::Query(pgwire::messages::simplequery::Query::new(sql.into()))]);
}

/// Polls `sql` (a count) on a fresh psql until it is `want`, at most 10 s.
fn wait_until(srv: &TestServer, sql: &str, want: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = srv.psql_ok("postgres", &[sql]);
        if got.trim() == want {
            return;
        }
        assert!(Instant::now() < deadline, "{sql}: {got}, want {want}");
        // Polled: the state belongs to other sessions' threads.
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn every_exit_that_is_not_commit_rolls_back() {
    if !have_tools(&["psql"]) {
        return;
    }
    for profile in PROFILES {
        let srv = server_with_table(profile);
        // A clean disconnect (Terminate).
        let mut a = open_transaction(&srv);
        a.send(&[F::Terminate(pgwire::messages::terminate::Terminate::new())]);
        drop(a);
        assert_eq!(rows_become_base(&srv), BASE, "{profile:?}: Terminate inside a transaction");
        // A broken connection (the socket just closes).
        drop(open_transaction(&srv));
        assert_eq!(rows_become_base(&srv), BASE, "{profile:?}: socket closed inside a transaction");
        // A killed client: psql SIGKILLed while idle in the transaction.
        let mut psql = Command::new("psql")
            .args(["-X", "-q", "-A", "-t", "-U", "postgres", "-d", "postgres", "-p", &srv.port.to_string(), "-h"])
            .arg(&srv.socket_dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("run psql");
        let mut stdin = psql.stdin.take().unwrap();
        writeln!(stdin, "BEGIN; INSERT INTO t VALUES (4, 'x'); UPDATE t SET v = 'x' WHERE id = 1;\n\\echo inside")
            .unwrap();
        let mut line = String::new();
        BufReader::new(psql.stdout.take().unwrap()).read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "inside");
        psql.kill().unwrap();
        psql.wait().unwrap();
        assert_eq!(rows_become_base(&srv), BASE, "{profile:?}: killed client");
        // pg_terminate_backend: the session is told 57P01 and rolls back.
        let mut e = open_transaction(&srv);
        let out = srv.psql_ok("postgres", &[&format!("SELECT pg_terminate_backend({})", pid(&e))]);
        assert_eq!(out.trim(), "t");
        let msgs = e.until_ready();
        assert_eq!(error_code(&msgs).as_deref(), Some("57P01"), "{profile:?}: {msgs:?}");
        assert!(e.recv().is_none(), "the connection ends after 57P01");
        assert_eq!(rows_become_base(&srv), BASE, "{profile:?}: pg_terminate_backend");
    }
}

#[test]
fn shutdown_rolls_back_open_transactions_and_keeps_committed_work() {
    if !have_tools(&["psql"]) {
        return;
    }
    for profile in PROFILES {
        let mut srv = server_with_table(profile);
        let mut a = open_transaction(&srv);
        srv.psql_ok("postgres", &["INSERT INTO t VALUES (10, 'c10')"]);
        // What SIGTERM and SIGINT do in `turnstile serve` (PostgreSQL's fast shutdown).
        srv.restart();
        let msgs = a.until_ready();
        assert_eq!(error_code(&msgs).as_deref(), Some("57P01"), "{profile:?}: the idle session is told: {msgs:?}");
        assert_eq!(rows(&srv), format!("{BASE}\n10|c10"), "{profile:?}: after the restart");
    }
}

#[test]
fn an_error_aborts_the_block_and_frees_its_locks_at_once() {
    if !have_tools(&["psql"]) {
        return;
    }
    for profile in PROFILES {
        let srv = server_with_table(profile);
        let (mut s, mut t) = (srv.raw("postgres"), srv.raw("postgres"));
        ok(&mut s, "BEGIN");
        ok(&mut s, "UPDATE t SET v = 'S' WHERE id = 3");
        let e = s.query("SELECT 1/0");
        assert_eq!(error_code(&e).as_deref(), Some("22012"));
        assert_eq!(ready_status(&e), Some(b'E'));
        // The row lock went with the error: T does not wait (lock_timeout would say 55P03).
        ok(&mut t, "SET lock_timeout = '2s'");
        ok(&mut t, "UPDATE t SET v = 'T' WHERE id = 3");
        assert_eq!(error_code(&s.query("SELECT 1")).as_deref(), Some("25P02"));
        let c = s.query("COMMIT");
        assert!(
            c.iter().any(|m| matches!(m, B::CommandComplete(cc) if cc.tag == "ROLLBACK")),
            "COMMIT of a failed block answers ROLLBACK: {c:?}"
        );
        assert_eq!(ready_status(&c), Some(b'I'));
        assert_eq!(rows(&srv), "1|c1\n2|c2\n3|T", "{profile:?}");
        // No lock is left behind by either session.
        wait_until(
            &srv,
            "SELECT count(*) FROM pg_locks WHERE locktype <> 'virtualxid' AND pid <> pg_backend_pid()",
            "0",
        );
    }
}

#[test]
fn a_deadlock_victim_frees_its_locks_before_its_client_speaks() {
    if !have_tools(&["psql"]) {
        return;
    }
    for profile in PROFILES {
        let srv = server_with_table(profile);
        let (mut a, mut b) = (srv.raw("postgres"), srv.raw("postgres"));
        for (s, row) in [(&mut a, 1), (&mut b, 2)] {
            ok(s, "SET deadlock_timeout = '100ms'");
            ok(s, "BEGIN");
            ok(s, &format!("UPDATE t SET v = 'x' WHERE id = {row}"));
        }
        send_query(&mut a, "UPDATE t SET v = 'A' WHERE id = 2");
        wait_until(&srv, "SELECT count(*) FROM pg_locks WHERE NOT granted", "1");
        send_query(&mut b, "UPDATE t SET v = 'B' WHERE id = 1");
        // Each session's answer, read on its own thread: neither client
        // sends anything more until both have answered.
        let reader = |mut r: Raw| {
            std::thread::spawn(move || {
                let msgs = r.until_ready();
                (msgs, Instant::now(), r)
            })
        };
        let (ha, hb) = (reader(a), reader(b));
        let (ma, ta, mut a) = ha.join().unwrap();
        let (mb, tb, mut b) = hb.join().unwrap();
        let (ca, cb) = (error_code(&ma), error_code(&mb));
        let (victim_at, survivor_at) = match (ca.as_deref(), cb.as_deref()) {
            (Some("40P01"), None) => (ta, tb),
            (None, Some("40P01")) => (tb, ta),
            other => panic!("{profile:?}: want one 40P01 and one success, got {other:?}: {ma:?} {mb:?}"),
        };
        assert!(survivor_at.saturating_duration_since(victim_at) < Duration::from_secs(3), "{profile:?}");
        ok(&mut a, "ROLLBACK");
        ok(&mut b, "ROLLBACK");
    }
}

#[test]
fn statement_timeout_ends_sleeps_and_lock_waits_and_aborts_the_block() {
    if !have_tools(&["psql"]) {
        return;
    }
    for profile in PROFILES {
        let srv = server_with_table(profile);
        let (mut s, mut holder) = (srv.raw("postgres"), srv.raw("postgres"));
        ok(&mut s, "SET statement_timeout = '200ms'");
        let r = s.query("SELECT pg_sleep(5)");
        assert_eq!(error_code(&r).as_deref(), Some("57014"), "{profile:?}: {r:?}");
        assert_eq!(error_message(&r).as_deref(), Some("canceling statement due to statement timeout"));
        ok(&mut holder, "BEGIN");
        ok(&mut holder, "UPDATE t SET v = 'h' WHERE id = 1");
        let started = Instant::now();
        let r = s.query("UPDATE t SET v = 's' WHERE id = 1");
        assert_eq!(error_code(&r).as_deref(), Some("57014"), "{profile:?}: a lock wait: {r:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
        ok(&mut holder, "ROLLBACK");
        // Inside a block the timed-out statement aborts the transaction: its lock goes.
        ok(&mut s, "BEGIN");
        ok(&mut s, "UPDATE t SET v = 's' WHERE id = 2");
        assert_eq!(error_code(&s.query("SELECT pg_sleep(5)")).as_deref(), Some("57014"));
        ok(&mut holder, "SET lock_timeout = '2s'");
        ok(&mut holder, "UPDATE t SET v = 'h' WHERE id = 2");
        ok(&mut s, "ROLLBACK");
        // A statement that ends in time is not canceled later by its timer.
        ok(&mut s, "SELECT pg_sleep(0.05)");
        std::thread::sleep(Duration::from_millis(300));
        ok(&mut s, "SELECT 1");
    }
}

#[test]
fn pg_cancel_backend_and_pg_terminate_backend_answer_as_postgresql() {
    if !have_tools(&["psql"]) {
        return;
    }
    for profile in PROFILES {
        let srv = server_with_table(profile);
        let mut c = srv.raw("postgres");
        send_query(&mut c, "SELECT pg_sleep(20)");
        wait_until(&srv, "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(20)%'", "1");
        let out = srv.psql_ok("postgres", &[&format!("SELECT pg_cancel_backend({})", pid(&c))]);
        assert_eq!(out.trim(), "t");
        let r = c.until_ready();
        assert_eq!(error_code(&r).as_deref(), Some("57014"), "{profile:?}: {r:?}");
        assert_eq!(error_message(&r).as_deref(), Some("canceling statement due to user request"));
        ok(&mut c, "SELECT 1");
        // Not a backend: false, with PostgreSQL's warning.
        let out = srv.psql("postgres", &["SELECT pg_cancel_backend(12345)", "SELECT pg_terminate_backend(12345)"]);
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "f\nf");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.matches("WARNING:  01000: PID 12345 is not a PostgreSQL backend process").count(), 2, "{err}");
        let r = c.query("SELECT pg_terminate_backend(pg_backend_pid(), -1)");
        assert_eq!(error_code(&r).as_deref(), Some("22003"), "{r:?}");
        assert_eq!(first_value(&c.query("SELECT pg_cancel_backend(NULL) IS NULL")).as_deref(), Some("t"));
        // With a timeout, pg_terminate_backend waits for the backend to leave
        // (its pid is free again at once: look through the one asking).
        let mut e = srv.raw("postgres");
        let r = c.query(&format!(
            "SELECT pg_terminate_backend({0}, 5000); SELECT count(*) FROM pg_stat_activity WHERE pid = {0}",
            pid(&e)
        ));
        let values: Vec<&[u8]> = r
            .iter()
            .filter_map(|m| match m {
                B::DataRow(d) => Some(&d.data[4..]),
                _ => None,
            })
            .collect();
        assert_eq!(values, [b"t".as_slice(), b"0".as_slice()], "{profile:?}: terminated, and gone: {r:?}");
        assert_eq!(error_code(&e.until_ready()).as_deref(), Some("57P01"));
    }
}

#[test]
fn idle_in_transaction_session_timeout_ends_the_session_and_rolls_back() {
    if !have_tools(&["psql"]) {
        return;
    }
    for profile in PROFILES {
        let srv = server_with_table(profile);
        let mut idle = srv.raw("postgres");
        ok(&mut idle, "SET idle_in_transaction_session_timeout = '300ms'");
        // Idle outside a block: the timeout does not apply.
        std::thread::sleep(Duration::from_millis(600));
        ok(&mut idle, "BEGIN");
        ok(&mut idle, "INSERT INTO t VALUES (4, 'S')");
        let r = idle.until_ready();
        assert_eq!(error_code(&r).as_deref(), Some("25P03"), "{profile:?}: {r:?}");
        assert_eq!(error_message(&r).as_deref(), Some("terminating connection due to idle-in-transaction timeout"));
        assert!(idle.recv().is_none());
        assert_eq!(rows_become_base(&srv), BASE, "{profile:?}");
    }
}

#[test]
fn settings_are_transactional() {
    if !have_tools(&["psql"]) {
        return;
    }
    for profile in PROFILES {
        let srv = TestServer::start(profile, &[]);
        // Each pair: statements, then what SHOW answers after them in PostgreSQL 15.
        let cases: &[(&[&str], &str)] = &[
            (&["BEGIN", "SET lock_timeout = '1234ms'", "ROLLBACK"], "0"),
            (&["BEGIN", "SET lock_timeout = '1234ms'", "COMMIT"], "1234ms"),
            (&["SET lock_timeout = '1s'", "BEGIN", "SET LOCAL lock_timeout = '2s'", "COMMIT"], "1s"),
            (&["SET lock_timeout = '1s'", "SET LOCAL lock_timeout = '3s'"], "1s"),
            (&["BEGIN", "SET lock_timeout = '5s'", "SET LOCAL lock_timeout = '6s'", "COMMIT"], "5s"),
            (&["BEGIN", "SET LOCAL lock_timeout = '7s'", "SET lock_timeout = '8s'", "COMMIT"], "8s"),
            (&["SET lock_timeout = '8s'", "RESET lock_timeout"], "0"),
            (&["SET lock_timeout = '8s'", "BEGIN", "RESET lock_timeout", "ROLLBACK"], "8s"),
            (&["SET lock_timeout = '8s'", "RESET ALL"], "0"),
            (&["SELECT set_config('lock_timeout', '9s', true)"], "0"),
            (&["BEGIN", "SELECT set_config('lock_timeout', '9s', true)", "COMMIT"], "0"),
            (&["BEGIN", "SELECT set_config('lock_timeout', '9s', false)", "COMMIT"], "9s"),
        ];
        for (stmts, want) in cases {
            let mut all: Vec<&str> = stmts.to_vec();
            all.push("SHOW lock_timeout");
            let out = srv.psql_ok("postgres", &all);
            let got = out.lines().last().unwrap_or("").trim().to_owned();
            assert_eq!(got, *want, "{profile:?}: {stmts:?}");
        }
        // SET inside a block that fails is undone with the block.
        let mut s = srv.raw("postgres");
        ok(&mut s, "SET application_name = 'x1'");
        ok(&mut s, "BEGIN");
        ok(&mut s, "SET application_name = 'x2'");
        assert_eq!(error_code(&s.query("SELECT 1/0")).as_deref(), Some("22012"));
        assert_eq!(first_value(&s.query("SHOW application_name")), None, "25P02 until ROLLBACK");
        ok(&mut s, "ROLLBACK");
        assert_eq!(first_value(&ok(&mut s, "SHOW application_name")).as_deref(), Some("x1"));
        // SET LOCAL outside a block warns, as PostgreSQL does.
        let out = srv.psql("postgres", &["SET LOCAL lock_timeout = '3s'"]);
        assert!(out.status.success());
        assert!(
            String::from_utf8_lossy(&out.stderr)
                .contains("WARNING:  25P01: SET LOCAL can only be used in transaction blocks"),
            "{out:?}"
        );
        let out = srv.psql("postgres", &["RESET nosuch"]);
        assert!(String::from_utf8_lossy(&out.stderr).contains("42704"), "{out:?}");
    }
}

#[test]
fn a_statement_that_fails_in_parse_or_bind_aborts_the_block() {
    for profile in PROFILES {
        let srv = TestServer::start(profile, &[]);
        let mut s = srv.raw("postgres");
        ok(&mut s, "CREATE TABLE u (a int PRIMARY KEY)");
        ok(&mut s, "BEGIN");
        ok(&mut s, "INSERT INTO u VALUES (1)");
        // A Parse error (a syntax error) inside the block.
        s.send(&[
            F::Parse(pgwire::messages::extendedquery::Parse::new(None, "SELEC 1".into(), vec![])),
            F::Sync(pgwire::messages::extendedquery::Sync::new()),
        ]);
        let r = s.until_ready();
        assert_eq!(error_code(&r).as_deref(), Some("42601"), "{r:?}");
        assert_eq!(ready_status(&r), Some(b'E'));
        // The insert is already gone and its lock with it: another session inserts the same key.
        let mut other = srv.raw("postgres");
        ok(&mut other, "INSERT INTO u VALUES (1)");
        ok(&mut s, "ROLLBACK");
        assert_eq!(first_value(&ok(&mut other, "SELECT count(*) FROM u")).as_deref(), Some("1"), "{profile:?}");
    }
}
