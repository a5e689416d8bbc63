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
use super::tuple::{self, Key};
use super::{Operand, QueryError};
use crate::btree::BTree;
use crate::catalog::AmCache;
use crate::error::Result;
use crate::heap;
use crate::lmgr::RelLocker;
use crate::memory::{BlockCache, MemoryContext};
use crate::mvcc::Visibility;
use crate::tid::Tid;
use crate::types::{decode_row_refs, ColumnType, Value, ValueRef};
use allocator_api2::vec::Vec as AVec;
use hashbrown::{DefaultHashBuilder, HashMap};
use std::cell::{Cell, RefCell};
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

/// A row of the combined (joined) relation: each joined table's stored
/// row, in query order, as bytes in the execution's memory context (a
/// tuple slot per table, as PostgreSQL's join rows are). Columns are
/// decoded only for the output, as [`ValueRef`]s that borrow these bytes.
type Row<'a> = &'a [&'a [u8]];

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

impl<'a, 'm> Ctx<'a, 'm> {
    /// Calls `emit` with the stored bytes of every row of `table` that
    /// passes its filters (and, for the inner side of a nested loop, whose
    /// index key is `outer`). Filters are checked on the stored bytes
    /// ([`tuple::key_of`]), so a row that fails them is never decoded.
    fn scan(&self, table: &TablePlan, outer: Option<&Value>, emit: &mut impl FnMut(&[u8]) -> Result<()>) -> Result<()> {
        let prune = match &table.runtime_prune {
            Some((_, op)) => operand_value(op, Some(self.params))?,
            None => None,
        };
        let mut filters = AVec::with_capacity_in(table.filters.len(), self.memory);
        for (c, op) in &table.filters {
            // As stored: `char(n)` blank-padded; a value the column cannot
            // hold (or NULL) matches nothing.
            match operand_value(op, Some(self.params))?.and_then(|v| v.coerce(table.column_types[*c])) {
                Some(v) if v != Value::Null => filters.push((*c, v)),
                _ => return Ok(()),
            }
        }
        let types = &table.column_types;
        let mut pass = |bytes: &[u8]| -> Result<()> {
            for (c, v) in filters.iter() {
                if tuple::key_of(types, bytes, *c)? != Key::of_value(v) {
                    return Ok(());
                }
            }
            emit(bytes)
        };
        for leaf in &table.leaves {
            if let (Some(v), Some(bound)) = (prune, &leaf.bound) {
                if !bound.contains(v) {
                    continue; // pruned at executor start-up
                }
            }
            let file = RelFileId::new(self.db, leaf.rel);
            match &leaf.access {
                Access::SeqScan => {
                    heap::scan_visible(self.pool, file, &self.vis, || Ok(self.backend.check_cancel()?), &mut pass)?
                }
                Access::IndexScan { .. } => self.index_scan(leaf, outer, &mut pass)?,
            }
        }
        Ok(())
    }

    /// A copy of a stored row in the execution's context: it outlives the
    /// page's content lock, and goes back with the context.
    fn copy(&self, bytes: &[u8]) -> &'a [u8] {
        let to = self.memory.alloc_uninit::<u8>(bytes.len());
        // SAFETY: `to` is a fresh region of `bytes.len()` bytes that cannot
        // overlap `bytes` (a page or another region); after the copy every
        // byte is initialised, and `MaybeUninit<u8>` has the layout of `u8`.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), to.as_mut_ptr().cast::<u8>(), bytes.len());
            &*(to as *const [MaybeUninit<u8>] as *const [u8])
        }
    }

    /// A row of the combined relation in the context: `outer`'s stored
    /// rows followed by `inner` (the first table's rows have no `outer`).
    fn row(&self, outer: Row<'a>, inner: &'a [u8]) -> Row<'a> {
        let to = self.memory.alloc_uninit::<&'a [u8]>(outer.len() + 1);
        for (slot, bytes) in to.iter_mut().zip(outer.iter().chain(std::iter::once(&inner))) {
            slot.write(bytes);
        }
        // SAFETY: the loop wrote each of the `outer.len() + 1` slots, and
        // `MaybeUninit<T>` has the layout of `T`.
        unsafe { &*(to as *const [MaybeUninit<&'a [u8]>] as *const [&'a [u8]]) }
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
    /// joins and projects. Returns the result rows as owned values.
    pub fn run(&mut self, plan: &Plan, params: &[Value]) -> Result<Vec<Vec<Value>>> {
        let mut rows = Vec::new();
        self.for_each_row(plan, params, |row| rows.push(row.iter().map(|v| v.to_owned_value()).collect()))?;
        Ok(rows)
    }

    /// Runs `plan` with `params` as [`Executor::run`] does, calling `emit`
    /// with each result row's output columns, borrowed from the rows the
    /// execution read: nothing is copied out of the execution's memory
    /// context unless `emit` copies it.
    pub fn for_each_row(&mut self, plan: &Plan, params: &[Value], mut emit: impl FnMut(&[ValueRef<'_>])) -> Result<()> {
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
            return Ok(());
        };
        let mut rows: AVec<Row<'_>, _> = AVec::new_in(&memory);
        ctx.scan(first, None, &mut |bytes| {
            rows.push(ctx.row(&[], ctx.copy(bytes)));
            Ok(())
        })?;
        for (i, join) in plan.joins.iter().enumerate() {
            let inner = &plan.tables[i + 1];
            let outer = OuterColumn::locate(&plan.tables[..=i], join.outer_column)?;
            rows = match join.method {
                JoinMethod::NestLoop => nest_loop(&ctx, &rows, &outer, inner, join)?,
                JoinMethod::HashJoin => hash_join(&ctx, &rows, &outer, inner, join)?,
            };
        }
        // Each row's columns, decoded in place, then the output's.
        let width = plan.tables.iter().map(|t| t.column_types.len()).sum();
        let identity = plan.output.len() == width && plan.output.iter().enumerate().all(|(i, &c)| i == c);
        let mut values: AVec<ValueRef<'_>, _> = AVec::with_capacity_in(width, &memory);
        let mut out: AVec<ValueRef<'_>, _> = AVec::with_capacity_in(plan.output.len(), &memory);
        for (n, row) in rows.iter().enumerate() {
            if (n as u64 + 1) % ctx.config.txn.interrupt_check_rows == 0 {
                backend.check_cancel()?;
            }
            values.clear();
            for (table, bytes) in plan.tables.iter().zip(row.iter()) {
                decode_row_refs(&table.column_types, bytes, |v| values.push(v))?;
            }
            if identity {
                emit(&values);
            } else {
                out.clear();
                out.extend(plan.output.iter().map(|&c| values.get(c).copied().unwrap_or(ValueRef::Null)));
                emit(&out);
            }
        }
        Ok(())
    }
}

