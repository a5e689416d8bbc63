//! `Session`: one client's connection — a lock-manager backend, an activity
//! slot, a relation cache — and the transaction that bounds its locks.
//!
//! # Transactions and locks
//!
//! Outside `begin`/`commit` every statement is its own transaction: its
//! heavyweight locks are released when it returns (success or error).
//! Inside one, locks accumulate until `commit`, as in PostgreSQL. There is
//! no MVCC and no rollback of data: a statement's effects are visible to
//! other sessions as soon as it returns; heavyweight locks alone order
//! readers against DDL. Dropping a session mid-transaction releases
//! everything it held.
//!
//! # DDL
//!
//! Every DDL takes `AccessExclusiveLock` on each existing relation it
//! changes (the table, its partitions, its indexes; for a new partition,
//! the parent) before touching the catalog, so it waits for queries that
//! hold `AccessShareLock` — and, because `AccessExclusive` is a strong
//! mode, it first moves every backend's matching fast-path locks into the
//! shared lock table (seed 002's transfer). A new relation is locked
//! `AccessExclusive` too, until the creating transaction ends.
//!
//! Names are resolved, locked, then resolved again: if DDL replaced the
//! relation in between, the lock is dropped and the look-up retried
//! (PostgreSQL's `RangeVarGetRelidExtended`).

use crate::catalog::{
    CatalogError, DbId, PartitionBound, PartitionStrategy, RelCache, RelEntry, RelId, RelKind, Relation,
};
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::heap::{self, BulkInserter, HeapScan};
use crate::tid::Tid;
use crate::types::{decode_row, encode_row_into, ColumnType, Value};
use std::collections::HashMap;
use std::sync::Arc;
use turnstile_lock::{Backend, LockMode, LockTag, ScopedLock, Wait};
use turnstile_storage::rel::{Fork, RelFileId};
use turnstile_storage::{Extender, ExtensionLocker, ExtensionStats, Ring, StorageError};
use turnstile_sync::activity::{ActivityHandle, BackendState};

/// How often a name look-up is retried when DDL keeps replacing the
/// relation between look-up and lock.
const RESOLVE_RETRIES: usize = 100;

/// One client's session.
#[derive(Debug)]
pub struct Session {
    // Field order is drop order: locks go before the activity slot.
    backend: Backend,
    activity: ActivityHandle,
    relcache: RelCache,
    engine: Arc<Engine>,
    db: DbId,
    in_transaction: bool,
    extension: ExtensionStats,
}

/// The relation-extension lock as a heavyweight lock of this session's
/// backend (`LockTag::relation_extend`, `ExclusiveLock`); it never takes
/// part in deadlock detection.
struct BackendExtensionLock<'b> {
    backend: &'b mut Backend,
}

impl ExtensionLocker for BackendExtensionLock<'_> {
    type Guard<'a>
        = ScopedLock<'a>
    where
        Self: 'a;

    fn lock_extension(&mut self, rel: RelFileId) -> turnstile_storage::Result<ScopedLock<'_>> {
        self.backend
            .lock_scoped(LockTag::relation_extend(rel.db, rel.rel), LockMode::Exclusive, Wait::Block)
            .map_err(|e| StorageError::ExtensionLock { rel, source: Box::new(e) })
    }

    fn extension_waiters(&mut self, rel: RelFileId) -> usize {
        self.backend.waiters(&LockTag::relation_extend(rel.db, rel.rel))
    }
}

impl Session {
    pub(crate) fn new(engine: Arc<Engine>, database: &str) -> Result<Session> {
        let db = engine.catalog().database(database)?;
        let activity = engine.activity_table().register()?;
        let backend = engine.locks().register()?;
        Ok(Session {
            backend,
            activity,
            relcache: RelCache::new(),
            engine,
            db,
            in_transaction: false,
            extension: ExtensionStats::default(),
        })
    }

    /// The engine this session belongs to.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// The session's database.
    pub fn database(&self) -> DbId {
        self.db
    }

    /// The session's lock-manager backend (its `pg_locks` pid).
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// Mutable access to the backend, for callers that take their own
    /// heavyweight locks (advisory locks, benchmarks).
    pub fn backend_mut(&mut self) -> &mut Backend {
        &mut self.backend
    }

    /// The session's activity slot number.
    pub fn activity_slot(&self) -> usize {
        self.activity.backend()
    }

