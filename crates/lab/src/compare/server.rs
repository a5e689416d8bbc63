//! The three servers: a private PostgreSQL cluster with the seeds'
//! settings, and `turnstile serve` under `classic` and `scalable`. Each
//! listens on a unix socket in its own directory under compare's
//! temporary root; clients connect as user `postgres`.

use super::cleanup::{self, Kind, Registered};
use super::client::{self, Conn};
use super::pgbin::{PgBin, RunAs};
use crate::CliError;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The seeds' server settings (`shared/pg15/postgresql.anchor.conf`), and
/// a unix socket only.
const POSTGRES_CONF: &str = "
# ---- turnstile compare: the seeds' settings ----
listen_addresses = ''                # unix socket only
max_connections = 100
shared_buffers = 2GB
max_locks_per_transaction = 1024     # W1 P=1000 locks ~3000 relations per query
max_wal_size = 16GB                  # no checkpoint during W4
min_wal_size = 1GB
checkpoint_timeout = 30min
autovacuum = off                     # stable read-only runs; setup ends with VACUUM ANALYZE
log_min_messages = warning
# fsync, synchronous_commit, jit, join_collapse_limit, plan_cache_mode, ...: PostgreSQL 15's defaults
";

/// How long a server may take to accept connections.
const START_LIMIT: Duration = Duration::from_secs(120);

/// Which server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ServerId {
    /// PostgreSQL 15.
    Postgres,
    /// `turnstile serve --profile classic`.
    Classic,
    /// `turnstile serve --profile scalable`.
    Scalable,
}

impl ServerId {
    /// The three, in report order.
    pub const ALL: [ServerId; 3] = [ServerId::Postgres, ServerId::Classic, ServerId::Scalable];

    /// `postgres` / `classic` / `scalable` (the JSON keys).
    pub fn name(self) -> &'static str {
        match self {
            ServerId::Postgres => "postgres",
            ServerId::Classic => "classic",
            ServerId::Scalable => "scalable",
        }
    }

    /// Row label in tables.
    pub fn label(self) -> &'static str {
        match self {
            ServerId::Postgres => "PostgreSQL 15",
            ServerId::Classic => "classic",
            ServerId::Scalable => "scalable",
        }
    }
}

/// A running server.
pub struct Server {
    /// Which one.
    pub id: ServerId,
    /// Where its unix socket is.
    pub socket_dir: PathBuf,
    /// Its port (names the socket `.s.PGSQL.<port>`).
    pub port: u16,
    /// Its log (stderr).
    pub log: PathBuf,
    /// What it really is (`postgres`, `turnstile serve --profile …`).
    pub program: String,
    kind: Kind,
    process: Registered,
}

/// How the turnstile servers are started.
#[derive(Clone, Debug)]
pub struct TurnstileSpec {
    /// The `turnstile` executable.
    pub exe: PathBuf,
    /// `--set k=v` for both profiles.
    pub set: Vec<String>,
    /// Start PostgreSQL in their place (development only, while `serve`
    /// is being built; reports say so on every table).
    pub stand_in: bool,
}

impl Server {
    /// Starts server `id` with its files under `root/<name>`.
    pub fn start(
        id: ServerId,
        root: &Path,
        pg: &PgBin,
        run_as: RunAs,
        turnstile: &TurnstileSpec,
        max_clients: usize,
    ) -> Result<Server, CliError> {
        let dir = root.join(id.name());
        std::fs::create_dir_all(&dir)?;
        let port = free_port()?;
        if id == ServerId::Postgres || turnstile.stand_in {
            start_postgres(id, &dir, port, pg, run_as)
        } else {
            start_turnstile(id, &dir, port, pg, turnstile, max_clients)
        }
    }

    /// Connection to database `db`.
    pub fn conn<'a>(&'a self, pg: &'a PgBin, db: &'a str) -> Conn<'a> {
        Conn { pg, socket_dir: &self.socket_dir, port: self.port, db }
    }

    /// Whether the process still runs.
    pub fn alive(&mut self) -> bool {
        matches!(self.process.child().try_wait(), Ok(None))
    }

    /// The end of its log, for error messages.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(12)..].join("\n")
    }

    /// Stops it: PostgreSQL with a fast shutdown (SIGINT), turnstile with
    /// SIGTERM; SIGKILL after 60 s.
    pub fn stop(mut self) -> Result<(), CliError> {
        let sig = match self.kind {
            Kind::Postmaster => libc::SIGINT,
            _ => libc::SIGTERM,
        };
        let status = self.process.stop_with(sig, Duration::from_secs(60))?;
        if !status.success() {
            return Err(format!("{} exited with {status} when stopped:\n{}", self.program, self.log_tail()).into());
        }
        Ok(())
    }
}

