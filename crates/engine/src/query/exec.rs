//! The executor: lock what the plan touches, prune, scan, join, project.
//!
//! Every execution first takes `AccessShareLock` on each relation and
//! index in [`Plan::executor_locks`] — after planning in the same statement
//! these are local-lock-table hits; for a prepared plan they are the real
//! cost Vondra 2024 measured (every partition, every used index, every
//! time).
//!
//! Per-execution memory comes from a [`MemoryContext`] over the session's
//! block cache: each index scan allocates PostgreSQL-sized scan state (the
//! item positions of one index page, and a page-sized tuple buffer), which
//! is what makes a query over 100 partitions allocate megabytes (Vondra 2024).

use super::plan::{operand_value, Access, IndexKey, JoinMethod, JoinPlan, Leaf, Plan, TablePlan};
use super::{Operand, QueryError};
use crate::btree::BTree;
use crate::catalog::AmCache;
use crate::error::Result;
use crate::heap::{self, HeapScan};
use crate::lmgr::RelLocker;
use crate::memory::{BlockCache, MemoryContext};
use crate::mvcc::Visibility;
use crate::tid::Tid;
use crate::types::{decode_row_into, ColumnType, Value};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::mem::MaybeUninit;
use turnstile_lock::LockMode;
use turnstile_storage::{BufferPool, RelFileId};
use turnstile_sync::Config;

/// Index entries one B-tree leaf can hold (PostgreSQL's
/// `MaxTIDsPerBTreePage`, 1358 for 8 kB pages): the size of a scan's
/// item-position arrays.
pub const MAX_TIDS_PER_PAGE: usize = 1358;

/// One remembered index entry of a scan position (PostgreSQL's
/// `BTScanPosItem`, 10 bytes): the heap tuple (`ItemPointerData` as three
/// 16-bit words), where the entry was on the index page, and where its
/// tuple copy would go (index-only scans; unused here).
#[derive(Clone, Copy, Debug)]
struct ScanPosItem {
    heap_tid: [u16; 3],
    index_offset: u16,
    tuple_offset: u16,
}

impl ScanPosItem {
    /// A position header that points nowhere (`BTScanPosInvalidate`).
    const INVALID: ScanPosItem = ScanPosItem { heap_tid: [u16::MAX; 3], index_offset: u16::MAX, tuple_offset: 0 };

    fn new(tid: Tid, index_offset: u16) -> ScanPosItem {
        let heap_tid = [(tid.block >> 16) as u16, tid.block as u16, tid.slot];
        ScanPosItem { heap_tid, index_offset, tuple_offset: 0 }
    }

    fn tid(&self) -> Tid {
        Tid::new((u32::from(self.heap_tid[0]) << 16) | u32::from(self.heap_tid[1]), self.heap_tid[2])
    }
}

/// A row of the combined (joined) relation.
type Row = Vec<Value>;

/// Whether `a = b` in SQL (NULL equals nothing; integer widths compare by value).
fn sql_eq(a: &Value, b: &Value) -> bool {
    !matches!(a, Value::Null) && !matches!(b, Value::Null) && a.sql_cmp(b) == std::cmp::Ordering::Equal
}

/// A hash key that treats `int4` and `int8` of equal value alike.
fn hash_key(v: &Value) -> Option<Value> {
    match v {
        Value::Null => None,
        Value::Int4(x) => Some(Value::Int8(i64::from(*x))),
        other => Some(other.clone()),
    }
}

/// An index search key, coerced and encoded, and what it came from.
struct ProbeKey {
    operand: Operand,
    ty: ColumnType,
    /// `None`: the value matches nothing (NULL, or out of the column's
    /// range).
    encoded: Option<Vec<u8>>,
}

/// `value` coerced to the index's leading column type `ty` and encoded as
/// its entries are; `None` when it matches nothing.
fn encode_probe(tree: &BTree<'_>, value: Option<Value>, ty: ColumnType) -> Result<Option<Vec<u8>>> {
    match value.and_then(|v| v.coerce(ty)) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => Ok(Some(tree.encode_prefix(&[v])?)),
    }
}

struct Ctx<'a, 'm> {
    pool: &'a BufferPool,
    db: u32,
    config: &'a Config,
    params: &'a [Value],
    memory: &'a MemoryContext<'m>,
    /// The backend's cached index roots: each index scan starts its
    /// handle from one and puts back what the handle saw. Borrowed only
    /// around those two steps, never across a scan.
    amcache: RefCell<&'a mut AmCache>,
    /// For cancel checks ([`crate::Session::check_interrupts`]).
    backend: &'a turnstile_lock::Backend,
    /// The last parameter or constant search key, encoded: a generic plan
    /// probes each partition's index with the same one.
    probe_key: Cell<Option<ProbeKey>>,
    /// Which version of each row the execution sees.
    vis: Visibility<'a>,
}

