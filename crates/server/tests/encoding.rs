//! Query text that is not UTF-8 is refused with PostgreSQL's `22021`, and
//! the connection goes on.

mod common;

use common::{error_code, ready_status, TestServer};
use turnstile_sync::config::Profile;

/// A `Query` message carrying `sql` as raw bytes.
fn query_bytes(sql: &[u8]) -> Vec<u8> {
    let mut m = vec![b'Q'];
    m.extend_from_slice(&((4 + sql.len() + 1) as i32).to_be_bytes());
    m.extend_from_slice(sql);
    m.push(0);
    m
}

#[test]
fn invalid_utf8_in_a_query_is_22021_and_the_session_goes_on() {
    let srv = TestServer::start(Profile::Scalable, &[]);
    let mut raw = srv.raw("postgres");
    raw.send_bytes(&query_bytes(b"SELECT 'a\xffb'"));
    let msgs = raw.until_ready();
    assert_eq!(error_code(&msgs).as_deref(), Some("22021"), "{msgs:?}");
    assert_eq!(ready_status(&msgs), Some(b'I'));
    let msgs = raw.query("SELECT 'a\u{fffd}b'");
    assert_eq!(error_code(&msgs), None, "a real U+FFFD is valid text: {msgs:?}");
}
