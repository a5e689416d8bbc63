//! `turnstile micro btree`: concurrent B-tree inserts while readers look
//! keys up, under both `btree.leaf_insert_lock` settings (Postgres Pro 2018).
//!
//! For each setting and each thread count T (default 1, 2, 8, 32), a fresh
//! index on one `int8` column is bulk-built from `preload` random keys;
//! then T inserter threads insert random keys (each a backend of its own,
//! extending the index through the heavyweight relation-extension lock)
//! while T reader threads look random keys up, for `seconds`. Reported:
//! inserts/s, lookups/s, and `BufferContent` lock waits per insert (the
//! tranche's wait counter over the run, readers' waits included, divided
//! by the inserts) — the counter Postgres Pro 2018 saw fall to 0 once leaves were
//! locked exclusive at once. Every point ends with the structure check and
//! an entry count, so a fast but wrong tree cannot report a result.
//!
//! On a 2-core machine T = 8 and 32 oversubscribe the cores: a lock holder
//! that is descheduled makes the others wait, which is how contention on
//! a many-core machine shows up here (docs/architecture.md, "The lab"). Absolute rates are
//! noise; compare the two settings within one run. Keys come from a fixed
//! seed; the scratch directory (under the system temp dir unless `--dir`)
//! is removed afterwards.

use crate::cli::CliError;
use crate::harness::run_workers;
use crate::report::{f, Section, Table};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use turnstile_engine::btree::{BTree, BtreeOptions};
use turnstile_engine::tid::Tid;
use turnstile_engine::types::{ColumnType, Value};
use turnstile_lock::LockManager;
use turnstile_storage::{BufferPool, Extender, Fork, RelFileId, Smgr};
use turnstile_sync::config::LeafInsertLock;
use turnstile_sync::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use turnstile_sync::{tranche_stats, Config, Tranche};

/// The two settings, classic first.
const SETTINGS: [LeafInsertLock; 2] = [LeafInsertLock::ShareThenExclusive, LeafInsertLock::Exclusive];
/// The index's relation (any file number works: the directory is fresh).
const REL: RelFileId = RelFileId::new(1, 16_384);
/// The fixed seed of the key streams.
const SEED: u64 = 0x7452_4545_0004;
/// How much longer than `--seconds` a point may run while waiting for its
/// first insert and first lookup.
const EXTRA_WINDOW_MAX: Duration = Duration::from_secs(10);

/// Options of `turnstile micro btree`.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// `--json`.
    #[command(flatten)]
    pub output: super::Output,
    /// Inserter thread counts (each point also runs as many readers).
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 2, 8, 32])]
    pub threads: Vec<usize>,
    /// Seconds each (setting, thread count) point runs.
    #[arg(long, default_value_t = 0.5)]
    pub seconds: f64,
    /// Keys bulk-loaded into each fresh index before the point starts
    /// (few leaves, so inserters meet on them).
    #[arg(long, default_value_t = 20_000)]
    pub preload: u64,
    /// Keys are drawn uniformly from `0..key_space`.
    #[arg(long, default_value_t = 10_000_000)]
    pub key_space: u64,
    /// Buffers in the pool (8 kB each); the default holds the whole index.
    #[arg(long, default_value_t = 8192)]
    pub shared_buffers: u32,
    /// Where the scratch directory goes (default: the system temp dir).
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

impl Args {
    /// The short run `turnstile reproduce` uses.
    pub fn reproduce() -> Args {
        Args {
            output: super::Output::default(),
            threads: vec![1, 8],
            seconds: 0.5,
            preload: 20_000,
            key_space: 10_000_000,
            shared_buffers: 8192,
            dir: None,
        }
    }
}

/// The content-lock counter, per insert.
#[derive(Debug, Clone, Serialize)]
pub struct PerInsert {
    /// `BufferContent` lock acquisitions that had to wait, per insert.
    pub content_lock_waits: f64,
}

/// One (setting, thread count) point: the output contract.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    /// `share_then_exclusive` or `exclusive`.
    pub leaf_insert_lock: LeafInsertLock,
    /// Inserter threads (and as many readers).
    pub threads: usize,
    /// Inserts per second over the run.
    pub inserts_per_s: f64,
    /// Lookups per second over the run.
    pub lookups_per_s: f64,
    /// Counters per insert.
    pub per_insert: PerInsert,
}

