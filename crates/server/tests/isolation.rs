//! Isolation through the protocol, under both profiles, as PostgreSQL's
//! isolation tester drives it: sessions interleaved step by step. Expected
//! outcomes are PostgreSQL 15's: no dirty read, a statement-level snapshot,
//! `READ COMMITTED`'s update of a concurrently updated row acting on the
//! newest version, `REPEATABLE READ`'s `40001`, readers never blocked by a
//! writer, a transaction's own changes visible to it; tpcb-like at 16
//! clients with `REPEATABLE READ` readers alongside that never see a torn
//! transfer; VACUUM keeping a table that is updated over and over at its size.

mod common;

use common::{error_code, have_tools, ready_status, Raw, TestServer};
use pgwire::messages::PgWireBackendMessage as B;
use pgwire::messages::PgWireFrontendMessage as F;
use std::time::{Duration, Instant};
use turnstile_sync::config::Profile;

const PROFILES: [Profile; 2] = [Profile::Classic, Profile::Scalable];

fn ok(raw: &mut Raw, sql: &str) -> Vec<B> {
    let msgs = raw.query(sql);
    assert_eq!(error_code(&msgs), None, "{sql}: {msgs:?}");
    msgs
}

/// Every text value of every DataRow, rows joined by `;` and columns by `|`.
fn values(msgs: &[B]) -> String {
    let mut rows = Vec::new();
    for m in msgs {
        if let B::DataRow(r) = m {
            let mut cols = Vec::new();
            let mut at = 0;
            let d = &r.data[..];
            while at + 4 <= d.len() {
                let n = i32::from_be_bytes([d[at], d[at + 1], d[at + 2], d[at + 3]]);
                at += 4;
                if n < 0 {
                    cols.push("NULL".to_owned());
                } else {
                    cols.push(String::from_utf8_lossy(&d[at..at + n as usize]).into_owned());
                    at += n as usize;
                }
            }
            rows.push(cols.join("|"));
        }
    }
    rows.join(";")
}

fn q(raw: &mut Raw, sql: &str) -> String {
    values(&ok(raw, sql))
}

fn send_query(raw: &mut Raw, sql: &str) {
    raw.send(&[F::Query(pgwire::messages::simplequery::Query::new(sql.into()))]);
}

