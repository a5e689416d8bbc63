//! Shared by the server's integration tests: a server started in-process on
//! a fresh data directory (TCP on a free port, plus a unix socket), the real
//! PostgreSQL 15 clients, and a raw protocol client built on pgwire's codec.
#![allow(dead_code)]

pub mod pg15;

use bytes::BytesMut;
use pgwire::messages::response::ReadyForQuery;
use pgwire::messages::startup::Startup;
use pgwire::messages::{DecodeContext, Message, PgWireBackendMessage, PgWireFrontendMessage, ProtocolVersion};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::Duration;
use turnstile_server::{Server, ServerOptions};
use turnstile_sql::SqlEngine;
use turnstile_sync::config::{Config, Profile};

/// A server on a temporary data directory.
pub struct TestServer {
    pub server: Option<Server>,
    pub port: u16,
    pub socket_dir: PathBuf,
    config: Config,
    _dir: tempfile::TempDir,
}

impl TestServer {
    /// Starts a server under `profile` with `--set` style overrides.
    pub fn start(profile: Profile, sets: &[&str]) -> TestServer {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut config = Config::preset(profile);
        for s in sets {
            config.apply_override(s).expect("override");
        }
        let socket_dir = dir.path().to_path_buf();
        let server = Self::open(&socket_dir, config.clone(), 0);
        let port = server.port().expect("port");
        TestServer { server: Some(server), port, socket_dir, config, _dir: dir }
    }

    fn open(dir: &std::path::Path, config: Config, port: u16) -> Server {
        let engine = SqlEngine::open(&dir.join("data"), config).expect("open engine");
        let options = ServerOptions { listen: "127.0.0.1".into(), port, socket_dir: Some(dir.to_path_buf()) };
        Server::start(engine, &options).expect("start server")
    }

    /// Stops the server as SIGTERM does (`Server::shutdown`) and starts it
    /// again on the same data directory and port.
    pub fn restart(&mut self) {
        if let Some(s) = self.server.take() {
            s.shutdown().expect("clean shutdown");
        }
        self.server = Some(Self::open(&self.socket_dir, self.config.clone(), self.port));
    }

    pub fn server(&self) -> &Server {
        self.server.as_ref().expect("running")
    }

    /// `psql` on the unix socket, one `-c` per statement, unaligned tuples only,
    /// stopping at the first error.
    pub fn psql(&self, db: &str, statements: &[&str]) -> Output {
        let mut cmd = Command::new("psql");
        cmd.args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-v", "VERBOSITY=verbose"])
            .arg("-h")
            .arg(&self.socket_dir)
            .args(["-p", &self.port.to_string(), "-U", "postgres", "-d", db]);
        for s in statements {
            cmd.args(["-c", s]);
        }
        cmd.output().expect("run psql")
    }

    /// `psql` that must succeed; its stdout.
    pub fn psql_ok(&self, db: &str, statements: &[&str]) -> String {
        let out = self.psql(db, statements);
        assert!(out.status.success(), "psql {statements:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `pgbench` on the unix socket.
    pub fn pgbench(&self, db: &str, args: &[&str]) -> Output {
        Command::new("pgbench")
            .arg("-h")
            .arg(&self.socket_dir)
            .args(["-p", &self.port.to_string(), "-U", "postgres"])
            .args(args)
            .arg(db)
            .output()
            .expect("run pgbench")
    }

    /// A raw protocol client on TCP, after startup (ReadyForQuery read).
    pub fn raw(&self, database: &str) -> Raw {
        let mut raw = Raw::connect(self.port);
        raw.startup(database);
        let msgs = raw.until_ready();
        assert!(msgs.iter().any(|m| matches!(m, PgWireBackendMessage::ReadyForQuery(_))), "startup failed: {msgs:?}");
        raw
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(s) = self.server.take() {
            s.shutdown().expect("clean shutdown");
        }
    }
}

/// How to get PostgreSQL 15's client programs (`psql`; `pgbench` comes with the server package).
pub const PG15_CLIENTS_INSTALL: &str =
    "apt-get install postgresql-15 postgresql-client-15, or run scripts/test, which installs what the tests need";

/// True when every tool runs (`tool --version`); otherwise [`missing_tool`]
/// decides, for the first one missing, whether the test skips or fails.
pub fn have_tools(tools: &[&str]) -> bool {
    for t in tools {
        let found = Command::new(t).arg("--version").output().map(|o| o.status.success()).unwrap_or(false);
        if !found {
            missing_tool(&format!("`{t}` is not on PATH"), PG15_CLIENTS_INSTALL);
            return false;
        }
    }
    true
}

/// The one rule for a test whose tool is missing (`what` names it, `install`
/// says how to get it): it **fails** when the tools are required, under CI
/// (`CI=true`) or with `TURNSTILE_REQUIRE_TOOLS=1` (`scripts/test` and
/// `.ci/run` set it), so that a machine without them cannot pass the suite
/// without running it; otherwise it prints that it skips, and the caller
/// returns.
pub fn missing_tool(what: &str, install: &str) {
    if let Some(why) = tools_required() {
        panic!("a required tool is missing: {what} ({why}): {install}");
    }
    eprintln!("\n*** SKIPPED: {what} ({install}; TURNSTILE_REQUIRE_TOOLS=1 makes this a failure) ***\n");
}

/// Why missing tools are failures (`TURNSTILE_REQUIRE_TOOLS=1` or
/// `CI=true`), or `None` when a test may skip.
pub fn tools_required() -> Option<&'static str> {
    if std::env::var("TURNSTILE_REQUIRE_TOOLS").is_ok_and(|v| v == "1") {
        Some("TURNSTILE_REQUIRE_TOOLS=1")
    } else if std::env::var("CI").is_ok_and(|v| v == "true") {
        Some("CI=true")
    } else {
        None
    }
}

/// A protocol client speaking raw messages through pgwire's codec.
pub struct Raw {
    pub stream: TcpStream,
    buf: BytesMut,
    ctx: DecodeContext,
    /// BackendKeyData: (pid, secret), after startup.
    pub key: Option<(i32, i32)>,
}

impl Raw {
    pub fn connect(port: u16) -> Raw {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut ctx = DecodeContext::new(ProtocolVersion::PROTOCOL3_0);
        ctx.awaiting_frontend_ssl = false;
        ctx.awaiting_frontend_startup = false;
        Raw { stream, buf: BytesMut::new(), ctx, key: None }
    }

