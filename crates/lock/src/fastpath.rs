//! A backend's fast-path relation-lock slots (Haas 2011, Vondra 2024).
//!
//! Slots come in groups of [`SLOTS_PER_GROUP`]. A relation id hashes to
//! exactly one group (Fibonacci hashing: the top `log2(groups)` bits of
//! `relid × 0x9E3779B9`), and inside a group a lock is found by linear
//! search. Each group has one 64-bit word holding a 3-bit mode mask per
//! slot:
//!
//! | bits of `modes[g]` | meaning |
//! |---|---|
//! | `3i .. 3i+3` | modes held in slot `i` of group `g`: bit 0 AccessShare, 1 RowShare, 2 RowExclusive |
//! | `48 .. 64` | always zero |
//!
//! Invariants (under the owning backend's `LockFastPath` lock):
//! * slot `i` of group `g` is in use ⇔ its 3-bit mask ≠ 0; then
//!   `keys[16g + i]` is its `(database << 32) | relid`, and
//!   `g == group_of(relid, log2_groups)`;
//! * a key occupies at most one slot;
//! * `used` = number of slots in use.
//!
//! **Growth** (beyond PostgreSQL, the `scalable` profile): when the group
//! a lock needs is full and the array is below its maximum, the group count
//! doubles and every entry is re-hashed. Because the group is a prefix of
//! the hash bits, old group `g` splits into new groups `2g` and `2g + 1`:
//! no new group receives more than the 16 entries of its one old group, so
//! re-hashing never overflows. The owner grows its array only while it
//! holds its own fast-path lock, and a strong locker scanning it holds the
//! same lock, so a scan always sees one consistent array and computes the
//! group with the group count of that array.

use crate::mode::{LockMode, ModeMask};

/// Slots per group (PostgreSQL's `FP_LOCK_SLOTS_PER_GROUP`).
pub const SLOTS_PER_GROUP: usize = 16;
/// Mode bits per slot.
const BITS_PER_SLOT: u32 = 3;
/// The lowest bit of every slot's mask: `(bits >> 3i) & 1` for each `i`.
const SLOT_LOW_BITS: u64 = 0x0000_2492_4924_9249;
const _: () = assert!(SLOTS_PER_GROUP as u32 * BITS_PER_SLOT <= 64);
const _: () = assert!(SLOT_LOW_BITS.count_ones() as usize == SLOTS_PER_GROUP);

/// The group relation `relid` maps to among `1 << log2_groups` groups.
#[inline(always)]
pub(crate) fn group_of(relid: u32, log2_groups: u32) -> usize {
    let h = relid.wrapping_mul(0x9E37_79B9) as u64;
    ((h << log2_groups) >> 32) as usize
}

/// The slot's bit for a weak `mode` (AccessShare 0, RowShare 1, RowExclusive 2).
#[inline(always)]
fn mode_bit(mode: LockMode) -> u64 {
    debug_assert!(mode.is_fast_path_eligible());
    1 << (mode as u8 - 1)
}

/// Converts a 3-bit slot mask to a [`ModeMask`].
#[inline(always)]
pub(crate) fn slot_mask_to_modes(mask: u64) -> ModeMask {
    ((mask & 7) as ModeMask) << 1
}

/// Bit `3i` set ⇔ slot `i` of the group whose word is `word` is in use
/// (every other bit clear).
#[inline(always)]
fn occupied(word: u64) -> u64 {
    (word | (word >> 1) | (word >> 2)) & SLOT_LOW_BITS
}

/// The first free slot of a group with occupancy `occ`, or
/// `SLOTS_PER_GROUP` if it is full.
#[inline(always)]
fn first_free(occ: u64) -> usize {
    ((!occ & SLOT_LOW_BITS).trailing_zeros() / BITS_PER_SLOT) as usize
}

/// One backend's fast-path slots. Lives inside the backend's
/// `LockFastPath` `LwLock`; every method needs that lock.
#[derive(Debug, Default)]
pub(crate) struct FastPath {
    log2_groups: u32,
    /// `(database << 32) | relid` per slot; meaningful only while in use.
    keys: Vec<u64>,
    /// One word of 3-bit slot masks per group.
    modes: Vec<u64>,
    /// Slots in use.
    used: usize,
    /// Mode bits set over all slots (one per fast-path lock held).
    bits: usize,
}

/// What [`FastPath::grant`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Grant {
    /// Recorded in a slot of this group.
    Granted { group: usize },
    /// The group is full.
    GroupFull,
}

impl FastPath {
    /// An array of `groups` empty groups (`groups` a power of two).
    pub(crate) fn new(groups: usize) -> FastPath {
        assert!(groups.is_power_of_two(), "fast-path groups must be a power of two");
        FastPath {
            log2_groups: groups.trailing_zeros(),
            keys: vec![0; groups * SLOTS_PER_GROUP],
            modes: vec![0; groups],
            used: 0,
            bits: 0,
        }
    }

    /// Number of groups.
    #[inline(always)]
    pub(crate) fn groups(&self) -> usize {
        self.modes.len()
    }

