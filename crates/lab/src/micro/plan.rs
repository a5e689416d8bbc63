//! `turnstile micro plan`: planning with many indexes (Geier 2022).
//!
//! An empty table with 60 `int4` columns and 1, 10 or 60 single-column
//! indexes (always including one on `col5`, so every variant has an index
//! to use; W3's tables, `crate::workload::w3`); `SELECT * FROM synth_table
//! WHERE col5 = 42` in simple mode (planned
//! every time); both `planner.index_prefilter` settings; T sessions.
//! Reported: planning time p50/p99, queries per second, and relation locks
//! taken per query — without the prefilter the planner opens and locks
//! every index (61 locks with 60 indexes, as PostgreSQL does); with it, two.

use crate::cli::CliError;
use crate::harness::{histogram, run_clients, Latency, RunSpec};
use crate::report::{f, Section, Table};
use crate::workload::engine as calls;
use crate::workload::w3;
use hdrhistogram::Histogram;
use serde::Serialize;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use turnstile_engine::query::Query;
use turnstile_engine::Engine;
use turnstile_sync::sync::counter::Ordering;
use turnstile_sync::{Config, Profile};

/// Options of `turnstile micro plan`.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// `--json`.
    #[command(flatten)]
    pub output: super::Output,
    /// Index counts to measure.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 10, 60])]
    pub indexes: Vec<usize>,
    /// Session counts to measure.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 2, 8])]
    pub threads: Vec<usize>,
    /// Measured seconds per point.
    #[arg(long, default_value_t = 0.5)]
    pub seconds: f64,
    /// Warm-up seconds per point.
    #[arg(long, default_value_t = 0.1)]
    pub warmup: f64,
}

impl Args {
    /// The short run `turnstile reproduce` uses.
    pub fn reproduce() -> Args {
        Args {
            output: super::Output::default(),
            indexes: vec![1, 10, 60],
            threads: vec![1, 2],
            seconds: 0.3,
            warmup: 0.05,
        }
    }
}

#[derive(Serialize, Debug, Clone)]
struct PerQuery {
    locks: f64,
}

#[derive(Serialize, Debug, Clone)]
struct Row {
    index_prefilter: bool,
    indexes: usize,
    threads: usize,
    qps: f64,
    planning_us: Latency,
    per_query: PerQuery,
}

/// Runs the benchmark.
pub fn run(args: &Args) -> Result<Section, CliError> {
    if args.indexes.iter().any(|&n| n == 0 || n > w3::COLUMNS as usize) || args.threads.contains(&0) {
        return Err("--indexes takes 1 to 60, --threads at least 1".into());
    }
    let mut rows = Vec::new();
    for &indexes in &args.indexes {
        for prefilter in [false, true] {
            let dir = tempfile::tempdir()?;
            let mut config = Config::preset(Profile::Scalable);
            config.planner.index_prefilter = prefilter;
            let engine = Engine::open(dir.path(), config)?;
            {
                let mut s = engine.session()?;
                calls::load(&mut s, &[w3::table()], &w3::indexes(indexes as u32))?;
            }
            let query = calls::query(&w3::lookup(), w3::VALUE);
            for &threads in &args.threads {
                rows.push(point(&engine, &query, prefilter, indexes, threads, args)?);
            }
        }
    }
    let json = serde_json::json!({ "bench": "plan", "results": rows });
    Ok(Section { json, text: render(&rows) })
}

fn point(
    engine: &Arc<Engine>,
    query: &Query,
    prefilter: bool,
    indexes: usize,
    threads: usize,
    args: &Args,
) -> Result<Row, CliError> {
    let planning: Mutex<Histogram<u64>> = Mutex::new(histogram());
    let locks = Mutex::new((0u64, 0u64)); // (locks, queries) while measuring
    let spec = RunSpec {
        clients: threads,
        warmup: Duration::from_secs_f64(args.warmup),
        duration: Duration::from_secs_f64(args.seconds),
        sample_every: Duration::from_millis(5),
    };
    let outcome = run_clients(
        &spec,
        Some(Arc::clone(engine.activity_table())),
        |_, measuring| {
            let mut session = engine.session()?;
            let mut rec = Recorder { planning: histogram(), locks: 0, queries: 0, into: (&planning, &locks) };
            Ok(move || -> Result<(), CliError> {
                let before = session.backend().stats();
                session.query(query, &[])?;
                if measuring.load(Ordering::Relaxed) {
                    let d = session.backend().stats().since(&before);
                    rec.planning.saturating_record(session.last_planning_time().as_nanos() as u64);
                    rec.locks += d.fast_path_acquires + d.shared_acquires;
                    rec.queries += 1;
                }
                Ok(())
            })
        },
        |_| {},
    )?;
    let planning = planning.into_inner().map_err(|_| "poisoned")?;
    let (lock_count, queries) = locks.into_inner().map_err(|_| "poisoned")?;
    Ok(Row {
        index_prefilter: prefilter,
        indexes,
        threads,
        qps: outcome.tps(),
        planning_us: Latency::from_ns_histogram(&planning),
        per_query: PerQuery { locks: lock_count as f64 / queries.max(1) as f64 },
    })
}

/// One client's figures, handed in when the client is dropped.
struct Recorder<'a> {
    planning: Histogram<u64>,
    locks: u64,
    queries: u64,
    into: (&'a Mutex<Histogram<u64>>, &'a Mutex<(u64, u64)>),
}

impl Drop for Recorder<'_> {
    fn drop(&mut self) {
        if let Ok(mut h) = self.into.0.lock() {
            let _ = h.add(&self.planning);
        }
        if let Ok(mut l) = self.into.1.lock() {
            l.0 += self.locks;
            l.1 += self.queries;
        }
    }
}

fn render(rows: &[Row]) -> String {
    let mut t = Table::new(
        "Planning with many indexes (Geier 2022): SELECT * FROM synth_table WHERE col5 = 42, simple mode",
        &["index_prefilter", "indexes", "sessions", "queries/s", "planning p50 us", "p99 us", "locks/query"],
    );
    for r in rows {
        t.row(vec![
            r.index_prefilter.to_string(),
            r.indexes.to_string(),
            r.threads.to_string(),
            f(r.qps, 0),
            f(r.planning_us.p50, 1),
            f(r.planning_us.p99, 1),
            f(r.per_query.locks, 1),
        ]);
    }
    let ratio = |pf: bool| {
        let pick =
            |n: usize| rows.iter().filter(|r| r.index_prefilter == pf && r.indexes == n).min_by_key(|r| r.threads);
        match (pick(60), pick(1)) {
            (Some(a), Some(b)) if b.planning_us.p50 > 0.0 => format!("{:.2}x", a.planning_us.p50 / b.planning_us.p50),
            _ => "n/a".into(),
        }
    };
    format!("{}planning p50, 60 indexes / 1 index: prefilter off {}, on {}\n", t.render(), ratio(false), ratio(true))
}
