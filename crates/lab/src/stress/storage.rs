//! `turnstile stress storage`: concurrent inserters and readers on a heap
//! with two B-tree indexes, through the engine, while a fault injector
//! makes random calls of the storage manager's I/O fail with ENOSPC or EIO
//! (`turnstile_storage::fault::FaultyIo`, under the real storage-manager
//! and buffer-pool code).
//!
//! * **Inserters** insert rows with unique keys; a row whose insert
//!   returned `Ok` is *acknowledged*: its commit record is durable in the
//!   write-ahead log.
//! * **Readers** look acknowledged keys up through the primary key: an
//!   acknowledged row must be found (each insert commits on its own, so
//!   it is visible to every snapshot taken after it returned).
//! * A **flusher** takes a checkpoint (`Engine::flush`) every few
//!   milliseconds.
//! * Half-way, a session builds a second index, under faults too.
//! * The **injector** plans, every few milliseconds, one failure of the
//!   next few calls of `extend`, `write`, `read` or `fsync` (sometimes
//!   after doing half the work, as a full disk does).
//!
//! Every failure must be a typed storage error caused by an injected fault
//! (ENOSPC or EIO), or the refusal that follows one: a failed write or
//! fsync of the WAL fails the log, and a failed checkpoint write or fsync
//! of a data file stops checkpoints, until the server restarts (never
//! retried as if nothing happened). Anything else is a violation.
//! Afterwards the directory is reopened with plain I/O — recovery — and:
//! every page verifies, every acknowledged row is in the heap and found
//! through the primary key, and the reopened engine accepts inserts.

use crate::cli::{self, CliError, ProfileArg, BOTH_PROFILES};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use turnstile_engine::btree::BtreeError;
use turnstile_engine::heap::HeapError;
use turnstile_engine::query::{Operand, Query};
use turnstile_engine::types::ColumnType::{Int4, Int8, Text};
use turnstile_engine::types::Value;
use turnstile_engine::{Engine, EngineError};
use turnstile_storage::fault::{FaultyIo, IoFault, IoOp};
use turnstile_storage::io::OsIo;
use turnstile_storage::wal::WalError;
use turnstile_storage::{FileError, StorageError};
use turnstile_sync::config::{Config, Profile};
use turnstile_sync::sync::counter::{AtomicBool, AtomicU64, Ordering};

/// Keys of inserter `t` are `t * KEYS_PER_INSERTER + i`.
const KEYS_PER_INSERTER: i64 = 100_000_000;
/// Durable rows looked up through the index after the run, at most.
const FINAL_LOOKUPS_MAX: usize = 20_000;
/// Violation descriptions kept.
const TEXTS_MAX: usize = 20;

/// Arguments of `turnstile stress storage`.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// Inserting sessions.
    #[arg(long, default_value_t = 4)]
    pub inserters: usize,
    /// Reading sessions.
    #[arg(long, default_value_t = 4)]
    pub readers: usize,
    /// Length of the run per profile, in seconds.
    #[arg(long, default_value_t = 10.0)]
    pub seconds: f64,
    /// Seed of the random choices (default: from the clock; always printed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Profiles to run, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = BOTH_PROFILES)]
    pub profile: Vec<ProfileArg>,
    /// Milliseconds between two planned faults.
    #[arg(long, default_value_t = 20)]
    pub fault_every_ms: u64,
    /// Data directory parent (default: a temporary directory, removed).
    /// Under it, the directory of a run that failed is kept.
    #[arg(long)]
    pub data_dir: Option<std::path::PathBuf>,
    /// Print `{"results":[…]}` as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// The outcome of one profile's run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct StorageStressResult {
    /// Always `"storage"`.
    pub stress: &'static str,
    /// `classic` or `scalable`.
    pub profile: String,
    /// The seed of this run's choices.
    pub seed: u64,
    /// Inserting sessions.
    pub inserters: usize,
    /// Reading sessions.
    pub readers: usize,
    /// Wall-clock length of the fault phase, in seconds.
    pub seconds: f64,
    /// Faults planned (each fires at most once).
    pub faults_planned: u64,
    /// Inserts acknowledged.
    pub inserted: u64,
    /// Inserts that failed with an injected ENOSPC or EIO.
    pub failed_inserts: u64,
    /// Index look-ups of acknowledged rows.
    pub lookups: u64,
    /// Look-ups that failed with an injected fault.
    pub failed_lookups: u64,
    /// Flushes that completed.
    pub flushes: u64,
    /// Flushes that failed with an injected fault.
    pub failed_flushes: u64,
    /// Whether the index built under faults was built.
    pub index_built_under_faults: bool,
    /// Rows durable at the end (every acknowledged insert).
    pub durable_rows: u64,
    /// Operations refused with `AllBuffersPinned` (a typed resource error
    /// not caused by a fault; counted apart, not a violation).
    pub pool_exhausted: u64,
    /// Durable rows missing from the heap or the index after reopening. Must be 0.
    pub missing_rows: u64,
    /// Pages verified after reopening.
    pub pages_verified: u64,
    /// Pages that failed verification (the first stops the check). Must be 0.
    pub bad_pages: u64,
    /// Failures that were not an injected ENOSPC/EIO, acknowledged rows not
    /// found, panics. Must be 0.
    pub violations: u64,
    /// The first violations, described.
    pub violation_texts: Vec<String>,
}