    /// Whether a transaction is open.
    pub fn in_transaction(&self) -> bool {
        self.in_transaction
    }

    /// `BEGIN`: locks taken from now on are kept until [`Session::commit`].
    pub fn begin(&mut self) -> Result<()> {
        if self.in_transaction {
            return Err(EngineError::State("there is already a transaction in progress".into()));
        }
        self.in_transaction = true;
        self.activity.set_state(BackendState::IdleInTransaction);
        Ok(())
    }

    /// `COMMIT`: releases every heavyweight lock.
    pub fn commit(&mut self) -> Result<()> {
        if !self.in_transaction {
            return Err(EngineError::State("there is no transaction in progress".into()));
        }
        self.in_transaction = false;
        self.backend.release_all();
        self.activity.set_state(BackendState::Idle);
        Ok(())
    }

    /// Runs `body` as one statement: publishes `query` and the `active`
    /// state, attaches the activity slot to this thread (so lock waits are
    /// reported), and releases the statement's locks afterwards unless a
    /// transaction is open.
    pub(crate) fn statement<R>(&mut self, query: &str, body: impl FnOnce(&mut Self) -> Result<R>) -> Result<R> {
        self.activity.set_query(query);
        self.activity.set_state(BackendState::Active);
        let attached = self.activity.attach();
        let out = body(self);
        drop(attached);
        if self.in_transaction {
            self.activity.set_state(BackendState::IdleInTransaction);
        } else {
            self.backend.release_all();
            self.activity.set_state(BackendState::Idle);
        }
        out
    }

    /// Takes `mode` on relation `id` (waiting as the backend's timeouts say).
    pub fn lock_relation(&mut self, id: RelId, mode: LockMode) -> Result<()> {
        self.backend.lock(LockTag::relation(self.db, id), mode, Wait::Block)?;
        Ok(())
    }

    /// `LOCK TABLE name IN mode MODE`: inside a transaction only (as in
    /// PostgreSQL); the lock is kept until `commit`. Returns the relation's
    /// cache entry as of after the lock was granted.
    pub fn lock_table(&mut self, name: &str, mode: LockMode) -> Result<Arc<RelEntry>> {
        if !self.in_transaction {
            return Err(EngineError::State("LOCK TABLE can only be used in transaction blocks".into()));
        }
        self.activity.set_query(&format!("LOCK TABLE {name} IN {mode} MODE"));
        let _attached = self.activity.attach();
        self.lock_by_name(name, mode)
    }

    /// Resolves `name`, locks it in `mode`, and returns its cache entry as
    /// of after the lock was granted. The lock lasts until the statement
    /// (or transaction) ends.
    pub(crate) fn lock_by_name(&mut self, name: &str, mode: LockMode) -> Result<Arc<RelEntry>> {
        for _ in 0..RESOLVE_RETRIES {
            let before = self.relcache.resolve(self.engine.catalog(), self.db, name)?;
            self.lock_relation(before.rel.id, mode)?;
            match self.relcache.resolve(self.engine.catalog(), self.db, name) {
                Ok(after) if after.rel.id == before.rel.id => return Ok(after),
                other => {
                    // Replaced or dropped while we waited: let go and retry.
                    self.backend.unlock(LockTag::relation(self.db, before.rel.id), mode)?;
                    other?;
                }
            }
        }
        Err(EngineError::State(format!("relation \"{name}\" kept changing while it was being locked")))
    }

    /// The cache entry of relation `id` (no lock is taken; callers lock first).
    pub fn rel_entry(&mut self, id: RelId) -> Result<Arc<RelEntry>> {
        Ok(self.relcache.get(self.engine.catalog(), id)?)
    }

    fn file(&self, id: RelId) -> RelFileId {
        RelFileId::new(self.db, id)
    }

    fn create_storage(&mut self, rels: &[Relation]) -> Result<()> {
        for r in rels.iter().filter(|r| r.kind.has_storage()) {
            self.engine.smgr().create(self.file(r.id), Fork::Main)?;
        }
        Ok(())
    }

