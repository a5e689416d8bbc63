//! The comparison's report: tables in the lab's style, the JSON contract
//! (`--json`), CSV (`--csv`) and figures (`--plot DIR`).
//!
//! Every server has a key (`pg15`, `pg18`, `classic`, `scalable`) and a
//! label (`PostgreSQL 18.4`, from the server's own `SHOW server_version`).
//! Throughput ratios are taken against each PostgreSQL (`scalable / PG18`,
//! `scalable / PG15`) and `classic` against PostgreSQL 15, the system
//! whose locking it reproduces. The JSON keeps `postgres` as a second key
//! for PostgreSQL 15, for readers of the three-server report.

use super::census::{median, LockCount, Planning};
use super::driver::{Outcome, Point};
use super::pgbin::PG18_HINT;
use super::server::{ServerId, REFERENCE, REFERENCE_ALIAS, REFERENCE_MAJOR};
use super::workloads::pgbench_scale;
use super::Args;
use crate::report::{f, Table};
use crate::workload::{Mode, Param, WorkloadId};
use crate::{plot, CliError};
use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Prints the report (JSON, CSV or tables) and writes the figures.
pub fn emit(args: &Args, o: &Outcome) -> Result<(), CliError> {
    if args.json {
        println!("{}", serde_json::to_string_pretty(&to_json(o))?);
    } else if args.csv {
        print!("{}", csv(o));
    } else {
        println!("{}", text(o));
    }
    if let Some(dir) = &args.plot {
        let mut files = plots(dir, o)?;
        // The whole report beside the figures, in every format.
        for (name, body) in [
            ("compare.json", serde_json::to_string_pretty(&to_json(o))?),
            ("compare.csv", csv(o)),
            ("compare.txt", text(o)),
        ] {
            let path = dir.join(name);
            std::fs::write(&path, body)?;
            files.push(path);
        }
        eprintln!("wrote {}", files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "));
    }
    Ok(())
}

/// `{key: f(server)}` for every server of the run, and `postgres` for
/// PostgreSQL 15 as well (older readers).
fn per_server<T>(o: &Outcome, f: impl Fn(ServerId) -> Option<T>) -> Map<String, Json>
where
    T: Into<Json>,
{
    let mut m: Map<String, Json> =
        o.ids().into_iter().map(|s| (s.key(), f(s).map_or(Json::Null, Into::into))).collect();
    if let Some(v) = m.get(&REFERENCE.key()).cloned() {
        m.insert(REFERENCE_ALIAS.to_owned(), v);
    }
    m
}

/// The ratio rows of a throughput table: `scalable / PG<n>` for every
/// PostgreSQL, newest first, then `classic / PG15`.
fn ratios(o: &Outcome) -> Vec<(String, ServerId, ServerId)> {
    let mut r: Vec<(String, ServerId, ServerId)> = o
        .postgres_newest_first()
        .into_iter()
        .map(|pg| (format!("scalable / {}", pg.id.short()), ServerId::Scalable, pg.id))
        .collect();
    r.push((format!("classic / {}", REFERENCE.short()), ServerId::Classic, REFERENCE));
    r
}

/// `scalable / PG<n>` for every PostgreSQL, newest first (planning and
/// per-partition tables, where classic's ratio says little).
fn scalable_ratios(o: &Outcome) -> Vec<(String, ServerId, ServerId)> {
    ratios(o).into_iter().filter(|(_, a, _)| *a == ServerId::Scalable).collect()
}

fn med(values: Option<&Vec<f64>>) -> Option<f64> {
    values.filter(|v| !v.is_empty()).map(|v| median(v))
}

/// `(latency(P) − latency(0)) / P` in µs at one client, per server, mode
/// and partition count P > 0, of the workload that sweeps partitions (W1).
pub fn per_partition(o: &Outcome) -> Vec<(Mode, u64, BTreeMap<ServerId, f64>)> {
    let parts = |p: &Point| p.params.get(Param::Partitions.key()).and_then(Json::as_u64);
    let w1: Vec<&Point> = o.points.iter().filter(|p| p.clients == 1 && parts(p).is_some()).collect();
    let mut out = Vec::new();
    for mode in [Mode::Simple, Mode::Prepared] {
        let Some(base) = w1.iter().find(|p| p.mode == mode && parts(p) == Some(0)) else { continue };
        for p in w1.iter().filter(|p| p.mode == mode && parts(p).is_some_and(|n| n > 0)) {
            let n = parts(p).unwrap_or(1);
            let mut m = BTreeMap::new();
            for s in o.ids() {
                if let (Some(t), Some(t0)) = (p.tps(s), base.tps(s)) {
                    m.insert(s, (1e6 / t - 1e6 / t0) / n as f64);
                }
            }
            out.push((mode, n, m));
        }
    }
    out
}

/// The headline per-partition figure: the largest partition count,
/// prepared mode when measured (the write-ups' generic plan), else simple.
fn headline_per_partition(o: &Outcome) -> Option<(Mode, u64, BTreeMap<ServerId, f64>)> {
    let all = per_partition(o);
    let best = |mode: Mode| all.iter().filter(|(m, _, _)| *m == mode).max_by_key(|(_, n, _)| *n).cloned();
    best(Mode::Prepared).or_else(|| best(Mode::Simple))
}

/// The JSON report (the output contract `compare_contract.rs` checks, plus detail fields).
pub fn to_json(o: &Outcome) -> Json {
    let results: Vec<Json> = o
        .points
        .iter()
        .map(|p| {
            let mut r = json!({
                "workload": p.workload.name(),
                "params": p.params,
                "clients": p.clients,
                "tps": per_server(o, |s| p.tps(s)),
                "latency_ms": per_server(o, |s| med(p.latency_ms.get(&s))),
                "runs": per_server(o, |s| p.tps.get(&s).cloned()),
            });
            if p.workload.definition().growth_table.is_some() {
                r["mb_per_s"] = Json::Object(per_server(o, |s| med(p.mb_per_s.get(&s))));
            }
            r
        })
        .collect();
    let locks: Vec<Json> = o
        .locks
        .iter()
        .map(|l| {
            let mut r = json!({ "workload": l.workload.name(), "params": l.params });
            extend(&mut r, per_server(o, |s| l.counts.get(&s).map(|c| json!(c))));
            r["classic_equals_postgres"] = json!(equal(l.counts.get(&REFERENCE), l.counts.get(&ServerId::Classic)));
            r
        })
        .collect();
    let planning: Vec<Json> = o
        .planning
        .iter()
        .map(|p| {
            let mut r = json!({ "workload": p.workload.name(), "params": p.params });
            extend(&mut r, per_server(o, |s| p.planning.get(&s).map(|v| json!(v))));
            r
        })
        .collect();
    let detail: Vec<Json> = per_partition(o)
        .into_iter()
        .map(|(mode, n, m)| {
            let mut r = json!({ "partitions": n, "mode": mode.name() });
            extend(&mut r, per_server(o, |s| m.get(&s).copied()));
            r
        })
        .collect();
    let headline = headline_per_partition(o);
    let servers: Vec<Json> = o
        .servers
        .iter()
        .map(|s| json!({ "key": s.id.key(), "version": s.version, "label": s.label(), "program": s.program }))
        .collect();
    let mut doc = json!({
        "pg_version": o.reference_version(),
        "servers": servers,
        "faithfulness_reference": REFERENCE.key(),
        "clients": { "dir": o.clients.0, "version": o.clients.1 },
        "programs": per_server(o, |s| o.servers.iter().find(|i| i.id == s).map(|i| i.program.clone())),
        "results": results,
        "locks": locks,
        "planning_ms": planning,
        "per_partition_us": per_server(o, |s| headline.as_ref().and_then(|(_, _, m)| m.get(&s).copied())),
        "per_partition_basis": headline.as_ref().map(|(mode, n, _)| json!({"partitions": n, "mode": mode.name(), "clients": 1})),
        "per_partition_detail": detail,
        "protocol_floor_tps": per_server(o, |s| med(o.floor.get(&s))),
        "errors": o.errors,
        "notes": o.notes,
    });
    if let Some(plan) = &o.plan {
        doc["settings"] = json!({
            "duration_s": plan.duration,
            "runs": plan.runs,
            "clients": plan.clients,
            "scale": pgbench_scale(plan.sizes),
            "w2_fact_rows": plan.sizes.fact_rows,
            "w4_rows_per_copy": plan.sizes.copy_rows,
        });
    }
    if o.stand_in {
        doc["stand_in"] = json!("PostgreSQL ran in place of turnstile serve: not a result");
    }
    doc
}

/// Adds every entry of `m` to the object `r`.
fn extend(r: &mut Json, m: Map<String, Json>) {
    if let Json::Object(obj) = r {
        obj.extend(m);
    }
}

fn equal(a: Option<&LockCount>, b: Option<&LockCount>) -> Json {
    match (a, b) {
        (Some(a), Some(b)) => json!(
            a.relation_locks == b.relation_locks
                && a.fastpath_locks == b.fastpath_locks
                && a.index_locks == b.index_locks
        ),
        _ => Json::Null,
    }
}

fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
        _ => "-".into(),
    }
}

