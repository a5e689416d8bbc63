//! System views with PostgreSQL 15's column names and type OIDs:
//! `pg_locks`, `pg_stat_activity`, `pg_stat_lock` (modelled on PostgreSQL
//! 19's, with `fastpath_exceeded`), computed from the engine's live state
//! when a query reads them; turnstile's own `pg_stat_xact_log` (the
//! transaction status log and the 64-bit id counter) and
//! `pg_stat_version_store` ([`crate::mvcc_views`]); and the catalog
//! relations of [`crate::catalog`] (`pg_class`,
//! `information_schema.columns`, …), computed from its catalog; and a
//! sequence read as a relation (its one row of state).

use crate::catalog::{self, Reader, Schema, SystemRelation};
use crate::error::SqlError;
use crate::expr::Services;
use crate::value::{Datum, SqlType};
use turnstile_engine::Session;
use turnstile_lock::LockTagKind;

/// A system view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// `pg_locks`.
    Locks,
    /// `pg_stat_activity`.
    Activity,
    /// `pg_stat_lock`.
    LockStats,
    /// `pg_stat_xact_log`.
    XactLog,
    /// `pg_stat_version_store`.
    VersionStore,
    /// `pg_stat_wal`.
    Wal,
    /// A relation of `pg_catalog` or `information_schema`.
    Catalog(&'static SystemRelation),
    /// A sequence read as a relation (`SELECT last_value, is_called FROM
    /// s`, as pg_dump reads it), by OID: [`catalog::sequences::SEQUENCE_DATA`].
    Sequence(u32),
}

/// The views of the engine's live state (listed in `pg_class` too).
pub const STATUS_VIEWS: &[View] =
    &[View::Locks, View::Activity, View::LockStats, View::XactLog, View::VersionStore, View::Wal];
/// pg_backend_pid() = this + the lock-manager backend number.
pub const PID_BASE: i32 = 10_000;

use SqlType::*;

const LOCKS: &[(&str, SqlType)] = &[
    ("locktype", Text),
    ("database", Oid),
    ("relation", Oid),
    ("page", Int4),
    ("tuple", Int2),
    ("virtualxid", Text),
    ("transactionid", Xid),
    ("classid", Oid),
    ("objid", Oid),
    ("objsubid", Int2),
    ("virtualtransaction", Text),
    ("pid", Int4),
    ("mode", Text),
    ("granted", Bool),
    ("fastpath", Bool),
    ("waitstart", TimestampTz),
];

const ACTIVITY: &[(&str, SqlType)] = &[
    ("datid", Oid),
    ("datname", Name),
    ("pid", Int4),
    ("leader_pid", Int4),
    ("usesysid", Oid),
    ("usename", Name),
    ("application_name", Text),
    ("client_addr", Text),
    ("client_hostname", Text),
    ("client_port", Int4),
    ("backend_start", TimestampTz),
    ("xact_start", TimestampTz),
    ("query_start", TimestampTz),
    ("state_change", TimestampTz),
    ("wait_event_type", Text),
    ("wait_event", Text),
    ("state", Text),
    ("backend_xid", Xid),
    ("backend_xmin", Xid),
    ("query_id", Int8),
    ("query", Text),
    ("backend_type", Text),
];

const LOCK_STATS: &[(&str, SqlType)] = &[
    ("locktype", Text),
    ("waits", Int8),
    ("wait_time", Float8),
    ("fastpath_exceeded", Int8),
    ("deadlocks", Int8),
    ("timeouts", Int8),
    ("stats_reset", TimestampTz),
];

impl View {
    /// The view called `name` (unqualified, or in `pg_catalog`), if any.
    pub fn named(name: &str) -> Option<View> {
        Some(match name {
            "pg_locks" => View::Locks,
            "pg_stat_activity" => View::Activity,
            "pg_stat_lock" => View::LockStats,
            "pg_stat_xact_log" => View::XactLog,
            "pg_stat_version_store" => View::VersionStore,
            "pg_stat_wal" => View::Wal,
            _ => return catalog::lookup(Schema::Catalog, name).map(View::Catalog),
        })
    }

