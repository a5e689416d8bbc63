//! `turnstile micro lock`: the heavyweight lock manager (Vondra 2024, Haas 2011).
//!
//! Every measurement runs three configurations side by side: `classic`
//! (PostgreSQL's LWLock fast-path protocol), and `scalable` with each
//! fast-path protocol (`lock.fast_path_protocol = lwlock | lockfree`;
//! `lockfree` is the profile's own). JSON entries carry `profile` and
//! `protocol`.
//!
//! 1. `fastpath_lock_release` — one backend takes and releases an
//!    AccessShare lock on one relation (the fast path), against an
//!    uncontended `parking_lot::Mutex` lock + unlock timed in the same run.
//! 2. `shared_lock_release` — the same with ShareUpdateExclusive, a mode
//!    that never uses the fast path (shared table, partition lock).
//! 3. `txn` — T threads, each with its own backend, run transactions that
//!    lock R relations AccessShare and then `release_all`, after a warm-up;
//!    reported as transactions per second and as shared work per
//!    transaction (counter deltas). The threads are the lab harness's
//!    ([`run_workers`]): one controller and T workers per configuration.
//!
//! On a small machine the counters and ratios are the result (docs/architecture.md, "The lab"):
//! shared-table and partition-lock acquisitions per transaction predict
//! contention on any number of cores.
//!
//! The machine may be shared, so every timing is taken as the best of
//! several short measurements alternating between the things compared:
//! single operations as the fastest of `--rounds` chunks interleaved with
//! the reference mutex; transaction points as the best of `--slices`
//! slices alternating between the configurations (`txn_per_s`; the mean
//! over all slices is `txn_per_s_mean`). Per-transaction counters are exact
//! deltas over every measured slice.

use crate::cli::CliError;
use crate::harness::run_workers;
use crate::report::{Section, Table};
use serde_json::json;
use std::hint::black_box;
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};
use turnstile_lock::{Backend, LockManager, LockMode, LockStats, LockTag, Wait};
use turnstile_sync::config::{Config, FastPathProtocol, Profile};
use turnstile_sync::sync::counter::{AtomicBool, AtomicU64, Ordering};

/// Options of `turnstile micro lock`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// `--json`.
    #[command(flatten)]
    pub output: super::Output,
    /// Relations locked per transaction.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 16, 100, 1000, 2000])]
    pub relations: Vec<usize>,
    /// Threads (one backend each).
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 2, 8, 32])]
    pub threads: Vec<usize>,
    /// How long each transaction point is measured (per profile, over all
    /// slices), in milliseconds.
    #[arg(long, default_value_t = 360)]
    pub measure_ms: u64,
    /// How long each point warms up before measuring, in milliseconds.
    #[arg(long, default_value_t = 60)]
    pub warmup_ms: u64,
    /// Rounds of the single-operation timings (the fastest chunk counts).
    #[arg(long, default_value_t = 40)]
    pub rounds: u32,
    /// Length of one single-operation timing chunk, in milliseconds.
    #[arg(long, default_value_t = 8)]
    pub chunk_ms: u64,
    /// Alternating slices the two profiles of a transaction point are
    /// measured in; txn/s is the best slice's (the least disturbed by other
    /// load on the machine), the per-transaction counters cover all.
    #[arg(long, default_value_t = 6)]
    pub slices: u32,
}

impl Args {
    /// The quick default of `turnstile reproduce`.
    pub fn reproduce() -> Args {
        Args {
            output: super::Output::default(),
            relations: vec![1, 100, 1000],
            threads: vec![1, 2, 8],
            measure_ms: 150,
            warmup_ms: 40,
            rounds: 15,
            chunk_ms: 5,
            slices: 2,
        }
    }
}

/// The database id of every benchmark relation.
const DB: u32 = 1;
/// The first relation id of a transaction's relations.
const FIRST_RELATION: u32 = 16384;

/// One configuration measured: a profile, with its fast path run by one
/// protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Variant {
    profile: Profile,
    protocol: FastPathProtocol,
}