/// Runs the benchmark.
pub fn run(args: &Args) -> Result<Section, CliError> {
    if args.threads.is_empty() || args.threads.contains(&0) {
        return Err("--threads needs positive thread counts".into());
    }
    if args.seconds <= 0.0 || args.key_space == 0 {
        return Err("--seconds and --key-space must be positive".into());
    }
    let scratch = scratch(args.dir.as_deref())?;
    let mut results = Vec::new();
    for &threads in &args.threads {
        for lock in SETTINGS {
            let dir = scratch.path().join(format!("{}-{threads}", setting_name(lock)));
            let point = run_point(args, lock, threads, &dir);
            std::fs::remove_dir_all(&dir)?;
            results.push(point?);
        }
    }
    let json = serde_json::json!({ "bench": "btree", "results": results });
    Ok(Section { json, text: render(args, &results) })
}

fn setting_name(lock: LeafInsertLock) -> &'static str {
    match lock {
        LeafInsertLock::ShareThenExclusive => "share_then_exclusive",
        LeafInsertLock::Exclusive => "exclusive",
    }
}

/// splitmix64: a small, seeded, well-mixed stream (no `rand` in the lab).
fn next_key(state: &mut u64, key_space: u64) -> i64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    ((z ^ (z >> 31)) % key_space) as i64
}

fn run_point(args: &Args, lock: LeafInsertLock, threads: usize, dir: &Path) -> Result<Point, CliError> {
    let mut config = Config::default();
    config.set("buffer.shared_buffers", &args.shared_buffers.to_string())?;
    config.set("btree.leaf_insert_lock", setting_name(lock))?;
    let smgr = Smgr::open(dir, &config)?;
    let pool = BufferPool::new(&config, smgr.clone())?;
    let locks = LockManager::new(&config)?;
    smgr.create(REL, Fork::Main)?;
    let opts = BtreeOptions::new("micro_btree_idx", vec![ColumnType::Int8], false, &config);
    let mut state = SEED;
    let preload: Vec<(Vec<Value>, Tid)> = (0..args.preload)
        .map(|i| {
            (vec![Value::Int8(next_key(&mut state, args.key_space))], Tid::new((i / 100) as u32, (i % 100) as u16))
        })
        .collect();
    let tree = BTree::build(&pool, REL, opts, preload)?;

    // Relation extension is not what this benchmark varies: the default
    // profile's strategy for every point.
    let (extend, extend_max_blocks) = (config.storage.extend, config.storage.extend_max_blocks);
    let duration = Duration::from_secs_f64(args.seconds);
    let stop = AtomicBool::new(false);
    let (inserts, lookups) = (AtomicU64::new(0), AtomicU64::new(0));
    let before = tranche_stats(Tranche::BufferContent);
    // Threads `0..T` insert, `T..2T` look up, and thread `2T` keeps time:
    // it returns when the window began, the others `None`.
    type Work<'a> = Box<dyn FnOnce() -> Result<Option<Instant>, CliError> + 'a>;
    let (tree, pool, locks, stop, inserts, lookups) = (&tree, &pool, &locks, &stop, &inserts, &lookups);
    let outcomes = run_workers(2 * threads + 1, |i| -> Result<Work<'_>, CliError> {
        if i < threads {
            let t = i;
            let backend = locks.register()?;
            let mut ext = Extender::new(pool, backend, extend, extend_max_blocks);
            let mut state = SEED ^ ((t as u64 + 1) << 32);
            return Ok(Box::new(move || {
                let mut n = 0u32;
                while !stop.load(Ordering::Relaxed) {
                    let key = [Value::Int8(next_key(&mut state, args.key_space))];
                    // Heap TIDs past the preload's: block 10^6 + thread.
                    let tid = Tid::new(1_000_000 + t as u32 * 100_000 + n / 1000, (n % 1000) as u16);
                    tree.insert(&mut ext, &key, tid)?;
                    inserts.fetch_add(1, Ordering::Relaxed);
                    n += 1;
                }
                Ok(None)
            }));
        }
        if i < 2 * threads {
            let t = i - threads;
            let mut state = SEED ^ ((t as u64 + 1) << 48);
            return Ok(Box::new(move || {
                while !stop.load(Ordering::Relaxed) {
                    let key = [Value::Int8(next_key(&mut state, args.key_space))];
                    std::hint::black_box(tree.search(&key)?);
                    lookups.fetch_add(1, Ordering::Relaxed);
                }
                Ok(None)
            }));
        }
        Ok(Box::new(move || {
            let began = Instant::now();
            std::thread::sleep(duration);
            // On a loaded 2-core machine a point could end before any thread
            // ran; extend the window (boundedly) until both sides did work.
            let deadline = began + duration + EXTRA_WINDOW_MAX;
            while (inserts.load(Ordering::Relaxed) == 0 || lookups.load(Ordering::Relaxed) == 0)
                && Instant::now() < deadline
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            stop.store(true, Ordering::Relaxed);
            Ok(Some(began))
        }))
    })?;
    let began = outcomes.into_iter().flatten().next().ok_or("the time keeper returned no start")?;
    let elapsed = began.elapsed();
    let waits = tranche_stats(Tranche::BufferContent).since(&before).waits;
    let (inserts, lookups) = (inserts.load(Ordering::Relaxed), lookups.load(Ordering::Relaxed));
    let report = tree.check()?;
    if report.entries != args.preload + inserts {
        return Err(format!("the index holds {} entries, expected {}", report.entries, args.preload + inserts).into());
    }
    let secs = elapsed.as_secs_f64();
    Ok(Point {
        leaf_insert_lock: lock,
        threads,
        inserts_per_s: inserts as f64 / secs,
        lookups_per_s: lookups as f64 / secs,
        per_insert: PerInsert { content_lock_waits: if inserts == 0 { 0.0 } else { waits as f64 / inserts as f64 } },
    })
}

