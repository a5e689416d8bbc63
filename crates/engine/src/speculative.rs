//! Speculative insertion: how an upsert's insert places a row that it may
//! yet take back, and how others wait for it (PostgreSQL's
//! `SpeculativeInsertionLockAcquire`, `heap_finish_speculative`,
//! `heap_abort_speculative` and `SpeculativeInsertionWait`).
//!
//! # Why
//!
//! An insert places its heap tuple first, then one index entry per index
//! (unique indexes first). Each unique check waits *before* its entry is
//! placed (`unique_wait.rs`), but the entries of the indexes already done
//! are visible to every other inserter from the moment they are placed. If
//! a later index then refuses the key — an upsert's second arbiter, or a
//! table with two unique indexes — the row is taken back (marked dead) and
//! the upsert goes back to its probe. Without a token, another session
//! that met the first entry in between waits on the inserter's whole
//! transaction, which may run for minutes after the row was taken back,
//! and the deadlock detector sees an edge that does not exist.
//!
//! # The protocol
//!
//! The inserter (`Session::insert_speculative`):
//!
//! 1. takes a fresh token of its transaction — lock tag
//!    [`turnstile_lock::LockTag::speculative_token`] `(xid, token)`,
//!    `pg_locks.locktype = spectoken` — in `ExclusiveLock`
//!    ([`Speculation::begin`]);
//! 2. places its heap tuple (`xmin` = its xid, still running) and
//!    registers the tuple's `(file, tid)` with the token
//!    ([`Speculation::placed`]), before its first index entry;
//! 3. places its index entries; then either
//! 4. **confirms** ([`Speculation::confirm`]): unregisters the tuple, then
//!    releases the token — the row is now an ordinary insert of a running
//!    transaction; or
//! 5. **kills** ([`Speculation::kill`]): marks the tuple dead (its
//!    entries now point at a dead tuple, which no check or scan counts),
//!    then unregisters it, then releases the token. The row was never
//!    visible as committed.
//!
//! A unique check that meets an entry whose tuple's `xmin` still runs asks
//! [`Speculations::wait_target`]: a registered tuple is waited for on its
//! token ([`WaitOn::Token`], `ShareLock`, given back at once), any other on
//! the transaction ([`WaitOn::Transaction`]). After either wait the check
//! reads the tuple again and decides afresh.
//!
//! # Invariants
//!
//! - registered(file, tid) ⇒ the token `(xid, token)` is held exclusive by
//!   the inserter (taken before registering, released after
//!   unregistering), so a waiter that found the registration either
//!   blocks until confirm/kill or is granted at once because it already
//!   happened: no lost wake-up.
//! - killed ⇒ the tuple is dead before it is unregistered, so a waiter
//!   that finds it unregistered and re-reads the tuple sees it dead or
//!   waits for the transaction (correct, only slower): no waiter decides
//!   "conflict" on a key that is later killed.
//! - entry placed ⇒ registered-or-done: registration precedes the first
//!   entry, so whoever sees an entry of an unconfirmed insert finds it
//!   registered.
//!
//! The handshake is generic over [`SpeculationLocks`] (the lock
//! manager's backend in the engine, a mutex-and-condvar lock table in
//! `tests/loom_speculative.rs`), and the registry takes its mutexes from
//! the `turnstile_sync::sync` facade, so the loom model runs this code.
//!
//! ```
//! use turnstile_engine::speculative::{Speculation, SpeculationLocks, Speculations, WaitOn};
//! struct NoWait;
//! impl SpeculationLocks for NoWait {
//!     type Error = ();
//!     fn lock_token(&mut self, _: u64, _: u16) -> Result<(), ()> { Ok(()) }
//!     fn unlock_token(&mut self, _: u64, _: u16) -> Result<(), ()> { Ok(()) }
//!     fn wait(&mut self, _: WaitOn) -> Result<(), ()> { Ok(()) }
//! }
//! let registry: Speculations<u32> = Speculations::new();
//! let mut s = Speculation::begin(&registry, &mut NoWait, 7, 1).unwrap();
//! s.placed(42);
//! assert_eq!(registry.wait_target(&42, 7), WaitOn::Token(7, 1));
//! s.kill(&mut NoWait, |_| ()).unwrap();
//! assert_eq!(registry.wait_target(&42, 7), WaitOn::Transaction(7));
//! ```

use crate::mvcc::Xid;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use turnstile_sync::sync::Mutex;

/// A speculative insertion's number within its backend (wrapping; see
/// [`turnstile_lock::LockTag::speculative_token`]).
pub type Token = u16;

/// Shards of the registry: insertions of different rows rarely share a
/// mutex.
pub const SPECULATION_SHARDS: usize = 16;

/// What a unique check waits for before it looks again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WaitOn {
    /// An unconfirmed speculative insertion: `(xid, token)`.
    Token(Xid, Token),
    /// A running transaction.
    Transaction(Xid),
}

