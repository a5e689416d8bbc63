//! The planner: lock what the query reads, expand partitions, choose an
//! index per relation, choose a join method.
//!
//! It follows PostgreSQL's planner where the write-ups (`docs/sources.md`)
//! measured it:
//!
//! 1. Every table of the query is locked `AccessShareLock` before its
//!    definition is read.
//! 2. A partitioned table is expanded into its partitions. A predicate on
//!    the partition key whose value is known at plan time prunes them
//!    (PostgreSQL ≥ 12 locks only the survivors); otherwise every
//!    partition is locked and kept (Vondra 2024: 100 or 1000 partitions, each
//!    locked, when the lookup is on `aid_parent`).
//! 3. For each relation scanned, the indexes are considered:
//!    * `planner.index_prefilter = false`: every index is opened and locked
//!      first, as `get_relation_info` does, then the useful one chosen;
//!    * `planner.index_prefilter = true` (Geier 2022): the relation cache's
//!      column sets discard every index whose leading column is neither in
//!      an equality predicate nor a join column, *before* anything is
//!      locked; only the candidates are locked.
//! 4. A join whose inner relation has an index on the join column becomes
//!    a nested loop with an inner index scan; otherwise a hash join. As in
//!    PostgreSQL's plans of the W1 and W2 queries, an inner relation of one
//!    page is read sequentially when it has at most one row (PostgreSQL
//!    drives a nested loop from it: pgbench scale 1's one branch) or the
//!    outer side is not known to probe it more often than it has rows
//!    (hash join): at scale 10 `branches` under 10 partitions and every
//!    W2 dimension are hashed, `branches` under 100 partitions is probed
//!    (PostgreSQL: nested loop, `Memoize`, index scan). This is a rule
//!    fitted to PostgreSQL 15's cost-based choices on those shapes, not its
//!    cost model: turnstile keeps no statistics, so an equality lookup
//!    through an index is estimated at one row per relation read, a join on
//!    the inner's unique key keeps the row count, and anything else is
//!    unknown (the index is kept).
//!
//! Not modelled: PostgreSQL also reads a *base* relation sequentially
//! instead of through an equality index when its vacuumed size makes that
//! cheaper (`pages + 0.0125 × tuples` below the index probe's two random
//! pages, about 8.2). Of the workloads' shapes only W1 at pgbench scale 1 and
//! 1000 partitions (100 rows, 2 pages each) is that small; there
//! PostgreSQL 15's generic plan locks no `aid_parent` index (1002 locks)
//! where classic locks all 1000 (2002). Modelling it needs per-relation
//! sizes (`relpages`/`reltuples`, kept by VACUUM, ANALYZE and CREATE INDEX,
//! and PostgreSQL's 10-page guess for a never-vacuumed table) in the
//! relation cache; reading live sizes here would add a shared look-up per
//! partition to every plan.
//!
//! The plan records what the executor must lock on every execution: each
//! relation of the range table (tables and, unpruned, their partitions)
//! and each index a scan uses — PostgreSQL's `AcquireExecutorLocks` plus
//! `ExecInitIndexScan`.

use super::{Col, Operand, Query, QueryError};
use crate::btree::BtreeOptions;
use crate::catalog::{IndexInfo, PartitionBound, RelEntry, RelId, RelKind};
use crate::error::{EngineError, Result};
use crate::heap::HeapScan;
use crate::lmgr::RelLocker;
use crate::types::{ColumnType, Value};
use std::fmt::Write as _;
use std::sync::Arc;
use turnstile_lock::LockMode;
use turnstile_storage::{BufferPool, Fork, RelFileId};
use turnstile_sync::config::BtreeConfig;
use turnstile_sync::Config;

/// How one relation is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Access {
    /// Every tuple, filtered.
    SeqScan,
    /// An index scan on the index's leading column.
    IndexScan {
        /// The index.
        index: RelId,
        /// Its definition as the B-tree needs it (name, key types of all
        /// columns, uniqueness), made once per plan: each execution's
        /// probe borrows it.
        opts: BtreeOptions,
        /// Where the search key comes from.
        key: IndexKey,
    },
}

