//! `turnstile compare` end to end, against the PostgreSQL 15 installed on
//! the machine (Debian's `postgresql-15`; `.ci/run` installs it):
//! `--quick --json` answers every point on all three servers and follows
//! issue 14's output contract, classic takes PostgreSQL 15's locks at
//! every census point (W1 at 0 and 10 partitions, W2, W3; both modes);
//! and a SIGTERM mid-run leaves no server process and no temporary
//! directory behind.
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

#[test]
fn quick_answers_every_point_on_the_three_servers_and_classic_locks_like_postgres() {
    let mut child = compare_cmd(&["--quick", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn turnstile compare");
    let out = drain(child.stdout.take().expect("stdout"));
    let err = drain(child.stderr.take().expect("stderr"));
    let status = wait_limited(&mut child, HANG_LIMIT);
    let out = out.join().expect("stdout");
    let err = String::from_utf8_lossy(&err.join().expect("stderr")).into_owned();
    assert!(status.success(), "turnstile compare --quick failed ({status}):\n{err}");
    let d: Value =
        serde_json::from_slice(&out).unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", String::from_utf8_lossy(&out)));
    let servers = ["postgres", "classic", "scalable"];

    assert!(d["pg_version"].as_str().is_some_and(|v| v.starts_with("15.")), "pg_version {}", d["pg_version"]);
    assert_eq!(d["servers"], serde_json::json!(servers));
    assert_eq!(d["errors"], serde_json::json!([]), "{err}");

    let results = d["results"].as_array().expect("results");
    let workloads: BTreeSet<&str> = results.iter().filter_map(|r| r["workload"].as_str()).collect();
    assert_eq!(workloads, BTreeSet::from(["W1", "W2", "W3", "W4", "W5"]));
    for r in results {
        assert!(r["params"].is_object() && r["clients"].as_u64().is_some_and(|c| c > 0), "{r}");
        for s in servers {
            let tps = r["tps"][s].as_f64().unwrap_or(0.0);
            assert!(tps > 0.0, "{s} did not answer {} {}: {r}", r["workload"], r["params"]);
        }
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
    // 15's locks, as many on the fast path.
    for l in locks {
        for key in ["relation_locks", "fastpath_locks", "index_locks"] {
            assert_eq!(l["classic"][key], l["postgres"][key], "classic vs PostgreSQL 15, {key}: {l}");
        }
    }
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
