//! The lock-free fast-path protocol (`lock.fast_path_protocol = lockfree`,
//! the `scalable` profile): a backend's slots as atomic words, written by
//! the owner without any lock and claimed by strong lockers with a CAS.
//! The correctness argument is in the crate documentation ("Why weak and
//! strong lockers cannot miss each other — lockfree").
//!
//! Slots come in groups of [`SLOTS_PER_GROUP`], and a relation maps to one
//! group exactly as in the `lwlock` protocol ([`group_of`]). Each slot is
//! two atomics: `keys[s]`, the relation's `(database << 32) | relid`, and
//! `words[s]`:
//!
//! | bits of `words[s]` | meaning |
//! |---|---|
//! | `0 .. 3` | **held** modes: bit 0 AccessShare, 1 RowShare, 2 RowExclusive |
//! | `3 .. 6` | **pending** modes: published by the owner, not yet decided (at most one bit) |
//! | `6 .. 64` | **generation**: +1 each time the owner puts a (possibly new) key in an empty slot |
//!
//! Who writes what:
//! * the **owner** writes `keys[s]` only while `words[s]` has no held and
//!   no pending bit, then publishes a pending bit with the generation
//!   bumped; it resolves a pending bit (to held, or away) with a plain
//!   store — nobody else writes a word while it has a pending bit; it
//!   clears a held bit with a CAS (`unlock`), or, holding its own
//!   `LockFastPath` lock exclusively, with plain stores (`release_all`);
//! * a **strong locker** (transfer) holds the owner's `LockFastPath` lock
//!   shared and its target's partition lock, waits out a pending bit, and
//!   claims a word whose key matches by a CAS from the exact value it read
//!   to "no bits, same generation": the CAS fails if the owner released,
//!   added a mode, or re-used the slot for another key (the generation
//!   changed) in between;
//! * **growth** replaces the array only under the owner's `LockFastPath`
//!   lock held exclusively, so no strong locker scans meanwhile.
//!
//! Exactly one of owner and transferrer ends each held bit: the owner's
//! release CAS and the transferrer's claim CAS act on one word, and only
//! one of two CASes from the same value succeeds.

use crate::fastpath::{group_of, SLOTS_PER_GROUP};
use crate::mode::{LockMode, ModeMask};
use crate::sync::atomic::{AtomicU64, Ordering};

/// Held-mode bits of a slot word.
pub(crate) const HELD: u64 = 0b111;
/// Pending-mode bits of a slot word.
pub(crate) const PENDING: u64 = 0b111 << 3;
/// One generation.
pub(crate) const GENERATION_ONE: u64 = 1 << 6;
/// The generation bits.
pub(crate) const GENERATION: u64 = !(GENERATION_ONE - 1);

/// The held bit of a weak `mode` (AccessShare 0, RowShare 1, RowExclusive 2).
#[inline(always)]
pub(crate) fn held_bit(mode: LockMode) -> u64 {
    debug_assert!(mode.is_fast_path_eligible());
    1 << (mode as u8 - 1)
}

/// Converts the held bits of a word to a [`ModeMask`].
#[inline(always)]
pub(crate) fn held_modes(word: u64) -> ModeMask {
    ((word & HELD) as ModeMask) << 1
}

/// One backend's lock-free fast-path slots. Shared by the owner (which
/// keeps an `Arc` to it) and strong lockers (which reach it through the
/// owner's `LockFastPath` lock, held shared).
#[derive(Debug)]
pub(crate) struct SlotArray {
    log2_groups: u32,
    pub(crate) keys: Box<[AtomicU64]>,
    pub(crate) words: Box<[AtomicU64]>,
}

impl Default for SlotArray {
    fn default() -> SlotArray {
        SlotArray::new(1)
    }
}

