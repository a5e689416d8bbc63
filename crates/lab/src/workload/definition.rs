//! A workload's definition, as one value: its name and title, the
//! parameter it sweeps with every list a command uses by default, the query
//! modes it runs in, how `turnstile run` runs it in process, how `turnstile
//! compare` runs it through pgbench, and its special behaviours (a table
//! whose growth is the figure, a table of its own figures). Each `w?.rs`
//! holds one `DEFINITION`; `registry.rs` lists them. `run`, `compare`,
//! `micro alloc` and `reproduce` read these properties and name no workload.
//!
//! ```text
//! pub const DEFINITION: Definition = Definition { name: "W7", title: "…", sweep: None, … };
//! // plus `&w7::DEFINITION,` in registry.rs: nothing else changes.
//! ```

use super::in_process::{InProcess, Setup};
use super::through_pgbench::{PgbenchSetup, PgbenchVariant};
use super::{Index, Lookup, Mode, Sizes, Table};
use crate::cli::CliError;
use serde_json::Value as Json;

/// A workload.
pub struct Definition {
    /// `W1` …: the name on command lines and in reports.
    pub name: &'static str,
    /// One line for `--help` (the write-up it reproduces).
    pub summary: &'static str,
    /// The title of its report tables.
    pub title: &'static str,
    /// The parameter it sweeps, if any, and its lists.
    pub sweep: Option<Sweep>,
    /// The query modes it runs in.
    pub modes: Modes,
    /// The fewest clients a point may have (W6 keeps a reader beside its
    /// writers).
    pub min_clients: usize,
    /// How `turnstile run` runs it.
    pub in_process: InProcessForm,
    /// How `turnstile compare` runs it through pgbench; `None`: in process
    /// only.
    pub pgbench: Option<PgbenchForm>,
    /// The table whose growth is the figure (W4's COPY target): through
    /// pgbench it is emptied before each run, reported in MB/s from
    /// `pg_relation_size`, and not warmed up.
    pub growth_table: Option<&'static str>,
    /// The table of its own figures in `turnstile run`'s report.
    pub extra_table: Option<ExtraTable>,
}

/// The parameter a workload sweeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Param {
    /// W1: partitions of `pgbench_accounts`.
    Partitions,
    /// W2: dimension tables joined.
    Dimensions,
    /// W3: indexes on the table.
    Indexes,
    /// W6: writer sessions among the clients.
    Writers,
}

impl Param {
    /// Its key in reports and the name of its option (`--partitions`).
    pub fn key(self) -> &'static str {
        match self {
            Param::Partitions => "partitions",
            Param::Dimensions => "dimensions",
            Param::Indexes => "indexes",
            Param::Writers => "writers",
        }
    }
}

/// A swept parameter, its bounds, and the list each command runs by
/// default. They differ on purpose: in process a point is cheap, through
/// pgbench every point runs on four servers, and the quick plans are CI's.
#[derive(Clone, Copy, Debug)]
pub struct Sweep {
    /// The parameter.
    pub param: Param,
    /// The smallest value a point may have.
    pub min: u32,
    /// The largest.
    pub max: u32,
    /// `turnstile run`'s default, and `turnstile reproduce`'s.
    pub full: &'static [u32],
    /// `turnstile reproduce --quick`.
    pub quick: &'static [u32],
    /// `turnstile compare`'s default (and the repository's `workloads/`).
    pub pgbench: &'static [u32],
    /// `turnstile compare --quick`.
    pub pgbench_quick: &'static [u32],
    /// `turnstile micro alloc`.
    pub alloc: &'static [u32],
}

impl Sweep {
    /// `values`, each checked against the bounds.
    pub fn check(&self, values: &[u32]) -> Result<(), CliError> {
        match values.iter().find(|&&v| v < self.min || v > self.max) {
            Some(_) => Err(format!("--{} takes {} to {}", self.param.key(), self.min, self.max).into()),
            None => Ok(()),
        }
    }
}

/// Whether a form of the workload takes `--mode`, or runs in one mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModeUse {
    /// Every mode of `--mode`; the mode is one of the point's parameters.
    Swept,
    /// Always this mode (not reported as a parameter in process).
    Fixed(Mode),
}

/// The modes of each form.
#[derive(Clone, Copy, Debug)]
pub struct Modes {
    /// In process (`turnstile run`).
    pub in_process: ModeUse,
    /// Through pgbench (`turnstile compare`).
    pub pgbench: ModeUse,
    /// The modes of `turnstile reproduce --quick`, when swept in process
    /// (the full plan runs both).
    pub quick: &'static [Mode],
}

impl ModeUse {
    /// The modes a form runs, given `--mode`'s.
    pub fn pick(self, asked: &[Mode]) -> Vec<Mode> {
        match self {
            ModeUse::Swept => asked.to_vec(),
            ModeUse::Fixed(m) => vec![m],
        }
    }
}

/// How `turnstile run` runs a workload.
pub enum InProcessForm {
    /// Clients look one row up per transaction in a data set of the
    /// definition (`lookup_run.rs` runs them); `micro alloc` counts the
    /// allocator calls of the same lookup.
    Lookup {
        /// The data set of the point at this value of the sweep.
        dataset: fn(u32, Sizes) -> Dataset,
        /// Workload-level parameters for the report.
        params: fn(&Setup) -> Json,
    },
    /// Clients of the workload's own.
    Own(fn(Setup) -> Result<Box<dyn InProcess>, CliError>),
}

/// What a lookup workload loads and looks up.
pub struct Dataset {
    /// The tables, with their rows.
    pub tables: Vec<Table>,
    /// The secondary indexes.
    pub indexes: Vec<Index>,
    /// The query.
    pub lookup: Lookup,
    /// Its parameter.
    pub key: Key,
}

/// The lookup's parameter.
#[derive(Clone, Copy, Debug)]
pub enum Key {
    /// A random key in `1..=max`, sent as `$1`.
    Random(u32),
    /// Always this value, written into the query.
    Fixed(i32),
}

/// How `turnstile compare` runs a workload.
pub struct PgbenchForm {
    /// Its variants (databases, setup, scripts) for a run's lists.
    pub variants: fn(&PgbenchSetup<'_>) -> Vec<PgbenchVariant>,
    /// Its files in the repository's `workloads/` directory (the
    /// `pgbench` lists of the sweep, the write-ups' sizes).
    pub repository_files: fn() -> Vec<(String, String)>,
}

/// A table of a workload's own figures in `turnstile run`'s report: one
/// row per point, the columns read from the point's JSON.
pub struct ExtraTable {
    /// Its title.
    pub title: &'static str,
    /// Its columns after `variant`, `profile` and `clients`.
    pub columns: &'static [ExtraColumn],
    /// A note printed under it, given every point's JSON.
    pub note: Option<fn(&[Json]) -> String>,
}

/// A column of an [`ExtraTable`].
pub struct ExtraColumn {
    /// Its header.
    pub header: &'static str,
    /// The figure's JSON pointer in the point (`/extension/lock_wait_s`).
    pub pointer: &'static str,
    /// Decimals printed.
    pub digits: usize,
}
