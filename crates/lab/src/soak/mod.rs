//! `turnstile soak`: does a server that runs for long stay the same size?
//! pgbench's tpcb-like and select-only scripts, mixed one to one, run for
//! `--transactions` against `turnstile serve`, while the soak samples the
//! server's resident memory, its data directory and its tables, and
//! counts the transaction ids the server assigns.
//!
//! Per profile (`--profile`, default both), two runs, each on a fresh
//! data directory and server: one plain, one with a `REPEATABLE READ`
//! session held open for the whole run ([`long_snapshot`]), the case that
//! keeps every row version alive. A run ([`run`]) loads `pgbench -i`,
//! measures transaction ids per read-only and per write transaction with
//! one script at a time, then runs the mix in about [`CHUNKS`] chunks and
//! takes a [`Sample`](sample::Sample) after each; [`report`] turns the samples into
//! the growth figures and prints them (`--json`: `{"runs":[…]}`).
//! Every server runs with [`PREFAULT`] on (its buffer pool is resident
//! from the start) and [`ASYNC_COMMIT`] off (commits do not wait for the
//! disk: the run measures memory, as issue 33 asks once a WAL exists).
//!
//! The servers and clients are the lab's ([`crate::compare`]): every
//! process is registered with [`cleanup`](crate::compare::cleanup), so an
//! interrupted soak leaves no server behind, and every client has a time
//! limit, so a hung server fails the command instead of blocking it.
//!
//! Files: [`slope`] is the least-squares fit; [`pgbench_output`] reads
//! pgbench's counts; [`sample`] measures the server; [`long_snapshot`]
//! holds the session; [`run`] is one run; [`report`] prints.

pub mod long_snapshot;
pub mod pgbench_output;
pub mod report;
pub mod run;
pub mod sample;
pub mod slope;

use crate::cli::{ProfileArg, BOTH_PROFILES};
use crate::compare::cleanup::{self, TempRoot};
use crate::compare::pgbin::PgClients;
use crate::{progress, CliError};

/// The mix runs in about this many chunks, with a sample after each.
pub const CHUNKS: u64 = 20;

/// The knob the soak sets for every server: the buffer pool's memory is
/// faulted in at start, so that resident memory measures growth, not the
/// pool filling as the tables grow (PostgreSQL touches its shared buffers
/// as it first uses them too).
pub const PREFAULT: &str = "buffer.prefault";

/// The other knob it sets: commits return without waiting for their WAL
/// to be durable (`synchronous_commit = off`), so that the run measures
/// memory, not the disk's `fdatasync`s.
pub const ASYNC_COMMIT: &str = "wal.synchronous_commit";

/// Options of `turnstile soak`.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// Mix transactions per run (at least 20 × --clients: one per client and chunk).
    #[arg(long)]
    pub transactions: u64,
    /// pgbench clients (`-c`; threads `-j` are min(clients, 2)).
    #[arg(long, default_value_t = 8)]
    pub clients: usize,
    /// Run one profile (default: classic, then scalable).
    #[arg(long, value_enum)]
    pub profile: Option<ProfileArg>,
    /// `pgbench -i -s`: 100,000 accounts per unit.
    #[arg(long, default_value_t = 1)]
    pub scale: u32,
    /// Transactions of each transaction-id probe (select-only alone, then tpcb-like alone).
    #[arg(long, default_value_t = 1000)]
    pub probe_transactions: u64,
    /// Directory of pgbench, psql and pg_isready (default: the newest PostgreSQL installed).
    #[arg(long, value_name = "DIR")]
    pub pg_client_bin: Option<std::path::PathBuf>,
    /// Override one knob of the servers, e.g. `--set lock.partitions=64` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Print the JSON report.
    #[arg(long)]
    pub json: bool,
}

/// The settings of every run.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Mix transactions per run.
    pub transactions: u64,
    /// pgbench clients.
    pub clients: usize,
    /// `pgbench -i -s`.
    pub scale: u32,
    /// Transactions per transaction-id probe.
    pub probe_transactions: u64,
    /// `-t` of a chunk: transactions per client (the last chunk may run fewer).
    pub per_client_per_chunk: u64,
    /// `--set` for the servers.
    pub set: Vec<String>,
}

impl Plan {
    /// Checks the sizes and divides the mix into chunks.
    pub fn new(
        transactions: u64,
        clients: usize,
        scale: u32,
        probe_transactions: u64,
        set: Vec<String>,
    ) -> Result<Plan, CliError> {
        if clients == 0 || scale == 0 || probe_transactions == 0 {
            return Err("--clients, --scale and --probe-transactions must be positive".into());
        }
        let least = CHUNKS * clients as u64;
        if transactions < least {
            return Err(format!(
                "--transactions {transactions} is too few for {clients} clients: the mix runs in {CHUNKS} chunks \
                 of at least one transaction per client, so at least {least}"
            )
            .into());
        }
        let per_client_per_chunk = transactions / least;
        // The buffer pool is resident from the start, so that its filling
        // is not counted as growth, and commits do not wait for the disk
        // (a `--set` of either knob wins).
        let set = [format!("{PREFAULT}=true"), format!("{ASYNC_COMMIT}=false")].into_iter().chain(set).collect();
        Ok(Plan { transactions, clients, scale, probe_transactions, per_client_per_chunk, set })
    }

    /// Chunks of one run.
    pub fn chunks(&self) -> u64 {
        self.transactions.div_ceil(self.per_client_per_chunk * self.clients as u64)
    }
}

/// `turnstile soak`.
pub fn run(args: &Args) -> Result<(), CliError> {
    let plan = Plan::new(args.transactions, args.clients, args.scale, args.probe_transactions, args.set.clone())?;
    // The servers take the knobs as given: refuse a bad one before starting anything.
    for profile in BOTH_PROFILES {
        crate::build_config(profile.into(), None, &plan.set)?;
    }
    let profiles = args.profile.map_or_else(|| BOTH_PROFILES.to_vec(), |p| vec![p]);
    let clients = PgClients::find(args.pg_client_bin.as_deref())?;
    cleanup::install()?;
    let root = TempRoot::create()?;
    let bar = progress::points(plan.chunks() * 2 * profiles.len() as u64, "soak");
    progress::tick(&bar);
    let mut runs = Vec::new();
    let mut failure = None;
    'profiles: for &profile in &profiles {
        for long_snapshot in [false, true] {
            match run::run(&plan, profile, long_snapshot, root.path(), &clients, &bar) {
                Ok(r) => runs.push(r),
                Err(e) => {
                    failure = Some(e);
                    break 'profiles;
                }
            }
        }
    }
    bar.finish_and_clear();
    drop(root);
    if cleanup::stopping() {
        // The signal thread is tearing down and will exit the process.
        loop {
            std::thread::park();
        }
    }
    if let Some(e) = failure {
        return Err(e);
    }
    if args.json {
        println!("{}", serde_json::to_string(&report::to_json(&runs))?);
    } else {
        print!("{}", report::text(&runs));
    }
    Ok(())
}
