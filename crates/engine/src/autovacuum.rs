//! The background vacuum: a thread per engine, started with its first
//! session, that every `txn.autovacuum_naptime_ms` prunes the version
//! store at the current horizon, shrinks the transaction status log
//! ([`crate::mvcc::Snapshots::compact_log`]) and vacuums each table in which more than
//! `txn.autovacuum_vacuum_threshold` + `txn.autovacuum_vacuum_scale_factor`
//! × its live rows (50 + 20% by default, PostgreSQL's names and defaults)
//! were deleted or moved away since it was last vacuumed, skipping a
//! table whose lock it cannot take at once, as autovacuum does. It runs as
//! a session of its own, on the table's database, and stops when the
//! engine is dropped (it holds the engine weakly between passes).
//!
//! Nothing fails silently: an error of a pass (an I/O error, a corrupt
//! page, no free session slot) is logged with its cause
//! ([`crate::error::log_error`]) and the table is tried again next pass;
//! a thread that cannot be started is logged too (VACUUM still works).

use crate::error::log_error;
use crate::Engine;
use std::collections::HashMap;
use std::sync::Arc;
use turnstile_storage::RelFileId;

/// Starts the background vacuum of `engine` once (the first session does),
/// unless `txn.autovacuum_naptime_ms` is 0.
pub(crate) fn ensure_started(engine: &Arc<Engine>) {
    let nap = engine.config().txn.autovacuum_naptime_ms;
    if nap == 0 {
        return;
    }
    engine.autovacuum_once().call_once(|| {
        let weak = Arc::downgrade(engine);
        let spawned = std::thread::Builder::new().name("autovacuum".into()).spawn(move || {
            let mut pending: HashMap<RelFileId, u64> = HashMap::new();
            let mut live: HashMap<RelFileId, u64> = HashMap::new();
            loop {
                // The naptime between passes, as PostgreSQL's launcher sleeps.
                std::thread::sleep(std::time::Duration::from_millis(nap));
                let Some(engine) = weak.upgrade() else { return };
                pass(&engine, &mut pending, &mut live);
            }
        });
        if let Err(e) = spawned {
            eprintln!("turnstile: autovacuum: could not start its thread: {e}");
        }
    });
}

/// Whether a table with `dead` rows deleted or moved away and `live` live
/// rows (at its last vacuum) is due (PostgreSQL's `relation_needs_vacanalyze`).
fn due(config: &turnstile_sync::config::TxnConfig, dead: u64, live: u64) -> bool {
    dead as f64 > config.autovacuum_vacuum_threshold as f64 + config.autovacuum_vacuum_scale_factor * live as f64
}

/// One pass: prune the version store, vacuum the tables that are due.
fn pass(engine: &Arc<Engine>, pending: &mut HashMap<RelFileId, u64>, live: &mut HashMap<RelFileId, u64>) {
    let txns = engine.txns();
    txns.versions().prune(txns.snapshots(), txns.refresh_horizon());
    txns.snapshots().compact_log();
    for (file, n) in txns.take_dead() {
        *pending.entry(file).or_default() += n;
    }
    let config = &engine.config().txn;
    let due: Vec<RelFileId> =
        pending.iter().filter(|(f, &n)| due(config, n, live.get(f).copied().unwrap_or(0))).map(|(f, _)| *f).collect();
    for file in due {
        let Some(db) = engine.databases().into_iter().find(|d| d.id == file.db) else {
            pending.remove(&file);
            continue;
        };
        match engine.session_on(&db.name).and_then(|mut s| s.autovacuum_rel(file)) {
            Ok(Some(n)) => {
                pending.remove(&file);
                live.insert(file, n);
            }
            // Busy (its lock is held) or gone: try again next time.
            Ok(None) => {
                if !engine.catalog().snapshot().relations.contains_key(&file.rel) {
                    pending.remove(&file);
                }
            }
            Err(e) => log_error(&format!("autovacuum of relation {file}"), &e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_is_due_past_the_threshold_plus_the_scale_factor_of_its_live_rows() {
        let mut c = turnstile_sync::Config::default().txn;
        assert!(!due(&c, 50, 0) && due(&c, 51, 0));
        assert!(!due(&c, 250, 1000) && due(&c, 251, 1000));
        c.autovacuum_vacuum_threshold = 0;
        c.autovacuum_vacuum_scale_factor = 0.5;
        assert!(!due(&c, 500, 1000) && due(&c, 501, 1000));
    }
}
