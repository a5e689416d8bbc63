//! The protocol state machine through a raw socket: startup, extended query,
//! skip-to-Sync, formats, row limits, COPY, one write per Sync, limits, and
//! garbage input.

mod common;

use bytes::{BufMut, Bytes, BytesMut};
use common::{error_code, ready_status, Raw, TestServer};
use pgwire::messages::copy::{CopyData, CopyDone};
use pgwire::messages::extendedquery::{Bind, Describe, Execute, Parse, Sync, TARGET_TYPE_BYTE_PORTAL};
use pgwire::messages::simplequery::Query;
use pgwire::messages::PgWireBackendMessage as B;
use pgwire::messages::PgWireFrontendMessage as F;
use rand::{Rng, SeedableRng};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;
use turnstile_sync::config::Profile;

fn parse(name: &str, sql: &str) -> F {
    F::Parse(Parse::new(Some(name.into()).filter(|n: &String| !n.is_empty()), sql.into(), vec![]))
}
fn bind(portal: &str, stmt: &str, params: &[&str], result_formats: Vec<i16>) -> F {
    F::Bind(Bind::new(
        Some(portal.into()).filter(|n: &String| !n.is_empty()),
        Some(stmt.into()).filter(|n: &String| !n.is_empty()),
        vec![],
        params.iter().map(|p| Some(Bytes::copy_from_slice(p.as_bytes()))).collect(),
        result_formats,
    ))
}
fn execute(portal: &str, max_rows: i32) -> F {
    F::Execute(Execute::new(Some(portal.into()).filter(|n: &String| !n.is_empty()), max_rows))
}
fn sync() -> F {
    F::Sync(Sync::new())
}

fn count<F2: Fn(&B) -> bool>(msgs: &[B], f: F2) -> usize {
    msgs.iter().filter(|m| f(m)).count()
}