impl Ctx<'_, '_> {
    /// Appends to `out` every row of `table` that passes its filters (and,
    /// for the inner side of a nested loop, whose index key is `outer`).
    fn scan(&self, table: &TablePlan, outer: Option<&Value>, out: &mut Vec<Row>) -> Result<()> {
        let prune = match &table.runtime_prune {
            Some((_, op)) => operand_value(op, Some(self.params))?.cloned(),
            None => None,
        };
        let mut filters = Vec::with_capacity(table.filters.len());
        for (c, op) in &table.filters {
            let v = operand_value(op, Some(self.params))?.cloned().unwrap_or(Value::Null);
            // As stored: `char(n)` blank-padded; a value the column cannot
            // hold matches nothing.
            filters.push((*c, v.coerce(table.column_types[*c]).unwrap_or(Value::Null)));
        }
        let mut row = Vec::with_capacity(table.column_types.len());
        for leaf in &table.leaves {
            if let (Some(v), Some(bound)) = (&prune, &leaf.bound) {
                if !bound.contains(v) {
                    continue; // pruned at executor start-up
                }
            }
            let file = RelFileId::new(self.db, leaf.rel);
            let mut emit = |bytes: &[u8]| -> Result<()> {
                decode_row_into(&table.column_types, bytes, &mut row)?;
                if filters.iter().all(|(c, v)| sql_eq(&row[*c], v)) {
                    out.push(row.clone());
                }
                Ok(())
            };
            match &leaf.access {
                Access::SeqScan => {
                    for (i, item) in HeapScan::visible(self.pool, file, self.vis)?.enumerate() {
                        if i % 1024 == 0 {
                            self.backend.check_cancel()?;
                        }
                        emit(&item?.1)?;
                    }
                }
                Access::IndexScan { .. } => self.index_scan(leaf, outer, &mut emit)?,
            }
        }
        Ok(())
    }

    fn index_scan(&self, leaf: &Leaf, outer: Option<&Value>, emit: &mut impl FnMut(&[u8]) -> Result<()>) -> Result<()> {
        let Access::IndexScan { index, opts, key } = &leaf.access else {
            return Ok(());
        };
        let root = self.amcache.borrow().root(*index);
        let tree = BTree::attach(self.pool, RelFileId::new(self.db, *index), opts)?.with_cached_root(root);
        let ty = opts.key_types[0];
        let scanned = match key {
            // A parameter or constant is the same for every partition's
            // index this execution probes: coerced and encoded once. The
            // entry is taken out while the scan runs and put back after.
            IndexKey::Filter(op) => {
                let cached = self.probe_key.take().filter(|p| p.operand == *op && p.ty == ty);
                let probe = match cached {
                    Some(p) => p,
                    None => {
                        let value = operand_value(op, Some(self.params))?.cloned();
                        ProbeKey { operand: op.clone(), ty, encoded: encode_probe(&tree, value, ty)? }
                    }
                };
                let scanned = match &probe.encoded {
                    Some(k) => self.scan_index(&tree, leaf, k, emit),
                    None => Ok(()),
                };
                self.probe_key.set(Some(probe));
                scanned
            }
            IndexKey::Outer => match encode_probe(&tree, outer.cloned(), ty)? {
                Some(k) => self.scan_index(&tree, leaf, &k, emit),
                None => Ok(()),
            },
        };
        self.amcache.borrow_mut().remember(*index, &tree);
        scanned
    }

