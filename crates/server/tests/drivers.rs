//! The driver suite (`tests/drivers/`, run by `scripts/driver-suite`):
//! psycopg 3, asyncpg and SQLAlchemy 2's ORM (Python) and node-postgres (Node), each with its
//! default settings, against the server under both profiles and against the
//! real PostgreSQL 15, so that an assertion PostgreSQL fails is caught as a
//! bug of the suite. The drivers are installed by `scripts/install-drivers`
//! (`.ci/run` and `scripts/test` do it); without them the tests are
//! skipped, loudly, or fail where tools are required
//! (`common::missing_tool`: `CI=true` or `TURNSTILE_REQUIRE_TOOLS=1`).

mod common;

use common::{missing_tool, TestServer};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use turnstile_sync::config::Profile;

/// The whole suite's wall-clock limit; each driver program has its own
/// (`scripts/driver-suite --timeout`), so this only catches a stuck runner.
const SUITE_TIMEOUT: Duration = Duration::from_secs(12 * 60);

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The drivers' folder, or `None` when they are not installed (after
/// [`missing_tool`], which fails the test where tools are required).
fn drivers() -> Option<PathBuf> {
    let dir = std::env::var_os("TURNSTILE_DRIVERS").map(PathBuf::from).unwrap_or_else(|| root().join("target/drivers"));
    let installed = dir.join("venv/bin/python").exists() && dir.join("node/node_modules/pg").is_dir();
    if !installed {
        let what = format!("the driver suite's drivers are not installed in {}", dir.display());
        missing_tool(&what, "run scripts/install-drivers (scripts/test and .ci/run do it)");
        return None;
    }
    Some(dir)
}

/// Runs `scripts/driver-suite` with `args`; panics with its output unless every check passed.
fn run_suite(drivers: &Path, args: &[&str], against: &str) {
    let mut child = Command::new("python3")
        .arg(root().join("scripts/driver-suite"))
        .arg("--drivers")
        .arg(drivers)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run scripts/driver-suite");
    let mut stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for scripts/driver-suite") {
            break Some(status);
        }
        if start.elapsed() > SUITE_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let out = reader.join().unwrap_or_default();
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    println!("{out}");
    let Some(status) = status else {
        panic!("the driver suite against {against} hung: no verdict within {SUITE_TIMEOUT:?}, killed\n{out}\n{err}");
    };
    assert!(status.success(), "the driver suite failed against {against} ({status}):\n{out}\n{err}");
}

fn against_turnstile(profile: Profile, name: &str) {
    let Some(drivers) = drivers() else { return };
    let srv = TestServer::start(profile, &[]);
    let socket_dir = srv.socket_dir.to_str().expect("utf-8 socket path").to_owned();
    let label = format!("turnstile serve --profile {name}");
    run_suite(&drivers, &["--port", &srv.port.to_string(), "--socket-dir", &socket_dir, "--label", &label], &label);
}

#[test]
fn drivers_against_turnstile_scalable() {
    against_turnstile(Profile::Scalable, "scalable");
}

#[test]
fn drivers_against_turnstile_classic() {
    against_turnstile(Profile::Classic, "classic");
}

/// The same suite against PostgreSQL 15: every assertion holds there.
#[test]
fn drivers_against_postgresql_15() {
    let Some(drivers) = drivers() else { return };
    let bin = std::env::var("TURNSTILE_PG15_BIN").unwrap_or_else(|_| "/usr/lib/postgresql/15/bin".into());
    if !Path::new(&bin).join("initdb").exists() {
        missing_tool(&format!("PostgreSQL 15 is not installed in {bin}"), "apt-get install postgresql-15");
        return;
    }
    run_suite(&drivers, &["--pg-bin", &bin], "PostgreSQL 15");
}
