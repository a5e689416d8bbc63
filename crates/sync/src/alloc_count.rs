//! A counting global allocator: the system allocator, with a per-thread
//! count of the calls made to it.
//!
//! Execution memory is judged by how often a query goes to `malloc` and
//! `free` (Vondra 2024 measured the per-query round trips to glibc as the
//! wall after the lock manager). A time says little on a noisy machine; a
//! count of allocator calls per execution is exact and repeatable, so it can
//! be asserted in `cargo test`. [`CountingAlloc`] wraps
//! [`std::alloc::System`] and bumps a thread-local counter on every call:
//! one `Cell` increment in thread-local storage, cheap enough to stay in
//! the release binary (`turnstile` installs it as its `#[global_allocator]`).
//!
//! The counter is per thread because a backend is one thread: a session
//! reads [`thread_counts`] before and after an execution, and other
//! threads' allocations (the autovacuum, other backends) do not blur it.
//! Without `CountingAlloc` installed the counts stay zero
//! ([`installed`] says which).
//!
//! ```
//! use turnstile_sync::alloc_count::{thread_counts, CountingAlloc};
//! // In a binary: #[global_allocator] static A: CountingAlloc = CountingAlloc;
//! let before = thread_counts();
//! let v: Vec<u8> = Vec::with_capacity(64);
//! drop(v);
//! let calls = thread_counts().since(before);
//! // Zero here (doc tests use the plain system allocator); 1 allocation
//! // and 1 free where `CountingAlloc` is the global allocator.
//! assert_eq!(calls.allocations, calls.frees);
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    /// Allocations (`alloc`, `alloc_zeroed`, `realloc`) made by this thread.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
    /// `dealloc` calls made by this thread.
    static FREES: Cell<u64> = const { Cell::new(0) };
    /// Whether this thread ever allocated through [`CountingAlloc`].
    static SEEN: Cell<bool> = const { Cell::new(false) };
}

/// The system allocator, counting calls per thread.
#[derive(Debug, Default, Clone, Copy)]
pub struct CountingAlloc;

/// A thread's allocator calls so far (or between two readings).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct AllocCounts {
    /// `malloc`-like calls: `alloc`, `alloc_zeroed` and `realloc`.
    pub allocations: u64,
    /// `free` calls.
    pub frees: u64,
}

impl AllocCounts {
    /// The calls made since `earlier` (a reading of the same thread).
    pub fn since(self, earlier: AllocCounts) -> AllocCounts {
        AllocCounts {
            allocations: self.allocations.wrapping_sub(earlier.allocations),
            frees: self.frees.wrapping_sub(earlier.frees),
        }
    }
}

/// This thread's counts (zero unless [`CountingAlloc`] is the global
/// allocator).
pub fn thread_counts() -> AllocCounts {
    AllocCounts {
        allocations: ALLOCATIONS.try_with(Cell::get).unwrap_or(0),
        frees: FREES.try_with(Cell::get).unwrap_or(0),
    }
}

/// Whether [`CountingAlloc`] is counting this process's allocations: it
/// allocates once and looks at the count.
pub fn installed() -> bool {
    let probe = std::hint::black_box(Box::new(0u64));
    drop(probe);
    SEEN.try_with(Cell::get).unwrap_or(false)
}

#[inline]
fn bump(counter: &'static std::thread::LocalKey<Cell<u64>>) {
    // `try_with`: a thread's last frees run while its thread-locals are
    // being torn down; those go uncounted rather than panicking.
    let _ = counter.try_with(|c| c.set(c.get().wrapping_add(1)));
    let _ = SEEN.try_with(|s| s.set(true));
}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged, so `System`'s guarantees are `CountingAlloc`'s; the counters
// are const-initialised thread-locals without destructors, so touching them
// never allocates or re-enters the allocator.
unsafe impl GlobalAlloc for CountingAlloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        bump(&ALLOCATIONS);
        // SAFETY: the caller's contract for `alloc` is passed on.
        unsafe { System.alloc(layout) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        bump(&ALLOCATIONS);
        // SAFETY: the caller's contract for `alloc_zeroed` is passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        bump(&FREES);
        // SAFETY: `ptr` came from this allocator, i.e. from `System`, with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        bump(&ALLOCATIONS);
        // SAFETY: the caller's contract for `realloc` is passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}
