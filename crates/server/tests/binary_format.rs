//! Binary format (format code 1) for parameters and results, and the
//! extended protocol's `Flush` and error timing, through a raw socket.

mod common;

use bytes::Bytes;
use common::{error_code, TestServer};
use pgwire::messages::data::DataRow;
use pgwire::messages::extendedquery::{Bind, Describe, Execute, Flush, Parse, Sync, TARGET_TYPE_BYTE_PORTAL};
use pgwire::messages::PgWireBackendMessage as B;
use pgwire::messages::PgWireFrontendMessage as F;
use std::time::Duration;
use turnstile_sync::config::Profile;

fn parse(name: &str, sql: &str, types: &[u32]) -> F {
    F::Parse(Parse::new(Some(name.into()).filter(|n: &String| !n.is_empty()), sql.into(), types.to_vec()))
}

fn bind(stmt: &str, param_formats: Vec<i16>, params: Vec<Option<Vec<u8>>>, result_formats: Vec<i16>) -> F {
    F::Bind(Bind::new(
        None,
        Some(stmt.into()).filter(|n: &String| !n.is_empty()),
        param_formats,
        params.into_iter().map(|p| p.map(Bytes::from)).collect(),
        result_formats,
    ))
}

fn describe_portal() -> F {
    F::Describe(Describe::new(TARGET_TYPE_BYTE_PORTAL, None))
}

fn execute() -> F {
    F::Execute(Execute::new(None, 0))
}

fn sync() -> F {
    F::Sync(Sync::new())
}

/// The values of a DataRow (`None` = NULL).
fn values(row: &DataRow) -> Vec<Option<Vec<u8>>> {
    let mut out = Vec::new();
    let mut b = &row.data[..];
    for _ in 0..row.field_count {
        let len = i32::from_be_bytes(b[..4].try_into().unwrap());
        b = &b[4..];
        if len < 0 {
            out.push(None);
        } else {
            out.push(Some(b[..len as usize].to_vec()));
            b = &b[len as usize..];
        }
    }
    out
}

fn rows(msgs: &[B]) -> Vec<Vec<Option<Vec<u8>>>> {
    msgs.iter()
        .filter_map(|m| match m {
            B::DataRow(r) => Some(values(r)),
            _ => None,
        })
        .collect()
}

fn formats_described(msgs: &[B]) -> Vec<i16> {
    msgs.iter()
        .find_map(|m| match m {
            B::RowDescription(d) => Some(d.fields.iter().map(|f| f.format_code).collect()),
            _ => None,
        })
        .unwrap_or_default()
}

#[test]
fn binary_parameters_and_results_round_trip() {
    let srv = TestServer::start(Profile::Scalable, &[]);
    let mut raw = srv.raw("postgres");
    raw.query("CREATE TABLE b (i int, l bigint, f boolean, t text, ts timestamp)");
    // int4, int8, bool, text, timestamp: parameters in binary.
    raw.send(&[
        parse("ins", "INSERT INTO b VALUES ($1, $2, $3, $4, $5)", &[23, 20, 16, 25, 1114]),
        bind(
            "ins",
            vec![1],
            vec![
                Some(42i32.to_be_bytes().to_vec()),
                Some((-9_000_000_000i64).to_be_bytes().to_vec()),
                Some(vec![1]),
                Some("héllo".as_bytes().to_vec()),
                // 2024-01-02 03:04:05.123, as PostgreSQL 15's timestamp_send gives it.
                Some(0x0002_b0ec_8517_d3b8i64.to_be_bytes().to_vec()),
            ],
            vec![],
        ),
        execute(),
        sync(),
    ]);
    let msgs = raw.until_ready();
    assert_eq!(error_code(&msgs), None, "{msgs:?}");
    // Text results of what went in as binary.
    let text = raw.query("SELECT i, l, f, t, ts FROM b");
    let r = rows(&text);
    assert_eq!(
        r[0],
        vec![
            Some(b"42".to_vec()),
            Some(b"-9000000000".to_vec()),
            Some(b"t".to_vec()),
            Some("héllo".as_bytes().to_vec()),
            Some(b"2024-01-02 03:04:05.123".to_vec()),
        ]
    );
    // All results in binary (one code for every column), described as such.
    raw.send(&[
        parse("sel", "SELECT i, l, f, t, ts FROM b", &[]),
        bind("sel", vec![], vec![], vec![1]),
        describe_portal(),
        execute(),
        sync(),
    ]);
    let msgs = raw.until_ready();
    assert_eq!(error_code(&msgs), None, "{msgs:?}");
    assert_eq!(formats_described(&msgs), vec![1; 5]);
    assert_eq!(
        rows(&msgs)[0],
        vec![
            Some(42i32.to_be_bytes().to_vec()),
            Some((-9_000_000_000i64).to_be_bytes().to_vec()),
            Some(vec![1]),
            Some("héllo".as_bytes().to_vec()),
            Some(0x0002_b0ec_8517_d3b8i64.to_be_bytes().to_vec()),
        ]
    );
    // One code per column: text, binary, text, binary, text.
    raw.send(&[bind("sel", vec![], vec![], vec![0, 1, 0, 1, 0]), describe_portal(), execute(), sync()]);
    let msgs = raw.until_ready();
    assert_eq!(formats_described(&msgs), vec![0, 1, 0, 1, 0]);
    let r = rows(&msgs);
    assert_eq!(r[0][0], Some(b"42".to_vec()));
    assert_eq!(r[0][1], Some((-9_000_000_000i64).to_be_bytes().to_vec()));
    assert_eq!(r[0][3], Some("héllo".as_bytes().to_vec()));
}