impl Variant {
    /// `classic` (always `lwlock`), then `scalable` with `lwlock` and with
    /// `lockfree` (its own). The order of the `txn` JSON entries; the
    /// single-operation entries list each profile's own protocol first.
    const ALL: [Variant; 3] = [
        Variant { profile: Profile::Classic, protocol: FastPathProtocol::Lwlock },
        Variant { profile: Profile::Scalable, protocol: FastPathProtocol::Lwlock },
        Variant { profile: Profile::Scalable, protocol: FastPathProtocol::Lockfree },
    ];

    fn config(self) -> Config {
        let mut config = Config::preset(self.profile);
        config.lock.fast_path_protocol = self.protocol;
        config
    }

    /// Whether this is the profile's own protocol.
    fn is_preset(self) -> bool {
        Config::preset(self.profile).lock.fast_path_protocol == self.protocol
    }

    fn label(self) -> String {
        format!("{} {}", self.profile, self.protocol)
    }
}

/// Runs the benchmark.
pub fn run(args: &Args) -> Result<Section, CliError> {
    if args.relations.is_empty() || args.threads.is_empty() || args.relations.contains(&0) || args.threads.contains(&0)
    {
        return Err("micro lock: --relations and --threads need at least one value, each > 0".into());
    }
    let mut results = Vec::new();
    let ops = single_operations(args, &mut results)?;

    // (3) transactions. The configurations of one (R, T) point are measured
    // in alternating slices, so background load on a shared machine hits
    // them alike and their ratios stay meaningful.
    let mut points = Vec::new();
    for &relations in &args.relations {
        for &threads in &args.threads {
            for (variant, p) in measure_point(relations, threads, args)? {
                points.push((variant, relations, threads, p));
            }
        }
    }
    results.extend(txn_results(&points, args));

    let text = render_text(&ops, &points, args);
    Ok(Section { json: json!({"bench": "lock", "results": results}), text })
}

/// (1) and (2): one lock and release through the fast path and through
/// the shared table, per protocol, beside the mutex reference; the JSON
/// entries go into `results`, the table is returned.
fn single_operations(args: &Args, results: &mut Vec<serde_json::Value>) -> Result<Table, CliError> {
    let mut ops = Table::new(
        "Single lock + release, one backend (ns per operation; ratio to parking_lot::Mutex lock + unlock)",
        &["operation", "profile", "protocol", "ns/op", "× mutex"],
    );

    // (1) and (2): many short chunks, alternating with the reference, and
    // the fastest chunk of each counts — so background load on a shared
    // machine inflates neither side of the ratio.
    let chunk = Duration::from_millis(args.chunk_ms.max(1));
    let mut reference_ns = f64::INFINITY;
    let mut backends = Vec::new();
    for variant in Variant::ALL {
        let manager = LockManager::new(&variant.config())?;
        let backend = manager.register()?;
        backends.push((variant, backend, f64::INFINITY, f64::INFINITY));
    }
    for _ in 0..args.rounds.max(1) {
        for (_, backend, fast, shared) in &mut backends {
            reference_ns = reference_ns.min(time_mutex(chunk));
            *fast = fast.min(time_single(backend, LockMode::AccessShare, chunk)?);
            *shared = shared.min(time_single(backend, LockMode::ShareUpdateExclusive, chunk)?);
        }
    }
    // Each profile's own protocol first (what a reader of "the scalable
    // entry" means).
    backends.sort_by_key(|(v, ..)| (v.profile == Profile::Scalable, !v.is_preset()));
    results.push(json!({"name": "reference_mutex_lock_unlock", "ns_per_op": reference_ns}));
    ops.row(vec![
        "parking_lot::Mutex lock+unlock".into(),
        "-".into(),
        "-".into(),
        format!("{reference_ns:.1}"),
        "1.00".into(),
    ]);
    for (variant, _, fast, shared) in &backends {
        for (name, ns) in [("fastpath_lock_release", *fast), ("shared_lock_release", *shared)] {
            results.push(json!({
                "name": name,
                "profile": variant.profile.name(),
                "protocol": variant.protocol.name(),
                "ns_per_op": ns,
                "ratio_to_ref": ns / reference_ns,
            }));
            ops.row(vec![
                name.into(),
                variant.profile.name().into(),
                variant.protocol.name().into(),
                format!("{ns:.1}"),
                format!("{:.2}", ns / reference_ns),
            ]);
        }
    }
    drop(backends);
    Ok(ops)
}