fn cell(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "error".to_owned(), |v| f(v, digits))
}

/// The tables.
pub fn text(o: &Outcome) -> String {
    let mut out = heading(o);
    for w in workloads_run(o) {
        out.push_str(&throughput_table(o, w));
        out.push('\n');
    }
    if !o.locks.is_empty() {
        out.push_str(&faithfulness_table(o));
        out.push('\n');
    }
    if !o.planning.is_empty() {
        out.push_str(&planning_table(o));
        out.push('\n');
    }
    let pp = per_partition(o);
    if !pp.is_empty() {
        out.push_str(&per_partition_table(o, &pp));
        out.push('\n');
    }
    if !o.floor.is_empty() {
        out.push_str(&floor_table(o));
    }
    if !o.notes.is_empty() {
        out.push_str("\nNotes:\n");
        for n in &o.notes {
            out.push_str(&format!("  {n}\n"));
        }
    }
    if !o.errors.is_empty() {
        out.push_str(&format!("\n{} failure(s):\n", o.errors.len()));
        for e in &o.errors {
            out.push_str(&format!("  {e}\n"));
        }
    }
    out
}

/// What ran against what, and how.
fn heading(o: &Outcome) -> String {
    let mut out = String::new();
    if o.stand_in {
        out.push_str("*** STAND-IN: PostgreSQL ran in place of turnstile serve. These are not results. ***\n\n");
    }
    let names: Vec<String> = o
        .servers
        .iter()
        .map(|s| if matches!(s.id, ServerId::Postgres(_)) { s.label() } else { format!("turnstile {}", s.label()) })
        .collect();
    out.push_str(&format!("turnstile compare: {}", names.join(" / ")));
    if let Some(plan) = &o.plan {
        out.push_str(&format!(
            ", real pgbench, {} s per point, median of {} run(s), pgbench -j min(clients, 2)",
            plan.duration, plan.runs
        ));
    }
    out.push_str(&format!("\nclient programs for every server: {} (psql {})\n", o.clients.0, o.clients.1));
    if !o.servers.iter().any(|s| matches!(s.id, ServerId::Postgres(m) if m > REFERENCE_MAJOR)) {
        out.push_str(&format!("no newer PostgreSQL in this run; {PG18_HINT}\n"));
    }
    out.push('\n');
    out
}