impl SlotArray {
    /// `groups` empty groups (a power of two).
    pub(crate) fn new(groups: usize) -> SlotArray {
        assert!(groups.is_power_of_two(), "fast-path groups must be a power of two");
        let slots = groups * SLOTS_PER_GROUP;
        SlotArray {
            log2_groups: groups.trailing_zeros(),
            keys: (0..slots).map(|_| AtomicU64::new(0)).collect(),
            words: (0..slots).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Number of groups.
    #[inline(always)]
    pub(crate) fn groups(&self) -> usize {
        1 << self.log2_groups
    }

    /// The first slot of the group of relation `key`.
    #[inline(always)]
    pub(crate) fn group_base(&self, key: u64) -> usize {
        group_of(key as u32, self.log2_groups) * SLOTS_PER_GROUP
    }

    /// Every slot holding a lock, as `(key, modes)` (a snapshot: views).
    pub(crate) fn entries(&self) -> impl Iterator<Item = (u64, ModeMask)> + '_ {
        self.words.iter().zip(self.keys.iter()).filter_map(|(w, k)| {
            let word = w.load(Ordering::Acquire);
            (word & HELD != 0).then(|| (k.load(Ordering::Acquire), held_modes(word)))
        })
    }

    /// Slots holding a lock.
    pub(crate) fn used(&self) -> usize {
        self.words.iter().filter(|w| w.load(Ordering::Acquire) & HELD != 0).count()
    }
}

/// The owner's private view of its slots (no other thread reads it). It
/// is also the **local lock table** of the locks granted by this fast
/// path: `counts[s][m]` counts the acquisitions of weak mode `m` on the
/// relation in slot `s`, so re-acquiring a held weak relation lock — and
/// finding out that it is not held — is one group search, with no hash
/// table (PostgreSQL's `LOCALLOCK` lookup, cut from the hot path).
#[derive(Debug)]
pub(crate) struct OwnerSlots {
    /// The array, also reachable by strong lockers through the owner's
    /// `LockFastPath` lock.
    pub(crate) array: std::sync::Arc<SlotArray>,
    /// Per group, bit `i` set ⇔ slot `i` has a count > 0 (its held bits
    /// may have been claimed by a strong locker since).
    pub(crate) occupied: Vec<u16>,
    /// Groups that may have an occupied slot, each listed once (bit set in
    /// `listed`): `release_all` visits only these, so a transaction that
    /// touched one relation does not scan every group.
    pub(crate) touched: Vec<u32>,
    /// Per group, one bit: listed in `touched`.
    pub(crate) listed: Vec<u64>,
    /// Per slot, acquisitions not yet released per weak mode (index
    /// `mode - 1`). A count > 0 whose held bit is gone was claimed: the lock
    /// is in the shared table.
    pub(crate) counts: Vec<[u32; 3]>,
    /// The array reached `lock.fast_path_slots_max`.
    pub(crate) at_max: bool,
}

/// Where a new weak lock goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// The relation already has this slot (another mode held in it).
    Existing(usize),
    /// This free slot.
    Free(usize),
    /// The relation's group has no free slot.
    GroupFull,
}

impl OwnerSlots {
    /// Empty slots in `groups` groups.
    pub(crate) fn new(array: std::sync::Arc<SlotArray>, at_max: bool) -> OwnerSlots {
        let groups = array.groups();
        OwnerSlots {
            array,
            occupied: vec![0; groups],
            touched: Vec::new(),
            listed: vec![0; groups.div_ceil(64)],
            counts: vec![[0; 3]; groups * SLOTS_PER_GROUP],
            at_max,
        }
    }

    /// Marks slot `s` occupied, listing its group for `release_all`.
    #[inline(always)]
    pub(crate) fn occupy(&mut self, s: usize) {
        let group = s / SLOTS_PER_GROUP;
        self.occupied[group] |= 1 << (s % SLOTS_PER_GROUP);
        let (word, bit) = (group / 64, 1u64 << (group % 64));
        if self.listed[word] & bit == 0 {
            self.listed[word] |= bit;
            self.touched.push(group as u32);
        }
    }

    /// The slot for a new lock on relation `key`.
    #[inline(always)]
    pub(crate) fn place(&self, key: u64) -> Place {
        let base = self.array.group_base(key);
        let occupied = self.occupied[base / SLOTS_PER_GROUP];
        let mut rest = occupied;
        while rest != 0 {
            let i = rest.trailing_zeros() as usize;
            // Relaxed: only this thread writes keys.
            if self.array.keys[base + i].load(Ordering::Relaxed) == key {
                return Place::Existing(base + i);
            }
            rest &= rest - 1;
        }
        match (!occupied).trailing_zeros() as usize {
            i if i < SLOTS_PER_GROUP => Place::Free(base + i),
            _ => Place::GroupFull,
        }
    }

    /// Publishes `mode` as pending in `place`; returns the word written.
    /// The caller orders it before its read of the strong-lock counter
    /// (a `SeqCst` fence) and then calls [`Self::resolve`].
    #[inline(always)]
    pub(crate) fn publish(&self, place: Place, key: u64, mode: LockMode) -> (usize, u64) {
        let pending = held_bit(mode) << 3;
        match place {
            Place::Free(s) => {
                let word = &self.array.words[s];
                // Relaxed: an unreferenced slot's word has no bits, and no
                // one but this thread writes a word without held bits.
                let old = word.load(Ordering::Relaxed);
                debug_assert_eq!(old & (HELD | PENDING), 0, "slot set: a free slot is empty");
                // Release, both: a strong locker that reads the new word
                // (Acquire) reads this key or a later one.
                self.array.keys[s].store(key, Ordering::Release);
                let new = (old & GENERATION).wrapping_add(GENERATION_ONE) | pending;
                word.store(new, Ordering::Release);
                (s, new)
            }
            Place::Existing(s) => {
                // A strong locker may claim the held bits concurrently: CAS.
                let word = &self.array.words[s];
                let mut old = word.load(Ordering::Relaxed);
                loop {
                    debug_assert_eq!(old & (PENDING | pending >> 3), 0, "the local table handles re-acquisition");
                    match word.compare_exchange_weak(old, old | pending, Ordering::Release, Ordering::Relaxed) {
                        Ok(_) => return (s, old | pending),
                        Err(now) => old = now,
                    }
                }
            }
            Place::GroupFull => unreachable!("publish needs a slot"),
        }
    }