/// A port nobody listens on now (the kernel's pick).
fn free_port() -> Result<u16, CliError> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

fn start_postgres(id: ServerId, dir: &Path, port: u16, pg: &PgBin, run_as: RunAs) -> Result<Server, CliError> {
    run_as.chown(dir)?;
    let data = dir.join("data");
    let log = dir.join("server.log");
    let mut initdb = Command::new(pg.program("initdb"));
    initdb
        .args(["-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync", "-D"])
        .arg(&data)
        .current_dir(dir);
    run_as.apply(&mut initdb);
    client::run_to_end(&mut initdb, dir, "initdb", Duration::from_secs(300))?;
    let conf = data.join("postgresql.conf");
    let mut text = std::fs::read_to_string(&conf)?;
    text.push_str(POSTGRES_CONF);
    text.push_str(&format!("port = {port}\nunix_socket_directories = '{}'\n", dir.display()));
    std::fs::write(&conf, text)?;
    let mut cmd = Command::new(pg.program("postgres"));
    cmd.arg("-D")
        .arg(&data)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(File::create(&log)?)
        .stderr(File::create(&log)?);
    run_as.apply(&mut cmd);
    let process = cleanup::spawn(&mut cmd, Kind::Postmaster)?;
    let program = pg.program("postgres").display().to_string();
    let mut server = Server { id, socket_dir: dir.to_owned(), port, log, program, kind: Kind::Postmaster, process };
    wait_ready(&mut server, pg)?;
    Ok(server)
}

fn start_turnstile(
    id: ServerId,
    dir: &Path,
    port: u16,
    pg: &PgBin,
    spec: &TurnstileSpec,
    max_clients: usize,
) -> Result<Server, CliError> {
    let profile = id.name();
    let data = dir.join("data");
    let log = dir.join("server.log");
    let mut cmd = Command::new(&spec.exe);
    cmd.arg("serve")
        .arg("--data-dir")
        .arg(&data)
        .args(["--listen", "127.0.0.1", "--port", &port.to_string(), "--socket-dir"])
        .arg(dir)
        .args(["--profile", profile]);
    // max_connections is lock.max_backends: room for the clients, psql and pgbench's probe.
    let config = crate::build_config(turnstile_sync::Profile::parse(profile)?, None, &spec.set)?;
    let needed = max_clients as u32 + 8;
    if config.lock.max_backends < needed && !spec.set.iter().any(|s| s.starts_with("lock.max_backends=")) {
        cmd.args(["--set", &format!("lock.max_backends={needed}")]);
    }
    for s in &spec.set {
        cmd.args(["--set", s]);
    }
    cmd.current_dir(dir).stdin(Stdio::null()).stdout(File::create(&log)?).stderr(File::create(&log)?);
    let process = cleanup::spawn(&mut cmd, Kind::Turnstile)?;
    let program = format!("turnstile serve --profile {profile}");
    let mut server = Server { id, socket_dir: dir.to_owned(), port, log, program, kind: Kind::Turnstile, process };
    wait_ready(&mut server, pg)?;
    Ok(server)
}

/// Polls with `pg_isready` until the server accepts connections.
fn wait_ready(server: &mut Server, pg: &PgBin) -> Result<(), CliError> {
    let started = Instant::now();
    loop {
        if !server.alive() {
            return Err(format!("{} exited during start-up:\n{}", server.program, server.log_tail()).into());
        }
        let mut probe = Command::new(pg.program("pg_isready"));
        probe.args(["-q", "-h"]).arg(&server.socket_dir).args([
            "-p",
            &server.port.to_string(),
            "-U",
            "postgres",
            "-d",
            "postgres",
            "-t",
            "2",
        ]);
        if client::run_status(&mut probe, Duration::from_secs(10))? {
            return Ok(());
        }
        if started.elapsed() > START_LIMIT {
            return Err(format!(
                "{} did not accept connections within {START_LIMIT:?}:\n{}",
                server.program,
                server.log_tail()
            )
            .into());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
