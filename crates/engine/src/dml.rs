//! `UPDATE`, `DELETE` and `SELECT … FOR UPDATE`: row changes under row
//! write locks, each logged for undo (see [`crate::txn`] for the locking
//! and undo rules, [`crate::mvcc`] for versions and snapshots; `ROLLBACK`
//! applies the undo log in `rollback.rs`).
//!
//! # Locks
//!
//! As PostgreSQL: `RowExclusiveLock` on the target table, on every
//! partition it touches (after pruning on an equality predicate of the
//! partition key) and on every index of those (`ExecOpenIndices`); then a
//! row write lock on each row changed.
//!
//! # How a row is changed
//!
//! Candidates are found through the query's equality filters: by an index
//! whose leading columns they cover (the longest such prefix, unique
//! first), otherwise by a sequential scan; a candidate is kept if the
//! version the statement's snapshot sees matches the filters. For each, the
//! row write lock is taken (waiting for its holder), then the row's newest
//! version is judged (the updater rule of [`crate::mvcc::visibility`]): if a transaction the
//! snapshot does not see changed it, `READ COMMITTED` re-checks the filters
//! on the newest version (following a moved row through `ctid`) and
//! `REPEATABLE READ` fails with `40001`. The caller's function sees the
//! newest row — so a read-modify-write cannot lose a concurrent update.
//!
//! An update whose index keys are unchanged rewrites the tuple on its page,
//! keeping its TID; the version it replaced goes to the version store.
//! Otherwise — keys changed, or no room — the new version is inserted
//! elsewhere, the old tuple gets `xmax` and `ctid`, and every index gets an
//! entry for the new TID (PostgreSQL's non-HOT update). Entries pointing at
//! tuples no snapshot sees are skipped by scans and removed by VACUUM.

use crate::btree::{BTree, BtreeOptions};
use crate::catalog::{CatalogError, RelEntry, RelId, RelKind};
use crate::constraints::check_not_null;
use crate::error::{EngineError, Internal, Result};
use crate::heap::{self, HeapError, HeapScan, VersionSink};
use crate::key_filter::{key_filter, Filters};
use crate::mvcc::visibility::{self, UpdateVerdict};
use crate::mvcc::{IsolationLevel, Snapshot, Xid};
use crate::query::plan::operand_value;
use crate::query::{Col, Query, QueryError};
use crate::session::Session;
use crate::tid::Tid;
use crate::txn::{RowGrant, RowLockMode, RowLocking, RowWait, Undo, XID_DATABASE};
use crate::types::{decode_row, decode_row_into, encode_row, Value};
use std::collections::HashSet;
use std::sync::Arc;
use turnstile_lock::{LockMode, LockTag, Wait};
use turnstile_storage::{Extender, RelFileId};

/// How many moves of one row a statement follows before it gives up.
const MAX_HOPS: usize = 1000;

/// What [`Session::update_rows`] calls with each matching row: the new
/// row, or `None` to leave it.
pub type UpdateFn<'a> = dyn FnMut(&[Value]) -> Result<Option<Vec<Value>>> + 'a;

/// What to do with one row.
enum Action {
    Keep,
    Update(Vec<Value>),
    Delete,
}

impl Session {
    /// `UPDATE table SET … WHERE …`: finds the rows of `query`'s table that
    /// match its equality filters (`query` names one table, no joins; its
    /// projection is ignored), and calls `f` with each current row under
    /// the row's write lock. `f` returns the new row (every column), or
    /// `None` to leave the row alone (a residual `WHERE` that fails).
    /// Returns the number of rows changed. Index entries follow changed
    /// keys; unique indexes are checked (`23505`); primary-key columns
    /// refuse NULL (`23502`). A row may not move to another partition
    /// (`0A000`).
    pub fn update_rows(&mut self, query: &Query, params: &[Value], f: &mut UpdateFn<'_>) -> Result<u64> {
        let text = format!("UPDATE {}", query.tables()[0]);
        self.statement(&text, |s| {
            s.modify_rows(query, params, RowLockMode::NoKeyUpdate, &mut |row| {
                Ok(f(row)?.map_or(Action::Keep, Action::Update))
            })
        })
    }

