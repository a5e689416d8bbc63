//! The options of `turnstile run`.

use super::WorkloadId;
use crate::cli::{Overrides, ProfileArg, BOTH_PROFILES};
use crate::workload::in_process::Setup;
use crate::workload::{w1, w2, w3, w6, Mode, Param, Sizes};
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
    #[arg(long, value_delimiter = ',', default_values_t = w1::PARTITIONS.full.to_vec())]
    pub partitions: Vec<u32>,
    /// W1, W2, W5: query modes.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = Mode::BOTH)]
    pub mode: Vec<Mode>,
    /// W2: dimension counts.
    #[arg(long, value_delimiter = ',', default_values_t = w2::DIMENSIONS.full.to_vec())]
    pub dimensions: Vec<u32>,
    /// W3: index counts.
    #[arg(long, value_delimiter = ',', default_values_t = w3::INDEXES.full.to_vec())]
    pub indexes: Vec<u32>,
    /// W1, W5: scale (100 000 accounts per unit, as pgbench).
    #[arg(long, default_value_t = Sizes::IN_PROCESS.scale)]
    pub scale: f64,
    /// W4: rows per COPY transaction.
    #[arg(long, default_value_t = Sizes::IN_PROCESS.copy_rows)]
    pub batch: u32,
    /// W6: writer sessions among the clients (at least one reader is kept
    /// from two clients on).
    #[arg(long, value_delimiter = ',', default_values_t = w6::WRITERS.full.to_vec())]
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

impl Args {
    /// The values given for `param` (or its default).
    pub fn values(&self, param: Param) -> &[u32] {
        match param {
            Param::Partitions => &self.partitions,
            Param::Dimensions => &self.dimensions,
            Param::Indexes => &self.indexes,
            Param::Writers => &self.writers,
        }
    }

    /// What the workload's in-process form is asked to run.
    pub fn setup(&self) -> Setup {
        let sweep = self.workload.definition().sweep;
        Setup {
            values: sweep.map_or_else(Vec::new, |s| self.values(s.param).to_vec()),
            modes: self.mode.clone(),
            sizes: Sizes { scale: self.scale, copy_rows: self.batch.max(1), ..Sizes::IN_PROCESS },
        }
    }
}