/// The value an index scan searches for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexKey {
    /// A predicate's operand.
    Filter(Operand),
    /// The outer row's join column (the inner side of a nested loop).
    Outer,
}

/// One relation with storage that a table scan reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leaf {
    /// The relation (the table itself, or a partition).
    pub rel: RelId,
    /// Its name.
    pub name: String,
    /// The partition bound, for run-time pruning.
    pub bound: Option<PartitionBound>,
    /// How it is read.
    pub access: Access,
}

/// One table of the query, planned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TablePlan {
    /// The table's name.
    pub name: String,
    /// The table (the parent, if partitioned).
    pub rel: RelId,
    /// Column types.
    pub column_types: Vec<ColumnType>,
    /// Equality predicates on this table: column number and operand.
    pub filters: Vec<(usize, Operand)>,
    /// The relations scanned (an Append when more than one).
    pub leaves: Vec<Leaf>,
    /// A predicate on the partition key whose value is a parameter of a
    /// generic plan: partitions are pruned at executor start-up.
    pub runtime_prune: Option<(usize, Operand)>,
}

/// How a joined table is joined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinMethod {
    /// For each outer row, an index scan of the inner table.
    NestLoop,
    /// Build a hash table of the inner table, probe it with outer rows.
    HashJoin,
}

/// A join of `tables[i + 1]` to the rows built so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JoinPlan {
    /// The method.
    pub method: JoinMethod,
    /// Position of the outer join column in the combined row.
    pub outer_column: usize,
    /// The inner table's join column.
    pub inner_column: usize,
}

/// A plan, ready for the executor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Tables in query order.
    pub tables: Vec<TablePlan>,
    /// Joins, for `tables[1..]`.
    pub joins: Vec<JoinPlan>,
    /// Output columns: positions in the combined row.
    pub output: Vec<usize>,
    /// Relations and indexes the executor locks on every execution.
    pub executor_locks: Vec<RelId>,
    /// Relation locks the planner took (for reports).
    pub planner_locks: usize,
    /// Parameters the plan expects.
    pub params: usize,
    /// Catalog generation the plan was made at.
    pub generation: u64,
}

impl Plan {
    /// An EXPLAIN-like description.
    pub fn explain(&self) -> String {
        let mut s = String::new();
        for (i, t) in self.tables.iter().enumerate() {
            if i > 0 {
                let _ = writeln!(s, "{:?}", self.joins[i - 1].method);
            }
            let kind = if t.leaves.len() == 1 { "" } else { "Append " };
            let _ = writeln!(s, "  {kind}{} ({} relations)", t.name, t.leaves.len());
            for leaf in t.leaves.iter().take(3) {
                match &leaf.access {
                    Access::SeqScan => {
                        let _ = writeln!(s, "    Seq Scan on {}", leaf.name);
                    }
                    Access::IndexScan { opts, .. } => {
                        let _ = writeln!(s, "    Index Scan using {} on {}", opts.name, leaf.name);
                    }
                }
            }
        }
        s
    }
}

/// Where `col` is: the position of its table among `tables` (named
/// `names`) and its column number there. A name is looked up as it is.
fn locate(tables: &[Arc<RelEntry>], names: &[&str], col: &Col) -> Result<(usize, usize)> {
    let unknown = || QueryError::UnknownColumn(col.to_string());
    match col {
        Col::At { table, column } => match tables.get(*table) {
            Some(t) if *column < t.column_types.len() => Ok((*table, *column)),
            _ => Err(unknown().into()),
        },
        Col::Of(t, c) => {
            let ti = names.iter().position(|n| n == t).ok_or_else(unknown)?;
            Ok((ti, tables[ti].rel.column_number(c).ok_or_else(unknown)?))
        }
        Col::Name(c) => {
            let mut found = None;
            for (ti, t) in tables.iter().enumerate() {
                if let Some(ci) = t.rel.column_number(c) {
                    if found.is_some() {
                        return Err(QueryError::AmbiguousColumn(c.clone()).into());
                    }
                    found = Some((ti, ci));
                }
            }
            found.ok_or_else(|| unknown().into())
        }
    }
}

