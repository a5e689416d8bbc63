//! The eight table-lock modes and PostgreSQL's conflict table.
//!
//! | mode | conflicts with | typical statement |
//! |---|---|---|
//! | `AccessShare` | AccessExclusive | `SELECT` |
//! | `RowShare` | Exclusive, AccessExclusive | `SELECT … FOR UPDATE` |
//! | `RowExclusive` | Share, ShareRowExclusive, Exclusive, AccessExclusive | `INSERT`, `UPDATE`, `DELETE` |
//! | `ShareUpdateExclusive` | ShareUpdateExclusive, Share, ShareRowExclusive, Exclusive, AccessExclusive | `VACUUM`, `ANALYZE` |
//! | `Share` | RowExclusive, ShareUpdateExclusive, ShareRowExclusive, Exclusive, AccessExclusive | `CREATE INDEX` |
//! | `ShareRowExclusive` | RowExclusive, ShareUpdateExclusive, Share, ShareRowExclusive, Exclusive, AccessExclusive | `CREATE TRIGGER` |
//! | `Exclusive` | every mode but AccessShare | `REFRESH MATERIALIZED VIEW CONCURRENTLY` |
//! | `AccessExclusive` | every mode | `DROP TABLE`, `LOCK TABLE` |
//!
//! The relation is symmetric, and a backend never conflicts with itself.
//! Modes are numbered 1..=8 as in PostgreSQL; a set of modes is a
//! [`ModeMask`] with bit `m` for mode `m` (bit 0 unused).
//!
//! ```
//! use turnstile_lock::LockMode;
//! assert!(LockMode::AccessShare.conflicts_with(LockMode::AccessExclusive));
//! assert!(!LockMode::RowExclusive.conflicts_with(LockMode::RowExclusive));
//! assert!(LockMode::RowExclusive.is_fast_path_eligible());
//! assert!(LockMode::Share.is_strong());
//! assert_eq!(LockMode::Share.name(), "ShareLock");
//! ```

use std::fmt;

/// A heavyweight lock mode (PostgreSQL's table-lock modes, weakest first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[repr(u8)]
pub enum LockMode {
    /// `AccessShareLock`: reading a table.
    AccessShare = 1,
    /// `RowShareLock`: `SELECT … FOR UPDATE/SHARE`.
    RowShare = 2,
    /// `RowExclusiveLock`: modifying rows.
    RowExclusive = 3,
    /// `ShareUpdateExclusiveLock`: `VACUUM`, `ANALYZE`; self-conflicting.
    ShareUpdateExclusive = 4,
    /// `ShareLock`: `CREATE INDEX`; blocks writers.
    Share = 5,
    /// `ShareRowExclusiveLock`: like `Share`, self-conflicting.
    ShareRowExclusive = 6,
    /// `ExclusiveLock`: only `AccessShare` may coexist.
    Exclusive = 7,
    /// `AccessExclusiveLock`: conflicts with everything.
    AccessExclusive = 8,
}

/// A set of lock modes: bit `m` stands for the mode numbered `m`.
pub type ModeMask = u16;

const fn bits(modes: &[u8]) -> ModeMask {
    let mut mask = 0;
    let mut i = 0;
    while i < modes.len() {
        mask |= 1 << modes[i];
        i += 1;
    }
    mask
}

/// `CONFLICTS[m]`: the modes mode `m` conflicts with (PostgreSQL's
/// `LockConflicts`). Index 0 is unused.
const CONFLICTS: [ModeMask; 9] = [
    0,
    bits(&[8]),
    bits(&[7, 8]),
    bits(&[5, 6, 7, 8]),
    bits(&[4, 5, 6, 7, 8]),
    bits(&[3, 4, 6, 7, 8]),
    bits(&[3, 4, 5, 6, 7, 8]),
    bits(&[2, 3, 4, 5, 6, 7, 8]),
    bits(&[1, 2, 3, 4, 5, 6, 7, 8]),
];

/// Every mode that can live in a fast-path slot (the weak relation modes).
#[cfg(test)]
pub(crate) const FAST_PATH_MODES: [LockMode; 3] = [LockMode::AccessShare, LockMode::RowShare, LockMode::RowExclusive];

impl LockMode {
    /// Every mode, weakest first.
    pub const ALL: [LockMode; 8] = [
        LockMode::AccessShare,
        LockMode::RowShare,
        LockMode::RowExclusive,
        LockMode::ShareUpdateExclusive,
        LockMode::Share,
        LockMode::ShareRowExclusive,
        LockMode::Exclusive,
        LockMode::AccessExclusive,
    ];

