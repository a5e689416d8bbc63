//! `turnstile stress`: torture tests with independent checkers (issue 7).

use crate::CliError;
use clap::Subcommand;

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