/// Where a join's outer column is: which table of the combined row, and
/// which of its columns.
struct OuterColumn<'p> {
    table: usize,
    column: usize,
    types: &'p [ColumnType],
}

impl<'p> OuterColumn<'p> {
    /// Column `combined` of the combined row of `tables`.
    fn locate(tables: &'p [TablePlan], combined: usize) -> Result<OuterColumn<'p>> {
        let mut start = 0;
        for (table, t) in tables.iter().enumerate() {
            let n = t.column_types.len();
            if combined < start + n {
                return Ok(OuterColumn { table, column: combined - start, types: &t.column_types });
            }
            start += n;
        }
        Err(QueryError::InvalidPlan(format!("join column {combined} is past the outer row's {start} columns")).into())
    }

    /// The column's key in `row`; `None` for NULL.
    fn key<'b>(&self, row: Row<'b>) -> Result<Option<Key<'b>>> {
        let bytes = row.get(self.table).copied().unwrap_or_default();
        Ok(tuple::key_of(self.types, bytes, self.column)?)
    }

    /// The column's value in `row`, owned (an index probe encodes it).
    fn value(&self, row: Row<'_>) -> Result<Value> {
        let bytes = row.get(self.table).copied().unwrap_or_default();
        let (mut i, mut value) = (0, Value::Null);
        decode_row_refs(self.types, bytes, |v| {
            if i == self.column {
                value = v.to_owned_value();
            }
            i += 1;
        })?;
        Ok(value)
    }
}

type Rows<'a, 'm> = AVec<Row<'a>, &'a MemoryContext<'m>>;