#[test]
fn startup_reports_parameters_key_data_and_ready() {
    let srv = TestServer::start(Profile::Scalable, &[]);
    let mut raw = Raw::connect(srv.port);
    // SSLRequest first, as libpq's default sslmode=prefer sends it.
    raw.send_bytes(&[0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);
    let mut answer = [0u8; 1];
    raw.stream.read_exact(&mut answer).unwrap();
    assert_eq!(&answer, b"N");
    raw.startup("postgres");
    let msgs = raw.until_ready();
    assert!(matches!(msgs[0], B::Authentication(_)), "{msgs:?}");
    let params: Vec<(String, String)> = msgs
        .iter()
        .filter_map(|m| match m {
            B::ParameterStatus(p) => Some((p.name.clone(), p.value.clone())),
            _ => None,
        })
        .collect();
    let get = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    assert!(get("server_version").is_some_and(|v| v.starts_with("15.")), "{params:?}");
    assert_eq!(get("standard_conforming_strings").as_deref(), Some("on"));
    assert_eq!(get("integer_datetimes").as_deref(), Some("on"));
    assert!(get("client_encoding").is_some() && get("DateStyle").is_some());
    assert_eq!(count(&msgs, |m| matches!(m, B::BackendKeyData(_))), 1);
    assert_eq!(ready_status(&msgs), Some(b'I'));
}

#[test]
fn unknown_protocol_version_is_refused() {
    let srv = TestServer::start(Profile::Scalable, &[]);
    for version in [0x0002_0000u32, 0x0004_0000, 0x1234_5678] {
        let mut raw = Raw::connect(srv.port);
        let mut b = BytesMut::new();
        b.put_i32(8 + 5 + 9);
        b.put_u32(version);
        b.put_slice(b"user\0postgres\0\0");
        raw.send_bytes(&b);
        let msgs = raw.until_ready();
        assert_eq!(error_code(&msgs).as_deref(), Some("0A000"), "version {version:#x}: {msgs:?}");
        assert!(raw.recv().is_none(), "the connection is closed");
    }
    srv.raw("postgres");
}

#[test]
fn an_error_skips_to_sync_and_sync_answers_once() {
    let srv = TestServer::start(Profile::Scalable, &[]);
    let mut raw = srv.raw("postgres");
    raw.send(&[parse("", "SELEC 1"), bind("", "", &[], vec![]), execute("", 0), sync()]);
    let msgs = raw.until_ready();
    assert_eq!(count(&msgs, |m| matches!(m, B::ErrorResponse(_))), 1, "{msgs:?}");
    assert_eq!(count(&msgs, |m| matches!(m, B::BindComplete(_))), 0, "{msgs:?}");
    assert_eq!(count(&msgs, |m| matches!(m, B::ReadyForQuery(_))), 1);
    // Unknown statement and portal names are errors too, each ended by its Sync.
    raw.send(&[bind("p", "nope", &[], vec![]), sync(), execute("nope", 0), sync()]);
    let a = raw.until_ready();
    let b = raw.until_ready();
    assert_eq!(error_code(&a).as_deref(), Some("26000"), "{a:?}");
    assert_eq!(error_code(&b).as_deref(), Some("34000"), "{b:?}");
}

#[test]
fn extended_query_named_statements_portals_and_row_limits() {
    let srv = TestServer::start(Profile::Scalable, &[]);
    let mut raw = srv.raw("postgres");
    let setup = raw
        .query("CREATE TABLE t (a int, b text); INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, 'z'), (4, 'w'), (5, 'v')");
    assert_eq!(error_code(&setup), None, "{setup:?}");
    assert_eq!(count(&setup, |m| matches!(m, B::CommandComplete(_))), 2, "two statements in one Query");
    raw.send(&[
        parse("sel", "SELECT a, b FROM t WHERE a >= $1"),
        F::Describe(Describe::new(b'S', Some("sel".into()))),
        bind("cur", "sel", &["1"], vec![]),
        F::Describe(Describe::new(TARGET_TYPE_BYTE_PORTAL, Some("cur".into()))),
        execute("cur", 2),
        execute("cur", 2),
        execute("cur", 2),
        sync(),
    ]);
    let msgs = raw.until_ready();
    assert_eq!(error_code(&msgs), None, "{msgs:?}");
    match msgs.iter().find(|m| matches!(m, B::ParameterDescription(_))) {
        Some(B::ParameterDescription(p)) => assert_eq!(p.types, vec![23], "int4 inferred from a = $1"),
        other => panic!("no ParameterDescription: {other:?}"),
    }
    assert_eq!(count(&msgs, |m| matches!(m, B::RowDescription(_))), 2);
    assert_eq!(count(&msgs, |m| matches!(m, B::DataRow(_))), 5);
    assert_eq!(count(&msgs, |m| matches!(m, B::PortalSuspended(_))), 2);
    let tags: Vec<String> = msgs
        .iter()
        .filter_map(|m| match m {
            B::CommandComplete(c) => Some(c.tag.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(tags, vec!["SELECT 1".to_string()]);
    // The named statement outlives the transaction; the portal does not.
    raw.send(&[bind("", "sel", &["4"], vec![]), execute("", 0), execute("cur", 0), sync()]);
    let msgs = raw.until_ready();
    assert_eq!(count(&msgs, |m| matches!(m, B::DataRow(_))), 2, "{msgs:?}");
    assert_eq!(error_code(&msgs).as_deref(), Some("34000"), "{msgs:?}");
}

/// SQL `DEALLOCATE` sees the statements prepared through `Parse`, as in
/// PostgreSQL (one namespace): pgx resets with `DEALLOCATE ALL` and then
/// prepares the same names again.
#[test]
fn deallocate_drops_protocol_prepared_statements() {
    let srv = TestServer::start(Profile::Classic, &[]);
    let mut raw = srv.raw("postgres");
    raw.send(&[parse("s1", "SELECT 1"), parse("s2", "SELECT 2"), sync()]);
    assert_eq!(error_code(&raw.until_ready()), None);
    let msgs = raw.query("DEALLOCATE s1");
    assert_eq!(error_code(&msgs), None, "{msgs:?}");
    // s1 is gone (Bind fails, 26000), s2 is not; s1 can be prepared again.
    raw.send(&[bind("", "s1", &[], vec![]), sync()]);
    assert_eq!(error_code(&raw.until_ready()).as_deref(), Some("26000"));
    raw.send(&[parse("s1", "SELECT 11"), bind("", "s2", &[], vec![]), execute("", 0), sync()]);
    let msgs = raw.until_ready();
    assert_eq!(error_code(&msgs), None, "{msgs:?}");
    assert_eq!(count(&msgs, |m| matches!(m, B::DataRow(_))), 1);
    let msgs = raw.query("DEALLOCATE ALL");
    assert!(msgs.iter().any(|m| matches!(m, B::CommandComplete(c) if c.tag == "DEALLOCATE ALL")), "{msgs:?}");
    raw.send(&[parse("s1", "SELECT 1"), parse("s2", "SELECT 2"), sync()]);
    assert_eq!(error_code(&raw.until_ready()), None, "both names free again after DEALLOCATE ALL");
    assert_eq!(error_code(&raw.query("DEALLOCATE nope")).as_deref(), Some("26000"));
}

#[test]
fn copy_in_and_out() {
    let srv = TestServer::start(Profile::Scalable, &[]);
    let mut raw = srv.raw("postgres");
    assert_eq!(error_code(&raw.query("CREATE TABLE c (a int, b text)")), None);
    raw.send(&[F::Query(Query::new("COPY c FROM STDIN".into()))]);
    match raw.recv() {
        Some(B::CopyInResponse(r)) => assert_eq!(r.columns, 2),
        other => panic!("expected CopyInResponse, got {other:?}"),
    }
    // Lines split across CopyData messages anywhere.
    raw.send(&[
        F::CopyData(CopyData::new(Bytes::from_static(b"1\tone\n2\tt"))),
        F::CopyData(CopyData::new(Bytes::from_static(b"wo\n3\tthree\n"))),
        F::CopyDone(CopyDone::new()),
    ]);
    let msgs = raw.until_ready();
    assert!(msgs.iter().any(|m| matches!(m, B::CommandComplete(c) if c.tag == "COPY 3")), "{msgs:?}");
    raw.send(&[F::Query(Query::new("COPY c TO STDOUT".into()))]);
    let msgs = raw.until_ready();
    let lines: Vec<Vec<u8>> = msgs
        .iter()
        .filter_map(|m| match m {
            B::CopyData(d) => Some(d.data.to_vec()),
            _ => None,
        })
        .collect();
    assert_eq!(lines.len(), 3, "{msgs:?}");
    assert!(lines.contains(&b"2\ttwo\n".to_vec()));
    assert_eq!(count(&msgs, |m| matches!(m, B::CopyOutResponse(_))), 1);
}

/// As PostgreSQL: the output of a Parse/Bind/Describe/Execute/Sync round
/// goes to the socket in one `write`.
#[test]
fn one_write_per_sync() {
    let srv = TestServer::start(Profile::Scalable, &[]);
    let mut raw = srv.raw("postgres");
    raw.send(&[parse("s", "SELECT 1"), sync()]);
    raw.until_ready();
    let rounds = 50;
    let before = srv.server().socket_writes();
    for _ in 0..rounds {
        raw.send(&[
            bind("", "s", &[], vec![]),
            F::Describe(Describe::new(TARGET_TYPE_BYTE_PORTAL, None)),
            execute("", 0),
            sync(),
        ]);
        let msgs = raw.until_ready();
        assert_eq!(count(&msgs, |m| matches!(m, B::DataRow(_))), 1, "{msgs:?}");
    }
    let simple_before = srv.server().socket_writes();
    assert_eq!(simple_before - before, rounds, "writes for {rounds} prepared rounds");
    for _ in 0..rounds {
        raw.query("SELECT 1; SELECT 2");
    }
    assert_eq!(srv.server().socket_writes() - simple_before, rounds, "writes for {rounds} simple queries");
}

#[test]
fn unknown_database_is_fatal_3d000() {
    let srv = TestServer::start(Profile::Scalable, &[]);
    let mut raw = Raw::connect(srv.port);
    raw.startup("no_such_db");
    let msgs = raw.until_ready();
    assert_eq!(error_code(&msgs).as_deref(), Some("3D000"), "{msgs:?}");
    assert!(raw.recv().is_none());
}

#[test]
fn one_connection_more_than_max_backends_gets_53300() {
    let srv = TestServer::start(Profile::Scalable, &["lock.max_backends=4"]);
    let sessions: Vec<Raw> = (0..4).map(|_| srv.raw("postgres")).collect();
    let mut extra = Raw::connect(srv.port);
    extra.startup("postgres");
    let msgs = extra.until_ready();
    assert_eq!(error_code(&msgs).as_deref(), Some("53300"), "{msgs:?}");
    drop(sessions);
    // Slots come back when sessions end.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let mut again = Raw::connect(srv.port);
        again.startup("postgres");
        let msgs = again.until_ready();
        if error_code(&msgs).is_none() {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no slot came back: {msgs:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn idle_sockets_beyond_twice_max_backends_are_refused_at_once() {
    let srv = TestServer::start(Profile::Scalable, &["lock.max_backends=2"]);
    let idle: Vec<TcpStream> = (0..4).map(|_| TcpStream::connect(("127.0.0.1", srv.port)).unwrap()).collect();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while srv.server().live_connections() < 4 {
        assert!(std::time::Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut extra = Raw::connect(srv.port);
    let msgs = extra.until_ready();
    assert_eq!(error_code(&msgs).as_deref(), Some("53300"), "{msgs:?}");
    drop(idle);
}

/// Random bytes, truncated and oversized messages, before and after startup:
/// an error or a closed connection each, and a healthy server afterwards.
#[test]
fn garbage_input_never_hurts_the_server() {
    let srv = TestServer::start(Profile::Scalable, &[]);
    let seed: u64 = std::env::var("TURNSTILE_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(rand::random);
    println!("garbage seed {seed} (rerun with TURNSTILE_SEED={seed})");
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    // A session that must stay usable throughout.
    let mut bystander = srv.raw("postgres");
    let read_all = |s: &mut TcpStream| {
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut sink = Vec::new();
        let _ = s.read_to_end(&mut sink);
    };
    for round in 0..40 {
        let n = [1usize, 7, 8, 64, 1000, 100_000][round % 6];
        let mut bytes = vec![0u8; n];
        rng.fill(&mut bytes[..]);
        // Before startup.
        let mut s = TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
        let _ = s.write_all(&bytes);
        let _ = s.shutdown(std::net::Shutdown::Write);
        read_all(&mut s);
        // After startup.
        let mut raw = srv.raw("postgres");
        let _ = raw.stream.write_all(&bytes);
        let _ = raw.stream.shutdown(std::net::Shutdown::Write);
        read_all(&mut raw.stream);
    }
    // An oversized message, a truncated one, a lying length, an unknown type.
    let cases: Vec<Vec<u8>> = vec![
        [&b"Q"[..], &0x7fff_fff0i32.to_be_bytes()].concat(),
        [&b"Q"[..], &100i32.to_be_bytes(), b"SELECT"].concat(),
        [&b"Q"[..], &2i32.to_be_bytes()].concat(),
        [&b"B"[..], &12i32.to_be_bytes(), b"\0\0\0\x05\0\0\0\0"].concat(),
        [&b"E"[..], &(-5i32).to_be_bytes()].concat(),
        [&b"z"[..], &4i32.to_be_bytes()].concat(),
    ];
    for case in cases {
        let mut raw = srv.raw("postgres");
        raw.send_bytes(&case);
        let _ = raw.stream.shutdown(std::net::Shutdown::Write);
        let msgs = raw.until_ready();
        assert!(
            msgs.is_empty() || error_code(&msgs).is_some(),
            "case {case:?}: only an error or a closed connection: {msgs:?}"
        );
    }
    let msgs = bystander.query("SELECT 1");
    assert_eq!(count(&msgs, |m| matches!(m, B::ReadyForQuery(_))), 1, "{msgs:?}");
    srv.raw("postgres");
}

/// The messages up to `Sync` run in one implicit transaction: an error
/// among them undoes the writes before it, a clean `Sync` commits them, and
/// `BEGIN` inside makes the block a regular one (as in PostgreSQL).
#[test]
fn the_messages_up_to_sync_are_one_implicit_transaction() {
    let srv = TestServer::start(Profile::Scalable, &[]);
    let mut raw = srv.raw("postgres");
    raw.query("CREATE TABLE implicit_t (id int4 PRIMARY KEY)");
    raw.send(&[parse("ins", "INSERT INTO implicit_t VALUES ($1)")]);
    let insert = |k: &str| [bind("", "ins", &[k], vec![]), execute("", 0)];
    let mut batch: Vec<F> = [insert("1"), insert("2"), insert("1"), insert("3")].into_iter().flatten().collect();
    batch.push(sync());
    raw.send(&batch);
    let msgs = raw.until_ready();
    assert_eq!(error_code(&msgs).as_deref(), Some("23505"), "{msgs:?}");
    assert_eq!(ready_status(&msgs), Some(b'I'), "{msgs:?}");
    let count_rows = |raw: &mut Raw| {
        let msgs = raw.query("SELECT count(*) FROM implicit_t");
        msgs.iter()
            .find_map(|m| match m {
                B::DataRow(r) => Some(String::from_utf8_lossy(&r.data[4..]).into_owned()),
                _ => None,
            })
            .expect("a row")
    };
    assert_eq!(count_rows(&mut raw), "0", "the writes before the error were kept");
    let mut batch: Vec<F> = [insert("1"), insert("2")].into_iter().flatten().collect();
    batch.push(sync());
    raw.send(&batch);
    let msgs = raw.until_ready();
    assert_eq!(error_code(&msgs), None, "{msgs:?}");
    assert_eq!(ready_status(&msgs), Some(b'I'), "{msgs:?}");
    assert_eq!(count_rows(&mut raw), "2", "a clean Sync did not commit");
    // BEGIN after a write keeps the block open past Sync, the write in it.
    let mut batch: Vec<F> = insert("5").into_iter().collect();
    batch.extend([parse("", "BEGIN"), bind("", "", &[], vec![]), execute("", 0), sync()]);
    raw.send(&batch);
    let msgs = raw.until_ready();
    assert_eq!(ready_status(&msgs), Some(b'T'), "{msgs:?}");
    raw.query("ROLLBACK");
    assert_eq!(count_rows(&mut raw), "2", "the write before BEGIN survived ROLLBACK");
}
