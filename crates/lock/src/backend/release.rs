//! Releasing everything at once: the end of a transaction (PostgreSQL's
//! `LockReleaseAll`), in three steps, each one concept:
//!
//! 1. **The fast-path slots**, under the backend's protocol:
//!    - `lockfree` ([`Backend::release_lock_free_slots`]): only the groups
//!      listed in `OwnerSlots::touched` are visited. Up to
//!      [`RELEASE_ALL_ATOMIC_MAX`] locks are cleared one atomic
//!      read-modify-write each, racing a strong locker's claim CAS (exactly
//!      one of the two wins each held bit); more are cleared with plain
//!      stores under the own `LockFastPath` lock held exclusively, which
//!      shuts strong lockers out. A bit the owner counted but no longer
//!      finds was **claimed**: the lock is in the shared table.
//!    - `lwlock` ([`Backend::release_lwlock_slots`]): the own fast-path
//!      lock is taken once. Each of our fast-path locks still in our slots
//!      is one mode bit there, and transfers only remove bits, so
//!      `bits() == fp_local` ⇔ no lock was moved: then every bit in the
//!      slots is ours, and whole groups are emptied at once. Otherwise each
//!      lock is ungranted on its own, and one not found was moved to the
//!      shared table by a strong locker.
//! 2. **The local hash table** is drained; its `Shared` entries and the
//!    claimed fast-path locks are the shared-table locks to release.
//! 3. **The shared table** ([`Backend::release_shared_batch`]): the locks
//!    sorted by partition, one acquisition of each partition lock involved,
//!    the woken waiters unparked after it is dropped, then the strong
//!    counters of strong locks decremented.
//!
//! Lock order: step 1's fast-path lock is dropped before step 3 takes any
//! partition lock, so this path never holds the two kinds at once (the
//! crate documentation's order allows it; not needing it is simpler).
//!
//! After `release_all`: `held_count() == 0`, `fp_local == 0`,
//! `weak_shared == 0`, and the backend's slots hold no lock (asserted in
//! debug builds). The scratch vector is kept, so a transaction's end does
//! not allocate.

use super::Backend;
use crate::fastpath::SLOTS_PER_GROUP;
use crate::local::{local_hash, LocalLock, Via};
use crate::lockfree::{OwnerSlots, HELD};
use crate::mode::LockMode;
use crate::shared_table::{unpark_all, Ctx};
use crate::sync::atomic::Ordering;
use crate::tag::LockTag;

/// Under the `lockfree` protocol, `release_all` clears up to this many
/// fast-path locks one atomic operation each, without its `LockFastPath`
/// lock (two atomic operations); more, under that lock with plain stores.
pub(crate) const RELEASE_ALL_ATOMIC_MAX: usize = 4;

impl Backend {
    /// Releases every lock this backend holds, however often acquired: the
    /// end of a transaction (PostgreSQL's `LockReleaseAll`). Fast-path
    /// locks are released under one acquisition of the backend's own
    /// fast-path lock, shared-table locks partition by partition with one
    /// acquisition of each partition lock involved.
    pub fn release_all(&mut self) {
        if self.held_count() == 0 {
            return;
        }
        let mut shared = std::mem::take(&mut self.scratch);
        if self.lockfree.is_some() {
            self.release_lock_free_slots(&mut shared);
            if self.local.len() > 0 {
                shared.extend(self.local.table.drain());
            }
            self.weak_shared = 0;
        } else {
            self.release_lwlock_slots(&mut shared);
        }
        if !shared.is_empty() {
            self.release_shared_batch(&mut shared);
        }
        self.scratch = shared;
    }

    /// [`Self::release_all`], except that `keep(tag, mode)` acquisitions of
    /// each held non-relation lock stay held (0: release it; at most the
    /// count held) — the end of a transaction that keeps session-level
    /// advisory locks (PostgreSQL's `LockReleaseAll` with `allLocks`
    /// false).
    pub fn release_all_except(&mut self, keep: &mut dyn FnMut(&LockTag, LockMode) -> u32) {
        let mut kept = Vec::new();
        for held in self.local.table.iter_mut() {
            if held.tag.is_relation() || held.via != Via::Shared {
                continue;
            }
            let n = keep(&held.tag, held.mode).min(held.count);
            if n > 0 {
                kept.push(LocalLock { count: n, ..*held });
            }
        }
        if kept.is_empty() {
            return self.release_all();
        }
        // Kept entries leave the local table first, so `release_all` does
        // not give their grants back; they return with the kept count.
        self.local.table.retain(|l| !kept.iter().any(|k| k.tag == l.tag && k.mode == l.mode));
        self.release_all();
        for k in kept {
            self.local.table.insert_unique(local_hash(k.hash, k.mode), k, |l| local_hash(l.hash, l.mode));
        }
    }

