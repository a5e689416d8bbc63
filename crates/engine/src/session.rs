//! `Session`: one client's connection — a lock-manager backend, an activity
//! slot, a relation cache — and the transaction that bounds its locks.
//!
//! # Transactions and locks
//!
//! Outside `begin`/`commit` every statement is its own transaction: its
//! heavyweight locks are released when it returns (success or error).
//! Inside one, locks accumulate until `commit`, as in PostgreSQL. Each
//! statement reads with a snapshot ([`crate::mvcc`]): taken when the
//! statement first reads (`READ COMMITTED`), or once for the transaction
//! (`REPEATABLE READ`, [`Session::begin_with`]); a transaction's writes
//! become visible to later snapshots at `commit`. Row write locks order
//! writers of one row ([`crate::txn`]). `rollback` (and a failed statement
//! outside a transaction block) undoes the writes from an undo log; DDL is
//! not undone. Dropping a session mid-transaction undoes its writes and
//! releases everything it held.
//!
//! # DDL
//!
//! Every DDL takes `AccessExclusiveLock` on each existing relation it
//! changes (the table, its partitions, its indexes; for a new partition,
//! the parent) before touching the catalog, so it waits for queries that
//! hold `AccessShareLock` — and, because `AccessExclusive` is a strong
//! mode, it first moves every backend's matching fast-path locks into the
//! shared lock table (the transfer of Haas 2011). A new relation is locked
//! `AccessExclusive` too, until the creating transaction ends.
//!
//! Names are resolved, locked, then resolved again: if DDL replaced the
//! relation in between, the lock is dropped and the look-up retried
//! (PostgreSQL's `RangeVarGetRelidExtended`, in `lmgr.rs`).
//!
//! # Queries
//!
//! The session owns the statement cycle (activity, transaction, lock
//! release) and the plan cache of prepared statements; planning and
//! execution are a [`Planner`] and an [`Executor`] that borrow the
//! session's relation cache, backend and block cache for one call.

use crate::btree::{CachedRoot, RootCacheStats};
use crate::catalog::{CatalogError, DbId, PartitionBound, PartitionStrategy, RelCache, RelEntry, RelId, RelKind};
use crate::engine::Engine;
use crate::error::{Internal, InvalidTransactionState, Result};
use crate::heap::{self, BulkInserter, HeapScan};
use crate::lmgr::RelLocker;
use crate::memory::{BlockCache, MemoryStats};
use crate::mvcc::{IsolationLevel, Snapshot, Visibility};
use crate::query::exec::Executor;
use crate::query::plan::{Plan, Planner};
use crate::query::{Query, QueryMode};
use crate::routing::route;
use crate::speculative::Speculation;
use crate::tid::Tid;
use crate::types::{decode_row, encode_row_into, ColumnType, Value, ValueRef};
use crate::unique_wait::insert_entries;
use std::collections::HashMap;
use std::sync::Arc;
use turnstile_lock::{Backend, LockMode, LockTag, Wait};
use turnstile_storage::rel::RelFileId;
use turnstile_storage::{Extender, ExtensionStats, Ring};
use turnstile_sync::activity::{ActivityHandle, BackendState};

/// How [`Session::load`] places its rows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Load {
    /// One `INSERT`'s rows.
    Row,
    /// `COPY`: through a bulk-write ring.
    Bulk,
    /// An upsert's row, speculatively (`crate::speculative`).
    Speculative,
}