/// The value of `op`, if it is known (a constant, or a bound parameter).
pub(crate) fn operand_value<'a>(op: &'a Operand, params: Option<&'a [Value]>) -> Result<Option<&'a Value>> {
    match op {
        Operand::Const(v) => Ok(Some(v)),
        Operand::Param(n) => match params {
            None => Ok(None),
            Some(p) => p.get(n.wrapping_sub(1)).map(Some).ok_or_else(|| QueryError::MissingParam(*n).into()),
        },
    }
}

/// A relation a table scans, with its partition bound (`None` for the
/// table itself).
type LeafId = (RelId, Option<PartitionBound>);

/// An equality predicate of one table: column number and operand.
type Filter = (usize, Operand);

/// The planner of one backend: catalog look-ups through the backend's
/// relation cache, the planner's heavyweight locks through its lock-manager
/// backend, and `planner.index_prefilter` from the configuration. Each
/// step of the module documentation is one function (`lock_tables`,
/// `expand_partitions`, `choose_index`, `join_methods`).
#[derive(Debug)]
pub struct Planner<'a> {
    rels: RelLocker<'a>,
    pool: &'a BufferPool,
    prefilter: bool,
    /// The B-tree settings, for the plan's [`BtreeOptions`].
    btree: BtreeConfig,
    /// Relation locks taken by the plan being made (for reports).
    planner_locks: usize,
    /// What the executor will lock for the plan being made, in plan order.
    executor_locks: Vec<RelId>,
}