/// Polls `pg_locks` until a session waits for a lock (B queued behind A's
/// row), at most 10 s.
fn waits_for_a_lock(srv: &TestServer) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while srv.psql_ok("postgres", &["SELECT count(*) FROM pg_locks WHERE NOT granted"]).trim() == "0" {
        assert!(Instant::now() < deadline, "no session waited for a lock");
        // Polled: the waiter is another session's thread.
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn setup(srv: &TestServer, table: &str) {
    srv.psql_ok(
        "postgres",
        &[
            &format!("CREATE TABLE {table} (id int PRIMARY KEY, k int, bal int, v text)"),
            &format!("INSERT INTO {table} SELECT g, g, 100, 'c' || g FROM generate_series(1, 10) g"),
        ],
    );
}

#[test]
fn no_dirty_read_own_changes_visible_and_readers_never_wait() {
    if !have_tools(&["psql"]) {
        return;
    }
    for profile in PROFILES {
        let srv = TestServer::start(profile, &[]);
        setup(&srv, "t");
        let (mut a, mut b) = (srv.raw("postgres"), srv.raw("postgres"));
        ok(&mut a, "BEGIN");
        ok(&mut a, "UPDATE t SET v = 'new' WHERE id = 1");
        ok(&mut a, "INSERT INTO t VALUES (11, 11, 100, 'mine')");
        ok(&mut a, "DELETE FROM t WHERE id = 2");
        // B neither waits nor sees A's work, by key and by sequential scan.
        ok(&mut b, "SET statement_timeout = '5s'");
        let started = Instant::now();
        assert_eq!(q(&mut b, "SELECT v FROM t WHERE id = 1"), "c1", "{profile:?}: dirty read by key");
        assert_eq!(q(&mut b, "SELECT v FROM t WHERE v = 'new' OR v = 'c1'"), "c1", "{profile:?}: seq scan");
        assert_eq!(q(&mut b, "SELECT count(*) FROM t WHERE id = 11"), "0", "{profile:?}: uncommitted insert");
        assert_eq!(q(&mut b, "SELECT v FROM t WHERE id = 2"), "c2", "{profile:?}: uncommitted delete");
        assert_eq!(q(&mut b, "SELECT count(*) FROM t"), "10");
        assert!(started.elapsed() < Duration::from_secs(4), "{profile:?}: a reader waited for a writer");
        // A sees its own changes.
        assert_eq!(q(&mut a, "SELECT v FROM t WHERE id = 1"), "new");
        assert_eq!(q(&mut a, "SELECT v FROM t WHERE k = 11"), "mine");
        assert_eq!(q(&mut a, "SELECT count(*) FROM t WHERE id = 2"), "0");
        assert_eq!(q(&mut a, "SELECT count(*) FROM t"), "10");
        // A reader does not block a writer either: B holds a REPEATABLE
        // READ snapshot over id 3 while A updates it.
        ok(&mut b, "BEGIN ISOLATION LEVEL REPEATABLE READ");
        assert_eq!(q(&mut b, "SELECT bal FROM t WHERE id = 3"), "100");
        ok(&mut a, "UPDATE t SET bal = 1 WHERE id = 3");
        ok(&mut a, "ROLLBACK");
        ok(&mut b, "COMMIT");
        // After A's rollback nothing of it remains.
        assert_eq!(q(&mut b, "SELECT id, v FROM t WHERE id <= 3 ORDER BY id"), "1|c1;2|c2;3|c3");
        assert_eq!(q(&mut b, "SELECT count(*) FROM t"), "10");
        // Once A commits, the next statement of B sees it.
        ok(&mut a, "BEGIN");
        ok(&mut a, "UPDATE t SET v = 'done' WHERE id = 1");
        ok(&mut b, "BEGIN");
        assert_eq!(q(&mut b, "SELECT v FROM t WHERE id = 1"), "c1");
        ok(&mut a, "COMMIT");
        assert_eq!(q(&mut b, "SELECT v FROM t WHERE id = 1"), "done", "{profile:?}: READ COMMITTED sees the commit");
        ok(&mut b, "COMMIT");
    }
}

#[test]
fn read_committed_update_acts_on_the_newest_version_and_repeatable_read_fails() {
    if !have_tools(&["psql"]) {
        return;
    }
    for profile in PROFILES {
        let srv = TestServer::start(profile, &[]);
        setup(&srv, "t");
        let (mut a, mut b) = (srv.raw("postgres"), srv.raw("postgres"));
        // READ COMMITTED: B waits for A's row, then doubles A's result.
        ok(&mut a, "BEGIN");
        ok(&mut a, "UPDATE t SET bal = bal + 10 WHERE id = 7");
        send_query(&mut b, "UPDATE t SET bal = bal * 2 WHERE id = 7");
        waits_for_a_lock(&srv);
        ok(&mut a, "COMMIT");
        let done = b.until_ready();
        assert_eq!(error_code(&done), None, "{profile:?}: {done:?}");
        assert!(done.iter().any(|m| matches!(m, B::CommandComplete(c) if c.tag == "UPDATE 1")), "{done:?}");
        assert_eq!(q(&mut a, "SELECT bal FROM t WHERE id = 7"), "220", "{profile:?}: (100 + 10) * 2");
        // …and re-checks its WHERE on the newest version: A moves k away.
        ok(&mut a, "BEGIN");
        ok(&mut a, "UPDATE t SET k = 80 WHERE id = 8");
        send_query(&mut b, "UPDATE t SET bal = 0 WHERE k = 8");
        waits_for_a_lock(&srv);
        ok(&mut a, "COMMIT");
        let done = b.until_ready();
        assert!(done.iter().any(|m| matches!(m, B::CommandComplete(c) if c.tag == "UPDATE 0")), "{done:?}");
        assert_eq!(q(&mut a, "SELECT k, bal FROM t WHERE id = 8"), "80|100");
        // REPEATABLE READ: one snapshot for the transaction, 40001 on a row
        // changed since.
        ok(&mut b, "BEGIN ISOLATION LEVEL REPEATABLE READ");
        assert_eq!(q(&mut b, "SHOW transaction_isolation"), "repeatable read");
        assert_eq!(q(&mut b, "SELECT bal FROM t WHERE id = 9"), "100");
        ok(&mut a, "UPDATE t SET bal = 555 WHERE id = 9");
        assert_eq!(q(&mut b, "SELECT bal FROM t WHERE id = 9"), "100", "{profile:?}: the snapshot is kept");
        let e = b.query("UPDATE t SET bal = bal + 1 WHERE id = 9");
        assert_eq!(error_code(&e).as_deref(), Some("40001"), "{profile:?}: {e:?}");
        assert_eq!(ready_status(&e), Some(b'E'));
        ok(&mut b, "ROLLBACK");
        assert_eq!(q(&mut b, "SELECT bal FROM t WHERE id = 9"), "555");
        // SERIALIZABLE is refused, not silently weakened.
        assert_eq!(error_code(&b.query("BEGIN ISOLATION LEVEL SERIALIZABLE")).as_deref(), Some("0A000"));
    }
}

#[test]
fn a_statement_sees_a_consistent_total_while_transfers_commit() {
    if !have_tools(&["psql"]) {
        return;
    }
    for profile in PROFILES {
        let srv = TestServer::start(profile, &[]);
        srv.psql_ok(
            "postgres",
            &[
                "CREATE TABLE acc (id int PRIMARY KEY, bal int)",
                "INSERT INTO acc SELECT g, 100 FROM generate_series(1, 100) g",
            ],
        );
        let seed: u64 = std::env::var("TURNSTILE_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
        });
        println!("{profile:?}: seed {seed} (TURNSTILE_SEED)");
        let stop = turnstile_sync::sync::counter::AtomicBool::new(false);
        std::thread::scope(|s| {
            for w in 0..4u64 {
                let srv = &srv;
                let stop = &stop;
                s.spawn(move || {
                    let mut c = srv.raw("postgres");
                    let mut x = seed ^ (w.wrapping_mul(0x9e37_79b9_7f4a_7c15)) | 1;
                    for _ in 0..150 {
                        if stop.load(turnstile_sync::sync::counter::Ordering::Relaxed) {
                            break;
                        }
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let (from, to) = (x % 100 + 1, (x >> 20) % 100 + 1);
                        let msgs = c.query(&format!(
                            "BEGIN; UPDATE acc SET bal = bal - 1 WHERE id = {from}; \
                             UPDATE acc SET bal = bal + 1 WHERE id = {to}; COMMIT"
                        ));
                        // A deadlock between two transfers is a clean error.
                        if let Some(code) = error_code(&msgs) {
                            assert_eq!(code, "40P01", "{msgs:?}");
                            c.query("ROLLBACK");
                        }
                    }
                });
            }
            let mut r = srv.raw("postgres");
            let mut reads = 0;
            let deadline = Instant::now() + Duration::from_secs(60);
            while reads < 200 && Instant::now() < deadline {
                let total = q(&mut r, "SELECT sum(bal) FROM acc");
                if total != "10000" {
                    stop.store(true, turnstile_sync::sync::counter::Ordering::Relaxed);
                    panic!("{profile:?}: a statement saw {total}, not 10000 (seed {seed})");
                }
                reads += 1;
            }
            stop.store(true, turnstile_sync::sync::counter::Ordering::Relaxed);
        });
        assert_eq!(srv.psql_ok("postgres", &["SELECT sum(bal) FROM acc"]).trim(), "10000");
    }
}