/// One client's session.
#[derive(Debug)]
pub struct Session {
    // Field order is drop order: locks go before the activity slot.
    pub(crate) backend: Backend,
    pub(crate) activity: ActivityHandle,
    pub(crate) relcache: RelCache,
    pub(crate) engine: Arc<Engine>,
    pub(crate) db: DbId,
    pub(crate) in_transaction: bool,
    pub(crate) extension: ExtensionStats,
    /// The open transaction's xid, row locks and undo log (`crate::txn`).
    pub(crate) txn: crate::txn::Txn,
    memory: BlockCache,
    last_planning: std::time::Duration,
    /// Whether a statement drops a cancel that arrived before it (see
    /// [`Session::set_outer_statements`]).
    clears_stale_cancel: bool,
    /// The isolation level of the open transaction (or of the next
    /// statement outside one).
    isolation: IsolationLevel,
    /// The snapshot of the running statement (`READ COMMITTED`) or of the
    /// open transaction (`REPEATABLE READ`), taken on first use.
    pub(crate) snapshot: Option<Snapshot>,
    /// Session-level advisory locks: acquisitions per `(tag, mode)`
    /// (`crate::advisory`).
    pub(crate) advisory: HashMap<(LockTag, LockMode), u32>,
    /// Whether `COMMIT` waits for its record to be durable
    /// (`synchronous_commit`; the server's default is
    /// `wal.synchronous_commit`).
    pub(crate) synchronous_commit: bool,
}

/// A prepared query: its generic plan, kept across executions and re-made
/// when DDL changed the catalog since (PostgreSQL's plan cache).
#[derive(Clone, Debug)]
pub struct Prepared {
    query: Query,
    plan: Plan,
}

impl Prepared {
    /// The query.
    pub fn query(&self) -> &Query {
        &self.query
    }

    /// The cached plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }
}

impl Engine {
    /// A new session on database `postgres`.
    pub fn session(self: &Arc<Self>) -> Result<Session> {
        Session::new(Arc::clone(self), "postgres")
    }

    /// A new session on database `database`.
    pub fn session_on(self: &Arc<Self>, database: &str) -> Result<Session> {
        Session::new(Arc::clone(self), database)
    }
}