/// The workloads of the points, in the order they ran.
fn workloads_run(o: &Outcome) -> Vec<WorkloadId> {
    let mut workloads: Vec<WorkloadId> = o.points.iter().map(|p| p.workload).collect();
    workloads.dedup();
    workloads
}

/// The client counts of the points, ascending.
fn client_counts(o: &Outcome) -> Vec<usize> {
    let mut c: Vec<usize> = o.points.iter().map(|p| p.clients).collect();
    c.sort_unstable();
    c.dedup();
    c
}

/// `w`'s throughput (or, for a workload whose figure is a table's growth,
/// MB/s): a row per variant, mode and server, then the ratio rows.
fn throughput_table(o: &Outcome, w: WorkloadId) -> String {
    let ids = o.ids();
    let ratio_rows = ratios(o);
    let clients = client_counts(o);
    let growth = w.definition().growth_table.is_some();
    let unit = if growth { "table growth MB/s (pg_relation_size)" } else { "transactions per second" };
    let mut header = vec!["variant".to_owned(), "mode".to_owned(), "server".to_owned()];
    header.extend(clients.iter().map(|c| format!("{c} cl")));
    let h: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = Table::new(format!("{} — {unit}", w.title()), &h);
    for p0 in o.points.iter().filter(|p| p.workload == w && p.clients == clients[0]) {
        let row_of = |s: ServerId| -> Vec<Option<f64>> {
            clients
                .iter()
                .map(|&c| {
                    let p = o
                        .points
                        .iter()
                        .find(|p| p.workload == w && p.label == p0.label && p.mode == p0.mode && p.clients == c)?;
                    if growth {
                        med(p.mb_per_s.get(&s))
                    } else {
                        p.tps(s)
                    }
                })
                .collect()
        };
        let rows: BTreeMap<ServerId, Vec<Option<f64>>> = ids.iter().map(|&s| (s, row_of(s))).collect();
        for &s in &ids {
            let mut r = vec![p0.label.clone(), p0.mode.name().to_owned(), o.label(s)];
            r.extend(rows[&s].iter().map(|v| cell(*v, if growth { 1 } else { 0 })));
            t.row(r);
        }
        for (name, a, b) in &ratio_rows {
            let mut r = vec![p0.label.clone(), p0.mode.name().to_owned(), name.clone()];
            let none = vec![None; clients.len()];
            let (ra, rb) = (rows.get(a).unwrap_or(&none), rows.get(b).unwrap_or(&none));
            r.extend(ra.iter().zip(rb).map(|(a, b)| ratio(*a, *b)));
            t.row(r);
        }
    }
    t.render()
}

