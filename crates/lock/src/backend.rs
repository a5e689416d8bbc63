//! [`Backend`]: one registered session's handle on the lock manager
//! (PostgreSQL's `PGPROC` plus its `LOCALLOCK` table): acquiring,
//! releasing, waiting.
//!
//! This file holds the handle, its registration and settings, and the
//! request paths shared by both fast-path protocols: [`Backend::lock`]
//! and [`Backend::unlock`] through the local hash table, the `lwlock`
//! fast path, and the shared table. Two concepts have their own files:
//!
//! - `backend/lockfree_owner.rs`: the owner's side of the `lockfree` fast
//!   path (weak relation locks in the own slot array, and its growth);
//! - `backend/release.rs`: [`Backend::release_all`], the end of a
//!   transaction.
//!
//! Invariants between the fields (the owner's bookkeeping; nothing here
//! is shared): `held_count() == local.len() + fp_local` under `lockfree`
//! (its fast-path locks are counted in its slots, not in `local`), and
//! `== local.len()` under `lwlock`; under `lockfree`, `weak_shared` = the
//! weak relation locks in `local` (all `via == Shared`; only that protocol
//! reads it); `fp_used[g]` ≥ the slots in use in group `g` while
//! `fp_at_max` (strong lockers only ever empty slots).

mod lockfree_owner;
mod release;

use crate::cancel::CancelHandle;
use crate::error::LockError;
use crate::fastpath::{group_of, FastPath, Grant, SLOTS_PER_GROUP};
use crate::local::{local_hash, LocalLock, LocalTable, Via};
use crate::lockfree::{OwnerSlots, SlotArray};
use crate::manager::LockManager;
use crate::mode::LockMode;
use crate::shared_table::{unpark_all, Ctx};
use crate::slot::{BackendSlot, IDLE};
use crate::stats::{Counter, LockStats};
use crate::sync::atomic::Ordering;
use crate::tag::LockTag;
use crate::wait::{Acquired, Wait};
use hashbrown::hash_table::Entry;
// The manager handle is a std `Arc` even under loom: it only keeps the
// manager alive, takes part in no handshake, and loom's `Arc` cannot be a
// method receiver (`self: &Arc<Self>`).
use std::sync::Arc;
use std::time::Duration;
use turnstile_sync::config::FastPathProtocol;

/// A registered backend: takes and releases heavyweight locks for one
/// session at a time. Dropping it releases everything it holds and frees
/// its slot.
///
/// ```
/// use turnstile_lock::{LockError, LockManager, LockMode, LockTag, Wait};
/// use turnstile_sync::Config;
/// let manager = LockManager::new(&Config::default()).unwrap();
/// let mut a = manager.register().unwrap();
/// let mut b = manager.register().unwrap();
/// let t = LockTag::relation(1, 42);
/// a.lock(t, LockMode::AccessExclusive, Wait::Block).unwrap();
/// let err = b.lock(t, LockMode::AccessShare, Wait::NoWait).unwrap_err();
/// assert!(matches!(err, LockError::NotAvailable { .. }));
/// a.unlock(t, LockMode::AccessExclusive).unwrap();
/// b.lock(t, LockMode::AccessShare, Wait::NoWait).unwrap();
/// assert!(matches!(b.unlock(t, LockMode::Share), Err(LockError::NotHeld { .. })));
/// ```
pub struct Backend {
    manager: Arc<LockManager>,
    id: usize,
    local: LocalTable,
    /// The owner's copy of its fast path's `log2(groups)` (only the owner
    /// changes it).
    fp_log2: u32,
    /// The array has reached `lock.fast_path_slots_max` (always, in
    /// `classic`): it can no longer grow.
    fp_at_max: bool,
    /// While `fp_at_max`: slots in use per group, as of the owner's last
    /// look — an upper bound, since strong lockers only ever empty slots. A
    /// full group is skipped without taking the fast-path lock
    /// (PostgreSQL's `FastPathLocalUseCount` check).
    fp_used: Vec<u8>,
    /// Local entries granted by the fast path (some may have been moved to
    /// the shared table since).
    fp_local: usize,
    /// The `lockfree` protocol's slots, as the owner sees them, with the
    /// local counts of the locks they granted; `None` under the `lwlock`
    /// protocol.
    lockfree: Option<OwnerSlots>,
    /// Weak relation locks in the local hash table (granted through the
    /// shared table): while 0, the `lockfree` fast path need not probe it.
    weak_shared: usize,
    lock_timeout: Option<Duration>,
    deadlock_timeout: Duration,
    baseline: LockStats,
    /// Reused by `release_all` so the hot path does not allocate.
    scratch: Vec<LocalLock>,
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backend").field("id", &self.id).field("held", &self.held_count()).finish_non_exhaustive()
    }
}

