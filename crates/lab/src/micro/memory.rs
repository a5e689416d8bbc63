//! `turnstile micro memory`: per-query memory with and without the block
//! cache (seed 000).
//!
//! A W1-style query — `accounts` with P partitions, each with two indexes,
//! looked up on `aid_parent` and joined with `branches` — in prepared mode,
//! run by one session under `memory.block_cache = false` and `= true`.
//! Every index scan allocates PostgreSQL-sized scan state from the query's
//! memory context, so one execution asks for megabytes. Reported per query:
//! blocks served from the cache and from the allocator, the cache's share,
//! minor page faults of the thread (`getrusage(RUSAGE_THREAD)`), latency.

use crate::report::{f, Section, Table};
use crate::CliError;
use serde::Serialize;
use std::time::Instant;
use turnstile_engine::catalog::{PartitionBound, PartitionStrategy};
use turnstile_engine::memory::minor_faults;
use turnstile_engine::query::{Operand, Query, QueryMode};
use turnstile_engine::types::{ColumnType, Value};
use turnstile_engine::{Engine, Session};
use turnstile_sync::{Config, Profile};

/// Options of `turnstile micro memory`.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// Print the JSON report instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Partitions of `accounts`.
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
        Args { json: false, partitions: 100, rows_per_partition: 10, queries: 500 }
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
    partitions: i32,
    queries: u32,
    per_query: PerQuery,
    cache_share: f64,
    latency_us: f64,
}

/// Creates the W1 tables: `accounts` range-partitioned on `aid` with a
/// primary key and an `aid_parent` index, and `branches` with a primary key.
pub fn load_w1(s: &mut Session, partitions: i32, per_partition: i32, branches: i32) -> Result<(), CliError> {
    let cols = [
        ("aid", ColumnType::Int4),
        ("bid", ColumnType::Int4),
        ("abalance", ColumnType::Int4),
        ("filler", ColumnType::Text),
        ("aid_parent", ColumnType::Int4),
    ];
    let total = partitions.max(1) * per_partition;
    // One catalog write for the whole load instead of one fsync per DDL.
    s.engine().catalog().defer_writes(true)?;
    if partitions == 0 {
        s.create_table("accounts", &cols, None)?;
    } else {
        s.create_table("accounts", &cols, Some((PartitionStrategy::Range, "aid")))?;
        for p in 0..partitions {
            let bound =
                PartitionBound::Range { from: i64::from(p * per_partition), to: i64::from((p + 1) * per_partition) };
            s.create_partition("accounts", &format!("accounts_{}", p + 1), bound)?;
        }
    }
    s.create_index("accounts", "accounts_pkey", &["aid"], true)?;
    s.create_index("accounts", "accounts_aid_parent", &["aid_parent"], false)?;
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
    s.engine().catalog().defer_writes(false)?;
    Ok(())
}

/// The W1 query: the account with `aid_parent = $1`, joined with its branch.
pub fn w1_query() -> Query {
    Query::from("accounts")
        .join("branches", "accounts.bid", "bid")
        .filter("accounts.aid_parent", Operand::Param(1))
        .select(&["accounts.aid", "accounts.abalance", "branches.bbalance"])
}

/// Runs the benchmark.
pub fn run(args: &Args) -> Result<Section, CliError> {
    if args.partitions < 1 || args.rows_per_partition < 1 || args.queries == 0 {
        return Err("partitions, rows per partition and queries must be positive".into());
    }
    let mut rows = Vec::new();
    for block_cache in [false, true] {
        let dir = tempfile::tempdir()?;
        let mut config = Config::preset(Profile::Scalable);
        config.memory.block_cache = block_cache;
        let engine = Engine::open(dir.path(), config)?;
        let mut s = engine.session()?;
        load_w1(&mut s, args.partitions, args.rows_per_partition, 10)?;
        let total = args.partitions * args.rows_per_partition;
        let q = w1_query();
        let mut slot = None;
        let mut i = 0i32;
        let mut one = |s: &mut Session| -> Result<(), CliError> {
            i = (i + 7919) % total;
            s.run(QueryMode::Prepared, &q, &mut slot, &[Value::Int4(i)])?;
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
            "Per-query memory (seed 000): W1 prepared, {} partitions, one session",
            rows.first().map_or(0, |r| r.partitions)
        ),
        &[
            "block_cache",
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
