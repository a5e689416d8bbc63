//! The workloads: how each loads its data and what one transaction of
//! one client does.

use super::{Args, Extra, Txn};
use crate::cli::{CliError, ModeArg};
use crate::harness::RunOutcome;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use serde_json::{json, Value as Json};
use std::fmt;
use std::path::Path;
use std::sync::Arc;
use turnstile_engine::catalog::{PartitionBound, PartitionStrategy};
use turnstile_engine::query::{Col, Operand, Query, QueryMode};
use turnstile_engine::types::{ColumnType, Value};
use turnstile_engine::{Engine, Session};
use turnstile_lock::LockMode;
use turnstile_storage::{ExtensionStats, Fork, RelFileId};
use turnstile_sync::sync::counter::AtomicBool;
use turnstile_sync::{Config, TrancheStats};

mod starvation;
use starvation::Starvation;
pub use starvation::StarvationFigures;

/// The workloads (docs/architecture.md, "The lab").
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
#[value(rename_all = "UPPER")]
pub enum WorkloadId {
    /// Partitioned join (Vondra 2024).
    W1,
    /// Star join (Vondra 2024).
    W2,
    /// Many indexes (Geier 2022).
    W3,
    /// Relation extension (Freund 2020).
    W4,
    /// Select-only, pgbench -S (Haas 2011).
    W5,
    /// LWLock starvation: readers through a hot B-tree root while writers
    /// insert and extend (Postgres Pro 2018).
    W6,
}

