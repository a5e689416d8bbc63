//! `turnstile`: the lab's command line.
//!
//! ```text
//! turnstile reproduce [--quick] [--out DIR] [--data-dir DIR] [--json]
//!                                        every workload (W1-W7) and micro-benchmark, both
//!                                        profiles: tables, then JSON/CSV/PNG in DIR
//! turnstile run W1..W6 [--clients 1,8] [--plot DIR] [--json|--csv]   one workload
//! turnstile compare [--quick] [--workloads W1,…] [--json|--csv] [--plot DIR]
//!                                        PostgreSQL 15 and 18, classic and scalable through pgbench
//! turnstile micro lwlock|lock|… [--json] micro-benchmarks (ratios against reference primitives)
//! turnstile stress locks [--threads 16] [--seconds 10] [--seed N] [--json]   lock-manager torture test
//! turnstile serve --data-dir DIR [--listen 127.0.0.1] [--port 5432] [--socket-dir DIR] [--profile P] [--set k=v]…
//!                                        PostgreSQL's wire protocol for the real pgbench and psql
//! turnstile soak --transactions N [--clients 8] [--profile P] [--json]
//!                                        RSS, table and transaction-id growth over a long pgbench mix
//! turnstile config [--profile P] [--config FILE] [--set k=v]…   print the effective configuration
//! ```

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod cli;
mod compare;
mod harness;
mod micro;
mod plot;
mod progress;
mod report;
mod reproduce;
mod run;
mod serve;
mod soak;
mod stress;
mod workload;

/// Counts allocator calls per thread (`turnstile micro alloc`): one
/// thread-local increment per `malloc`/`free`, the system allocator underneath.
#[global_allocator]
static ALLOCATOR: turnstile_sync::alloc_count::CountingAlloc = turnstile_sync::alloc_count::CountingAlloc;

/// Many-core lock and resource manager lab: reproduces PostgreSQL
/// scalability experiments under the `classic` and `scalable` profiles.
#[derive(Parser, Debug)]
#[command(name = "turnstile", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run every workload (W1-W7) at a small size under both profiles, and
    /// the micro-benchmarks; print the tables and write JSON, CSV and PNG
    /// files into the output directory.
    Reproduce(reproduce::Args),
    /// Run one workload under both profiles over lists of parameters
    /// and client counts (e.g. `turnstile run W1 --partitions 0,100 --clients 1,8`).
    Run(run::Args),
    /// The reproduced write-ups' pgbench runs against private PostgreSQL
    /// servers (15, and 18 when given) and `turnstile serve` under classic
    /// and scalable, side by side.
    Compare(compare::Args),
    /// Micro-benchmarks of single primitives.
    Micro {
        #[command(subcommand)]
        bench: micro::MicroBench,
    },
    /// Torture tests with independent checkers (`stress locks`).
    Stress {
        #[command(subcommand)]
        test: stress::StressTest,
    },
    /// Serve PostgreSQL's wire protocol for the real pgbench and psql
    /// (`turnstile serve --data-dir DIR --port 5432 --socket-dir /tmp`).
    Serve(serve::Args),
    /// Run pgbench's tpcb-like + select-only mix for many transactions
    /// against `turnstile serve` (both runs per profile: plain and beside a
    /// long REPEATABLE READ session) and report memory, table and
    /// transaction-id growth.
    Soak(soak::Args),
    /// Print the effective configuration as TOML.
    Config(cli::ConfigArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("turnstile: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The shared types live in `cli`; also nameable from the crate root, as
/// before they moved.
pub use cli::{build_config, CliError};

fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Reproduce(args) => reproduce::run(&args),
        Command::Compare(args) => compare::run(&args),
        Command::Micro { bench } => micro::run(bench),
        Command::Stress { test } => stress::run(test),
        Command::Run(args) => run::print(&args),
        Command::Serve(args) => serve::run(&args),
        Command::Soak(args) => soak::run(&args),
        Command::Config(args) => {
            print!("{}", args.build()?.to_toml_string());
            Ok(())
        }
    }
}
