//! Measuring `turnstile run`: for each variant the data is loaded once;
//! then, for each client count, each profile opens the directory with its
//! own configuration and runs the clients on the harness. Counters are
//! read before and after the measured phase and turned into per-transaction
//! figures; nothing here formats anything (see `render.rs`).

use super::result::{PerTxn, PointResult, RunReport};
use super::stat::StatSnapshot;
use super::Args;
use crate::cli::{self, build_config, CliError};
use crate::harness::{run_clients, Latency, RunOutcome, RunSpec};
use crate::progress;
use crate::workload::in_process::{ClientCtx, InProcess, ParamValue, PointFigures, Variant};
use crate::workload::{make_in_process, Param};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use turnstile_engine::memory::minor_faults;
use turnstile_engine::{Engine, Session};
use turnstile_lock::LockStats;
use turnstile_storage::{ExtensionStats, FdStats};
use turnstile_sync::sync::counter::{AtomicBool, Ordering};
use turnstile_sync::{tranche_stats, Config, Profile, Tranche, TrancheStats};

/// Runs `turnstile run`'s points and returns what they measured.
pub fn run(args: &Args) -> Result<RunReport, CliError> {
    let profiles = cli::profiles(&args.profile);
    if args.clients.is_empty() || args.clients.contains(&0) || args.duration <= 0.0 || args.warmup < 0.0 {
        return Err("--clients must list positive counts; --duration must be positive".into());
    }
    let temp = match &args.data_dir {
        Some(_) => None,
        None => Some(tempfile::Builder::new().prefix("turnstile-run-").tempdir()?),
    };
    let base = args.data_dir.clone().or_else(|| temp.as_ref().map(|t| t.path().to_owned())).ok_or("no data dir")?;
    let workload = make_in_process(args.workload.definition(), args.setup())?;
    let variants = workload.variants()?;
    let name = args.workload.name();
    let bar = progress::points((variants.len() * args.clients.len() * profiles.len()) as u64, name);
    // Ticks on its own, so the elapsed time moves while a data set loads.
    progress::tick(&bar);
    let mut results: Vec<PointResult> = Vec::new();
    let mut last_stat = None;
    for variant in &variants {
        let dir = base.join(format!("{name}-{}", workload.data_key(variant)));
        std::fs::create_dir_all(&dir)?;
        if !dir.join("catalog").exists() {
            bar.set_message(format!("loading {variant}"));
            workload.load(&dir, variant)?;
        }
        for &clients in &args.clients {
            for &profile in &profiles {
                bar.set_message(format!("{variant} {profile} {clients} clients"));
                let mut config = build_config(profile, None, &args.overrides.set)?;
                config.lock.max_backends = config.lock.max_backends.max(clients as u32 + 8);
                let (point, stat) = run_point(args, &*workload, &dir, config, profile, variant, clients)?;
                results.push(point);
                last_stat = Some((format!("{variant}, {profile}, {clients} clients"), stat));
                bar.inc(1);
            }
        }
    }
    bar.finish_and_clear();
    fill_per_partition(&mut results);
    Ok(RunReport { workload: args.workload, params: workload.params_json(), results, last_stat })
}

/// The engine's process-wide counters, read when the measured phase starts
/// and when it ends.
struct Counters {
    mapping: TrancheStats,
    fds: FdStats,
    extension: ExtensionStats,
    snapshots: turnstile_engine::mvcc::SnapshotStats,
    wal: turnstile_storage::wal::WalStats,
}

impl Counters {
    fn read(e: &Engine) -> Counters {
        Counters {
            mapping: tranche_stats(Tranche::BufferMapping),
            fds: e.fd_stats(),
            extension: e.extension_stats(),
            snapshots: e.snapshot_stats(),
            wal: e.log().wal().stats(),
        }
    }
}

/// What the harness hook saw: the counters at both ends of the measured
/// phase, the engine views while clients ran, and a workload hook's error.
#[derive(Default)]
struct PhaseEnds {
    before: Option<Counters>,
    after: Option<Counters>,
    live: Option<StatSnapshot>,
    hook_error: Option<CliError>,
}

