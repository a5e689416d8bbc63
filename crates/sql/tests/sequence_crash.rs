//! No sequence value is handed out twice after a crash, under both
//! profiles, even when the crash loses the sequence file's last write.
//!
//! A child copy of this binary takes `nextval` in a loop (autocommit, and
//! in transactions that commit), printing each value; the parent SIGKILLs
//! it after a random while (the seed is printed; `TURNSTILE_CRASH_SEED`
//! replays it). A process kill leaves the kernel's copy of every file, so
//! the parent then puts back the sequence file as it was when the sequence
//! was created — what a machine crash leaves of a file whose later writes
//! were never synced — and reopens the directory: recovery must resume the
//! sequence from the state the WAL holds (`durability/sequence_log.rs`),
//! beyond every value the child printed.

#[path = "../../engine/tests/common/mod.rs"]
mod common;

use std::io::Write;
use std::time::{Duration, Instant};
use turnstile_sql::{Outcome, SqlEngine, SqlSession};
use turnstile_sync::{Config, Profile};

const CHILD_ENV: &str = "TURNSTILE_SEQUENCE_CRASH_CHILD";
/// A child stops by itself after this long (if the parent died).
const CHILD_LIFETIME: Duration = Duration::from_secs(60);

fn config(profile: &str) -> Config {
    Config::preset(if profile == "scalable" { Profile::Scalable } else { Profile::Classic })
}

fn one_value(s: &mut SqlSession, sql: &str) -> i64 {
    let sts = s.parse_batch(sql).unwrap();
    let mut v = None;
    for st in sts {
        if let Outcome::Rows { rows, .. } = s.execute(&st, &[]).unwrap() {
            v = rows.to_vec().first().and_then(|r| r[0].clone()).map(|x| x.parse().unwrap());
        }
    }
    v.expect("a value")
}

/// The child: `nextval` forever, one printed line per value.
#[test]
fn sequence_crash_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else { return };
    let (dir, profile) = spec.rsplit_once(':').expect("dir:profile");
    let e = SqlEngine::open(std::path::Path::new(dir), config(profile)).unwrap();
    let mut s = SqlSession::connect(&e, "postgres", "child", "sequence_crash", None).unwrap();
    let started = Instant::now();
    let mut out = std::io::stdout().lock();
    let mut n = 0u64;
    while started.elapsed() < CHILD_LIFETIME {
        let v = if n % 3 == 0 {
            one_value(&mut s, "BEGIN; SELECT nextval('s'); COMMIT")
        } else {
            one_value(&mut s, "SELECT nextval('s')")
        };
        writeln!(out, "value {v}").unwrap();
        out.flush().unwrap();
        if n % 500 == 499 {
            e.flush().unwrap(); // a checkpoint: older WAL goes
        }
        n += 1;
    }
}

#[test]
fn no_sequence_value_repeats_after_sigkill_and_a_lost_file_write() {
    let mut rng = common::crash_seed("sequence_crash");
    for profile in ["classic", "scalable"] {
        let dir = tempfile::tempdir().unwrap();
        {
            let e = SqlEngine::open(dir.path(), config(profile)).unwrap();
            let mut s = SqlSession::connect(&e, "postgres", "parent", "sequence_crash", None).unwrap();
            for st in s.parse_batch("CREATE SEQUENCE s").unwrap() {
                s.execute(&st, &[]).unwrap();
            }
            e.close().unwrap();
        }
        let file = std::fs::read_dir(dir.path().join("sequences"))
            .unwrap()
            .flatten()
            .flat_map(|d| std::fs::read_dir(d.path()).unwrap().flatten())
            .map(|f| f.path())
            .find(|p| p.file_name().is_some_and(|n| n == "s"))
            .expect("the sequence's file");
        let created = std::fs::read(&file).unwrap();
        for run in 0..2 {
            // xorshift: a kill time from the seed.
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let kill_after = Duration::from_millis(50 + rng % 1500);
            let report = |line: &str| line.rsplit_once("value ").and_then(|(_, v)| v.trim().parse().ok());
            let spec = format!("{}:{profile}", dir.path().display());
            let values = common::run_and_kill("sequence_crash_child", CHILD_ENV, &spec, kill_after, report);
            let max = values.iter().copied().max().unwrap();
            println!(
                "sequence_crash: {profile} run {run}: {} values up to {max}, killed after {kill_after:?}",
                values.len()
            );
            std::fs::write(&file, &created).unwrap();
            let e = SqlEngine::open(dir.path(), config(profile)).unwrap();
            let mut s = SqlSession::connect(&e, "postgres", "parent", "sequence_crash", None).unwrap();
            let next = one_value(&mut s, "SELECT nextval('s')");
            assert!(
                next > max,
                "{profile} run {run}: nextval gave {next} after the crash, {max} was handed out before"
            );
            drop(s);
            e.close().unwrap();
            std::fs::write(&file, &created).unwrap();
        }
    }
}