    /// [`Session::update_rows`] for an UPDATE that assigns a key column
    /// (one of a unique index): each row is locked `FOR UPDATE`, as
    /// PostgreSQL's `heap_update` takes `LockTupleExclusive` when a key
    /// changes, so it waits for a `FOR KEY SHARE` holder (a transaction
    /// that inserted a row referencing this one) where a non-key UPDATE
    /// (`FOR NO KEY UPDATE`) does not.
    pub fn update_key_rows(&mut self, query: &Query, params: &[Value], f: &mut UpdateFn<'_>) -> Result<u64> {
        let text = format!("UPDATE {}", query.tables()[0]);
        self.statement(&text, |s| {
            s.modify_rows(query, params, RowLockMode::Update, &mut |row| {
                Ok(f(row)?.map_or(Action::Keep, Action::Update))
            })
        })
    }

    /// `DELETE FROM table WHERE …`: as [`Session::update_rows`]; `f` says
    /// whether to delete each matching row. Returns the rows deleted. A
    /// deleted row is marked dead; VACUUM reclaims its space and index
    /// entries.
    pub fn delete_rows(
        &mut self,
        query: &Query,
        params: &[Value],
        f: &mut dyn FnMut(&[Value]) -> Result<bool>,
    ) -> Result<u64> {
        let text = format!("DELETE FROM {}", query.tables()[0]);
        self.statement(&text, |s| {
            s.modify_rows(query, params, RowLockMode::Update, &mut |row| {
                Ok(if f(row)? { Action::Delete } else { Action::Keep })
            })
        })
    }

    /// This transaction's id, assigned (and its transaction-id lock taken
    /// exclusive, as PostgreSQL's `AssignTransactionId`) on first use.
    pub(crate) fn ensure_xid(&mut self) -> Result<Xid> {
        if let Some(x) = self.txn.xid {
            return Ok(x);
        }
        let x = self
            .engine
            .txns()
            .snapshots()
            .assign_xid(self.activity.backend())
            .map_err(|e| EngineError::XidLimit(e.to_string()))?;
        self.backend.lock(LockTag::transaction_id(XID_DATABASE, x), LockMode::Exclusive, Wait::Block)?;
        self.txn.xid = Some(x);
        self.engine.log().xact_started(self.activity.backend(), x);
        Ok(x)
    }

    /// Takes the lock of row `tid` of `rel` (called `name`) in `mode`,
    /// waiting for conflicting holders as `wait` says (see [`crate::txn`]).
    /// Returns what was granted and whether this had to wait, or `None`
    /// when `wait` is [`RowWait::SkipLocked`] and the row is locked.
    /// [`RowWait::NoWait`] fails with [`EngineError::RowLockNotAvailable`].
    pub(crate) fn lock_row(
        &mut self,
        rel: RelId,
        name: &str,
        tid: Tid,
        mode: RowLockMode,
        wait: RowWait,
    ) -> Result<Option<(RowGrant, bool)>> {
        let xid = self.ensure_xid()?;
        let table_mode = if mode >= RowLockMode::NoKeyUpdate { LockMode::Exclusive } else { LockMode::Share };
        match self.txn.escalated.get(&rel) {
            Some(&m) if m >= table_mode => return Ok(Some((RowGrant::AlreadyHeld, false))),
            Some(_) => {
                // Escalated for share locks; an update lock needs more.
                self.lock_relation(rel, table_mode)?;
                self.txn.escalated.insert(rel, table_mode);
                return Ok(Some((RowGrant::AlreadyHeld, false)));
            }
            None => {}
        }
        let key = (rel, tid);
        let backend = self.activity.backend();
        let shares = self.engine.key_shares();
        if mode == RowLockMode::KeyShare && shares.try_lock(backend, key, xid) {
            // Kept in this backend's slots until the transaction ends.
            return Ok(Some((RowGrant::AlreadyHeld, false)));
        }
        if shares.enabled() && mode.conflicts(RowLockMode::KeyShare) {
            shares.before_strong(backend, key, self.engine.txns());
        }
        let mut waited = false;
        loop {
            self.check_interrupts()?;
            self.engine.key_shares().count_shared(backend);
            match self.engine.txns().try_lock_row(key, xid, mode) {
                Ok(grant) => {
                    let before = match grant {
                        RowGrant::AlreadyHeld => return Ok(Some((grant, waited))),
                        RowGrant::New => None,
                        RowGrant::Upgraded(m) => Some(m),
                    };
                    if self.txn.took_row_lock(key, before) {
                        // Too many rows: lock the relation against every
                        // conflicting locker (and VACUUM) instead.
                        self.lock_relation(rel, table_mode)?;
                        self.txn.escalated.insert(rel, table_mode);
                    }
                    return Ok(Some((grant, waited)));
                }
                Err(_) if wait == RowWait::SkipLocked => return Ok(None),
                Err(_) if wait == RowWait::NoWait => {
                    return Err(EngineError::RowLockNotAvailable { relation: name.to_owned() })
                }
                Err(holder) => {
                    waited = true;
                    let tuple = LockTag::tuple(self.db, rel, tid.block, tid.slot);
                    let tuple_mode = mode.tuple_lock_mode();
                    let xid_tag = LockTag::transaction_id(XID_DATABASE, holder);
                    self.backend.lock(tuple, tuple_mode, Wait::Block)?;
                    let waited_for = self.backend.lock(xid_tag, LockMode::Share, Wait::Block);
                    // Both locks were just granted, so giving them back fails
                    // only on a broken invariant: that error is returned too
                    // (after the wait's own), never dropped.
                    let released_xid =
                        if waited_for.is_ok() { self.backend.unlock(xid_tag, LockMode::Share) } else { Ok(()) };
                    let released_tuple = self.backend.unlock(tuple, tuple_mode);
                    waited_for?;
                    released_xid?;
                    released_tuple?;
                }
            }
        }
    }

