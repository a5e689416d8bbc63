//! `turnstile compare` end to end, against the PostgreSQL 15 installed on
//! the machine (Debian's `postgresql-15`; `.ci/run` installs it) and,
//! when it is installed, PostgreSQL 18 (`scripts/install-postgres-18`,
//! which `.ci/run` runs): `--quick --json` answers every point on every
//! server and follows issues 14's and 21's output contract, every
//! PostgreSQL is labelled by the version its `postgres --version` gives
//! (JSON, tables, CSV), classic takes PostgreSQL 15's locks at every
//! census point (W1 at 0 and 10 partitions, W2, W3; both modes); and a
//! SIGTERM mid-run leaves no server process and no temporary directory
//! behind.
//!
//! Where the servers are: `TURNSTILE_PG15_BIN` (default
//! `/usr/lib/postgresql/15/bin`) and `TURNSTILE_PG18_BIN` (default: where
//! `scripts/install-postgres-18` installs, `target/postgres-18/…/bin`, if
//! it is there). A `TURNSTILE_PG18_BIN` that names no server fails the
//! test rather than quietly running without PostgreSQL 18.
//!
//! `TURNSTILE_COMPARE_STAND_IN=1` runs PostgreSQL in place of `turnstile
//! serve` (development of compare itself only).

use serde_json::Value;
use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A run that takes longer than this is hung: kill it and fail.
const HANG_LIMIT: Duration = Duration::from_secs(900);

fn compare_cmd(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_turnstile"));
    cmd.arg("compare").args(args);
    if std::env::var("TURNSTILE_COMPARE_STAND_IN").is_ok_and(|v| v == "1") {
        cmd.arg("--stand-in");
    }
    cmd
}

fn drain(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        buf
    })
}

fn wait_limited(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("turnstile compare still running after {limit:?}: killed");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The package `scripts/install-postgres-18` installs.
const PG18_PACKAGE_VERSION: &str = "18.4.0-beta.17";

/// The PostgreSQL servers of the run: `(major, bin directory)`, PostgreSQL
/// 15 first; PostgreSQL 18 when installed.
fn servers_under_test() -> Vec<(u32, PathBuf)> {
    let pg15 = std::env::var_os("TURNSTILE_PG15_BIN")
        .map_or_else(|| PathBuf::from("/usr/lib/postgresql/15/bin"), PathBuf::from);
    let mut found = vec![(15, pg15)];
    match std::env::var_os("TURNSTILE_PG18_BIN").filter(|v| !v.is_empty()) {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            assert!(dir.join("postgres").is_file(), "TURNSTILE_PG18_BIN={} holds no postgres", dir.display());
            found.push((18, dir));
        }
        None => {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../target/postgres-18")
                .join(PG18_PACKAGE_VERSION)
                .join("native/bin");
            if dir.join("postgres").is_file() {
                found.push((18, dir));
            } else {
                eprintln!("PostgreSQL 18 is not installed ({}): running with PostgreSQL 15 only", dir.display());
            }
        }
    }
    found
}

/// `postgres --version` of `dir`: `18.4`.
fn postgres_version(dir: &Path) -> String {
    let out = Command::new(dir.join("postgres")).arg("--version").output().expect("postgres --version");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    // "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)"
    text.split_whitespace().nth(2).unwrap_or_else(|| panic!("postgres --version printed {text:?}")).to_owned()
}

