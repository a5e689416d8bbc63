//! Rendering `turnstile run`'s report: the JSON document (the output
//! contract), the text tables in the write-ups' form, CSV (one line per point,
//! through the `csv` crate) and the PNG figures. Nothing here measures.

use super::result::{PointResult, RunReport};
use super::WorkloadId;
use crate::cli::CliError;
use crate::plot;
use crate::report::{f, Table};
use crate::workload::ExtraTable;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use turnstile_sync::Profile;

/// The CSV columns, in order.
const CSV_HEADER: [&str; 21] = [
    "profile",
    "params",
    "clients",
    "tps",
    "latency_p50_us",
    "latency_p99_us",
    "latency_max_us",
    "relation_locks",
    "fastpath_locks",
    "shared_lock_acquires",
    "partition_lock_waits",
    "fastpath_overflows",
    "mapping_partition_waits",
    "fd_opens",
    "cache_allocs",
    "minor_faults",
    "snapshots",
    "snapshot_shared_acquires",
    "xids",
    "per_partition_us",
    "extra",
];

impl RunReport {
    /// The JSON document of `run --json` (the output contract).
    pub fn json(&self) -> Json {
        json!({
            "workload": self.workload.name(),
            "params": self.params,
            "results": self.results,
        })
    }

    /// The text tables, then the engine views of the last point.
    pub fn tables(&self) -> String {
        let mut text = render(self.workload, &self.results);
        if let Some((label, stat)) = &self.last_stat {
            text.push('\n');
            text.push_str(&stat.render(&format!("turnstile stat — engine views of the last point ({label})")));
        }
        text
    }

    /// One CSV line per point, after a header line.
    pub fn csv(&self) -> Result<String, CliError> {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(CSV_HEADER)?;
        for r in &self.results {
            let p = &r.per_txn;
            w.write_record([
                r.profile.to_string(),
                r.params.label(),
                r.clients.to_string(),
                f(r.tps, 1),
                f(r.latency_us.p50, 1),
                f(r.latency_us.p99, 1),
                f(r.latency_us.max, 1),
                f(p.relation_locks, 2),
                f(p.fastpath_locks, 2),
                f(p.shared_lock_acquires, 2),
                f(p.partition_lock_waits, 3),
                f(p.fastpath_overflows, 2),
                f(p.mapping_partition_waits, 3),
                f(p.fd_opens, 3),
                f(p.cache_allocs, 2),
                f(p.minor_faults, 2),
                f(p.snapshots, 2),
                f(p.snapshot_shared_acquires, 2),
                f(p.xids, 2),
                r.per_partition_us.map_or(String::new(), |v| f(v, 3)),
                serde_json::to_value(&r.extra)?.to_string(),
            ])?;
        }
        Ok(String::from_utf8(w.into_inner().map_err(|e| e.into_error())?)?)
    }

    /// Writes the heat map and the line chart of this run into `dir`;
    /// returns the files written.
    pub fn plot(&self, dir: &Path) -> Result<Vec<PathBuf>, CliError> {
        std::fs::create_dir_all(dir)?;
        plots(dir, self.workload, &self.results)
    }
}

/// The report's tables: throughput, counters, wait events, the workload's
/// own figures and the marginal cost of a partition.
fn render(workload: WorkloadId, results: &[PointResult]) -> String {
    let mut out = tps_table(workload, results);
    out.push('\n');
    out.push_str(&counters_table(results));
    out.push('\n');
    out.push_str(&wait_events_table(results));
    if let Some(extra) = &workload.definition().extra_table {
        out.push('\n');
        out.push_str(&render_extra(extra, results));
    }
    if results.iter().any(|r| r.per_partition_us.is_some()) {
        out.push_str("\nMarginal cost of one more partition, one client: (latency(P) - latency(0)) / P\n");
        for r in results.iter().filter(|r| r.per_partition_us.is_some()) {
            out.push_str(&format!(
                "  {} {}: {:.2} us\n",
                r.profile,
                r.params.label(),
                r.per_partition_us.unwrap_or(0.0)
            ));
        }
    }
    out
}

/// The variants' labels, in the order they ran.
fn labels(results: &[PointResult]) -> Vec<String> {
    let mut labels: Vec<String> = Vec::new();
    for r in results {
        let l = r.params.label();
        if !labels.contains(&l) {
            labels.push(l);
        }
    }
    labels
}

/// The client counts, ascending.
fn client_counts(results: &[PointResult]) -> Vec<usize> {
    let mut clients: Vec<usize> = results.iter().map(|r| r.clients).collect();
    clients.sort_unstable();
    clients.dedup();
    clients
}

