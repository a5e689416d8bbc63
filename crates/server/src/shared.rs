//! The state every thread of a server shares: the engine, the cancel keys
//! of live sessions, a second handle on every connection's socket, and the
//! counters. Its own file so that the accept loop (`server.rs`) and the
//! backends (`backend.rs`) both use it without importing each other.

use crate::stream::Stream;
use std::collections::HashMap;
use turnstile_sql::{CancelHandle, SqlEngine};
use turnstile_sync::sync::counter::{AtomicBool, AtomicU64, AtomicUsize};
use turnstile_sync::sync::Mutex;

/// State shared by the accept threads and every backend thread.
pub(crate) struct Shared {
    pub(crate) engine: SqlEngine,
    /// Cancel keys of the live sessions: pid -> (secret, handle).
    pub(crate) cancel_keys: Mutex<HashMap<i32, (i32, CancelHandle)>>,
    /// A second handle on every live connection's socket, to shut it down.
    pub(crate) sockets: Mutex<HashMap<u64, Stream>>,
    pub(crate) next_connection: AtomicU64,
    /// Live connection threads (startup, cancel and session ones).
    pub(crate) live: AtomicUsize,
    /// At most this many connection threads (PostgreSQL's
    /// `MaxLivePostmasterChildren`, 2 × max_connections): more are refused at
    /// once with `53300`, before a thread is spent on them.
    pub(crate) live_max: usize,
    /// Socket `write` calls made by all backends (one per Sync is the goal).
    pub(crate) writes: AtomicU64,
    pub(crate) stopping: AtomicBool,
}

impl Shared {
    /// Registers a session's cancel key.
    pub(crate) fn register_cancel(&self, pid: i32, secret: i32, handle: CancelHandle) {
        lock(&self.cancel_keys).insert(pid, (secret, handle));
    }

    /// Removes a session's cancel key (its backend is ending).
    pub(crate) fn unregister_cancel(&self, pid: i32) {
        lock(&self.cancel_keys).remove(&pid);
    }

    /// A `CancelRequest`: cancels `pid`'s running statement when the secret
    /// matches; otherwise nothing, silently, as PostgreSQL does.
    pub(crate) fn cancel(&self, pid: i32, secret: i32) {
        let handle = lock(&self.cancel_keys).get(&pid).filter(|(s, _)| *s == secret).map(|(_, h)| h.clone());
        if let Some(h) = handle {
            h.cancel();
        }
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