impl super::Outcome for StorageStressResult {
    fn profile(&self) -> &str {
        &self.profile
    }

    /// Whether the run passed: no violation, missing row or bad page.
    fn passed(&self) -> bool {
        self.violations == 0 && self.missing_rows == 0 && self.bad_pages == 0
    }

    fn summary(&self) -> String {
        format!(
            "inserted {} (failed {}) lookups {} (failed {}) flushes {} (failed {}) durable {} pool exhausted {} \
             missing {} bad pages {} violations {}",
            self.inserted,
            self.failed_inserts,
            self.lookups,
            self.failed_lookups,
            self.flushes,
            self.failed_flushes,
            self.durable_rows,
            self.pool_exhausted,
            self.missing_rows,
            self.bad_pages,
            self.violations
        )
    }

    fn violation_texts(&self) -> &[String] {
        &self.violation_texts
    }
}

/// Runs `turnstile stress storage`.
pub fn run(args: &Args) -> Result<(), CliError> {
    let length = Duration::from_secs_f64(args.seconds.max(0.0));
    let one = |profile, seed| {
        let parent = match &args.data_dir {
            Some(d) => tempfile::Builder::new().prefix("stress-storage-").tempdir_in(d)?,
            None => tempfile::Builder::new().prefix("turnstile-stress-storage-").tempdir()?,
        };
        let result = run_profile(profile, parent.path(), args, length, seed);
        if args.data_dir.is_some() && result.violations > 0 {
            // Under --data-dir, a failed run's directory is kept to look at.
            eprintln!("stress storage: {profile}: kept {}", parent.keep().join(profile.name()).display());
        }
        Ok(result)
    };
    super::run_profiles("storage", args.seed, &cli::profiles(&args.profile), args.json, one, print_table)
}

fn print_table(results: &[StorageStressResult]) {
    println!(
        "{:<9} {:>20} {:>7} {:>9} {:>8} {:>8} {:>8} {:>8} {:>7} {:>6} {:>10}",
        "profile",
        "seed",
        "faults",
        "inserted",
        "ins.err",
        "lookups",
        "flushes",
        "durable",
        "missing",
        "bad pg",
        "violations"
    );
    for r in results {
        println!(
            "{:<9} {:>20} {:>7} {:>9} {:>8} {:>8} {:>8} {:>8} {:>7} {:>6} {:>10}",
            r.profile,
            r.seed,
            r.faults_planned,
            r.inserted,
            r.failed_inserts,
            r.lookups,
            r.flushes,
            r.durable_rows,
            r.missing_rows,
            r.bad_pages,
            r.violations
        );
    }
}

/// The stress configuration: a small buffer pool (2 MB), so pages are
/// evicted, written and read back all the time. (At 128 buffers the
/// `scalable` profile already refuses some operations with
/// `AllBuffersPinned` without any fault: counted in `pool_exhausted`.)
pub fn stress_config(profile: Profile) -> Config {
    let mut c = Config::preset(profile);
    c.buffer.shared_buffers = 256;
    c.buffer.mapping_partitions = 16;
    c
}

/// Violations, counted and described.
#[derive(Default)]
struct Violations {
    count: AtomicU64,
    texts: Mutex<Vec<String>>,
}

