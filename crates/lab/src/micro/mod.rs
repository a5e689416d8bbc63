//! Micro-benchmarks: single primitives timed against a reference primitive
//! in the same run, reported as ratios (DESIGN.md §8).

use crate::report::Section;
use crate::CliError;
use clap::Subcommand;

pub mod lock;
pub mod lwlock;

/// The micro-benchmarks.
#[derive(Subcommand, Debug)]
pub enum MicroBench {
    /// Lightweight locks: uncontended cost against `parking_lot::RwLock`,
    /// and a writer-starvation probe under both policies (seed 004).
    Lwlock(lwlock::Args),
    /// Heavyweight locks: fast-path and shared-table cost against
    /// `parking_lot::Mutex`, and transactions locking R relations under
    /// both profiles (seeds 000, 002).
    Lock(lock::Args),
}

/// Runs one micro-benchmark and prints its report.
pub fn run(bench: MicroBench) -> Result<(), CliError> {
    let section = match bench {
        MicroBench::Lwlock(args) => {
            let json = args.json;
            (lwlock::run(&args)?, json)
        }
        MicroBench::Lock(args) => {
            let json = args.json;
            (lock::run(&args)?, json)
        }
    };
    section.0.print(section.1)
}

/// The sections `turnstile reproduce` prints from the micro-benchmarks.
pub fn reproduce_sections() -> Result<Vec<Section>, CliError> {
    Ok(vec![lwlock::run(&lwlock::Args::reproduce())?, lock::run(&lock::Args::reproduce())?])
}
