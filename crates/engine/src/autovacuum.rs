//! The background vacuum: a thread per engine, started with its first
//! session, that every `txn.autovacuum_naptime_ms` prunes the version
//! store at the current horizon and vacuums each table in which more than
//! 50 + 20% of its rows were deleted or moved away since it was last
//! vacuumed (PostgreSQL's `autovacuum_vacuum_threshold` and
//! `autovacuum_vacuum_scale_factor`), skipping a table whose lock it cannot
//! take at once, as autovacuum does. It runs as a session of its own, on
//! the table's database, and stops when the engine is dropped (it holds
//! the engine weakly between passes).

use crate::Engine;
use std::collections::HashMap;
use std::sync::Arc;
use turnstile_storage::RelFileId;

/// Rows deleted or moved away past which the background vacuum visits a
/// table (`autovacuum_vacuum_threshold`)…
const THRESHOLD: u64 = 50;
/// …plus this share of its live rows (`autovacuum_vacuum_scale_factor`).
const SCALE: f64 = 0.2;

/// Starts the background vacuum of `engine` once (the first session does),
/// unless `txn.autovacuum_naptime_ms` is 0.
pub(crate) fn ensure_started(engine: &Arc<Engine>) {
    let nap = engine.config().txn.autovacuum_naptime_ms;
    if nap == 0 {
        return;
    }
    engine.autovacuum_once().call_once(|| {
        let weak = Arc::downgrade(engine);
        // No thread (the process is out of threads): VACUUM still works.
        let _ = std::thread::Builder::new().name("autovacuum".into()).spawn(move || {
            let mut pending: HashMap<RelFileId, u64> = HashMap::new();
            let mut live: HashMap<RelFileId, u64> = HashMap::new();
            loop {
                // The naptime between passes, as PostgreSQL's launcher sleeps.
                std::thread::sleep(std::time::Duration::from_millis(nap));
                let Some(engine) = weak.upgrade() else { return };
                pass(&engine, &mut pending, &mut live);
            }
        });
    });
}

/// One pass: prune the version store, vacuum the tables that are due.
fn pass(engine: &Arc<Engine>, pending: &mut HashMap<RelFileId, u64>, live: &mut HashMap<RelFileId, u64>) {
    let txns = engine.txns();
    txns.versions().prune(txns.snapshots(), txns.refresh_horizon());
    for (file, n) in txns.take_dead() {
        *pending.entry(file).or_default() += n;
    }
    let due: Vec<RelFileId> = pending
        .iter()
        .filter(|(f, &n)| n as f64 > THRESHOLD as f64 + SCALE * live.get(f).copied().unwrap_or(0) as f64)
        .map(|(f, _)| *f)
        .collect();
    for file in due {
        let Some(db) = engine.databases().into_iter().find(|d| d.id == file.db) else {
            pending.remove(&file);
            continue;
        };
        let done = engine.session_on(&db.name).and_then(|mut s| s.autovacuum_rel(file));
        match done {
            Ok(Some(n)) => {
                pending.remove(&file);
                live.insert(file, n);
            }
            // Busy (its lock is held) or gone: try again next time.
            _ => {
                if !engine.catalog().snapshot().relations.contains_key(&file.rel) {
                    pending.remove(&file);
                }
            }
        }
    }
}
