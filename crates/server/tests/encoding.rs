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

/// `client_encoding` LATIN1 and WIN1252: the query text is read in the
/// client's encoding and the values come back in it (psql sends and
/// prints raw bytes). (A character the encoding lacks, `22P05`, is the
/// server crate's unit test: turnstile has no literal that writes one
/// from ASCII text.)
#[test]
fn latin1_and_win1252_clients_are_converted() {
    use std::io::Write;
    if !common::have_tools(&["psql"]) {
        return;
    }
    for profile in [Profile::Classic, Profile::Scalable] {
        let srv = TestServer::start(profile, &[]);
        let mut child = std::process::Command::new("psql")
            .args(["-X", "-q", "-A", "-t", "-v", "VERBOSITY=verbose", "-h"])
            .arg(&srv.socket_dir)
            .args(["-p", &srv.port.to_string(), "-U", "postgres", "-d", "postgres"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run psql");
        let script: &[u8] = b"SET client_encoding = 'LATIN1';\nSELECT '\xe9' AS e, length('\xe9');\n\
            SET client_encoding = 'WIN1252';\nSELECT '\x80' AS e, length('\x80');\n";
        child.stdin.take().expect("stdin").write_all(script).expect("write the script");
        let out = child.wait_with_output().expect("psql ends");
        assert_eq!(out.stdout, b"\xe9|1\n\x80|1\n", "{profile:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}
