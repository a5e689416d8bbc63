//! `turnstile run W…`: the seed workloads on the engine, under both
//! profiles, over lists of parameters and client counts, reported in the
//! seeds' form.
//!
//! For each variant (a point of the workload's parameter lists) the data
//! is loaded once into a data directory; then, for each client count,
//! each profile opens the directory with its own configuration and runs
//! the clients (profiles alternate point by point, so drift of a noisy
//! machine hits both alike). Counters are read before and after the
//! measured phase and reported per transaction; the activity slots are
//! sampled during it for the wait-event profile.

pub mod stat;
pub mod workloads;

use crate::harness::{run_clients, Latency, RunSpec};
use crate::report::{f, Section, Table};
use crate::{plot, progress, CliError};
use serde::Serialize;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use turnstile_engine::memory::minor_faults;
use turnstile_engine::query::QueryMode;
use turnstile_engine::{Engine, Session};
use turnstile_lock::LockStats;
use turnstile_sync::sync::counter::{AtomicBool, Ordering};
use turnstile_sync::{tranche_stats, Profile, Tranche};

use stat::StatSnapshot;
use workloads::{ClientCtx, PointFigures};

pub use workloads::WorkloadId;

/// Options of `turnstile run`.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// The workload: W1 (partitioned join), W2 (star join), W3 (many
    /// indexes), W4 (relation extension), W5 (select-only), W6 (LWLock
    /// starvation).
    pub workload: WorkloadId,
    /// Profiles to run, alternating.
    #[arg(long, value_delimiter = ',', default_values_t = vec!["classic".to_string(), "scalable".to_string()])]
    pub profile: Vec<String>,
    /// Override one knob in every profile, e.g. `--set lock.fast_path_slots=16` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Client counts (oversubscribing the cores on purpose).
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 2, 8, 32])]
    pub clients: Vec<usize>,
    /// Measured seconds per point.
    #[arg(long, default_value_t = 2.0)]
    pub duration: f64,
    /// Warm-up seconds per point.
    #[arg(long, default_value_t = 0.5)]
    pub warmup: f64,
    /// Random seed (keys looked up, rows generated).
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// W1: partition counts.
    #[arg(long, value_delimiter = ',', default_values_t = vec![0, 10, 100, 1000])]
    pub partitions: Vec<u32>,
    /// W1, W2: query modes (`simple`, `prepared`).
    #[arg(long, value_delimiter = ',', default_values_t = vec!["simple".to_string(), "prepared".to_string()])]
    pub mode: Vec<String>,
    /// W2: dimension counts.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 10, 100])]
    pub dimensions: Vec<u32>,
    /// W3: index counts.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 10, 60])]
    pub indexes: Vec<u32>,
    /// W1, W5: scale (100 000 accounts per unit, as pgbench).
    #[arg(long, default_value_t = 0.1)]
    pub scale: f64,
    /// W4: rows per COPY transaction.
    #[arg(long, default_value_t = 1000)]
    pub batch: u32,
    /// W6: writer sessions among the clients (at least one reader is kept
    /// from two clients on).
    #[arg(long, value_delimiter = ',', default_values_t = vec![2])]
    pub writers: Vec<u32>,
    /// Write a speedup heat map and a throughput chart (PNG) into this directory.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// Data directory (default: a temporary one, removed afterwards).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Print the JSON report (the output contract).
    #[arg(long)]
    pub json: bool,
    /// Print CSV (one line per point) instead of tables.
    #[arg(long)]
    pub csv: bool,
}

impl Args {
    /// Parsed `--mode` values.
    fn modes(&self) -> Result<Vec<QueryMode>, CliError> {
        self.mode
            .iter()
            .map(|m| match m.as_str() {
                "simple" => Ok(QueryMode::Simple),
                "prepared" => Ok(QueryMode::Prepared),
                other => Err(format!("unknown --mode {other:?}: expected simple or prepared").into()),
            })
            .collect()
    }

    fn profiles(&self) -> Result<Vec<Profile>, CliError> {
        self.profile.iter().map(|p| Profile::parse(p).map_err(Into::into)).collect()
    }
}

