//! Per-query memory contexts with an optional per-backend block cache
//! (Vondra 2024).
//!
//! # The problem
//!
//! PostgreSQL allocates per-query memory from a memory context (`AllocSet`).
//! Small chunks are carved from blocks taken from `malloc`, doubling in size
//! (8 kB, 16 kB, …); a chunk larger than `allocChunkLimit` (8 kB) gets a
//! dedicated `malloc` block of its own. When the query ends every block goes
//! back to `free`. A query over 100 partitions allocates a B-tree scan state
//! (`BTScanOpaqueData`, ~27 kB) per partition, so megabytes go to the
//! allocator and come back every query; once the freed chunks coalesce
//! into more than glibc's trim threshold at the top of the heap, glibc
//! gives the pages back to the kernel (`sbrk`/`madvise`), and the next
//! query page-faults them in again. Vondra 2024 measured this as the next
//! bottleneck once the lock manager was fixed and proposed a backend-level
//! cache of blocks.
//!
//! # The design
//!
//! A [`MemoryContext`] is a bump allocator over blocks of [`BLOCK_MIN`] ×
//! 2ⁿ bytes (n ≤ [`MAX_CLASS`]); an allocation larger than
//! [`ALLOC_CHUNK_LIMIT`] gets a dedicated block, as in `AllocSetAlloc`.
//! Dropping the context hands its blocks to the backend's [`BlockCache`]:
//!
//! * `memory.block_cache = false` (`classic`): every block is returned to
//!   the global allocator (the system `malloc`) at once, as
//!   `AllocSetDelete` does; a dedicated block has the chunk's exact size.
//! * `memory.block_cache = true` (`scalable`): blocks are kept by size
//!   class (a dedicated block is rounded up to its power-of-two class) and
//!   served to the next context before the allocator is asked.
//!   The cache is **adaptive**: per class it keeps at most the largest
//!   number of blocks any of the last [`WINDOW`] queries used, so a
//!   backend that once ran a huge query does not keep that memory forever,
//!   and one that runs the same query repeatedly is served entirely from
//!   the cache.
//!
//! # Why this module and not an arena crate
//!
//! What is measured here is the block policy itself: `classic` must hand
//! every block back to `malloc` when the execution ends and give a large
//! chunk a dedicated block of its exact size, as `AllocSetDelete` and
//! `AllocSetAlloc` do, and `scalable` must keep blocks by size class for
//! the next context with an adaptive bound. A maintained bump arena
//! (`bumpalo`) gives neither: it grows in chunks of its own choosing, keeps
//! its largest chunk on `reset` and frees the rest to the global allocator,
//! with no hook for a per-backend cache. The arena part is small (a bump
//! offset in the current block); the collections that live in a context
//! come from maintained crates (`hashbrown` and `allocator_api2` through
//! `impl Allocator for &MemoryContext`).
//!
//! Counters ([`MemoryStats`]) say how many blocks came from the cache and
//! how many from the allocator; [`minor_faults`] reads the thread's minor
//! page faults so a caller can report faults per query.
//!
//! # Safety
//!
//! Allocation hands out `&mut [T]` for `T: Copy` (no destructors to run)
//! carved from a block the context owns; blocks never move or shrink while
//! the context lives, and every returned slice borrows the context, so no
//! slice outlives its block. Each carve is aligned for `T` and disjoint
//! from every other (the bump offset only grows).
//!
//! ```
//! use turnstile_engine::memory::{BlockCache, MemoryContext};
//! let mut cache = BlockCache::new(true);
//! for _ in 0..3 {
//!     let ctx = MemoryContext::new(&mut cache);
//!     let items: &mut [u64] = ctx.alloc_slice(1358);
//!     items[0] = 7;
//!     assert_eq!(items.len(), 1358);
//! }
//! let s = cache.stats();
//! assert_eq!(s.blocks_from_allocator, 1);
//! assert_eq!(s.blocks_from_cache, 2);
//! ```

use std::alloc::{alloc, dealloc, Layout};
use std::cell::{Cell, RefCell};
use std::mem::MaybeUninit;
use std::ptr::NonNull;

