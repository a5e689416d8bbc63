//! What the crash tests share (`crash.rs`, `wal_crash.rs`,
//! `power_loss.rs`): a small buffer pool, the seed, integer cells, and the
//! harness that runs a child copy of the test binary and kills it.

#![allow(dead_code)] // each test binary uses its own part

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;
use turnstile_engine::types::Value;
use turnstile_sync::Config;

/// A small pool: pages are evicted (written, after their WAL) all along.
pub fn small_pool_config() -> Config {
    let mut c = Config::default();
    c.buffer.shared_buffers = 64;
    c.buffer.mapping_partitions = 16;
    c
}

/// The seed of a crash test: `TURNSTILE_CRASH_SEED`, else the clock;
/// printed, with how to replay it.
pub fn crash_seed(test: &str) -> u64 {
    let seed: u64 = std::env::var("TURNSTILE_CRASH_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64
    });
    println!("{test}: seed {seed} (TURNSTILE_CRASH_SEED={seed} replays it)");
    seed
}

/// An integer cell.
pub fn int(v: &Value) -> i64 {
    match v {
        Value::Int8(k) => *k,
        Value::Int4(k) => i64::from(*k),
        other => panic!("not an integer: {other:?}"),
    }
}

/// Runs this test binary's test `child_test` with `env=spec` set, reads
/// the numbers its lines report (`report` picks them out of a line), and
/// SIGKILLs it `kill_after` after the first; returns every number reported.
pub fn run_and_kill(
    child_test: &str,
    env: &str,
    spec: &str,
    kill_after: Duration,
    report: impl Fn(&str) -> Option<i64> + Send + 'static,
) -> Vec<i64> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", child_test, "--nocapture", "--test-threads=1"])
        .env(env, spec)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn the child");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<i64>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(n) = report(&line) {
                let _ = tx.send(n);
            }
        }
    });
    let first = rx.recv_timeout(Duration::from_secs(60)).expect("the child reported nothing within 60 s");
    std::thread::sleep(kill_after);
    child.kill().expect("SIGKILL the child"); // `kill` sends SIGKILL on Unix
    let status = child.wait().unwrap();
    assert!(!status.success(), "the child ended by itself: {status}");
    reader.join().unwrap();
    std::iter::once(first).chain(rx.try_iter()).collect()
}
