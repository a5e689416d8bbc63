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

pub mod workloads;

use crate::harness::{run_clients, Latency, RunSpec};
use crate::report::{f, Section, Table};
use crate::CliError;
use serde::Serialize;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use turnstile_engine::memory::minor_faults;
use turnstile_engine::query::QueryMode;
use turnstile_engine::{Engine, Session};
use turnstile_sync::{tranche_stats, Profile, Tranche};

pub use workloads::WorkloadId;

/// Options of `turnstile run`.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// The workload: W1 (partitioned join), W2 (star join), W3 (many
    /// indexes), W4 (relation extension), W5 (select-only).
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
}

/// Runs `turnstile run` and returns its report.
pub fn run(args: &Args) -> Result<Section, CliError> {
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
    let mut results: Vec<PointResult> = Vec::new();
    for variant in workload.variants()? {
        let dir = base.join(format!("{}-{}", args.workload.name(), workload.data_key(&variant)));
        std::fs::create_dir_all(&dir)?;
        if !dir.join("catalog").exists() {
            eprintln!("turnstile: {} {}: loading", args.workload.name(), variant);
            workload.load(&dir, &variant)?;
        }
        for &clients in &args.clients {
            for &profile in &profiles {
                eprintln!("turnstile: {} {} {profile} {clients} clients", args.workload.name(), variant);
                let mut config = crate::build_config(profile, None, &args.set)?;
                config.lock.max_backends = config.lock.max_backends.max(clients as u32 + 8);
                let point = run_point(args, &*workload, &dir, config, profile, &variant, clients)?;
                results.push(point);
            }
        }
    }
    fill_per_partition(&mut results);
    let json = json!({
        "workload": args.workload.name(),
        "params": workload.params_json(),
        "results": results,
    });
    let text = if args.csv { csv(&results) } else { render(args, &results) };
    Ok(Section { json, text })
}

fn run_point(
    args: &Args,
    workload: &dyn workloads::Workload,
    dir: &Path,
    config: turnstile_sync::Config,
    profile: Profile,
    variant: &workloads::Variant,
    clients: usize,
) -> Result<PointResult, CliError> {
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
    let snapshot = |e: &Engine| {
        (e.lock_stats(), tranche_stats(Tranche::BufferMapping), e.fd_stats(), e.extension_stats())
    };
    let outcome = run_clients(
        &spec,
        Some(Arc::clone(engine.activity_table())),
        |i, measuring: Arc<AtomicBool>| {
            let mut session = engine.session()?;
            let seed = args.seed ^ ((i as u64 + 1) * 0x9e37_79b9_7f4a_7c15);
            let mut txn = workload.client(&engine, variant, seed)?;
            let mut probe = ClientProbe { totals: &totals, start: None, last: None };
            Ok(move || -> Result<(), CliError> {
                // Name the whole probe so the closure owns it (its fields are
                // `Copy`; captured one by one they would be copies, and the
                // probe would be dropped, empty, right away).
                let probe = &mut probe;
                txn(&mut session)?;
                if measuring.load(Ordering::Relaxed) {
                    let now = (session.memory_stats().blocks_from_cache, minor_faults(), session.last_planning_time());
                    if probe.start.is_none() {
                        probe.start = Some((now.0, now.1));
                    }
                    let (pn, pc) = probe.last.map_or((0, 0), |l| (l.2, l.3));
                    probe.last = Some((now.0, now.1, pn + now.2.as_nanos() as u64, pc + 1));
                }
                Ok(())
            })
        },
        |start| {
            if start {
                before = Some(snapshot(&engine));
            } else {
                after = Some(snapshot(&engine));
            }
        },
    )?;
    let (Some(b), Some(a)) = (before, after) else { return Err("counters were not read".into()) };
    let n = outcome.transactions.max(1) as f64;
    let l = a.0.since(&b.0);
    let t = totals.into_inner().map_err(|_| "poisoned")?;
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
    let mut extra = workload.extra(&engine, &outcome, &(a.3, b.3))?;
    if t.planned > 0 {
        extra.insert("planning_us".into(), json!(t.planning_ns as f64 / t.planned as f64 / 1000.0));
    }
    Ok(PointResult {
        profile: profile.name().into(),
        params: variant.params.clone(),
        clients,
        tps: outcome.tps(),
        latency_us: Latency::from_ns_histogram(&outcome.latency_ns),
        per_partition_us: None,
        per_txn,
        wait_events: outcome.wait_events.clone(),
        extra,
    })
}

/// A client's view of its own counters over the measured phase.
struct ClientProbe<'a> {
    totals: &'a Mutex<ClientTotals>,
    /// (blocks from cache, minor faults) at the first measured transaction.
    start: Option<(u64, u64)>,
    /// The same at the last one, plus planning ns and transactions.
    last: Option<(u64, u64, u64, u64)>,
}

impl Drop for ClientProbe<'_> {
    fn drop(&mut self) {
        if let (Some(s), Some(l), Ok(mut t)) = (self.start, self.last, self.totals.lock()) {
            t.cache_allocs += l.0.saturating_sub(s.0);
            t.minor_faults += l.1.saturating_sub(s.1);
            t.planning_ns += l.2;
            t.planned += l.3;
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
        Some(m) => m.iter().map(|(k, v)| format!("{k}={}", v.as_str().map_or(v.to_string(), str::to_owned))).collect::<Vec<_>>().join(" "),
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
            results.iter().find(|r| variant_label(&r.params) == *label && r.profile == p && r.clients == c).map(|r| r.tps)
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
        &["variant", "profile", "clients", "rel locks", "fast-path", "shared", "part. waits", "fp overflows", "map waits", "fd opens", "cache allocs", "minor faults", "p99 us"],
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
    if let Some(pp) = results.iter().find(|r| r.per_partition_us.is_some()) {
        let _ = pp;
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

fn csv(results: &[PointResult]) -> String {
    let mut out = String::from(
        "profile,params,clients,tps,latency_p50_us,latency_p99_us,latency_max_us,relation_locks,fastpath_locks,shared_lock_acquires,partition_lock_waits,fastpath_overflows,mapping_partition_waits,fd_opens,cache_allocs,minor_faults\n",
    );
    for r in results {
        let p = &r.per_txn;
        out.push_str(&format!(
            "{},\"{}\",{},{:.1},{:.1},{:.1},{:.1},{:.2},{:.2},{:.2},{:.3},{:.2},{:.3},{:.3},{:.2},{:.2}\n",
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
            p.minor_faults
        ));
    }
    out
}