    /// Ends the pending state of slot `s` whose word is `published`: held
    /// if `granted` (count 1), else backed out. A plain store: while a word
    /// has a pending bit, only its owner writes it.
    #[inline(always)]
    pub(crate) fn resolve(&mut self, s: usize, published: u64, mode: LockMode, granted: bool) {
        let held = if granted { (published & PENDING) >> 3 } else { 0 };
        self.array.words[s].store((published & !PENDING) | held, Ordering::Release);
        if granted {
            let count = &mut self.counts[s][mode as usize - 1];
            debug_assert_eq!(*count, 0, "grant: a mode is granted once per holding");
            *count = 1;
            self.occupy(s);
        }
    }

    /// The slot relation `key` has (a count > 0 in some mode), if any.
    #[inline(always)]
    pub(crate) fn find(&self, key: u64) -> Option<usize> {
        match self.place(key) {
            Place::Existing(s) => Some(s),
            _ => None,
        }
    }

    /// Clears `mode` from slot `s` after its count dropped to 0; `true` if
    /// it was there, `false` if a strong locker claimed it (the lock is in
    /// the shared table).
    #[inline(always)]
    pub(crate) fn release(&mut self, s: usize, mode: LockMode) -> bool {
        let bit = held_bit(mode);
        let word = &self.array.words[s];
        let mut old = word.load(Ordering::Relaxed);
        let found = loop {
            if old & bit == 0 {
                break false;
            }
            // Release: a strong locker that reads the cleared word sees
            // everything done under the lock.
            match word.compare_exchange_weak(old, old & !bit, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => break true,
                Err(now) => old = now,
            }
        };
        debug_assert_eq!(self.counts[s][mode as usize - 1], 0, "ungrant: only the last release clears the slot");
        if self.counts[s] == [0; 3] {
            self.occupied[s / SLOTS_PER_GROUP] &= !(1 << (s % SLOTS_PER_GROUP));
        }
        found
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn key(rel: u32) -> u64 {
        (7u64 << 32) | rel as u64
    }

    #[test]
    fn publish_resolve_release_and_generations() {
        let mut o = OwnerSlots::new(Arc::new(SlotArray::new(1)), true);
        let Place::Free(s) = o.place(key(1)) else { panic!() };
        let (s2, w) = o.publish(Place::Free(s), key(1), LockMode::AccessShare);
        assert_eq!((s2, w & PENDING, w & GENERATION), (s, 1 << 3, GENERATION_ONE));
        o.resolve(s, w, LockMode::AccessShare, true);
        assert_eq!(o.place(key(1)), Place::Existing(s));
        let (_, w) = o.publish(Place::Existing(s), key(1), LockMode::RowExclusive);
        o.resolve(s, w, LockMode::RowExclusive, false);
        assert_eq!(o.array.words[s].load(Ordering::Relaxed) & (HELD | PENDING), 1);
        o.counts[s][0] = 0;
        assert!(o.release(s, LockMode::AccessShare));
        assert_eq!(o.place(key(2)), Place::Free(s), "an unreferenced slot is free again");
        let (_, w) = o.publish(Place::Free(s), key(2), LockMode::RowShare);
        assert_eq!(w & GENERATION, 2 * GENERATION_ONE, "a new key bumps the generation");
    }

    #[test]
    fn a_claimed_bit_is_not_released_twice() {
        let mut o = OwnerSlots::new(Arc::new(SlotArray::new(1)), true);
        let Place::Free(s) = o.place(key(1)) else { panic!() };
        let (_, w) = o.publish(Place::Free(s), key(1), LockMode::AccessShare);
        o.resolve(s, w, LockMode::AccessShare, true);
        // A strong locker's claim: CAS to "no bits, same generation".
        let word = o.array.words[s].load(Ordering::Relaxed);
        o.array.words[s].compare_exchange(word, word & GENERATION, Ordering::AcqRel, Ordering::Acquire).unwrap();
        o.counts[s][0] = 0;
        assert!(!o.release(s, LockMode::AccessShare));
        assert_eq!(o.occupied[0], 0);
    }

    #[test]
    fn a_full_group_is_reported() {
        let mut o = OwnerSlots::new(Arc::new(SlotArray::new(1)), true);
        for r in 0..16 {
            let Place::Free(s) = o.place(key(r)) else { panic!("{r}") };
            let (_, w) = o.publish(Place::Free(s), key(r), LockMode::AccessShare);
            o.resolve(s, w, LockMode::AccessShare, true);
        }
        assert_eq!(o.place(key(99)), Place::GroupFull);
        assert_eq!(o.array.used(), 16);
        assert_eq!(o.array.entries().count(), 16);
    }
}
