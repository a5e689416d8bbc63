//! `turnstile micro memory`: per-query memory with and without the block
//! cache and the lazy scan state (Vondra 2024).
//!
//! W1's query (`crate::workload::w1`) — `pgbench_accounts` with P
//! partitions, each with two indexes, looked up on `aid_parent` and joined
//! with `pgbench_branches` (10 rows here) — in prepared mode,
//! run by one session three times: `classic` (`memory.block_cache` and
//! `memory.lazy_scan_state` off), the block cache alone, and both (as
//! `scalable`). Without the lazy scan state every index scan allocates
//! PostgreSQL-sized scan state from the query's memory context, so one
//! execution asks for megabytes. Reported per query:
//! blocks served from the cache and from the allocator, the cache's share,
//! minor page faults of the thread (`getrusage(RUSAGE_THREAD)`), latency.

use crate::cli::CliError;
use crate::report::{f, Section, Table};
use crate::workload::engine as calls;
use crate::workload::w1;
use serde::Serialize;
use std::time::Instant;
use turnstile_engine::memory::minor_faults;
use turnstile_engine::query::{Operand, QueryMode};
use turnstile_engine::types::Value;
use turnstile_engine::{Engine, Session};
use turnstile_sync::{Config, Profile};

/// Options of `turnstile micro memory`.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// `--json`.
    #[command(flatten)]
    pub output: super::Output,
    /// Partitions of `pgbench_accounts`.
    #[arg(long, default_value_t = 100)]
    pub partitions: i32,
    /// Accounts per partition.
    #[arg(long, default_value_t = 20)]
    pub rows_per_partition: i32,
    /// Executions measured per setting (after as many for warm-up).
    #[arg(long, default_value_t = 2000)]
    pub queries: u32,
}

impl Args {
    /// The short run `turnstile reproduce` uses.
    pub fn reproduce() -> Args {
        Args { output: super::Output::default(), partitions: 100, rows_per_partition: 10, queries: 500 }
    }
}

#[derive(Serialize, Debug, Clone)]
struct PerQuery {
    allocations: f64,
    blocks_from_cache: f64,
    blocks_from_allocator: f64,
    minor_faults: f64,
}

#[derive(Serialize, Debug, Clone)]
struct Row {
    block_cache: bool,
    lazy_scan_state: bool,
    partitions: i32,
    queries: u32,
    per_query: PerQuery,
    cache_share: f64,
    latency_us: f64,
}

/// Runs the benchmark.
pub fn run(args: &Args) -> Result<Section, CliError> {
    if args.partitions < 1 || args.rows_per_partition < 1 || args.queries == 0 {
        return Err("partitions, rows per partition and queries must be positive".into());
    }
    let mut rows = Vec::new();
    for (block_cache, lazy_scan_state) in [(false, false), (true, false), (true, true)] {
        let dir = tempfile::tempdir()?;
        let mut config = Config::preset(Profile::Scalable);
        config.memory.block_cache = block_cache;
        config.memory.lazy_scan_state = lazy_scan_state;
        let engine = Engine::open(dir.path(), config)?;
        let mut s = engine.session()?;
        engine.catalog().defer_writes(true)?;
        let total = args.partitions * args.rows_per_partition;
        calls::load(&mut s, &w1::tables(total as u32, args.partitions as u32, 10), &w1::indexes())?;
        engine.catalog().defer_writes(false)?;
        let q = calls::query(&w1::lookup(), Operand::Param(1));
        let mut slot = None;
        let mut i = 0i32;
        let mut one = |s: &mut Session| -> Result<(), CliError> {
            i = (i + 7919) % total;
            s.run(QueryMode::Prepared, &q, &mut slot, &[Value::Int4(i + 1)])?;
            Ok(())
        };
        for _ in 0..args.queries {
            one(&mut s)?;
        }
        let before = s.memory_stats();
        let faults = minor_faults();
        let started = Instant::now();
        for _ in 0..args.queries {
            one(&mut s)?;
        }
        let elapsed = started.elapsed();
        let faults = minor_faults() - faults;
        let after = s.memory_stats();
        let n = f64::from(args.queries);
        let from_cache = (after.blocks_from_cache - before.blocks_from_cache) as f64;
        let from_alloc = (after.blocks_from_allocator - before.blocks_from_allocator) as f64;
        rows.push(Row {
            block_cache,
            lazy_scan_state,
            partitions: args.partitions,
            queries: args.queries,
            per_query: PerQuery {
                allocations: (after.allocations - before.allocations) as f64 / n,
                blocks_from_cache: from_cache / n,
                blocks_from_allocator: from_alloc / n,
                minor_faults: faults as f64 / n,
            },
            cache_share: if from_cache + from_alloc > 0.0 { from_cache / (from_cache + from_alloc) } else { 0.0 },
            latency_us: elapsed.as_secs_f64() * 1e6 / n,
        });
    }
    let json = serde_json::json!({ "bench": "memory", "results": rows });
    Ok(Section { json, text: render(&rows) })
}

fn render(rows: &[Row]) -> String {
    let mut t = Table::new(
        format!(
            "Per-query memory (Vondra 2024): W1 prepared, {} partitions, one session",
            rows.first().map_or(0, |r| r.partitions)
        ),
        &[
            "block_cache",
            "lazy_scan_state",
            "allocs/query",
            "blocks cache/query",
            "blocks malloc/query",
            "cache share",
            "minor faults/query",
            "latency us",
        ],
    );
    for r in rows {
        t.row(vec![
            r.block_cache.to_string(),
            r.lazy_scan_state.to_string(),
            f(r.per_query.allocations, 0),
            f(r.per_query.blocks_from_cache, 2),
            f(r.per_query.blocks_from_allocator, 2),
            f(r.cache_share, 3),
            f(r.per_query.minor_faults, 1),
            f(r.latency_us, 1),
        ]);
    }
    t.render()
}
