//! The one place the workspace gets its concurrency primitives from.
//!
//! Under `cfg(loom)` every item comes from [loom], so the real code of the
//! lightweight lock, the fast-path handshake and the buffer pin protocol is
//! model-checked, not a copy of it. Otherwise the items are std's. Nothing
//! else in the workspace imports `std::sync::atomic` or `std::thread`
//! parking directly (the tokio `src/loom/` pattern); statistics counters
//! that loom need not explore come from [`counter`], which is std's in
//! every build.
//!
//! [`UnsafeCell`] has loom's closure API (`with`, `with_mut`) in both
//! builds, so loom can check every access to lock-protected data.
//!
//! Outside loom the atomics are std's behind transparent wrappers
//! (`sync/std_atomic.rs`), so that the `clippy::disallowed_types` lint can
//! reject std's atomic types everywhere else.
//!
//! [loom]: https://docs.rs/loom

pub mod std_atomic;

#[cfg(not(loom))]
mod imp {
    /// std's atomics, as the facade's own types (see `std_atomic.rs`: why).
    pub use super::std_atomic as atomic;
    pub use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
    pub use std::thread;

    /// `std::cell::UnsafeCell` with loom's closure API.
    #[derive(Debug, Default)]
    pub struct UnsafeCell<T: ?Sized>(std::cell::UnsafeCell<T>);

    impl<T> UnsafeCell<T> {
        /// Wraps `value`.
        pub const fn new(value: T) -> Self {
            Self(std::cell::UnsafeCell::new(value))
        }

        /// Consumes the cell and returns the value.
        pub fn into_inner(self) -> T {
            self.0.into_inner()
        }
    }

    impl<T: ?Sized> UnsafeCell<T> {
        /// Calls `f` with a shared raw pointer to the contents.
        #[inline(always)]
        pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
            f(self.0.get())
        }

        /// Calls `f` with a mutable raw pointer to the contents.
        #[inline(always)]
        pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
            f(self.0.get())
        }

        /// A mutable reference through exclusive access: no race is possible.
        #[inline(always)]
        pub fn get_mut(&mut self) -> &mut T {
            self.0.get_mut()
        }
    }

    impl<T> UnsafeCell<T> {
        /// A pointer for shared access that outlives a closure (a lock guard
        /// keeps one). Under loom the access is tracked while it lives.
        #[inline(always)]
        pub fn ptr(&self) -> ConstPtr<T> {
            ConstPtr(self.0.get())
        }

        /// A pointer for exclusive access that outlives a closure.
        #[inline(always)]
        pub fn ptr_mut(&self) -> MutPtr<T> {
            MutPtr(self.0.get())
        }
    }

    /// A shared-access pointer from [`UnsafeCell::ptr`].
    #[derive(Debug)]
    pub struct ConstPtr<T>(*const T);

    impl<T> ConstPtr<T> {
        /// Dereferences the pointer.
        ///
        /// # Safety
        /// No `&mut T` to the same cell may exist while the result lives.
        #[inline(always)]
        pub unsafe fn deref(&self) -> &T {
            // SAFETY: the caller guarantees no mutable access coexists; the
            // pointer came from a live `UnsafeCell`.
            unsafe { &*self.0 }
        }
    }

    /// An exclusive-access pointer from [`UnsafeCell::ptr_mut`].
    #[derive(Debug)]
    pub struct MutPtr<T>(*mut T);

    impl<T> MutPtr<T> {
        /// Dereferences the pointer for reading.
        ///
        /// # Safety
        /// No `&mut T` to the same cell may exist while the result lives.
        #[inline(always)]
        pub unsafe fn deref(&self) -> &T {
            // SAFETY: as the caller guarantees.
            unsafe { &*self.0 }
        }

        /// Dereferences the pointer for writing.
        ///
        /// # Safety
        /// No other reference to the same cell may exist while the result lives.
        #[inline(always)]
        #[allow(clippy::mut_from_ref)]
        pub unsafe fn deref_mut(&self) -> &mut T {
            // SAFETY: as the caller guarantees.
            unsafe { &mut *self.0 }
        }
    }

    // SAFETY: these pointers are only created and used by lock guards, which
    // are themselves `Send`/`Sync` exactly when sharing `T` is sound.
    unsafe impl<T: Send> Send for ConstPtr<T> {}
    // SAFETY: as above.
    unsafe impl<T: Sync> Sync for ConstPtr<T> {}
    // SAFETY: as above.
    unsafe impl<T: Send> Send for MutPtr<T> {}
    // SAFETY: as above.
    unsafe impl<T: Sync> Sync for MutPtr<T> {}
}

