//! The real pgbench of PostgreSQL 15 against the server: `pgbench -i` with
//! partitions, W1 (Vondra 2024's partitioned join) in the three query
//! modes, and tpcb-like with its balances checked. When pgbench or psql
//! is not installed: skipped with the reason printed, or failed under
//! `CI=true` or `TURNSTILE_REQUIRE_TOOLS=1` (`common::missing_tool`).

mod common;

use common::{have_tools, TestServer};
use std::process::Output;
use turnstile_sync::config::Profile;

/// The W1 script, Vondra 2024's partitioned join (`pgbench -f`): the
/// repository's `workloads/w1.sql`, which the lab generates from W1's one
/// definition (`crates/lab/src/workload/w1.rs`; a lab test keeps the file
/// in step). The server cannot depend on the lab, which depends on it, so
/// the test reads the generated file.
const W1_SCRIPT: &str = include_str!("../../../workloads/w1.sql");

/// The W1 setup after `pgbench -i` (`workloads/w1_setup.sql`, generated
/// likewise), one statement per line.
const W1_SETUP: &str = include_str!("../../../workloads/w1_setup.sql");

fn ok(out: &Output, what: &str) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{what} failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    stdout
}

/// A number printed by pgbench after `label` (e.g. "number of failed transactions: ").
fn pgbench_figure(stdout: &str, label: &str) -> Option<u64> {
    let line = stdout.lines().find(|l| l.starts_with(label))?;
    line[label.len()..].split_whitespace().next()?.parse().ok()
}

#[test]
fn pgbench_init_with_partitions_then_w1_in_every_query_mode() {
    if !have_tools(&["pgbench", "psql"]) {
        return;
    }
    let srv = TestServer::start(Profile::Scalable, &[]);
    ok(&srv.pgbench("postgres", &["-i", "-q", "-s", "1", "--partitions", "10"]), "pgbench -i");
    let setup: Vec<&str> = W1_SETUP.lines().map(|l| l.trim_end_matches(';')).filter(|l| !l.is_empty()).collect();
    srv.psql_ok("postgres", &setup);
    assert_eq!(srv.psql_ok("postgres", &["SELECT count(*) FROM pgbench_accounts"]).trim(), "100000");
    assert_eq!(srv.psql_ok("postgres", &["SELECT count(*) FROM pgbench_branches"]).trim(), "1");
    let one = srv.psql_ok(
        "postgres",
        &["SELECT count(*) FROM pgbench_accounts pa JOIN pgbench_branches pb ON (pa.bid = pb.bid) WHERE pa.aid_parent = 777"],
    );
    assert_eq!(one.trim(), "1", "the W1 join finds exactly one row");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("w1.sql");
    std::fs::write(&script, W1_SCRIPT).unwrap();
    let script = script.to_str().unwrap();
    for mode in ["simple", "extended", "prepared"] {
        let out =
            srv.pgbench("postgres", &["-n", "-f", script, "-s", "1", "-M", mode, "-c", "8", "-j", "2", "-T", "2"]);
        let stdout = ok(&out, &format!("pgbench W1 -M {mode}"));
        let failed = pgbench_figure(&stdout, "number of failed transactions: ");
        let processed = pgbench_figure(&stdout, "number of transactions actually processed: ");
        assert_eq!(failed, Some(0), "-M {mode}:\n{stdout}");
        assert!(processed.unwrap_or(0) > 0, "-M {mode}:\n{stdout}");
    }
    // Read-only workload: the table is as it was.
    assert_eq!(
        srv.psql_ok("postgres", &["SELECT count(*) FROM pgbench_accounts WHERE aid_parent = aid"]).trim(),
        "100000"
    );
}

#[test]
fn tpcb_like_keeps_balances_consistent() {
    if !have_tools(&["pgbench", "psql"]) {
        return;
    }
    let srv = TestServer::start(Profile::Classic, &[]);
    ok(&srv.pgbench("postgres", &["-i", "-q", "-s", "1"]), "pgbench -i");
    let out = srv.pgbench("postgres", &["-b", "tpcb-like", "-c", "8", "-j", "2", "-T", "3"]);
    let stdout = ok(&out, "pgbench tpcb-like");
    assert_eq!(pgbench_figure(&stdout, "number of failed transactions: "), Some(0), "{stdout}");
    let processed = pgbench_figure(&stdout, "number of transactions actually processed: ").expect("processed");
    assert!(processed > 0);
    let sums = srv.psql_ok(
        "postgres",
        &[
            "SELECT sum(abalance) FROM pgbench_accounts",
            "SELECT sum(bbalance) FROM pgbench_branches",
            "SELECT sum(tbalance) FROM pgbench_tellers",
            "SELECT sum(delta) FROM pgbench_history",
            "SELECT count(*) FROM pgbench_history",
        ],
    );
    let v: Vec<&str> = sums.lines().collect();
    assert_eq!(v.len(), 5, "{sums}");
    assert_eq!(v[0], v[1], "accounts vs branches: {sums}");
    assert_eq!(v[1], v[2], "branches vs tellers: {sums}");
    assert_eq!(v[2], v[3], "tellers vs history: {sums}");
    assert_eq!(v[4], processed.to_string(), "history rows vs transactions: {sums}");
}