/// What the fast path did with a request.
enum FastPathResult {
    Granted,
    /// The group is full at the maximum size.
    Full,
    /// A strong lock may exist on the tag: use the shared table.
    StrongLockPresent,
}

impl LockManager {
    /// Registers a new backend (PostgreSQL's `InitProcess`). Fails with
    /// [`LockError::TooManyBackends`] when `lock.max_backends` are
    /// registered; dropping a [`Backend`] frees its slot.
    pub fn register(self: &Arc<Self>) -> Result<Backend, LockError> {
        for (id, slot) in self.backends.iter().enumerate() {
            if slot.in_use.compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
                return Ok(Backend::new(Arc::clone(self), id));
            }
        }
        Err(LockError::TooManyBackends { max_backends: self.config.max_backends })
    }
}

// A backend handle moves between threads.
const _: () = {
    const fn send<T: Send>() {}
    send::<Backend>();
};

impl Backend {
    pub(crate) fn new(manager: Arc<LockManager>, id: usize) -> Backend {
        let slot = &manager.backends[id];
        let groups = manager.fast_path_groups;
        let at_max = groups >= manager.fast_path_groups_max;
        let lockfree = match manager.config.fast_path_protocol {
            FastPathProtocol::Lwlock => {
                let mut fp = slot.fast_path.lock_exclusive();
                assert_eq!(fp.used(), 0, "a free backend slot has no fast-path locks");
                if fp.groups() != groups {
                    *fp = FastPath::new(groups);
                }
                None
            }
            FastPathProtocol::Lockfree => {
                let mut array = slot.lockfree.lock_exclusive();
                assert_eq!(array.used(), 0, "a free backend slot has no fast-path locks");
                if array.groups() != groups {
                    *array = Arc::new(SlotArray::new(groups));
                }
                Some(OwnerSlots::new(Arc::clone(&array), at_max))
            }
        };
        slot.wait_status.store(IDLE, Ordering::Relaxed);
        // A new registration: clears any pending cancel and invalidates the
        // handles of the slot's earlier backends.
        let registration = (slot.cancel.load(Ordering::Relaxed) | 1).wrapping_add(1);
        slot.cancel.store(registration, Ordering::SeqCst);
        let mut baseline = LockStats::default();
        slot.counters.sum_into(&mut baseline);
        let config = &manager.config;
        Backend {
            fp_log2: groups.trailing_zeros(),
            fp_at_max: at_max,
            lockfree,
            weak_shared: 0,
            fp_used: vec![0; groups],
            fp_local: 0,
            lock_timeout: (config.lock_timeout_ms > 0).then(|| Duration::from_millis(config.lock_timeout_ms)),
            deadlock_timeout: Duration::from_millis(config.deadlock_timeout_ms),
            baseline,
            scratch: Vec::new(),
            local: LocalTable::default(),
            manager,
            id,
        }
    }

    /// The backend's slot number (the `backend` column of the views and of
    /// deadlock reports).
    pub fn id(&self) -> usize {
        self.id
    }