    /// log2 of the number of groups.
    #[inline(always)]
    pub(crate) fn log2_groups(&self) -> u32 {
        self.log2_groups
    }

    /// Slots in use.
    #[inline(always)]
    pub(crate) fn used(&self) -> usize {
        self.used
    }

    /// Locks held (mode bits set) over all slots.
    #[inline(always)]
    pub(crate) fn bits(&self) -> usize {
        self.bits
    }

    /// Slots in use in `group`.
    #[inline(always)]
    pub(crate) fn used_in_group(&self, group: usize) -> u32 {
        occupied(self.modes[group]).count_ones()
    }

    /// Records `mode` on relation `key` (its low 32 bits are the relid),
    /// re-using the relation's slot if it has one.
    #[inline]
    pub(crate) fn grant(&mut self, key: u64, mode: LockMode) -> Grant {
        let group = group_of(key as u32, self.log2_groups);
        let base = group * SLOTS_PER_GROUP;
        let word = self.modes[group];
        let occ = occupied(word);
        let mut rest = occ;
        while rest != 0 {
            let i = (rest.trailing_zeros() / BITS_PER_SLOT) as usize;
            if self.keys[base + i] == key {
                let bit = mode_bit(mode) << (BITS_PER_SLOT * i as u32);
                debug_assert!(word & bit == 0, "the local table handles re-acquisition");
                self.modes[group] = word | bit;
                self.bits += 1;
                return Grant::Granted { group };
            }
            rest &= rest - 1;
        }
        let free = first_free(occ);
        if free >= SLOTS_PER_GROUP {
            return Grant::GroupFull;
        }
        self.keys[base + free] = key;
        self.modes[group] = word | mode_bit(mode) << (BITS_PER_SLOT * free as u32);
        self.used += 1;
        self.bits += 1;
        Grant::Granted { group }
    }

    /// Removes `mode` on relation `key`; `Some(group)` if it was there,
    /// `None` if not (it was transferred to the shared table).
    #[inline]
    pub(crate) fn ungrant(&mut self, key: u64, mode: LockMode) -> Option<usize> {
        if self.used == 0 {
            return None;
        }
        let group = group_of(key as u32, self.log2_groups);
        let (i, mask) = self.find_in(group, key)?;
        let bit = mode_bit(mode);
        if mask & bit == 0 {
            return None;
        }
        self.modes[group] &= !(bit << (BITS_PER_SLOT * i as u32));
        if mask == bit {
            self.used -= 1;
        }
        self.bits -= 1;
        Some(group)
    }

    /// The slot of `key` in `group` and its 3-bit mask.
    #[inline(always)]
    fn find_in(&self, group: usize, key: u64) -> Option<(usize, u64)> {
        let base = group * SLOTS_PER_GROUP;
        let word = self.modes[group];
        let mut rest = occupied(word);
        while rest != 0 {
            let i = (rest.trailing_zeros() / BITS_PER_SLOT) as usize;
            if self.keys[base + i] == key {
                return Some((i, (word >> (BITS_PER_SLOT * i as u32)) & 7));
            }
            rest &= rest - 1;
        }
        None
    }

    /// The modes held on relation `key`, scanning only its group (what a
    /// strong locker does for every backend).
    pub(crate) fn modes_of(&self, key: u64) -> ModeMask {
        if self.used == 0 {
            return 0;
        }
        let group = group_of(key as u32, self.log2_groups);
        self.find_in(group, key).map_or(0, |(_, mask)| slot_mask_to_modes(mask))
    }

    /// Empties the slot of `key` (after its modes were transferred).
    pub(crate) fn clear(&mut self, key: u64) {
        let group = group_of(key as u32, self.log2_groups);
        if let Some((i, mask)) = self.find_in(group, key) {
            self.modes[group] &= !(7 << (BITS_PER_SLOT * i as u32));
            self.used -= 1;
            self.bits -= mask.count_ones() as usize;
        }
    }

    /// Empties every slot (the owner's `release_all`, when it knows every
    /// entry is its own lock still held).
    pub(crate) fn clear_all(&mut self) {
        self.modes.fill(0);
        self.used = 0;
        self.bits = 0;
    }

    /// Empties the whole group of relation `key`, without fixing the
    /// counts: only for a `release_all` that empties every group holding
    /// an entry and then calls [`Self::cleared`].
    #[inline]
    pub(crate) fn clear_group_of(&mut self, key: u64) {
        let group = group_of(key as u32, self.log2_groups);
        self.modes[group] = 0;
    }

    /// Sets the counts after every used group was emptied by
    /// [`Self::clear_group_of`].
    pub(crate) fn cleared(&mut self) {
        debug_assert!(self.modes.iter().all(|&m| m == 0), "a used group was not cleared");
        self.used = 0;
        self.bits = 0;
    }

