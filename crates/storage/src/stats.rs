//! Buffer-pool counters, striped so that counting does not put one
//! contended cache line on every buffer access.
//!
//! Each thread adds to one of [`STRIPES`] cache-padded blocks (chosen once
//! per thread); readers sum the stripes. These are statistics, not part of
//! any handshake, so they use std's atomics directly (relaxed) and compile
//! to nothing under loom, which would otherwise explore their
//! interleavings for no benefit.

/// Number of stripes.
#[cfg_attr(loom, allow(dead_code))]
pub const STRIPES: usize = 16;

/// What the pool counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub(crate) enum Counter {
    Hits = 0,
    Misses,
    Evictions,
    DirtyWritebacks,
    Reads,
    Writes,
}

#[cfg_attr(loom, allow(dead_code))]
const COUNTERS: usize = 6;

#[cfg(not(loom))]
mod imp {
    use super::{Counter, COUNTERS, STRIPES};
    use turnstile_sync::sync::counter::{AtomicU64, AtomicUsize, Ordering};
    use turnstile_sync::CachePadded;

    static NEXT_STRIPE: AtomicUsize = AtomicUsize::new(0);

    thread_local! {
        static STRIPE: usize = NEXT_STRIPE.fetch_add(1, Ordering::Relaxed) % STRIPES;
    }

    #[derive(Debug)]
    pub(crate) struct Counters {
        stripes: Box<[CachePadded<[AtomicU64; COUNTERS]>]>,
    }

    impl Counters {
        pub(crate) fn new() -> Counters {
            Counters {
                stripes: (0..STRIPES).map(|_| CachePadded::new(std::array::from_fn(|_| AtomicU64::new(0)))).collect(),
            }
        }

        #[inline]
        pub(crate) fn add(&self, counter: Counter, by: u64) {
            let stripe = STRIPE.try_with(|s| *s).unwrap_or(0);
            self.stripes[stripe][counter as usize].fetch_add(by, Ordering::Relaxed);
        }

        pub(crate) fn get(&self, counter: Counter) -> u64 {
            self.stripes.iter().map(|s| s[counter as usize].load(Ordering::Relaxed)).sum()
        }
    }
}

#[cfg(loom)]
mod imp {
    use super::Counter;

    #[derive(Debug)]
    pub(crate) struct Counters;

    impl Counters {
        pub(crate) fn new() -> Counters {
            Counters
        }

        #[inline]
        pub(crate) fn add(&self, _counter: Counter, _by: u64) {}

        pub(crate) fn get(&self, _counter: Counter) -> u64 {
            0
        }
    }
}

pub(crate) use imp::Counters;
