//! The SQL of locking through the protocol, under both profiles: `SELECT …
//! FOR UPDATE | FOR NO KEY UPDATE | FOR SHARE | FOR KEY SHARE [NOWAIT | SKIP
//! LOCKED]`, advisory locks, savepoints. Expected outcomes are PostgreSQL
//! 15's. A wait is observed in `pg_locks` (a `granted = false` row of the
//! waiting backend), never assumed after a sleep. The job-queue stress test
//! checks that every job is processed exactly once.

mod common;

use common::{error_code, ready_status, Raw, TestServer};
use pgwire::messages::PgWireBackendMessage as B;
use pgwire::messages::PgWireFrontendMessage as F;
use rand::{Rng, SeedableRng};
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

/// The SQLSTATE `sql` fails with (panics if it succeeds).
fn fails(raw: &mut Raw, sql: &str) -> String {
    let msgs = raw.query(sql);
    error_code(&msgs).unwrap_or_else(|| panic!("{sql} succeeded: {msgs:?}"))
}

fn send_query(raw: &mut Raw, sql: &str) {
    raw.send(&[F::Query(pgwire::messages::simplequery::Query::new(sql.into()))]);
}

fn pid(raw: &mut Raw) -> String {
    q(raw, "SELECT pg_backend_pid()")
}

