//! std's atomics behind the facade's own types. Take them as
//! [`super::atomic`] (loom-checked in loom builds) or [`super::counter`]
//! (std's in every build), not from here.
//!
//! The workspace lint `clippy::disallowed_types` (`clippy.toml`) rejects
//! `std::sync::atomic::Atomic*` everywhere, so that an atomic taken
//! straight from std — which loom cannot see — fails CI. The lint judges a
//! type by what it resolves to, not by the path it was named through, so a
//! plain `pub use std::sync::atomic::AtomicU32` in the facade would make
//! every use of the facade fail too. Hence these `#[repr(transparent)]`
//! wrappers: distinct types with std's API (every method forwards,
//! `#[inline(always)]`, so the generated code is std's), named only here.
//! The facade hands them out as [`super::atomic`] outside loom builds and
//! as [`super::counter`] in every build.

// The one place std's atomic types may be named: see the module comment.
#![allow(clippy::disallowed_types)]

pub use std::sync::atomic::{fence, Ordering};

use std::fmt;

/// Methods every atomic has (`bool` and the integers).
macro_rules! atomic_common {
    ($name:ident, $std:ty, $t:ty) => {
        #[doc = concat!("std's [`", stringify!($std), "`] (see the module documentation).")]
        #[repr(transparent)]
        #[derive(Default)]
        pub struct $name($std);

        impl $name {
            /// A new atomic holding `v`.
            #[inline(always)]
            pub const fn new(v: $t) -> Self {
                Self(<$std>::new(v))
            }

            /// Loads the value.
            #[inline(always)]
            pub fn load(&self, order: Ordering) -> $t {
                self.0.load(order)
            }

            /// Stores `v`.
            #[inline(always)]
            pub fn store(&self, v: $t, order: Ordering) {
                self.0.store(v, order)
            }

            /// Stores `v`, returning the previous value.
            #[inline(always)]
            pub fn swap(&self, v: $t, order: Ordering) -> $t {
                self.0.swap(v, order)
            }

            /// Stores `new` if the value is `current`.
            #[inline(always)]
            pub fn compare_exchange(
                &self,
                current: $t,
                new: $t,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$t, $t> {
                self.0.compare_exchange(current, new, success, failure)
            }

            /// Stores `new` if the value is `current`; may fail spuriously.
            #[inline(always)]
            pub fn compare_exchange_weak(
                &self,
                current: $t,
                new: $t,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$t, $t> {
                self.0.compare_exchange_weak(current, new, success, failure)
            }

            /// Applies `f` until it returns `None` or its result is stored.
            #[inline(always)]
            pub fn fetch_update<F: FnMut($t) -> Option<$t>>(
                &self,
                set_order: Ordering,
                fetch_order: Ordering,
                f: F,
            ) -> Result<$t, $t> {
                self.0.fetch_update(set_order, fetch_order, f)
            }

            /// Bitwise and, returning the previous value.
            #[inline(always)]
            pub fn fetch_and(&self, v: $t, order: Ordering) -> $t {
                self.0.fetch_and(v, order)
            }

            /// Bitwise or, returning the previous value.
            #[inline(always)]
            pub fn fetch_or(&self, v: $t, order: Ordering) -> $t {
                self.0.fetch_or(v, order)
            }

            /// Bitwise xor, returning the previous value.
            #[inline(always)]
            pub fn fetch_xor(&self, v: $t, order: Ordering) -> $t {
                self.0.fetch_xor(v, order)
            }

            /// A mutable reference through exclusive access.
            #[inline(always)]
            pub fn get_mut(&mut self) -> &mut $t {
                self.0.get_mut()
            }

            /// Consumes the atomic and returns the value.
            #[inline(always)]
            pub fn into_inner(self) -> $t {
                self.0.into_inner()
            }
        }

        impl fmt::Debug for $name {
            /// As std's: the value alone.
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.0, f)
            }
        }

        impl From<$t> for $name {
            #[inline(always)]
            fn from(v: $t) -> Self {
                Self::new(v)
            }
        }
    };
}

/// The integer atomics: the common methods and arithmetic.
macro_rules! atomic_int {
    ($name:ident, $std:ty, $t:ty) => {
        atomic_common!($name, $std, $t);

        impl $name {
            /// Adds `v` (wrapping), returning the previous value.
            #[inline(always)]
            pub fn fetch_add(&self, v: $t, order: Ordering) -> $t {
                self.0.fetch_add(v, order)
            }

            /// Subtracts `v` (wrapping), returning the previous value.
            #[inline(always)]
            pub fn fetch_sub(&self, v: $t, order: Ordering) -> $t {
                self.0.fetch_sub(v, order)
            }

            /// Stores the maximum of the value and `v`, returning the previous value.
            #[inline(always)]
            pub fn fetch_max(&self, v: $t, order: Ordering) -> $t {
                self.0.fetch_max(v, order)
            }

            /// Stores the minimum of the value and `v`, returning the previous value.
            #[inline(always)]
            pub fn fetch_min(&self, v: $t, order: Ordering) -> $t {
                self.0.fetch_min(v, order)
            }
        }
    };
}

atomic_common!(AtomicBool, std::sync::atomic::AtomicBool, bool);
atomic_int!(AtomicU8, std::sync::atomic::AtomicU8, u8);
atomic_int!(AtomicU16, std::sync::atomic::AtomicU16, u16);
atomic_int!(AtomicU32, std::sync::atomic::AtomicU32, u32);
atomic_int!(AtomicU64, std::sync::atomic::AtomicU64, u64);
atomic_int!(AtomicUsize, std::sync::atomic::AtomicUsize, usize);
atomic_int!(AtomicI64, std::sync::atomic::AtomicI64, i64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wrappers_are_std_in_size_and_behaviour() {
        assert_eq!(std::mem::size_of::<AtomicU64>(), std::mem::size_of::<std::sync::atomic::AtomicU64>());
        assert_eq!(std::mem::align_of::<AtomicU64>(), std::mem::align_of::<std::sync::atomic::AtomicU64>());
        let a = AtomicU32::new(5);
        assert_eq!(a.fetch_add(2, Ordering::Relaxed), 5);
        assert_eq!(a.compare_exchange(7, 1, Ordering::AcqRel, Ordering::Acquire), Ok(7));
        assert_eq!(a.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| v.checked_sub(2)), Err(1));
        assert_eq!(format!("{a:?}"), "1");
        let b = AtomicBool::new(false);
        assert!(!b.swap(true, Ordering::Relaxed));
        assert!(b.into_inner());
    }
}
