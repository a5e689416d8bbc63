//! What `turnstile run` measures: one [`PointResult`] per (variant,
//! client count, profile), gathered in a [`RunReport`]. Serialized, a point
//! is the output contract of `run --json` (`tests/cli_contract.rs`); rendering lives in
//! `render.rs`, measuring in `measure.rs`.

use super::stat::StatSnapshot;
use super::WorkloadId;
use crate::harness::Latency;
use crate::workload::in_process::{Extra, Params};
use serde::Serialize;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use turnstile_sync::Profile;

/// Per-transaction counters (the output contract's `per_txn`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct PerTxn {
    /// Relation locks taken (fast path and shared table).
    pub relation_locks: f64,
    /// Of which through the fast path.
    pub fastpath_locks: f64,
    /// Of which in the shared table.
    pub shared_lock_acquires: f64,
    /// Lock-partition LWLock acquisitions that waited.
    pub partition_lock_waits: f64,
    /// Weak locks that found the fast path full.
    pub fastpath_overflows: f64,
    /// `BufferMapping` partition waits (all sessions, measured phase).
    pub mapping_partition_waits: f64,
    /// Files opened (vfd cache misses).
    pub fd_opens: f64,
    /// Memory blocks served from the block cache.
    pub cache_allocs: f64,
    /// Minor page faults of the client threads.
    pub minor_faults: f64,
    /// Snapshots taken (all sessions, measured phase).
    pub snapshots: f64,
    /// Shared work of the snapshot protocol: `ProcArray` and `XidGen`
    /// lock acquisitions (all sessions, measured phase; 0 under `csn`).
    pub snapshot_shared_acquires: f64,
    /// Transaction ids assigned (all sessions, measured phase): 0 for a
    /// read-only transaction, 1 for one that writes, as in PostgreSQL.
    pub xids: f64,
    /// WAL records inserted (all sessions, measured phase).
    pub wal_records: f64,
    /// WAL bytes inserted.
    pub wal_bytes: f64,
    /// Shared acquisitions on the WAL path: the insertion spinlock, the
    /// `WALInsert` and `WALWrite` locks (0 under `wal.insert = scalable`,
    /// but for the flusher's).
    pub wal_shared_acquires: f64,
    /// `fdatasync`s of the WAL; its inverse is commits per `fdatasync`
    /// (group commit) when every transaction commits a write.
    pub wal_syncs: f64,
}

/// One measured point.
#[derive(Clone, Debug, Serialize)]
pub struct PointResult {
    /// The profile it ran under (reported by name).
    pub profile: Profile,
    /// The variant's parameters.
    pub params: Params,
    /// Client threads.
    pub clients: usize,
    /// Transactions per second over the measured phase.
    pub tps: f64,
    /// Per-transaction latency.
    pub latency_us: Latency,
    /// `(latency(P) - latency(0)) / P`, for one-client points with partitions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_partition_us: Option<f64>,
    /// Counters per transaction.
    pub per_txn: PerTxn,
    /// Average active backends per activity sample, by wait event.
    pub wait_events: BTreeMap<String, f64>,
    /// Activity samples behind `wait_events`.
    pub wait_event_samples: u64,
    /// The workload's own figures.
    #[serde(flatten)]
    pub extra: Extra,
}

/// What `turnstile run` measured: the points and what the renderers need
/// beside them.
#[derive(Debug)]
pub struct RunReport {
    /// The workload run.
    pub workload: WorkloadId,
    /// Workload-level parameters, as reported.
    pub params: Json,
    /// The measured points, in the order they ran.
    pub results: Vec<PointResult>,
    /// The engine views of the last point, and a label naming it.
    pub last_stat: Option<(String, StatSnapshot)>,
}