    /// The index scan proper: entries whose key is the encoded `key`,
    /// their heap rows passed to `emit`.
    fn scan_index(
        &self,
        tree: &BTree<'_>,
        leaf: &Leaf,
        key: &[u8],
        emit: &mut impl FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        // The scan state, sized as PostgreSQL's `BTScanOpaqueData`: a
        // current and a mark position, each a header and room for every
        // item of one leaf (~27 kB in one chunk, Vondra 2024). Like `palloc`'d
        // memory it is not initialised, except what `btbeginscan` writes:
        // each position's header is invalidated (`BTScanPosInvalidate`).
        // The items are written only as the scan fills them.
        // `btbeginscan` allocates it before the first descent;
        // `memory.lazy_scan_state` waits for the first entry, so a probe
        // that finds nothing (999 of W1's 1000 partitions) allocates and
        // touches nothing.
        let allocate = || {
            let state: &mut [MaybeUninit<ScanPosItem>] = self.memory.alloc_uninit(2 * (1 + MAX_TIDS_PER_PAGE));
            let (current, mark) = state.split_at_mut(1 + MAX_TIDS_PER_PAGE);
            current[0].write(ScanPosItem::INVALID);
            mark[0].write(ScanPosItem::INVALID);
            &mut current[1..]
        };
        let eager = (!self.config.memory.lazy_scan_state).then(&allocate);
        let mut scan = tree.equal_encoded(key);
        let (current, mut pending) = match eager {
            Some(current) => (current, None),
            None => match scan.next() {
                None => return Ok(()),
                Some(entry) => (allocate(), Some(entry?)),
            },
        };
        let file = RelFileId::new(self.db, leaf.rel);
        loop {
            let mut n = 0;
            while n < current.len() {
                let entry = match pending.take() {
                    Some(entry) => entry,
                    None => match scan.next() {
                        Some(entry) => entry?,
                        None => break,
                    },
                };
                current[n].write(ScanPosItem::new(entry.tid, n as u16));
                n += 1;
            }
            for item in &current[..n] {
                // SAFETY: the loop above wrote `current[..n]`.
                let item = unsafe { item.assume_init() };
                debug_assert!(usize::from(item.index_offset) < MAX_TIDS_PER_PAGE && item.tuple_offset == 0);
                match heap::with_visible(self.pool, file, item.tid(), &self.vis, |bytes| emit(bytes)) {
                    Ok(Some(r)) => r?,
                    // No version this snapshot sees, or an index entry
                    // whose tuple VACUUM reclaimed.
                    Ok(None) | Err(heap::HeapError::NoSuchTuple { .. }) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            if n < current.len() {
                break;
            }
        }
        Ok(())
    }
}

/// The executor of one backend: runs plans over the buffer pool, taking
/// the executor's heavyweight locks through the backend, drawing each
/// execution's memory context from the backend's block cache and each
/// index scan's root from its cached roots.
#[derive(Debug)]
pub struct Executor<'a> {
    rels: RelLocker<'a>,
    pool: &'a BufferPool,
    config: &'a Config,
    block_cache: &'a mut BlockCache,
    vis: Visibility<'a>,
}

impl<'a> Executor<'a> {
    /// An executor over `rels` (the session's relation cache and backend),
    /// reading through `pool` the row versions `vis` sees, with memory from
    /// `block_cache`.
    pub(crate) fn new(
        rels: RelLocker<'a>,
        pool: &'a BufferPool,
        config: &'a Config,
        block_cache: &'a mut BlockCache,
        vis: Visibility<'a>,
    ) -> Executor<'a> {
        Executor { rels, pool, config, block_cache, vis }
    }

    /// Runs `plan` with `params`: takes the executor's locks, then scans,
    /// joins and projects. Returns the result rows.
    pub fn run(&mut self, plan: &Plan, params: &[Value]) -> Result<Vec<Row>> {
        if params.len() != plan.params {
            return Err(QueryError::ParamCount { expected: plan.params, got: params.len() }.into());
        }
        for id in &plan.executor_locks {
            self.rels.lock(*id, LockMode::AccessShare)?;
        }
        let db = self.rels.database();
        let memory = MemoryContext::new(self.block_cache);
        let (amcache, backend) = self.rels.amcache_and_backend();
        let ctx = Ctx {
            pool: self.pool,
            db,
            config: self.config,
            params,
            memory: &memory,
            amcache: RefCell::new(amcache),
            backend,
            probe_key: Cell::new(None),
            vis: self.vis,
        };
        let Some(first) = plan.tables.first() else {
            return Ok(Vec::new());
        };
        let mut rows = Vec::new();
        ctx.scan(first, None, &mut rows)?;
        for (i, join) in plan.joins.iter().enumerate() {
            let inner = &plan.tables[i + 1];
            rows = match join.method {
                JoinMethod::NestLoop => nest_loop(&ctx, rows, inner, join)?,
                JoinMethod::HashJoin => hash_join(&ctx, rows, inner, join)?,
            };
        }
        Ok(rows.into_iter().map(|r| plan.output.iter().map(|&i| r[i].clone()).collect()).collect())
    }
}

/// For each outer row, an index scan of `inner` on the join column.
fn nest_loop(ctx: &Ctx<'_, '_>, rows: Vec<Row>, inner: &TablePlan, join: &JoinPlan) -> Result<Vec<Row>> {
    let mut joined = Vec::new();
    let mut matches = Vec::new();
    for (i, outer) in rows.into_iter().enumerate() {
        if i % 256 == 255 {
            ctx.backend.check_cancel()?;
        }
        matches.clear();
        ctx.scan(inner, Some(&outer[join.outer_column]), &mut matches)?;
        for m in &matches {
            if sql_eq(&outer[join.outer_column], &m[join.inner_column]) {
                let mut r = outer.clone();
                r.extend_from_slice(m);
                joined.push(r);
            }
        }
    }
    Ok(joined)
}

/// Builds a hash table of `inner` on the join column, probes it with each
/// outer row.
fn hash_join(ctx: &Ctx<'_, '_>, rows: Vec<Row>, inner: &TablePlan, join: &JoinPlan) -> Result<Vec<Row>> {
    let mut joined = Vec::new();
    let mut build = Vec::new();
    ctx.scan(inner, None, &mut build)?;
    let mut hash: HashMap<Value, Vec<Row>> = HashMap::new();
    for r in build {
        if let Some(k) = hash_key(&r[join.inner_column]) {
            hash.entry(k).or_default().push(r);
        }
    }
    for outer in rows {
        let Some(k) = hash_key(&outer[join.outer_column]) else { continue };
        for m in hash.get(&k).into_iter().flatten() {
            let mut r = outer.clone();
            r.extend_from_slice(m);
            joined.push(r);
        }
    }
    Ok(joined)
}