/// What one client of a workload does per transaction.
pub type Txn<'a> = Box<dyn FnMut(&mut Session) -> Result<(), CliError> + 'a>;

/// Per-transaction counters (the output contract's `per_txn`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct PerTxn {
    relation_locks: f64,
    fastpath_locks: f64,
    shared_lock_acquires: f64,
    partition_lock_waits: f64,
    fastpath_overflows: f64,
    mapping_partition_waits: f64,
    fd_opens: f64,
    cache_allocs: f64,
    minor_faults: f64,
}

/// One measured point.
#[derive(Clone, Debug, Serialize)]
pub struct PointResult {
    profile: String,
    params: Json,
    clients: usize,
    tps: f64,
    latency_us: Latency,
    #[serde(skip_serializing_if = "Option::is_none")]
    per_partition_us: Option<f64>,
    per_txn: PerTxn,
    wait_events: BTreeMap<String, f64>,
    /// Activity samples behind `wait_events`.
    wait_event_samples: u64,
    #[serde(flatten)]
    extra: BTreeMap<String, Json>,
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

/// What `turnstile run` produced: the report and the points behind it.
#[derive(Debug)]
pub struct RunReport {
    /// The workload run.
    pub workload: WorkloadId,
    /// JSON (the output contract) and text (tables, or CSV with `--csv`).
    pub section: Section,
    /// The CSV lines (also when the text is tables).
    pub csv: String,
    /// The measured points.
    pub results: Vec<PointResult>,
}

impl RunReport {
    /// Writes the heat map and the line chart of this run into `dir`;
    /// returns the files written.
    pub fn plot(&self, dir: &Path) -> Result<Vec<PathBuf>, CliError> {
        std::fs::create_dir_all(dir)?;
        plots(dir, self.workload, &self.results)
    }
}

/// Runs `turnstile run` and returns its report.
pub fn run(args: &Args) -> Result<RunReport, CliError> {
    let profiles = args.profiles()?;
    if args.clients.is_empty() || args.clients.contains(&0) || args.duration <= 0.0 || args.warmup < 0.0 {
        return Err("--clients must list positive counts; --duration must be positive".into());
    }
    let temp = match &args.data_dir {
        Some(_) => None,
        None => Some(tempfile::Builder::new().prefix("turnstile-run-").tempdir()?),
    };
    let base = args.data_dir.clone().or_else(|| temp.as_ref().map(|t| t.path().to_owned())).ok_or("no data dir")?;
    let workload = workloads::make(args)?;
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
                let mut config = crate::build_config(profile, None, &args.set)?;
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
    let json = json!({
        "workload": name,
        "params": workload.params_json(),
        "results": results,
    });
    let csv = csv(&results);
    let text = if args.csv {
        csv.clone()
    } else {
        let mut text = render(args, &results);
        if let Some((label, stat)) = &last_stat {
            text.push('\n');
            text.push_str(&stat.render(&format!("turnstile stat — engine views of the last point ({label})")));
        }
        text
    };
    let report = RunReport { workload: args.workload, section: Section { json, text }, csv, results };
    if let Some(dir) = &args.plot {
        report.plot(dir)?;
    }
    Ok(report)
}

fn run_point(
    args: &Args,
    workload: &dyn workloads::Workload,
    dir: &Path,
    config: turnstile_sync::Config,
    profile: Profile,
    variant: &workloads::Variant,
    clients: usize,
) -> Result<(PointResult, StatSnapshot), CliError> {
    let engine = Engine::open(dir, config)?;
    workload.before_point(&engine, variant)?;
    let totals = Mutex::new(ClientTotals::default());
    let spec = RunSpec {
        clients,
        warmup: Duration::from_secs_f64(args.warmup),
        duration: Duration::from_secs_f64(args.duration),
        sample_every: Duration::from_millis(2),
    };
    let mut before = None;
    let mut after = None;
    let mut live = None;
    let mut hook_error: Option<CliError> = None;
    let snapshot =
        |e: &Engine| (e.lock_stats(), tranche_stats(Tranche::BufferMapping), e.fd_stats(), e.extension_stats());
    let outcome = run_clients(
        &spec,
        Some(Arc::clone(engine.activity_table())),
        |i, measuring: Arc<AtomicBool>| {
            let mut session = engine.session()?;
            let seed = args.seed ^ (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let ctx = ClientCtx { index: i, clients, seed, measuring: Arc::clone(&measuring) };
            let mut txn = workload.client(&ctx, variant)?;
            let mut probe =
                ClientProbe { totals: &totals, prev: None, start: None, last: None, planning_ns: 0, transactions: 0 };
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
                before = Some(snapshot(&engine));
            } else {
                after = Some(snapshot(&engine));
                // Clients are still running: what a DBA would see now.
                live = Some(StatSnapshot::live(&engine));
            }
            if let Err(e) = workload.on_measure(&engine, start) {
                hook_error.get_or_insert(e);
            }
        },
    );
    if let Some(e) = hook_error {
        return Err(e);
    }
    let outcome = outcome?;
    let (Some(b), Some(a)) = (before, after) else { return Err("counters were not read".into()) };
    let t = totals.into_inner().map_err(|_| "poisoned")?;
    // Per transaction: the clients' own counts over their measured
    // transactions; process-wide counters (mapping waits, fd opens) over
    // the measured phase.
    let n = t.transactions.max(1) as f64;
    let l = t.locks;
    let per_txn = PerTxn {
        relation_locks: (l.fast_path_acquires + l.shared_acquires) as f64 / n,
        fastpath_locks: l.fast_path_acquires as f64 / n,
        shared_lock_acquires: l.shared_acquires as f64 / n,
        partition_lock_waits: l.partition_lock_waits as f64 / n,
        fastpath_overflows: l.fast_path_overflows as f64 / n,
        mapping_partition_waits: a.1.since(&b.1).waits as f64 / n,
        fd_opens: a.2.opens.saturating_sub(b.2.opens) as f64 / n,
        cache_allocs: t.cache_allocs as f64 / n,
        minor_faults: t.minor_faults as f64 / n,
    };
    let figures = PointFigures { outcome: &outcome, extension: (b.3, a.3), mapping: a.1.since(&b.1) };
    let mut extra = workload.extra(&figures)?;
    // Only workloads that plan report it (COPY and INSERT plan nothing).
    if t.planned > 0 && t.planning_ns > 0 {
        extra.insert("planning_us".into(), json!(t.planning_ns as f64 / t.planned as f64 / 1000.0));
    }
    let mut stat = live.unwrap_or_default();
    stat.finish(&engine);
    if workload.writes() {
        engine.flush()?;
    }
    let point = PointResult {
        profile: profile.name().into(),
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

/// `per_partition_us` for one-client W1 points: `(latency(P) − latency(0)) / P`.
fn fill_per_partition(results: &mut [PointResult]) {
    let lat = |r: &PointResult| 1e6 / r.tps.max(1e-9);
    let bases: Vec<(String, Json, f64)> = results
        .iter()
        .filter(|r| r.clients == 1 && r.params.get("partitions").and_then(Json::as_u64) == Some(0))
        .map(|r| (r.profile.clone(), r.params.get("mode").cloned().unwrap_or(Json::Null), lat(r)))
        .collect();
    for r in results.iter_mut().filter(|r| r.clients == 1) {
        let Some(p) = r.params.get("partitions").and_then(Json::as_u64).filter(|&p| p > 0) else { continue };
        let mode = r.params.get("mode").cloned().unwrap_or(Json::Null);
        if let Some((_, _, base)) = bases.iter().find(|(pr, m, _)| *pr == r.profile && *m == mode) {
            r.per_partition_us = Some((lat(r) - base) / p as f64);
        }
    }
}

fn variant_label(params: &Json) -> String {
    match params.as_object() {
        Some(m) => m
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().map_or(v.to_string(), str::to_owned)))
            .collect::<Vec<_>>()
            .join(" "),
        None => params.to_string(),
    }
}

fn render(args: &Args, results: &[PointResult]) -> String {
    let mut out = String::new();
    let mut labels: Vec<String> = Vec::new();
    for r in results {
        let l = variant_label(&r.params);
        if !labels.contains(&l) {
            labels.push(l);
        }
    }
    let mut clients: Vec<usize> = results.iter().map(|r| r.clients).collect();
    clients.sort_unstable();
    clients.dedup();
    let mut header: Vec<String> = vec!["variant".into(), "profile".into()];
    header.extend(clients.iter().map(|c| format!("{c} clients")));
    let header_ref: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = Table::new(format!("{} — transactions per second", args.workload.title()), &header_ref);
    for label in &labels {
        let mut profiles: Vec<&str> = Vec::new();
        for r in results.iter().filter(|r| variant_label(&r.params) == *label) {
            if !profiles.contains(&r.profile.as_str()) {
                profiles.push(&r.profile);
            }
        }
        let tps = |p: &str, c: usize| {
            results
                .iter()
                .find(|r| variant_label(&r.params) == *label && r.profile == p && r.clients == c)
                .map(|r| r.tps)
        };
        for p in &profiles {
            let mut row = vec![label.clone(), (*p).to_owned()];
            row.extend(clients.iter().map(|&c| tps(p, c).map_or("-".into(), |v| f(v, 0))));
            t.row(row);
        }
        if profiles.contains(&"classic") && profiles.contains(&"scalable") {
            let mut row = vec![label.clone(), "speedup".into()];
            row.extend(clients.iter().map(|&c| match (tps("scalable", c), tps("classic", c)) {
                (Some(s), Some(k)) if k > 0.0 => format!("{:.2}x", s / k),
                _ => "-".into(),
            }));
            t.row(row);
        }
    }
    out.push_str(&t.render());
    out.push('\n');
    let mut c = Table::new(
        "Counters per transaction (what explains the result)",
        &[
            "variant",
            "profile",
            "clients",
            "rel locks",
            "fast-path",
            "shared",
            "part. waits",
            "fp overflows",
            "map waits",
            "fd opens",
            "cache allocs",
            "minor faults",
            "p99 us",
        ],
    );
    for r in results {
        let p = &r.per_txn;
        c.row(vec![
            variant_label(&r.params),
            r.profile.clone(),
            r.clients.to_string(),
            f(p.relation_locks, 1),
            f(p.fastpath_locks, 1),
            f(p.shared_lock_acquires, 1),
            f(p.partition_lock_waits, 2),
            f(p.fastpath_overflows, 1),
            f(p.mapping_partition_waits, 2),
            f(p.fd_opens, 2),
            f(p.cache_allocs, 1),
            f(p.minor_faults, 1),
            f(r.latency_us.p99, 0),
        ]);
    }
    out.push_str(&c.render());
    out.push('\n');
    let mut events: BTreeMap<(String, String), f64> = BTreeMap::new();
    for r in results {
        for (k, v) in &r.wait_events {
            *events.entry((r.profile.clone(), k.clone())).or_default() += v;
        }
    }
    let mut w = Table::new(
        "Wait-event profile: SELECT wait_event_type, wait_event, count(*) FROM activity GROUP BY 1, 2 (avg active backends per sample, summed over points)",
        &["profile", "wait_event_type:wait_event", "backends"],
    );
    let mut sorted: Vec<_> = events.into_iter().collect();
    sorted.sort_by(|a, b| a.0 .0.cmp(&b.0 .0).then(b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal)));
    for ((profile, event), v) in sorted {
        w.row(vec![profile, event, f(v, 2)]);
    }
    out.push_str(&w.render());
    if let Some(extra) = render_extra(args.workload, results) {
        out.push('\n');
        out.push_str(&extra);
    }
    if results.iter().any(|r| r.per_partition_us.is_some()) {
        out.push_str("\nMarginal cost of one more partition, one client: (latency(P) - latency(0)) / P\n");
        for r in results.iter().filter(|r| r.per_partition_us.is_some()) {
            out.push_str(&format!(
                "  {} {}: {:.2} us\n",
                r.profile,
                variant_label(&r.params),
                r.per_partition_us.unwrap_or(0.0)
            ));
        }
    }
    out
}