    /// The lock manager.
    pub fn manager(&self) -> &Arc<LockManager> {
        &self.manager
    }

    /// Sets this backend's lock timeout for [`Wait::Block`] (PostgreSQL's
    /// `SET lock_timeout`); `None` waits forever.
    pub fn set_lock_timeout(&mut self, timeout: Option<Duration>) {
        self.lock_timeout = timeout;
    }

    /// Sets how long this backend waits before running the deadlock check
    /// (PostgreSQL's `SET deadlock_timeout`).
    pub fn set_deadlock_timeout(&mut self, timeout: Duration) {
        self.deadlock_timeout = timeout;
    }

    /// A handle another thread can use to cancel this backend's lock waits
    /// (see [`CancelHandle`]).
    pub fn cancel_handle(&self) -> CancelHandle {
        let registration = self.slot().cancel.load(Ordering::Relaxed) & !1;
        CancelHandle { manager: Arc::clone(&self.manager), id: self.id, registration }
    }

    /// Consumes a pending cancel request: [`LockError::Canceled`] (with no
    /// lock named) if there was one, `Ok` otherwise. For statement loops
    /// (PostgreSQL's `CHECK_FOR_INTERRUPTS`).
    pub fn check_cancel(&self) -> Result<(), LockError> {
        if self.take_cancel() {
            return Err(LockError::Canceled { waiting_for: None });
        }
        Ok(())
    }

    /// Drops a pending cancel request, if any (the start of a statement: a
    /// cancel aimed at the previous one must not hit this one).
    pub fn clear_cancel(&self) {
        self.slot().cancel.fetch_and(!1, Ordering::SeqCst);
    }

    /// Consumes the pending cancel bit; `true` if it was set.
    fn take_cancel(&self) -> bool {
        let slot = self.slot();
        slot.cancel.load(Ordering::Relaxed) & 1 != 0 && slot.cancel.fetch_and(!1, Ordering::SeqCst) & 1 != 0
    }

    /// Whether this backend holds `tag` in `mode`.
    pub fn holds(&self, tag: &LockTag, mode: LockMode) -> bool {
        if let Some(owner) = self.lockfree.as_ref().filter(|_| tag.is_relation() && mode.is_fast_path_eligible()) {
            if owner.find(tag.fast_path_key()).is_some_and(|s| owner.counts[s][mode as usize - 1] > 0) {
                return true;
            }
        }
        self.local.holds(tag, mode)
    }

    /// Number of distinct `(tag, mode)` this backend holds.
    pub fn held_count(&self) -> usize {
        // Under `lockfree`, the fast path's locks are counted in its slots.
        self.local.len() + if self.lockfree.is_some() { self.fp_local } else { 0 }
    }

    /// This backend's counters since it registered.
    pub fn stats(&self) -> LockStats {
        let mut now = LockStats::default();
        self.slot().counters.sum_into(&mut now);
        now.since(&self.baseline)
    }

    /// How many backends wait for `tag` right now (see
    /// [`LockManager::waiters`]).
    pub fn waiters(&self, tag: &LockTag) -> usize {
        self.manager.waiters(tag)
    }

    #[inline(always)]
    fn slot(&self) -> &BackendSlot {
        &self.manager.backends[self.id]
    }

    /// Acquires `tag` in `mode` (PostgreSQL's `LockAcquire`).
    ///
    /// A lock this backend already holds in `mode` is only counted again
    /// ([`Acquired::AlreadyHeld`]). A weak relation lock goes to the
    /// backend's fast-path slots when no strong lock may exist on the
    /// relation; anything else goes through the shared table, waiting as
    /// `wait` says. Errors: [`LockError::NotAvailable`],
    /// [`LockError::Timeout`], [`LockError::Deadlock`],
    /// [`LockError::OutOfLockMemory`]; after any of them nothing of the
    /// request remains.
    ///
    /// A backend holding a relation-extension lock must not wait for any
    /// other heavyweight lock (take others with [`Wait::NoWait`], or before
    /// the extension lock): extension locks are left out of deadlock
    /// detection, so such a wait could hang undetected — PostgreSQL
    /// imposes the same rule.
    #[inline]
    pub fn lock(&mut self, tag: LockTag, mode: LockMode, wait: Wait) -> Result<Acquired, LockError> {
        if self.lockfree.is_some() && tag.is_relation() && mode.is_fast_path_eligible() {
            return self.lock_weak_lock_free(tag, mode, wait);
        }
        self.lock_local_table(tag, mode, wait)
    }