/// One point: the workload's clients on a freshly opened engine, measured.
fn run_point(
    args: &Args,
    workload: &dyn InProcess,
    dir: &Path,
    config: Config,
    profile: Profile,
    variant: &Variant,
    clients: usize,
) -> Result<(PointResult, StatSnapshot), CliError> {
    let engine = Engine::open(dir, config)?;
    workload.before_point(&engine, variant)?;
    let totals = Mutex::new(ClientTotals::default());
    let (outcome, ends) = run_measured(args, workload, &engine, variant, clients, &totals)?;
    let (Some(b), Some(a)) = (ends.before, ends.after) else { return Err("counters were not read".into()) };
    let t = totals.into_inner().map_err(|_| "poisoned")?;
    let mapping = a.mapping.since(&b.mapping);
    let per_txn = per_transaction(&t, &b, &a, mapping);
    let figures = PointFigures { outcome: &outcome, extension: (b.extension, a.extension), mapping };
    let mut extra = workload.extra(&figures)?;
    // Only workloads that plan report it (COPY and INSERT plan nothing).
    if t.planned > 0 && t.planning_ns > 0 {
        extra.planning_us = Some(t.planning_ns as f64 / t.planned as f64 / 1000.0);
    }
    let mut stat = ends.live.unwrap_or_default();
    stat.finish(&engine);
    if workload.writes() {
        engine.flush()?;
    }
    let point = PointResult {
        profile,
        params: variant.params.clone(),
        clients,
        tps: outcome.tps(),
        latency_us: Latency::from_ns_histogram(&outcome.latency_ns),
        per_partition_us: None,
        per_txn,
        wait_events: outcome.wait_events.clone(),
        wait_event_samples: outcome.samples,
        extra,
    };
    Ok((point, stat))
}

/// Runs the clients on the harness, reading the counters at both ends of
/// the measured phase.
fn run_measured(
    args: &Args,
    workload: &dyn InProcess,
    engine: &Arc<Engine>,
    variant: &Variant,
    clients: usize,
    totals: &Mutex<ClientTotals>,
) -> Result<(RunOutcome, PhaseEnds), CliError> {
    let spec = RunSpec {
        clients,
        warmup: Duration::from_secs_f64(args.warmup),
        duration: Duration::from_secs_f64(args.duration),
        sample_every: Duration::from_millis(2),
    };
    let mut ends = PhaseEnds::default();
    let outcome = run_clients(
        &spec,
        Some(Arc::clone(engine.activity_table())),
        |i, measuring: Arc<AtomicBool>| {
            let mut session = engine.session()?;
            let seed = args.seed ^ (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let ctx = ClientCtx { index: i, clients, seed, measuring: Arc::clone(&measuring) };
            let mut txn = workload.client(&ctx, variant)?;
            let mut probe =
                ClientProbe { totals, prev: None, start: None, last: None, planning_ns: 0, transactions: 0 };
            Ok(move || -> Result<(), CliError> {
                // Name the whole probe so the closure owns it (its fields are
                // `Copy`; captured one by one they would be copies, and the
                // probe would be dropped, empty, right away).
                let probe = &mut probe;
                txn(&mut session)?;
                probe.after_transaction(&session, measuring.load(Ordering::Relaxed));
                Ok(())
            })
        },
        |start| {
            if start {
                ends.before = Some(Counters::read(engine));
            } else {
                ends.after = Some(Counters::read(engine));
                // Clients are still running: what a DBA would see now.
                ends.live = Some(StatSnapshot::live(engine));
            }
            if let Err(e) = workload.on_measure(engine, start) {
                ends.hook_error.get_or_insert(e);
            }
        },
    );
    if let Some(e) = ends.hook_error.take() {
        return Err(e);
    }
    Ok((outcome?, ends))
}

/// Per transaction: the clients' own counts over their measured
/// transactions; process-wide counters (mapping waits, fd opens) over the
/// measured phase.
fn per_transaction(t: &ClientTotals, b: &Counters, a: &Counters, mapping: TrancheStats) -> PerTxn {
    let n = t.transactions.max(1) as f64;
    let l = &t.locks;
    PerTxn {
        relation_locks: (l.fast_path_acquires + l.shared_acquires) as f64 / n,
        fastpath_locks: l.fast_path_acquires as f64 / n,
        shared_lock_acquires: l.shared_acquires as f64 / n,
        partition_lock_waits: l.partition_lock_waits as f64 / n,
        fastpath_overflows: l.fast_path_overflows as f64 / n,
        mapping_partition_waits: mapping.waits as f64 / n,
        fd_opens: a.fds.opens.saturating_sub(b.fds.opens) as f64 / n,
        cache_allocs: t.cache_allocs as f64 / n,
        minor_faults: t.minor_faults as f64 / n,
        snapshots: a.snapshots.snapshots.saturating_sub(b.snapshots.snapshots) as f64 / n,
        snapshot_shared_acquires: a.snapshots.shared_acquisitions.saturating_sub(b.snapshots.shared_acquisitions)
            as f64
            / n,
        xids: a.snapshots.xids.saturating_sub(b.snapshots.xids) as f64 / n,
        wal_records: a.wal.wal_records.saturating_sub(b.wal.wal_records) as f64 / n,
        wal_bytes: a.wal.wal_bytes.saturating_sub(b.wal.wal_bytes) as f64 / n,
        wal_shared_acquires: a.wal.shared_acquisitions.saturating_sub(b.wal.shared_acquisitions) as f64 / n,
        wal_syncs: a.wal.wal_sync.saturating_sub(b.wal.wal_sync) as f64 / n,
    }
}

/// A client's view of its own counters over the measured phase.
struct ClientProbe<'a> {
    totals: &'a Mutex<ClientTotals>,
    /// The client's counters after its previous transaction.
    prev: Option<ProbeCounters>,
    /// The same just before its first measured transaction.
    start: Option<ProbeCounters>,
    /// The same after its last measured transaction.
    last: Option<ProbeCounters>,
    /// Planning time and transactions measured.
    planning_ns: u64,
    transactions: u64,
}