impl<'a> Planner<'a> {
    /// A planner over `rels` (the session's relation cache and backend),
    /// sizing relations through `pool`, with `config`'s planner settings.
    pub(crate) fn new(rels: RelLocker<'a>, pool: &'a BufferPool, config: &Config) -> Planner<'a> {
        Planner {
            rels,
            pool,
            prefilter: config.planner.index_prefilter,
            btree: config.btree.clone(),
            planner_locks: 0,
            executor_locks: Vec::new(),
        }
    }

    /// Plans `query`. `params` are the parameter values of a custom plan
    /// (simple mode), `None` for a generic plan (prepared mode). Takes the
    /// planner's locks (`AccessShareLock`), which last until the statement
    /// or transaction ends.
    pub fn plan(&mut self, query: &Query, params: Option<&[Value]>) -> Result<Plan> {
        if query.index_key().is_some() {
            return Err(EngineError::NotSupported("an index-key filter in a planned query".into()));
        }
        let generation = self.rels.catalog().published_generation();
        self.planner_locks = 0;
        self.executor_locks = Vec::new();
        let names = query.tables();
        let entries = self.lock_tables(&names)?;
        let mut filters = predicates(query, &entries, &names)?;
        let offsets = column_offsets(&entries);
        let join_cols = join_columns(query, &entries, &names, &offsets)?;

        let mut tables = Vec::with_capacity(entries.len());
        // Rows the tables planned so far yield, when the estimate is known.
        let mut outer_rows: Option<u64> = None;
        for (ti, e) in entries.iter().enumerate() {
            let repeated = entries[..ti].iter().any(|x| x.rel.id == e.rel.id);
            if !repeated {
                self.executor_locks.push(e.rel.id);
            }
            let join_col = if ti == 0 { None } else { Some(join_cols[ti - 1].1) };
            let (leaf_ids, runtime_prune) = self.expand_partitions(e, &filters[ti], params)?;
            let mut leaves = Vec::with_capacity(leaf_ids.len());
            for (id, bound) in leaf_ids {
                let leaf = if id == e.rel.id { Arc::clone(e) } else { self.rels.entry(id)? };
                let mut access = self.choose_index(&leaf, &filters[ti], join_col)?;
                if matches!(access, Access::IndexScan { key: IndexKey::Outer, .. })
                    && self.one_page_outnumbering(id, outer_rows)?
                {
                    access = Access::SeqScan;
                }
                if let Access::IndexScan { index, .. } = &access {
                    // A repeated table's index may be recorded already.
                    if !(repeated && self.executor_locks.contains(index)) {
                        self.executor_locks.push(*index);
                    }
                }
                leaves.push(Leaf { rel: id, name: leaf.rel.name.clone(), bound, access });
            }
            outer_rows = match join_col {
                None => equality_lookups(&leaves),
                // A join on the inner table's unique key keeps the row count.
                Some(c) if e.indexes.iter().any(|ix| ix.unique && ix.columns == [c]) => outer_rows,
                Some(_) => None,
            };
            tables.push(TablePlan {
                name: e.rel.name.clone(),
                rel: e.rel.id,
                column_types: e.column_types.clone(),
                filters: std::mem::take(&mut filters[ti]),
                leaves,
                runtime_prune,
            });
        }
        let joins = join_methods(&join_cols, &tables);
        let output = output_columns(query, &entries, &names, &offsets)?;
        Ok(Plan {
            tables,
            joins,
            output,
            executor_locks: std::mem::take(&mut self.executor_locks),
            planner_locks: self.planner_locks,
            params: query.param_count(),
            generation,
        })
    }

    /// Takes `AccessShareLock` on `id` for the planner.
    fn lock(&mut self, id: RelId) -> Result<()> {
        self.rels.lock(id, LockMode::AccessShare)?;
        self.planner_locks += 1;
        Ok(())
    }

    /// Step 1: locks every table of the query, in query order, and reads
    /// its definition after the lock. A table may appear more than once
    /// (a self-join, under two aliases the binder told apart): it is
    /// locked once, and each appearance shares the definition read then.
    fn lock_tables(&mut self, names: &[&str]) -> Result<Vec<Arc<RelEntry>>> {
        let mut entries: Vec<Arc<RelEntry>> = Vec::with_capacity(names.len());
        for (i, name) in names.iter().enumerate() {
            if let Some(k) = names[..i].iter().position(|n| n == name) {
                entries.push(Arc::clone(&entries[k]));
                continue;
            }
            let e = self.rels.lock_by_name(name, LockMode::AccessShare)?;
            self.planner_locks += 1;
            if !matches!(e.rel.kind, RelKind::Table | RelKind::PartitionedTable) {
                return Err(QueryError::NotATable((*name).into()).into());
            }
            entries.push(e);
        }
        Ok(entries)
    }

    /// Step 2: the relations table `e` scans — itself, or its partitions:
    /// those a predicate on the partition key with a value known now keeps
    /// (plan-time pruning), else all of them, each locked (and recorded
    /// for the executor). A key predicate on a parameter of a generic plan
    /// becomes the run-time pruning returned alongside.
    fn expand_partitions(
        &mut self,
        e: &RelEntry,
        filters: &[(usize, Operand)],
        params: Option<&[Value]>,
    ) -> Result<(Vec<LeafId>, Option<Filter>)> {
        let Some(key) = e.rel.partition_key else {
            return Ok((vec![(e.rel.id, None)], None));
        };
        let mut runtime_prune = None;
        let on_key = filters.iter().find(|(c, _)| *c == key.column);
        let mut keep = Vec::with_capacity(e.partitions.len());
        match on_key {
            Some((_, op)) => match operand_value(op, params)? {
                Some(v) => keep
                    .extend(e.partitions.iter().filter(|(_, b)| b.contains(v)).map(|(id, b)| (*id, Some(b.clone())))),
                None => {
                    runtime_prune = Some((key.column, op.clone()));
                    keep.extend(e.partitions.iter().map(|(id, b)| (*id, Some(b.clone()))));
                }
            },
            None => keep.extend(e.partitions.iter().map(|(id, b)| (*id, Some(b.clone())))),
        }
        for (id, _) in &keep {
            self.lock(*id)?;
            self.executor_locks.push(*id);
        }
        Ok((keep, runtime_prune))
    }

    /// Step 3b: whether the inner relation `id` of a join is better read
    /// sequentially than probed through its index once per outer row.
    /// PostgreSQL's costs make a one-page relation a sequential scan (one
    /// page, `seq_page_cost` 1, against at least two random page reads,
    /// `random_page_cost` 4 each, for one probe) in two cases:
    ///
    /// * it has at most one row: PostgreSQL then makes it the *outer* side
    ///   of a nested loop, so everything else runs once, for its one row —
    ///   the cost of the rest plus one page, which no index probe
    ///   undercuts, however many rows the rest yields (pgbench scale 1:
    ///   one `pgbench_branches` row under 10, 100 or 1000 partitions is a
    ///   `Seq Scan` driving the `Append`, in custom and generic plans);
    /// * the outer side does not probe it more often than it has rows
    ///   (hash join). When it does, a nested loop over its index (under
    ///   `Memoize`) wins (scale 10: ten branches, hashed under 10
    ///   partitions, probed under 100 and 1000).
    ///
    /// `outer_rows` is the outer estimate (`None`: unknown, as for a scan
    /// without an equality lookup; the index is kept unless the first case
    /// holds, which does not depend on it). A relation without pages is
    /// sized as PostgreSQL sizes a never-vacuumed one (10 pages), so it
    /// keeps its index.
    fn one_page_outnumbering(&self, id: RelId, outer_rows: Option<u64>) -> Result<bool> {
        let file = RelFileId::new(self.rels.database(), id);
        if self.pool.store().nblocks(file, Fork::Main)? != 1 {
            return Ok(false);
        }
        // A one-page heap holds a few hundred tuples at most; counting them
        // reads that page once.
        let mut tuples = 0u64;
        for item in HeapScan::new(self.pool, file)? {
            item?;
            tuples += 1;
        }
        if tuples <= 1 {
            return Ok(true); // the outer side of a nested loop, scanned once
        }
        Ok(outer_rows.is_some_and(|outer| outer <= tuples))
    }

    /// Step 3: how relation `leaf` is read — an index scan on the best
    /// index whose leading column has an equality predicate (`filters`) or
    /// is the join column (`join_col`), else a sequential scan. Without the
    /// prefilter every index is locked before it is looked at; with it
    /// (Geier 2022) only those the column sets keep.
    fn choose_index(
        &mut self,
        leaf: &RelEntry,
        filters: &[(usize, Operand)],
        join_col: Option<usize>,
    ) -> Result<Access> {
        // Columns an index could serve: one pass over the predicates,
        // so discarding an index is one lookup (Geier 2022's column sets).
        let mut useful_cols = vec![false; leaf.column_types.len()];
        for (c, _) in filters {
            useful_cols[*c] = true;
        }
        if let Some(c) = join_col {
            useful_cols[c] = true;
        }
        let useful = |leading: usize| useful_cols.get(leading).copied().unwrap_or(false);
        let mut chosen: Option<(usize, &IndexInfo, IndexKey)> = None;
        for ix in &leaf.indexes {
            let leading = ix.leading_column();
            if self.prefilter && !useful(leading) {
                continue; // Geier 2022: discarded before it is opened or locked
            }
            self.lock(ix.id)?;
            if !useful(leading) {
                continue;
            }
            let key = match filters.iter().find(|(c, _)| *c == leading) {
                Some((_, op)) => IndexKey::Filter(op.clone()),
                None => IndexKey::Outer,
            };
            // Prefer a predicate over a join key, then unique indexes.
            let score = usize::from(matches!(key, IndexKey::Filter(_))) * 2 + usize::from(ix.unique);
            if chosen.as_ref().is_none_or(|(s, _, _)| score > *s) {
                chosen = Some((score, ix, key));
            }
        }
        Ok(match chosen {
            None => Access::SeqScan,
            Some((_, ix, key)) => Access::IndexScan {
                index: ix.id,
                opts: BtreeOptions::with_btree_config(ix.name.clone(), ix.key.types().to_vec(), ix.unique, &self.btree),
                key,
            },
        })
    }
}