    /// The view a qualified name (`information_schema.columns`,
    /// `pg_catalog.pg_class`) names; `None` for any other name.
    pub fn qualified(schema: &str, name: &str) -> Option<View> {
        match schema {
            "pg_catalog" => View::named(name),
            "information_schema" => catalog::lookup(Schema::InformationSchema, name).map(View::Catalog),
            _ => None,
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            View::Locks => "pg_locks",
            View::Activity => "pg_stat_activity",
            View::LockStats => "pg_stat_lock",
            View::XactLog => "pg_stat_xact_log",
            View::VersionStore => "pg_stat_version_store",
            View::Wal => "pg_stat_wal",
            View::Catalog(r) => r.name,
            View::Sequence(_) => "sequence",
        }
    }

    /// Its OID (PostgreSQL 15's; `pg_stat_lock`, which PostgreSQL 15
    /// lacks, one past `pg_stat_activity`'s neighbours).
    pub fn oid(self) -> u32 {
        match self {
            View::Catalog(r) => r.oid,
            View::Sequence(oid) => oid,
            status => catalog::STATUS_VIEW_OIDS.iter().find(|v| v.1 == status.name()).map_or(0, |v| v.0),
        }
    }

    /// Whether its rows end with the system column `tableoid` (its OID),
    /// which `*` does not list: a catalog table has one, as in
    /// PostgreSQL (pg_dump reads `tableoid` on each catalog it scans);
    /// a view (`pg_roles`, `information_schema.tables`, `pg_locks`) has
    /// none.
    pub fn has_tableoid(self) -> bool {
        matches!(self, View::Catalog(r) if r.kind == 'r')
    }

    /// Its columns.
    pub fn columns(self) -> &'static [(&'static str, SqlType)] {
        match self {
            View::Locks => LOCKS,
            View::Activity => ACTIVITY,
            View::LockStats => LOCK_STATS,
            View::XactLog => crate::mvcc_views::XACT_LOG,
            View::VersionStore => crate::mvcc_views::VERSION_STORE,
            View::Wal => crate::wal_views::STAT_WAL,
            View::Catalog(r) => r.columns,
            View::Sequence(_) => catalog::sequences::SEQUENCE_DATA,
        }
    }
}

fn text(s: impl Into<String>) -> Datum {
    Datum::Text(s.into())
}

fn opt_text(s: Option<&str>) -> Datum {
    s.map_or(Datum::Null, text)
}