fn render(args: &Args, results: &[Point]) -> String {
    let mut header = vec!["metric".to_string()];
    header.extend(args.threads.iter().map(|t| format!("T={t}")));
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut table = Table::new(
        format!(
            "B-tree: T inserters + T readers on one index, {} s per point, {} keys preloaded (Postgres Pro 2018)",
            args.seconds, args.preload
        ),
        &header,
    );
    let get = |lock: LeafInsertLock, t: usize| results.iter().find(|p| p.leaf_insert_lock == lock && p.threads == t);
    type Metric = (&'static str, fn(&Point) -> f64, usize);
    let metrics: [Metric; 3] = [
        ("inserts/s", |p| p.inserts_per_s, 0),
        ("lookups/s", |p| p.lookups_per_s, 0),
        ("content-lock waits/insert", |p| p.per_insert.content_lock_waits, 4),
    ];
    for (name, value, digits) in metrics {
        for lock in SETTINGS {
            let mut row = vec![format!("{name} {}", setting_name(lock))];
            row.extend(args.threads.iter().map(|&t| get(lock, t).map_or(String::new(), |p| f(value(p), digits))));
            table.row(row);
        }
        if name == "inserts/s" {
            let mut row = vec!["inserts speedup exclusive / share_then_exclusive".to_string()];
            row.extend(args.threads.iter().map(|&t| match (get(LeafInsertLock::Exclusive, t), get(SETTINGS[0], t)) {
                (Some(a), Some(b)) if b.inserts_per_s > 0.0 => format!("{}x", f(a.inserts_per_s / b.inserts_per_s, 2)),
                _ => String::new(),
            }));
            table.row(row);
        }
    }
    table.render()
}

/// A scratch directory under `parent` (default: the system temp dir),
/// removed when dropped.
fn scratch(parent: Option<&Path>) -> Result<tempfile::TempDir, CliError> {
    let parent = parent.map(Path::to_path_buf).unwrap_or_else(std::env::temp_dir);
    std::fs::create_dir_all(&parent)?;
    Ok(tempfile::Builder::new().prefix("turnstile-btree-").tempdir_in(parent)?)
}