/// Rows a table yields when every relation it reads is an index lookup
/// on an equality predicate: one per lookup (PostgreSQL's estimate for a
/// key whose values are distinct; turnstile keeps no column statistics).
fn equality_lookups(leaves: &[Leaf]) -> Option<u64> {
    leaves
        .iter()
        .all(|l| matches!(&l.access, Access::IndexScan { key: IndexKey::Filter(_), .. }))
        .then_some(leaves.len() as u64)
}

/// The equality predicates of `query`, by table: column number and
/// operand. A constant must be of (or coerce to) the column's type.
fn predicates(query: &Query, entries: &[Arc<RelEntry>], names: &[&str]) -> Result<Vec<Vec<(usize, Operand)>>> {
    let mut filters: Vec<Vec<(usize, Operand)>> = vec![Vec::new(); entries.len()];
    for p in query.filters() {
        let (t, c) = locate(entries, names, &p.column)?;
        if let Operand::Const(v) = &p.value {
            if v.coerce(entries[t].column_types[c]).is_none() {
                return Err(QueryError::TypeMismatch { column: p.column.to_string(), value: v.to_string() }.into());
            }
        }
        filters[t].push((c, p.value.clone()));
    }
    Ok(filters)
}

/// Where each table's columns start in the combined (joined) row.
fn column_offsets(entries: &[Arc<RelEntry>]) -> Vec<usize> {
    entries
        .iter()
        .scan(0, |acc, e| {
            let o = *acc;
            *acc += e.column_types.len();
            Some(o)
        })
        .collect()
}