impl WorkloadId {
    /// `W1` …
    pub fn name(self) -> &'static str {
        match self {
            WorkloadId::W1 => "W1",
            WorkloadId::W2 => "W2",
            WorkloadId::W3 => "W3",
            WorkloadId::W4 => "W4",
            WorkloadId::W5 => "W5",
            WorkloadId::W6 => "W6",
        }
    }

    /// A title for reports.
    pub fn title(self) -> &'static str {
        match self {
            WorkloadId::W1 => "W1 partitioned join (Vondra 2024): accounts by aid_parent JOIN branches",
            WorkloadId::W2 => "W2 star join (Vondra 2024): one fact row JOIN every dimension",
            WorkloadId::W3 => "W3 many indexes (Geier 2022): SELECT * FROM synth WHERE col5 = 42",
            WorkloadId::W4 => "W4 relation extension (Freund 2020): COPY into one unindexed table",
            WorkloadId::W5 => "W5 select-only (Haas 2011): pgbench -S",
            WorkloadId::W6 => {
                "W6 LWLock starvation (Postgres Pro 2018): point lookups through a hot B-tree root while writers insert"
            }
        }
    }

    /// Every workload, in report order.
    pub const ALL: [WorkloadId; 6] =
        [WorkloadId::W1, WorkloadId::W2, WorkloadId::W3, WorkloadId::W4, WorkloadId::W5, WorkloadId::W6];
}

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
    /// W1: partitions of `accounts`.
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
    let accounts = ((args.scale * 100_000.0).round() as i64).clamp(1, i64::from(i32::MAX)) as i32;
    Ok(match args.workload {
        WorkloadId::W1 => Box::new(PartitionedJoin { accounts, partitions: args.partitions.clone(), modes }),
        WorkloadId::W2 => Box::new(StarJoin { dimensions: args.dimensions.clone(), modes }),
        WorkloadId::W3 => Box::new(ManyIndexes { indexes: args.indexes.clone() }),
        WorkloadId::W4 => Box::new(Extension { batch: args.batch.max(1) }),
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

/// Creates pgbench-like `accounts` (optionally range-partitioned on `aid`,
/// with a primary key and, if asked, an index on `aid_parent`) holding
/// `total` rows with `aid_parent = aid`, and `branches` with a primary key.
pub fn load_accounts(
    s: &mut Session,
    total: i32,
    partitions: u32,
    aid_parent_index: bool,
    branches: i32,
) -> Result<(), CliError> {
    let cols = [
        ("aid", ColumnType::Int4),
        ("bid", ColumnType::Int4),
        ("abalance", ColumnType::Int4),
        ("filler", ColumnType::Text),
        ("aid_parent", ColumnType::Int4),
    ];
    if partitions == 0 {
        s.create_table("accounts", &cols, None)?;
    } else {
        s.create_table("accounts", &cols, Some((PartitionStrategy::Range, "aid")))?;
        let p = partitions as i64;
        let width = (i64::from(total) + p - 1) / p;
        for i in 0..p {
            let bound = PartitionBound::Range { from: i * width, to: (i + 1) * width };
            s.create_partition("accounts", &format!("accounts_{}", i + 1), bound)?;
        }
    }
    s.create_index("accounts", "accounts_pkey", &["aid"], true)?;
    if aid_parent_index {
        s.create_index("accounts", "accounts_aid_parent", &["aid_parent"], false)?;
    }
    let filler = " ".repeat(84);
    s.insert_many(
        "accounts",
        (0..total).map(|aid| {
            vec![
                Value::Int4(aid),
                Value::Int4(aid % branches),
                Value::Int4(0),
                Value::Text(filler.clone()),
                Value::Int4(aid),
            ]
        }),
    )?;
    s.create_table(
        "branches",
        &[("bid", ColumnType::Int4), ("bbalance", ColumnType::Int4), ("filler", ColumnType::Text)],
        None,
    )?;
    s.create_index("branches", "branches_pkey", &["bid"], true)?;
    s.insert_many(
        "branches",
        (0..branches).map(|b| vec![Value::Int4(b), Value::Int4(0), Value::Text(" ".repeat(88))]),
    )?;
    Ok(())
}

/// The W1 query: the account with `aid_parent = $1`, joined with its branch.
pub fn w1_query() -> Query {
    Query::from("accounts")
        .join("branches", Col::of("accounts", "bid"), "bid")
        .filter(Col::of("accounts", "aid_parent"), Operand::Param(1))
        .select([Col::of("accounts", "aid"), Col::of("accounts", "abalance"), Col::of("branches", "bbalance")])
}

/// A client running `query` in `mode` with one random integer parameter.
fn random_lookup<'a>(query: Query, mode: QueryMode, range: i32, seed: u64) -> Txn<'a> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut slot = None;
    Box::new(move |s: &mut Session| {
        let v = rng.random_range(0..range.max(1));
        s.run(mode, &query, &mut slot, &[Value::Int4(v)])?;
        Ok(())
    })
}

struct PartitionedJoin {
    accounts: i32,
    partitions: Vec<u32>,
    modes: Vec<QueryMode>,
}

impl Workload for PartitionedJoin {
    fn data_key(&self, v: &Variant) -> String {
        format!("partitions_{}", v.partitions)
    }

    fn params_json(&self) -> Json {
        json!({ "accounts": self.accounts, "partitions": self.partitions, "branches": 1 + self.accounts / 100_000 })
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
        with_loader(dir, |s| load_accounts(s, self.accounts, v.partitions, true, 1 + self.accounts / 100_000))
    }

    fn client<'a>(&'a self, c: &ClientCtx, v: &'a Variant) -> Result<Txn<'a>, CliError> {
        Ok(random_lookup(w1_query(), v.mode, self.accounts, c.seed))
    }
}

struct StarJoin {
    dimensions: Vec<u32>,
    modes: Vec<QueryMode>,
}

const FACTS: i32 = 10_000;
const DIM_ROWS: i32 = 100;

impl Workload for StarJoin {
    fn data_key(&self, v: &Variant) -> String {
        format!("dimensions_{}", v.count)
    }

    fn params_json(&self) -> Json {
        json!({ "facts": FACTS, "dimension_rows": DIM_ROWS, "dimensions": self.dimensions })
    }

    fn variants(&self) -> Result<Vec<Variant>, CliError> {
        let mut out = Vec::new();
        for &d in &self.dimensions {
            if d == 0 || d > 200 {
                return Err("--dimensions takes 1 to 200".into());
            }
            for &m in &self.modes {
                let params = Params { dimensions: Some(d), mode: mode_param(m), ..Params::default() };
                out.push(variant(params, 0, m, d));
            }
        }
        Ok(out)
    }

    fn load(&self, dir: &Path, v: &Variant) -> Result<(), CliError> {
        with_loader(dir, |s| {
            let names: Vec<String> = (1..=v.count).map(|i| format!("d{i}")).collect();
            let mut cols: Vec<(&str, ColumnType)> = vec![("id", ColumnType::Int4)];
            cols.extend(names.iter().map(|n| (n.as_str(), ColumnType::Int4)));
            cols.push(("val", ColumnType::Int8));
            s.create_table("fact", &cols, None)?;
            s.insert_many(
                "fact",
                (0..FACTS).map(|id| {
                    let mut row = vec![Value::Int4(id)];
                    row.extend((1..=v.count as i32).map(|d| Value::Int4((id * 31 + d) % DIM_ROWS)));
                    row.push(Value::Int8(i64::from(id)));
                    row
                }),
            )?;
            s.create_index("fact", "fact_pkey", &["id"], true)?;
            for i in 1..=v.count {
                let t = format!("dim{i}");
                s.create_table(&t, &[("id", ColumnType::Int4), ("label", ColumnType::Text)], None)?;
                s.insert_many(&t, (0..DIM_ROWS).map(|id| vec![Value::Int4(id), Value::Text(format!("{t}-{id}"))]))?;
                s.create_index(&t, &format!("{t}_pkey"), &["id"], true)?;
            }
            Ok(())
        })
    }

    fn client<'a>(&'a self, c: &ClientCtx, v: &'a Variant) -> Result<Txn<'a>, CliError> {
        let seed = c.seed;
        let mut q = Query::from("fact").filter(Col::of("fact", "id"), Operand::Param(1));
        for i in 1..=v.count {
            q = q.join(format!("dim{i}"), Col::of("fact", format!("d{i}")), "id");
        }
        Ok(random_lookup(q.select([Col::of("fact", "val")]), v.mode, FACTS, seed))
    }
}

struct ManyIndexes {
    indexes: Vec<u32>,
}

impl Workload for ManyIndexes {
    fn params_json(&self) -> Json {
        json!({ "columns": 60, "indexes": self.indexes, "mode": "simple" })
    }

    fn variants(&self) -> Result<Vec<Variant>, CliError> {
        self.indexes
            .iter()
            .map(|&n| {
                if n == 0 || n > 60 {
                    Err("--indexes takes 1 to 60".into())
                } else {
                    Ok(variant(Params { indexes: Some(n), ..Params::default() }, 0, QueryMode::Simple, n))
                }
            })
            .collect()
    }

    fn load(&self, dir: &Path, v: &Variant) -> Result<(), CliError> {
        with_loader(dir, |s| {
            let names: Vec<String> = (1..=60).map(|i| format!("col{i}")).collect();
            let cols: Vec<(&str, ColumnType)> = names.iter().map(|n| (n.as_str(), ColumnType::Int4)).collect();
            s.create_table("synth", &cols, None)?;
            // `col5` first, so every variant has the index the query can use.
            for c in std::iter::once(5).chain((1..=60).filter(|&c| c != 5)).take(v.count as usize) {
                s.create_index("synth", &format!("synth_col{c}"), &[&format!("col{c}")], false)?;
            }
            Ok(())
        })
    }

    fn client<'a>(&'a self, _c: &ClientCtx, _v: &'a Variant) -> Result<Txn<'a>, CliError> {
        let q = Query::from("synth").filter("col5", 42);
        Ok(Box::new(move |s: &mut Session| {
            s.query(&q, &[])?;
            Ok(())
        }))
    }
}

struct Extension {
    batch: u32,
}

/// The table W4's clients load into.
const W4_TABLE: &str = "copy_target";

/// Bytes of one W4 row as encoded (header, two columns, 100-byte filler).
const W4_ROW_BYTES: f64 = 1.0 + 2.0 + 1.0 + 4.0 + 4.0 + 100.0;

impl Workload for Extension {
    fn params_json(&self) -> Json {
        json!({ "batch_rows": self.batch, "row_bytes": W4_ROW_BYTES })
    }

    fn variants(&self) -> Result<Vec<Variant>, CliError> {
        Ok(vec![variant(Params { table: Some("unindexed"), ..Params::default() }, 0, QueryMode::Simple, 0)])
    }

    fn load(&self, dir: &Path, _v: &Variant) -> Result<(), CliError> {
        with_loader(dir, |s| {
            s.create_table(W4_TABLE, &[("aid", ColumnType::Int4), ("filler", ColumnType::Text)], None)?;
            Ok(())
        })
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
        let table = s.lock_table(W4_TABLE, LockMode::AccessExclusive)?;
        let file = RelFileId::new(s.database(), table.rel.id);
        engine.pool().truncate_relation(engine.smgr(), file, Fork::Main, 0)?;
        s.commit()?;
        Ok(())
    }

    fn writes(&self) -> bool {
        true
    }

    fn client<'a>(&'a self, c: &ClientCtx, _v: &'a Variant) -> Result<Txn<'a>, CliError> {
        let seed = c.seed;
        let batch = self.batch;
        let filler = "x".repeat(100);
        let mut next = (seed % 1_000_000) as i32;
        Ok(Box::new(move |s: &mut Session| {
            let start = next;
            next = next.wrapping_add(batch as i32);
            s.insert_many(
                W4_TABLE,
                (0..batch as i32).map(|i| vec![Value::Int4(start.wrapping_add(i)), Value::Text(filler.clone())]),
            )?;
            Ok(())
        }))
    }

    fn extra(&self, point: &PointFigures<'_>) -> Result<Extra, CliError> {
        let (before, after) = &point.extension;
        let outcome = point.outcome;
        let secs = outcome.elapsed.as_secs_f64().max(1e-9);
        let rows = outcome.transactions as f64 * f64::from(self.batch);
        let d = |a: std::time::Duration, b: std::time::Duration| a.saturating_sub(b).as_secs_f64();
        let held = d(after.lock_held, before.lock_held);
        let figures = ExtensionFigures {
            mb_per_s: rows * W4_ROW_BYTES / secs / 1e6,
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
    accounts: i32,
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
        with_loader(dir, |s| load_accounts(s, self.accounts, 0, false, 1 + self.accounts / 100_000))
    }

    fn client<'a>(&'a self, c: &ClientCtx, v: &'a Variant) -> Result<Txn<'a>, CliError> {
        let q = Query::from("accounts").filter("aid", Operand::Param(1)).select(["abalance"]);
        Ok(random_lookup(q, v.mode, self.accounts, c.seed))
    }
}