    /// [`Self::lock`] through the local hash table: every request but a
    /// weak relation lock under the `lockfree` protocol.
    #[inline(never)]
    fn lock_local_table(&mut self, tag: LockTag, mode: LockMode, wait: Wait) -> Result<Acquired, LockError> {
        let hash = tag.hash_code();
        let entry = self.local.table.entry(
            local_hash(hash, mode),
            |l| l.tag == tag && l.mode == mode,
            |l| local_hash(l.hash, l.mode),
        );
        let vacant = match entry {
            Entry::Occupied(mut held) => {
                held.get_mut().count += 1;
                return Ok(Acquired::AlreadyHeld);
            }
            Entry::Vacant(vacant) => vacant,
        };
        if tag.is_relation() && mode.is_fast_path_eligible() {
            let manager: &LockManager = &self.manager;
            let slot = &manager.backends[self.id];
            let mirror =
                FastPathMirror { log2: &mut self.fp_log2, at_max: &mut self.fp_at_max, used: &mut self.fp_used };
            match fast_path_grant(manager, slot, mirror, tag.fast_path_key(), mode, hash) {
                FastPathResult::Granted => {
                    vacant.insert(LocalLock { tag, mode, hash, count: 1, via: Via::FastPath, strong: false });
                    self.fp_local += 1;
                    slot.counters.add(Counter::FastPathAcquires, 1);
                    return Ok(Acquired::New);
                }
                FastPathResult::Full => slot.counters.add(Counter::FastPathOverflows, 1),
                FastPathResult::StrongLockPresent => {}
            }
        }
        self.lock_slow(tag, mode, hash, wait)
    }

    /// The shared-table path of [`Self::lock`]: taken when the request is
    /// not a weak relation lock, or the fast path refused it.
    #[inline(never)]
    fn lock_slow(&mut self, tag: LockTag, mode: LockMode, hash: u64, wait: Wait) -> Result<Acquired, LockError> {
        let (no_wait, timeout) = match wait {
            Wait::Block => (false, self.lock_timeout),
            Wait::NoWait => (true, None),
            Wait::Timeout(d) => (false, Some(d)),
        };
        let ctx = Ctx::new(&self.manager, self.id);
        let strong = tag.is_relation() && mode.is_strong();
        if strong {
            // Phase 1: announce the strong lock, then move every weak
            // fast-path lock on the relation into the shared table.
            ctx.begin_strong(hash);
            if let Err(e) = ctx.transfer_fast_path_locks(&tag, hash) {
                ctx.end_strong(hash);
                return Err(e);
            }
        }
        // Phase 2: the shared table, waiting if needed.
        match ctx.acquire_shared(tag, mode, hash, no_wait, timeout, self.deadlock_timeout) {
            Ok(()) => {
                self.local.insert(LocalLock { tag, mode, hash, count: 1, via: Via::Shared, strong });
                if tag.is_relation() && mode.is_fast_path_eligible() {
                    self.weak_shared += 1;
                }
                Ok(Acquired::New)
            }
            Err(e) => {
                if strong {
                    ctx.end_strong(hash);
                }
                Err(e)
            }
        }
    }

