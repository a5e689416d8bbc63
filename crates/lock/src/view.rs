//! `pg_locks`-like rows of [`LockManager::locks`](crate::LockManager::locks).

use crate::mode::LockMode;
use crate::tag::LockTag;
use std::time::Duration;

/// One held or awaited lock.
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
