//! `turnstile serve` as a process: one line saying where it listens, a clean
//! stop on SIGTERM and SIGINT, and the data flushed on the way out (a
//! restarted server sees it); SIGTERM in the middle of pgbench's tpcb-like
//! run keeps every acknowledged transaction and none of the half-done ones.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn start(data: &std::path::Path, sock: &std::path::Path, port: u16) -> Child {
    start_as(data, sock, port, "classic")
}

fn start_as(data: &std::path::Path, sock: &std::path::Path, port: u16, profile: &str) -> Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_turnstile"))
        .args(["serve", "--listen", "127.0.0.1", "--port", &port.to_string(), "--profile", profile])
        .arg("--data-dir")
        .arg(data)
        .arg("--socket-dir")
        .arg(sock)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn turnstile serve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert!(line.contains(&format!("127.0.0.1:{port}")) && line.contains(".s.PGSQL."), "{line}");
    child
}

fn stop(mut child: Child, signal: &str) {
    let ok = Command::new("kill").args([signal, &child.id().to_string()]).status().unwrap().success();
    assert!(ok, "kill {signal}");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            assert!(status.success(), "exit {status:?}: {err}");
            assert!(err.contains("stopping"), "{err}");
            return;
        }
        assert!(Instant::now() < deadline, "server did not stop on {signal}");
        // Polled: the child is another process.
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn psql(sock: &std::path::Path, port: u16, sql: &str) -> String {
    let out = Command::new("psql")
        .args([
            "-X",
            "-q",
            "-A",
            "-t",
            "-v",
            "ON_ERROR_STOP=1",
            "-U",
            "postgres",
            "-d",
            "postgres",
            "-p",
            &port.to_string(),
        ])
        .arg("-h")
        .arg(sock)
        .args(["-c", sql])
        .output()
        .expect("run psql");
    assert!(out.status.success(), "{sql}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn serve_stops_cleanly_on_signals_and_flushes() {
    let have_psql = have("psql");
    let dir = tempfile::tempdir().unwrap();
    let (data, sock) = (dir.path().join("data"), dir.path().to_path_buf());
    let port = 20000 + (std::process::id() % 20000) as u16;
    let server = start(&data, &sock, port);
    if have_psql {
        psql(&sock, port, "CREATE TABLE kept (a int)");
        psql(&sock, port, "INSERT INTO kept VALUES (1), (2), (3)");
    } else {
        eprintln!("SKIPPED (partly): only the signal handling is checked");
    }
    stop(server, "-TERM");
    assert!(!sock.join(format!(".s.PGSQL.{port}")).exists(), "the unix socket is removed");
    let server = start(&data, &sock, port);
    if have_psql {
        assert_eq!(psql(&sock, port, "SELECT count(*) FROM kept"), "3", "flushed before exit");
    }
    stop(server, "-INT");
}

/// Whether `tool` runs. When it does not, the rule of the server's tests
/// (`missing_tool` in `crates/server/tests/common/mod.rs`, which this
/// crate cannot share): the test fails under `CI=true` or with
/// `TURNSTILE_REQUIRE_TOOLS=1`, and otherwise says that it skips.
fn have(tool: &str) -> bool {
    if Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success()) {
        return true;
    }
    let install = "apt-get install postgresql-15 postgresql-client-15, or run scripts/test";
    let require = std::env::var("TURNSTILE_REQUIRE_TOOLS").is_ok_and(|v| v == "1");
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    assert!(
        !require && !ci,
        "a required tool is missing: `{tool}` is not on PATH (TURNSTILE_REQUIRE_TOOLS=1 or CI=true): {install}"
    );
    eprintln!("SKIPPED: `{tool}` is not on PATH ({install}; TURNSTILE_REQUIRE_TOOLS=1 makes this a failure)");
    false
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn sigterm_during_tpcb_like_keeps_the_balances_consistent() {
    if !have("psql") || !have("pgbench") {
        return;
    }
    for profile in ["classic", "scalable"] {
        let dir = tempfile::tempdir().unwrap();
        let (data, sock, port) = (dir.path().join("data"), dir.path().to_path_buf(), free_port());
        let server = start_as(&data, &sock, port, profile);
        let pgbench = |args: &[&str]| {
            let mut c = Command::new("pgbench");
            c.args(["-U", "postgres", "-p", &port.to_string()]).arg("-h").arg(&sock).args(args).arg("postgres");
            c
        };
        let init = pgbench(&["-i", "-q", "-s", "1"]).output().unwrap();
        assert!(init.status.success(), "{}", String::from_utf8_lossy(&init.stderr));
        let run = pgbench(&["-c", "16", "-j", "2", "-T", "20"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn();
        let run = run.unwrap();
        // Mid-run: wait until transactions are being committed.
        let deadline = Instant::now() + Duration::from_secs(30);
        while psql(&sock, port, "SELECT count(*) FROM pgbench_history").parse::<u64>().unwrap() < 200 {
            assert!(Instant::now() < deadline, "{profile}: pgbench commits nothing");
            // Polled: pgbench is another process.
            std::thread::sleep(Duration::from_millis(50));
        }
        stop(server, "-TERM");
        let out = run.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let acknowledged: u64 = text
            .lines()
            .find_map(|l| l.strip_prefix("number of transactions actually processed: "))
            .and_then(|n| n.split_whitespace().next()?.parse().ok())
            .unwrap_or_else(|| panic!("{profile}: pgbench printed no count: {text}"));
        let server = start_as(&data, &sock, port, profile);
        let sum = |t: &str, c: &str| psql(&sock, port, &format!("SELECT coalesce(sum({c}), 0) FROM {t}"));
        let sums = [
            sum("pgbench_accounts", "abalance"),
            sum("pgbench_branches", "bbalance"),
            sum("pgbench_tellers", "tbalance"),
            sum("pgbench_history", "delta"),
        ];
        assert!(sums.iter().all(|s| *s == sums[0]), "{profile}: sums disagree after the restart: {sums:?}");
        let history: u64 = psql(&sock, port, "SELECT count(*) FROM pgbench_history").parse().unwrap();
        assert!(history >= acknowledged, "{profile}: {history} history rows, {acknowledged} acknowledged");
        assert_eq!(psql(&sock, port, "SELECT count(*) FROM pgbench_accounts"), "100000");
        eprintln!(
            "{profile}: SIGTERM after {acknowledged} acknowledged transactions; {history} history rows; sums {sums:?}"
        );
        stop(server, "-INT");
    }
}