/// Transactions per second: a row per variant and profile, then the
/// speedup of `scalable` over `classic`.
fn tps_table(workload: WorkloadId, results: &[PointResult]) -> String {
    let clients = client_counts(results);
    let mut header: Vec<String> = vec!["variant".into(), "profile".into()];
    header.extend(clients.iter().map(|c| format!("{c} clients")));
    let header_ref: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = Table::new(format!("{} — transactions per second", workload.title()), &header_ref);
    for label in &labels(results) {
        let mut profiles: Vec<Profile> = Vec::new();
        for r in results.iter().filter(|r| r.params.label() == *label) {
            if !profiles.contains(&r.profile) {
                profiles.push(r.profile);
            }
        }
        let tps = |p: Profile, c: usize| {
            results.iter().find(|r| r.params.label() == *label && r.profile == p && r.clients == c).map(|r| r.tps)
        };
        for &p in &profiles {
            let mut row = vec![label.clone(), p.to_string()];
            row.extend(clients.iter().map(|&c| tps(p, c).map_or("-".into(), |v| f(v, 0))));
            t.row(row);
        }
        if profiles.contains(&Profile::Classic) && profiles.contains(&Profile::Scalable) {
            let mut row = vec![label.clone(), "speedup".into()];
            row.extend(clients.iter().map(|&c| match (tps(Profile::Scalable, c), tps(Profile::Classic, c)) {
                (Some(s), Some(k)) if k > 0.0 => format!("{:.2}x", s / k),
                _ => "-".into(),
            }));
            t.row(row);
        }
    }
    t.render()
}

/// The counters per transaction, one row per point.
fn counters_table(results: &[PointResult]) -> String {
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
            "snapshots",
            "snapshot shared",
            "wal recs",
            "wal bytes",
            "wal shared",
            "fsyncs",
            "p99 us",
        ],
    );
    for r in results {
        let p = &r.per_txn;
        c.row(vec![
            r.params.label(),
            r.profile.to_string(),
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
            f(p.snapshots, 2),
            f(p.snapshot_shared_acquires, 2),
            f(p.wal_records, 1),
            f(p.wal_bytes, 0),
            f(p.wal_shared_acquires, 2),
            f(p.wal_syncs, 3),
            f(r.latency_us.p99, 0),
        ]);
    }
    c.render()
}

/// The wait-event profile, summed over points, by profile.
fn wait_events_table(results: &[PointResult]) -> String {
    let mut events: BTreeMap<(String, String), f64> = BTreeMap::new();
    for r in results {
        for (k, v) in &r.wait_events {
            *events.entry((r.profile.to_string(), k.clone())).or_default() += v;
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
    w.render()
}

/// The workload's own figures (W3 planning, W4 extension phases, W6
/// inserts and waits), one row per point, as its definition lays them out.
fn render_extra(table: &ExtraTable, results: &[PointResult]) -> String {
    let mut header = vec!["variant", "profile", "clients"];
    header.extend(table.columns.iter().map(|c| c.header));
    let mut t = Table::new(table.title, &header);
    let points: Vec<Json> = results.iter().map(|r| serde_json::to_value(r).unwrap_or(Json::Null)).collect();
    for (r, point) in results.iter().zip(&points) {
        let mut row = vec![r.params.label(), r.profile.to_string(), r.clients.to_string()];
        row.extend(table.columns.iter().map(|c| {
            point.pointer(c.pointer).and_then(Json::as_f64).map_or_else(|| "n/a".to_owned(), |v| f(v, c.digits))
        }));
        t.row(row);
    }
    let mut out = t.render();
    if let Some(note) = table.note {
        out.push_str(&note(&points));
    }
    out
}

/// Writes `W?-speedup.png` (rows = variants, columns = client counts,
/// `scalable / classic` tps) and `W?-tps.png` into `dir`.
fn plots(dir: &Path, workload: WorkloadId, results: &[PointResult]) -> Result<Vec<PathBuf>, CliError> {
    let labels = labels(results);
    let clients = client_counts(results);
    let mut profiles: Vec<Profile> = Vec::new();
    for r in results {
        if !profiles.contains(&r.profile) {
            profiles.push(r.profile);
        }
    }
    let tps = |label: &str, profile: Profile, c: usize| {
        results.iter().find(|r| r.clients == c && r.profile == profile && r.params.label() == label).map(|r| r.tps)
    };
    let mut written = Vec::new();
    let baseline = if profiles.contains(&Profile::Classic) { Profile::Classic } else { profiles[0] };
    let name = workload.name();
    for &other in profiles.iter().filter(|&&p| p != baseline) {
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
        let suffix = if other == Profile::Scalable { String::new() } else { format!("-{other}") };
        let path = dir.join(format!("{name}-speedup{suffix}.png"));
        plot::heat_map(&path, &map)?;
        written.push(path);
    }
    let mut series = Vec::new();
    for (group, l) in labels.iter().enumerate() {
        for &p in &profiles {
            let values: Vec<Option<f64>> = clients.iter().map(|&c| tps(l, p, c)).collect();
            if values.iter().any(Option::is_some) {
                let name = if l.is_empty() { p.to_string() } else { format!("{l} {p}") };
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
