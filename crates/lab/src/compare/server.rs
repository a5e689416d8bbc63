//! The servers: a private PostgreSQL cluster with the benchmark settings
//! (`workloads/postgresql.conf`) per
//! `--pg-bin` (PostgreSQL 15, and PostgreSQL 18 when given), and
//! `turnstile serve` under `classic` and `scalable`. Each listens on a unix socket in its own directory under compare's
//! temporary root; clients connect as user `postgres`.

use super::cleanup::{self, Kind, Registered};
use super::client::{self, Conn};
use super::pgbin::{major_of, PgBin, PgClients, RunAs};
use crate::CliError;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The settings appended to each PostgreSQL cluster's `postgresql.conf`
/// (`workloads/postgresql.conf`): the benchmark settings the reproduced runs
/// used (2 GB of shared buffers, `max_locks_per_transaction = 1024`, no
/// checkpoint or autovacuum during a run, PostgreSQL 15's defaults for
/// everything else), and a unix socket only.
const POSTGRES_CONF: &str = include_str!("../../../../workloads/postgresql.conf");

/// The data directory's name inside a server's directory.
const DATA_DIR: &str = "data";

/// How long a server may take to accept connections.
const START_LIMIT: Duration = Duration::from_secs(120);

/// Which server. PostgreSQL servers are told apart by major version
/// (one per `--pg-bin`); the derived order is the report's: PostgreSQL by
/// version, then classic, then scalable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ServerId {
    /// PostgreSQL of this major version.
    Postgres(u32),
    /// `turnstile serve --profile classic`.
    Classic,
    /// `turnstile serve --profile scalable`.
    Scalable,
}

/// The major version of the PostgreSQL that `classic` must lock like
/// (the faithfulness table): PostgreSQL 15, before the write-ups' fixes.
pub const REFERENCE_MAJOR: u32 = 15;

/// That server.
pub const REFERENCE: ServerId = ServerId::Postgres(REFERENCE_MAJOR);

/// The JSON key that older readers know the reference by.
pub const REFERENCE_ALIAS: &str = "postgres";

impl ServerId {
    /// `pg15` / `pg18` / `classic` / `scalable` (the JSON keys).
    pub fn key(self) -> String {
        match self {
            ServerId::Postgres(major) => format!("pg{major}"),
            ServerId::Classic => "classic".into(),
            ServerId::Scalable => "scalable".into(),
        }
    }

    /// `PG15` in ratio names, `classic` and `scalable` as they are.
    pub fn short(self) -> String {
        match self {
            ServerId::Postgres(major) => format!("PG{major}"),
            other => other.key(),
        }
    }
}

/// What ran as one server of a run, for the reports.
#[derive(Clone, Debug)]
pub struct ServerInfo {
    /// Which one.
    pub id: ServerId,
    /// PostgreSQL: what `SHOW server_version` answered (`18.4`);
    /// turnstile: its package version.
    pub version: String,
    /// What ran (`…/bin/postgres`, `turnstile serve --profile …`).
    pub program: String,
}

impl ServerInfo {
    /// Row and column label: `PostgreSQL 18.4`, `classic`, `scalable`.
    pub fn label(&self) -> String {
        match self.id {
            ServerId::Postgres(_) => format!("PostgreSQL {}", self.version),
            other => other.key(),
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
    /// What it really is and its version.
    pub info: ServerInfo,
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
    /// Starts server `id` with its files under `root/<key>`: PostgreSQL of
    /// its major version from `pgs`, or `turnstile serve` (PostgreSQL 15
    /// in its place under `--stand-in`). `clients` probe it until it is up.
    pub fn start(
        id: ServerId,
        root: &Path,
        pgs: &[PgBin],
        clients: &PgClients,
        run_as: RunAs,
        turnstile: &TurnstileSpec,
        max_clients: usize,
    ) -> Result<Server, CliError> {
        let dir = root.join(id.key());
        std::fs::create_dir_all(&dir)?;
        let port = free_port()?;
        let pg_for = |major: u32| {
            pgs.iter().find(|p| p.major() == major).ok_or_else(|| format!("no --pg-bin holds PostgreSQL {major}"))
        };
        match id {
            ServerId::Postgres(major) => start_postgres(id, &dir, port, pg_for(major)?, clients, run_as),
            _ if turnstile.stand_in => start_postgres(id, &dir, port, pg_for(REFERENCE_MAJOR)?, clients, run_as),
            _ => start_turnstile(id, &dir, port, clients, turnstile, max_clients),
        }
    }

    /// Connection to database `db`.
    pub fn conn<'a>(&'a self, clients: &'a PgClients, db: &'a str) -> Conn<'a> {
        Conn { clients, socket_dir: &self.socket_dir, port: self.port, db }
    }