#[test]
fn per_parameter_format_codes_mix_text_and_binary() {
    let srv = TestServer::start(Profile::Scalable, &[]);
    let mut raw = srv.raw("postgres");
    raw.send(&[
        parse("s", "SELECT $1::int8 + $2::int8, $3::float8", &[20, 20, 701]),
        bind(
            "s",
            vec![0, 1, 1],
            vec![Some(b"40".to_vec()), Some(2i64.to_be_bytes().to_vec()), Some(0.1f64.to_be_bytes().to_vec())],
            vec![],
        ),
        execute(),
        sync(),
    ]);
    let msgs = raw.until_ready();
    assert_eq!(error_code(&msgs), None, "{msgs:?}");
    assert_eq!(rows(&msgs)[0], vec![Some(b"42".to_vec()), Some(b"0.1".to_vec())]);
    // Two codes for three parameters: 08P01, as PostgreSQL.
    raw.send(&[
        bind("s", vec![0, 1], vec![Some(b"1".to_vec()), Some(b"1".to_vec()), Some(b"1".to_vec())], vec![]),
        execute(),
        sync(),
    ]);
    assert_eq!(error_code(&raw.until_ready()).as_deref(), Some("08P01"));
    // An int8 parameter of four bytes: insufficient data, 08P01.
    raw.send(&[
        bind("s", vec![1], vec![Some(vec![0; 8]), Some(vec![0; 4]), Some(vec![0; 8])], vec![]),
        execute(),
        sync(),
    ]);
    assert_eq!(error_code(&raw.until_ready()).as_deref(), Some("08P01"));
}

/// A format code of 1 that applies to no value is not an error: zero
/// parameters, and a statement without result columns.
#[test]
fn binary_code_without_values_is_accepted() {
    let srv = TestServer::start(Profile::Scalable, &[]);
    let mut raw = srv.raw("postgres");
    raw.send(&[parse("", "SELECT 1", &[]), bind("", vec![1], vec![], vec![0]), execute(), sync()]);
    let msgs = raw.until_ready();
    assert_eq!(error_code(&msgs), None, "{msgs:?}");
    assert_eq!(rows(&msgs)[0], vec![Some(b"1".to_vec())]);
    raw.send(&[parse("", "BEGIN", &[]), bind("", vec![1], vec![], vec![1]), describe_portal(), execute(), sync()]);
    let msgs = raw.until_ready();
    assert_eq!(error_code(&msgs), None, "{msgs:?}");
    assert!(msgs.iter().any(|m| matches!(m, B::NoData(_))), "{msgs:?}");
    assert!(msgs.iter().any(|m| matches!(m, B::CommandComplete(_))), "{msgs:?}");
}

/// asyncpg prepares with Parse/Describe/Flush and waits: the answer, or the
/// error, comes without a Sync.
#[test]
fn flush_sends_at_once_and_errors_are_not_held_for_sync() {
    let srv = TestServer::start(Profile::Scalable, &[]);
    let mut raw = srv.raw("postgres");
    raw.stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    raw.send(&[
        parse("ok", "SELECT 1", &[]),
        F::Describe(Describe::new(pgwire::messages::extendedquery::TARGET_TYPE_BYTE_STATEMENT, Some("ok".into()))),
        F::Flush(Flush::new()),
    ]);
    assert!(matches!(raw.recv(), Some(B::ParseComplete(_))));
    assert!(matches!(raw.recv(), Some(B::ParameterDescription(_))));
    assert!(matches!(raw.recv(), Some(B::RowDescription(_))));
    raw.send(&[parse("bad", "SELEC 1", &[]), F::Flush(Flush::new())]);
    match raw.recv() {
        Some(B::ErrorResponse(e)) => {
            assert!(e.fields.iter().any(|(k, v)| *k == b'C' && v == "42601"), "{e:?}");
        }
        other => panic!("expected the error before Sync, got {other:?}"),
    }
    // Everything up to Sync is skipped; Sync answers ReadyForQuery.
    raw.send(&[bind("ok", vec![], vec![], vec![]), execute(), sync()]);
    let msgs = raw.until_ready();
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert!(matches!(msgs[0], B::ReadyForQuery(_)));
}