    /// `CREATE TABLE name (columns…) [PARTITION BY RANGE|HASH (column)]`.
    pub fn create_table(
        &mut self,
        name: &str,
        columns: &[(&str, ColumnType)],
        partition_by: Option<(PartitionStrategy, &str)>,
    ) -> Result<RelId> {
        self.statement(&format!("CREATE TABLE {name}"), |s| {
            let rel = s.engine.catalog().create_table(s.db, name, columns, partition_by)?;
            s.lock_relation(rel.id, LockMode::AccessExclusive)?;
            s.create_storage(std::slice::from_ref(&rel))?;
            Ok(rel.id)
        })
    }

    /// `CREATE TABLE name PARTITION OF parent FOR VALUES …`: locks the
    /// parent `AccessExclusive`; the partition gets one index per index of
    /// the parent.
    pub fn create_partition(&mut self, parent: &str, name: &str, bound: PartitionBound) -> Result<RelId> {
        self.statement(&format!("CREATE TABLE {name} PARTITION OF {parent}"), |s| {
            let p = s.lock_by_name(parent, LockMode::AccessExclusive)?;
            if p.rel.kind != RelKind::PartitionedTable {
                return Err(CatalogError::WrongKind { name: parent.into(), expected: "a partitioned table" }.into());
            }
            let (part, indexes) = s.engine.catalog().create_partition(s.db, parent, name, bound)?;
            s.lock_relation(part.id, LockMode::AccessExclusive)?;
            s.create_storage(std::slice::from_ref(&part))?;
            s.create_storage(&indexes)?;
            Ok(part.id)
        })
    }

    /// `CREATE [UNIQUE] INDEX name ON table (columns…)`: locks the table
    /// (and each partition) `AccessExclusive`. On a partitioned table one
    /// index per partition is created. Returns the index's id.
    pub fn create_index(&mut self, table: &str, name: &str, columns: &[&str], unique: bool) -> Result<RelId> {
        self.statement(&format!("CREATE INDEX {name} ON {table}"), |s| {
            let t = s.lock_by_name(table, LockMode::AccessExclusive)?;
            for (part, _) in t.partitions.clone() {
                s.lock_relation(part, LockMode::AccessExclusive)?;
            }
            let made = s.engine.catalog().create_index(s.db, table, name, columns, unique, false)?;
            s.create_storage(&made)?;
            Ok(made[0].id)
        })
    }

    /// `ALTER TABLE table ADD COLUMN column ty`: existing rows read NULL.
    pub fn add_column(&mut self, table: &str, column: &str, ty: ColumnType) -> Result<()> {
        self.statement(&format!("ALTER TABLE {table} ADD COLUMN {column} {ty}"), |s| {
            let t = s.lock_by_name(table, LockMode::AccessExclusive)?;
            for (part, _) in t.partitions.clone() {
                s.lock_relation(part, LockMode::AccessExclusive)?;
            }
            s.engine.catalog().add_column(s.db, table, column, ty)?;
            Ok(())
        })
    }

    /// `DROP TABLE|INDEX name`, with its partitions and indexes; their
    /// buffers are dropped and their files removed.
    pub fn drop_relation(&mut self, name: &str) -> Result<()> {
        self.statement(&format!("DROP {name}"), |s| {
            let r = s.lock_by_name(name, LockMode::AccessExclusive)?;
            let victims = s.engine.catalog().dependents(r.rel.id);
            for id in &victims {
                s.lock_relation(*id, LockMode::AccessExclusive)?;
            }
            let dropped = s.engine.catalog().drop_relation(s.db, name)?;
            for rel in dropped.iter().filter(|r| r.kind.has_storage()) {
                let file = s.file(rel.id);
                s.engine.pool().drop_relation_buffers(file, Fork::Main, 0)?;
                s.engine.smgr().remove(file)?;
            }
            Ok(())
        })
    }
}

impl Session {
    /// This session's relation-extension times (`extension_stats`): lock
    /// wait, lock held, file system, buffer search — seed 001's breakdown.
    pub fn extension_stats(&self) -> ExtensionStats {
        self.extension
    }

    /// `INSERT INTO table VALUES (row)`: routes the row to its partition,
    /// inserts it into the heap (free-space map first, then relation
    /// extension) and into every index. Returns where it went.
    pub fn insert(&mut self, table: &str, row: &[Value]) -> Result<(RelId, Tid)> {
        let mut placed = None;
        self.load(table, std::iter::once(row.to_vec()), false, |rel, tid| placed = Some((rel, tid)))?;
        placed.ok_or_else(|| EngineError::State("insert placed no row".into()))
    }