    /// Gives back a row lock just taken (`grant`) for a row that was then
    /// left alone.
    pub(crate) fn unlock_row(&mut self, rel: RelId, tid: Tid, grant: RowGrant) {
        let before = match grant {
            RowGrant::AlreadyHeld => return,
            RowGrant::New => None,
            RowGrant::Upgraded(m) => Some(m),
        };
        if let Some(xid) = self.txn.xid {
            if self.txn.row_locks.last() == Some(&((rel, tid), before)) {
                self.txn.row_locks.pop();
                if before.is_none() {
                    self.txn.untook_row_lock(rel);
                }
                self.engine.txns().restore_row_lock((rel, tid), xid, before);
            }
        }
    }

    /// Resolves the one table of `query` (no joins), locks it in `mode`
    /// (its partitions too; their indexes `RowExclusiveLock` for a writer,
    /// `AccessShareLock` otherwise), and turns the query's equality filters
    /// into column values.
    fn resolve_target(&mut self, query: &Query, params: &[Value], mode: LockMode, what: &str) -> Result<Target> {
        if !query.joins().is_empty() {
            return Err(EngineError::NotSupported(format!("{what} with a join")));
        }
        if params.len() < query.param_count() {
            return Err(QueryError::ParamCount { expected: query.param_count(), got: params.len() }.into());
        }
        let name = query.tables()[0].to_owned();
        let target = self.lock_by_name(&name, mode)?;
        if !matches!(target.rel.kind, RelKind::Table | RelKind::PartitionedTable) {
            return Err(CatalogError::WrongKind { name, expected: "a table" }.into());
        }
        // Equality filters, as the column stores them.
        let mut filters = Filters::default();
        let mut impossible = false;
        for p in query.filters() {
            let unknown = || QueryError::UnknownColumn(p.column.to_string());
            let c = match &p.column {
                Col::Of(t, c) if *t == name => target.rel.column_number(c),
                Col::Name(c) => target.rel.column_number(c),
                Col::At { table: 0, column } => (*column < target.column_types.len()).then_some(*column),
                _ => None,
            }
            .ok_or_else(unknown)?;
            let ty = target.column_types[c];
            let v = operand_value(&p.value, Some(params))?.cloned().unwrap_or(Value::Null);
            if v.column_type().is_some_and(|vt| !vt.comparable(ty)) {
                return Err(QueryError::TypeMismatch { column: p.column.to_string(), value: v.to_string() }.into());
            }
            match v.coerce(ty) {
                Some(Value::Null) | None => impossible = true, // NULL, or too long for char(n): no row
                Some(v) => filters.columns.push((c, v)),
            }
        }
        let ids: Vec<RelId> = match target.rel.partition_key {
            None => vec![target.rel.id],
            Some(key) => {
                let on_key = filters.value_of(key.column).cloned();
                target
                    .partitions
                    .iter()
                    .filter(|(_, b)| on_key.as_ref().is_none_or(|v| b.contains(v)))
                    .map(|(id, _)| *id)
                    .collect()
            }
        };
        let index_mode = if mode == LockMode::RowExclusive { LockMode::RowExclusive } else { LockMode::AccessShare };
        let mut leaves = Vec::with_capacity(ids.len());
        for id in ids {
            if id != target.rel.id {
                self.lock_relation(id, mode)?;
            }
            let leaf = if id == target.rel.id { Arc::clone(&target) } else { self.rel_entry(id)? };
            for ix in &leaf.indexes {
                self.lock_relation(ix.id, index_mode)?;
            }
            leaves.push(leaf);
        }
        if let Some((index, values)) = query.index_key() {
            impossible |= key_filter(&target, index, values, params, &mut filters)?;
        }
        Ok(Target { filters, impossible, leaves })
    }

