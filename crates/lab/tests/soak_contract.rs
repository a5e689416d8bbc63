//! `turnstile soak` end to end, small: `--transactions 2000 --clients 2
//! --json` runs both profiles, plain and with the long `REPEATABLE READ`
//! session, against `turnstile serve` through the real pgbench and psql,
//! and prints issue 33's JSON contract; bad arguments fail before any
//! server starts.
//!
//! The soak finds pgbench, psql and pg_isready as `turnstile compare` does
//! (`pg_config --bindir`, else the newest `/usr/lib/postgresql/*/bin`).
//! When they are missing the end-to-end test fails under `CI=true` or
//! `TURNSTILE_REQUIRE_TOOLS=1`, and otherwise says that it skips.

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

/// The client programs the soak runs.
const CLIENTS: [&str; 3] = ["pgbench", "psql", "pg_isready"];

fn soak(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_turnstile")).arg("soak").args(args).output().expect("run turnstile soak")
}

/// Whether a directory the soak looks in holds every client program. When
/// none does, the rule of the server's tests: a failure under `CI=true` or
/// `TURNSTILE_REQUIRE_TOOLS=1`, else a skip that says so.
fn clients_installed() -> bool {
    let mut dirs: Vec<PathBuf> = Command::new("pg_config")
        .arg("--bindir")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .into_iter()
        .collect();
    if let Ok(entries) = std::fs::read_dir("/usr/lib/postgresql") {
        dirs.extend(entries.flatten().map(|e| e.path().join("bin")));
    }
    if dirs.iter().any(|d| CLIENTS.iter().all(|p| d.join(p).is_file())) {
        return true;
    }
    let install = "apt-get install postgresql-client-15, or run scripts/test";
    let require = std::env::var("TURNSTILE_REQUIRE_TOOLS").is_ok_and(|v| v == "1");
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    assert!(!require && !ci, "a required tool is missing: no directory holds {CLIENTS:?} ({install})");
    eprintln!("SKIPPED: pgbench, psql and pg_isready are not installed ({install}; TURNSTILE_REQUIRE_TOOLS=1 makes this a failure)");
    false
}

fn number(run: &Value, key: &str) -> f64 {
    run[key].as_f64().unwrap_or_else(|| panic!("{key} is not a number in {run}"))
}

#[test]
fn a_small_soak_prints_every_run_of_both_profiles() {
    if !clients_installed() {
        return;
    }
    let out = soak(&["--transactions", "2000", "--clients", "2", "--json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "turnstile soak failed ({}):\n{err}", out.status);
    let d: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("not JSON ({e}):\n{}", String::from_utf8_lossy(&out.stdout));
    });
    let runs = d["runs"].as_array().expect("runs");
    let seen: Vec<(&str, bool)> =
        runs.iter().map(|r| (r["profile"].as_str().unwrap(), r["long_snapshot"].as_bool().unwrap())).collect();
    assert_eq!(seen, [("classic", false), ("classic", true), ("scalable", false), ("scalable", true)]);
    for r in runs {
        let n = r["transactions"].as_u64().expect("transactions");
        assert!((2000..2002).contains(&n), "{n} transactions, want 2000 (within one chunk's rounding): {r}");
        // pgbench's per-script tallies may lose an increment between its threads.
        let by_script = r["read_only_transactions"].as_u64().unwrap() + r["write_transactions"].as_u64().unwrap();
        assert!(by_script <= n && by_script + 20 >= n, "the mix's scripts add up to {by_script} of {n}: {r}");
        number(r, "rss_growth_mb_per_million");
        let ratio = number(r, "table_growth_ratio");
        assert!((0.5..2.0).contains(&ratio), "tables end/half {ratio} over 2000 transactions: {r}");
        assert_eq!(number(r, "xids_per_read_only"), 0.0, "a read-only transaction takes no transaction id: {r}");
        let write = number(r, "xids_per_write");
        assert!((0.99..=1.01).contains(&write), "one transaction id per tpcb-like transaction, got {write}: {r}");
        let samples = r["samples"].as_array().expect("samples");
        assert_eq!(samples.len(), 21, "a sample before the mix and one per chunk: {r}");
        let rss: Vec<f64> = samples.iter().map(|s| number(s, "rss_mb")).collect();
        assert!(rss.iter().all(|&m| m > 1.0), "the server's resident memory is measured: {rss:?}");
        assert!(number(r, "data_dir_bytes_end") > 0.0 && number(r, "history_bytes_end") > 0.0, "{r}");
    }
}

#[test]
fn too_few_transactions_and_a_bad_knob_fail_before_any_server_starts() {
    let out = soak(&["--transactions", "30", "--clients", "2", "--json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && out.stdout.is_empty(), "{err}");
    assert!(err.contains("at least 40"), "{err}");
    let out = soak(&["--transactions", "2000", "--set", "lock.partitions=zero"]);
    assert!(!out.status.success() && out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = soak(&["--clients", "2"]);
    assert!(!out.status.success(), "--transactions is required");
}
