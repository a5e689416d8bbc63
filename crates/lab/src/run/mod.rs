//! `turnstile run W…`: the workloads on the engine, under both
//! profiles, over lists of parameters and client counts, reported in the
//! write-ups' form.
//!
//! For each variant (a point of the workload's parameter lists) the data
//! is loaded once into a data directory; then, for each client count,
//! each profile opens the directory with its own configuration and runs
//! the clients (profiles alternate point by point, so drift of a noisy
//! machine hits both alike). Counters are read before and after the
//! measured phase and reported per transaction; the activity slots are
//! sampled during it for the wait-event profile.
//!
//! The workloads themselves, their variants and clients, are their
//! definitions' in-process forms (`crate::workload`).
//!
//! `measure.rs` produces a [`RunReport`] of typed [`PointResult`]s;
//! `render.rs` turns it into JSON, tables, CSV and PNG.

mod args;
mod measure;
mod render;
mod result;
pub mod stat;

pub use crate::workload::WorkloadId;
pub use args::Args;
pub use measure::run;

use crate::cli::CliError;

/// `turnstile run`: measures, writes the figures if `--plot` asks, then
/// prints the JSON, the CSV or the tables.
pub fn print(args: &Args) -> Result<(), CliError> {
    let report = run(args)?;
    if let Some(dir) = &args.plot {
        report.plot(dir)?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report.json())?);
    } else if args.csv {
        println!("{}", report.csv()?);
    } else {
        println!("{}", report.tables());
    }
    Ok(())
}