/// The lock-manager operations of the handshake.
pub trait SpeculationLocks {
    /// The failure of a lock operation (a lock timeout, a deadlock, a
    /// cancel).
    type Error;
    /// Takes token `(xid, token)` exclusive (step 1).
    fn lock_token(&mut self, xid: Xid, token: Token) -> Result<(), Self::Error>;
    /// Releases the token taken by [`SpeculationLocks::lock_token`].
    fn unlock_token(&mut self, xid: Xid, token: Token) -> Result<(), Self::Error>;
    /// Waits until `on` is released: takes it in share mode and gives it
    /// back at once.
    fn wait(&mut self, on: WaitOn) -> Result<(), Self::Error>;
}

/// The unconfirmed speculative insertions, by the row they placed
/// (`K`: the heap file and TID in the engine).
pub struct Speculations<K> {
    shards: Vec<Mutex<HashMap<K, (Xid, Token)>>>,
}

impl<K> std::fmt::Debug for Speculations<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Speculations").field("shards", &self.shards.len()).finish_non_exhaustive()
    }
}

impl<K: Hash + Eq + Clone> Default for Speculations<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Hash + Eq + Clone> Speculations<K> {
    /// An empty registry.
    pub fn new() -> Self {
        Speculations { shards: (0..SPECULATION_SHARDS).map(|_| Mutex::new(HashMap::new())).collect() }
    }

    fn shard(&self, key: &K) -> &Mutex<HashMap<K, (Xid, Token)>> {
        // SipHash with fixed keys: the same shard in every run.
        let mut h = std::collections::hash_map::DefaultHasher::new();
        key.hash(&mut h);
        &self.shards[(h.finish() as usize) % SPECULATION_SHARDS]
    }

    fn entries(&self, key: &K) -> turnstile_sync::sync::MutexGuard<'_, HashMap<K, (Xid, Token)>> {
        self.shard(key).lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What a check that met row `key`, inserted by running transaction
    /// `xmin`, waits for: the token of an unconfirmed speculative
    /// insertion, else the transaction.
    pub fn wait_target(&self, key: &K, xmin: Xid) -> WaitOn {
        match self.entries(key).get(key) {
            Some(&(xid, token)) if xid == xmin => WaitOn::Token(xid, token),
            _ => WaitOn::Transaction(xmin),
        }
    }

    /// Whether no insertion is unconfirmed.
    pub fn is_empty(&self) -> bool {
        self.shards.iter().all(|s| s.lock().unwrap_or_else(|e| e.into_inner()).is_empty())
    }
}

/// One speculative insertion whose token is held; ended by
/// [`Speculation::confirm`] or [`Speculation::kill`]. Dropped without
/// either (an error between the steps), it unregisters its row; the
/// token is then released with the transaction's other locks.
#[must_use = "a speculation holds its token until confirmed or killed"]
pub struct Speculation<'r, K: Hash + Eq + Clone> {
    registry: &'r Speculations<K>,
    xid: Xid,
    token: Token,
    row: Option<K>,
}

impl<'r, K: Hash + Eq + Clone> Speculation<'r, K> {
    /// Step 1: takes token `(xid, token)` exclusive.
    pub fn begin<L: SpeculationLocks>(
        registry: &'r Speculations<K>,
        locks: &mut L,
        xid: Xid,
        token: Token,
    ) -> Result<Self, L::Error> {
        locks.lock_token(xid, token)?;
        Ok(Speculation { registry, xid, token, row: None })
    }

    /// Step 2: the row is placed (in the heap, no index entry yet).
    pub fn placed(&mut self, row: K) {
        assert!(self.row.is_none(), "one row per speculative insertion");
        let previous = self.registry.entries(&row).insert(row.clone(), (self.xid, self.token));
        assert!(previous.is_none(), "a row is placed once");
        self.row = Some(row);
    }

    fn unregister(&mut self) {
        if let Some(row) = self.row.take() {
            let removed = self.registry.entries(&row).remove(&row);
            debug_assert_eq!(removed, Some((self.xid, self.token)));
        }
    }

    /// Step 4: the insertion is certain; waiters now wait for the
    /// transaction.
    pub fn confirm<L: SpeculationLocks>(mut self, locks: &mut L) -> Result<(), L::Error> {
        self.unregister();
        locks.unlock_token(self.xid, self.token)
    }

    /// Step 5: `take_back` marks the row dead, then the row is
    /// unregistered and the token released. Returns `take_back`'s answer
    /// (`None`: no row was placed, nothing to take back).
    pub fn kill<L: SpeculationLocks, R>(
        mut self,
        locks: &mut L,
        take_back: impl FnOnce(&K) -> R,
    ) -> Result<Option<R>, L::Error> {
        let out = self.row.as_ref().map(take_back);
        self.unregister();
        locks.unlock_token(self.xid, self.token)?;
        Ok(out)
    }
}

impl<K: Hash + Eq + Clone> Drop for Speculation<'_, K> {
    fn drop(&mut self) {
        self.unregister();
    }
}