impl Violations {
    fn report(&self, text: String) {
        self.count.fetch_add(1, Ordering::Relaxed);
        let mut t = self.texts.lock().unwrap_or_else(|e| e.into_inner());
        if t.len() < TEXTS_MAX {
            t.push(text);
        }
    }
}

/// Whether `e` is a storage error caused by an injected fault: ENOSPC or
/// EIO from a file operation, however the layers above wrapped it.
fn is_injected(e: &EngineError) -> bool {
    let storage = match e {
        EngineError::Storage(s)
        | EngineError::Heap(HeapError::Storage(s))
        | EngineError::Index(BtreeError::Storage(s)) => s,
        _ => return false,
    };
    matches!(
        storage,
        StorageError::File(FileError::NoSpace { .. } | FileError::Io { .. })
            | StorageError::Wal(WalError::File(FileError::NoSpace { .. } | FileError::Io { .. }) | WalError::Failed)
    )
}

/// Whether `e` is [`StorageError::AllBuffersPinned`], however wrapped.
fn is_pool_exhausted(e: &EngineError) -> bool {
    matches!(
        e,
        EngineError::Storage(StorageError::AllBuffersPinned { .. })
            | EngineError::Heap(HeapError::Storage(StorageError::AllBuffersPinned { .. }))
            | EngineError::Index(BtreeError::Storage(StorageError::AllBuffersPinned { .. }))
    )
}

fn row(k: i64) -> Vec<Value> {
    vec![
        Value::Int8(k),
        Value::Int4(k.rem_euclid(1000) as i32),
        Value::Text(format!("{k:x}-{}", "s".repeat(k.rem_euclid(200) as usize))),
    ]
}

/// Shared state of one run.
struct Run {
    engine: Arc<Engine>,
    io: Arc<FaultyIo>,
    stop: AtomicBool,
    /// Acknowledged keys, in acknowledgement order.
    acked: Mutex<Vec<i64>>,
    /// `acked[..durable]` are durable (every acknowledged row is).
    durable: AtomicU64,
    violations: Violations,
    counters: [AtomicU64; 8],
}

const INSERTED: usize = 0;
const FAILED_INSERTS: usize = 1;
const LOOKUPS: usize = 2;
const FAILED_LOOKUPS: usize = 3;
const FLUSHES: usize = 4;
const FAILED_FLUSHES: usize = 5;
const FAULTS: usize = 6;
const POOL_EXHAUSTED: usize = 7;

impl Run {
    fn bump(&self, counter: usize) {
        self.counters[counter].fetch_add(1, Ordering::Relaxed);
    }

    fn count(&self, counter: usize) -> u64 {
        self.counters[counter].load(Ordering::Relaxed)
    }

    /// An error of an operation: fine if injected; a full buffer pool is
    /// counted apart (a typed resource error, not caused by a fault);
    /// anything else is a violation.
    fn failed(&self, what: &str, e: &EngineError) {
        if is_pool_exhausted(e) {
            self.bump(POOL_EXHAUSTED);
        } else if !is_injected(e) {
            self.violations.report(format!("{what} failed with a non-injected error: {e} ({e:?})"));
        }
    }
}