/// The lock census: PostgreSQL 15 and classic side by side, then the
/// newer PostgreSQL servers beside scalable (the spill that scalable
/// avoids), and whether classic took what PostgreSQL 15 took.
fn faithfulness_table(o: &Outcome) -> String {
    let mut order = vec![REFERENCE, ServerId::Classic];
    order.extend(o.postgres_newest_first().into_iter().map(|s| s.id).filter(|&s| s != REFERENCE).rev());
    order.push(ServerId::Scalable);
    let verdict_name = format!("classic vs {}", REFERENCE.short());
    let mut header: Vec<String> = vec!["workload".into(), "variant".into(), "mode".into()];
    header.extend(order.iter().map(|&s| o.label(s)));
    header.push(verdict_name);
    let h: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = Table::new(
        "Faithfulness: relation locks one execution takes (pg_locks in an open transaction; rel (fast path, indexes))",
        &h,
    );
    for l in &o.locks {
        let c = |s| l.counts.get(&s).map_or("error".to_owned(), LockCount::cell);
        let mode = l.params.get("mode").and_then(Json::as_str).unwrap_or("");
        let mut r = vec![l.workload.name().to_owned(), l.label.clone(), mode.to_owned()];
        r.extend(order.iter().map(|&s| c(s)));
        r.push(verdict(l.counts.get(&REFERENCE), l.counts.get(&ServerId::Classic)));
        t.row(r);
    }
    t.render()
}

/// `same`, or how classic's counts differ from PostgreSQL 15's.
fn verdict(reference: Option<&LockCount>, classic: Option<&LockCount>) -> String {
    match (reference, classic) {
        (Some(p), Some(k)) if p == k => "same".to_owned(),
        (Some(p), Some(k)) => {
            let d = |a: u32, b: u32| i64::from(a) - i64::from(b);
            format!(
                "DIFFERS: rel {:+}, fp {:+}, idx {:+}, tables {:+}",
                d(k.relation_locks, p.relation_locks),
                d(k.fastpath_locks, p.fastpath_locks),
                d(k.index_locks, p.index_locks),
                d(k.table_locks, p.table_locks)
            )
        }
        _ => "-".to_owned(),
    }
}

