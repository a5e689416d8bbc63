//! The owner's side of the `lockfree` fast path (the `scalable`
//! profile): acquiring a weak relation lock (AccessShare, RowShare,
//! RowExclusive) in the backend's own slot array, and doubling the array
//! when the relation's group is full.
//!
//! The slots (`OwnerSlots`, `src/lockfree.rs`) are also the local table of
//! the locks they granted: `counts[s][m] > 0` ⇔ this backend holds weak
//! mode `m` on the relation in slot `s` (granted by the fast path, or
//! claimed by a strong locker since and so in the shared table). A held
//! lock is found by one search of the relation's group, with no hash. Only
//! weak relation locks that went to the shared table live in the local
//! hash table, counted by `Backend::weak_shared`; while that is 0 the hash
//! table is not probed at all.
//!
//! The handshake with strong lockers is the crate documentation's: publish
//! the mode as *pending*, `SeqCst` fence, read the relation's strong
//! counter; 0 ⇒ keep it as *held*, otherwise back out and take the shared
//! table. Growth holds the own `LockFastPath` lock exclusively, so no
//! strong locker scans the array while it is replaced.

use super::Backend;
use crate::error::LockError;
use crate::fastpath::SLOTS_PER_GROUP;
use crate::local::{local_hash, LocalLock, Via};
use crate::lockfree::{OwnerSlots, Place, SlotArray, GENERATION_ONE, HELD, PENDING};
use crate::manager::LockManager;
use crate::mode::LockMode;
use crate::stats::Counter;
use crate::sync::atomic::{fence, Ordering};
use crate::tag::LockTag;
use crate::wait::{Acquired, Wait};
use std::sync::Arc;

impl Backend {
    /// [`Self::lock`] of a weak relation mode under the `lockfree` protocol.
    /// The slots are the local table of the locks they granted: a held lock
    /// is found by one search of the relation's group, with no hash; only
    /// weak relation locks that went to the shared table live in the local
    /// hash table, which is not even probed while it has none.
    #[inline(always)]
    pub(super) fn lock_weak_lock_free(
        &mut self,
        tag: LockTag,
        mode: LockMode,
        wait: Wait,
    ) -> Result<Acquired, LockError> {
        let key = tag.fast_path_key();
        let Some(owner) = self.lockfree.as_mut() else { unreachable!("checked by the caller") };
        let place = owner.place(key);
        if let Place::Existing(s) = place {
            let count = &mut owner.counts[s][mode as usize - 1];
            if *count > 0 {
                *count += 1;
                return Ok(Acquired::AlreadyHeld);
            }
        }
        if self.weak_shared > 0 || place == Place::GroupFull {
            return self.lock_weak_lock_free_slow(tag, mode, wait, place);
        }
        let hash = tag.hash_code();
        let manager: &LockManager = &self.manager;
        let slot = &manager.backends[self.id];
        // The handshake with strong lockers (crate documentation): publish
        // as pending, fence, read the counter, keep or back out.
        let (s, published) = owner.publish(place, key, mode);
        fence(Ordering::SeqCst);
        // Acquire: a counter read back at 0 after a strong lock's release
        // shows everything done under that lock.
        let free = manager.strong_counter(hash).load(Ordering::Acquire) == 0;
        owner.resolve(s, published, mode, free);
        if free {
            self.fp_local += 1;
            slot.counters.add(Counter::FastPathAcquires, 1);
            return Ok(Acquired::New);
        }
        self.lock_slow(tag, mode, hash, wait)
    }

