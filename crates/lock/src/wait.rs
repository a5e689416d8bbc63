//! How a request waits: [`Wait`], and the sleep a waiting backend does on
//! its own parker.

use std::time::{Duration, Instant};

/// What to do when a lock cannot be granted at once.
///
/// ```
/// use std::time::Duration;
/// use turnstile_lock::{LockError, LockManager, LockMode, LockTag, Wait};
/// let manager = LockManager::new(&turnstile_sync::Config::default()).unwrap();
/// let (mut a, mut b) = (manager.register().unwrap(), manager.register().unwrap());
/// let t = LockTag::advisory(1, 42);
/// a.lock(t, LockMode::Exclusive, Wait::Block).unwrap();
/// assert!(matches!(b.lock(t, LockMode::Exclusive, Wait::NoWait), Err(LockError::NotAvailable { .. })));
/// let waited = b.lock(t, LockMode::Exclusive, Wait::Timeout(Duration::from_millis(5)));
/// assert!(matches!(waited, Err(LockError::Timeout { .. })));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Wait {
    /// Wait until granted, or until the backend's lock timeout
    /// (`lock.lock_timeout_ms`, 0 = forever) elapses.
    #[default]
    Block,
    /// Do not wait: fail with [`LockError::NotAvailable`](crate::LockError::NotAvailable)
    /// (PostgreSQL's `NOWAIT`).
    NoWait,
    /// Wait at most this long, then fail with
    /// [`LockError::Timeout`](crate::LockError::Timeout).
    Timeout(Duration),
}

/// How a successful request was satisfied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acquired {
    /// The lock was granted now.
    New,
    /// The backend already held the lock in this mode; its local count was
    /// bumped (release it as many times as it was acquired).
    AlreadyHeld,
}

/// Parks the current thread until unparked, or until `deadline` (if any).
/// Under loom the model has no clock: the deadline is ignored, and waits
/// end only by an unpark.
#[inline]
pub(crate) fn park_until(deadline: Option<Instant>) {
    #[cfg(not(loom))]
    match deadline {
        Some(at) => {
            let now = Instant::now();
            if at > now {
                crate::sync::thread::park_timeout(at - now);
            }
        }
        None => crate::sync::thread::park(),
    }
    #[cfg(loom)]
    {
        let _ = deadline;
        crate::sync::thread::park();
    }
}
