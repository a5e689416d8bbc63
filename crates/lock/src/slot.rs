//! [`BackendSlot`]: the shared state of one backend (PostgreSQL's
//! `PGPROC`, lock part), and the values of its wait status. The manager
//! owns the slots; a [`Backend`](crate::Backend) handle owns one while it
//! is registered.

use crate::fastpath::FastPath;
use crate::lockfree::SlotArray;
use crate::stats::CounterBlock;
use crate::sync::atomic::{AtomicBool, AtomicU32, AtomicU64};
use crate::sync::thread::Thread;
use crate::sync::Mutex;
use std::sync::Arc;
use turnstile_sync::{LwLock, LwLockPolicy, Tranche};

/// `wait_status` of a backend slot: not queued anywhere.
pub(crate) const IDLE: u32 = 0;
/// Queued on a lock (set by the backend under the partition lock).
pub(crate) const WAITING: u32 = 1;
/// Granted by another backend on its behalf (under the partition lock),
/// then unparked.
pub(crate) const GRANTED: u32 = 2;

/// The shared state of one backend (PostgreSQL's `PGPROC`, lock part).
#[derive(Debug)]
pub(crate) struct BackendSlot {
    /// A `Backend` handle owns this slot.
    pub(crate) in_use: AtomicBool,
    /// Its fast-path slots under the `lwlock` protocol, behind its own
    /// `LockFastPath` lock.
    pub(crate) fast_path: LwLock<FastPath>,
    /// Its fast-path slots under the `lockfree` protocol. The lock does not
    /// protect the slots (atomics, `src/lockfree.rs`) but the array: strong
    /// lockers scan it holding the lock shared; the owner replaces it
    /// (growth) and bulk-clears it (`release_all`) holding it exclusive.
    pub(crate) lockfree: LwLock<Arc<SlotArray>>,
    /// `IDLE`, `WAITING` or `GRANTED`.
    pub(crate) wait_status: AtomicU32,
    /// Counters, written only by the owner.
    pub(crate) counters: CounterBlock,
    /// `(registration << 1) | pending`: bit 0 is a pending cancel request
    /// (set by a [`CancelHandle`](crate::CancelHandle), consumed by the
    /// owner); the rest counts registrations of this slot, so a handle of
    /// an earlier backend in the slot cancels nothing.
    pub(crate) cancel: AtomicU64,
    /// The thread parked in a lock wait of this backend, while it waits
    /// (so a canceller can wake it).
    pub(crate) waiter: Mutex<Option<Thread>>,
}

impl BackendSlot {
    /// A free slot whose fast-path locks follow `policy`.
    pub(crate) fn new(policy: LwLockPolicy) -> BackendSlot {
        BackendSlot {
            in_use: AtomicBool::new(false),
            fast_path: LwLock::new(Tranche::LockFastPath, policy, FastPath::default()),
            lockfree: LwLock::new(Tranche::LockFastPath, policy, Arc::default()),
            wait_status: AtomicU32::new(IDLE),
            counters: CounterBlock::new(),
            cancel: AtomicU64::new(0),
            waiter: Mutex::new(None),
        }
    }
}