impl Session {
    pub(crate) fn new(engine: Arc<Engine>, database: &str) -> Result<Session> {
        let db = engine.catalog().database(database)?;
        let activity = engine.activity_table().register()?;
        let backend = engine.locks().register()?;
        let block_cache = engine.config().memory.block_cache;
        let synchronous_commit = engine.config().wal.synchronous_commit;
        engine.count_db_user(db, 1);
        engine.txns().snapshots().register(activity.backend());
        crate::autovacuum::ensure_started(&engine);
        Ok(Session {
            backend,
            activity,
            relcache: RelCache::new(),
            engine,
            db,
            in_transaction: false,
            extension: ExtensionStats::default(),
            txn: crate::txn::Txn::default(),
            memory: BlockCache::new(block_cache),
            last_planning: std::time::Duration::ZERO,
            clears_stale_cancel: true,
            isolation: IsolationLevel::ReadCommitted,
            snapshot: None,
            advisory: HashMap::new(),
            synchronous_commit,
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

    /// Declares that the caller runs statements of its own around this
    /// session's (the SQL layer: one SQL statement may make several engine
    /// calls). The caller then drops stale cancels when *its* statement
    /// starts, and the session no longer does at each call, so a cancel or
    /// a statement timeout that arrives between two calls of one outer
    /// statement still ends it.
    pub fn set_outer_statements(&mut self, outer: bool) {
        self.clears_stale_cancel = !outer;
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

    /// `BEGIN`: a `READ COMMITTED` transaction; locks taken from now on
    /// are kept until [`Session::commit`].
    pub fn begin(&mut self) -> Result<()> {
        self.begin_with(IsolationLevel::ReadCommitted)
    }

    /// `BEGIN ISOLATION LEVEL …`.
    pub fn begin_with(&mut self, isolation: IsolationLevel) -> Result<()> {
        if self.in_transaction {
            return Err(InvalidTransactionState::AlreadyInProgress.into());
        }
        self.in_transaction = true;
        self.isolation = isolation;
        self.activity.set_state(BackendState::IdleInTransaction);
        Ok(())
    }

    /// `SET TRANSACTION ISOLATION LEVEL …` in an open transaction: allowed
    /// until its first snapshot is taken (PostgreSQL's `25001` after).
    pub fn set_isolation(&mut self, isolation: IsolationLevel) -> Result<()> {
        if self.in_transaction && self.snapshot.is_some() && isolation != self.isolation {
            return Err(InvalidTransactionState::IsolationAfterQuery.into());
        }
        self.isolation = isolation;
        Ok(())
    }

    /// `SET synchronous_commit`: with `false`, `COMMIT` returns once its
    /// record is in the WAL's buffers; the WAL writer makes it durable
    /// within `wal.writer_delay_ms` (a crash may lose it, never corrupt).
    pub fn set_synchronous_commit(&mut self, on: bool) {
        self.synchronous_commit = on;
    }

    /// The isolation level of the open transaction.
    pub fn isolation(&self) -> IsolationLevel {
        self.isolation
    }

    /// `COMMIT`: makes the transaction's writes visible to later snapshots,
    /// then releases its row locks and every heavyweight lock.
    pub fn commit(&mut self) -> Result<()> {
        if !self.in_transaction {
            return Err(InvalidTransactionState::NoneInProgress.into());
        }
        self.in_transaction = false;
        let ended = self.finish_txn(true);
        self.release_xact_locks();
        self.activity.set_state(BackendState::Idle);
        ended
    }

    /// The snapshot of the running statement or transaction, taken now if
    /// there is none.
    pub(crate) fn ensure_snapshot(&mut self) {
        if self.snapshot.is_none() {
            self.snapshot = Some(self.engine.txns().snapshots().take(self.activity.backend()));
        }
    }

    /// Lets the statement's snapshot go, unless a `REPEATABLE READ`
    /// transaction keeps it to its end.
    fn end_statement_snapshot(&mut self) {
        if !(self.in_transaction && self.isolation == IsolationLevel::RepeatableRead) {
            self.drop_snapshot();
        }
    }

    /// Forgets the snapshot and unpublishes it (the horizon may advance).
    pub(crate) fn drop_snapshot(&mut self) {
        if self.snapshot.take().is_some() {
            self.engine.txns().snapshots().release(self.activity.backend());
        }
    }

    /// The visibility of the current snapshot (taken now if needed).
    pub fn visibility(&mut self) -> Visibility<'_> {
        self.ensure_snapshot();
        self.engine.txns().visibility(self.snapshot.as_ref().expect("taken above"), self.txn.xid.unwrap_or(0))
    }

    /// Runs `body` as one statement: publishes `query` and the `active`
    /// state, attaches the activity slot to this thread (so lock waits are
    /// reported), and releases the statement's locks afterwards unless a
    /// transaction is open.
    pub(crate) fn statement<R>(&mut self, query: &str, body: impl FnOnce(&mut Self) -> Result<R>) -> Result<R> {
        if query.is_empty() {
            self.activity.start_query();
        } else {
            self.activity.set_query(query);
        }
        self.activity.set_state(BackendState::Active);
        // A cancel that arrived while idle is not for this statement —
        // unless a caller runs its own statements around this one.
        if self.clears_stale_cancel {
            self.backend.clear_cancel();
        }
        let attached = self.activity.attach();
        let mut out = body(self);
        drop(attached);
        if self.in_transaction {
            self.end_statement_snapshot();
            self.activity.set_state(BackendState::IdleInTransaction);
        } else {
            out = self.end_statement_txn(out);
            self.drop_snapshot();
            self.isolation = IsolationLevel::ReadCommitted;
            self.release_xact_locks();
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
            return Err(InvalidTransactionState::OutsideBlock("LOCK TABLE").into());
        }
        self.activity.set_query(&format!("LOCK TABLE {name} IN {mode} MODE"));
        let _attached = self.activity.attach();
        self.lock_by_name(name, mode)
    }

    /// Resolves `name`, locks it in `mode`, and returns its cache entry as
    /// of after the lock was granted. The lock lasts until the statement
    /// (or transaction) ends.
    pub(crate) fn lock_by_name(&mut self, name: &str, mode: LockMode) -> Result<Arc<RelEntry>> {
        self.rels().lock_by_name(name, mode)
    }

    /// The cache entry of relation `id` (no lock is taken; callers lock first).
    pub fn rel_entry(&mut self, id: RelId) -> Result<Arc<RelEntry>> {
        self.rels().entry(id)
    }

    /// The session's relation locks and relation cache, for one step of a
    /// statement.
    fn rels(&mut self) -> RelLocker<'_> {
        RelLocker::new(self.engine.catalog(), &mut self.relcache, &mut self.backend, self.db)
    }

    /// The planner, over this session's relation cache and backend.
    fn planner(&mut self) -> Planner<'_> {
        let rels = RelLocker::new(self.engine.catalog(), &mut self.relcache, &mut self.backend, self.db);
        Planner::new(rels, self.engine.pool(), self.engine.config())
    }

    /// The executor, over this session's relation cache, backend, block
    /// cache and snapshot.
    fn executor(&mut self) -> Executor<'_> {
        self.ensure_snapshot();
        let vis =
            self.engine.txns().visibility(self.snapshot.as_ref().expect("taken above"), self.txn.xid.unwrap_or(0));
        let rels = RelLocker::new(self.engine.catalog(), &mut self.relcache, &mut self.backend, self.db);
        Executor::new(rels, self.engine.pool(), self.engine.config(), &mut self.memory, vis)
    }