/// What a client reads of its own session between two transactions.
#[derive(Clone, Copy)]
struct ProbeCounters {
    blocks_from_cache: u64,
    minor_faults: u64,
    locks: LockStats,
}

impl ProbeCounters {
    fn read(session: &Session) -> ProbeCounters {
        ProbeCounters {
            blocks_from_cache: session.memory_stats().blocks_from_cache,
            minor_faults: minor_faults(),
            locks: session.backend().stats(),
        }
    }
}

impl ClientProbe<'_> {
    /// Called after every transaction: counters are taken at transaction
    /// boundaries only, so the measured figures cover whole transactions —
    /// from just before the first measured one to just after the last.
    fn after_transaction(&mut self, session: &Session, measured: bool) {
        let now = ProbeCounters::read(session);
        if measured {
            if self.start.is_none() {
                self.start = Some(self.prev.unwrap_or(now));
            }
            self.last = Some(now);
            self.planning_ns += session.last_planning_time().as_nanos() as u64;
            self.transactions += 1;
        }
        self.prev = Some(now);
    }
}

impl Drop for ClientProbe<'_> {
    fn drop(&mut self) {
        if let (Some(s), Some(l), Ok(mut t)) = (self.start, self.last, self.totals.lock()) {
            t.cache_allocs += l.blocks_from_cache.saturating_sub(s.blocks_from_cache);
            t.minor_faults += l.minor_faults.saturating_sub(s.minor_faults);
            t.planning_ns += self.planning_ns;
            t.planned += self.transactions;
            t.transactions += self.transactions;
            let d = l.locks.since(&s.locks);
            t.locks.fast_path_acquires += d.fast_path_acquires;
            t.locks.shared_acquires += d.shared_acquires;
            t.locks.partition_lock_waits += d.partition_lock_waits;
            t.locks.fast_path_overflows += d.fast_path_overflows;
        }
    }
}

/// Figures a client hands in when it is dropped.
#[derive(Default)]
struct ClientTotals {
    cache_allocs: u64,
    minor_faults: u64,
    planning_ns: u64,
    planned: u64,
    /// Transactions the probes counted (the per-transaction divisor).
    transactions: u64,
    /// The clients' own lock counters over exactly their measured
    /// transactions.
    locks: LockStats,
}

/// `per_partition_us` for one-client points of a workload that sweeps
/// partitions (W1): `(latency(P) − latency(0)) / P`.
fn fill_per_partition(results: &mut [PointResult]) {
    let key = Param::Partitions.key();
    let lat = |r: &PointResult| 1e6 / r.tps.max(1e-9);
    let bases: Vec<(Profile, Option<ParamValue>, f64)> = results
        .iter()
        .filter(|r| r.clients == 1 && r.params.count(key) == Some(0))
        .map(|r| (r.profile, r.params.get("mode"), lat(r)))
        .collect();
    for r in results.iter_mut().filter(|r| r.clients == 1) {
        let Some(p) = r.params.count(key).filter(|&p| p > 0) else { continue };
        if let Some((_, _, base)) = bases.iter().find(|(pr, m, _)| *pr == r.profile && *m == r.params.get("mode")) {
            r.per_partition_us = Some((lat(r) - base) / f64::from(p));
        }
    }
}