#[cfg(loom)]
mod imp {
    pub use loom::sync::atomic;
    pub use loom::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
    pub use loom::thread;

    /// loom's `UnsafeCell`, with the same API as the std build's wrapper.
    #[derive(Debug)]
    pub struct UnsafeCell<T>(loom::cell::UnsafeCell<T>);

    impl<T> UnsafeCell<T> {
        /// Wraps `value`.
        pub fn new(value: T) -> Self {
            Self(loom::cell::UnsafeCell::new(value))
        }

        /// Consumes the cell and returns the value.
        pub fn into_inner(self) -> T {
            self.0.into_inner()
        }

        /// Calls `f` with a shared raw pointer to the contents.
        #[inline(always)]
        pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
            self.0.with(f)
        }

        /// Calls `f` with a mutable raw pointer to the contents.
        #[inline(always)]
        pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
            self.0.with_mut(f)
        }

        /// A mutable reference through exclusive access: no race is possible.
        #[inline(always)]
        pub fn get_mut(&mut self) -> &mut T {
            // SAFETY: `&mut self` proves no other access exists.
            self.0.with_mut(|p| unsafe { &mut *p })
        }

        /// A tracked pointer for shared access (see the std build).
        #[inline(always)]
        pub fn ptr(&self) -> ConstPtr<T> {
            ConstPtr(self.0.get())
        }

        /// A tracked pointer for exclusive access (see the std build).
        #[inline(always)]
        pub fn ptr_mut(&self) -> MutPtr<T> {
            MutPtr(self.0.get_mut())
        }
    }

    /// loom's tracked shared-access pointer.
    #[derive(Debug)]
    pub struct ConstPtr<T>(loom::cell::ConstPtr<T>);

    impl<T> ConstPtr<T> {
        /// Dereferences the pointer.
        ///
        /// # Safety
        /// No `&mut T` to the same cell may exist while the result lives.
        pub unsafe fn deref(&self) -> &T {
            // SAFETY: as the caller guarantees; loom checks it.
            unsafe { self.0.deref() }
        }
    }

    /// loom's tracked exclusive-access pointer.
    #[derive(Debug)]
    pub struct MutPtr<T>(loom::cell::MutPtr<T>);

    impl<T> MutPtr<T> {
        /// Dereferences the pointer for reading.
        ///
        /// # Safety
        /// No `&mut T` to the same cell may exist while the result lives.
        pub unsafe fn deref(&self) -> &T {
            // SAFETY: as the caller guarantees; loom checks it.
            unsafe { &*self.0.deref() }
        }

        /// Dereferences the pointer for writing.
        ///
        /// # Safety
        /// No other reference to the same cell may exist while the result lives.
        #[allow(clippy::mut_from_ref)]
        pub unsafe fn deref_mut(&self) -> &mut T {
            // SAFETY: as the caller guarantees; loom checks it.
            unsafe { self.0.deref() }
        }
    }

    // SAFETY: only lock guards hold these, and they are `Send`/`Sync`
    // exactly when sharing `T` is sound.
    unsafe impl<T: Send> Send for ConstPtr<T> {}
    // SAFETY: as above.
    unsafe impl<T: Sync> Sync for ConstPtr<T> {}
    // SAFETY: as above.
    unsafe impl<T: Send> Send for MutPtr<T> {}
    // SAFETY: as above.
    unsafe impl<T: Sync> Sync for MutPtr<T> {}
}

pub use imp::*;

/// Atomics for statistics counters and for test or benchmark harness flags
/// that no modelled handshake depends on: std's in every build, so loom
/// does not spend its state space on them. Use [`atomic`] for anything a
/// correctness argument relies on.
pub mod counter {
    pub use super::std_atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
}

/// Spin-wait hint that loom understands: under loom it yields to the model
/// scheduler, otherwise it is `std::hint::spin_loop`.
#[inline(always)]
pub fn spin_loop() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}
