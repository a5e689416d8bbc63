//! `turnstile stat`-style views of a point's engine, with PostgreSQL's
//! column names: `pg_locks` and `pg_stat_activity` grouped as a DBA would
//! query them while the clients run, then the cumulative `lock_stats`,
//! `buffer_stats`, `fd_stats` and `extension_stats` of the point.

use crate::report::{f, Table};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::sync::Arc;
use turnstile_engine::Engine;
use turnstile_lock::{LockStats, LockTagKind};
use turnstile_storage::{BufferPoolStats, ExtensionStats, FdStats};

/// The views of one point, read at the end of its measured phase.
#[derive(Clone, Debug, Default)]
pub struct StatSnapshot {
    /// `SELECT locktype, mode, granted, fastpath, count(*) FROM pg_locks GROUP BY 1, 2, 3, 4`.
    locks: BTreeMap<(&'static str, String, bool, bool), u64>,
    /// `SELECT state, wait_event_type, wait_event, count(*) FROM pg_stat_activity GROUP BY 1, 2, 3`.
    activity: BTreeMap<(&'static str, String, String), u64>,
    lock_stats: LockStats,
    buffer_stats: BufferPoolStats,
    fd_stats: FdStats,
    extension_stats: ExtensionStats,
}

impl StatSnapshot {
    /// Reads the lock and activity views while clients still run.
    pub fn live(engine: &Arc<Engine>) -> StatSnapshot {
        let mut s = StatSnapshot::default();
        for row in engine.locks_view() {
            *s.locks.entry((row.locktype, row.mode.to_string(), row.granted, row.fastpath)).or_default() += 1;
        }
        for row in engine.activity() {
            let key = (
                row.state.name(),
                row.wait_event_type.unwrap_or("").to_owned(),
                row.wait_event.unwrap_or("").to_owned(),
            );
            *s.activity.entry(key).or_default() += 1;
        }
        s
    }

    /// Adds the cumulative counters (since the point's engine opened).
    pub fn finish(&mut self, engine: &Arc<Engine>) {
        self.lock_stats = engine.lock_stats();
        self.buffer_stats = engine.buffer_stats();
        self.fd_stats = engine.fd_stats();
        self.extension_stats = engine.extension_stats();
    }

    /// The views as text tables.
    pub fn render(&self, title: &str) -> String {
        let mut out = format!("{title}\n\n");
        let mut locks = Table::new(
            "pg_locks: SELECT locktype, mode, granted, fastpath, count(*) FROM pg_locks GROUP BY 1, 2, 3, 4 (at the end of the measured phase)",
            &["locktype", "mode", "granted", "fastpath", "count"],
        );
        for ((locktype, mode, granted, fastpath), n) in &self.locks {
            locks.row(vec![(*locktype).into(), mode.clone(), tf(*granted), tf(*fastpath), n.to_string()]);
        }
        if self.locks.is_empty() {
            locks.row(vec!["(no rows)".into()]);
        }
        out.push_str(&locks.render());
        out.push('\n');
        let mut act = Table::new(
            "pg_stat_activity: SELECT state, wait_event_type, wait_event, count(*) FROM pg_stat_activity GROUP BY 1, 2, 3",
            &["state", "wait_event_type", "wait_event", "count"],
        );
        for ((state, ty, ev), n) in &self.activity {
            act.row(vec![(*state).into(), ty.clone(), ev.clone(), n.to_string()]);
        }
        out.push_str(&act.render());
        out.push('\n');
        let mut counters = Table::new("Cumulative views of the point (warm-up included)", &["view", "column", "value"]);
        let mut add = |view: &str, rows: Vec<(String, String)>| {
            for (k, v) in rows {
                counters.row(vec![view.into(), k, v]);
            }
        };
        add("lock_stats", lock_rows(&self.lock_stats));
        let b = &self.buffer_stats;
        let mut buffer = scalar_rows(&serde_json::to_value(b).unwrap_or(Json::Null));
        buffer.push(("hit_ratio".into(), f(b.hit_ratio(), 4)));
        add("buffer_stats", buffer);
        let mut fd = scalar_rows(&serde_json::to_value(self.fd_stats).unwrap_or(Json::Null));
        fd.push(("hit_ratio".into(), f(self.fd_stats.hit_ratio(), 4)));
        add("fd_stats", fd);
        let e = &self.extension_stats;
        let secs = |d: std::time::Duration| format!("{:.6} s", d.as_secs_f64());
        add(
            "extension_stats",
            vec![
                ("lock_wait".into(), secs(e.lock_wait)),
                ("lock_held".into(), secs(e.lock_held)),
                ("filesystem".into(), secs(e.filesystem)),
                ("buffer_search".into(), secs(e.buffer_search)),
                ("extensions".into(), e.extensions.to_string()),
                ("blocks_added".into(), e.blocks_added.to_string()),
                ("pages_from_fsm".into(), e.pages_from_fsm.to_string()),
            ],
        );
        out.push_str(&counters.render());
        out
    }
}

fn tf(b: bool) -> String {
    if b { "t" } else { "f" }.into()
}

/// The scalar fields of a serialized view, sorted by name.
fn scalar_rows(v: &Json) -> Vec<(String, String)> {
    match v.as_object() {
        Some(m) => m.iter().filter(|(_, v)| v.is_number()).map(|(k, v)| (k.clone(), v.to_string())).collect(),
        None => Vec::new(),
    }
}

/// `lock_stats`, with the per-lock-type arrays spelled out by `locktype`.
fn lock_rows(l: &LockStats) -> Vec<(String, String)> {
    let mut rows = scalar_rows(&serde_json::to_value(l).unwrap_or(Json::Null));
    for kind in LockTagKind::ALL {
        let (waits, ns) = (l.waits_of(kind), l.wait_ns_of(kind));
        if waits > 0 {
            rows.push((format!("waits[{}]", kind.name()), waits.to_string()));
            rows.push((format!("wait_time[{}]", kind.name()), format!("{:.6} s", ns as f64 / 1e9)));
        }
    }
    rows
}