    /// Releases one acquisition of `tag` in `mode` (PostgreSQL's
    /// `LockRelease`). [`LockError::NotHeld`] if this backend does not
    /// hold it.
    #[inline]
    pub fn unlock(&mut self, tag: LockTag, mode: LockMode) -> Result<(), LockError> {
        let weak_relation = tag.is_relation() && mode.is_fast_path_eligible();
        if let Some(owner) = self.lockfree.as_mut().filter(|_| weak_relation) {
            if let Some(s) = owner.find(tag.fast_path_key()) {
                let count = &mut owner.counts[s][mode as usize - 1];
                if *count > 0 {
                    *count -= 1;
                    if *count > 0 {
                        return Ok(());
                    }
                    self.fp_local -= 1;
                    if !owner.release(s, mode) {
                        // Claimed by a strong locker: in the shared table.
                        self.unlock_claimed(tag, mode);
                    }
                    return Ok(());
                }
            }
        }
        self.unlock_local_table(tag, mode)
    }

    /// Releases a `lockfree` fast-path lock that a strong locker moved to
    /// the shared table.
    #[cold]
    fn unlock_claimed(&mut self, tag: LockTag, mode: LockMode) {
        let hash = tag.hash_code();
        self.unlock_shared(LocalLock { tag, mode, hash, count: 0, via: Via::Shared, strong: false });
    }

    /// [`Self::unlock`] through the local hash table.
    #[inline(never)]
    fn unlock_local_table(&mut self, tag: LockTag, mode: LockMode) -> Result<(), LockError> {
        let weak_relation = tag.is_relation() && mode.is_fast_path_eligible();
        let hash = tag.hash_code();
        let held = match self.local.release(&tag, mode, hash) {
            None => return Err(LockError::NotHeld { tag, mode }),
            Some(None) => return Ok(()),
            Some(Some(held)) => held,
        };
        if weak_relation && held.via == Via::Shared {
            self.weak_shared -= 1;
        }
        if held.via == Via::FastPath {
            self.fp_local -= 1;
            let slot = &self.manager.backends[self.id];
            let mut fp = slot.fast_path.lock_exclusive();
            let found = fp.ungrant(tag.fast_path_key(), mode).is_some();
            if self.fp_at_max {
                // Recount the group whether or not the lock was there:
                // transfers may have emptied slots behind our back.
                let group = group_of(tag.fast_path_key() as u32, self.fp_log2);
                self.fp_used[group] = fp.used_in_group(group) as u8;
            }
            if found {
                return Ok(());
            }
            // Not in our slots: a strong locker moved it to the shared table.
        }
        self.unlock_shared(held);
        Ok(())
    }

    /// The shared-table part of [`Self::unlock`].
    #[inline(never)]
    fn unlock_shared(&mut self, held: LocalLock) {
        let ctx = Ctx::new(&self.manager, self.id);
        let mut woken = Vec::new();
        {
            let p = self.manager.shared.partition_of(held.hash);
            let mut table = ctx.lock_partition(p);
            ctx.release_in(&mut table, p, &held, &mut woken);
        }
        unpark_all(woken);
        if held.strong {
            ctx.end_strong(held.hash);
        }
    }

    /// Every `(tag, mode)` this backend holds, with how many acquisitions
    /// are not yet released — what a savepoint remembers so that rolling
    /// back to it releases the locks taken since (PostgreSQL's
    /// subtransaction resource owner).
    pub fn held_locks(&self) -> Vec<(LockTag, LockMode, u32)> {
        let mut out: Vec<(LockTag, LockMode, u32)> =
            self.local.table.iter().map(|l| (l.tag, l.mode, l.count)).collect();
        if let Some(owner) = self.lockfree.as_ref() {
            for (s, counts) in owner.counts.iter().enumerate() {
                for (m, &n) in counts.iter().enumerate().filter(|(_, n)| **n > 0) {
                    let key = owner.array.keys[s].load(Ordering::Relaxed);
                    out.push((LockTag::relation((key >> 32) as u32, key as u32), LockMode::ALL[m], n));
                }
            }
        }
        out
    }

