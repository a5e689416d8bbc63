//! The in-process form of a workload, as `turnstile run` drives it: the
//! [`InProcess`] trait (its variants, how it loads a variant's data, what
//! one client's transaction does, its own figures), the typed parameters
//! of a point, and the helpers every form shares.

use super::{Mode, Sizes};
use crate::cli::CliError;
use crate::harness::RunOutcome;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::sync::Arc;
use turnstile_engine::query::{Query, QueryMode};
use turnstile_engine::types::Value;
use turnstile_engine::{Engine, Session};
use turnstile_storage::ExtensionStats;
use turnstile_sync::sync::counter::AtomicBool;
use turnstile_sync::{Config, TrancheStats};

/// What one client of a workload does per transaction.
pub type Txn<'a> = Box<dyn FnMut(&mut Session) -> Result<(), CliError> + 'a>;

/// What `turnstile run` asks of a workload: the values of its sweep, the
/// query modes, the data sizes.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The values of the workload's swept parameter (empty if it has none).
    pub values: Vec<u32>,
    /// `--mode`.
    pub modes: Vec<Mode>,
    /// The data sizes.
    pub sizes: Sizes,
}

/// A parameter's value, as reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ParamValue {
    /// A count (`partitions`, `dimensions` …).
    Count(u32),
    /// A name (`mode`, `table`).
    Name(&'static str),
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Count(n) => write!(f, "{n}"),
            ParamValue::Name(s) => f.write_str(s),
        }
    }
}

/// One point's parameters, as reported: `{"mode":"prepared","partitions":100}`,
/// keys in alphabetical order (the JSON report's and [`Params::label`]'s).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Params(BTreeMap<&'static str, ParamValue>);

impl Params {
    /// These parameters and `key = value`.
    pub fn with(mut self, key: &'static str, value: ParamValue) -> Params {
        self.0.insert(key, value);
        self
    }

    /// The count under `key`.
    pub fn count(&self, key: &str) -> Option<u32> {
        match self.0.get(key) {
            Some(ParamValue::Count(n)) => Some(*n),
            _ => None,
        }
    }

    /// The value under `key`, whatever it is.
    pub fn get(&self, key: &str) -> Option<ParamValue> {
        self.0.get(key).copied()
    }

    /// `key=value` pairs joined by spaces (`mode=prepared partitions=100`).
    pub fn label(&self) -> String {
        self.0.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
    }
}

/// One point of a workload's parameter lists.
#[derive(Clone, Debug)]
pub struct Variant {
    /// The parameters, as reported.
    pub params: Params,
    /// The value of the swept parameter (0 if none).
    pub value: u32,
    /// The query mode.
    pub mode: Mode,
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.params.label())
    }
}

/// A workload's own figures of a point, flattened into the point's JSON
/// object beside the common ones.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Extra {
    /// Mean planning time per transaction, for workloads that plan.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub planning_us: Option<f64>,
    /// The workload's own figures (W4's extension phases, W6's waits).
    #[serde(flatten)]
    pub own: Map<String, Json>,
}

impl Extra {
    /// `figures`' fields as the workload's own.
    pub fn own(figures: &impl Serialize) -> Result<Extra, CliError> {
        match serde_json::to_value(figures)? {
            Json::Object(own) => Ok(Extra { own, ..Extra::default() }),
            other => Err(format!("a workload's figures must be an object, not {other}").into()),
        }
    }
}

/// A workload as `turnstile run` drives it.
pub trait InProcess: Sync {
    /// Workload-level parameters for the report.
    fn params_json(&self) -> Json;
    /// The variants to run.
    fn variants(&self) -> Result<Vec<Variant>, CliError>;
    /// Which data directory the variant runs on: variants with the same key
    /// share their data (e.g. W1's two modes over the same partitions).
    fn data_key(&self, variant: &Variant) -> String {
        variant.params.label().replace([' ', '='], "_")
    }
    /// Loads the variant's data into a fresh directory.
    fn load(&self, dir: &Path, variant: &Variant) -> Result<(), CliError>;
    /// Called with each point's engine before its clients start.
    fn before_point(&self, _engine: &Arc<Engine>, _variant: &Variant) -> Result<(), CliError> {
        Ok(())
    }
    /// Called on the coordinating thread when the measured phase starts
    /// (`true`) and ends (`false`), while the clients run.
    fn on_measure(&self, _engine: &Arc<Engine>, _start: bool) -> Result<(), CliError> {
        Ok(())
    }
    /// Whether the clients write: the point's engine is then flushed before
    /// it closes, so the next point opens consistent data.
    fn writes(&self) -> bool {
        false
    }
    /// One client's transaction.
    fn client<'a>(&'a self, ctx: &ClientCtx, variant: &'a Variant) -> Result<Txn<'a>, CliError>;
    /// Workload-specific figures of a point.
    fn extra(&self, _point: &PointFigures<'_>) -> Result<Extra, CliError> {
        Ok(Extra::default())
    }
}

/// What a client is told when it starts.
pub struct ClientCtx {
    /// This client's number, `0..clients`.
    pub index: usize,
    /// Clients in the point.
    pub clients: usize,
    /// This client's random seed (derived from `--seed` and `index`).
    pub seed: u64,
    /// True during the measured phase.
    pub measuring: Arc<AtomicBool>,
}

/// What a workload gets to compute its own figures of a point.
pub struct PointFigures<'a> {
    /// The harness's outcome.
    pub outcome: &'a RunOutcome,
    /// Extension totals at the start and at the end of the measured phase.
    pub extension: (ExtensionStats, ExtensionStats),
    /// `BufferMapping` tranche counters over the measured phase (all modes).
    pub mapping: TrancheStats,
}

/// Opens `dir` with the default configuration for loading, runs `body`
/// with DDL writes deferred, then flushes everything.
pub fn with_loader(dir: &Path, body: impl FnOnce(&mut Session) -> Result<(), CliError>) -> Result<(), CliError> {
    let engine = Engine::open(dir, Config::default())?;
    engine.catalog().defer_writes(true)?;
    {
        let mut s = engine.session()?;
        body(&mut s)?;
    }
    engine.catalog().defer_writes(false)?;
    engine.flush()?;
    Ok(())
}

/// A client running `query` in `mode` with one random integer parameter
/// in `1..=range`.
pub fn random_lookup<'a>(query: Query, mode: QueryMode, range: u32, seed: u64) -> Txn<'a> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut slot = None;
    let max = range.clamp(1, i32::MAX as u32) as i32;
    Box::new(move |s: &mut Session| {
        let v = rng.random_range(1..=max);
        s.run(mode, &query, &mut slot, &[Value::Int4(v)])?;
        Ok(())
    })
}