/// Runs the storage stress for one profile in a fresh directory under `parent`.
pub fn run_profile(
    profile: Profile,
    parent: &std::path::Path,
    args: &Args,
    length: Duration,
    seed: u64,
) -> StorageStressResult {
    let mut result = StorageStressResult {
        stress: "storage",
        profile: profile.name().into(),
        seed,
        inserters: args.inserters,
        readers: args.readers,
        ..Default::default()
    };
    let dir = parent.join(profile.name());
    let config = stress_config(profile);
    let io = Arc::new(FaultyIo::new());
    let setup = || -> Result<Arc<Engine>, EngineError> {
        // Faults go to the data files; the WAL is what makes acknowledged
        // rows durable through them.
        let engine = Engine::open_with_ios(&dir, config.clone(), io.clone(), Arc::new(OsIo))?;
        let mut s = engine.session()?;
        s.create_table("s", &[("k", Int8), ("v", Int4), ("pad", Text)], None)?;
        s.create_index("s", "s_pkey", &["k"], true)?;
        Ok(engine)
    };
    let engine = match setup() {
        Ok(e) => e,
        Err(e) => {
            result.violations = 1;
            result.violation_texts.push(format!("setup failed: {e}"));
            return result;
        }
    };
    let run = Arc::new(Run {
        engine,
        io,
        stop: AtomicBool::new(false),
        acked: Mutex::new(Vec::new()),
        durable: AtomicU64::new(0),
        violations: Violations::default(),
        counters: Default::default(),
    });
    let started = Instant::now();
    let threads = spawn_workers(&run, args, seed);
    // The injector and the index build run on this thread.
    let mut rng = SmallRng::seed_from_u64(seed);
    let every = Duration::from_millis(args.fault_every_ms.max(1));
    let mut index_built = None;
    while started.elapsed() < length {
        std::thread::sleep(every); // the pace of fault planning, not a stand-in for work
        plan_fault(&run, &mut rng);
        if index_built.is_none() && started.elapsed() >= length / 2 {
            index_built = Some(build_index(&run));
        }
    }
    run.stop.store(true, Ordering::Relaxed);
    for t in threads {
        let _ = t.join();
    }
    result.seconds = started.elapsed().as_secs_f64();
    result.index_built_under_faults = index_built.unwrap_or(false);

    let acked = settle(&run);
    let durable = &acked[..run.durable.load(Ordering::Relaxed) as usize];
    result.durable_rows = durable.len() as u64;
    result.faults_planned = run.count(FAULTS);
    result.inserted = run.count(INSERTED);
    result.failed_inserts = run.count(FAILED_INSERTS);
    result.lookups = run.count(LOOKUPS);
    result.failed_lookups = run.count(FAILED_LOOKUPS);
    result.flushes = run.count(FLUSHES);
    result.failed_flushes = run.count(FAILED_FLUSHES);
    result.pool_exhausted = run.count(POOL_EXHAUSTED);

    // Reopen with plain I/O and check.
    let run = Arc::into_inner(run).expect("every thread ended");
    let violations = run.violations;
    drop(run.engine);
    check_reopened(&dir, &config, durable, index_built.unwrap_or(false), &mut result, &violations, seed);
    result.violations = violations.count.load(Ordering::Relaxed);
    result.violation_texts = violations.texts.into_inner().unwrap_or_else(|e| e.into_inner());
    result
}