/// A header: `first`, every server, then the ratio rows' names.
fn header_with(o: &Outcome, first: &[&str], last: &[(String, ServerId, ServerId)]) -> Vec<String> {
    let mut h: Vec<String> = first.iter().map(|s| (*s).to_owned()).collect();
    h.extend(o.ids().iter().map(|&s| o.label(s)));
    h.extend(last.iter().map(|(n, _, _)| n.clone()));
    h
}

/// Planning times from `EXPLAIN (ANALYZE)`.
fn planning_table(o: &Outcome) -> String {
    let ids = o.ids();
    let scalable_rows = scalable_ratios(o);
    let header = header_with(o, &["workload", "variant"], &scalable_rows);
    let h: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = Table::new("Planning time, EXPLAIN (ANALYZE) in one session: median ms (first execution ms)", &h);
    for p in &o.planning {
        let c = |s| {
            p.planning
                .get(&s)
                .map_or("error".to_owned(), |v: &Planning| format!("{:.3} ({:.3})", v.median_ms, v.first_ms))
        };
        let m = |s| p.planning.get(&s).map(|v: &Planning| v.median_ms);
        let mut r = vec![p.workload.name().to_owned(), p.label.clone()];
        r.extend(ids.iter().map(|&s| c(s)));
        r.extend(scalable_rows.iter().map(|(_, a, b)| ratio(m(*a), m(*b))));
        t.row(r);
    }
    t.render()
}

/// The marginal cost of one more partition ([`per_partition`]).
fn per_partition_table(o: &Outcome, pp: &[(Mode, u64, BTreeMap<ServerId, f64>)]) -> String {
    let ids = o.ids();
    let scalable_rows = scalable_ratios(o);
    let header = header_with(o, &["partitions", "mode"], &scalable_rows);
    let h: Vec<&str> = header.iter().map(String::as_str).collect();
    let name =
        o.points.iter().find(|p| p.params.get(Param::Partitions.key()).is_some()).map_or("", |p| p.workload.name());
    let mut t = Table::new(
        format!("{name} marginal cost of one more partition, one client: (latency(P) - latency(0)) / P, us"),
        &h,
    );
    for (mode, n, m) in pp {
        let g = |s| m.get(&s).copied();
        let mut r = vec![n.to_string(), mode.name().to_owned()];
        r.extend(ids.iter().map(|&s| cell(g(s), 2)));
        r.extend(scalable_rows.iter().map(|(_, a, b)| ratio(g(*a), g(*b))));
        t.row(r);
    }
    t.render()
}

/// The protocol floor: `SELECT 1`.
fn floor_table(o: &Outcome) -> String {
    let ratio_rows = ratios(o);
    let header = header_with(o, &[], &ratio_rows);
    let h: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = Table::new("Protocol floor: SELECT 1 through pgbench -M prepared, one client (tps)", &h);
    let g = |s| med(o.floor.get(&s));
    let mut r: Vec<String> = o.ids().iter().map(|&s| cell(g(s), 0)).collect();
    r.extend(ratio_rows.iter().map(|(_, a, b)| ratio(g(*a), g(*b))));
    t.row(r);
    t.render()
}

/// One line per point, server and run.
pub fn csv(o: &Outcome) -> String {
    let mut out = String::from("workload,variant,mode,clients,server,label,run,tps,latency_ms,mb_per_s\n");
    for p in &o.points {
        for s in o.ids() {
            for (i, tps) in p.tps.get(&s).into_iter().flatten().enumerate() {
                let lat = p.latency_ms.get(&s).and_then(|v| v.get(i)).copied().unwrap_or(f64::NAN);
                let mb = p.mb_per_s.get(&s).and_then(|v| v.get(i)).map_or(String::new(), |v| format!("{v:.2}"));
                out.push_str(&format!(
                    "{},\"{}\",{},{},{},\"{}\",{},{:.1},{:.3},{}\n",
                    p.workload.name(),
                    p.label,
                    p.mode.name(),
                    p.clients,
                    s.key(),
                    o.label(s),
                    i + 1,
                    tps,
                    lat,
                    mb
                ));
            }
        }
    }
    for s in o.ids() {
        for (i, tps) in o.floor.get(&s).into_iter().flatten().enumerate() {
            out.push_str(&format!(
                "floor,\"SELECT 1\",prepared,1,{},\"{}\",{},{tps:.1},,\n",
                s.key(),
                o.label(s),
                i + 1
            ));
        }
    }
    out
}