    /// Acquires `tag` in `mode` and returns a guard that releases it when
    /// dropped — for locks held briefly, like the relation-extension lock.
    ///
    /// ```
    /// use turnstile_lock::{LockManager, LockMode, LockTag, Wait};
    /// let manager = LockManager::new(&turnstile_sync::Config::default()).unwrap();
    /// let mut backend = manager.register().unwrap();
    /// let extend = LockTag::relation_extend(1, 16384);
    /// {
    ///     let guard = backend.lock_scoped(extend, LockMode::Exclusive, Wait::Block).unwrap();
    ///     assert_eq!(guard.waiters(), 0); // nobody queued: extend by one block
    /// }
    /// assert!(!backend.holds(&extend, LockMode::Exclusive));
    /// ```
    pub fn lock_scoped(&mut self, tag: LockTag, mode: LockMode, wait: Wait) -> Result<ScopedLock<'_>, LockError> {
        self.lock(tag, mode, wait)?;
        Ok(ScopedLock { backend: self, tag, mode })
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        self.release_all();
        let slot = self.slot();
        slot.wait_status.store(IDLE, Ordering::Relaxed);
        slot.in_use.store(false, Ordering::Release);
    }
}

/// A lock held until the guard is dropped; see [`Backend::lock_scoped`].
#[must_use = "the lock is released as soon as the guard is dropped"]
#[derive(Debug)]
pub struct ScopedLock<'a> {
    backend: &'a mut Backend,
    tag: LockTag,
    mode: LockMode,
}

impl ScopedLock<'_> {
    /// How many backends wait for this lock right now.
    pub fn waiters(&self) -> usize {
        self.backend.manager.waiters(&self.tag)
    }

    /// The lock's tag.
    pub fn tag(&self) -> LockTag {
        self.tag
    }
}

impl Drop for ScopedLock<'_> {
    fn drop(&mut self) {
        let released = self.backend.unlock(self.tag, self.mode);
        debug_assert!(released.is_ok(), "a scoped lock is held until its guard drops");
    }
}

/// The owner's view of its fast-path array (see the fields of [`Backend`]).
struct FastPathMirror<'a> {
    log2: &'a mut u32,
    at_max: &'a mut bool,
    used: &'a mut Vec<u8>,
}

/// Records a weak relation lock in the backend's fast-path slots, growing
/// them if the relation's group is full and growth is allowed.
#[inline(always)]
fn fast_path_grant(
    manager: &LockManager,
    slot: &BackendSlot,
    mirror: FastPathMirror<'_>,
    key: u64,
    mode: LockMode,
    hash: u64,
) -> FastPathResult {
    if *mirror.at_max && mirror.used[group_of(key as u32, *mirror.log2)] as usize >= SLOTS_PER_GROUP {
        return FastPathResult::Full;
    }
    let mut fp = slot.fast_path.lock_exclusive();
    // The handshake with strong lockers: the counter is read while this
    // backend's fast-path lock is held (see the crate documentation).
    if manager.strong_counter(hash).load(Ordering::Acquire) != 0 {
        return FastPathResult::StrongLockPresent;
    }
    loop {
        match fp.grant(key, mode) {
            Grant::Granted { group } => {
                if *mirror.at_max {
                    mirror.used[group] = fp.used_in_group(group) as u8;
                }
                return FastPathResult::Granted;
            }
            Grant::GroupFull if *mirror.at_max => {
                mirror.used[group_of(key as u32, *mirror.log2)] = SLOTS_PER_GROUP as u8;
                return FastPathResult::Full;
            }
            Grant::GroupFull => {
                fp.grow();
                slot.counters.add(Counter::FastPathGrows, 1);
                *mirror.log2 = fp.log2_groups();
                *mirror.at_max = fp.groups() >= manager.fast_path_groups_max;
                mirror.used.clear();
                mirror.used.extend((0..fp.groups()).map(|g| fp.used_in_group(g) as u8));
            }
        }
    }
}