/// A column of [`render_extra`]: the JSON path of a figure under the point's
/// extra keys, and its decimals.
type ExtraColumn = (&'static [&'static str], usize);

/// The workload's own figures (W3 planning, W4 extension phases, W6
/// inserts and waits), one row per point.
fn render_extra(workload: WorkloadId, results: &[PointResult]) -> Option<String> {
    let num = |r: &PointResult, path: &[&str]| -> Option<f64> {
        let mut v = r.extra.get(path[0])?;
        for k in &path[1..] {
            v = v.get(k)?;
        }
        v.as_f64()
    };
    let cell = |v: Option<f64>, digits: usize| v.map_or_else(|| "n/a".to_owned(), |v| f(v, digits));
    let (title, header, cols): (&str, &[&str], Vec<ExtraColumn>) = match workload {
        WorkloadId::W3 => (
            "Planning time per query (seed 003: 2.48 ms -> 0.062 ms with the prefilter)",
            &["variant", "profile", "clients", "planning us", "p50 us", "p99 us"],
            vec![(&["planning_us"], 1)],
        ),
        WorkloadId::W4 => (
            "Relation extension (seed 001): throughput and the per-phase times, summed over clients",
            &[
                "variant",
                "profile",
                "clients",
                "MB/s",
                "lock wait s",
                "lock held s",
                "filesystem s",
                "buffer search s",
                "held s/s",
                "extensions",
                "blocks",
            ],
            vec![
                (&["mb_per_s"], 2),
                (&["extension", "lock_wait_s"], 3),
                (&["extension", "lock_held_s"], 3),
                (&["extension", "filesystem_s"], 3),
                (&["extension", "buffer_search_s"], 3),
                (&["held_seconds_per_second"], 2),
                (&["extension", "extensions"], 0),
                (&["extension", "blocks_added"], 0),
            ],
        ),
        WorkloadId::W6 => (
            "LWLock starvation (seed 004): inserts beside hot readers; BufferMapping waits",
            &[
                "variant",
                "profile",
                "clients",
                "writers",
                "inserts/s",
                "insert p50 us",
                "insert p99 us",
                "insert max us",
                "excl. waits",
                "excl. wait p50 us",
                "excl. wait p99 us",
                "excl. wait max us",
                "map waits",
                "mean wait us",
                "writer wait p99 us*",
                "writer wait max us*",
            ],
            vec![
                (&["writers_running"], 0),
                (&["inserts_per_s"], 0),
                (&["insert_latency_us", "p50"], 0),
                (&["insert_latency_us", "p99"], 0),
                (&["insert_latency_us_max"], 0),
                (&["exclusive_wait_us", "count"], 0),
                (&["exclusive_wait_us", "p50"], 1),
                (&["exclusive_wait_us", "p99"], 0),
                (&["exclusive_wait_us", "max"], 0),
                (&["mapping_waits"], 0),
                (&["mapping_wait_us_mean"], 1),
                (&["inserter_mapping_wait_us", "p99"], 0),
                (&["inserter_mapping_wait_us", "max"], 0),
            ],
        ),
        _ => return None,
    };
    let mut t = Table::new(title, header);
    for r in results {
        let mut row = vec![variant_label(&r.params), r.profile.clone(), r.clients.to_string()];
        row.extend(cols.iter().map(|(path, digits)| cell(num(r, path), *digits)));
        if workload == WorkloadId::W3 {
            row.push(f(r.latency_us.p50, 0));
            row.push(f(r.latency_us.p99, 0));
        }
        t.row(row);
    }
    let mut out = t.render();
    if workload == WorkloadId::W6 {
        let poll = results.iter().find_map(|r| num(r, &["inserter_mapping_wait_us", "resolution_us"])).unwrap_or(0.0);
        out.push_str(&format!(
            "excl. wait: exclusive BufferMapping acquisitions that waited (all sessions, measured phase), timed by the pool.\n\
             * writer wait: writer sessions seen waiting on LWLock:BufferMapping by a sampler polling every ~{poll:.0} us\n  \
             (shared and exclusive waits; waits shorter than a poll are mostly missed). map waits: all sessions, both modes.\n"
        ));
    }
    Some(out)
}

