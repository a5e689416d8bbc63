//! `turnstile stress`: torture tests with independent checkers.

use crate::cli::CliError;
use clap::Subcommand;
use serde::Serialize;
use turnstile_sync::Profile;

mod lock_watchdog;
pub mod locks;
pub mod storage;

/// The stress tests.
#[derive(Subcommand, Debug)]
pub enum StressTest {
    /// Lock-manager torture: N threads run random transactions over every
    /// mode and tag kind, with strong locks, NOWAIT, timeouts and
    /// deliberate deadlock cycles, checked by an independent record and a
    /// hang watchdog; the lock table must be empty afterwards.
    Locks(locks::Args),
    /// Storage under faults: inserters and readers on a heap with B-tree
    /// indexes while ENOSPC/EIO are injected at random I/O calls; then
    /// every flushed row must be there and every page must verify.
    Storage(storage::Args),
}

/// Runs one stress test.
pub fn run(test: StressTest) -> Result<(), CliError> {
    match test {
        StressTest::Locks(args) => locks::run(&args),
        StressTest::Storage(args) => storage::run(&args),
    }
}

/// One profile's outcome of a stress test.
pub(crate) trait Outcome: Serialize {
    /// The profile it ran under.
    fn profile(&self) -> &str;
    /// Whether it found nothing wrong.
    fn passed(&self) -> bool;
    /// One line of its counters, for standard error.
    fn summary(&self) -> String;
    /// The first problems it found, described.
    fn violation_texts(&self) -> &[String];
}

/// A seed from the clock, for runs without `--seed`.
pub fn clock_seed() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
}

/// Runs stress test `name` once per profile in `profiles` with `seed` (or
/// one from the clock, printed either way), reporting each outcome on
/// standard error as it ends; then prints the results — `{"results":[…]}`
/// with `json`, else through `table` — and fails naming every profile
/// whose run did not pass.
pub(crate) fn run_profiles<R: Outcome>(
    name: &str,
    seed: Option<u64>,
    profiles: &[Profile],
    json: bool,
    mut one: impl FnMut(Profile, u64) -> Result<R, CliError>,
    table: impl FnOnce(&[R]),
) -> Result<(), CliError> {
    let seed = seed.unwrap_or_else(clock_seed);
    eprintln!("stress {name}: seed {seed} (--seed {seed} replays the choices)");
    let mut results = Vec::new();
    for &profile in profiles {
        let r = one(profile, seed)?;
        eprintln!("stress {name}: {} {}", r.profile(), r.summary());
        for text in r.violation_texts() {
            eprintln!("stress {name}: {}: {text}", r.profile());
        }
        results.push(r);
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&serde_json::json!({ "results": results }))?);
    } else {
        table(&results);
    }
    let failed: Vec<&str> = results.iter().filter(|r| !r.passed()).map(|r| r.profile()).collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("stress {name} failed under {} (seed {seed})", failed.join(", ")).into())
    }
}