    pub(crate) fn file(&self, id: RelId) -> RelFileId {
        RelFileId::new(self.db, id)
    }

    /// `CREATE TABLE name (columns…) [PARTITION BY RANGE|HASH (column)]`.
    pub fn create_table(
        &mut self,
        name: &str,
        columns: &[(&str, ColumnType)],
        partition_by: Option<(PartitionStrategy, &str)>,
    ) -> Result<RelId> {
        self.statement(&format!("CREATE TABLE {name}"), |s| {
            s.note_ddl(&format!("CREATE TABLE {name}"));
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
            s.note_ddl(&format!("CREATE TABLE {name} PARTITION OF {parent}"));
            let (part, indexes) = s.engine.catalog().create_partition(s.db, parent, name, bound)?;
            s.lock_relation(part.id, LockMode::AccessExclusive)?;
            s.create_storage(std::slice::from_ref(&part))?;
            s.create_storage(&indexes)?;
            // The partition's copies of the parent's indexes start empty,
            // but they need their metapage and root before the first insert.
            for ix in &indexes {
                s.build_index(ix)?;
            }
            Ok(part.id)
        })
    }

    /// `CREATE [UNIQUE] INDEX name ON table (key…)`, each part a column
    /// name or an expression ([`crate::catalog::KeyPartSpec`]): locks the
    /// table (and each partition) `AccessExclusive`. On a partitioned table
    /// one index per partition is created. Returns the index's id.
    pub fn create_index<K>(&mut self, table: &str, name: &str, key: &[K], unique: bool) -> Result<RelId>
    where
        K: Clone + Into<crate::catalog::KeyPartSpec>,
    {
        let key: Vec<crate::catalog::KeyPartSpec> = key.iter().cloned().map(Into::into).collect();
        self.statement(&format!("CREATE INDEX {name} ON {table}"), |s| {
            let t = s.lock_by_name(table, LockMode::AccessExclusive)?;
            for (part, _) in t.partitions.clone() {
                s.lock_relation(part, LockMode::AccessExclusive)?;
            }
            s.note_ddl(&format!("CREATE INDEX {name}"));
            let made = s.engine.catalog().create_index_on(s.db, table, name, &key, unique, false)?;
            let built = s
                .create_storage(&made)
                .and_then(|()| made.iter().filter(|r| r.kind.has_storage()).try_for_each(|ix| s.build_index(ix)));
            if let Err(e) = built {
                // No rollback exists, so undo by hand: the failed index
                // (e.g. a unique violation in the data) leaves no trace.
                s.remove_relations(&s.engine.catalog().drop_relation(s.db, name)?)?;
                return Err(e);
            }
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
            s.note_ddl(&format!("ALTER TABLE {table} ADD COLUMN {column}"));
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
            s.note_ddl(&format!("DROP {name}"));
            let dropped = s.engine.catalog().drop_relation(s.db, name)?;
            s.remove_relations(&dropped)
        })
    }
}