/// The inserters, the readers and the flusher, each on its own thread; a
/// panic is reported as a violation.
fn spawn_workers(run: &Arc<Run>, args: &Args, seed: u64) -> Vec<std::thread::JoinHandle<()>> {
    let mut threads = Vec::new();
    let spawn = |name: String, body: Box<dyn FnOnce() + Send>| {
        let run = Arc::clone(run);
        std::thread::Builder::new()
            .name(name.clone())
            .spawn(move || {
                if let Err(panic) = catch_unwind(AssertUnwindSafe(body)) {
                    let text = panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    run.violations.report(format!("{name} panicked: {text}"));
                }
            })
            .expect("spawn a stress thread")
    };
    for t in 0..args.inserters {
        let run = Arc::clone(run);
        let rng = SmallRng::seed_from_u64(seed ^ (t as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        threads.push(spawn(format!("inserter-{t}"), Box::new(move || inserter(&run, t as i64, rng))));
    }
    for t in 0..args.readers {
        let run = Arc::clone(run);
        let rng = SmallRng::seed_from_u64(seed ^ (t as u64 + 101).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        threads.push(spawn(format!("reader-{t}"), Box::new(move || reader(&run, rng))));
    }
    {
        let run = Arc::clone(run);
        threads.push(spawn("flusher".into(), Box::new(move || flusher(&run))));
    }
    threads
}

/// After the workers ended: every acknowledged row is durable (its commit
/// was); checks the invariants at this quiescent point. Returns the
/// acknowledged keys.
fn settle(run: &Run) -> Vec<i64> {
    let acked: Vec<i64> = run.acked.lock().unwrap_or_else(|e| e.into_inner()).clone();
    run.durable.store(acked.len() as u64, Ordering::Relaxed);
    // A quiescent point: every worker has ended. The buffer pool's and the
    // lock manager's invariants must hold however the faults fell.
    if let Err(panic) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run.engine.check_invariants())) {
        let what = panic.downcast_ref::<String>().map(String::as_str).or(panic.downcast_ref::<&str>().copied());
        run.violations.report(format!("invariant check after the run: {}", what.unwrap_or("(no message)")));
    }
    acked
}

fn plan_fault(run: &Run, rng: &mut SmallRng) {
    let op = match rng.random_range(0..100) {
        0..=34 => IoOp::Extend,
        35..=64 => IoOp::Write,
        65..=84 => IoOp::Read,
        _ => IoOp::Sync,
    };
    let errno = if rng.random_bool(0.5) { IoFault::ENOSPC } else { IoFault::EIO };
    let nth = run.io.calls(op) + rng.random_range(1..20);
    let fault = IoFault::new(op, nth, errno);
    run.io.inject(if rng.random_bool(0.5) { fault.partial() } else { fault });
    run.bump(FAULTS);
}

fn inserter(run: &Run, t: i64, mut rng: SmallRng) {
    let mut s = run.engine.session().expect("a session");
    let mut next = t * KEYS_PER_INSERTER;
    while !run.stop.load(Ordering::Relaxed) {
        if rng.random_range(0..10) == 0 {
            // A small batch in one statement: all or (with a fault) an
            // unknown prefix of it inserted, so none is acknowledged.
            let n = rng.random_range(2..50);
            let keys: Vec<i64> = (next..next + n).collect();
            next += n;
            match s.insert_many("s", keys.iter().map(|&k| row(k))) {
                Ok(_) => {
                    run.acked.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(&keys);
                    for _ in 0..n {
                        run.bump(INSERTED);
                    }
                }
                Err(e) => {
                    run.bump(FAILED_INSERTS);
                    run.failed("insert_many", &e);
                }
            }
        } else {
            let k = next;
            next += 1;
            match s.insert("s", &row(k)) {
                Ok(_) => {
                    run.acked.lock().unwrap_or_else(|e| e.into_inner()).push(k);
                    run.bump(INSERTED);
                }
                Err(e) => {
                    run.bump(FAILED_INSERTS);
                    run.failed("insert", &e);
                }
            }
        }
    }
}

fn lookup_query() -> Query {
    Query::from("s").filter("k", Operand::Param(1)).select(["k", "v"])
}

fn reader(run: &Run, mut rng: SmallRng) {
    let mut s = run.engine.session().expect("a session");
    let mut prepared = None;
    while !run.stop.load(Ordering::Relaxed) {
        let k = {
            let acked = run.acked.lock().unwrap_or_else(|e| e.into_inner());
            if acked.is_empty() {
                None
            } else {
                Some(acked[rng.random_range(0..acked.len())])
            }
        };
        let Some(k) = k else {
            std::thread::yield_now();
            continue;
        };
        if prepared.is_none() {
            match s.prepare(&lookup_query()) {
                Ok(p) => prepared = Some(p),
                Err(e) => {
                    run.failed("prepare", &e);
                    continue;
                }
            }
        }
        let p = prepared.as_mut().expect("prepared above");
        run.bump(LOOKUPS);
        match s.execute(p, &[Value::Int8(k)]) {
            Ok(rows) if rows == vec![vec![Value::Int8(k), Value::Int4(k.rem_euclid(1000) as i32)]] => {}
            Ok(rows) => run.violations.report(format!("acknowledged key {k} looked up: {rows:?}")),
            Err(e) => {
                run.bump(FAILED_LOOKUPS);
                run.failed("lookup", &e);
            }
        }
    }
}

fn flusher(run: &Run) {
    while !run.stop.load(Ordering::Relaxed) {
        let before = run.acked.lock().unwrap_or_else(|e| e.into_inner()).len() as u64;
        match run.engine.flush() {
            Ok(()) => {
                run.durable.fetch_max(before, Ordering::Relaxed);
                run.bump(FLUSHES);
            }
            Err(e) => {
                run.bump(FAILED_FLUSHES);
                run.failed("flush", &e);
            }
        }
        std::thread::sleep(Duration::from_millis(5)); // flush pace, as a checkpointer's
    }
}

/// `CREATE INDEX s_v ON s (v)` under faults: built, or a typed error.
fn build_index(run: &Run) -> bool {
    let mut s = match run.engine.session() {
        Ok(s) => s,
        Err(e) => {
            run.violations.report(format!("session for the index build: {e}"));
            return false;
        }
    };
    match s.create_index("s", "s_v", &["v"], false) {
        Ok(_) => true,
        Err(e) => {
            run.failed("create_index", &e);
            false
        }
    }
}

fn check_reopened(
    dir: &std::path::Path,
    config: &Config,
    durable: &[i64],
    index_built: bool,
    result: &mut StorageStressResult,
    violations: &Violations,
    seed: u64,
) {
    let engine = match Engine::open(dir, config.clone()) {
        Ok(e) => e,
        Err(e) => return violations.report(format!("reopening after the run failed: {e}")),
    };
    match engine.verify_pages() {
        Ok(n) => result.pages_verified = n,
        Err(e) => {
            result.bad_pages = 1;
            violations.report(format!("page verification after the run: {e}"));
        }
    }
    let mut s = match engine.session() {
        Ok(s) => s,
        Err(e) => return violations.report(format!("session after reopening: {e}")),
    };
    let present: HashSet<i64> = match s.scan_all("s") {
        Ok(rows) => rows.iter().filter_map(|r| if let Value::Int8(k) = r[0] { Some(k) } else { None }).collect(),
        Err(e) => return violations.report(format!("heap scan after reopening: {e}")),
    };
    let mut missing = durable.iter().filter(|k| !present.contains(k)).count() as u64;
    // Through the primary key: all durable rows, or a sample of them.
    let mut rng = SmallRng::seed_from_u64(seed);
    let sample: Vec<i64> = if durable.len() <= FINAL_LOOKUPS_MAX {
        durable.to_vec()
    } else {
        (0..FINAL_LOOKUPS_MAX).map(|_| durable[rng.random_range(0..durable.len())]).collect()
    };
    match s.prepare(&lookup_query()) {
        Ok(mut p) => {
            for &k in &sample {
                match s.execute(&mut p, &[Value::Int8(k)]) {
                    Ok(rows) if rows.len() == 1 => {}
                    Ok(rows) => {
                        missing += 1;
                        if missing <= 3 {
                            violations.report(format!("durable key {k} through the index after reopening: {rows:?}"));
                        }
                    }
                    Err(e) => return violations.report(format!("index look-up of {k} after reopening: {e}")),
                }
            }
        }
        Err(e) => violations.report(format!("prepare after reopening: {e}")),
    }
    if index_built {
        // The index built under faults finds durable rows by `v`.
        for &k in sample.iter().take(200) {
            let q = Query::from("s").filter("v", Value::Int4(k.rem_euclid(1000) as i32)).select(["k"]);
            match s.query(&q, &[]) {
                Ok(rows) if rows.contains(&vec![Value::Int8(k)]) => {}
                Ok(_) => {
                    missing += 1;
                    violations.report(format!("durable key {k} not found through s_v"));
                }
                Err(e) => return violations.report(format!("look-up through s_v after reopening: {e}")),
            }
        }
    }
    result.missing_rows = missing;
    if missing > 0 {
        violations.report(format!("{missing} durable rows missing after reopening"));
    }
    // The reopened engine takes new rows.
    let k = -1;
    if let Err(e) = s.insert("s", &row(k)) {
        violations.report(format!("insert after reopening: {e}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stress::Outcome;

    /// The CI-sized run: ~2 s per profile.
    #[test]
    fn stress_storage_short_run_under_both_profiles() {
        let seed = std::env::var("TURNSTILE_STRESS_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(super::super::clock_seed);
        println!("stress storage: seed {seed} (TURNSTILE_STRESS_SEED={seed} replays the choices)");
        let args = Args {
            inserters: 3,
            readers: 2,
            seconds: 2.0,
            seed: Some(seed),
            profile: vec![],
            fault_every_ms: 20,
            data_dir: None,
            json: false,
        };
        for profile in Profile::ALL {
            let dir = tempfile::tempdir().unwrap();
            let r = run_profile(profile, dir.path(), &args, Duration::from_secs(2), seed);
            println!("{}", serde_json::to_string(&r).unwrap());
            assert!(r.passed(), "{profile}: {:?}", r.violation_texts);
            assert!(r.durable_rows > 100, "{profile}: too little work: {r:?}");
            assert!(r.failed_inserts + r.failed_lookups + r.failed_flushes > 0, "{profile}: no fault hit: {r:?}");
        }
    }
}