/// `compare-W?-tps.png` per workload (tps against clients, one line per
/// variant and server) and a heat map of `scalable / PostgreSQL` per
/// PostgreSQL (rows = workload variants, columns = client counts):
/// `compare-speedup.png` against the newest, `compare-speedup-pg<n>.png`
/// against each older one.
pub fn plots(dir: &Path, o: &Outcome) -> Result<Vec<PathBuf>, CliError> {
    std::fs::create_dir_all(dir)?;
    let ids = o.ids();
    let mut clients: Vec<usize> = o.points.iter().map(|p| p.clients).collect();
    clients.sort_unstable();
    clients.dedup();
    let mut rows: Vec<(WorkloadId, String, Mode)> = Vec::new();
    for p in &o.points {
        let key = (p.workload, p.label.clone(), p.mode);
        if !rows.contains(&key) {
            rows.push(key);
        }
    }
    let find = |(w, l, m): &(WorkloadId, String, Mode), c: usize| {
        o.points.iter().find(|p| p.workload == *w && p.label == *l && p.mode == *m && p.clients == c)
    };
    let mut written = Vec::new();
    let mut workloads: Vec<WorkloadId> = rows.iter().map(|r| r.0).collect();
    workloads.dedup();
    for w in workloads {
        let mut series = Vec::new();
        for (group, key) in rows.iter().filter(|r| r.0 == w).enumerate() {
            for (i, &s) in ids.iter().enumerate() {
                let values: Vec<Option<f64>> = clients.iter().map(|&c| find(key, c).and_then(|p| p.tps(s))).collect();
                if values.iter().any(Option::is_some) {
                    series.push(plot::Series {
                        name: format!("{} {} {}", key.1, key.2.name(), o.label(s)),
                        group: group * ids.len() + i,
                        baseline: matches!(s, ServerId::Postgres(_)),
                        values,
                    });
                }
            }
        }
        if series.is_empty() {
            continue;
        }
        let chart = plot::LineChart {
            title: format!("{}: tps vs clients (thin: PostgreSQL, thick: turnstile)", w.name()),
            x_desc: "clients".into(),
            y_desc: "transactions per second".into(),
            x_labels: clients.iter().map(usize::to_string).collect(),
            series,
        };
        let path = dir.join(format!("compare-{}-tps.png", w.name()));
        plot::line_chart(&path, &chart)?;
        written.push(path);
    }
    for (n, pg) in o.postgres_newest_first().into_iter().enumerate() {
        let map = plot::HeatMap {
            title: format!("turnstile scalable / {} (tps)", pg.label()),
            rows: rows.iter().map(|(w, l, m)| format!("{} {l} {}", w.name(), m.name())).collect(),
            cols: clients.iter().map(|c| format!("{c} clients")).collect(),
            cells: rows
                .iter()
                .map(|key| {
                    clients
                        .iter()
                        .map(|&c| {
                            let p = find(key, c)?;
                            match (p.tps(ServerId::Scalable), p.tps(pg.id)) {
                                (Some(a), Some(b)) if b > 0.0 => Some(a / b),
                                _ => None,
                            }
                        })
                        .collect()
                })
                .collect(),
        };
        if map.rows.is_empty() {
            break;
        }
        let name =
            if n == 0 { "compare-speedup.png".to_owned() } else { format!("compare-speedup-{}.png", pg.id.key()) };
        let path = dir.join(name);
        let note = format!("scalable over {} (tps ratio): green faster, red slower", pg.label());
        plot::heat_map_noted(&path, &map, &note)?;
        written.push(path);
    }
    Ok(written)
}
