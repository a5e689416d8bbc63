//! The options of `turnstile run`.

use super::WorkloadId;
use crate::cli::{ModeArg, Overrides, ProfileArg, BOTH_PROFILES};
use std::path::PathBuf;

/// Options of `turnstile run`.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// The workload: W1 (partitioned join), W2 (star join), W3 (many
    /// indexes), W4 (relation extension), W5 (select-only), W6 (LWLock
    /// starvation).
    pub workload: WorkloadId,
    /// Profiles to run, alternating.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = BOTH_PROFILES)]
    pub profile: Vec<ProfileArg>,
    /// Knobs overridden in every profile, e.g. `--set lock.fast_path_slots=16`.
    #[command(flatten)]
    pub overrides: Overrides,
    /// Client counts (oversubscribing the cores on purpose).
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 2, 8, 32])]
    pub clients: Vec<usize>,
    /// Measured seconds per point.
    #[arg(long, default_value_t = 2.0)]
    pub duration: f64,
    /// Warm-up seconds per point.
    #[arg(long, default_value_t = 0.5)]
    pub warmup: f64,
    /// Random seed (keys looked up, rows generated).
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// W1: partition counts.
    #[arg(long, value_delimiter = ',', default_values_t = vec![0, 10, 100, 1000])]
    pub partitions: Vec<u32>,
    /// W1, W2, W5: query modes.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [ModeArg::Simple, ModeArg::Prepared])]
    pub mode: Vec<ModeArg>,
    /// W2: dimension counts.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 10, 100])]
    pub dimensions: Vec<u32>,
    /// W3: index counts.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 10, 60])]
    pub indexes: Vec<u32>,
    /// W1, W5: scale (100 000 accounts per unit, as pgbench).
    #[arg(long, default_value_t = 0.1)]
    pub scale: f64,
    /// W4: rows per COPY transaction.
    #[arg(long, default_value_t = 1000)]
    pub batch: u32,
    /// W6: writer sessions among the clients (at least one reader is kept
    /// from two clients on).
    #[arg(long, value_delimiter = ',', default_values_t = vec![2])]
    pub writers: Vec<u32>,
    /// Write a speedup heat map and a throughput chart (PNG) into this directory.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// Data directory (default: a temporary one, removed afterwards).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Print the JSON report (the output contract).
    #[arg(long)]
    pub json: bool,
    /// Print CSV (one line per point) instead of tables.
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
}