    /// The server's process id (`turnstile serve` is one process: its
    /// threads are the backends, so `/proc/<pid>/status` covers them all).
    pub fn pid(&mut self) -> u32 {
        self.process.child().id()
    }

    /// Its data directory (both kinds keep it in `data` beside the socket).
    pub fn data_dir(&self) -> PathBuf {
        self.socket_dir.join(DATA_DIR)
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
            return Err(format!("{} exited with {status} when stopped:\n{}", self.info.program, self.log_tail()).into());
        }
        Ok(())
    }
}

/// A port nobody listens on now (the kernel's pick).
fn free_port() -> Result<u16, CliError> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

fn start_postgres(
    id: ServerId,
    dir: &Path,
    port: u16,
    pg: &PgBin,
    clients: &PgClients,
    run_as: RunAs,
) -> Result<Server, CliError> {
    run_as.chown(dir)?;
    let data = dir.join(DATA_DIR);
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
    let info = ServerInfo { id, version: pg.version.clone(), program: pg.program("postgres").display().to_string() };
    let mut server = Server { id, socket_dir: dir.to_owned(), port, log, info, kind: Kind::Postmaster, process };
    wait_ready(&mut server, clients)?;
    // The label is what the server says it is, not what its directory suggests.
    let shown = server.conn(clients, "postgres").psql("SHOW server_version;\n", Duration::from_secs(60))?;
    let version = shown.split_whitespace().next().unwrap_or("").to_owned();
    if major_of(&version) != major_of(&pg.version) {
        return Err(format!(
            "{} reports server_version {:?}, but `postgres --version` said {}",
            server.info.program,
            shown.trim(),
            pg.version
        )
        .into());
    }
    server.info.version = version;
    Ok(server)
}

fn start_turnstile(
    id: ServerId,
    dir: &Path,
    port: u16,
    clients: &PgClients,
    spec: &TurnstileSpec,
    max_clients: usize,
) -> Result<Server, CliError> {
    let profile = id.key();
    let data = dir.join(DATA_DIR);
    let log = dir.join("server.log");
    let mut cmd = Command::new(&spec.exe);
    cmd.arg("serve")
        .arg("--data-dir")
        .arg(&data)
        .args(["--listen", "127.0.0.1", "--port", &port.to_string(), "--socket-dir"])
        .arg(dir)
        .args(["--profile", &profile]);
    // max_connections is lock.max_backends: room for the clients, psql and pgbench's probe.
    let config = crate::build_config(turnstile_sync::Profile::parse(&profile)?, None, &spec.set)?;
    let needed = max_clients as u32 + 8;
    if config.lock.max_backends < needed && !spec.set.iter().any(|s| s.starts_with("lock.max_backends=")) {
        cmd.args(["--set", &format!("lock.max_backends={needed}")]);
    }
    for s in &spec.set {
        cmd.args(["--set", s]);
    }
    cmd.current_dir(dir).stdin(Stdio::null()).stdout(File::create(&log)?).stderr(File::create(&log)?);
    let process = cleanup::spawn(&mut cmd, Kind::Turnstile)?;
    let info = ServerInfo {
        id,
        version: env!("CARGO_PKG_VERSION").to_owned(),
        program: format!("turnstile serve --profile {profile}"),
    };
    let mut server = Server { id, socket_dir: dir.to_owned(), port, log, info, kind: Kind::Turnstile, process };
    wait_ready(&mut server, clients)?;
    Ok(server)
}

/// Polls with `pg_isready` until the server accepts connections.
fn wait_ready(server: &mut Server, clients: &PgClients) -> Result<(), CliError> {
    let started = Instant::now();
    loop {
        if !server.alive() {
            return Err(format!("{} exited during start-up:\n{}", server.info.program, server.log_tail()).into());
        }
        let mut probe = Command::new(clients.program("pg_isready"));
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
                server.info.program,
                server.log_tail()
            )
            .into());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
