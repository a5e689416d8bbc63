//! Runs a comparison: servers up (every PostgreSQL given, classic, scalable), floor, then every workload's variants
//! (load, census, points), servers down; the figures go to
//! [`report`](super::report).

use super::census::{self, median, LockCount, Planning};
use super::cleanup::TempRoot;
use super::client::Conn;
use super::pgbin::{PgBin, PgClients, RunAs};
use super::server::{Server, ServerId, ServerInfo, TurnstileSpec, REFERENCE};
use super::workloads::{self, Lists, Sizes, Variant};
use super::Args;
use crate::workload::through_pgbench::Step;
use crate::workload::{Mode, WorkloadId};
use crate::{progress, CliError};
use indicatif::ProgressBar;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// How long loading one variant into one server may take.
const LOAD_LIMIT: Duration = Duration::from_secs(3600);

/// The resolved settings of one run.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Workloads, in order.
    pub workloads: Vec<WorkloadId>,
    /// Client counts.
    pub clients: Vec<usize>,
    /// Seconds per point.
    pub duration: u32,
    /// Runs per point.
    pub runs: usize,
    /// Unmeasured seconds per variant and server.
    pub warmup: u32,
    /// `EXPLAIN (ANALYZE)` executions per variant and server.
    pub planning_runs: usize,
    /// W1–W3 parameter lists.
    pub lists: Lists,
    /// Data sizes.
    pub sizes: Sizes,
}

impl Plan {
    /// `args` with `--quick`'s and the machine's defaults filled in.
    pub fn resolve(args: &Args) -> Result<Plan, CliError> {
        let q = args.quick;
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let mut default_clients = vec![1, cores, 4 * cores];
        default_clients.dedup();
        let modes = match &args.mode {
            Some(m) => m.iter().map(|s| Mode::parse(s)).collect::<Result<Vec<_>, _>>()?,
            None => vec![Mode::Simple, Mode::Prepared],
        };
        let plan = Plan {
            workloads: args.workloads.clone().unwrap_or_else(WorkloadId::through_pgbench),
            clients: args.clients.clone().unwrap_or(if q { vec![1] } else { default_clients }),
            duration: args.duration.unwrap_or(if q { 1 } else { 5 }),
            runs: args.runs,
            warmup: args.warmup.unwrap_or(if q { 0 } else { 1 }),
            planning_runs: args.planning_runs.unwrap_or(if q { 3 } else { 11 }),
            lists: lists(args, modes),
            sizes: Sizes {
                scale: f64::from(args.scale.unwrap_or(if q { 1 } else { 10 })),
                fact_rows: if q { 10_000 } else { 100_000 },
                ..Sizes::DEFAULT
            },
        };
        if plan.clients.is_empty() || plan.clients.contains(&0) {
            return Err("--clients must list positive counts".into());
        }
        if plan.duration == 0 || plan.runs == 0 || plan.planning_runs == 0 || plan.sizes.scale < 1.0 {
            return Err("--duration, --runs, --planning-runs and --scale must be positive".into());
        }
        if let Some(w) = plan.workloads.iter().find(|w| w.definition().pgbench.is_none()) {
            return Err(format!("{w} runs only in process: turnstile run {w}").into());
        }
        if plan.lists.modes.is_empty() || plan.workloads.is_empty() {
            return Err("--mode and --workloads must not be empty".into());
        }
        Ok(plan)
    }
}

/// The lists of every swept parameter: as given, else the sweep's
/// `pgbench` list (`pgbench_quick` under `--quick`).
fn lists(args: &Args, modes: Vec<Mode>) -> Lists {
    let mut values = std::collections::BTreeMap::new();
    for &w in WorkloadId::all() {
        let Some(sweep) = w.definition().sweep else { continue };
        values.entry(sweep.param).or_insert_with(|| {
            args.values(sweep.param)
                .clone()
                .unwrap_or_else(|| if args.quick { sweep.pgbench_quick } else { sweep.pgbench }.to_vec())
        });
    }
    Lists { values, modes }
}

