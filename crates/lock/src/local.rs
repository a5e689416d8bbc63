//! The backend-local lock table (PostgreSQL's `LOCALLOCK` hash).
//!
//! One entry per `(tag, mode)` the backend holds, with a count of how many
//! times it was acquired. Re-acquiring a held lock only bumps the count and
//! touches no shared state; the shared structures (fast-path slot or shared
//! table) see one grant per entry, made when the count went 0 → 1 and
//! undone when it goes back to 0.
//!
//! The table is a `hashbrown::HashTable` keyed by the tag's stable hash
//! mixed with the mode: no hasher state, one probe per operation, and its
//! memory is kept across transactions, so the hot path does not allocate.

use crate::mode::LockMode;
use crate::tag::LockTag;
use hashbrown::hash_table::{Entry, HashTable};

/// Where the shared state of a held lock lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Via {
    /// Granted in the backend's fast-path slots under the `lwlock` protocol
    /// — or moved from there to the shared table by a strong locker since
    /// (release finds out). (Under `lockfree` the slots keep their own
    /// counts, `src/lockfree.rs`, and only `Shared` entries are here.)
    FastPath,
    /// Granted in the shared table.
    Shared,
}

/// One held `(tag, mode)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LocalLock {
    pub(crate) tag: LockTag,
    pub(crate) mode: LockMode,
    /// `tag.hash_code()`.
    pub(crate) hash: u64,
    /// Acquisitions not yet released; ≥ 1 while the entry exists.
    pub(crate) count: u32,
    pub(crate) via: Via,
    /// This acquisition incremented the tag's strong-lock counter, which
    /// must be decremented after the shared-table release.
    pub(crate) strong: bool,
}

/// The hash of a local entry: the tag's hash mixed with the mode.
#[inline(always)]
pub(crate) fn local_hash(tag_hash: u64, mode: LockMode) -> u64 {
    tag_hash ^ (mode as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17)
}

/// The local lock table.
#[derive(Debug, Default)]
pub(crate) struct LocalTable {
    pub(crate) table: HashTable<LocalLock>,
}

impl LocalTable {
    /// Bumps the count of `(tag, mode)` if held; `true` if it was.
    #[cfg(test)]
    pub(crate) fn reacquire(&mut self, tag: &LockTag, mode: LockMode, hash: u64) -> bool {
        match self.table.find_mut(local_hash(hash, mode), |l| l.tag == *tag && l.mode == mode) {
            Some(l) => {
                l.count += 1;
                true
            }
            None => false,
        }
    }

    /// Records a new holding (count 1); it must not be held already.
    #[inline(always)]
    pub(crate) fn insert(&mut self, lock: LocalLock) {
        debug_assert_eq!(lock.count, 1);
        match self.table.entry(
            local_hash(lock.hash, lock.mode),
            |l| l.tag == lock.tag && l.mode == lock.mode,
            |l| local_hash(l.hash, l.mode),
        ) {
            Entry::Vacant(v) => {
                v.insert(lock);
            }
            Entry::Occupied(_) => unreachable!("inserted a held lock twice"),
        }
    }

    /// Drops one acquisition of `(tag, mode)`. `None`: not held;
    /// `Some(None)`: still held; `Some(Some(entry))`: the last one, removed.
    #[inline(always)]
    pub(crate) fn release(&mut self, tag: &LockTag, mode: LockMode, hash: u64) -> Option<Option<LocalLock>> {
        let Ok(mut entry) = self.table.find_entry(local_hash(hash, mode), |l| l.tag == *tag && l.mode == mode) else {
            return None;
        };
        let lock = entry.get_mut();
        if lock.count > 1 {
            lock.count -= 1;
            return Some(None);
        }
        Some(Some(entry.remove().0))
    }

    /// Whether `(tag, mode)` is held.
    pub(crate) fn holds(&self, tag: &LockTag, mode: LockMode) -> bool {
        self.table.find(local_hash(tag.hash_code(), mode), |l| l.tag == *tag && l.mode == mode).is_some()
    }

    /// Number of `(tag, mode)` held.
    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_reacquisitions_and_releases_the_last_one() {
        let mut t = LocalTable::default();
        let tag = LockTag::relation(1, 2);
        let h = tag.hash_code();
        assert!(!t.reacquire(&tag, LockMode::AccessShare, h));
        t.insert(LocalLock { tag, mode: LockMode::AccessShare, hash: h, count: 1, via: Via::FastPath, strong: false });
        assert!(t.reacquire(&tag, LockMode::AccessShare, h));
        assert!(!t.holds(&tag, LockMode::RowShare));
        assert!(matches!(t.release(&tag, LockMode::AccessShare, h), Some(None)));
        assert!(matches!(t.release(&tag, LockMode::AccessShare, h), Some(Some(l)) if l.via == Via::FastPath));
        assert!(t.release(&tag, LockMode::AccessShare, h).is_none());
        assert_eq!(t.len(), 0);
    }
}