/// The smallest block (PostgreSQL's `ALLOCSET_DEFAULT_INITSIZE`).
pub const BLOCK_MIN: usize = 8 * 1024;
/// Size classes `BLOCK_MIN << 0 ..= BLOCK_MIN << MAX_CLASS` (8 kB … 8 MB,
/// `ALLOCSET_DEFAULT_MAXSIZE`). Larger single allocations get an exact
/// block that is never cached.
pub const MAX_CLASS: usize = 10;
/// Chunks larger than this get a dedicated block (PostgreSQL's
/// `allocChunkLimit` for the default context sizes).
pub const ALLOC_CHUNK_LIMIT: usize = 8 * 1024;
/// Queries the adaptive cache remembers when sizing itself.
pub const WINDOW: usize = 16;
/// Alignment of every block.
const BLOCK_ALIGN: usize = 64;

/// One block of raw memory, owned.
#[derive(Debug)]
struct Block {
    ptr: NonNull<u8>,
    size: usize,
}

// SAFETY: a block is plain owned memory with no thread affinity.
unsafe impl Send for Block {}

impl Block {
    fn layout(size: usize) -> Layout {
        // Sizes are at least BLOCK_MIN and at most isize::MAX in practice;
        // an impossible layout is a broken invariant, not user error.
        Layout::from_size_align(size, BLOCK_ALIGN).expect("block size fits a layout")
    }

    fn allocate(size: usize) -> Block {
        let layout = Block::layout(size);
        // SAFETY: `layout` has a non-zero size (≥ BLOCK_MIN). The memory is
        // left uninitialised, as `malloc` leaves it for `AllocSetAlloc`;
        // nothing reads it before `alloc_slice` writes it.
        let raw = unsafe { alloc(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        Block { ptr, size }
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from `alloc` with this exact layout and
        // is freed once, here.
        unsafe { dealloc(self.ptr.as_ptr(), Block::layout(self.size)) }
    }
}

/// Counters of one backend's block cache (`memory_stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct MemoryStats {
    /// Contexts created (≈ queries).
    pub contexts: u64,
    /// Allocations served by a context (slices handed out).
    pub allocations: u64,
    /// Blocks taken from the cache.
    pub blocks_from_cache: u64,
    /// Blocks taken from the global allocator.
    pub blocks_from_allocator: u64,
    /// Blocks given back to the global allocator.
    pub blocks_freed: u64,
    /// Bytes held in the cache right now.
    pub cached_bytes: u64,
}

impl MemoryStats {
    /// Adds `other`'s counters (the cached bytes too: a total of holdings).
    pub fn add(&mut self, other: &MemoryStats) {
        self.contexts += other.contexts;
        self.allocations += other.allocations;
        self.blocks_from_cache += other.blocks_from_cache;
        self.blocks_from_allocator += other.blocks_from_allocator;
        self.blocks_freed += other.blocks_freed;
        self.cached_bytes += other.cached_bytes;
    }

    /// Share of blocks served from the cache.
    pub fn cache_hit_ratio(&self) -> f64 {
        let total = self.blocks_from_cache + self.blocks_from_allocator;
        if total == 0 {
            return 0.0;
        }
        self.blocks_from_cache as f64 / total as f64
    }
}

/// A backend's cache of memory blocks by size class (or, disabled, a
/// pass-through to the allocator that still counts).
#[derive(Debug)]
pub struct BlockCache {
    enabled: bool,
    free: Vec<Vec<Block>>,
    /// Blocks of each class used by each of the last `WINDOW` contexts.
    history: Vec<[u32; MAX_CLASS + 1]>,
    stats: MemoryStats,
}

impl BlockCache {
    /// A cache; `enabled` is `memory.block_cache`.
    pub fn new(enabled: bool) -> BlockCache {
        BlockCache {
            enabled,
            free: (0..=MAX_CLASS).map(|_| Vec::new()).collect(),
            history: Vec::with_capacity(WINDOW),
            stats: MemoryStats::default(),
        }
    }