    /// The DML driver: locks, candidates, row locks, `decide`, writes.
    fn modify_rows(
        &mut self,
        query: &Query,
        params: &[Value],
        mode: RowLockMode,
        decide: &mut dyn FnMut(&[Value]) -> Result<Action>,
    ) -> Result<u64> {
        let t = self.resolve_target(query, params, LockMode::RowExclusive, "UPDATE or DELETE")?;
        let mut count = 0;
        if !t.impossible {
            for leaf in &t.leaves {
                count += self.modify_leaf(leaf, &t.filters, mode, decide)?;
            }
        }
        Ok(count)
    }

    /// `SELECT … FOR UPDATE | FOR NO KEY UPDATE | FOR SHARE | FOR KEY SHARE
    /// [NOWAIT | SKIP LOCKED]` over the one table of `query` (PostgreSQL's
    /// `LockRows` node): takes `RowShareLock` on the table, finds the rows
    /// the snapshot sees that match the equality filters, lets `filter`
    /// drop and order them (the residual `WHERE` and `ORDER BY`), then
    /// locks them in that order — waiting, failing (`NOWAIT`, `55P03`) or
    /// skipping (`SKIP LOCKED`) at a conflicting holder — until `limit`
    /// rows are locked. A row changed since the snapshot by a transaction
    /// that committed while this one waited is re-checked on its newest
    /// version under `READ COMMITTED` (filters and
    /// [`LockingFilter::recheck`]: PostgreSQL's EvalPlanQual), followed if
    /// it moved, and dropped if deleted; under `REPEATABLE READ` it fails
    /// with `40001`. Returns the locked rows (their newest versions).
    pub fn select_locking(
        &mut self,
        query: &Query,
        params: &[Value],
        locking: RowLocking,
        limit: Option<usize>,
        filter: &mut dyn LockingFilter,
    ) -> Result<Vec<Vec<Value>>> {
        let text = format!("{query} {}", locking.mode.clause());
        self.statement(&text, |s| {
            let t = s.resolve_target(query, params, LockMode::RowShare, locking.mode.clause())?;
            if t.impossible {
                return Ok(Vec::new());
            }
            let xid = s.ensure_xid()?;
            s.ensure_snapshot();
            let snapshot = s.snapshot.clone().expect("taken above");
            let mut found: Vec<(usize, Tid)> = Vec::new();
            let mut rows = Vec::new();
            for (i, leaf) in t.leaves.iter().enumerate() {
                for tid in s.candidates(leaf, &t.filters, &snapshot, xid, Some(&mut rows))? {
                    found.push((i, tid));
                }
            }
            let order = filter.order(&rows)?;
            let mut out = Vec::new();
            for k in order {
                if limit.is_some_and(|l| out.len() >= l) {
                    break;
                }
                let (Some(&(i, tid)), Some(seen)) = (found.get(k), rows.get(k)) else {
                    return Err(Internal::NotACandidate { index: k, candidates: found.len() }.into());
                };
                if let Some(row) = s.lock_one(&t.leaves[i], &t.filters, tid, seen, &snapshot, xid, locking, filter)? {
                    out.push(row);
                }
            }
            Ok(out)
        })
    }