/// Polls `pg_locks` (through `observer`) until backend `pid` waits for a
/// lock, at most 10 s; returns the awaited lock's type.
fn waits(observer: &mut Raw, pid: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let sql = format!("SELECT locktype FROM pg_locks WHERE NOT granted AND pid = {pid}");
        let got = q(observer, &sql);
        if !got.is_empty() {
            return got;
        }
        assert!(Instant::now() < deadline, "backend {pid} never waited for a lock");
        // Polled: the waiter is another session's thread.
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn setup(raw: &mut Raw, table: &str) {
    ok(raw, &format!("CREATE TABLE {table} (id int PRIMARY KEY, v text, n int)"));
    ok(raw, &format!("INSERT INTO {table} SELECT g, 'c' || g, 0 FROM generate_series(1, 5) g"));
}

#[test]
fn nowait_fails_at_once_and_skip_locked_passes_locked_rows_by() {
    for profile in PROFILES {
        let srv = TestServer::start(profile, &[]);
        let (mut a, mut b) = (srv.raw("postgres"), srv.raw("postgres"));
        setup(&mut a, "t");
        ok(&mut a, "BEGIN");
        assert_eq!(q(&mut a, "SELECT v FROM t WHERE id = 1 FOR UPDATE"), "c1");
        let started = Instant::now();
        let msgs = b.query("SELECT v FROM t WHERE id = 1 FOR UPDATE NOWAIT");
        assert_eq!(error_code(&msgs).as_deref(), Some("55P03"), "{profile:?}");
        assert!(started.elapsed() < Duration::from_secs(1), "NOWAIT waited {:?}", started.elapsed());
        let msg = msgs.iter().find_map(|m| match m {
            B::ErrorResponse(e) => e.fields.iter().find(|(k, _)| *k == b'M').map(|(_, v)| v.clone()),
            _ => None,
        });
        assert_eq!(msg.as_deref(), Some("could not obtain lock on row in relation \"t\""));
        // LIMIT applies after skipping: the first row nobody holds.
        assert_eq!(q(&mut b, "SELECT id FROM t ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED"), "2");
        assert_eq!(q(&mut b, "SELECT id FROM t WHERE id <= 3 ORDER BY id FOR SHARE SKIP LOCKED"), "2;3");
        // FOR KEY SHARE does not conflict with FOR NO KEY UPDATE.
        ok(&mut a, "SELECT id FROM t WHERE id = 4 FOR NO KEY UPDATE");
        assert_eq!(q(&mut b, "SELECT id FROM t WHERE id = 4 FOR KEY SHARE NOWAIT"), "4");
        assert_eq!(fails(&mut b, "SELECT id FROM t WHERE id = 4 FOR SHARE NOWAIT"), "55P03");
        ok(&mut a, "COMMIT");
        assert_eq!(q(&mut b, "SELECT v FROM t WHERE id = 1 FOR UPDATE NOWAIT"), "c1");
        assert_eq!(fails(&mut b, "SELECT v FROM t WHERE id = 1 FOR UPDATE OF nope"), "42P01");
        assert_eq!(fails(&mut b, "SELECT count(*) FROM t FOR UPDATE"), "0A000");
    }
}

#[test]
fn two_share_lockers_coexist_and_block_a_writer_until_both_end() {
    for profile in PROFILES {
        let srv = TestServer::start(profile, &[]);
        let (mut a, mut b, mut c, mut obs) =
            (srv.raw("postgres"), srv.raw("postgres"), srv.raw("postgres"), srv.raw("postgres"));
        setup(&mut a, "t");
        ok(&mut a, "BEGIN");
        ok(&mut b, "BEGIN");
        assert_eq!(q(&mut a, "SELECT v FROM t WHERE id = 2 FOR SHARE"), "c2");
        assert_eq!(q(&mut b, "SELECT v FROM t WHERE id = 2 FOR SHARE NOWAIT"), "c2", "{profile:?}");
        // lock_timeout applies to a writer blocked by share holders.
        ok(&mut c, "SET lock_timeout = '200ms'");
        assert_eq!(fails(&mut c, "UPDATE t SET v = 'w' WHERE id = 2"), "55P03");
        ok(&mut c, "SET lock_timeout = 0");
        let cpid = pid(&mut c);
        send_query(&mut c, "UPDATE t SET v = 'w' WHERE id = 2");
        assert_eq!(waits(&mut obs, &cpid), "transactionid");
        ok(&mut a, "COMMIT");
        // Still held by B: C waits on.
        waits(&mut obs, &cpid);
        ok(&mut b, "COMMIT");
        let msgs = c.until_ready();
        assert_eq!(error_code(&msgs), None, "{msgs:?}");
        assert_eq!(q(&mut a, "SELECT v FROM t WHERE id = 2"), "w");
    }
}

#[test]
fn read_committed_for_update_that_waited_rechecks_the_newest_version() {
    for profile in PROFILES {
        let srv = TestServer::start(profile, &[]);
        let (mut a, mut b, mut obs) = (srv.raw("postgres"), srv.raw("postgres"), srv.raw("postgres"));
        setup(&mut a, "t");
        let bpid = pid(&mut b);
        ok(&mut a, "BEGIN");
        ok(&mut a, "UPDATE t SET v = 'new', n = n + 1 WHERE id = 1");
        send_query(&mut b, "SELECT v, n FROM t WHERE id = 1 FOR UPDATE");
        waits(&mut obs, &bpid);
        ok(&mut a, "COMMIT");
        let msgs = b.until_ready();
        assert_eq!(values(&msgs), "new|1", "{profile:?}: {msgs:?}");
        // The re-check drops a row that no longer qualifies.
        ok(&mut a, "BEGIN");
        ok(&mut a, "UPDATE t SET v = 'gone' WHERE id = 3");
        send_query(&mut b, "SELECT id FROM t WHERE v = 'c3' FOR UPDATE");
        waits(&mut obs, &bpid);
        ok(&mut a, "COMMIT");
        let msgs = b.until_ready();
        assert_eq!(error_code(&msgs), None);
        assert_eq!(values(&msgs), "", "{profile:?}: the row changed to v = 'gone'");
    }
}

#[test]
fn repeatable_read_for_update_of_a_row_updated_since_the_snapshot_is_40001() {
    for profile in PROFILES {
        let srv = TestServer::start(profile, &[]);
        let (mut a, mut b) = (srv.raw("postgres"), srv.raw("postgres"));
        setup(&mut a, "t");
        ok(&mut b, "BEGIN ISOLATION LEVEL REPEATABLE READ");
        assert_eq!(q(&mut b, "SELECT v FROM t WHERE id = 1"), "c1");
        ok(&mut a, "UPDATE t SET v = 'x' WHERE id = 1");
        assert_eq!(fails(&mut b, "SELECT v FROM t WHERE id = 1 FOR UPDATE"), "40001", "{profile:?}");
        ok(&mut b, "ROLLBACK");
    }
}

#[test]
fn advisory_locks_by_level_with_postgresqls_pg_locks_columns() {
    for profile in PROFILES {
        let srv = TestServer::start(profile, &[]);
        let (mut a, mut b, mut obs) = (srv.raw("postgres"), srv.raw("postgres"), srv.raw("postgres"));
        let apid = pid(&mut a);
        ok(&mut a, "SELECT pg_advisory_lock(42)");
        ok(&mut a, "SELECT pg_advisory_lock_shared(1, 2)");
        let rows = q(
            &mut obs,
            "SELECT classid, objid, objsubid, mode, granted, pid FROM pg_locks WHERE locktype = 'advisory' ORDER BY objsubid",
        );
        assert_eq!(rows, format!("0|42|1|ExclusiveLock|t|{apid};1|2|2|ShareLock|t|{apid}"), "{profile:?}");
        ok(&mut a, "SELECT pg_advisory_lock(8589934593)"); // 2^33 + 1: classid 2, objid 1
        assert_eq!(
            q(&mut obs, "SELECT classid, objid FROM pg_locks WHERE locktype = 'advisory' AND classid = 2"),
            "2|1"
        );
        // Session level: survives a commit, and a second acquisition counts.
        ok(&mut a, "BEGIN");
        ok(&mut a, "SELECT pg_advisory_lock(42)");
        ok(&mut a, "COMMIT");
        assert_eq!(q(&mut b, "SELECT pg_try_advisory_lock(42)"), "f");
        assert_eq!(q(&mut b, "SELECT pg_try_advisory_lock_shared(1, 2)"), "t");
        assert_eq!(q(&mut b, "SELECT pg_try_advisory_lock(1, 2)"), "f");
        assert_eq!(q(&mut a, "SELECT pg_advisory_unlock(42)"), "t");
        assert_eq!(q(&mut b, "SELECT pg_try_advisory_lock(42)"), "f", "held once more");
        assert_eq!(q(&mut a, "SELECT pg_advisory_unlock(42)"), "t");
        // Not held: false, with PostgreSQL's warning.
        let msgs = ok(&mut a, "SELECT pg_advisory_unlock(42)");
        assert_eq!(values(&msgs), "f");
        assert!(msgs.iter().any(|m| matches!(m, B::NoticeResponse(n)
            if n.fields.iter().any(|(k, v)| *k == b'M' && v == "you don't own a lock of type ExclusiveLock"))));
        // A waits for B's session lock, visibly.
        assert_eq!(q(&mut b, "SELECT pg_try_advisory_lock(42)"), "t");
        send_query(&mut a, "SELECT pg_advisory_lock(42)");
        assert_eq!(waits(&mut obs, &apid), "advisory");
        ok(&mut b, "SELECT pg_advisory_unlock_all()");
        let msgs = a.until_ready();
        assert_eq!(error_code(&msgs), None);
        // Transaction level: released at the end of the transaction.
        ok(&mut a, "SELECT pg_advisory_unlock_all()");
        ok(&mut a, "BEGIN");
        ok(&mut a, "SELECT pg_advisory_xact_lock(7)");
        assert_eq!(q(&mut a, "SELECT pg_try_advisory_xact_lock_shared(8)"), "t");
        assert_eq!(q(&mut b, "SELECT pg_try_advisory_lock(7)"), "f");
        ok(&mut a, "COMMIT");
        assert_eq!(q(&mut b, "SELECT pg_try_advisory_lock(7)"), "t");
        assert_eq!(q(&mut obs, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 8"), "0");
        assert_eq!(fails(&mut b, "SELECT pg_advisory_lock(1) FROM pg_class"), "0A000");
    }
}

#[test]
fn rollback_to_savepoint_undoes_and_releases_the_locks_taken_after_it() {
    for profile in PROFILES {
        let srv = TestServer::start(profile, &[]);
        let (mut a, mut b, mut obs) = (srv.raw("postgres"), srv.raw("postgres"), srv.raw("postgres"));
        ok(&mut a, "CREATE TABLE qg (id int PRIMARY KEY, v text)");
        ok(&mut a, "CREATE TABLE other (id int)");
        ok(&mut a, "INSERT INTO qg VALUES (100, 'x')");
        ok(&mut a, "BEGIN");
        ok(&mut a, "INSERT INTO qg VALUES (1, 'one')");
        ok(&mut a, "SAVEPOINT s");
        ok(&mut a, "INSERT INTO qg VALUES (2, 'two')");
        ok(&mut a, "UPDATE qg SET v = 'A' WHERE id = 100");
        ok(&mut a, "LOCK TABLE other IN ACCESS EXCLUSIVE MODE");
        ok(&mut a, "SELECT pg_advisory_xact_lock(5)");
        ok(&mut a, "ROLLBACK TO SAVEPOINT s");
        assert_eq!(q(&mut a, "SELECT id, v FROM qg ORDER BY id"), "1|one;100|x", "{profile:?}");
        // The row lock, the table lock and the advisory lock went with it.
        ok(&mut b, "UPDATE qg SET v = 'B' WHERE id = 100");
        assert_eq!(q(&mut b, "SELECT count(*) FROM other"), "0");
        assert_eq!(q(&mut b, "SELECT pg_try_advisory_xact_lock(5)"), "t");
        // RELEASE keeps the work; an unknown name is 3B001.
        ok(&mut a, "SAVEPOINT s2");
        ok(&mut a, "INSERT INTO qg VALUES (3, 'three')");
        ok(&mut a, "RELEASE SAVEPOINT s2");
        let msgs = a.query("ROLLBACK TO s2");
        assert_eq!(error_code(&msgs).as_deref(), Some("3B001"));
        assert_eq!(ready_status(&msgs), Some(b'E'), "an error fails the block, as any");
        ok(&mut a, "ROLLBACK TO s");
        assert_eq!(q(&mut a, "SELECT id FROM qg ORDER BY id"), "1;100", "s2's work was s's after RELEASE");
        // ROLLBACK TO clears a failed block.
        let msgs = a.query("INSERT INTO qg VALUES (1, 'dup')");
        assert_eq!(error_code(&msgs).as_deref(), Some("23505"));
        assert_eq!(ready_status(&msgs), Some(b'E'));
        assert_eq!(fails(&mut a, "SELECT 1"), "25P02");
        let msgs = ok(&mut a, "ROLLBACK TO s");
        assert_eq!(ready_status(&msgs), Some(b'T'));
        ok(&mut a, "INSERT INTO qg VALUES (4, 'four')");
        ok(&mut a, "COMMIT");
        assert_eq!(q(&mut obs, "SELECT id, v FROM qg ORDER BY id"), "1|one;4|four;100|B");
        // Outside a block: 25P01.
        assert_eq!(fails(&mut a, "SAVEPOINT s"), "25P01");
        assert_eq!(fails(&mut a, "RELEASE s"), "25P01");
        assert_eq!(fails(&mut a, "ROLLBACK TO s"), "25P01");
    }
}

/// The job queue: workers take `ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED`,
/// mark the job done and record it, and commit — or, at random, roll back
/// (the job must then be taken again). Invariant: every job is processed
/// exactly once. The seed is printed; `ROW_LOCKS_SEED` replays one.
#[test]
fn skip_locked_job_queue_processes_every_job_exactly_once() {
    const JOBS: usize = 200;
    const WORKERS: usize = 6;
    let seed: u64 = std::env::var("ROW_LOCKS_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
    });
    println!("skip_locked_job_queue seed = {seed} (ROW_LOCKS_SEED={seed} replays it)");
    for profile in PROFILES {
        let srv = TestServer::start(profile, &[]);
        let mut setup = srv.raw("postgres");
        ok(&mut setup, "CREATE TABLE jobs (id int PRIMARY KEY, done bool NOT NULL)");
        ok(&mut setup, "CREATE TABLE processed (id int, worker int)");
        ok(&mut setup, &format!("INSERT INTO jobs SELECT g, false FROM generate_series(1, {JOBS}) g"));
        let port = srv.port;
        let handles: Vec<_> = (0..WORKERS)
            .map(|w| {
                std::thread::spawn(move || {
                    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ ((w as u64 + 1) * 0x9e37_79b9));
                    let mut raw = Raw::connect(port);
                    raw.startup("postgres");
                    raw.until_ready();
                    let mut mine = 0;
                    loop {
                        ok(&mut raw, "BEGIN");
                        let id = q(
                            &mut raw,
                            "SELECT id FROM jobs WHERE NOT done ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED",
                        );
                        if id.is_empty() {
                            ok(&mut raw, "COMMIT");
                            // Nothing free: either all done, or the rest are held by
                            // workers that may roll back. Look without skipping.
                            if q(&mut raw, "SELECT count(*) FROM jobs WHERE NOT done") == "0" {
                                return mine;
                            }
                            continue;
                        }
                        ok(&mut raw, &format!("UPDATE jobs SET done = true WHERE id = {id}"));
                        ok(&mut raw, &format!("INSERT INTO processed VALUES ({id}, {w})"));
                        if rng.random_bool(0.2) {
                            ok(&mut raw, "ROLLBACK");
                        } else {
                            ok(&mut raw, "COMMIT");
                            mine += 1;
                        }
                    }
                })
            })
            .collect();
        let per: Vec<usize> = handles.into_iter().map(|h| h.join().expect("worker")).collect();
        assert_eq!(per.iter().sum::<usize>(), JOBS, "{profile:?} seed {seed}: commits per worker {per:?}");
        assert_eq!(q(&mut setup, "SELECT count(*), count(DISTINCT id) FROM processed"), format!("{JOBS}|{JOBS}"));
        assert_eq!(q(&mut setup, "SELECT count(*) FROM jobs WHERE done"), JOBS.to_string());
    }
}