/// Measurements of one point on every server, every run.
#[derive(Clone, Debug)]
pub struct Point {
    /// The workload.
    pub workload: WorkloadId,
    /// Variant label (`partitions=100`).
    pub label: String,
    /// Params with the mode.
    pub params: Json,
    /// Query mode.
    pub mode: Mode,
    /// Clients.
    pub clients: usize,
    /// tps per run.
    pub tps: BTreeMap<ServerId, Vec<f64>>,
    /// Latency (ms) per run.
    pub latency_ms: BTreeMap<ServerId, Vec<f64>>,
    /// W4: table growth MB/s per run.
    pub mb_per_s: BTreeMap<ServerId, Vec<f64>>,
}

impl Point {
    /// Median tps of `server`, if it answered.
    pub fn tps(&self, server: ServerId) -> Option<f64> {
        self.tps.get(&server).filter(|v| !v.is_empty()).map(|v| median(v))
    }
}

/// The lock census of one query on every server.
#[derive(Clone, Debug)]
pub struct LockRow {
    /// The workload.
    pub workload: WorkloadId,
    /// Variant label.
    pub label: String,
    /// Params with the mode.
    pub params: Json,
    /// Per server.
    pub counts: BTreeMap<ServerId, LockCount>,
}

/// Planning times of one query on every server.
#[derive(Clone, Debug)]
pub struct PlanRow {
    /// The workload.
    pub workload: WorkloadId,
    /// Variant label.
    pub label: String,
    /// Params (no mode: EXPLAIN plans the statement as simple mode does).
    pub params: Json,
    /// Per server.
    pub planning: BTreeMap<ServerId, Planning>,
}

/// Everything one run measured.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The servers, in report order: PostgreSQL by version, classic, scalable.
    pub servers: Vec<ServerInfo>,
    /// The client programs every server was driven by: directory and `psql --version`.
    pub clients: (String, String),
    /// The resolved settings.
    pub plan: Option<Plan>,
    /// Throughput points.
    pub points: Vec<Point>,
    /// Lock census.
    pub locks: Vec<LockRow>,
    /// Planning times.
    pub planning: Vec<PlanRow>,
    /// `SELECT 1`, `-M prepared`, one client: tps per run.
    pub floor: BTreeMap<ServerId, Vec<f64>>,
    /// Failures (a server that could not load or run a point).
    pub errors: Vec<String>,
    /// Things that went wrong without costing a figure.
    pub notes: Vec<String>,
    /// PostgreSQL stood in for turnstile (development only).
    pub stand_in: bool,
}

impl Outcome {
    /// The servers' ids, in report order.
    pub fn ids(&self) -> Vec<ServerId> {
        self.servers.iter().map(|s| s.id).collect()
    }

    /// The PostgreSQL servers, newest first (the order of the ratio rows).
    pub fn postgres_newest_first(&self) -> Vec<&ServerInfo> {
        let mut pgs: Vec<&ServerInfo> = self.servers.iter().filter(|s| matches!(s.id, ServerId::Postgres(_))).collect();
        pgs.sort_by_key(|s| std::cmp::Reverse(s.id));
        pgs
    }

    /// The label of `id` (`PostgreSQL 18.4`, `classic`).
    pub fn label(&self, id: ServerId) -> String {
        self.servers.iter().find(|s| s.id == id).map_or_else(|| id.key(), ServerInfo::label)
    }

    /// The version of the faithfulness reference (PostgreSQL 15), if it ran.
    pub fn reference_version(&self) -> Option<&str> {
        self.servers.iter().find(|s| s.id == REFERENCE).map(|s| s.version.as_str())
    }
}