/// For each join: the outer join column's position in the combined row,
/// and the inner table's join column.
fn join_columns(
    query: &Query,
    entries: &[Arc<RelEntry>],
    names: &[&str],
    offsets: &[usize],
) -> Result<Vec<(usize, usize)>> {
    let mut join_cols = Vec::with_capacity(query.joins().len());
    for (i, j) in query.joins().iter().enumerate() {
        let inner = i + 1;
        let (lt, lc) = locate(&entries[..inner], &names[..inner], &j.left)?;
        // The right side is a column of the joined table: a bare name is looked up there.
        let right = match &j.right {
            Col::Name(c) => Col::of(names[inner], c.as_str()),
            other => other.clone(),
        };
        let (rt, rc) = locate(entries, names, &right)?;
        if rt != inner {
            return Err(QueryError::UnknownColumn(j.right.to_string()).into());
        }
        let (lty, rty) = (entries[lt].column_types[lc], entries[inner].column_types[rc]);
        if !lty.comparable(rty) {
            return Err(QueryError::JoinTypeMismatch { left: j.left.to_string(), right: j.right.to_string() }.into());
        }
        join_cols.push((offsets[lt] + lc, rc));
    }
    Ok(join_cols)
}

/// Step 4: a nested loop when every relation of the inner table is read
/// by an index scan on the join column, else a hash join.
fn join_methods(join_cols: &[(usize, usize)], tables: &[TablePlan]) -> Vec<JoinPlan> {
    join_cols
        .iter()
        .enumerate()
        .map(|(i, &(outer_column, inner_column))| {
            let inner = &tables[i + 1];
            let all_indexed =
                inner.leaves.iter().all(|l| matches!(&l.access, Access::IndexScan { key: IndexKey::Outer, .. }));
            JoinPlan {
                method: if all_indexed { JoinMethod::NestLoop } else { JoinMethod::HashJoin },
                outer_column,
                inner_column,
            }
        })
        .collect()
}

/// The projection's positions in the combined row (every column for `*`).
fn output_columns(query: &Query, entries: &[Arc<RelEntry>], names: &[&str], offsets: &[usize]) -> Result<Vec<usize>> {
    Ok(match query.projection() {
        None => (0..offsets.last().map_or(0, |o| o + entries.last().map_or(0, |e| e.column_types.len()))).collect(),
        Some(cols) => {
            cols.iter().map(|c| locate(entries, names, c).map(|(t, ci)| offsets[t] + ci)).collect::<Result<Vec<_>>>()?
        }
    })
}