/// For each outer row, an index scan of `inner` on the join column; each
/// match extends the outer row.
fn nest_loop<'a, 'm>(
    ctx: &Ctx<'a, 'm>,
    rows: &[Row<'a>],
    outer: &OuterColumn<'_>,
    inner: &TablePlan,
    join: &JoinPlan,
) -> Result<Rows<'a, 'm>> {
    let mut joined = AVec::with_capacity_in(rows.len(), ctx.memory);
    for (i, &row) in rows.iter().enumerate() {
        if (i as u64 + 1) % ctx.config.txn.interrupt_check_rows == 0 {
            ctx.backend.check_cancel()?;
        }
        let Some(key) = outer.key(row)? else { continue };
        let probe = outer.value(row)?;
        ctx.scan(inner, Some(&probe), &mut |bytes| {
            if tuple::key_of(&inner.column_types, bytes, join.inner_column)?.as_ref() == Some(&key) {
                joined.push(ctx.row(row, ctx.copy(bytes)));
            }
            Ok(())
        })?;
    }
    Ok(joined)
}

/// Builds a hash table of `inner` on the join column, probes it with each
/// outer row. The table and the inner rows (as stored, copied out of
/// their pages) live in the execution's memory context.
fn hash_join<'a, 'm>(
    ctx: &Ctx<'a, 'm>,
    rows: &[Row<'a>],
    outer: &OuterColumn<'_>,
    inner: &TablePlan,
    join: &JoinPlan,
) -> Result<Rows<'a, 'm>> {
    if rows.is_empty() {
        // PostgreSQL's hash join skips the build for an empty outer side too.
        return Ok(AVec::new_in(ctx.memory));
    }
    if rows.len() <= FEW_OUTER_ROWS {
        return few_outer_rows(ctx, rows, outer, inner, join);
    }
    // Build-side rows the hash table is sized for before it grows
    // (`executor.hash_rows_estimate`: PostgreSQL's planner would pass its
    // row estimate; turnstile keeps no statistics, and the workloads'
    // hashed relations hold about a hundred rows).
    let estimate = ctx.config.executor.hash_rows_estimate as usize;
    // Each key's rows, in scan order: the first and last entry of a chain
    // through `next`.
    let mut table: HashMap<Key<'_>, (usize, usize), DefaultHashBuilder, _> =
        HashMap::with_capacity_and_hasher_in(estimate, DefaultHashBuilder::default(), ctx.memory);
    let mut entries: AVec<(&[u8], usize), _> = AVec::with_capacity_in(estimate, ctx.memory);
    ctx.scan(inner, None, &mut |bytes| {
        let bytes = ctx.copy(bytes);
        let Some(key) = tuple::key_of(&inner.column_types, bytes, join.inner_column)? else { return Ok(()) };
        let at = entries.len();
        entries.push((bytes, END));
        match table.get_mut(&key) {
            Some((_, last)) => {
                entries[*last].1 = at;
                *last = at;
            }
            None => {
                table.insert(key, (at, at));
            }
        }
        Ok(())
    })?;
    let mut joined = AVec::with_capacity_in(rows.len(), ctx.memory);
    for &row in rows {
        let Some(key) = outer.key(row)? else { continue };
        let Some(&(first, _)) = table.get(&key) else { continue };
        let mut at = first;
        while at != END {
            let (bytes, next) = entries[at];
            joined.push(ctx.row(row, bytes));
            at = next;
        }
    }
    Ok(joined)
}

/// A hash join whose outer side has at most [`FEW_OUTER_ROWS`] rows (a
/// star join's one fact row): instead of hashing every inner row, the
/// build scan compares each inner row's key with the outer keys and keeps
/// only the matches. The result is the hash join's, in its order: each
/// outer row in turn, with its matches in scan order.
fn few_outer_rows<'a, 'm>(
    ctx: &Ctx<'a, 'm>,
    rows: &[Row<'a>],
    outer: &OuterColumn<'_>,
    inner: &TablePlan,
    join: &JoinPlan,
) -> Result<Rows<'a, 'm>> {
    let mut keys: AVec<Option<Key<'_>>, _> = AVec::with_capacity_in(rows.len(), ctx.memory);
    for &row in rows {
        keys.push(outer.key(row)?);
    }
    // (outer row, inner row as stored), in scan order.
    let mut found: AVec<(usize, &[u8]), _> = AVec::with_capacity_in(rows.len(), ctx.memory);
    ctx.scan(inner, None, &mut |bytes| {
        let Some(key) = tuple::key_of(&inner.column_types, bytes, join.inner_column)? else { return Ok(()) };
        let mut copy = None;
        for (i, k) in keys.iter().enumerate() {
            if k.as_ref() == Some(&key) {
                let bytes = *copy.get_or_insert_with(|| ctx.copy(bytes));
                found.push((i, bytes));
            }
        }
        Ok(())
    })?;
    let mut joined = AVec::with_capacity_in(found.len(), ctx.memory);
    for (i, &row) in rows.iter().enumerate() {
        joined.extend(found.iter().filter(|(o, _)| *o == i).map(|&(_, bytes)| ctx.row(row, bytes)));
    }
    Ok(joined)
}

/// Outer rows up to which a hash join compares keys instead of hashing.
const FEW_OUTER_ROWS: usize = 4;

/// The end of a hash chain.
const END: usize = usize::MAX;
