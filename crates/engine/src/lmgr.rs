//! Relation-level locking for one backend (PostgreSQL's `lmgr.c`, with
//! `RangeVarGetRelidExtended`): heavyweight locks on relations, taken
//! through the backend, and relation-cache look-ups made after the lock.
//!
//! [`RelLocker`] borrows what one statement needs from its session — the
//! catalog, the backend's relation cache, its lock-manager backend and its
//! database — so that the session's DDL, the [`Planner`](crate::query::plan::Planner)
//! and the [`Executor`](crate::query::exec::Executor) lock relations the same
//! way without any of them depending on the session.

use crate::catalog::{AmCache, Catalog, DbId, RelCache, RelEntry, RelId};
use crate::error::{Internal, Result};
use std::sync::Arc;
use turnstile_lock::{Backend, LockMode, LockTag, Wait};

/// How often a name look-up is retried when DDL keeps replacing the
/// relation between look-up and lock.
const RESOLVE_RETRIES: usize = 100;

/// A backend's relation locks and relation cache, borrowed for one
/// statement (or one planning, or one execution).
#[derive(Debug)]
pub struct RelLocker<'a> {
    catalog: &'a Catalog,
    relcache: &'a mut RelCache,
    backend: &'a mut Backend,
    db: DbId,
}

impl<'a> RelLocker<'a> {
    /// Borrows the pieces of a session.
    pub(crate) fn new(
        catalog: &'a Catalog,
        relcache: &'a mut RelCache,
        backend: &'a mut Backend,
        db: DbId,
    ) -> RelLocker<'a> {
        RelLocker { catalog, relcache, backend, db }
    }

    /// The catalog.
    pub fn catalog(&self) -> &'a Catalog {
        self.catalog
    }

    /// The database.
    pub fn database(&self) -> DbId {
        self.db
    }

    /// Takes `mode` on relation `id` (waiting as the backend's timeouts say).
    pub fn lock(&mut self, id: RelId, mode: LockMode) -> Result<()> {
        self.backend.lock(LockTag::relation(self.db, id), mode, Wait::Block)?;
        Ok(())
    }

    /// Resolves `name`, locks it in `mode`, and returns its cache entry as
    /// of after the lock was granted. The lock lasts until the statement
    /// (or transaction) ends. If DDL replaced the relation while the lock
    /// was awaited, the lock is dropped and the look-up retried.
    pub fn lock_by_name(&mut self, name: &str, mode: LockMode) -> Result<Arc<RelEntry>> {
        for _ in 0..RESOLVE_RETRIES {
            let before = self.relcache.resolve(self.catalog, self.db, name)?;
            self.lock(before.rel.id, mode)?;
            match self.relcache.resolve(self.catalog, self.db, name) {
                Ok(after) if after.rel.id == before.rel.id => return Ok(after),
                other => {
                    // Replaced or dropped while we waited: let go and retry.
                    self.backend.unlock(LockTag::relation(self.db, before.rel.id), mode)?;
                    other?;
                }
            }
        }
        Err(Internal::RelationKeptChanging { relation: name.to_owned() }.into())
    }

    /// The cache entry of relation `id` (no lock is taken; callers lock first).
    pub fn entry(&mut self, id: RelId) -> Result<Arc<RelEntry>> {
        Ok(self.relcache.get(self.catalog, id)?)
    }

    /// The backend's cached index roots, checked against the catalog
    /// generation now, and the backend (for cancel checks in scans).
    pub fn amcache_and_backend(&mut self) -> (&mut AmCache, &Backend) {
        (self.relcache.amcache(self.catalog), self.backend)
    }
}