    /// The rows of `query`'s one table that the statement's snapshot sees
    /// matching its filters (an index-key filter among them:
    /// [`Query::filter_index_key`]), without row locks: `ON CONFLICT DO
    /// NOTHING`'s probe.
    pub fn select_by_key(&mut self, query: &Query, params: &[Value]) -> Result<Vec<Vec<Value>>> {
        self.statement(&query.to_string(), |s| {
            let t = s.resolve_target(query, params, LockMode::AccessShare, "a key probe")?;
            let mut rows = Vec::new();
            if t.impossible {
                return Ok(rows);
            }
            let xid = s.ensure_xid()?;
            s.ensure_snapshot();
            let snapshot = s.snapshot.clone().expect("taken above");
            for leaf in &t.leaves {
                s.candidates(leaf, &t.filters, &snapshot, xid, Some(&mut rows))?;
            }
            Ok(rows)
        })
    }

    /// [`Session::select_locking`] for one candidate row (`seen`, at `tid`):
    /// the row to return, or `None` to leave it out.
    #[allow(clippy::too_many_arguments)]
    fn lock_one(
        &mut self,
        leaf: &RelEntry,
        filters: &Filters,
        tid: Tid,
        seen: &[Value],
        snapshot: &Snapshot,
        xid: Xid,
        locking: RowLocking,
        filter: &mut dyn LockingFilter,
    ) -> Result<Option<Vec<Value>>> {
        let engine = Arc::clone(&self.engine);
        let pool = engine.pool();
        let snaps = engine.txns().snapshots();
        let file = RelFileId::new(self.db, leaf.rel.id);
        let repeatable = self.isolation() == IsolationLevel::RepeatableRead;
        let mut at = tid;
        let mut changed = false;
        for _ in 0..MAX_HOPS {
            let Some((grant, _)) = self.lock_row(leaf.rel.id, &leaf.rel.name, at, locking.mode, locking.wait)? else {
                return Ok(None);
            };
            let (h, bytes) = match heap::latest(pool, file, at) {
                Ok(t) => t,
                Err(HeapError::NoSuchTuple { .. }) => {
                    self.unlock_row(leaf.rel.id, at, grant);
                    return Ok(None);
                }
                Err(e) => return Err(e.into()),
            };
            // A compatible writer still at work (FOR KEY SHARE beside an
            // UPDATE that keeps the key): the version seen stands.
            if !changed && (visibility::in_progress(snaps, h.xmin, xid) || visibility::in_progress(snaps, h.xmax, xid))
            {
                return Ok(Some(seen.to_vec()));
            }
            match visibility::for_update(snaps, snapshot, xid, &h, repeatable) {
                UpdateVerdict::Skip => {
                    self.unlock_row(leaf.rel.id, at, grant);
                    return Ok(None);
                }
                UpdateVerdict::MovedTo(next) => {
                    self.unlock_row(leaf.rel.id, at, grant);
                    at = next;
                    changed = true;
                    continue;
                }
                // PostgreSQL 15's `LockRows` words a deleted row as an
                // updated one ("concurrent update").
                UpdateVerdict::SerializationFailure(_) => return Err(EngineError::SerializationFailure("update")),
                UpdateVerdict::Act => {}
            }
            let row = decode_row(&leaf.column_types, &bytes)?;
            changed |= h.xmin != xid && !snaps.sees(snapshot, h.xmin, xid);
            if changed && !(filters.matches(&row)? && filter.recheck(&row)?) {
                self.unlock_row(leaf.rel.id, at, grant);
                return Ok(None);
            }
            return Ok(Some(row));
        }
        Err(Internal::RowKeptMoving { relation: leaf.rel.name.clone(), doing: "locked" }.into())
    }