#[test]
fn tpcb_like_at_16_clients_with_readers_never_torn() {
    if !have_tools(&["pgbench", "psql"]) {
        return;
    }
    for profile in PROFILES {
        let srv = TestServer::start(profile, &[]);
        let init = srv.pgbench("postgres", &["-i", "-q", "-s", "1"]);
        assert!(init.status.success(), "{}", String::from_utf8_lossy(&init.stderr));
        std::thread::scope(|s| {
            let bench = s.spawn(|| srv.pgbench("postgres", &["-b", "tpcb-like", "-c", "16", "-j", "2", "-T", "4"]));
            let readers = s.spawn(|| {
                // `-n`: pgbench's start-up TRUNCATE of pgbench_history would
                // drop the history rows the other run has committed.
                srv.pgbench("postgres", &["-n", "-b", "select-only", "-M", "prepared", "-c", "2", "-j", "1", "-T", "4"])
            });
            let mut r = srv.raw("postgres");
            let mut checks = 0;
            while !bench.is_finished() {
                ok(&mut r, "BEGIN ISOLATION LEVEL REPEATABLE READ");
                let a = q(&mut r, "SELECT sum(abalance) FROM pgbench_accounts");
                let t = q(&mut r, "SELECT sum(tbalance) FROM pgbench_tellers");
                let b = q(&mut r, "SELECT sum(bbalance) FROM pgbench_branches");
                let h = q(&mut r, "SELECT coalesce(sum(delta), 0) FROM pgbench_history");
                let diag = if a == t && t == b && b == h {
                    String::new()
                } else {
                    let h2 = q(&mut r, "SELECT coalesce(sum(delta), 0), count(*) FROM pgbench_history");
                    let a2 = q(&mut r, "SELECT sum(abalance) FROM pgbench_accounts");
                    let b2 = q(&mut r, "SELECT sum(bbalance) FROM pgbench_branches");
                    let iso = q(&mut r, "SHOW transaction_isolation");
                    format!(" (again: history {h2}, accounts {a2}, branches {b2}; {iso})")
                };
                ok(&mut r, "COMMIT");
                assert!(a == t && t == b && b == h, "{profile:?}: a torn transfer: {a} {t} {b} {h}{diag}");
                checks += 1;
            }
            let out = bench.join().unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let out = readers.join().unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            assert!(checks > 0);
        });
        let sums = srv.psql_ok(
            "postgres",
            &[
                "SELECT sum(abalance) FROM pgbench_accounts",
                "SELECT sum(tbalance) FROM pgbench_tellers",
                "SELECT sum(bbalance) FROM pgbench_branches",
                "SELECT coalesce(sum(delta), 0) FROM pgbench_history",
            ],
        );
        let v: Vec<&str> = sums.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        assert_eq!(v.len(), 4, "{sums}");
        assert!(v.iter().all(|x| *x == v[0]), "{profile:?}: balances differ after the run: {v:?}");
    }
}

