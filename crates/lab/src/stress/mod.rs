//! `turnstile stress`: torture tests with independent checkers (issue 7).

use crate::CliError;
use clap::Subcommand;
use serde::Serialize;

pub mod checker;
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
}

/// Prints `results` — `{"results":[…]}` with `json`, else through `table`
/// — and fails naming every profile whose run did not pass.
pub(crate) fn finish<R: Outcome>(
    what: &str,
    seed: u64,
    results: &[R],
    json: bool,
    table: impl FnOnce(&[R]),
) -> Result<(), CliError> {
    if json {
        println!("{}", serde_json::to_string_pretty(&serde_json::json!({ "results": results }))?);
    } else {
        table(results);
    }
    let failed: Vec<&str> = results.iter().filter(|r| !r.passed()).map(|r| r.profile()).collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("{what} stress failed under {} (seed {seed})", failed.join(", ")).into())
    }
}