    /// [`Session::modify_rows`] on one relation with storage.
    fn modify_leaf(
        &mut self,
        leaf: &RelEntry,
        filters: &Filters,
        mode: RowLockMode,
        decide: &mut dyn FnMut(&[Value]) -> Result<Action>,
    ) -> Result<u64> {
        let engine = Arc::clone(&self.engine);
        let pool = engine.pool();
        let file = RelFileId::new(self.db, leaf.rel.id);
        let xid = self.ensure_xid()?;
        self.ensure_snapshot();
        let snapshot = self.snapshot.clone().expect("taken above");
        let repeatable = self.isolation() == IsolationLevel::RepeatableRead;
        let snaps = engine.txns().snapshots();
        let mut done: HashSet<Tid> = HashSet::new();
        let mut count = 0;
        for tid in self.candidates(leaf, filters, &snapshot, xid, None)? {
            if done.contains(&tid) {
                continue;
            }
            let mut at = tid;
            for hop in 0.. {
                if hop == MAX_HOPS {
                    return Err(Internal::RowKeptMoving { relation: leaf.rel.name.clone(), doing: "changed" }.into());
                }
                let Some((grant, _)) = self.lock_row(leaf.rel.id, &leaf.rel.name, at, mode, RowWait::Block)? else {
                    unreachable!("a blocking row lock is never skipped")
                };
                let release = |s: &mut Session| s.unlock_row(leaf.rel.id, at, grant);
                let (h, bytes) = match heap::latest(pool, file, at) {
                    Ok(t) => t,
                    Err(HeapError::NoSuchTuple { .. }) => {
                        release(self);
                        break;
                    }
                    Err(e) => return Err(e.into()),
                };
                match visibility::for_update(snaps, &snapshot, xid, &h, repeatable) {
                    UpdateVerdict::Skip => {
                        release(self);
                        break;
                    }
                    UpdateVerdict::MovedTo(next) => {
                        release(self);
                        at = next;
                        continue;
                    }
                    UpdateVerdict::SerializationFailure(what) => return Err(EngineError::SerializationFailure(what)),
                    UpdateVerdict::Act => {}
                }
                let row = decode_row(&leaf.column_types, &bytes)?;
                let action = if filters.matches(&row)? { decide(&row)? } else { Action::Keep };
                match action {
                    Action::Keep => release(self),
                    Action::Delete => {
                        heap::set_xmax(pool, file, at, xid, None)?;
                        self.txn.note_dead(leaf.rel.id);
                        self.log_undo(Undo::Delete { rel: leaf.rel.id, tid: at })?;
                        done.insert(at);
                        count += 1;
                    }
                    Action::Update(new) => {
                        // A key update (a unique index's columns change)
                        // needs `FOR UPDATE` strength, as PostgreSQL's
                        // `heap_update` with `key_intact` false.
                        let mut key_update = false;
                        if mode < RowLockMode::Update {
                            for ix in leaf.indexes.iter().filter(|ix| ix.unique) {
                                key_update |= ix.key.values(&row)? != ix.key.values(&new)?;
                            }
                        }
                        if key_update {
                            self.lock_row(leaf.rel.id, &leaf.rel.name, at, RowLockMode::Update, RowWait::Block)?;
                        }
                        let to = self.write_update(leaf, at, &row, new)?;
                        done.insert(at);
                        done.insert(to);
                        count += 1;
                    }
                }
                break;
            }
        }
        Ok(count)
    }

    /// The TIDs whose version seen by `snapshot` (of transaction `xid`)
    /// matches `filters`: through the index covering the longest prefix of
    /// filtered columns, or a sequential scan.
    fn candidates(
        &mut self,
        leaf: &RelEntry,
        filters: &Filters,
        snapshot: &Snapshot,
        xid: Xid,
        mut rows: Option<&mut Vec<Vec<Value>>>,
    ) -> Result<Vec<Tid>> {
        let engine = Arc::clone(&self.engine);
        let pool = engine.pool();
        let file = RelFileId::new(self.db, leaf.rel.id);
        let vis = engine.txns().visibility(snapshot, xid);
        let mut row = Vec::new();
        let mut out = Vec::new();
        if let Some((ix, key)) = filters.index_probe(leaf) {
            let opts = BtreeOptions::new(ix.name.clone(), ix.key.types().to_vec(), ix.unique, engine.config());
            let root = self.relcache.amcache(engine.catalog()).root(ix.id);
            let tree = BTree::attach(pool, RelFileId::new(self.db, ix.id), opts)?.with_cached_root(root);
            let found = tree.search(&key);
            self.relcache.amcache(engine.catalog()).remember(ix.id, &tree);
            for tid in found? {
                let seen = heap::with_visible(pool, file, tid, &vis, |bytes| {
                    decode_row_into(&leaf.column_types, bytes, &mut row)
                });
                match seen {
                    Ok(Some(Ok(()))) => {
                        if filters.matches(&row)? {
                            out.push(tid);
                            if let Some(rows) = rows.as_deref_mut() {
                                rows.push(row.clone());
                            }
                        }
                    }
                    Ok(None) | Err(HeapError::NoSuchTuple { .. }) => {}
                    Ok(Some(Err(e))) => return Err(e.into()),
                    Err(e) => return Err(e.into()),
                }
            }
            return Ok(out);
        }
        for (i, item) in HeapScan::visible(pool, file, vis)?.enumerate() {
            if i as u64 % engine.config().txn.interrupt_check_rows == 0 {
                self.check_interrupts()?;
            }
            let (tid, bytes) = item?;
            decode_row_into(&leaf.column_types, &bytes, &mut row)?;
            if filters.matches(&row)? {
                out.push(tid);
                if let Some(rows) = rows.as_deref_mut() {
                    rows.push(row.clone());
                }
            }
        }
        Ok(out)
    }