/// The JSON entries of the transaction points, by relations, variant and
/// threads.
fn txn_results(points: &[(Variant, usize, usize, TxnPoint)], args: &Args) -> Vec<serde_json::Value> {
    let mut results = Vec::new();
    for &relations in &args.relations {
        for variant in Variant::ALL {
            for &threads in &args.threads {
                let Some((_, _, _, p)) =
                    points.iter().find(|(v, r, t, _)| *v == variant && *r == relations && *t == threads)
                else {
                    continue;
                };
                results.push(json!({
                    "name": "txn",
                    "profile": variant.profile.name(),
                    "protocol": variant.protocol.name(),
                    "relations": relations,
                    "threads": threads,
                    "txn_per_s": p.txn_per_s,
                    "txn_per_s_mean": p.txn_per_s_mean,
                    "ns_per_lock": p.ns_per_lock,
                    "per_txn": {
                        "shared_acquires": p.per_txn(|s| s.shared_acquires),
                        "partition_lock_acquires": p.per_txn(|s| s.partition_lock_acquires),
                        "partition_lock_waits": p.per_txn(|s| s.partition_lock_waits),
                        "fastpath_acquires": p.per_txn(|s| s.fast_path_acquires),
                        "fastpath_overflows": p.per_txn(|s| s.fast_path_overflows),
                    },
                }));
            }
        }
    }

    results
}

/// Best-effort nanoseconds per `parking_lot::Mutex` lock + unlock.
fn time_mutex(budget: Duration) -> f64 {
    let mutex = parking_lot::Mutex::new(0u64);
    time_loop(budget, || {
        *black_box(&mutex).lock() += 1;
    })
}

/// Nanoseconds per lock + release of one relation in `mode` by `backend`.
fn time_single(backend: &mut Backend, mode: LockMode, budget: Duration) -> Result<f64, CliError> {
    let tag = LockTag::relation(DB, FIRST_RELATION);
    let mut failed = None;
    let ns = time_loop(budget, || {
        if let Err(e) = backend.lock(black_box(tag), mode, Wait::Block) {
            failed = Some(e);
        }
        if let Err(e) = backend.unlock(black_box(tag), mode) {
            failed = Some(e);
        }
    });
    match failed {
        Some(e) => Err(e.into()),
        None => Ok(ns),
    }
}

/// Runs `op` in batches until `budget` has passed; nanoseconds per call.
fn time_loop(budget: Duration, mut op: impl FnMut()) -> f64 {
    const BATCH: u64 = 500;
    for _ in 0..BATCH {
        op();
    }
    let start = Instant::now();
    let mut calls = 0u64;
    while start.elapsed() < budget {
        for _ in 0..BATCH {
            op();
        }
        calls += BATCH;
    }
    start.elapsed().as_nanos() as f64 / calls as f64
}

struct TxnPoint {
    /// The best slice's rate: the least disturbed by other load.
    txn_per_s: f64,
    /// Over all slices.
    txn_per_s_mean: f64,
    ns_per_lock: f64,
    txns: u64,
    delta: LockStats,
}

impl TxnPoint {
    fn per_txn(&self, counter: impl Fn(&LockStats) -> u64) -> f64 {
        counter(&self.delta) as f64 / self.txns.max(1) as f64
    }
}

/// One configuration of a transaction point: its manager, and the
/// controls its T workers obey. The workers run transactions of
/// `relations` AccessShare locks + `release_all` while their slice runs,
/// and wait at `gate` otherwise.
struct Lane {
    variant: Variant,
    threads: usize,
    relations: usize,
    manager: Arc<LockManager>,
    /// The workers' backends, registered up front (taken by the workers).
    backends: Mutex<Vec<Backend>>,
    /// Set while the lane is measured; cleared to end a slice.
    running: AtomicBool,
    /// Transactions completed, added by each worker at the end of a slice.
    completed: AtomicU64,
    /// The workers and the controller meet here between slices.
    gate: Barrier,
}

/// What a harness thread of [`measure_point`] returns.
enum Role {
    /// The controller: each lane's point.
    Controller(Vec<(Variant, TxnPoint)>),
    /// A worker: its error, if its transactions failed.
    Worker(Option<String>),
}