/// Runs every point of `plan` (servers up, floor, workloads, servers
/// down) and returns the figures; [`report`](super::report) renders them.
/// `pgs` are the PostgreSQL servers (one per major version), `clients`
/// the programs that drive every server.
pub(crate) fn compare(args: &Args, plan: &Plan, pgs: &[PgBin], clients: &PgClients) -> Result<Outcome, CliError> {
    let run_as = RunAs::detect()?;
    let root = TempRoot::create()?;
    run_as.chown(root.path())?;
    let scripts = root.path().join("scripts");
    write_scripts(&scripts, plan, run_as)?;
    let spec = TurnstileSpec { exe: std::env::current_exe()?, set: args.set.clone(), stand_in: args.stand_in };
    let max_clients = plan.clients.iter().copied().max().unwrap_or(1);
    let ids: Vec<ServerId> =
        pgs.iter().map(|p| ServerId::Postgres(p.major())).chain([ServerId::Classic, ServerId::Scalable]).collect();
    let mut outcome = Outcome {
        clients: (clients.dir().display().to_string(), clients.version.clone()),
        plan: Some(plan.clone()),
        stand_in: args.stand_in,
        ..Default::default()
    };

    let variants: Vec<Variant> =
        plan.workloads.iter().flat_map(|&w| workloads::variants(w, &plan.lists, plan.sizes, &scripts)).collect();
    let per_variant = |v: &Variant| v.modes.len() * plan.clients.len() * plan.runs * ids.len();
    let total = plan.runs * ids.len() + variants.iter().map(per_variant).sum::<usize>();
    let bar = progress::points(total as u64, "cmp");
    progress::tick(&bar);

    let mut servers = Vec::new();
    for &id in &ids {
        bar.set_message(format!("starting {}", id.key()));
        let s = Server::start(id, root.path(), pgs, clients, run_as, &spec, max_clients)?;
        outcome.servers.push(s.info.clone());
        servers.push(s);
    }

    bar.set_message("protocol floor: SELECT 1");
    let floor_args = vec!["-f".to_owned(), scripts.join("floor.sql").display().to_string()];
    for _ in 0..plan.runs {
        for s in &servers {
            match s.conn(clients, "postgres").pgbench(Mode::Prepared, 1, plan.duration, &floor_args) {
                Ok(b) => outcome.floor.entry(s.id).or_default().push(b.tps),
                Err(e) => outcome.errors.push(format!("{} floor: {e}", s.id.key())),
            }
            bar.inc(1);
        }
    }

    for v in &variants {
        run_variant(plan, clients, &mut servers, v, &bar, &mut outcome);
    }
    bar.finish_and_clear();
    for s in servers {
        let id = s.id;
        if let Err(e) = s.stop() {
            outcome.errors.push(format!("{} stop: {e}", id.key()));
        }
    }
    drop(root);
    Ok(outcome)
}

/// Scripts and the W4 rows file, readable by the PostgreSQL user.
fn write_scripts(dir: &Path, plan: &Plan, run_as: RunAs) -> Result<(), CliError> {
    std::fs::create_dir_all(dir)?;
    run_as.chown(dir)?;
    let mut files: Vec<(String, String)> = vec![("floor.sql".into(), workloads::FLOOR_SCRIPT.into())];
    for &w in &plan.workloads {
        for v in workloads::variants(w, &plan.lists, plan.sizes, dir) {
            files.extend(v.form.files);
        }
    }
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text)?;
        run_as.chown(&path)?;
    }
    Ok(())
}