    pub fn startup(&mut self, database: &str) {
        let mut s = Startup::new();
        s.parameters.insert("user".into(), "postgres".into());
        s.parameters.insert("database".into(), database.into());
        let mut b = BytesMut::new();
        s.encode(&mut b).unwrap();
        self.stream.write_all(&b).unwrap();
    }

    /// Sends frontend messages in one write.
    pub fn send(&mut self, msgs: &[PgWireFrontendMessage]) {
        let mut b = BytesMut::new();
        for m in msgs {
            m.encode(&mut b).unwrap();
        }
        self.stream.write_all(&b).unwrap();
    }

    pub fn send_bytes(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).unwrap();
    }

    /// The next backend message, or `None` when the server closed the connection.
    pub fn recv(&mut self) -> Option<PgWireBackendMessage> {
        loop {
            if let Some(m) = PgWireBackendMessage::decode(&mut self.buf, &self.ctx).expect("backend message decodes") {
                return Some(m);
            }
            let mut chunk = [0u8; 8192];
            match self.stream.read(&mut chunk) {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
            }
        }
    }

    /// Messages up to and including ReadyForQuery (or up to the connection's end).
    pub fn until_ready(&mut self) -> Vec<PgWireBackendMessage> {
        let mut v = Vec::new();
        while let Some(m) = self.recv() {
            if let PgWireBackendMessage::BackendKeyData(k) = &m {
                self.key = k.secret_key.as_i32().map(|s| (k.pid, s));
            }
            let done = matches!(m, PgWireBackendMessage::ReadyForQuery(_));
            v.push(m);
            if done {
                break;
            }
        }
        v
    }

    /// Runs a simple query; returns the messages up to ReadyForQuery.
    pub fn query(&mut self, sql: &str) -> Vec<PgWireBackendMessage> {
        self.send(&[PgWireFrontendMessage::Query(pgwire::messages::simplequery::Query::new(sql.into()))]);
        self.until_ready()
    }
}

/// Sends a CancelRequest for `key` on a new connection.
pub fn cancel(port: u16, key: (i32, i32)) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let mut b = Vec::with_capacity(16);
    b.extend_from_slice(&16i32.to_be_bytes());
    b.extend_from_slice(&80877102i32.to_be_bytes());
    b.extend_from_slice(&key.0.to_be_bytes());
    b.extend_from_slice(&key.1.to_be_bytes());
    s.write_all(&b).expect("send cancel");
    // The server closes the connection once the request is handled.
    let mut sink = Vec::new();
    let _ = s.read_to_end(&mut sink);
}

/// The SQLSTATE of the first ErrorResponse among `msgs`.
pub fn error_code(msgs: &[PgWireBackendMessage]) -> Option<String> {
    msgs.iter().find_map(|m| match m {
        PgWireBackendMessage::ErrorResponse(e) => e.fields.iter().find(|(k, _)| *k == b'C').map(|(_, v)| v.clone()),
        _ => None,
    })
}

/// The transaction status of the last ReadyForQuery among `msgs`.
pub fn ready_status(msgs: &[PgWireBackendMessage]) -> Option<u8> {
    msgs.iter().rev().find_map(|m| match m {
        PgWireBackendMessage::ReadyForQuery(ReadyForQuery { status, .. }) => Some(*status as u8),
        _ => None,
    })
}