#[test]
fn quick_answers_every_point_on_every_server_and_classic_locks_like_postgres_15() {
    let pgs = servers_under_test();
    let plots = tempfile::tempdir().expect("temporary directory");
    let mut args: Vec<String> = vec!["--quick".into(), "--json".into(), "--plot".into()];
    args.push(plots.path().display().to_string());
    for (_, dir) in &pgs {
        args.push("--pg-bin".into());
        args.push(dir.display().to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child =
        compare_cmd(&args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn turnstile compare");
    let out = drain(child.stdout.take().expect("stdout"));
    let err = drain(child.stderr.take().expect("stderr"));
    let status = wait_limited(&mut child, HANG_LIMIT);
    let out = out.join().expect("stdout");
    let err = String::from_utf8_lossy(&err.join().expect("stderr")).into_owned();
    assert!(status.success(), "turnstile compare --quick failed ({status}):\n{err}");
    let d: Value =
        serde_json::from_slice(&out).unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", String::from_utf8_lossy(&out)));
    let mut servers: Vec<String> = pgs.iter().map(|(major, _)| format!("pg{major}")).collect();
    servers.extend(["classic".to_owned(), "scalable".to_owned(), "postgres".to_owned()]);
    let servers: &[&str] = &servers.iter().map(String::as_str).collect::<Vec<_>>();

    assert!(d["pg_version"].as_str().is_some_and(|v| v.starts_with("15.")), "pg_version {}", d["pg_version"]);
    assert_eq!(d["errors"], serde_json::json!([]), "{err}");
    // `servers` lists every server by key; each PostgreSQL by the version
    // it reports, which is what its own `postgres --version` says, and its
    // label in the tables and the CSV is that version.
    let listed: Vec<&str> =
        d["servers"].as_array().expect("servers").iter().filter_map(|s| s["key"].as_str()).collect();
    assert_eq!(listed, servers[..servers.len() - 1], "{}", d["servers"]);
    let txt = std::fs::read_to_string(plots.path().join("compare.txt")).expect("compare.txt");
    let csv = std::fs::read_to_string(plots.path().join("compare.csv")).expect("compare.csv");
    for (major, dir) in &pgs {
        let key = format!("pg{major}");
        let entry = d["servers"].as_array().and_then(|a| a.iter().find(|s| s["key"] == key.as_str())).expect("entry");
        let version = postgres_version(dir);
        assert!(version.starts_with(&format!("{major}.")), "{} is PostgreSQL {version}", dir.display());
        assert_eq!(entry["version"], version.as_str(), "{key}: the server reports a version other than its binary's");
        let label = format!("PostgreSQL {version}");
        assert_eq!(entry["label"], label.as_str(), "{entry}");
        assert!(txt.contains(&format!(" {label} |")), "no table row labelled {label}:\n{txt}");
        assert!(csv.contains(&format!(",{key},\"{label}\",")), "no CSV line for {key} labelled {label}");
    }
    // No table labels a PostgreSQL by a version the run did not have.
    let table_lines: String = txt.lines().filter(|l| l.contains(" | ")).collect::<Vec<_>>().join("\n");
    for word in table_lines.split("PostgreSQL ").skip(1) {
        let version: String = word.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
        if !version.is_empty() {
            assert!(
                pgs.iter().any(|(_, dir)| postgres_version(dir) == version.trim_end_matches('.')),
                "a label names PostgreSQL {version}, which did not run"
            );
        }
    }

    let results = d["results"].as_array().expect("results");
    let workloads: BTreeSet<&str> = results.iter().filter_map(|r| r["workload"].as_str()).collect();
    assert_eq!(workloads, BTreeSet::from(["W1", "W2", "W3", "W4", "W5", "W7"]));
    for r in results {
        assert!(r["params"].is_object() && r["clients"].as_u64().is_some_and(|c| c > 0), "{r}");
        for s in servers {
            let tps = r["tps"][s].as_f64().unwrap_or(0.0);
            assert!(tps > 0.0, "{s} did not answer {} {}: {r}", r["workload"], r["params"]);
        }
        assert_eq!(r["tps"]["postgres"], r["tps"]["pg15"], "the postgres key is PostgreSQL 15: {r}");
        if r["workload"] == "W4" {
            for s in servers {
                assert!(r["mb_per_s"][s].as_f64().is_some_and(|v| v > 0.0), "W4 MB/s of {s}: {r}");
            }
        }
    }
    // W1 runs in both modes at 0 and 10 partitions.
    let w1: BTreeSet<(u64, String)> = results
        .iter()
        .filter(|r| r["workload"] == "W1")
        .map(|r| {
            (r["params"]["partitions"].as_u64().unwrap_or(99), r["params"]["mode"].as_str().unwrap_or("").to_owned())
        })
        .collect();
    assert_eq!(w1.len(), 4, "{w1:?}");

    let locks = d["locks"].as_array().expect("locks");
    assert!(!locks.is_empty());
    for l in locks {
        for s in servers {
            assert!(l[s]["relation_locks"].as_u64().is_some() && l[s]["fastpath_locks"].as_u64().is_some(), "{l}");
        }
    }
    let w1_10: Vec<&Value> =
        locks.iter().filter(|l| l["workload"] == "W1" && l["params"]["partitions"] == 10).collect();
    assert_eq!(w1_10.len(), 2, "W1 at 10 partitions, simple and prepared: {w1_10:?}");
    for l in w1_10 {
        assert!(l["postgres"]["relation_locks"].as_u64().unwrap_or(0) > 16, "{l}");
    }
    // Every census point of W1–W3, in both modes: classic takes PostgreSQL
    // 15's locks, as many on the fast path (never PostgreSQL 18's).
    for l in locks {
        for key in ["relation_locks", "fastpath_locks", "index_locks"] {
            assert_eq!(l["classic"][key], l["pg15"][key], "classic vs PostgreSQL 15, {key}: {l}");
        }
        assert_eq!(l["postgres"], l["pg15"], "{l}");
    }
    assert!(
        txt.lines().any(|line| line.starts_with("Faithfulness")) && txt.contains("classic vs PG15"),
        "the faithfulness table checks classic against PostgreSQL 15:\n{txt}"
    );
    for key in ["per_partition_us", "protocol_floor_tps"] {
        for s in servers {
            assert!(d[key][s].as_f64().is_some(), "{key}.{s} missing: {}", d[key]);
        }
    }
    for s in servers {
        assert!(d["protocol_floor_tps"][s].as_f64().unwrap_or(0.0) > 0.0);
    }
}

/// `(pid, start time)` of every descendant of `root`.
fn descendants(root: u32) -> BTreeSet<(u32, u64)> {
    let mut parent_of = Vec::new();
    for e in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
        if let Some((ppid, start)) = stat(pid) {
            parent_of.push((pid, ppid, start));
        }
    }
    let mut found: BTreeSet<(u32, u64)> = BTreeSet::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for &(pid, ppid, start) in &parent_of {
            if ppid == p && found.insert((pid, start)) {
                frontier.push(pid);
            }
        }
    }
    found
}

/// Parent pid and start time of `pid` from `/proc/<pid>/stat`.
fn stat(pid: u32) -> Option<(u32, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces; fields after its closing ')' are fixed.
    let rest = &text[text.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some((f.get(1)?.parse().ok()?, f.get(19)?.parse().ok()?))
}

fn comm(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default().trim().to_owned()
}

/// compare's temporary directory: the one whose `owner.pid` names `pid`.
fn temp_dir_of(pid: u32) -> Option<PathBuf> {
    std::fs::read_dir(std::env::temp_dir()).ok()?.flatten().map(|e| e.path()).find(|p| {
        p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("turnstile-compare-"))
            && std::fs::read_to_string(p.join("owner.pid")).is_ok_and(|s| s.trim() == pid.to_string())
    })
}

#[test]
fn sigterm_mid_run_leaves_no_server_and_no_temporary_directory() {
    let mut child = compare_cmd(&["--quick", "--json", "--workloads", "W1", "--duration", "5"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn turnstile compare");
    let err = drain(child.stderr.take().expect("stderr"));
    let pid = child.id();
    // Mid-run: the three servers are up and pgbench is measuring a point.
    let started = Instant::now();
    let (procs, dir) = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            panic!(
                "compare ended ({status}) before it was killed:\n{}",
                String::from_utf8_lossy(&err.join().unwrap_or_default())
            );
        }
        let procs = descendants(pid);
        let names: Vec<String> = procs.iter().map(|&(p, _)| comm(p)).collect();
        let servers = names.iter().filter(|n| *n == "postgres" || *n == "turnstile").count();
        if names.iter().any(|n| n == "pgbench") && servers >= 3 {
            if let Some(dir) = temp_dir_of(pid) {
                // Let the point run on a little.
                std::thread::sleep(Duration::from_millis(500));
                break (descendants(pid), dir);
            }
        }
        assert!(started.elapsed() < HANG_LIMIT, "no pgbench point started within {HANG_LIMIT:?}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(procs.len() >= 4, "{procs:?}");
    // SAFETY: kill has no memory-safety preconditions; `pid` is our child.
    let rc = unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
    assert_eq!(rc, 0);
    let status = wait_limited(&mut child, Duration::from_secs(120));
    let err = String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned();
    assert_eq!(status.code(), Some(128 + libc::SIGTERM), "{err}");
    let left: Vec<(u32, String)> = procs
        .iter()
        .filter(|&&(p, start)| stat(p).is_some_and(|(_, s)| s == start))
        .map(|&(p, _)| (p, comm(p)))
        .collect();
    assert!(left.is_empty(), "processes left after SIGTERM: {left:?}\n{err}");
    assert!(!dir.exists(), "{} left after SIGTERM\n{err}", dir.display());
    assert!(!Path::new(&dir).join("postgres").exists());
}