    /// PostgreSQL's name, as shown in `pg_locks.mode` (`AccessShareLock`…).
    pub const fn name(self) -> &'static str {
        match self {
            LockMode::AccessShare => "AccessShareLock",
            LockMode::RowShare => "RowShareLock",
            LockMode::RowExclusive => "RowExclusiveLock",
            LockMode::ShareUpdateExclusive => "ShareUpdateExclusiveLock",
            LockMode::Share => "ShareLock",
            LockMode::ShareRowExclusive => "ShareRowExclusiveLock",
            LockMode::Exclusive => "ExclusiveLock",
            LockMode::AccessExclusive => "AccessExclusiveLock",
        }
    }

    /// The mode numbered `n` (1..=8), if any.
    pub const fn from_number(n: u8) -> Option<LockMode> {
        match n {
            1..=8 => Some(LockMode::ALL[n as usize - 1]),
            _ => None,
        }
    }

    /// The mode's number, 1..=8.
    #[inline(always)]
    pub const fn number(self) -> u8 {
        self as u8
    }

    /// This mode as a one-element [`ModeMask`].
    #[inline(always)]
    pub const fn bit(self) -> ModeMask {
        1 << self as u8
    }

    /// The modes this mode conflicts with.
    #[inline(always)]
    pub const fn conflict_mask(self) -> ModeMask {
        CONFLICTS[self as usize]
    }

    /// Whether a lock in `self` and one in `other`, held by different
    /// backends, cannot coexist.
    #[inline(always)]
    pub const fn conflicts_with(self, other: LockMode) -> bool {
        self.conflict_mask() & other.bit() != 0
    }

    /// A weak relation mode (AccessShare, RowShare, RowExclusive): never
    /// conflicts with another weak mode, so it may be recorded in the
    /// backend's fast-path slots (PostgreSQL's `EligibleForRelationFastPath`).
    #[inline(always)]
    pub const fn is_fast_path_eligible(self) -> bool {
        (self as u8) < LockMode::ShareUpdateExclusive as u8
    }

    /// A strong relation mode (Share and stronger): conflicts with some weak
    /// mode, so taking it must first move every matching fast-path entry
    /// into the shared table (`ConflictsWithRelationFastPath`).
    /// `ShareUpdateExclusive` is neither weak nor strong.
    #[inline(always)]
    pub const fn is_strong(self) -> bool {
        (self as u8) > LockMode::ShareUpdateExclusive as u8
    }

    /// The modes of `mask`, weakest first.
    pub fn in_mask(mask: ModeMask) -> impl Iterator<Item = LockMode> {
        LockMode::ALL.into_iter().filter(move |m| mask & m.bit() != 0)
    }
}

impl fmt::Display for LockMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

// The fast path's 3-bit slot masks assume the weak modes are exactly 1..=3,
// and that the strong modes conflict with at least one of them.
const _: () = assert!(LockMode::RowExclusive as u8 == 3);
const _: () = assert!(CONFLICTS[4] & bits(&[1, 2, 3]) == 0);
const _: () = assert!(CONFLICTS[5] & bits(&[1, 2, 3]) != 0);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_conflict_relation_is_symmetric() {
        for a in LockMode::ALL {
            for b in LockMode::ALL {
                assert_eq!(a.conflicts_with(b), b.conflicts_with(a), "{a} vs {b}");
            }
        }
    }

    #[test]
    fn weak_modes_never_conflict_with_each_other_and_every_strong_mode_conflicts_with_one() {
        for a in FAST_PATH_MODES {
            for b in FAST_PATH_MODES {
                assert!(!a.conflicts_with(b));
            }
            assert!(!a.conflicts_with(LockMode::ShareUpdateExclusive));
        }
        for s in LockMode::ALL.into_iter().filter(|m| m.is_strong()) {
            assert!(FAST_PATH_MODES.iter().any(|w| w.conflicts_with(s)), "{s}");
        }
        assert!(!LockMode::ShareUpdateExclusive.is_strong());
        assert!(!LockMode::ShareUpdateExclusive.is_fast_path_eligible());
    }

    #[test]
    fn numbers_round_trip() {
        for m in LockMode::ALL {
            assert_eq!(LockMode::from_number(m.number()), Some(m));
        }
        assert_eq!(LockMode::from_number(0), None);
        assert_eq!(LockMode::from_number(9), None);
        assert_eq!(LockMode::in_mask(LockMode::Share.bit() | LockMode::AccessShare.bit()).count(), 2);
    }
}