/// The view's rows now.
pub fn rows(view: View, session: &mut Session, services: &mut dyn Services) -> Result<Vec<Vec<Datum>>, SqlError> {
    let engine = std::sync::Arc::clone(session.engine());
    let shared = services.shared();
    Ok(match view {
        View::Locks => engine
            .locks_view()
            .into_iter()
            .map(|l| {
                // The tag's fields in PostgreSQL's columns (`pg_lock_status`).
                let (f1, f2, f3) = l.tag.fields();
                let int = |v: u32| Datum::Int(v.into());
                let kind = l.tag.kind();
                let (page, tuple) = match kind {
                    LockTagKind::Page => (int(f2), Datum::Null),
                    LockTagKind::Tuple => (int(f2), int(f3.into())),
                    _ => (Datum::Null, Datum::Null),
                };
                let by_xid = matches!(kind, LockTagKind::TransactionId | LockTagKind::SpeculativeToken);
                let xid = if by_xid { int(f1) } else { Datum::Null };
                let (classid, objid, objsubid) = match kind {
                    LockTagKind::Object | LockTagKind::Advisory => (int(f1), int(f2), int(f3.into())),
                    // `pg_lock_status`: the token is `objid`.
                    LockTagKind::SpeculativeToken => (Datum::Null, int(f3.into()), Datum::Null),
                    _ => (Datum::Null, Datum::Null, Datum::Null),
                };
                let database = if by_xid { Datum::Null } else { int(l.database) };
                vec![
                    text(l.locktype),
                    database,
                    l.relation.map_or(Datum::Null, |r| Datum::Int(r.into())),
                    page,
                    tuple,
                    Datum::Null,
                    xid,
                    classid,
                    objid,
                    objsubid,
                    Datum::Null,
                    Datum::Int(i64::from(PID_BASE) + l.backend as i64),
                    text(l.mode.name()),
                    Datum::Bool(l.granted),
                    Datum::Bool(l.fastpath),
                    l.wait_start.map_or(Datum::Null, |d| Datum::Timestamp(shared.started + d.as_micros() as i64)),
                ]
            })
            .collect(),
        View::Activity => activity_rows(&engine, shared, services.pid()),
        View::LockStats => {
            let s = engine.lock_stats();
            LockTagKind::ALL
                .iter()
                .map(|k| {
                    let i = *k as usize;
                    let relation = *k == LockTagKind::Relation;
                    vec![
                        text(k.name()),
                        Datum::Int(s.waits[i] as i64),
                        Datum::Float(s.wait_ns[i] as f64 / 1e6),
                        Datum::Int(if relation { s.fast_path_overflows as i64 } else { 0 }),
                        Datum::Int(if relation { s.deadlocks as i64 } else { 0 }),
                        Datum::Int(if relation { s.timeouts as i64 } else { 0 }),
                        Datum::Null,
                    ]
                })
                .collect()
        }
        View::Catalog(rel) => {
            let cat = engine.catalog().snapshot();
            let status: Vec<(u32, &str, usize)> =
                STATUS_VIEWS.iter().map(|v| (v.oid(), v.name(), v.columns().len())).collect();
            let reader = Reader {
                cat: &cat,
                db: session.database(),
                services: &*services,
                system: catalog::SYSTEM_RELATIONS,
                status_views: &status,
            };
            let mut rows = (rel.rows)(&reader);
            if view.has_tableoid() {
                rows.iter_mut().for_each(|r| r.push(Datum::Int(rel.oid.into())));
            }
            rows
        }
        View::Sequence(oid) => vec![catalog::sequences::sequence_data_row(shared, session.database(), oid)?],
        View::XactLog => vec![crate::mvcc_views::xact_log_row(&engine)],
        View::VersionStore => vec![crate::mvcc_views::version_store_row(&engine)],
        View::Wal => vec![crate::wal_views::stat_wal_row(&engine, shared.started)],
    })
}

/// `pg_stat_activity`: one row per activity slot, with the backend's
/// registry entry where it has one.
fn activity_rows(engine: &turnstile_engine::Engine, shared: &crate::Shared, me: i32) -> Vec<Vec<Datum>> {
    let registry = shared.backends();
    engine
        .activity()
        .into_iter()
        .map(|a| {
            let info = registry.iter().find(|b| b.activity_slot == a.backend);
            let ts = |us: u64| Datum::Timestamp(shared.started + us as i64);
            let query_start = if a.query_start_us == 0 { Datum::Null } else { ts(a.query_start_us) };
            let (pid, datid, datname, usename, app, addr, start, query) = match info {
                Some(b) => (
                    Datum::Int(b.pid.into()),
                    Datum::Int(b.datid.into()),
                    text(b.datname.clone()),
                    text(b.usename.clone()),
                    text(b.application_name()),
                    opt_text(b.client_addr.as_deref()),
                    Datum::Timestamp(b.backend_start),
                    text(b.query()),
                ),
                None => (
                    Datum::Null,
                    Datum::Null,
                    Datum::Null,
                    Datum::Null,
                    text(""),
                    Datum::Null,
                    Datum::Null,
                    text(a.query.clone()),
                ),
            };
            vec![
                datid,
                datname,
                pid,
                Datum::Null,
                Datum::Int(10),
                usename,
                app,
                addr,
                Datum::Null,
                Datum::Null,
                start,
                Datum::Null,
                query_start.clone(),
                query_start,
                opt_text(a.wait_event_type),
                opt_text(a.wait_event),
                // The backend reading the view is running this query.
                text(if info.is_some_and(|b| b.pid == me) { "active" } else { a.state.name() }),
                Datum::Null,
                Datum::Null,
                Datum::Null,
                query,
                text("client backend"),
            ]
        })
        .collect()
}