#[test]
fn vacuum_keeps_a_table_updated_over_and_over_within_twice_its_size() {
    if !have_tools(&["psql"]) {
        return;
    }
    for profile in PROFILES {
        let srv = TestServer::start(profile, &[]);
        srv.psql_ok(
            "postgres",
            &[
                "CREATE TABLE ph (id int PRIMARY KEY, v int, pad text)",
                "INSERT INTO ph SELECT g, 0, repeat('x', 50) FROM generate_series(1, 1000) g",
            ],
        );
        let mut c = srv.raw("postgres");
        let size = |c: &mut Raw| -> (u64, u64) {
            let t = q(c, "SELECT pg_relation_size('ph')").parse().unwrap();
            let i = q(c, "SELECT pg_relation_size('ph_pkey')").parse().unwrap();
            (t, i)
        };
        let mut first = (0, 0);
        for round in 1..=20 {
            // Odd rounds keep the key (updates in place), even ones mirror
            // it between 1..1000 and 1001..2000, so rows move and the index
            // gets new entries, as PostgreSQL's non-HOT updates do; VACUUM
            // must make the space of both reusable.
            let sql =
                if round % 2 == 1 { "UPDATE ph SET v = v + 1" } else { "UPDATE ph SET id = 2001 - id, v = v + 1" };
            ok(&mut c, sql);
            ok(&mut c, "VACUUM ph");
            if round == 2 {
                first = size(&mut c);
            }
        }
        let last = size(&mut c);
        assert!(
            last.0 <= 2 * first.0 && last.1 <= 2 * first.1,
            "{profile:?}: table/index {last:?} after 20 rounds, {first:?} after the first of each kind"
        );
        assert_eq!(q(&mut c, "SELECT count(*), min(v), max(v) FROM ph"), "1000|20|20");
        let mut found = 0;
        for id in [1, 500, 1000] {
            found += q(&mut c, &format!("SELECT count(*) FROM ph WHERE id = {id}")).parse::<u32>().unwrap();
        }
        assert_eq!(found, 3, "{profile:?}: rows not found through the primary key");
    }
}