    /// Rewrites the row at `tid` in place with `row` (its write lock is
    /// held), its replaced version in the version store — or, when the store
    /// is full, in the heap ([`heap::spill`]). `false`: the page has no room.
    fn update_in_place(&mut self, file: RelFileId, tid: Tid, row: &[u8], xid: Xid) -> Result<bool> {
        let engine = Arc::clone(&self.engine);
        let (pool, txns, config) = (engine.pool(), engine.txns(), engine.config());
        let sink = VersionSink { snapshots: txns.snapshots(), versions: txns.versions(), horizon: txns.last_horizon() };
        let old = match heap::update_in_place(pool, file, tid, row, xid, sink)? {
            heap::InPlace::Done => return Ok(true),
            heap::InPlace::NoRoom => return Ok(false),
            heap::InPlace::StoreFull(old) => old,
        };
        if old.header.flags & heap::HAS_VERSIONS == 0 {
            // A chain left under this TID by an earlier tuple (a truncated
            // relation) is not this row's.
            txns.versions().forget(file, tid);
        }
        let mut ext = Extender::new(pool, &mut self.backend, config.storage.extend, config.storage.extend_max_blocks);
        let done = heap::spill::update_spilling(pool, &mut ext, file, tid, row, xid, &old);
        let stats = ext.stats();
        drop(ext);
        self.extension.add(&stats);
        Ok(done?)
    }