/// Writes `W?-speedup.png` (rows = variants, columns = client counts,
/// `scalable / classic` tps) and `W?-tps.png` into `dir`.
fn plots(dir: &Path, workload: WorkloadId, results: &[PointResult]) -> Result<Vec<PathBuf>, CliError> {
    let mut labels: Vec<String> = Vec::new();
    let mut profiles: Vec<String> = Vec::new();
    let mut clients: Vec<usize> = results.iter().map(|r| r.clients).collect();
    clients.sort_unstable();
    clients.dedup();
    for r in results {
        let l = variant_label(&r.params);
        if !labels.contains(&l) {
            labels.push(l);
        }
        if !profiles.contains(&r.profile) {
            profiles.push(r.profile.clone());
        }
    }
    let tps = |label: &str, profile: &str, c: usize| {
        results
            .iter()
            .find(|r| r.clients == c && r.profile == profile && variant_label(&r.params) == label)
            .map(|r| r.tps)
    };
    let mut written = Vec::new();
    let baseline = if profiles.iter().any(|p| p == "classic") { "classic" } else { profiles[0].as_str() };
    let name = workload.name();
    for other in profiles.iter().filter(|p| p.as_str() != baseline) {
        let cells = labels
            .iter()
            .map(|l| {
                clients
                    .iter()
                    .map(|&c| match (tps(l, other, c), tps(l, baseline, c)) {
                        (Some(s), Some(k)) if k > 0.0 => Some(s / k),
                        _ => None,
                    })
                    .collect()
            })
            .collect();
        let map = plot::HeatMap {
            title: format!("{name}: {other} / {baseline} tps"),
            rows: labels.clone(),
            cols: clients.iter().map(|c| format!("{c} clients")).collect(),
            cells,
        };
        let suffix = if other == "scalable" { String::new() } else { format!("-{other}") };
        let path = dir.join(format!("{name}-speedup{suffix}.png"));
        plot::heat_map(&path, &map)?;
        written.push(path);
    }
    let mut series = Vec::new();
    for (group, l) in labels.iter().enumerate() {
        for p in &profiles {
            let values: Vec<Option<f64>> = clients.iter().map(|&c| tps(l, p, c)).collect();
            if values.iter().any(Option::is_some) {
                let name = if l.is_empty() { p.clone() } else { format!("{l} {p}") };
                series.push(plot::Series { name, group, baseline: p == baseline, values });
            }
        }
    }
    let chart = plot::LineChart {
        title: format!("{name}: throughput vs clients (thin: {baseline}, thick: others)"),
        x_desc: "clients".into(),
        y_desc: "transactions per second".into(),
        x_labels: clients.iter().map(usize::to_string).collect(),
        series,
    };
    let path = dir.join(format!("{name}-tps.png"));
    plot::line_chart(&path, &chart)?;
    written.push(path);
    Ok(written)
}

