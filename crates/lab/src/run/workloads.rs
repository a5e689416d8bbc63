//! The workloads: how each loads its data and what one transaction of
//! one client does.

use super::{Args, Extra, Txn};
use crate::cli::{CliError, ModeArg};
use crate::harness::RunOutcome;
use crate::workload::{pgbench, w1, w2, w3, w4, w5, Sizes};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use serde_json::{json, Value as Json};
use std::fmt;
use std::path::Path;
use std::sync::Arc;
use turnstile_engine::query::{Operand, Query, QueryMode};
use turnstile_engine::types::{encode_row, Value};
use turnstile_engine::{Engine, Session};
use turnstile_lock::LockMode;
use turnstile_storage::{ExtensionStats, Fork, RelFileId};
use turnstile_sync::sync::counter::AtomicBool;
use turnstile_sync::{Config, TrancheStats};

pub mod engine;
mod starvation;
use starvation::Starvation;
pub use starvation::StarvationFigures;

pub use crate::workload::WorkloadId;

/// One point's parameters, as reported: `{"mode":"prepared","partitions":100}`.
/// Fields are in alphabetical order, the order of the JSON report's keys
/// and of [`Params::label`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Params {
    /// W2: dimension tables joined.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dimensions: Option<u32>,
    /// W3: indexes on the table.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub indexes: Option<u32>,
    /// W1, W2, W5: the query mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<ModeArg>,
    /// W1: partitions of `pgbench_accounts`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partitions: Option<u32>,
    /// W4: the table loaded into.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table: Option<&'static str>,
    /// W6: writer sessions asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub writers: Option<u32>,
}

impl Params {
    /// `key=value` pairs joined by spaces (`mode=prepared partitions=100`).
    pub fn label(&self) -> String {
        let mut parts = Vec::new();
        let mut num = |key: &str, v: Option<u32>| {
            if let Some(v) = v {
                parts.push(format!("{key}={v}"));
            }
        };
        num("dimensions", self.dimensions);
        num("indexes", self.indexes);
        if let Some(m) = self.mode {
            parts.push(format!("mode={}", mode_name(m.into())));
        }
        if let Some(p) = self.partitions {
            parts.push(format!("partitions={p}"));
        }
        if let Some(t) = self.table {
            parts.push(format!("table={t}"));
        }
        if let Some(w) = self.writers {
            parts.push(format!("writers={w}"));
        }
        parts.join(" ")
    }
}

/// One point of a workload's parameter lists.
#[derive(Clone, Debug)]
pub struct Variant {
    /// The parameters, as reported.
    pub params: Params,
    partitions: u32,
    mode: QueryMode,
    count: u32,
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.params.label())
    }
}

/// A workload.
pub trait Workload: Sync {
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

/// The workload `args` asks for.
pub fn make(args: &Args) -> Result<Box<dyn Workload>, CliError> {
    let modes: Vec<QueryMode> = args.mode.iter().map(|&m| m.into()).collect();
    let sizes = Sizes { scale: args.scale, copy_rows: args.batch.max(1), ..Sizes::IN_PROCESS };
    let accounts = sizes.accounts();
    Ok(match args.workload {
        WorkloadId::W1 => Box::new(PartitionedJoin { accounts, partitions: args.partitions.clone(), modes }),
        WorkloadId::W2 => Box::new(StarJoin { sizes, dimensions: args.dimensions.clone(), modes }),
        WorkloadId::W3 => Box::new(ManyIndexes { indexes: args.indexes.clone() }),
        WorkloadId::W4 => Box::new(Extension::new(sizes.copy_rows)?),
        WorkloadId::W5 => Box::new(SelectOnly { accounts, modes }),
        WorkloadId::W6 => Box::new(Starvation::new(accounts, args.writers.clone())),
    })
}

/// Opens `dir` with the default configuration for loading, runs `body`
/// with DDL writes deferred, then flushes everything.
fn with_loader(dir: &Path, body: impl FnOnce(&mut Session) -> Result<(), CliError>) -> Result<(), CliError> {
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

fn variant(params: Params, partitions: u32, mode: QueryMode, count: u32) -> Variant {
    Variant { params, partitions, mode, count }
}

fn mode_name(m: QueryMode) -> &'static str {
    match m {
        QueryMode::Simple => "simple",
        QueryMode::Prepared => "prepared",
    }
}

/// The reported form of a query mode.
fn mode_param(m: QueryMode) -> Option<ModeArg> {
    Some(match m {
        QueryMode::Simple => ModeArg::Simple,
        QueryMode::Prepared => ModeArg::Prepared,
    })
}

/// A client running `query` in `mode` with one random integer parameter
/// in `1..=range`.
fn random_lookup<'a>(query: Query, mode: QueryMode, range: u32, seed: u64) -> Txn<'a> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut slot = None;
    let max = range.clamp(1, i32::MAX as u32) as i32;
    Box::new(move |s: &mut Session| {
        let v = rng.random_range(1..=max);
        s.run(mode, &query, &mut slot, &[Value::Int4(v)])?;
        Ok(())
    })
}