    /// Writes `new` over the row at `tid` (whose newest version is `old`;
    /// its write lock is held). Returns where the row is now.
    fn write_update(&mut self, leaf: &RelEntry, tid: Tid, old: &[Value], new: Vec<Value>) -> Result<Tid> {
        let types = &leaf.column_types;
        if new.len() != types.len() {
            return Err(crate::types::CodecError::Arity { expected: types.len(), got: new.len() }.into());
        }
        let new: Vec<Value> =
            new.iter().zip(types).enumerate().map(|(i, (v, t))| v.cast_to(*t, i)).collect::<Result<_, _>>()?;
        check_not_null(&leaf.rel, &new)?;
        if leaf.rel.bound.is_some() && !self.stays_in_partition(leaf, &new) {
            return Err(EngineError::NotSupported(format!(
                "moving a row out of partition \"{}\" by UPDATE",
                leaf.rel.name
            )));
        }
        let new_bytes = encode_row(types, &new)?;
        let engine = Arc::clone(&self.engine);
        let pool = engine.pool();
        let config = engine.config();
        let txns = engine.txns();
        let xid = self.ensure_xid()?;
        let file = RelFileId::new(self.db, leaf.rel.id);
        let mut keys_changed = false;
        for ix in &leaf.indexes {
            keys_changed |= ix.key.values(old)? != ix.key.values(&new)?;
        }
        if !keys_changed && self.update_in_place(file, tid, &new_bytes, xid)? {
            self.log_undo(Undo::Update { rel: leaf.rel.id, tid })?;
            return Ok(tid);
        }
        // A non-HOT update: a new tuple, the old one's xmax and ctid set,
        // new index entries. Older versions spilled to the heap go to the
        // version store first: `ctid` will name the new place.
        // Only a store that spilled in this run has chains a snapshot may
        // need (none predates a restart): the common move reads no extra
        // page.
        if txns.versions().has_spilled() {
            if let Some(h) = heap::latest_header(pool, file, tid)? {
                heap::spill::unspill(pool, file, tid, &h, txns.versions())?;
            }
        }
        let reserve = heap::fillfactor_reserve(leaf.rel.fillfactor);
        let mut ext = Extender::new(pool, &mut self.backend, config.storage.extend, config.storage.extend_max_blocks);
        let placed = heap::insert_reserving(pool, &mut ext, file, &new_bytes, xid, reserve);
        let stats = ext.stats();
        drop(ext);
        self.extension.add(&stats);
        let at = placed?;
        heap::set_xmax(pool, file, tid, xid, Some(at))?;
        self.txn.note_dead(leaf.rel.id);
        self.log_undo(Undo::Move { rel: leaf.rel.id, old: tid, new: at })?;
        if !self.txn.escalated.contains_key(&leaf.rel.id)
            && txns.try_lock_row((leaf.rel.id, at), xid, RowLockMode::NoKeyUpdate) == Ok(RowGrant::New)
        {
            self.txn.took_row_lock((leaf.rel.id, at), None);
        }
        let mut ext = Extender::new(pool, &mut self.backend, config.storage.extend, config.storage.extend_max_blocks);
        let mut result = Ok(());
        for ix in leaf.indexes.iter().filter(|i| i.unique).chain(leaf.indexes.iter().filter(|i| !i.unique)) {
            let key = match ix.key.values(&new) {
                Ok(k) => k,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            };
            let opts = BtreeOptions::new(ix.name.clone(), ix.key.types().to_vec(), ix.unique, config);
            let root = self.relcache.amcache(engine.catalog()).root(ix.id);
            let tree = BTree::attach(pool, RelFileId::new(self.db, ix.id), opts)?.with_cached_root(root);
            let mut check = crate::unique_wait::UniqueCheck::new(pool, txns, file, xid);
            let inserted = crate::unique_wait::insert_waiting(&tree, &mut ext, &key, at, &mut check);
            self.relcache.amcache(engine.catalog()).remember(ix.id, &tree);
            match inserted {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    result = Err(EngineError::from_index(e, &leaf.rel.name, || ix.key_names(&leaf.rel)));
                    break;
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        let stats = ext.stats();
        drop(ext);
        self.extension.add(&stats);
        if let Err(e) = result {
            // Take the move back at once: the old version lives on.
            heap::mark_dead(pool, file, at)?;
            heap::set_xmax(pool, file, tid, 0, None)?;
            self.txn.undo.pop();
            return Err(e);
        }
        Ok(at)
    }

    /// Whether `row` still belongs to partition `leaf` (its bound holds
    /// the partition key of its parent).
    fn stays_in_partition(&mut self, leaf: &RelEntry, row: &[Value]) -> bool {
        let (Some(parent), Some(bound)) = (leaf.rel.parent, leaf.rel.bound.as_ref()) else { return true };
        match self.rel_entry(parent).ok().and_then(|p| p.rel.partition_key) {
            Some(key) => row.get(key.column).is_some_and(|v| bound.contains(v)),
            None => true,
        }
    }
}

impl Session {
    /// A handle that cancels this session's running statement from any
    /// thread (the server's CancelRequest): a lock wait in progress fails
    /// at once, and a scan or other long loop fails at its next
    /// [`Session::check_interrupts`] — both with [`EngineError::Canceled`]
    /// (`57014`). A cancel that arrives between statements is dropped when
    /// the next statement starts, as in PostgreSQL.
    pub fn cancel_handle(&self) -> turnstile_lock::CancelHandle {
        self.backend.cancel_handle()
    }

    /// Fails with [`EngineError::Canceled`] if the statement was cancelled
    /// (consuming the request). Scans and other long loops call it.
    pub fn check_interrupts(&mut self) -> Result<()> {
        self.backend.check_cancel().map_err(|_| EngineError::Canceled)
    }
}

/// A single-table statement's target, resolved and locked.
struct Target {
    /// Equality filters.
    filters: Filters,
    /// A filter no row can match (a NULL).
    impossible: bool,
    /// The relations with storage to visit (partitions after pruning).
    leaves: Vec<Arc<RelEntry>>,
}

/// What the SQL layer does with a locking `SELECT`'s rows
/// ([`Session::select_locking`]).
pub trait LockingFilter {
    /// Drops and orders the candidates (rows as the snapshot sees them):
    /// the indices of `rows` to lock, in locking order.
    fn order(&mut self, rows: &[Vec<Value>]) -> Result<Vec<usize>>;
    /// Whether the newest version of a row changed since the snapshot
    /// still qualifies (EvalPlanQual's re-check of the `WHERE` clause).
    fn recheck(&mut self, row: &[Value]) -> Result<bool>;
}