fn csv(results: &[PointResult]) -> String {
    let mut out = String::from(
        "profile,params,clients,tps,latency_p50_us,latency_p99_us,latency_max_us,relation_locks,fastpath_locks,shared_lock_acquires,partition_lock_waits,fastpath_overflows,mapping_partition_waits,fd_opens,cache_allocs,minor_faults,per_partition_us,extra\n",
    );
    for r in results {
        let p = &r.per_txn;
        out.push_str(&format!(
            "{},\"{}\",{},{:.1},{:.1},{:.1},{:.1},{:.2},{:.2},{:.2},{:.3},{:.2},{:.3},{:.3},{:.2},{:.2},{},\"{}\"\n",
            r.profile,
            variant_label(&r.params),
            r.clients,
            r.tps,
            r.latency_us.p50,
            r.latency_us.p99,
            r.latency_us.max,
            p.relation_locks,
            p.fastpath_locks,
            p.shared_lock_acquires,
            p.partition_lock_waits,
            p.fastpath_overflows,
            p.mapping_partition_waits,
            p.fd_opens,
            p.cache_allocs,
            p.minor_faults,
            r.per_partition_us.map_or(String::new(), |v| format!("{v:.3}")),
            serde_json::to_string(&r.extra).unwrap_or_default().replace('"', "\"\""),
        ));
    }
    out
}
