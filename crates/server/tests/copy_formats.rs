//! COPY's text and CSV options and its binary format, through the protocol.
//! Expected bytes are what PostgreSQL 15 sends for the same statements.

mod common;

use common::{error_code, TestServer};
use pgwire::messages::copy::{CopyData, CopyDone};
use pgwire::messages::simplequery::Query;
use pgwire::messages::PgWireBackendMessage as B;
use pgwire::messages::PgWireFrontendMessage as F;
use turnstile_sync::config::Profile;

fn copy_out(raw: &mut common::Raw, sql: &str) -> (Vec<u8>, Vec<B>) {
    let msgs = raw.query(sql);
    let data = msgs
        .iter()
        .filter_map(|m| match m {
            B::CopyData(d) => Some(d.data.to_vec()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .concat();
    (data, msgs)
}

fn copy_in(raw: &mut common::Raw, sql: &str, data: &[u8]) -> Vec<B> {
    raw.send(&[F::Query(Query::new(sql.into()))]);
    match raw.recv() {
        Some(B::CopyInResponse(_)) => {}
        other => panic!("expected CopyInResponse, got {other:?}"),
    }
    // Split the data in two chunks to cross a record boundary.
    let mid = data.len() / 2;
    raw.send(&[
        F::CopyData(CopyData::new(data[..mid].to_vec().into())),
        F::CopyData(CopyData::new(data[mid..].to_vec().into())),
        F::CopyDone(CopyDone::new()),
    ]);
    raw.until_ready()
}

#[test]
fn text_and_csv_options_as_postgresql() {
    let srv = TestServer::start(Profile::Scalable, &[]);
    let mut raw = srv.raw("postgres");
    raw.query("CREATE TABLE cp (id int PRIMARY KEY, name text, flag boolean)");
    // psycopg2's copy_from: the old syntax.
    let msgs =
        copy_in(&mut raw, "COPY cp FROM STDIN WITH DELIMITER AS '|' NULL AS 'x'", b"1|one|t\n2|x|f\n3|a\\|b|x\n");
    assert_eq!(error_code(&msgs), None, "{msgs:?}");
    let (out, _) = copy_out(&mut raw, "COPY cp TO STDOUT WITH (FORMAT csv, HEADER true)");
    assert_eq!(String::from_utf8(out).unwrap(), "id,name,flag\n1,one,t\n2,,f\n3,a|b,\n");
    let (out, _) = copy_out(&mut raw, "COPY cp TO STDOUT WITH (FORMAT csv, DELIMITER ';', QUOTE '''', NULL 'NUL')");
    assert_eq!(String::from_utf8(out).unwrap(), "1;one;t\n2;NUL;f\n3;a|b;NUL\n");
    let csv = b"id,name,flag\n4,\"multi\nline\",t\n5,\"\",f\n6,,t\n7,\"say \"\"hi\"\"\",f\n";
    let msgs = copy_in(&mut raw, "COPY cp FROM STDIN WITH (FORMAT csv, HEADER)", csv);
    assert_eq!(error_code(&msgs), None, "{msgs:?}");
    let (out, _) = copy_out(&mut raw, "COPY (SELECT * FROM cp WHERE id >= 4) TO STDOUT (FORMAT csv, ESCAPE '\\')");
    assert_eq!(String::from_utf8(out).unwrap(), "4,\"multi\nline\",t\n5,\"\",f\n6,,t\n7,\"say \\\"hi\\\"\",f\n");
    // A quoted empty string is a value, an unquoted one NULL.
    let (out, _) = copy_out(&mut raw, "COPY (SELECT id FROM cp WHERE name IS NULL) TO STDOUT");
    assert_eq!(String::from_utf8(out).unwrap(), "2\n6\n");
    // psycopg2's copy_from with a header line it did not ask to skip.
    let msgs = copy_in(&mut raw, "COPY cp FROM STDIN WITH CSV HEADER DELIMITER ','", b"id,name,flag\n9|nine|t\n");
    assert_eq!(error_code(&msgs).as_deref(), Some("22P04"), "{msgs:?}");
    let message = msgs.iter().find_map(|m| match m {
        B::ErrorResponse(e) => e.fields.iter().find(|(k, _)| *k == b'M').map(|(_, v)| v.clone()),
        _ => None,
    });
    assert_eq!(message.as_deref(), Some("missing data for column \"name\" (COPY cp, line 2)"));
    for (sql, code) in [
        ("COPY cp TO STDOUT (FORMAT binary, DELIMITER ',')", "42601"),
        ("COPY cp TO STDOUT (FORMAT text, QUOTE '\"')", "0A000"),
        ("COPY cp TO STDOUT (FORMAT bogus)", "22023"),
        ("COPY cp TO STDOUT (DELIMITER '||')", "0A000"),
        ("COPY cp TO STDOUT (DELIMITER ',', DELIMITER ';')", "42601"),
    ] {
        assert_eq!(error_code(&raw.query(sql)).as_deref(), Some(code), "{sql}");
    }
}

/// `COPY cp TO STDOUT (FORMAT binary)` of rows (1, 'one', true) and
/// (2, NULL, false), as PostgreSQL 15 writes it.
const PG_BINARY: &str = "5047434f50590aff0d0a0000000000000000000003000000040000000100\
    0000036f6e65000000010100030000000400000002ffffffff0000000100ffff";

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

#[test]
fn binary_copy_both_ways_matches_postgresql() {
    let srv = TestServer::start(Profile::Scalable, &[]);
    let mut raw = srv.raw("postgres");
    raw.query("CREATE TABLE cb (id int PRIMARY KEY, name text, flag boolean)");
    let msgs = copy_in(&mut raw, "COPY cb FROM STDIN (FORMAT binary)", &hex(PG_BINARY));
    assert_eq!(error_code(&msgs), None, "{msgs:?}");
    let (out, msgs) = copy_out(&mut raw, "COPY cb TO STDOUT (FORMAT binary)");
    assert!(
        msgs.iter().any(|m| matches!(m, B::CopyOutResponse(r) if r.format == 1 && r.column_formats == vec![1, 1, 1])),
        "{msgs:?}"
    );
    assert_eq!(out, hex(PG_BINARY));
    // As PostgreSQL: the file header travels with the first tuple, the
    // trailer alone.
    let sizes: Vec<usize> = msgs
        .iter()
        .filter_map(|m| match m {
            B::CopyData(d) => Some(d.data.len()),
            _ => None,
        })
        .collect();
    assert_eq!(sizes, vec![19 + 22, 19, 2]);
    // A wrong signature and a wrong field count are 22P04.
    let msgs = copy_in(&mut raw, "COPY cb FROM STDIN (FORMAT binary)", b"PGCOPY\nXX\r\n\0\0\0\0\0\0\0\0\0");
    assert_eq!(error_code(&msgs).as_deref(), Some("22P04"), "{msgs:?}");
    let mut short = hex(&PG_BINARY[..38]);
    short.extend_from_slice(&[0, 1, 0, 0, 0, 4, 0, 0, 0, 9, 0xff, 0xff]);
    let msgs = copy_in(&mut raw, "COPY cb FROM STDIN (FORMAT binary)", &short);
    assert_eq!(error_code(&msgs).as_deref(), Some("22P04"), "{msgs:?}");
}