    /// Whether blocks are kept across contexts.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The counters.
    pub fn stats(&self) -> MemoryStats {
        self.stats
    }

    fn take(&mut self, class: usize) -> Block {
        if let Some(b) = self.free.get_mut(class).and_then(Vec::pop) {
            self.stats.blocks_from_cache += 1;
            self.stats.cached_bytes -= b.size as u64;
            return b;
        }
        self.stats.blocks_from_allocator += 1;
        Block::allocate(BLOCK_MIN << class)
    }

    /// Takes back a finished context's blocks; `used` counts them by class.
    fn give_back(&mut self, blocks: Vec<(Option<usize>, Block)>, used: [u32; MAX_CLASS + 1]) {
        if self.history.len() == WINDOW {
            self.history.remove(0);
        }
        self.history.push(used);
        self.put_back(blocks);
    }

    /// Caches or frees `blocks` under the policy, without recording a
    /// query in the history (a reset context has not ended yet).
    fn put_back(&mut self, blocks: Vec<(Option<usize>, Block)>) {
        for (class, block) in blocks {
            match class {
                Some(c) if self.enabled && (self.free[c].len() as u32) < self.keep(c) => {
                    self.stats.cached_bytes += block.size as u64;
                    self.free[c].push(block);
                }
                _ => {
                    self.stats.blocks_freed += 1;
                    drop(block);
                }
            }
        }
        // Shrink classes the recent workload no longer needs.
        for c in 0..=MAX_CLASS {
            let keep = self.keep(c) as usize;
            while self.free[c].len() > keep {
                if let Some(b) = self.free[c].pop() {
                    self.stats.cached_bytes -= b.size as u64;
                    self.stats.blocks_freed += 1;
                }
            }
        }
    }

    /// Blocks of class `c` worth keeping: the most any recent query used.
    fn keep(&self, c: usize) -> u32 {
        self.history.iter().map(|h| h[c]).max().unwrap_or(0)
    }
}

/// A per-query memory context: a bump allocator whose blocks go back to
/// the [`BlockCache`] when it is dropped.
#[derive(Debug)]
pub struct MemoryContext<'c> {
    cache: RefCell<&'c mut BlockCache>,
    blocks: RefCell<Vec<(Option<usize>, Block)>>,
    /// Start of the free part of the current block, and its end.
    cursor: Cell<(usize, usize)>,
    next_class: Cell<usize>,
    used: Cell<[u32; MAX_CLASS + 1]>,
    allocations: Cell<u64>,
    /// Bytes handed out since creation or the last [`MemoryContext::reset`].
    carved: Cell<usize>,
}

