//! turnstile's views of MVCC's own memory, one row each:
//!
//! * `pg_stat_xact_log`: the 64-bit transaction id counter and the
//!   transaction status log, which keeps words only for ids that can still
//!   be asked about (`turnstile_engine::mvcc::clog`).
//! * `pg_stat_version_store`: the older versions of rows updated in place,
//!   bounded by `txn.version_store_limit_bytes`, and the updates that fell
//!   back to a new tuple version at the limit.
//!
//! ```sql
//! SELECT xids_assigned, next_xid, bytes FROM pg_stat_xact_log;
//! SELECT versions, bytes, limit_bytes, fallbacks FROM pg_stat_version_store;
//! ```

use crate::value::{Datum, SqlType};
use turnstile_engine::Engine;

use SqlType::Int8;

/// `pg_stat_xact_log`'s columns.
pub const XACT_LOG: &[(&str, SqlType)] = &[
    ("next_xid", Int8),
    ("base_xid", Int8),
    ("xids_assigned", Int8),
    ("commits", Int8),
    ("snapshots", Int8),
    ("word_segments", Int8),
    ("ranges", Int8),
    ("failed", Int8),
    ("bytes", Int8),
];

/// `pg_stat_version_store`'s columns.
pub const VERSION_STORE: &[(&str, SqlType)] =
    &[("versions", Int8), ("bytes", Int8), ("limit_bytes", Int8), ("fallbacks", Int8), ("pruned", Int8)];

fn int(v: u64) -> Datum {
    Datum::Int(i64::try_from(v).unwrap_or(i64::MAX))
}

/// `pg_stat_xact_log`'s row now.
pub fn xact_log_row(engine: &Engine) -> Vec<Datum> {
    let snaps = engine.txns().snapshots();
    let stats = snaps.stats();
    let size = snaps.clog().size();
    vec![
        int(snaps.next_xid()),
        int(snaps.clog().base()),
        int(stats.xids),
        int(stats.commits),
        int(stats.snapshots),
        int(size.word_segments),
        int(size.ranges),
        int(size.failed),
        int(size.bytes),
    ]
}

/// `pg_stat_version_store`'s row now.
pub fn version_store_row(engine: &Engine) -> Vec<Datum> {
    let s = engine.txns().versions().stats();
    vec![int(s.versions), int(s.bytes), int(s.limit_bytes), int(s.fallbacks), int(s.pruned)]
}