/// Measures the (R, T) point for every configuration, in alternating
/// slices, on the lab harness's threads: thread 0 is the controller, the
/// others T workers per configuration.
fn measure_point(relations: usize, threads: usize, args: &Args) -> Result<Vec<(Variant, TxnPoint)>, CliError> {
    let mut lanes = Vec::new();
    for variant in Variant::ALL {
        let mut config = variant.config();
        config.lock.max_backends = config.lock.max_backends.max(threads as u32);
        let manager = LockManager::new(&config)?;
        let backends = (0..threads).map(|_| manager.register()).collect::<Result<Vec<_>, _>>()?;
        lanes.push(Lane {
            variant,
            threads,
            relations,
            manager,
            backends: Mutex::new(backends),
            running: AtomicBool::new(false),
            completed: AtomicU64::new(0),
            gate: Barrier::new(threads + 1),
        });
    }
    let done = AtomicBool::new(false);
    let warmup = Duration::from_millis(args.warmup_ms);
    let slices = args.slices.max(1);
    let slice = Duration::from_millis((args.measure_ms / u64::from(slices)).max(10));
    let roles = run_workers(1 + lanes.len() * threads, |i| {
        let (lanes, done) = (&lanes, &done);
        let backend = match i {
            0 => None,
            _ => {
                let lane = &lanes[(i - 1) / threads];
                let taken = lane.backends.lock().unwrap_or_else(|p| p.into_inner()).pop();
                Some((lane, taken.ok_or("micro lock: a worker found no backend")?))
            }
        };
        Ok(move || -> Result<Role, CliError> {
            match backend {
                None => Ok(Role::Controller(control(lanes, done, slices, slice))),
                Some((lane, backend)) => Ok(Role::Worker(work(lane, backend, relations, warmup, done))),
            }
        })
    })?;
    let mut points = Vec::new();
    for role in roles {
        match role {
            Role::Controller(p) => points = p,
            Role::Worker(Some(e)) => return Err(format!("micro lock: {e}").into()),
            Role::Worker(None) => {}
        }
    }
    Ok(points)
}

/// A worker: warms up, then runs transactions whenever its lane's slice
/// runs, until the controller says done.
fn work(lane: &Lane, mut backend: Backend, relations: usize, warmup: Duration, done: &AtomicBool) -> Option<String> {
    let txn = |backend: &mut Backend| -> Result<(), String> {
        for i in 0..relations {
            let tag = LockTag::relation(DB, FIRST_RELATION + i as u32);
            backend.lock(tag, LockMode::AccessShare, Wait::Block).map_err(|e| e.to_string())?;
        }
        backend.release_all();
        Ok(())
    };
    let started = Instant::now();
    let mut failure = None;
    let mut n = 0;
    while n < 2 || started.elapsed() < warmup {
        if let Err(e) = txn(&mut backend) {
            failure = Some(e);
            break;
        }
        n += 1;
    }
    lane.gate.wait(); // warmed up
    loop {
        lane.gate.wait(); // a slice starts, or the end
        if done.load(Ordering::Relaxed) {
            break;
        }
        let mut in_slice = 0;
        while failure.is_none() && lane.running.load(Ordering::Relaxed) {
            match txn(&mut backend) {
                Ok(()) => in_slice += 1,
                Err(e) => failure = Some(e),
            }
        }
        lane.completed.fetch_add(in_slice, Ordering::Relaxed);
        lane.gate.wait(); // the slice ended
    }
    failure
}

