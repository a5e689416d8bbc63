//! Buffer-pool counters, striped so that counting does not put one
//! contended cache line on every buffer access.
//!
//! Each thread adds to one of [`STRIPES`] cache-padded blocks (chosen once
//! per thread); readers sum the stripes. These are statistics, not part of
//! any handshake, so they use std's atomics directly (relaxed) and compile
//! to nothing under loom, which would otherwise explore their
//! interleavings for no benefit.
//!
//! [`WaitHistogram`] keeps the distribution of one kind of lock wait (the
//! pool's exclusive `BufferMapping` waits, Postgres Pro 2018's figure). It is
//! written only after a wait, so its mutex is never on an uncontended
//! path.

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
    /// Mapping partitions taken exclusive (fast or slow path).
    ExclusiveMapping,
    /// Of those, the ones that waited.
    ExclusiveMappingWaits,
    /// Their total wait, in nanoseconds.
    ExclusiveMappingWaitNs,
    /// Hits found through a lookup hint, without the mapping table.
    HintHits,
}

#[cfg_attr(loom, allow(dead_code))]
const COUNTERS: usize = 10;
const _: () = assert!(Counter::HintHits as usize + 1 == COUNTERS);

/// The longest wait a [`WaitHistogram`] tells apart: 2 h. Postgres Pro 2018 saw one
/// exclusive `BufferMapping` wait of 3706 s; longer ones are recorded as
/// this value (`saturating_record` on fixed bounds), and the count stays
/// exact.
pub(crate) const WAIT_NS_MAX: u64 = 2 * 3600 * 1_000_000_000;

/// A new, empty histogram of waits in nanoseconds: 1 ns to
/// [`WAIT_NS_MAX`], 3 significant digits.
pub(crate) fn wait_histogram() -> hdrhistogram::Histogram<u64> {
    hdrhistogram::Histogram::new_with_bounds(1, WAIT_NS_MAX, 3).expect("constant bounds are valid")
}

#[cfg(not(loom))]
mod imp {
    use super::{Counter, COUNTERS, STRIPES};
    use hdrhistogram::Histogram;
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

    /// A histogram of waits behind a mutex. Recording takes the mutex, so
    /// call [`WaitHistogram::record`] only after a wait, never on a fast
    /// path.
    #[derive(Debug)]
    pub(crate) struct WaitHistogram {
        waits_ns: parking_lot::Mutex<Histogram<u64>>,
    }

    impl WaitHistogram {
        pub(crate) fn new() -> WaitHistogram {
            WaitHistogram { waits_ns: parking_lot::Mutex::new(super::wait_histogram()) }
        }

        /// Records one wait of `wait_ns` (> 0) nanoseconds.
        #[cold]
        pub(crate) fn record(&self, wait_ns: u64) {
            debug_assert!(wait_ns > 0, "recorded an uncontended acquisition as a wait");
            self.waits_ns.lock().saturating_record(wait_ns);
        }

        /// Every wait recorded so far.
        pub(crate) fn snapshot(&self) -> Histogram<u64> {
            self.waits_ns.lock().clone()
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

    /// Compiled out under loom, like the counters.
    #[derive(Debug)]
    pub(crate) struct WaitHistogram;

    impl WaitHistogram {
        pub(crate) fn new() -> WaitHistogram {
            WaitHistogram
        }

        #[inline]
        pub(crate) fn record(&self, _wait_ns: u64) {}

        pub(crate) fn snapshot(&self) -> hdrhistogram::Histogram<u64> {
            super::wait_histogram()
        }
    }
}

pub(crate) use imp::{Counters, WaitHistogram};
