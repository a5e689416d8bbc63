//! Micro-benchmarks: single primitives timed against a reference primitive
//! in the same run, reported as ratios (docs/architecture.md, "The lab").

use crate::cli::CliError;
use crate::report::Section;
use clap::Subcommand;

pub mod alloc;
pub mod btree;
pub mod extend;
pub mod fk;
pub mod lock;
pub mod lwlock;
pub mod memory;
pub mod nextval;
pub mod plan;
pub mod snapshot;
pub mod wal;

/// The options every micro-benchmark takes (`#[command(flatten)]`).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct Output {
    /// Print the JSON report (the output contract) instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// The micro-benchmarks.
#[derive(Subcommand, Debug)]
pub enum MicroBench {
    /// Lightweight locks: uncontended cost against `parking_lot::RwLock`,
    /// and a writer-starvation probe under both policies (Postgres Pro 2018).
    Lwlock(lwlock::Args),
    /// Heavyweight locks: fast-path and shared-table cost against
    /// `parking_lot::Mutex`, and transactions locking R relations under
    /// both profiles (Vondra 2024, Haas 2011).
    Lock(lock::Args),
    /// Relation extension: pages appended per second through a small
    /// buffer pool under both extension strategies, against raw 128 kB
    /// `pwritev`, with the lock wait / held / filesystem / buffer search
    /// breakdown (Freund 2020).
    Extend(extend::Args),
    /// Planning with 1, 10 or 60 indexes, with and without the relation
    /// cache's index prefilter: planning time and locks per query (Geier 2022).
    Plan(plan::Args),
    /// B-tree: T inserters and T readers on one index under both
    /// `btree.leaf_insert_lock` settings; inserts/s, lookups/s and
    /// content-lock waits per insert (Postgres Pro 2018).
    Btree(btree::Args),
    /// Per-query memory of a W1-style query over 100 partitions with and
    /// without the block cache: blocks from cache vs allocator, minor page
    /// faults per query (Vondra 2024).
    Memory(memory::Args),
    /// Allocator calls per execution of each seed query (W1, W2, W3, W5)
    /// under both profiles, counted by the binary's counting allocator
    /// (Vondra 2024: per-query memory round trips to `malloc`).
    Alloc(alloc::Args),
    /// Snapshots: the cost of taking one under `procarray` (classic) and
    /// `csn` (scalable) with 1 to 256 idle sessions connected, and with
    /// sessions committing meanwhile; ratios to the one-session cost.
    Snapshot(snapshot::Args),
    /// Sequences: T sessions calling `nextval` on one sequence under both
    /// profiles; calls/s and shared-lock acquisitions per call (classic's
    /// lock per call against scalable's blocks of values).
    Nextval(nextval::Args),
    /// The write-ahead log: T threads inserting records of B bytes, every
    /// 10th a commit, under both `wal.insert` profiles; records/s, shared
    /// acquisitions per record and fdatasyncs (PostgreSQL 15's locks
    /// against a lock-free reservation, copy and WAL writer).
    Wal(wal::Args),
    /// Foreign keys: T sessions inserting children of one hot parent row
    /// under both profiles; inserts/s and acquisitions of the shared
    /// row-lock table per insert (classic's key-share lock in the shared
    /// table against scalable's per-backend slots).
    Fk(fk::Args),
}

/// Runs one micro-benchmark and prints its report.
pub fn run(bench: MicroBench) -> Result<(), CliError> {
    let section = match bench {
        MicroBench::Lwlock(args) => {
            let json = args.output.json;
            (lwlock::run(&args)?, json)
        }
        MicroBench::Lock(args) => {
            let json = args.output.json;
            (lock::run(&args)?, json)
        }
        MicroBench::Extend(args) => {
            let json = args.output.json;
            (extend::run(&args)?, json)
        }
        MicroBench::Plan(args) => {
            let json = args.output.json;
            (plan::run(&args)?, json)
        }
        MicroBench::Memory(args) => {
            let json = args.output.json;
            (memory::run(&args)?, json)
        }
        MicroBench::Btree(args) => {
            let json = args.output.json;
            (btree::run(&args)?, json)
        }
        MicroBench::Alloc(args) => {
            let json = args.output.json;
            (alloc::run(&args)?, json)
        }
        MicroBench::Snapshot(args) => {
            let json = args.output.json;
            (snapshot::run(&args)?, json)
        }
        MicroBench::Nextval(args) => {
            let json = args.output.json;
            (nextval::run(&args)?, json)
        }
        MicroBench::Wal(args) => {
            let json = args.output.json;
            (wal::run(&args)?, json)
        }
        MicroBench::Fk(args) => {
            let json = args.output.json;
            (fk::run(&args)?, json)
        }
    };
    section.0.print(section.1)
}

/// The sections `turnstile reproduce` prints from the micro-benchmarks.
pub fn reproduce_sections() -> Result<Vec<Section>, CliError> {
    Ok(vec![
        lwlock::run(&lwlock::Args::reproduce())?,
        lock::run(&lock::Args::reproduce())?,
        extend::run(&extend::Args::reproduce())?,
        plan::run(&plan::Args::reproduce())?,
        btree::run(&btree::Args::reproduce())?,
        memory::run(&memory::Args::reproduce())?,
        snapshot::run(&snapshot::Args::reproduce())?,
        nextval::run(&nextval::Args::reproduce())?,
        wal::run(&wal::Args::reproduce())?,
        fk::run(&fk::Args::reproduce())?,
        alloc::run(&alloc::Args::reproduce())?,
    ])
}