fn run_variant(plan: &Plan, pg: &PgClients, servers: &mut [Server], v: &Variant, bar: &ProgressBar, out: &mut Outcome) {
    let name = v.workload.name();
    let label = v.label();
    // Load: the same SQL into each server, the three at once (loading waits
    // on fsync and round trips more than on CPU; nothing is measured). A
    // server that fails is left out of this variant. The loading threads
    // wait for their clients, so PR_SET_PDEATHSIG never fires early.
    bar.set_message(format!("{name} {label}: loading"));
    let results: Vec<(ServerId, Result<(), CliError>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = servers.iter().map(|s| (s.id, scope.spawn(move || load(pg, s, v)))).collect();
        handles
            .into_iter()
            .map(|(id, h)| (id, h.join().unwrap_or_else(|_| Err("the loading thread panicked".into()))))
            .collect()
    });
    let mut loaded = Vec::new();
    for (id, r) in results {
        match r {
            Ok(()) => loaded.push(id),
            Err(e) => out.errors.push(format!("{} {name} {label} load: {e}", id.key())),
        }
    }
    let ready: Vec<&Server> = servers.iter().filter(|s| loaded.contains(&s.id)).collect();
    if let Some(query) = &v.query {
        bar.set_message(format!("{name} {label}: lock census and planning time"));
        for &mode in &v.modes {
            let mut counts = BTreeMap::new();
            for s in &ready {
                match census::count_locks(&s.conn(pg, &v.db), query, mode) {
                    Ok(c) => {
                        counts.insert(s.id, c);
                    }
                    Err(e) => out.errors.push(format!("{} {name} {label} {} locks: {e}", s.id.key(), mode.name())),
                }
            }
            out.locks.push(LockRow { workload: v.workload, label: label.clone(), params: v.params_with(mode), counts });
        }
        let mut planning = BTreeMap::new();
        for s in &ready {
            match census::planning(&s.conn(pg, &v.db), query, plan.planning_runs) {
                Ok(p) => {
                    planning.insert(s.id, p);
                }
                Err(e) => out.errors.push(format!("{} {name} {label} planning: {e}", s.id.key())),
            }
        }
        out.planning.push(PlanRow {
            workload: v.workload,
            label: label.clone(),
            params: Json::Object(v.params.clone()),
            planning,
        });
    }
    if plan.warmup > 0 && v.growth_table().is_none() {
        for s in &ready {
            bar.set_message(format!("{name} {label}: warm-up on {}", s.info.label()));
            let mode = v.modes.last().copied().unwrap_or(Mode::Prepared);
            let _ = s.conn(pg, &v.db).pgbench(mode, 2, plan.warmup, &v.pgbench_args);
        }
    }
    for &mode in &v.modes {
        for &clients in &plan.clients {
            let mut p = Point {
                workload: v.workload,
                label: label.clone(),
                params: v.params_with(mode),
                mode,
                clients,
                tps: BTreeMap::new(),
                latency_ms: BTreeMap::new(),
                mb_per_s: BTreeMap::new(),
            };
            for run in 0..plan.runs {
                for s in servers.iter() {
                    bar.set_message(format!("{name} {label} {} {clients} clients: {}", mode.name(), s.info.label()));
                    if loaded.contains(&s.id) {
                        if let Err(e) = measure(plan, pg, s, v, mode, clients, &mut p) {
                            out.errors.push(format!(
                                "{} {name} {label} {} {clients} clients run {}: {e}",
                                s.id.key(),
                                mode.name(),
                                run + 1
                            ));
                        }
                    }
                    bar.inc(1);
                }
            }
            out.points.push(p);
        }
    }
    for s in servers.iter() {
        bar.set_message(format!("{name} {label}: dropping the database on {}", s.info.label()));
        // Frees the space; a server that cannot drop keeps the database (a note, not a failed point).
        let sql = format!("DROP DATABASE IF EXISTS {};\n", v.db);
        if let Err(e) = s.conn(pg, "postgres").psql(&sql, Duration::from_secs(600)) {
            out.notes.push(format!("{} {name} {label}: database kept: {e}", s.id.key()));
        }
    }
}

/// Creates the variant's database on `s` and runs its setup steps.
fn load(pg: &PgClients, s: &Server, v: &Variant) -> Result<(), CliError> {
    s.conn(pg, "postgres").psql(&format!("CREATE DATABASE {};\n", v.db), LOAD_LIMIT)?;
    let conn = s.conn(pg, &v.db);
    for step in &v.setup {
        match step {
            Step::PgbenchInit(args) => conn.pgbench_init(args, LOAD_LIMIT)?,
            Step::Sql(sql) => {
                conn.psql(sql, LOAD_LIMIT)?;
            }
        }
    }
    conn.psql("CHECKPOINT;\n", LOAD_LIMIT)?;
    Ok(())
}

/// One run of one point on one server.
fn measure(
    plan: &Plan,
    pg: &PgClients,
    s: &Server,
    v: &Variant,
    mode: Mode,
    clients: usize,
    p: &mut Point,
) -> Result<(), CliError> {
    let conn: Conn<'_> = s.conn(pg, &v.db);
    if let Some(table) = v.growth_table() {
        conn.psql(&format!("TRUNCATE {table};\nCHECKPOINT;\n"), Duration::from_secs(600))?;
    }
    let b = conn.pgbench(mode, clients, plan.duration, &v.pgbench_args)?;
    if let Some(table) = v.growth_table() {
        let out = conn.psql(&format!("SELECT pg_relation_size('{table}');\n"), Duration::from_secs(60))?;
        let bytes: f64 = out.trim().parse().map_err(|_| format!("pg_relation_size printed {:?}", out.trim()))?;
        let per_txn = if b.transactions > 0 { bytes / b.transactions as f64 } else { 0.0 };
        p.mb_per_s.entry(s.id).or_default().push(per_txn * b.tps / (1024.0 * 1024.0));
    }
    p.tps.entry(s.id).or_default().push(b.tps);
    p.latency_ms.entry(s.id).or_default().push(b.latency_ms);
    Ok(())
}