    /// Doubles the number of groups, re-hashing every entry.
    pub(crate) fn grow(&mut self) {
        let log2 = self.log2_groups + 1;
        let groups = 1usize << log2;
        let mut keys = vec![0u64; groups * SLOTS_PER_GROUP];
        let mut modes = vec![0u64; groups];
        for (old_group, &word) in self.modes.iter().enumerate() {
            let mut rest = occupied(word);
            while rest != 0 {
                let i = (rest.trailing_zeros() / BITS_PER_SLOT) as usize;
                rest &= rest - 1;
                let key = self.keys[old_group * SLOTS_PER_GROUP + i];
                let mask = (word >> (BITS_PER_SLOT * i as u32)) & 7;
                let group = group_of(key as u32, log2);
                debug_assert!(group >> 1 == old_group, "a group splits into 2g and 2g+1");
                let free = first_free(occupied(modes[group]));
                assert!(free < SLOTS_PER_GROUP, "re-hashing one group cannot overflow a new one");
                keys[group * SLOTS_PER_GROUP + free] = key;
                modes[group] |= mask << (BITS_PER_SLOT * free as u32);
            }
        }
        self.log2_groups = log2;
        self.keys = keys;
        self.modes = modes;
    }

    /// Every entry as `(key, modes)`.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (u64, ModeMask)> + '_ {
        self.modes.iter().enumerate().flat_map(move |(g, &word)| {
            let occ = occupied(word);
            (0..SLOTS_PER_GROUP).filter(move |&i| occ & (1 << (BITS_PER_SLOT * i as u32)) != 0).map(move |i| {
                (self.keys[g * SLOTS_PER_GROUP + i], slot_mask_to_modes(word >> (BITS_PER_SLOT * i as u32)))
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(rel: u32) -> u64 {
        (7u64 << 32) | rel as u64
    }

    #[test]
    fn one_group_holds_sixteen_relations_and_modes_share_a_slot() {
        let mut fp = FastPath::new(1);
        for r in 0..16 {
            assert!(matches!(fp.grant(key(r), LockMode::AccessShare), Grant::Granted { group: 0 }));
        }
        assert!(matches!(fp.grant(key(3), LockMode::RowExclusive), Grant::Granted { .. }));
        assert_eq!(fp.used(), 16);
        assert_eq!(fp.grant(key(99), LockMode::AccessShare), Grant::GroupFull);
        assert_eq!(fp.modes_of(key(3)), LockMode::AccessShare.bit() | LockMode::RowExclusive.bit());
        assert_eq!(fp.ungrant(key(3), LockMode::RowShare), None, "mode not held");
        assert_eq!(fp.ungrant(key(3), LockMode::AccessShare), Some(0));
        assert_eq!(fp.used(), 16, "RowExclusive still in the slot");
        assert_eq!(fp.ungrant(key(3), LockMode::RowExclusive), Some(0));
        assert_eq!(fp.used(), 15);
        assert!(matches!(fp.grant(key(99), LockMode::AccessShare), Grant::Granted { .. }));
    }

    #[test]
    fn a_relation_uses_only_its_group() {
        let mut fp = FastPath::new(64);
        let g = group_of(12345, 6);
        assert_eq!(fp.grant(key(12345), LockMode::RowShare), Grant::Granted { group: g });
        assert_eq!(fp.used_in_group(g), 1);
        assert_eq!((0..64).map(|g| fp.used_in_group(g)).sum::<u32>(), 1);
    }

    #[test]
    fn growth_rehashes_every_entry_and_keeps_modes() {
        let mut fp = FastPath::new(4);
        let mut granted = Vec::new();
        for r in 0..64 {
            if let Grant::Granted { .. } = fp.grant(key(r), LockMode::ALL[(r % 3) as usize]) {
                granted.push(r);
            }
        }
        let before: Vec<_> = granted.iter().map(|&r| fp.modes_of(key(r))).collect();
        fp.grow();
        fp.grow();
        assert_eq!(fp.groups(), 16);
        assert_eq!(fp.used(), granted.len());
        for (i, &r) in granted.iter().enumerate() {
            assert_eq!(fp.modes_of(key(r)), before[i], "relation {r}");
        }
        assert_eq!(fp.entries().count(), granted.len());
    }

    #[test]
    fn consecutive_relids_spread_evenly() {
        // 2000 consecutive relations in 256 groups: Fibonacci hashing keeps
        // every group well under 16, so the benchmark's R = 2000 stays on
        // the fast path once grown.
        let mut counts = vec![0u32; 256];
        for r in 1000..3000 {
            counts[group_of(r, 8)] += 1;
        }
        assert!(counts.iter().all(|&c| c <= 12), "{:?}", counts.iter().max());
    }

    #[test]
    fn clear_empties_the_slot() {
        let mut fp = FastPath::new(2);
        let _ = fp.grant(key(5), LockMode::AccessShare);
        let _ = fp.grant(key(5), LockMode::RowShare);
        let _ = fp.grant(key(6), LockMode::RowShare);
        assert_eq!(fp.bits(), 3);
        fp.clear(key(5));
        assert_eq!(fp.modes_of(key(5)), 0);
        assert_eq!((fp.used(), fp.bits()), (1, 1));
        fp.clear_all();
        assert_eq!((fp.used(), fp.bits(), fp.entries().count()), (0, 0, 0));
    }
}