    /// The rarer cases of [`Self::lock_weak_lock_free`]: the local hash
    /// table holds weak relation locks (granted through the shared table),
    /// or the relation's group is full.
    #[inline(never)]
    fn lock_weak_lock_free_slow(
        &mut self,
        tag: LockTag,
        mode: LockMode,
        wait: Wait,
        place: Place,
    ) -> Result<Acquired, LockError> {
        let hash = tag.hash_code();
        if self.weak_shared > 0 {
            if let Some(held) = self.local.table.find_mut(local_hash(hash, mode), |l| l.tag == tag && l.mode == mode) {
                held.count += 1;
                return Ok(Acquired::AlreadyHeld);
            }
        }
        if place != Place::GroupFull {
            // Not held anywhere: the fast path proper, which no longer
            // needs the hash table.
            let weak_shared = std::mem::take(&mut self.weak_shared);
            let result = self.lock_weak_lock_free(tag, mode, wait);
            self.weak_shared += weak_shared;
            return result;
        }
        if self.lockfree.as_ref().is_some_and(|o| o.at_max) {
            self.slot().counters.add(Counter::FastPathOverflows, 1);
            return self.lock_slow(tag, mode, hash, wait);
        }
        self.grow_lock_free();
        self.lock(tag, mode, wait)
    }

    /// Doubles the `lockfree` protocol's slot array (its relation's group
    /// was full below `lock.fast_path_slots_max`), holding the own
    /// `LockFastPath` lock exclusively so that no strong locker scans
    /// meanwhile. Local entries follow their slots; an entry whose mode a
    /// strong locker claimed is in the shared table and becomes `Shared`.
    #[cold]
    fn grow_lock_free(&mut self) {
        let slot = &self.manager.backends[self.id];
        let owner = self.lockfree.as_mut().expect("the lockfree protocol");
        let mut guard = slot.lockfree.lock_exclusive();
        let old = &*owner.array;
        let new = SlotArray::new(old.groups() * 2);
        let mut taken = vec![0u16; new.groups()];
        let mut moved = vec![u32::MAX; old.words.len()];
        for (s, to) in moved.iter_mut().enumerate() {
            // Relaxed: strong lockers are excluded, and the owner wrote the rest.
            let word = old.words[s].load(Ordering::Relaxed);
            debug_assert_eq!(word & PENDING, 0, "only the owner publishes, and it is here");
            if word & HELD == 0 {
                continue;
            }
            let key = old.keys[s].load(Ordering::Relaxed);
            let base = new.group_base(key);
            let group = base / SLOTS_PER_GROUP;
            let free = (!taken[group]).trailing_zeros() as usize;
            assert!(free < SLOTS_PER_GROUP, "re-hashing one group cannot overflow a new one");
            taken[group] |= 1 << free;
            new.keys[base + free].store(key, Ordering::Relaxed);
            new.words[base + free].store(GENERATION_ONE | (word & HELD), Ordering::Relaxed);
            *to = (base + free) as u32;
        }
        let mut fresh = OwnerSlots::new(Arc::new(new), false);
        for (s, &to) in moved.iter().enumerate() {
            let counts = owner.counts[s];
            if counts == [0; 3] {
                continue;
            }
            let word = if to == u32::MAX { 0 } else { fresh.array.words[to as usize].load(Ordering::Relaxed) };
            for (m, &count) in counts.iter().enumerate().filter(|(_, &c)| c > 0) {
                if word & (1 << m) != 0 {
                    let to = to as usize;
                    fresh.counts[to][m] = count;
                    fresh.occupy(to);
                    continue;
                }
                // Claimed by a strong locker: granted in the shared table,
                // so it joins the local hash table as a shared-table lock.
                let key = old.keys[s].load(Ordering::Relaxed);
                let tag = LockTag::relation((key >> 32) as u32, key as u32);
                let mode = LockMode::ALL[m];
                self.local.insert(LocalLock {
                    tag,
                    mode,
                    hash: tag.hash_code(),
                    count,
                    via: Via::Shared,
                    strong: false,
                });
                self.weak_shared += 1;
                self.fp_local -= 1;
            }
        }
        fresh.at_max = fresh.array.groups() >= self.manager.fast_path_groups_max;
        *guard = Arc::clone(&fresh.array);
        drop(guard);
        *owner = fresh;
        slot.counters.add(Counter::FastPathGrows, 1);
    }
}