/// The controller: waits for every lane's warm-up, runs `slices` slices
/// of each lane in turn, then ends the workers.
fn control(lanes: &[Lane], done: &AtomicBool, slices: u32, slice: Duration) -> Vec<(Variant, TxnPoint)> {
    for lane in lanes {
        lane.gate.wait(); // the lane's workers are warmed up
    }
    let mut best = vec![(0.0f64, Duration::ZERO, 0u64); lanes.len()];
    let mut elapsed = vec![Duration::ZERO; lanes.len()];
    let mut delta = vec![LockStats::default(); lanes.len()];
    for _ in 0..slices {
        for (k, lane) in lanes.iter().enumerate() {
            let before = lane.manager.stats();
            let txns_before = lane.completed.load(Ordering::Relaxed);
            lane.running.store(true, Ordering::Relaxed);
            let start = Instant::now();
            lane.gate.wait();
            std::thread::sleep(slice);
            lane.running.store(false, Ordering::Relaxed);
            lane.gate.wait();
            let took = start.elapsed();
            elapsed[k] += took;
            let txns = lane.completed.load(Ordering::Relaxed) - txns_before;
            let rate = txns as f64 / took.as_secs_f64().max(1e-9);
            if rate > best[k].0 {
                best[k] = (rate, took, txns);
            }
            let d = lane.manager.stats().since(&before);
            let sum = &mut delta[k];
            sum.shared_acquires += d.shared_acquires;
            sum.partition_lock_acquires += d.partition_lock_acquires;
            sum.partition_lock_waits += d.partition_lock_waits;
            sum.fast_path_acquires += d.fast_path_acquires;
            sum.fast_path_overflows += d.fast_path_overflows;
        }
    }
    done.store(true, Ordering::Relaxed);
    for lane in lanes {
        lane.gate.wait(); // release the workers
    }
    lanes
        .iter()
        .enumerate()
        .map(|(k, lane)| {
            let (rate, best_elapsed, best_txns) = best[k];
            let txns = lane.completed.load(Ordering::Relaxed);
            let per_lock = best_elapsed.as_nanos() as f64 * lane.threads as f64;
            (
                lane.variant,
                TxnPoint {
                    txn_per_s: rate,
                    txn_per_s_mean: txns as f64 / elapsed[k].as_secs_f64().max(1e-9),
                    ns_per_lock: per_lock / (best_txns.max(1) as f64 * lane.relations as f64),
                    txns,
                    delta: delta[k],
                },
            )
        })
        .collect()
}

fn render_text(ops: &Table, points: &[(Variant, usize, usize, TxnPoint)], args: &Args) -> String {
    let mut header = vec!["relations / configuration".to_string()];
    header.extend(args.threads.iter().map(|t| format!("T={t}")));
    let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut tps = Table::new(
        "Transactions of R AccessShare relation locks + release_all (txn/s; speedups over classic, and of the lockfree protocol over lwlock under scalable)",
        &header_refs,
    );
    let mut counters = Table::new(
        "Shared work per transaction (after warm-up)",
        &[
            "relations / configuration / T",
            "shared acq",
            "partition acq",
            "partition waits",
            "fast-path acq",
            "fast-path overflows",
            "ns/lock",
        ],
    );
    let find = |variant: Variant, r: usize, t: usize| {
        points.iter().find(|(v, rr, tt, _)| *v == variant && *rr == r && *tt == t).map(|x| &x.3)
    };
    let [classic, scalable_lwlock, scalable_lockfree] = Variant::ALL;
    for &r in &args.relations {
        for variant in Variant::ALL {
            let mut row = vec![format!("R={r} {}", variant.label())];
            for &t in &args.threads {
                row.push(find(variant, r, t).map_or("-".into(), |p| format!("{:.0}", p.txn_per_s)));
                if let Some(p) = find(variant, r, t) {
                    counters.row(vec![
                        format!("R={r} {} T={t}", variant.label()),
                        format!("{:.1}", p.per_txn(|s| s.shared_acquires)),
                        format!("{:.1}", p.per_txn(|s| s.partition_lock_acquires)),
                        format!("{:.2}", p.per_txn(|s| s.partition_lock_waits)),
                        format!("{:.1}", p.per_txn(|s| s.fast_path_acquires)),
                        format!("{:.1}", p.per_txn(|s| s.fast_path_overflows)),
                        format!("{:.1}", p.ns_per_lock),
                    ]);
                }
            }
            tps.row(row);
        }
        for (label, over, under) in [
            ("scalable lockfree / classic", scalable_lockfree, classic),
            ("lockfree / lwlock (scalable)", scalable_lockfree, scalable_lwlock),
        ] {
            let mut speedup = vec![format!("R={r} {label}")];
            for &t in &args.threads {
                speedup.push(match (find(under, r, t), find(over, r, t)) {
                    (Some(u), Some(o)) if u.txn_per_s > 0.0 => format!("{:.2}x", o.txn_per_s / u.txn_per_s),
                    _ => "-".into(),
                });
            }
            tps.row(speedup);
        }
    }
    format!("{}\n{}\n{}", ops.render(), tps.render(), counters.render())
}
