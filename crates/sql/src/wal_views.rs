//! The write-ahead log seen from SQL: `pg_stat_wal` with PostgreSQL 15's
//! columns (its counters since the server started: `stats_reset` is that
//! moment), computed from the log's own counters
//! (`turnstile_storage::wal`).
//!
//! ```sql
//! SELECT wal_records, wal_fpi, wal_bytes, wal_sync FROM pg_stat_wal;
//! ```

use crate::value::{Datum, SqlType};
use bigdecimal::BigDecimal;
use turnstile_engine::Engine;

use SqlType::{Float8, Int8, TimestampTz};

/// `pg_stat_wal`'s columns.
pub const STAT_WAL: &[(&str, SqlType)] = &[
    ("wal_records", Int8),
    ("wal_fpi", Int8),
    ("wal_bytes", SqlType::Numeric(None)),
    ("wal_buffers_full", Int8),
    ("wal_write", Int8),
    ("wal_sync", Int8),
    ("wal_write_time", Float8),
    ("wal_sync_time", Float8),
    ("stats_reset", TimestampTz),
];

fn int(v: u64) -> Datum {
    Datum::Int(i64::try_from(v).unwrap_or(i64::MAX))
}

/// `pg_stat_wal`'s row now; `started` is when the server started.
pub fn stat_wal_row(engine: &Engine, started: i64) -> Vec<Datum> {
    let s = engine.log().wal().stats();
    vec![
        int(s.wal_records),
        int(s.wal_fpi),
        Datum::Numeric(BigDecimal::from(s.wal_bytes)),
        int(s.wal_buffers_full),
        int(s.wal_write),
        int(s.wal_sync),
        Datum::Float(s.wal_write_time),
        Datum::Float(s.wal_sync_time),
        Datum::Timestamp(started),
    ]
}