impl Session {
    /// `SELECT …` in simple mode: plans (taking the planner's locks) and
    /// executes (taking the executor's) every time.
    pub fn query(&mut self, query: &Query, params: &[Value]) -> Result<Vec<Vec<Value>>> {
        let text = self.query_text(query);
        self.statement(&text, |s| {
            let started = std::time::Instant::now();
            let plan = s.planner().plan(query, Some(params))?;
            s.last_planning = started.elapsed();
            s.executor().run(&plan, params)
        })
    }

    /// `PREPARE`: makes a generic plan of `query` (no parameter values
    /// known, so no plan-time pruning on parameters).
    pub fn prepare(&mut self, query: &Query) -> Result<Prepared> {
        self.statement(&format!("PREPARE {query}"), |s| {
            let started = std::time::Instant::now();
            let plan = s.planner().plan(query, None)?;
            s.last_planning = started.elapsed();
            Ok(Prepared { query: query.clone(), plan })
        })
    }

    /// `EXECUTE`: runs a prepared plan, re-planning first if DDL changed
    /// the catalog since it was made; locks every relation and index the
    /// plan touches.
    pub fn execute(&mut self, prepared: &mut Prepared, params: &[Value]) -> Result<Vec<Vec<Value>>> {
        let mut rows = Vec::new();
        self.execute_each(prepared, params, |row| rows.push(row.iter().map(|v| v.to_owned_value()).collect()))?;
        Ok(rows)
    }