impl<'c> MemoryContext<'c> {
    /// A new, empty context drawing on `cache`.
    pub fn new(cache: &'c mut BlockCache) -> MemoryContext<'c> {
        cache.stats.contexts += 1;
        MemoryContext {
            cache: RefCell::new(cache),
            blocks: RefCell::new(Vec::new()),
            cursor: Cell::new((0, 0)),
            next_class: Cell::new(0),
            used: Cell::new([0; MAX_CLASS + 1]),
            allocations: Cell::new(0),
            carved: Cell::new(0),
        }
    }

    /// A slice of `n` default values, valid while the context lives.
    #[allow(clippy::mut_from_ref)] // each call carves a fresh, disjoint region
    pub fn alloc_slice<T: Copy + Default>(&self, n: usize) -> &mut [T] {
        let slots = self.alloc_uninit::<T>(n);
        for slot in slots.iter_mut() {
            slot.write(T::default());
        }
        // SAFETY: every element was written just above; `MaybeUninit<T>`
        // has the layout of `T`.
        unsafe { &mut *(slots as *mut [MaybeUninit<T>] as *mut [T]) }
    }

    /// An uninitialised slice of `n` values, valid while the context lives —
    /// what `palloc` returns: the caller writes an element before reading
    /// it, and pages it never touches are never faulted in.
    #[allow(clippy::mut_from_ref)] // each call carves a fresh, disjoint region
    pub fn alloc_uninit<T: Copy>(&self, n: usize) -> &mut [MaybeUninit<T>] {
        self.allocations.set(self.allocations.get() + 1);
        let size = std::mem::size_of::<T>().checked_mul(n).expect("allocation size overflows usize");
        let align = std::mem::align_of::<T>();
        assert!(align <= BLOCK_ALIGN, "alignment {align} exceeds the block alignment");
        if size == 0 {
            return &mut [];
        }
        let at = self.carve(size, align);
        // SAFETY: `at..at + size` lies inside a block this context owns and
        // never frees or moves before it is dropped (which needs `&mut
        // self`, so no returned slice is alive then); the region is disjoint
        // from every earlier one because the cursor only advances; `at` is
        // aligned for `T`; a `MaybeUninit<T>` may hold any bytes, so no
        // initialisation is needed.
        unsafe { std::slice::from_raw_parts_mut(at as *mut MaybeUninit<T>, n) }
    }

    /// Reserves `size` bytes aligned to `align` and returns their address.
    fn carve(&self, size: usize, align: usize) -> usize {
        self.carved.set(self.carved.get() + size);
        if size > ALLOC_CHUNK_LIMIT {
            return self.dedicated_block(size);
        }
        let (start, end) = self.cursor.get();
        let mut at = start.next_multiple_of(align);
        if start == 0 || at + size > end {
            self.new_block(size);
            at = self.cursor.get().0;
        }
        let (_, end) = self.cursor.get();
        debug_assert!(at + size <= end);
        self.cursor.set((at + size, end));
        at
    }

    /// A block for one large chunk (`AllocSetAlloc`'s "big chunk" path):
    /// from the cache by size class when it is enabled, else exactly as
    /// large as the chunk, straight from the allocator. The current block
    /// stays current.
    fn dedicated_block(&self, size: usize) -> usize {
        let class = (0..=MAX_CLASS).find(|&c| (BLOCK_MIN << c) >= size);
        let mut cache = self.cache.borrow_mut();
        let (key, block) = match class {
            Some(c) if cache.enabled => {
                let mut used = self.used.get();
                used[c] += 1;
                self.used.set(used);
                (Some(c), cache.take(c))
            }
            _ => {
                cache.stats.blocks_from_allocator += 1;
                (None, Block::allocate(size.next_multiple_of(BLOCK_ALIGN)))
            }
        };
        let at = block.ptr.as_ptr() as usize;
        self.blocks.borrow_mut().push((key, block));
        at
    }

    /// Starts a new current block for a chunk of `size` ≤
    /// [`ALLOC_CHUNK_LIMIT`] bytes: the next class in the doubling series.
    fn new_block(&self, size: usize) {
        debug_assert!(size <= ALLOC_CHUNK_LIMIT && ALLOC_CHUNK_LIMIT <= BLOCK_MIN);
        let class = self.next_class.get();
        self.next_class.set((class + 1).min(MAX_CLASS));
        let mut used = self.used.get();
        used[class] += 1;
        self.used.set(used);
        let block = self.cache.borrow_mut().take(class);
        let start = block.ptr.as_ptr() as usize;
        self.cursor.set((start, start + block.size));
        self.blocks.borrow_mut().push((Some(class), block));
    }

    /// Bytes of blocks this context holds.
    pub fn block_bytes(&self) -> usize {
        self.blocks.borrow().iter().map(|(_, b)| b.size).sum()
    }

    /// Bytes handed out since the context was made or last reset.
    pub fn used_bytes(&self) -> usize {
        self.carved.get()
    }

    /// Empties the context for reuse (PostgreSQL's `MemoryContextReset`,
    /// which the executor calls on its per-tuple `ExprContext` between
    /// rows). The first block — `AllocSet`'s keeper block — is rewound and
    /// kept, so a context whose rows each fit one block never touches the
    /// allocator again; every other block goes back to the [`BlockCache`]
    /// under its policy (cached by `scalable`, freed by `classic`).
    /// `&mut self`: nothing allocated from the context is still borrowed.
    pub fn reset(&mut self) {
        let blocks = self.blocks.get_mut();
        let keeper = (!blocks.is_empty() && blocks[0].0 == Some(0)).then(|| blocks.remove(0));
        let rest = std::mem::take(blocks);
        self.cache.get_mut().put_back(rest);
        match keeper {
            Some(k) => {
                let start = k.1.ptr.as_ptr() as usize;
                self.cursor.set((start, start + k.1.size));
                blocks.push(k);
                self.next_class.set(1);
            }
            None => {
                self.cursor.set((0, 0));
                self.next_class.set(0);
            }
        }
        self.carved.set(0);
    }
}

/// An execution's hash tables and row buffers are allocated in its
/// context: `hashbrown::HashMap::with_capacity_and_hasher_in(n, s, ctx)`,
/// `allocator_api2::vec::Vec::with_capacity_in(n, ctx)`. Freeing is a no-op
/// (the memory goes back with the context, as `pfree` inside a context
/// that is about to be reset is wasted work); a growing collection leaves
/// its old buffer behind in the block, so callers size it from the plan's
/// row estimate.
// SAFETY: `allocate` returns a fresh region carved by `carve` — inside a
// block the context owns, aligned as asked (≤ BLOCK_ALIGN, else an error),
// disjoint from every other region, and valid until the context is dropped
// or reset, both of which need `&mut MemoryContext` and so cannot happen
// while this shared reference (and any collection holding it) is alive.
unsafe impl allocator_api2::alloc::Allocator for &MemoryContext<'_> {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, allocator_api2::alloc::AllocError> {
        if layout.align() > BLOCK_ALIGN {
            return Err(allocator_api2::alloc::AllocError);
        }
        if layout.size() == 0 {
            // A dangling, aligned pointer: a zero-sized region is never read.
            let dangling = NonNull::new(layout.align() as *mut u8).ok_or(allocator_api2::alloc::AllocError)?;
            return Ok(NonNull::slice_from_raw_parts(dangling, 0));
        }
        self.allocations.set(self.allocations.get() + 1);
        let at = self.carve(layout.size(), layout.align());
        let ptr = NonNull::new(at as *mut u8).ok_or(allocator_api2::alloc::AllocError)?;
        Ok(NonNull::slice_from_raw_parts(ptr, layout.size()))
    }

    unsafe fn deallocate(&self, _ptr: NonNull<u8>, _layout: Layout) {
        // Freed with the context.
    }
}

