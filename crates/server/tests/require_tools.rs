//! No silent skips: with `psql` and `pgbench` gone from `PATH` and
//! `TURNSTILE_REQUIRE_TOOLS=1`, a test that needs them fails and names the
//! tool; without the variable (and without `CI=true`) it skips and says so.
//!
//! The test runs this very test binary again as a child, with an empty
//! `PATH` and only the `#[ignore]`d `needs_psql` test selected, and reads
//! what the child did: the rule under test is the real one
//! (`common::have_tools` → `common::missing_tool`) in a real process.

mod common;

use std::process::{Command, Output};

/// A test that needs psql, as every server test that drives psql does. It
/// is `#[ignore]`d: it only runs as the child of the tests below.
#[test]
#[ignore = "run by missing_tools_fail_when_required as a child process"]
fn needs_psql() {
    if !common::have_tools(&["psql"]) {
        return;
    }
    panic!("the child found psql on a PATH that should not hold it");
}

/// Runs `needs_psql` in a child of this binary with `PATH` set to an empty
/// directory and the given extra environment.
fn child(env: &[(&str, &str)]) -> Output {
    let empty = tempfile::tempdir().expect("an empty directory for PATH");
    let mut cmd = Command::new(std::env::current_exe().expect("this test binary"));
    cmd.args(["--ignored", "--exact", "needs_psql", "--nocapture", "--test-threads=1"])
        .env("PATH", empty.path())
        .env_remove("TURNSTILE_REQUIRE_TOOLS")
        .env_remove("CI");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run the child test")
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

#[test]
fn missing_tools_fail_when_required() {
    for env in [("TURNSTILE_REQUIRE_TOOLS", "1"), ("CI", "true")] {
        let out = child(&[env]);
        let said = text(&out);
        assert!(!out.status.success(), "with {}={} and no psql the test passed:\n{said}", env.0, env.1);
        assert!(said.contains("`psql` is not on PATH"), "the failure does not name psql:\n{said}");
        assert!(said.contains("1 failed"), "the child did not run the test:\n{said}");
    }
}

#[test]
fn missing_tools_skip_saying_so_otherwise() {
    let out = child(&[]);
    let said = text(&out);
    assert!(out.status.success(), "without TURNSTILE_REQUIRE_TOOLS the test failed:\n{said}");
    assert!(said.contains("SKIPPED") && said.contains("psql"), "the skip does not say so:\n{said}");
    assert!(said.contains("1 passed"), "the child did not run the test:\n{said}");
}
