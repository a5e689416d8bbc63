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
use crate::types::{decode_row_append, ColumnType, Value};
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

/// A row of the combined (joined) relation.
type Row = Vec<Value>;

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
    /// Columns of the combined row (every table's).
    width: usize,
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

    /// A fresh row of the combined relation, with room for every column
    /// the joins will add (so they extend it without reallocating).
    fn decode(&self, types: &[ColumnType], bytes: &[u8]) -> Result<Row> {
        let mut row = Vec::with_capacity(self.width);
        decode_row_append(types, bytes, &mut row)?;
        Ok(row)
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
            width: plan.tables.iter().map(|t| t.column_types.len()).sum(),
        };
        let Some(first) = plan.tables.first() else {
            return Ok(Vec::new());
        };
        let mut rows = Vec::new();
        ctx.scan(first, None, &mut |bytes| {
            rows.push(ctx.decode(&first.column_types, bytes)?);
            Ok(())
        })?;
        for (i, join) in plan.joins.iter().enumerate() {
            let inner = &plan.tables[i + 1];
            rows = match join.method {
                JoinMethod::NestLoop => nest_loop(&ctx, rows, inner, join)?,
                JoinMethod::HashJoin => hash_join(&ctx, rows, inner, join)?,
            };
        }
        Ok(project(rows, &plan.output))
    }
}

/// For each outer row, an index scan of `inner` on the join column. The
/// outer row is moved into its last match (cloned only for the others).
fn nest_loop(ctx: &Ctx<'_, '_>, rows: Vec<Row>, inner: &TablePlan, join: &JoinPlan) -> Result<Vec<Row>> {
    let mut joined = Vec::with_capacity(rows.len());
    // The inner rows of one outer row, as stored, in the execution's context.
    let mut matches: AVec<&[u8], _> = AVec::new_in(ctx.memory);
    for (i, outer) in rows.into_iter().enumerate() {
        if i % 256 == 255 {
            ctx.backend.check_cancel()?;
        }
        matches.clear();
        let Some(key) = Key::of_value(&outer[join.outer_column]) else { continue };
        ctx.scan(inner, Some(&outer[join.outer_column]), &mut |bytes| {
            if tuple::key_of(&inner.column_types, bytes, join.inner_column)?.as_ref() == Some(&key) {
                matches.push(ctx.copy(bytes));
            }
            Ok(())
        })?;
        append_matches(&inner.column_types, outer, &matches, &mut joined)?;
    }
    Ok(joined)
}

/// `outer` joined with each stored row of `matches`: cloned for all but
/// the last, moved into the last.
fn append_matches(types: &[ColumnType], outer: Row, matches: &[&[u8]], joined: &mut Vec<Row>) -> Result<()> {
    let Some((last, rest)) = matches.split_last() else { return Ok(()) };
    for m in rest {
        let mut r = outer.clone();
        decode_row_append(types, m, &mut r)?;
        joined.push(r);
    }
    let mut r = outer;
    decode_row_append(types, last, &mut r)?;
    joined.push(r);
    Ok(())
}

/// Builds a hash table of `inner` on the join column, probes it with each
/// outer row. The table and the inner rows (as stored, copied out of
/// their pages) live in the execution's memory context; only the rows
/// that match are decoded.
fn hash_join(ctx: &Ctx<'_, '_>, rows: Vec<Row>, inner: &TablePlan, join: &JoinPlan) -> Result<Vec<Row>> {
    let mut joined = Vec::with_capacity(rows.len());
    if rows.is_empty() {
        return Ok(joined); // PostgreSQL's hash join skips the build for an empty outer side too
    }
    if rows.len() <= FEW_OUTER_ROWS {
        return few_outer_rows(ctx, rows, inner, join, joined);
    }
    // Each key's rows, in scan order: the first and last entry of a chain
    // through `next`.
    let mut table: HashMap<Key<'_>, (usize, usize), DefaultHashBuilder, _> =
        HashMap::with_capacity_and_hasher_in(HASH_ROWS_ESTIMATE, DefaultHashBuilder::default(), ctx.memory);
    let mut entries: AVec<(&[u8], usize), _> = AVec::with_capacity_in(HASH_ROWS_ESTIMATE, ctx.memory);
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
    let mut matches: AVec<&[u8], _> = AVec::new_in(ctx.memory);
    for outer in rows {
        let Some(&(first, _)) = Key::of_value(&outer[join.outer_column]).and_then(|k| table.get(&k)) else { continue };
        matches.clear();
        let mut at = first;
        while at != END {
            let (bytes, next) = entries[at];
            matches.push(bytes);
            at = next;
        }
        append_matches(&inner.column_types, outer, &matches, &mut joined)?;
    }
    Ok(joined)
}

/// A hash join whose outer side has at most [`FEW_OUTER_ROWS`] rows (a
/// star join's one fact row): instead of hashing every inner row, the
/// build scan compares each inner row's key with the outer keys and keeps
/// only the matches. The result is the hash join's, in its order: each
/// outer row in turn, with its matches in scan order.
fn few_outer_rows(
    ctx: &Ctx<'_, '_>,
    rows: Vec<Row>,
    inner: &TablePlan,
    join: &JoinPlan,
    mut joined: Vec<Row>,
) -> Result<Vec<Row>> {
    let keys: AVec<Option<Key<'_>>, _> = {
        let mut k = AVec::with_capacity_in(rows.len(), ctx.memory);
        k.extend(rows.iter().map(|r| Key::of_value(&r[join.outer_column])));
        k
    };
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
    drop(keys); // they borrow the outer rows, which move into the result now
    let mut matches: AVec<&[u8], _> = AVec::with_capacity_in(found.len(), ctx.memory);
    for (i, outer) in rows.into_iter().enumerate() {
        matches.clear();
        matches.extend(found.iter().filter(|(o, _)| *o == i).map(|(_, b)| *b));
        append_matches(&inner.column_types, outer, &matches, &mut joined)?;
    }
    Ok(joined)
}

/// Outer rows up to which a hash join compares keys instead of hashing.
const FEW_OUTER_ROWS: usize = 4;

/// Build-side rows a hash table is sized for before it grows (PostgreSQL's
/// planner would pass its row estimate; turnstile keeps no statistics, and
/// the workloads' hashed relations hold about a hundred rows).
const HASH_ROWS_ESTIMATE: usize = 128;

/// The end of a hash chain.
const END: usize = usize::MAX;

/// The output columns of each row, in place: the row itself when the
/// output is every column in order; otherwise each value is moved out of
/// the row (cloned only when a column is output twice).
fn project(mut rows: Vec<Row>, output: &[usize]) -> Vec<Row> {
    let identity = |r: &Row| r.len() == output.len() && output.iter().enumerate().all(|(i, &c)| i == c);
    if rows.first().is_some_and(identity) {
        return rows;
    }
    for r in &mut rows {
        let mut out = Vec::with_capacity(output.len());
        for (k, &c) in output.iter().enumerate() {
            if output[..k].contains(&c) {
                let earlier = output[..k].iter().position(|&e| e == c).unwrap_or(0);
                let v = out.get(earlier).cloned().unwrap_or(Value::Null);
                out.push(v);
            } else {
                out.push(std::mem::replace(&mut r[c], Value::Null));
            }
        }
        *r = out;
    }
    rows
}