    /// As [`Session::execute`], calling `emit` with each result row's
    /// values, borrowed from the execution's memory
    /// ([`crate::query::Executor::for_each_row`]) instead of returning
    /// owned rows.
    pub fn execute_each(
        &mut self,
        prepared: &mut Prepared,
        params: &[Value],
        emit: impl FnMut(&[ValueRef<'_>]),
    ) -> Result<()> {
        let text = self.query_text(&prepared.query);
        self.statement(&text, |s| {
            if prepared.plan.generation != s.engine.catalog().published_generation() {
                let started = std::time::Instant::now();
                prepared.plan = s.planner().plan(&prepared.query, None)?;
                s.last_planning = started.elapsed();
            } else {
                s.last_planning = std::time::Duration::ZERO;
            }
            s.executor().for_each_row(&prepared.plan, params, emit)
        })
    }

    /// The text `pg_stat_activity` shows for `query`: rendered only when
    /// this session publishes its own statements; under an outer caller
    /// (the SQL layer publishes the client's text) it is empty, and no
    /// execution formats its query.
    fn query_text(&self, query: &Query) -> String {
        if self.clears_stale_cancel {
            query.to_string()
        } else {
            String::new()
        }
    }

    /// Runs `query` in `mode`, preparing it into `slot` on first use.
    pub fn run(
        &mut self,
        mode: QueryMode,
        query: &Query,
        slot: &mut Option<Prepared>,
        params: &[Value],
    ) -> Result<Vec<Vec<Value>>> {
        match mode {
            QueryMode::Simple => self.query(query, params),
            QueryMode::Prepared => {
                if slot.is_none() {
                    *slot = Some(self.prepare(query)?);
                }
                match slot.as_mut() {
                    Some(p) => self.execute(p, params),
                    None => Err(Internal::PreparedStatementVanished.into()),
                }
            }
        }
    }

    /// The plan `query` would get now (takes the planner's locks for the
    /// duration of the call).
    pub fn explain(&mut self, query: &Query) -> Result<String> {
        self.statement(&format!("EXPLAIN {query}"), |s| Ok(s.planner().plan(query, None)?.explain()))
    }

    /// How long the last `query`/`prepare`/`execute` spent planning (zero
    /// for an execution of a still-valid prepared plan).
    pub fn last_planning_time(&self) -> std::time::Duration {
        self.last_planning
    }

    /// This session's per-query memory counters (`memory_stats`).
    pub fn memory_stats(&self) -> MemoryStats {
        self.memory.stats()
    }

    /// The root this session has cached for index `index` (its
    /// `rd_amcache`), as the next descent would use it: `None` if nothing
    /// is cached or DDL has run since.
    pub fn cached_index_root(&mut self, index: RelId) -> Option<CachedRoot> {
        self.relcache.amcache(self.engine.catalog()).root(index)
    }

    /// This session's B-tree metapage reads and stale cached roots, summed
    /// over the index scans and index inserts it has finished.
    pub fn root_cache_stats(&self) -> RootCacheStats {
        self.relcache.amcache_unchecked().stats()
    }

    /// This session's relation-extension times (`extension_stats`): lock
    /// wait, lock held, file system, buffer search — Freund 2020's breakdown.
    pub fn extension_stats(&self) -> ExtensionStats {
        self.extension
    }

    /// `INSERT INTO table VALUES (row)`: routes the row to its partition,
    /// inserts it into the heap (free-space map first, then relation
    /// extension) and into every index. Returns where it went.
    pub fn insert(&mut self, table: &str, row: &[Value]) -> Result<(RelId, Tid)> {
        let mut placed = None;
        self.load(table, std::iter::once(row.to_vec()), Load::Row, |rel, tid| placed = Some((rel, tid)))?;
        placed.ok_or_else(|| Internal::InsertPlacedNoRow.into())
    }

    /// [`Session::insert`] for `INSERT … ON CONFLICT`: the row is placed
    /// speculatively (`crate::speculative`), so that a unique violation
    /// met after its first index entry takes it back without ever making
    /// others wait for this transaction on its account. The error is the
    /// violation (`23505`, the arbiter's constraint named), to probe again.
    pub fn insert_speculative(&mut self, table: &str, row: &[Value]) -> Result<(RelId, Tid)> {
        let mut placed = None;
        self.load(table, std::iter::once(row.to_vec()), Load::Speculative, |rel, tid| placed = Some((rel, tid)))?;
        placed.ok_or_else(|| Internal::InsertPlacedNoRow.into())
    }

    /// `COPY table FROM …`: inserts many rows through a bulk-write ring,
    /// keeping each target page pinned until it is full (PostgreSQL's
    /// `BulkInsertState`). Returns the number of rows.
    pub fn insert_many(&mut self, table: &str, rows: impl IntoIterator<Item = Vec<Value>>) -> Result<u64> {
        let mut n = 0;
        self.load(table, rows, Load::Bulk, |_, _| n += 1)?;
        Ok(n)
    }

    fn load(
        &mut self,
        table: &str,
        rows: impl IntoIterator<Item = Vec<Value>>,
        how: Load,
        mut placed: impl FnMut(RelId, Tid),
    ) -> Result<()> {
        let (bulk, speculative) = (how == Load::Bulk, how == Load::Speculative);
        let query = if bulk { format!("COPY {table} FROM STDIN") } else { format!("INSERT INTO {table}") };
        self.statement(&query, |s| {
            let target = s.lock_by_name(table, LockMode::RowExclusive)?;
            if !matches!(target.rel.kind, RelKind::Table | RelKind::PartitionedTable) {
                return Err(CatalogError::WrongKind { name: table.into(), expected: "a table" }.into());
            }
            // Like `ExecOpenIndices`: every index the rows go into is
            // opened with `RowExclusiveLock` (a partition's when the first
            // row is routed to it).
            if target.rel.partition_key.is_none() {
                for ix in &target.indexes {
                    s.lock_relation(ix.id, LockMode::RowExclusive)?;
                }
            }
            let xid = s.ensure_xid()?;
            let engine = Arc::clone(&s.engine);
            let pool = engine.pool();
            let config = engine.config();
            let cadence = config.txn.interrupt_check_rows;
            let db = s.db;
            let mut leaves: HashMap<RelId, Arc<RelEntry>> = HashMap::new();
            let mut ext = Extender::new(pool, &mut s.backend, config.storage.extend, config.storage.extend_max_blocks);
            if bulk {
                ext = ext.with_ring(Ring::bulk_write(pool.shared_buffers()));
            }
            let mut bulk_heap: Option<BulkInserter<'_>> = None;
            let mut buf = Vec::new();
            let result = (|| -> Result<()> {
                for (n, row) in rows.into_iter().enumerate() {
                    if (n as u64 + 1) % cadence == 0 {
                        ext.locker().check_cancel()?;
                    }
                    let mut lock = |id| {
                        ext.locker().lock(LockTag::relation(db, id), LockMode::RowExclusive, Wait::Block).map(drop)
                    };
                    let leaf = route(&target, &row, &mut leaves, &mut s.relcache, engine.catalog(), &mut lock)?;
                    crate::constraints::check_not_null(&leaf.rel, &row)?;
                    encode_row_into(&leaf.column_types, &row, &mut buf)?;
                    let file = RelFileId::new(db, leaf.rel.id);
                    let reserve = heap::fillfactor_reserve(leaf.rel.fillfactor);
                    // An upsert's row: its token is taken before the row
                    // is placed (`crate::speculative`). Should the heap
                    // insert fail, the dropped speculation had no row to
                    // register and nobody can wait on its token.
                    let mut spec = if speculative {
                        s.txn.speculative_token = s.txn.speculative_token.wrapping_add(1);
                        let token = s.txn.speculative_token;
                        Some(Speculation::begin(engine.txns().speculations(), &mut **ext.locker(), xid, token)?)
                    } else {
                        None
                    };
                    let tid = if bulk && target.rel.partition_key.is_none() {
                        bulk_heap
                            .get_or_insert_with(|| BulkInserter::new(pool, file, xid).with_reserve(reserve))
                            .insert(&mut ext, &buf)?
                    } else {
                        heap::insert_reserving(pool, &mut ext, file, &buf, xid, reserve)?
                    };
                    if let Some(sp) = &mut spec {
                        sp.placed((file, tid));
                    }
                    let entries = insert_entries(&engine, &mut s.relcache, &mut ext, (&leaf, &row), tid, xid);
                    match (entries, spec) {
                        (Ok(()), Some(sp)) => sp.confirm(&mut **ext.locker())?,
                        (Ok(()), None) => {}
                        (Err(e), Some(sp)) => {
                            sp.kill(&mut **ext.locker(), |&(f, t)| heap::mark_dead(pool, f, t))?.transpose()?;
                            return Err(e);
                        }
                        (Err(e), None) => {
                            heap::mark_dead(pool, file, tid)?;
                            return Err(e);
                        }
                    }
                    s.txn.log(crate::txn::Undo::Insert { rel: leaf.rel.id, tid }, config.txn.undo_limit_bytes)?;
                    placed(leaf.rel.id, tid);
                }
                Ok(())
            })();
            drop(bulk_heap);
            let stats = ext.stats();
            drop(ext);
            s.extension.add(&stats);
            if stats.extensions > 0 {
                engine.add_extension_stats(&stats);
            }
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
                let engine = Arc::clone(&s.engine);
                let file = RelFileId::new(s.db, id);
                let mut decoded = Vec::new();
                for item in HeapScan::visible(engine.pool(), file, s.visibility())? {
                    decoded.push(decode_row(&t.column_types, &item?.1)?);
                }
                s.backend.check_cancel()?;
                rows.extend(decoded);
            }
            Ok(rows)
        })
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // A session that ends inside a transaction aborts it.
        self.abort_on_exit();
        self.drop_snapshot();
        self.engine.txns().snapshots().unregister(self.activity.backend());
        self.engine.count_db_user(self.db, -1);
        self.engine.add_memory_stats(&self.memory.stats());
        self.backend.release_all();
        self.activity.set_state(BackendState::Idle);
    }
}
