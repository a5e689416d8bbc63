//! `pg_locks`-like rows of [`LockManager::locks`](crate::LockManager::locks).

use crate::mode::LockMode;
use crate::tag::LockTag;
use std::time::Duration;

/// One held or awaited lock.
///
/// ```
/// use turnstile_lock::{LockManager, LockMode, LockTag, Wait};
/// let manager = LockManager::new(&turnstile_sync::Config::default()).unwrap();
/// let mut b = manager.register().unwrap();
/// b.lock(LockTag::relation(1, 10), LockMode::RowExclusive, Wait::Block).unwrap();
/// b.lock(LockTag::transaction_id(1, 700), LockMode::Exclusive, Wait::Block).unwrap();
/// let mut rows = manager.locks();
/// rows.sort_by_key(|r| r.locktype);
/// assert_eq!((rows[0].locktype, rows[0].fastpath, rows[0].relation), ("relation", true, Some(10)));
/// assert_eq!((rows[1].locktype, rows[1].fastpath, rows[1].granted), ("transactionid", false, true));
/// assert_eq!(rows[1].mode.name(), "ExclusiveLock");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LockRow {
    /// `locktype`: `relation`, `extend`, `page`, `tuple`,
    /// `transactionid`, `object`, `advisory`.
    pub locktype: &'static str,
    /// The full tag.
    pub tag: LockTag,
    /// `database`.
    pub database: u32,
    /// `relation`, for relation-based tags.
    pub relation: Option<u32>,
    /// `mode` (e.g. `AccessShareLock`).
    pub mode: LockMode,
    /// `granted`: held (`true`) or awaited (`false`).
    pub granted: bool,
    /// `fastpath`: held in the backend's fast-path slots.
    pub fastpath: bool,
    /// The backend (slot number).
    pub backend: usize,
    /// `waitstart`: when the wait began, as time since the manager was
    /// created; `None` for granted locks.
    pub wait_start: Option<Duration>,
}

impl LockRow {
    pub(crate) fn new(
        tag: LockTag,
        mode: LockMode,
        granted: bool,
        fastpath: bool,
        backend: usize,
        wait_start: Option<Duration>,
    ) -> LockRow {
        LockRow {
            locktype: tag.kind().name(),
            tag,
            database: tag.database(),
            relation: tag.relation_id(),
            mode,
            granted,
            fastpath,
            backend,
            wait_start,
        }
    }
}
