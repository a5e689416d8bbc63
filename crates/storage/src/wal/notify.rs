//! [`WaitList`]: threads sleeping until a position (the flushed LSN, or
//! the written one) reaches their target, woken by the one who advances
//! it — only the ones the advance covers.
//!
//! Sleepers are kept in shards by target (`target / SHARD_BYTES mod
//! shards`); an advance from `old` to `new` visits only the shards of
//! `(old, new]` and wakes, in each, the sleepers whose target is `≤ new`
//! (Aether's "wake exactly the committers the flush covers"). A shard's
//! mutex is a sleep queue's, taken only by a thread that is going to
//! sleep or by the waker after an advance — never on the path of a
//! record that does not wait, like the wait-queue mutex inside an
//! `LwLock`.
//!
//! No lost wake-up: the sleeper counts itself in `sleepers`, then a
//! `SeqCst` fence, then re-reads the position; the waker stores the
//! position, then a `SeqCst` fence, then reads `sleepers`. One of them
//! sees the other's store (fences, not `SeqCst` accesses, so that loom,
//! which models only the fences' total order, checks the same argument). A wake-up that reaches a thread before it
//! parks is kept as its park token. `tests/loom_wal.rs` models it.
//!
//! ```
//! use turnstile_storage::wal::notify::WaitList;
//! use std::sync::atomic::{AtomicU64, Ordering};
//! let list = WaitList::new(4);
//! let pos = AtomicU64::new(10);
//! list.wait(5, || pos.load(Ordering::SeqCst), || false); // already there: returns at once
//! list.wake(0, 10);
//! ```

use crate::sync::atomic::{fence, AtomicU64, Ordering};
use crate::sync::thread::{self, Thread};
use crate::sync::Mutex;
use turnstile_sync::CachePadded;

/// Bytes of LSN space per shard.
pub const SHARD_BYTES: u64 = 4096;
/// Polls of the position before a waiter sleeps.
#[cfg(not(loom))]
const SPINS: u32 = 64;
#[cfg(loom)]
const SPINS: u32 = 0;

/// One shard: sleepers and their targets.
type Shard = Mutex<Vec<(u64, Thread)>>;

/// Sleepers by target position.
#[derive(Debug)]
pub struct WaitList {
    shards: Box<[CachePadded<Shard>]>,
    sleepers: AtomicU64,
}

impl WaitList {
    /// A list of `shards` shards (a power of two).
    pub fn new(shards: usize) -> WaitList {
        assert!(shards.is_power_of_two(), "wait-list shards are a power of two");
        WaitList {
            shards: (0..shards).map(|_| CachePadded::new(Mutex::new(Vec::new()))).collect(),
            sleepers: AtomicU64::new(0),
        }
    }

    fn shard(&self, target: u64) -> &Shard {
        &self.shards[((target / SHARD_BYTES) as usize) & (self.shards.len() - 1)]
    }

    /// Returns once `position() ≥ target` or `stop()`; polls a little,
    /// then sleeps. Returns whether it slept.
    pub fn wait(&self, target: u64, position: impl Fn() -> u64, stop: impl Fn() -> bool) -> bool {
        for _ in 0..SPINS {
            if position() >= target || stop() {
                return false;
            }
            crate::sync::spin_loop();
        }
        if position() >= target || stop() {
            return false;
        }
        {
            let mut shard = self.shard(target).lock().unwrap_or_else(|e| e.into_inner());
            shard.push((target, thread::current()));
            self.sleepers.fetch_add(1, Ordering::SeqCst);
        }
        fence(Ordering::SeqCst);
        while position() < target && !stop() {
            thread::park();
        }
        // Leave the list if no waker took us out (we saw the position first).
        let mut shard = self.shard(target).lock().unwrap_or_else(|e| e.into_inner());
        let me = thread::current().id();
        if let Some(i) = shard.iter().position(|(t, th)| *t == target && th.id() == me) {
            shard.swap_remove(i);
            self.sleepers.fetch_sub(1, Ordering::SeqCst);
        }
        true
    }

    /// The position moved from `old` to `new` (stored `SeqCst` before this
    /// call): wakes the sleepers whose target it reached.
    pub fn wake(&self, old: u64, new: u64) {
        fence(Ordering::SeqCst);
        if self.sleepers.load(Ordering::SeqCst) == 0 || new <= old {
            return;
        }
        let n = self.shards.len() as u64;
        let (first, last) = (old / SHARD_BYTES, new / SHARD_BYTES);
        let count = (last - first + 1).min(n);
        for i in 0..count {
            self.wake_shard((first + i) * SHARD_BYTES, |t| t <= new);
        }
    }

    /// Wakes every sleeper (the log failed or shuts down; each re-checks).
    pub fn wake_all(&self) {
        for i in 0..self.shards.len() as u64 {
            self.wake_shard(i * SHARD_BYTES, |_| true);
        }
    }

    fn wake_shard(&self, at: u64, covered: impl Fn(u64) -> bool) {
        let woken: Vec<Thread> = {
            let mut shard = self.shard(at).lock().unwrap_or_else(|e| e.into_inner());
            let mut woken = Vec::new();
            let mut i = 0;
            while i < shard.len() {
                if covered(shard[i].0) {
                    woken.push(shard.swap_remove(i).1);
                } else {
                    i += 1;
                }
            }
            self.sleepers.fetch_sub(woken.len() as u64, Ordering::SeqCst);
            woken
        };
        for t in woken {
            t.unpark();
        }
    }
}
