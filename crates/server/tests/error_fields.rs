//! ErrorResponse fields beyond the code and message, as PostgreSQL 15 sets
//! them for constraint violations (expected values recorded from
//! PostgreSQL 15 with `\set VERBOSITY verbose`).

mod common;

use common::TestServer;
use pgwire::messages::PgWireBackendMessage as B;
use turnstile_sync::config::Profile;

/// The fields of the first ErrorResponse, as (code, value) pairs.
fn error_fields(msgs: &[B]) -> Vec<(char, String)> {
    msgs.iter()
        .find_map(|m| match m {
            B::ErrorResponse(e) => Some(e.fields.iter().map(|(k, v)| (*k as char, v.clone())).collect()),
            _ => None,
        })
        .unwrap_or_default()
}

fn field(fields: &[(char, String)], key: char) -> Option<&str> {
    fields.iter().find(|(k, _)| *k == key).map(|(_, v)| v.as_str())
}

#[test]
fn unique_violation_names_constraint_table_and_key() {
    let srv = TestServer::start(Profile::Scalable, &[]);
    let mut raw = srv.raw("postgres");
    raw.query("CREATE TABLE ef (id int PRIMARY KEY, name text)");
    raw.query("INSERT INTO ef VALUES (1, 'a')");
    let f = error_fields(&raw.query("INSERT INTO ef VALUES (1, 'b')"));
    assert_eq!(field(&f, 'C'), Some("23505"), "{f:?}");
    assert_eq!(field(&f, 'M'), Some("duplicate key value violates unique constraint \"ef_pkey\""));
    assert_eq!(field(&f, 'D'), Some("Key (id)=(1) already exists."));
    assert_eq!(field(&f, 's'), Some("public"));
    assert_eq!(field(&f, 't'), Some("ef"));
    assert_eq!(field(&f, 'n'), Some("ef_pkey"));
    assert_eq!(field(&f, 'c'), None);

    raw.query("CREATE TABLE ef2 (a int, b text, PRIMARY KEY (a, b))");
    raw.query("INSERT INTO ef2 VALUES (1, 'it''s')");
    let f = error_fields(&raw.query("INSERT INTO ef2 VALUES (1, 'it''s')"));
    assert_eq!(field(&f, 'D'), Some("Key (a, b)=(1, it's) already exists."), "{f:?}");
    assert_eq!(field(&f, 'n'), Some("ef2_pkey"));
    assert_eq!(field(&f, 't'), Some("ef2"));
}

#[test]
fn not_null_violation_names_table_and_column() {
    let srv = TestServer::start(Profile::Scalable, &[]);
    let mut raw = srv.raw("postgres");
    raw.query("CREATE TABLE nn (id int PRIMARY KEY, name text)");
    let f = error_fields(&raw.query("INSERT INTO nn VALUES (NULL, 'x')"));
    assert_eq!(field(&f, 'C'), Some("23502"), "{f:?}");
    assert_eq!(field(&f, 'M'), Some("null value in column \"id\" of relation \"nn\" violates not-null constraint"));
    assert_eq!(field(&f, 's'), Some("public"));
    assert_eq!(field(&f, 't'), Some("nn"));
    assert_eq!(field(&f, 'c'), Some("id"));
}
