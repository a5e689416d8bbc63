//! Errors of the lock manager: every operating error is one of these,
//! never a panic.

use crate::mode::LockMode;
use crate::tag::LockTag;
use std::fmt;
use std::time::Duration;
use turnstile_sync::ConfigError;

/// One edge of a deadlock cycle: `backend` waits for `mode` on `tag` and
/// is blocked by `blocked_by`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct DeadlockEdge {
    /// The waiting backend.
    pub backend: usize,
    /// The lock it waits for.
    pub tag: LockTag,
    /// The mode it requested.
    pub mode: LockMode,
    /// The backend it waits for.
    pub blocked_by: usize,
    /// `false`: `blocked_by` holds a conflicting mode (a hard edge);
    /// `true`: `blocked_by` is ahead in the wait queue with a conflicting
    /// request (a soft edge).
    pub soft: bool,
}

impl fmt::Display for DeadlockEdge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "backend {} waits for {} on {}; blocked by backend {}{}",
            self.backend,
            self.mode,
            self.tag,
            self.blocked_by,
            if self.soft { " (queued ahead)" } else { "" }
        )
    }
}

/// Why a lock operation failed.
///
/// ```
/// use turnstile_lock::{LockError, LockManager, LockMode, LockTag, Wait};
/// let mut config = turnstile_sync::Config::default();
/// config.lock.max_locks = 1;
/// let manager = LockManager::new(&config).unwrap();
/// let mut b = manager.register().unwrap();
/// b.lock(LockTag::advisory(1, 1), LockMode::Exclusive, Wait::Block).unwrap();
/// let err = b.lock(LockTag::advisory(1, 2), LockMode::Exclusive, Wait::Block).unwrap_err();
/// assert_eq!(err, LockError::OutOfLockMemory { max_locks: 1 });
/// assert!(err.to_string().contains("raise lock.max_locks"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LockError {
    /// The shared lock table is full.
    #[error(
        "out of shared memory: the shared lock table holds all {max_locks} locks it may (hint: raise lock.max_locks)"
    )]
    OutOfLockMemory {
        /// The configured capacity, `lock.max_locks`.
        max_locks: u32,
    },
    /// Every backend slot is in use.
    #[error("too many backends: all {max_backends} slots are in use (hint: raise lock.max_backends)")]
    TooManyBackends {
        /// The configured limit, `lock.max_backends`.
        max_backends: u32,
    },
    /// `Wait::NoWait` and the lock is not free (PostgreSQL's `NOWAIT`).
    #[error("could not obtain {mode} on {tag}")]
    NotAvailable {
        /// The lock asked for.
        tag: LockTag,
        /// The mode asked for.
        mode: LockMode,
    },
    /// The wait lasted longer than the lock timeout.
    #[error("canceling wait due to lock timeout: {mode} on {tag} not granted within {waited:?}")]
    Timeout {
        /// The lock waited for.
        tag: LockTag,
        /// The mode asked for.
        mode: LockMode,
        /// How long the backend waited.
        waited: Duration,
    },
    /// The wait was cancelled through the backend's
    /// [`CancelHandle`](crate::CancelHandle) (PostgreSQL's "canceling
    /// statement due to user request", SQLSTATE 57014). The request was
    /// removed from the queue; the backend's other locks are still held.
    #[error("canceling statement due to user request{}", DisplayWait(.waiting_for))]
    Canceled {
        /// The lock and mode whose wait was cancelled; `None` when the
        /// request was consumed by [`Backend::check_cancel`](crate::Backend::check_cancel)
        /// outside any wait.
        waiting_for: Option<(LockTag, LockMode)>,
    },
    /// Granting the request would close a cycle of waiting backends; this
    /// backend's request was cancelled to break it. Its other locks are
    /// still held: end the transaction with `release_all`.
    #[error("deadlock detected: {}", DisplayCycle(.cycle))]
    Deadlock {
        /// Every edge of the cycle, starting with the checking backend.
        cycle: Vec<DeadlockEdge>,
    },
    /// The lock to release is not held by this backend in this mode.
    #[error("you don't own a lock of type {mode} on {tag}")]
    NotHeld {
        /// The lock named.
        tag: LockTag,
        /// The mode named.
        mode: LockMode,
    },
    /// The configuration cannot be used.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

impl LockError {
    /// The SQLSTATE a client sees for this error (the only place lock
    /// errors are mapped).
    pub fn sqlstate(&self) -> crate::SqlState {
        use crate::SqlState as S;
        match self {
            LockError::OutOfLockMemory { .. } => S::OUT_OF_MEMORY,
            LockError::TooManyBackends { .. } => S::TOO_MANY_CONNECTIONS,
            LockError::NotAvailable { .. } | LockError::Timeout { .. } => S::LOCK_NOT_AVAILABLE,
            LockError::Deadlock { .. } => S::DEADLOCK_DETECTED,
            LockError::Canceled { .. } => S::QUERY_CANCELED,
            LockError::NotHeld { .. } => S::INTERNAL_ERROR,
            LockError::Config(_) => S::INVALID_PARAMETER_VALUE,
        }
    }
}

struct DisplayWait<'a>(&'a Option<(LockTag, LockMode)>);

impl fmt::Display for DisplayWait<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some((tag, mode)) => write!(f, " (while waiting for {mode} on {tag})"),
            None => Ok(()),
        }
    }
}

struct DisplayCycle<'a>(&'a [DeadlockEdge]);

impl fmt::Display for DisplayCycle<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, edge) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(". ")?;
            }
            write!(f, "{edge}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_setting_and_every_edge() {
        let oom = LockError::OutOfLockMemory { max_locks: 10 }.to_string();
        assert!(oom.contains("lock.max_locks") && oom.contains("10"), "{oom}");
        let full = LockError::TooManyBackends { max_backends: 2 }.to_string();
        assert!(full.contains("lock.max_backends"), "{full}");
        let cycle = vec![
            DeadlockEdge {
                backend: 1,
                tag: LockTag::relation(1, 10),
                mode: LockMode::AccessExclusive,
                blocked_by: 2,
                soft: false,
            },
            DeadlockEdge {
                backend: 2,
                tag: LockTag::relation(1, 11),
                mode: LockMode::Share,
                blocked_by: 1,
                soft: true,
            },
        ];
        let text = LockError::Deadlock { cycle }.to_string();
        for part in ["backend 1", "backend 2", "relation 1/10", "relation 1/11", "AccessExclusiveLock", "ShareLock"] {
            assert!(text.contains(part), "{part} missing from {text}");
        }
    }
}