    /// Step 1 under `lockfree`: empties every slot this backend occupies,
    /// pushing the locks strong lockers claimed onto `shared`.
    #[inline]
    fn release_lock_free_slots(&mut self, shared: &mut Vec<LocalLock>) {
        if self.fp_local == 0 {
            return;
        }
        let Some(owner) = self.lockfree.as_mut() else { unreachable!("checked by the caller") };
        let slot = &self.manager.backends[self.id];
        // Few locks: atomic clears racing the claims. Many: the own lock
        // exclusive shuts strong lockers out, so plain stores suffice.
        let guard = (self.fp_local > RELEASE_ALL_ATOMIC_MAX).then(|| slot.lockfree.lock_exclusive());
        let mut touched = std::mem::take(&mut owner.touched);
        for group in touched.drain(..) {
            let group = group as usize;
            owner.listed[group / 64] &= !(1 << (group % 64));
            let mut rest = std::mem::take(&mut owner.occupied[group]);
            while rest != 0 {
                let s = group * SLOTS_PER_GROUP + rest.trailing_zeros() as usize;
                rest &= rest - 1;
                clear_owned_slot(owner, s, guard.is_some(), shared);
            }
        }
        owner.touched = touched;
        debug_assert!(owner.array.used() == 0, "slot clear: every held slot emptied");
        drop(guard);
        self.fp_local = 0;
    }

    /// Steps 1 and 2 under `lwlock`: empties this backend's slots and its
    /// local table, pushing the locks to release in the shared table onto
    /// `shared`.
    #[inline]
    fn release_lwlock_slots(&mut self, shared: &mut Vec<LocalLock>) {
        let slot = &self.manager.backends[self.id];
        let mut fp = (self.fp_local > 0).then(|| slot.fast_path.lock_exclusive());
        // Equal counts: none of our fast-path locks was moved (module
        // documentation), so whole groups can be emptied at once.
        let bulk = fp.as_ref().is_some_and(|fp| fp.bits() == self.fp_local);
        if let (true, Some(fp)) = (bulk, fp.as_mut()) {
            let only_fast_path = self.local.len() == self.fp_local;
            if self.fp_local * 4 >= fp.groups() && only_fast_path {
                fp.clear_all();
                self.local.table.clear();
            } else {
                for held in self.local.table.drain() {
                    match held.via {
                        Via::FastPath => fp.clear_group_of(held.tag.fast_path_key()),
                        Via::Shared => shared.push(held),
                    }
                }
                fp.cleared();
            }
        } else {
            for held in self.local.table.drain() {
                if held.via == Via::FastPath {
                    let fp = fp.get_or_insert_with(|| slot.fast_path.lock_exclusive());
                    if fp.ungrant(held.tag.fast_path_key(), held.mode).is_some() {
                        continue;
                    }
                }
                shared.push(held);
            }
        }
        // Every slot held one of our locks, and all are released now —
        // including groups that transfers emptied behind our back.
        debug_assert!(fp.as_ref().is_none_or(|fp| fp.used() == 0));
        if self.fp_at_max {
            self.fp_used.fill(0);
        }
        self.fp_local = 0;
    }

    /// Step 3: releases `shared` (left empty) in the shared table,
    /// partition by partition, then ends the strong locks among them.
    fn release_shared_batch(&mut self, shared: &mut Vec<LocalLock>) {
        let ctx = Ctx::new(&self.manager, self.id);
        let partitions = &self.manager.shared;
        shared.sort_unstable_by_key(|l| partitions.partition_of(l.hash));
        let mut woken = Vec::new();
        for run in shared.chunk_by(|a, b| partitions.partition_of(a.hash) == partitions.partition_of(b.hash)) {
            let p = partitions.partition_of(run[0].hash);
            let mut table = ctx.lock_partition(p);
            for held in run {
                ctx.release_in(&mut table, p, held, &mut woken);
            }
            drop(table);
            unpark_all(woken.drain(..));
        }
        for held in shared.iter().filter(|l| l.strong) {
            ctx.end_strong(held.hash);
        }
        shared.clear();
    }
}

/// Clears slot `s` of the owner's locks (its counts go to 0) and pushes
/// the modes a strong locker claimed onto `shared`. `exclusive`: the
/// owner holds its `LockFastPath` lock exclusively, so no claim can race
/// and plain stores suffice.
#[inline]
fn clear_owned_slot(owner: &mut OwnerSlots, s: usize, exclusive: bool, shared: &mut Vec<LocalLock>) {
    let mut mine = 0u64;
    for (m, count) in owner.counts[s].iter_mut().enumerate() {
        if std::mem::take(count) > 0 {
            mine |= 1 << m;
        }
    }
    let word = &owner.array.words[s];
    let before = if exclusive {
        // Relaxed: published to strong lockers by the unlock.
        let w = word.load(Ordering::Relaxed);
        word.store(w & !mine, Ordering::Relaxed);
        w
    } else {
        // Release: as `OwnerSlots::release`.
        word.fetch_and(!mine, Ordering::Release)
    };
    let claimed = mine & !before & HELD;
    if claimed == 0 {
        return;
    }
    // Claimed by a strong locker: in the shared table.
    let key = owner.array.keys[s].load(Ordering::Relaxed);
    let tag = LockTag::relation((key >> 32) as u32, key as u32);
    let hash = tag.hash_code();
    for m in (0..3).filter(|m| claimed & (1 << m) != 0) {
        shared.push(LocalLock { tag, mode: LockMode::ALL[m], hash, count: 0, via: Via::Shared, strong: false });
    }
}