struct PartitionedJoin {
    accounts: u32,
    partitions: Vec<u32>,
    modes: Vec<QueryMode>,
}

impl Workload for PartitionedJoin {
    fn data_key(&self, v: &Variant) -> String {
        format!("partitions_{}", v.partitions)
    }

    fn params_json(&self) -> Json {
        json!({
            "accounts": self.accounts,
            "partitions": self.partitions,
            "branches": pgbench::branches_for(self.accounts),
        })
    }

    fn variants(&self) -> Result<Vec<Variant>, CliError> {
        let mut out = Vec::new();
        for &p in &self.partitions {
            for &m in &self.modes {
                let params = Params { partitions: Some(p), mode: mode_param(m), ..Params::default() };
                out.push(variant(params, p, m, 0));
            }
        }
        Ok(out)
    }

    fn load(&self, dir: &Path, v: &Variant) -> Result<(), CliError> {
        let tables = w1::tables(self.accounts, v.partitions, pgbench::branches_for(self.accounts));
        with_loader(dir, |s| engine::load(s, &tables, &w1::indexes()))
    }

    fn client<'a>(&'a self, c: &ClientCtx, v: &'a Variant) -> Result<Txn<'a>, CliError> {
        Ok(random_lookup(engine::query(&w1::lookup(), Operand::Param(1)), v.mode, self.accounts, c.seed))
    }
}

struct StarJoin {
    sizes: Sizes,
    dimensions: Vec<u32>,
    modes: Vec<QueryMode>,
}

impl Workload for StarJoin {
    fn data_key(&self, v: &Variant) -> String {
        format!("dimensions_{}", v.count)
    }

    fn params_json(&self) -> Json {
        json!({ "facts": self.sizes.fact_rows, "dimension_rows": self.sizes.dim_rows, "dimensions": self.dimensions })
    }

    fn variants(&self) -> Result<Vec<Variant>, CliError> {
        let mut out = Vec::new();
        for &d in &self.dimensions {
            if d == 0 || d > w2::MAX_DIMENSIONS {
                return Err(format!("--dimensions takes 1 to {}", w2::MAX_DIMENSIONS).into());
            }
            for &m in &self.modes {
                let params = Params { dimensions: Some(d), mode: mode_param(m), ..Params::default() };
                out.push(variant(params, 0, m, d));
            }
        }
        Ok(out)
    }

    fn load(&self, dir: &Path, v: &Variant) -> Result<(), CliError> {
        with_loader(dir, |s| engine::load(s, &w2::tables(v.count, self.sizes), &[]))
    }

    fn client<'a>(&'a self, c: &ClientCtx, v: &'a Variant) -> Result<Txn<'a>, CliError> {
        let q = engine::query(&w2::lookup(v.count), Operand::Param(1));
        Ok(random_lookup(q, v.mode, self.sizes.fact_rows, c.seed))
    }
}

struct ManyIndexes {
    indexes: Vec<u32>,
}

impl Workload for ManyIndexes {
    fn params_json(&self) -> Json {
        json!({ "columns": w3::COLUMNS, "indexes": self.indexes, "mode": "simple" })
    }

    fn variants(&self) -> Result<Vec<Variant>, CliError> {
        self.indexes
            .iter()
            .map(|&n| {
                if n == 0 || n > w3::COLUMNS {
                    Err(format!("--indexes takes 1 to {}", w3::COLUMNS).into())
                } else {
                    Ok(variant(Params { indexes: Some(n), ..Params::default() }, 0, QueryMode::Simple, n))
                }
            })
            .collect()
    }

    fn load(&self, dir: &Path, v: &Variant) -> Result<(), CliError> {
        with_loader(dir, |s| engine::load(s, &[w3::table()], &w3::indexes(v.count)))
    }

    fn client<'a>(&'a self, _c: &ClientCtx, _v: &'a Variant) -> Result<Txn<'a>, CliError> {
        let q = engine::query(&w3::lookup(), w3::VALUE);
        Ok(Box::new(move |s: &mut Session| {
            s.query(&q, &[])?;
            Ok(())
        }))
    }
}

struct Extension {
    /// The rows one transaction loads (W4's, as the engine takes them).
    rows: Vec<Value>,
    /// Bytes of one row as the heap encodes it.
    row_bytes: f64,
}

impl Extension {
    /// `batch` rows per transaction.
    fn new(batch: u32) -> Result<Extension, CliError> {
        let ty = engine::column_type(w4::table().columns[0].ty);
        let rows: Vec<Value> = w4::rows(batch).into_iter().map(Value::Text).collect();
        let first = rows.first().ok_or("--batch takes at least 1")?;
        let row_bytes =
            encode_row(&[ty], std::slice::from_ref(first)).map_err(|e| format!("W4 row: {e}"))?.len() as f64;
        Ok(Extension { rows, row_bytes })
    }

    fn batch(&self) -> u32 {
        self.rows.len() as u32
    }
}