impl Drop for MemoryContext<'_> {
    fn drop(&mut self) {
        let blocks = std::mem::take(self.blocks.get_mut());
        let cache = self.cache.get_mut();
        cache.stats.allocations += self.allocations.get();
        cache.give_back(blocks, self.used.get());
    }
}

/// Minor page faults of the calling thread so far (`getrusage(RUSAGE_THREAD)`).
pub fn minor_faults() -> u64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `usage` points to writable memory of the right type; the call
    // fills it in and has no other effect.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr()) };
    if rc != 0 {
        return 0;
    }
    // SAFETY: getrusage succeeded, so it initialised the struct (and it was
    // zeroed before anyway).
    let usage = unsafe { usage.assume_init() };
    usage.ru_minflt.max(0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ~27 kB B-tree scan state of Vondra 2024: item positions of one
    /// page.
    fn scan_state(ctx: &MemoryContext<'_>) {
        let items: &mut [u64] = ctx.alloc_slice(1358);
        let tuples: &mut [u8] = ctx.alloc_slice(8192);
        items[1357] = 1;
        tuples[8191] = 1;
    }

    /// Loop counts: the tests' sizes, or a few under Miri (which runs
    /// them about a thousand times slower).
    const fn scaled(n: usize, miri: usize) -> usize {
        if cfg!(miri) {
            miri
        } else {
            n
        }
    }

    #[test]
    fn a_repeated_query_is_served_from_the_cache_when_enabled() {
        let (partitions, queries) = (scaled(100, 4), scaled(20, 12));
        for enabled in [false, true] {
            let mut cache = BlockCache::new(enabled);
            let query = |cache: &mut BlockCache| {
                let ctx = MemoryContext::new(cache);
                for _ in 0..partitions {
                    scan_state(&ctx);
                }
            };
            query(&mut cache);
            let warm = cache.stats();
            for _ in 1..queries {
                query(&mut cache);
            }
            let s = cache.stats();
            let fresh = s.blocks_from_allocator - warm.blocks_from_allocator;
            if enabled {
                assert_eq!(fresh, 0, "a warm cache still asked the allocator ({s:?})");
                assert!(s.cache_hit_ratio() > 0.9, "hit ratio {} ({s:?})", s.cache_hit_ratio());
            } else {
                // Every scan state is a dedicated block, freed at query end.
                assert!(fresh >= ((queries - 1) * partitions) as u64, "{fresh} blocks from the allocator");
                assert_eq!(s.blocks_from_cache, 0);
                assert_eq!(s.blocks_freed, s.blocks_from_allocator);
            }
            assert_eq!(s.contexts, queries as u64);
            assert_eq!(s.allocations, (queries * partitions * 2) as u64);
        }
    }

    /// The per-tuple context: a reset between rows returns it to empty and
    /// keeps its first block, so rows that fit one block never go back to
    /// the allocator; blocks beyond the first follow the cache policy.
    #[test]
    fn a_reset_empties_the_per_tuple_context_and_keeps_its_keeper_block() {
        for enabled in [false, true] {
            let mut cache = BlockCache::new(enabled);
            let mut per_tuple = MemoryContext::new(&mut cache);
            for row in 0..scaled(1000, 20) as u64 {
                let key: &mut [u64] = per_tuple.alloc_slice(16);
                key[0] = row;
                assert_eq!(per_tuple.used_bytes(), 128);
                per_tuple.reset();
                assert_eq!(per_tuple.used_bytes(), 0);
                assert_eq!(per_tuple.block_bytes(), BLOCK_MIN, "the keeper block stays");
            }
            // A row that needed more than the keeper: the extra blocks go
            // back at the reset, under the block policy.
            for _ in 0..3 {
                let _: &mut [u8] = per_tuple.alloc_slice(BLOCK_MIN / 2);
            }
            assert!(per_tuple.block_bytes() > BLOCK_MIN);
            per_tuple.reset();
            assert_eq!(per_tuple.block_bytes(), BLOCK_MIN);
            drop(per_tuple);
            let s = cache.stats();
            assert_eq!(s.blocks_from_allocator, 2, "{s:?}: the keeper, then one block for the big row");
            assert_eq!(s.contexts, 1);
        }
    }

    /// The per-execution context: hash tables and vectors allocated in it
    /// (through `allocator_api2`) outlive every row, cost no allocator
    /// call of their own, and go back with the context — to the cache
    /// under `scalable`, to `free` under `classic`.
    #[test]
    fn collections_live_in_the_execution_context_until_it_ends() {
        for enabled in [false, true] {
            let mut cache = BlockCache::new(enabled);
            for _ in 0..3 {
                let ctx = MemoryContext::new(&mut cache);
                let mut table: hashbrown::HashMap<u64, u64, hashbrown::DefaultHashBuilder, _> =
                    hashbrown::HashMap::with_capacity_and_hasher_in(128, Default::default(), &ctx);
                let mut rows = allocator_api2::vec::Vec::with_capacity_in(128, &ctx);
                let n = scaled(1000, 300) as u64;
                for i in 0..n {
                    table.insert(i, i * 2);
                    rows.push(i);
                }
                assert_eq!(table.get(&(n - 1)), Some(&(2 * n - 2)));
                assert_eq!(rows.iter().sum::<u64>(), (n - 1) * n / 2);
                assert!(ctx.used_bytes() > n as usize * 16, "grown in the context");
                drop((table, rows));
            }
            let s = cache.stats();
            assert_eq!(s.contexts, 3);
            if enabled {
                let first = s.blocks_from_allocator;
                assert!(s.blocks_from_cache > 0 && s.blocks_from_cache >= first, "{s:?}");
            } else {
                assert_eq!(s.blocks_from_cache, 0);
                assert_eq!(s.blocks_freed, s.blocks_from_allocator, "classic frees every block at the end");
            }
        }
    }

    #[test]
    fn large_chunks_get_dedicated_blocks_and_small_ones_share() {
        let mut cache = BlockCache::new(false);
        let ctx = MemoryContext::new(&mut cache);
        let small: &mut [u8] = ctx.alloc_slice(ALLOC_CHUNK_LIMIT);
        let large: &mut [u8] = ctx.alloc_slice(ALLOC_CHUNK_LIMIT + 1);
        let small2: &mut [u8] = ctx.alloc_slice(16);
        small.fill(1);
        large.fill(2);
        small2.fill(3);
        // The dedicated block did not end the current one: 8 kB + 16 bytes
        // of small chunks fit in the first two doubling blocks.
        assert_eq!(ctx.block_bytes(), BLOCK_MIN + (BLOCK_MIN << 1) + (ALLOC_CHUNK_LIMIT + 1).next_multiple_of(64));
        assert!(small.iter().all(|&x| x == 1) && large.iter().all(|&x| x == 2));
    }

    #[test]
    fn slices_are_disjoint_aligned_and_defaulted() {
        let mut cache = BlockCache::new(true);
        let ctx = MemoryContext::new(&mut cache);
        let a: &mut [u8] = ctx.alloc_slice(3);
        let b: &mut [u64] = ctx.alloc_slice(5);
        let c: &mut [u32] = ctx.alloc_slice(BLOCK_MIN); // forces a new block
        a.fill(0xff);
        b.fill(u64::MAX);
        c.fill(7);
        assert_eq!(b.as_ptr() as usize % 8, 0);
        assert!(a.iter().all(|&x| x == 0xff));
        assert!(b.iter().all(|&x| x == u64::MAX));
        if !cfg!(miri) {
            let huge: &mut [u8] = ctx.alloc_slice((BLOCK_MIN << MAX_CLASS) + 1);
            assert_eq!(huge.len(), (BLOCK_MIN << MAX_CLASS) + 1);
        }
        drop(ctx);
        let ctx = MemoryContext::new(&mut cache);
        let reused: &mut [u64] = ctx.alloc_slice(5);
        assert!(reused.iter().all(|&x| x == 0), "a reused block leaked old values");
    }

    #[test]
    fn uninitialised_slices_are_disjoint_from_initialised_ones() {
        let mut cache = BlockCache::new(false);
        let ctx = MemoryContext::new(&mut cache);
        let a: &mut [MaybeUninit<u32>] = ctx.alloc_uninit(3000);
        let b: &mut [u32] = ctx.alloc_slice(3000);
        for (i, x) in a.iter_mut().enumerate() {
            x.write(i as u32);
        }
        assert!(b.iter().all(|&x| x == 0), "writing one slice changed another");
        assert_eq!(ctx.alloc_uninit::<u64>(0).len(), 0);
    }

    #[test]
    fn the_cache_shrinks_when_queries_get_smaller() {
        let mut cache = BlockCache::new(true);
        {
            let ctx = MemoryContext::new(&mut cache);
            for _ in 0..scaled(200, 24) {
                scan_state(&ctx);
            }
        }
        let big = cache.stats().cached_bytes;
        for _ in 0..WINDOW + 1 {
            let ctx = MemoryContext::new(&mut cache);
            scan_state(&ctx);
        }
        assert!(cache.stats().cached_bytes < big / 4, "{} vs {big}", cache.stats().cached_bytes);
    }

    #[test]
    #[cfg_attr(miri, ignore = "reads /proc")]
    fn minor_faults_count_touching_new_memory() {
        let before = minor_faults();
        let v = vec![1u8; 16 << 20];
        std::hint::black_box(&v);
        assert!(minor_faults() > before, "touching 16 MB caused no minor fault");
    }
}
