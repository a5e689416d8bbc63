//! [`CancelHandle`]: cancelling a backend's lock wait from another thread
//! (PostgreSQL's `CancelRequest` → `QueryCancelPending` →
//! `CHECK_FOR_INTERRUPTS`, SQLSTATE 57014).
//!
//! The request is one bit in the backend slot's `cancel` word, whose other
//! bits count the slot's registrations (see `BackendSlot::cancel`):
//!
//! | bits of `cancel` | meaning |
//! |---|---|
//! | `0` | a cancel is pending |
//! | `1 .. 64` | registration number of the backend in the slot |
//!
//! **No lost wake-up.** A waiting backend publishes its thread in
//! `BackendSlot::waiter` (under that mutex) *before* its first look at the
//! pending bit, and looks again before every park. The canceller sets the
//! bit and *then* takes the same mutex to unpark the published thread. If
//! the canceller's critical section comes first, the bit was set before
//! the waiter's, whose later look sees it; otherwise the canceller finds
//! the thread and unparks it, and the park returns at once (the unpark
//! token) or is interrupted. Either way the wait ends.

use crate::manager::LockManager;
use crate::sync::atomic::Ordering;
use std::sync::Arc;

/// Cancels the lock waits of one [`Backend`](crate::Backend), from any
/// thread; obtained by [`Backend::cancel_handle`](crate::Backend::cancel_handle).
///
/// [`cancel`](Self::cancel) leaves a pending request. A lock wait in
/// progress, or the next one to start, dequeues its request and fails with
/// [`LockError::Canceled`](crate::LockError::Canceled), consuming the
/// request; [`Backend::check_cancel`](crate::Backend::check_cancel)
/// consumes it at any other point (a statement's loop), and
/// [`Backend::clear_cancel`](crate::Backend::clear_cancel) drops a stale
/// one (the start of a statement). Once the backend is dropped, its handles
/// cancel nothing, even if its slot is registered again.
///
/// ```
/// use turnstile_lock::{LockError, LockManager, LockMode, LockTag, Wait};
/// let manager = LockManager::new(&turnstile_sync::Config::default()).unwrap();
/// let (mut a, mut b) = (manager.register().unwrap(), manager.register().unwrap());
/// let t = LockTag::relation(1, 42);
/// a.lock(t, LockMode::AccessExclusive, Wait::Block).unwrap();
/// let cancel = b.cancel_handle();
/// let waiter = std::thread::spawn(move || b.lock(t, LockMode::AccessShare, Wait::Block));
/// while !manager.is_waiting(1) { std::thread::yield_now(); }
/// assert!(cancel.cancel());
/// assert!(matches!(waiter.join().unwrap(), Err(LockError::Canceled { .. })));
/// ```
#[derive(Clone, Debug)]
pub struct CancelHandle {
    pub(crate) manager: Arc<LockManager>,
    pub(crate) id: usize,
    /// The `cancel` word's registration bits of the backend it cancels.
    pub(crate) registration: u64,
}

impl CancelHandle {
    /// Asks the backend to cancel its current or next lock wait, waking it
    /// if it is waiting. `false` if the backend no longer exists (nothing
    /// was done).
    pub fn cancel(&self) -> bool {
        let slot = &self.manager.backends[self.id];
        let mut word = slot.cancel.load(Ordering::Relaxed);
        loop {
            if word & !1 != self.registration {
                return false;
            }
            // SeqCst: ordered before the mutex section below, which is what
            // the no-lost-wake-up argument (module docs) needs.
            match slot.cancel.compare_exchange_weak(word, word | 1, Ordering::SeqCst, Ordering::Relaxed) {
                Ok(_) => break,
                Err(now) => word = now,
            }
        }
        let waiter = slot.waiter.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(thread) = waiter.as_ref() {
            thread.unpark();
        }
        true
    }

    /// The slot number of the backend this handle cancels.
    pub fn backend_id(&self) -> usize {
        self.id
    }
}