impl Workload for Extension {
    fn params_json(&self) -> Json {
        json!({ "batch_rows": self.batch(), "row_bytes": self.row_bytes })
    }

    fn variants(&self) -> Result<Vec<Variant>, CliError> {
        Ok(vec![variant(Params { table: Some("unindexed"), ..Params::default() }, 0, QueryMode::Simple, 0)])
    }

    fn load(&self, dir: &Path, _v: &Variant) -> Result<(), CliError> {
        with_loader(dir, |s| engine::load(s, &[w4::table()], &[]))
    }

    /// Empties the table, so that every point — each profile at each
    /// client count — extends the same empty relation. Otherwise the table
    /// only grows over the run and each point writes into a bigger file and
    /// a bigger page cache than the one before: measured on the 2-core
    /// development VM, three 16-client points in a row fell from 810 to
    /// 220 MB/s under `scalable` and from 550 to 200 MB/s under `classic`,
    /// the time going to the kernel (`copy_folio_from_iter_atomic`, the
    /// inode's rwsem) — so a point's figure depended on how much the points
    /// before it had written, not only on its profile.
    fn before_point(&self, engine: &Arc<Engine>, _v: &Variant) -> Result<(), CliError> {
        let mut s = engine.session()?;
        s.begin()?;
        let table = s.lock_table(w4::TABLE, LockMode::AccessExclusive)?;
        let file = RelFileId::new(s.database(), table.rel.id);
        engine.pool().truncate_relation(engine.smgr(), file, Fork::Main, 0)?;
        s.commit()?;
        Ok(())
    }

    fn writes(&self) -> bool {
        true
    }

    fn client<'a>(&'a self, _c: &ClientCtx, _v: &'a Variant) -> Result<Txn<'a>, CliError> {
        Ok(Box::new(move |s: &mut Session| {
            s.insert_many(w4::TABLE, self.rows.iter().map(|r| vec![r.clone()]))?;
            Ok(())
        }))
    }

    fn extra(&self, point: &PointFigures<'_>) -> Result<Extra, CliError> {
        let (before, after) = &point.extension;
        let outcome = point.outcome;
        let secs = outcome.elapsed.as_secs_f64().max(1e-9);
        let rows = outcome.transactions as f64 * f64::from(self.batch());
        let d = |a: std::time::Duration, b: std::time::Duration| a.saturating_sub(b).as_secs_f64();
        let held = d(after.lock_held, before.lock_held);
        let figures = ExtensionFigures {
            mb_per_s: rows * self.row_bytes / secs / 1e6,
            extension: ExtensionPhases {
                lock_wait_s: d(after.lock_wait, before.lock_wait),
                lock_held_s: held,
                filesystem_s: d(after.filesystem, before.filesystem),
                buffer_search_s: d(after.buffer_search, before.buffer_search),
                extensions: after.extensions.saturating_sub(before.extensions),
                blocks_added: after.blocks_added.saturating_sub(before.blocks_added),
            },
            held_seconds_per_second: held / secs,
        };
        Ok(Extra { extension: Some(figures), ..Extra::default() })
    }
}

/// W4's figures of a point.
#[derive(Clone, Debug, Serialize)]
pub struct ExtensionFigures {
    /// Rows loaded, in MB of encoded rows per second.
    pub mb_per_s: f64,
    /// The extension phases over the measured phase, summed over clients.
    pub extension: ExtensionPhases,
    /// Seconds the extension lock was held per second of the phase.
    pub held_seconds_per_second: f64,
}

/// Where relation extension spent its time (Freund 2020's breakdown).
#[derive(Clone, Debug, Serialize)]
pub struct ExtensionPhases {
    /// Waiting for the extension lock.
    pub lock_wait_s: f64,
    /// Holding it.
    pub lock_held_s: f64,
    /// In the filesystem (`pwritev`, `fallocate`).
    pub filesystem_s: f64,
    /// Finding and clearing victim buffers.
    pub buffer_search_s: f64,
    /// Extensions done.
    pub extensions: u64,
    /// Blocks added by them.
    pub blocks_added: u64,
}

struct SelectOnly {
    accounts: u32,
    modes: Vec<QueryMode>,
}

impl Workload for SelectOnly {
    fn data_key(&self, _v: &Variant) -> String {
        "accounts".into()
    }

    fn params_json(&self) -> Json {
        json!({ "accounts": self.accounts })
    }

    fn variants(&self) -> Result<Vec<Variant>, CliError> {
        Ok(self.modes.iter().map(|&m| variant(Params { mode: mode_param(m), ..Params::default() }, 0, m, 0)).collect())
    }

    fn load(&self, dir: &Path, _v: &Variant) -> Result<(), CliError> {
        with_loader(dir, |s| engine::load(s, &w5::tables(self.accounts), &[]))
    }

    fn client<'a>(&'a self, c: &ClientCtx, v: &'a Variant) -> Result<Txn<'a>, CliError> {
        Ok(random_lookup(engine::query(&w5::lookup(), Operand::Param(1)), v.mode, self.accounts, c.seed))
    }
}
