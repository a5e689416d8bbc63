//! Advisory locks: `pg_advisory_lock` and its family, on the lock
//! manager's `advisory` tags.
//!
//! A key is a 64-bit integer (`objsubid` 1 in `pg_locks`) or a pair of
//! 32-bit integers (`objsubid` 2): two different lock spaces, as in
//! PostgreSQL. A lock is exclusive (`ExclusiveLock`) or shared
//! (`ShareLock`), and held at one of two levels:
//!
//! * **transaction level** (`pg_advisory_xact_lock`): an ordinary
//!   heavyweight lock of the transaction, released when it ends (or when a
//!   savepoint before it is rolled back to); it cannot be unlocked early.
//! * **session level** (`pg_advisory_lock`): counted in
//!   [`Session`]'s session-lock table and kept across commits and
//!   rollbacks — the transaction end releases every lock *except* the
//!   session-level acquisitions ([`turnstile_lock::Backend::release_all_except`])
//!   — until `pg_advisory_unlock` (one acquisition) or
//!   `pg_advisory_unlock_all` (all of them), or the session's end.
//!
//! Both levels may hold the same key; each acquisition is counted once in
//! the backend's lock table and, if session level, once more in the
//! session table: `session count ≤ backend count` for every `(tag, mode)`.

use crate::error::{EngineError, Result};
use crate::session::Session;
use turnstile_lock::{LockError, LockMode, LockTag, Wait};

/// An advisory lock's key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AdvisoryKey {
    /// `pg_advisory_lock(bigint)`.
    Int8(i64),
    /// `pg_advisory_lock(int, int)`.
    Int4Pair(i32, i32),
}

/// How long an advisory lock is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdvisoryLevel {
    /// Until unlocked or the session ends.
    Session,
    /// Until the transaction ends.
    Transaction,
}

impl AdvisoryKey {
    /// The lock tag in `database`.
    pub fn tag(self, database: u32) -> LockTag {
        match self {
            AdvisoryKey::Int8(k) => LockTag::advisory(database, k as u64),
            AdvisoryKey::Int4Pair(a, b) => LockTag::advisory_pair(database, a as u32, b as u32),
        }
    }
}

fn mode_of(shared: bool) -> LockMode {
    if shared {
        LockMode::Share
    } else {
        LockMode::Exclusive
    }
}

impl Session {
    /// `pg_advisory_lock` and its family: takes the advisory lock on `key`
    /// (`shared`: `ShareLock`, else `ExclusiveLock`) at `level`. With
    /// `wait`, waits as any heavyweight lock (lock timeout, deadlock
    /// detection, cancel) and returns `true`; without (`pg_try_…`),
    /// returns whether it was granted at once.
    pub fn advisory_lock(&mut self, key: AdvisoryKey, shared: bool, level: AdvisoryLevel, wait: bool) -> Result<bool> {
        let tag = key.tag(self.db);
        let mode = mode_of(shared);
        let name = if wait { "pg_advisory_lock" } else { "pg_try_advisory_lock" };
        self.statement(name, |s| {
            match s.backend.lock(tag, mode, if wait { Wait::Block } else { Wait::NoWait }) {
                Ok(_) => {}
                Err(LockError::NotAvailable { .. }) if !wait => return Ok(false),
                Err(e) => return Err(EngineError::from(e)),
            }
            if level == AdvisoryLevel::Session {
                *s.advisory.entry((tag, mode)).or_default() += 1;
            }
            Ok(true)
        })
    }

    /// `pg_advisory_unlock`: releases one session-level acquisition of
    /// `key`; `false` if the session holds none (PostgreSQL then warns).
    pub fn advisory_unlock(&mut self, key: AdvisoryKey, shared: bool) -> Result<bool> {
        let tag = key.tag(self.db);
        let mode = mode_of(shared);
        let Some(n) = self.advisory.get_mut(&(tag, mode)) else { return Ok(false) };
        *n -= 1;
        if *n == 0 {
            self.advisory.remove(&(tag, mode));
        }
        self.backend.unlock(tag, mode)?;
        Ok(true)
    }

    /// `pg_advisory_unlock_all`: releases every session-level advisory
    /// lock (transaction-level ones stay to the transaction's end).
    pub fn advisory_unlock_all(&mut self) -> Result<()> {
        for ((tag, mode), n) in std::mem::take(&mut self.advisory) {
            for _ in 0..n {
                self.backend.unlock(tag, mode)?;
            }
        }
        Ok(())
    }

    /// Session-level acquisitions of `(tag, mode)`.
    pub(crate) fn session_advisory_count(&self, tag: &LockTag, mode: LockMode) -> u32 {
        self.advisory.get(&(*tag, mode)).copied().unwrap_or(0)
    }

    /// Releases the transaction's heavyweight locks, keeping session-level
    /// advisory locks.
    pub(crate) fn release_xact_locks(&mut self) {
        if self.advisory.is_empty() {
            self.backend.release_all();
        } else {
            let session = &self.advisory;
            self.backend.release_all_except(&mut |t, m| session.get(&(*t, m)).copied().unwrap_or(0));
        }
    }
}