    /// `COPY table FROM …`: inserts many rows through a bulk-write ring,
    /// keeping each target page pinned until it is full (PostgreSQL's
    /// `BulkInsertState`). Returns the number of rows.
    pub fn insert_many(&mut self, table: &str, rows: impl IntoIterator<Item = Vec<Value>>) -> Result<u64> {
        let mut n = 0;
        self.load(table, rows, true, |_, _| n += 1)?;
        Ok(n)
    }

    fn load(
        &mut self,
        table: &str,
        rows: impl IntoIterator<Item = Vec<Value>>,
        bulk: bool,
        mut placed: impl FnMut(RelId, Tid),
    ) -> Result<()> {
        let query = if bulk { format!("COPY {table} FROM STDIN") } else { format!("INSERT INTO {table}") };
        self.statement(&query, |s| {
            let target = s.lock_by_name(table, LockMode::RowExclusive)?;
            if !matches!(target.rel.kind, RelKind::Table | RelKind::PartitionedTable) {
                return Err(CatalogError::WrongKind { name: table.into(), expected: "a table" }.into());
            }
            let engine = Arc::clone(&s.engine);
            let pool = engine.pool();
            let config = engine.config();
            let db = s.db;
            let mut leaves: HashMap<RelId, Arc<RelEntry>> = HashMap::new();
            let mut to_lock: Vec<RelId> = Vec::new();
            let mut ext = Extender::new(
                pool,
                BackendExtensionLock { backend: &mut s.backend },
                config.storage.extend,
                config.storage.extend_max_blocks,
            );
            if bulk {
                ext = ext.with_ring(Ring::bulk_write(pool.shared_buffers()));
            }
            let mut bulk_heap: Option<BulkInserter<'_>> = None;
            let mut buf = Vec::new();
            let result = (|| -> Result<()> {
                for row in rows {
                    let leaf = match target.rel.partition_key {
                        None => Arc::clone(&target),
                        Some(key) => {
                            let value = row.get(key.column).ok_or(crate::types::CodecError::Arity {
                                expected: target.column_types.len(),
                                got: row.len(),
                            })?;
                            let &(id, _) = target.partitions.iter().find(|(_, b)| b.contains(value)).ok_or_else(
                                || EngineError::State(format!("no partition of \"{table}\" found for row ({value})")),
                            )?;
                            match leaves.get(&id) {
                                Some(e) => Arc::clone(e),
                                None => {
                                    to_lock.push(id);
                                    let e = s.relcache.get(engine.catalog(), id)?;
                                    leaves.insert(id, Arc::clone(&e));
                                    e
                                }
                            }
                        }
                    };
                    for id in to_lock.drain(..) {
                        ext.locker().backend.lock(LockTag::relation(db, id), LockMode::RowExclusive, Wait::Block)?;
                    }
                    encode_row_into(&leaf.column_types, &row, &mut buf)?;
                    let file = RelFileId::new(db, leaf.rel.id);
                    let tid = if bulk && target.rel.partition_key.is_none() {
                        bulk_heap.get_or_insert_with(|| BulkInserter::new(pool, file)).insert(&mut ext, &buf)?
                    } else {
                        heap::insert(pool, &mut ext, file, &buf)?
                    };
                    placed(leaf.rel.id, tid);
                }
                Ok(())
            })();
            drop(bulk_heap);
            s.extension.add(&ext.stats());
            result
        })
    }

    /// Every live row of `table` (all partitions), by sequential scan, in
    /// partition then TID order.
    pub fn scan_all(&mut self, table: &str) -> Result<Vec<Vec<Value>>> {
        self.statement(&format!("SELECT * FROM {table}"), |s| {
            let t = s.lock_by_name(table, LockMode::AccessShare)?;
            let leaves: Vec<RelId> = match t.rel.partition_key {
                None => vec![t.rel.id],
                Some(_) => t.partitions.iter().map(|(id, _)| *id).collect(),
            };
            let mut rows = Vec::new();
            for id in leaves {
                s.lock_relation(id, LockMode::AccessShare)?;
                let pool = s.engine.pool();
                for item in HeapScan::new(pool, RelFileId::new(s.db, id))? {
                    rows.push(decode_row(&t.column_types, &item?.1)?);
                }
            }
            Ok(rows)
        })
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.backend.release_all();
        self.activity.set_state(BackendState::Idle);
    }
}