/// node-postgres sends every JavaScript `Date` as text with an offset;
/// `timestamp` ignores it, as PostgreSQL does.
#[test]
fn timestamp_parameter_with_utc_offset_is_accepted() {
    let srv = TestServer::start(Profile::Scalable, &[]);
    let mut raw = srv.raw("postgres");
    raw.query("CREATE TABLE ts (t timestamp)");
    raw.send(&[
        parse("", "INSERT INTO ts VALUES ($1)", &[1114]),
        bind("", vec![], vec![Some(b"2024-01-02T03:04:05.123+00:00".to_vec())], vec![]),
        execute(),
        sync(),
    ]);
    let msgs = raw.until_ready();
    assert_eq!(error_code(&msgs), None, "{msgs:?}");
    assert_eq!(rows(&raw.query("SELECT t FROM ts"))[0], vec![Some(b"2024-01-02 03:04:05.123".to_vec())]);
}

/// Binary results built from typed values on every path: a computed query
/// sent in pieces by a row limit (the portal suspended between), SHOW's
/// text, an advisory function's bool and `void` (no bytes, as
/// `void_send` sends: sqlx's `SELECT pg_advisory_lock($1)` in binary).
#[test]
fn binary_results_of_computed_utility_and_suspended_portals() {
    let srv = TestServer::start(Profile::Scalable, &[]);
    let mut raw = srv.raw("postgres");
    raw.query("CREATE TABLE n (k int, v numeric, d date)");
    raw.query("INSERT INTO n VALUES (1, 1.5, '2000-01-02'), (2, NULL, '1999-12-31'), (3, -20000.25, '2000-01-01')");
    raw.send(&[
        parse("q", "SELECT k * 2, v, d, k::text FROM n ORDER BY k", &[]),
        bind("q", vec![], vec![], vec![1, 1, 1, 0]),
        F::Execute(Execute::new(None, 2)),
        F::Execute(Execute::new(None, 2)),
        sync(),
    ]);
    let msgs = raw.until_ready();
    assert_eq!(error_code(&msgs), None, "{msgs:?}");
    assert_eq!(msgs.iter().filter(|m| matches!(m, B::PortalSuspended(_))).count(), 1, "{msgs:?}");
    let numeric = |words: &[i16]| words.iter().flat_map(|w| w.to_be_bytes()).collect::<Vec<u8>>();
    assert_eq!(
        rows(&msgs),
        vec![
            vec![
                Some(2i32.to_be_bytes().to_vec()),
                Some(numeric(&[2, 0, 0, 1, 1, 5000])),
                Some(1i32.to_be_bytes().to_vec()),
                Some(b"1".to_vec())
            ],
            vec![Some(4i32.to_be_bytes().to_vec()), None, Some((-1i32).to_be_bytes().to_vec()), Some(b"2".to_vec())],
            vec![
                Some(6i32.to_be_bytes().to_vec()),
                Some(numeric(&[3, 1, 0x4000, 2, 2, 0, 2500])),
                Some(0i32.to_be_bytes().to_vec()),
                Some(b"3".to_vec())
            ],
        ]
    );
    raw.send(&[parse("", "SHOW application_name", &[]), bind("", vec![], vec![], vec![1]), execute(), sync()]);
    let msgs = raw.until_ready();
    assert_eq!(error_code(&msgs), None, "{msgs:?}");
    let shown = raw.query("SHOW application_name");
    assert_eq!(rows(&msgs), rows(&shown));
    raw.send(&[parse("", "SELECT pg_try_advisory_lock(7)", &[]), bind("", vec![], vec![], vec![1]), execute(), sync()]);
    assert_eq!(rows(&raw.until_ready()), vec![vec![Some(vec![1])]]);
    raw.send(&[
        parse("", "SELECT pg_advisory_unlock_all()", &[]),
        bind("", vec![], vec![], vec![1]),
        execute(),
        sync(),
    ]);
    let msgs = raw.until_ready();
    assert_eq!(error_code(&msgs), None, "{msgs:?}");
    assert_eq!(rows(&msgs), vec![vec![Some(Vec::new())]], "void is one value of no bytes, not NULL");
    // The call ran: the lock is released.
    let held = raw.query("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'");
    assert_eq!(rows(&held), vec![vec![Some(b"0".to_vec())]]);
}
