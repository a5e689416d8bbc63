//! Tuple visibility: every rule that decides which version of a row a
//! reader, a writer, a unique check and VACUUM see, in one place
//! (PostgreSQL's `heapam_visibility.c`).
//!
//! A heap tuple carries `xmin` (its writer), `xmax` (its deleter or mover,
//! 0 if none), the flags [`DEAD`] (an insert taken back), [`MOVED`] (`xmax`
//! wrote the row's next version at `ctid`) and [`HAS_VERSIONS`] (an
//! in-place update replaced the row; its older versions are in the
//! version store). Each transaction id is, for the one asking:
//!
//! * **own** — the asker's own transaction;
//! * **seen** — committed, and visible to the asker's snapshot
//!   ([`super::Snapshots::sees`]; ids of an earlier run count as seen);
//! * **committed** — committed, whether the snapshot sees it or not;
//! * **aborted** — rolled back: its writes count as never made, whether or
//!   not its undo restored them (PostgreSQL's rule: an aborted `xmin` is a
//!   tuple that never existed, an aborted `xmax` a delete that never
//!   happened);
//! * **in progress** — another transaction, still running.
//!
//! # The rules
//!
//! | who asks | [`DEAD`] | `xmin` | `xmax` | result |
//! |---|---|---|---|---|
//! | **snapshot** ([`for_snapshot`]) | set | any | any | invisible |
//! | | — | own or seen | 0, aborted, in progress, or committed and not seen | this version |
//! | | — | own or seen | own or seen | invisible (deleted or moved away) |
//! | | — | aborted, in progress, committed and not seen | any | the newest older version whose `xmin` is seen, if [`HAS_VERSIONS`]; else invisible |
//! | **updater** holding the row lock ([`for_update`]) | set | any | any | skip |
//! | | — | aborted | any | skip (the row never existed) |
//! | | — | any | own | skip (this transaction deleted or moved it) |
//! | | — | any | committed or in progress, not seen | `REPEATABLE READ`: `40001`; `READ COMMITTED`: follow `ctid` if [`MOVED`], else skip (deleted) |
//! | | — | any | seen | follow `ctid` if [`MOVED`], else skip |
//! | | — | not own and not seen | 0 or aborted | `REPEATABLE READ`: `40001`; `READ COMMITTED`: act on it |
//! | | — | own or seen | 0 or aborted | act on it |
//! | **unique check** ([`unique_conflict`]) | set | any | any | no conflict |
//! | | — | aborted, without [`HAS_VERSIONS`] | any | no conflict (never existed) |
//! | | — | any other | own or committed | no conflict (deleted) |
//! | | — | any other | 0, aborted, or in progress | conflict (PostgreSQL waits for an in-progress one; turnstile reports `23505` at once) |
//! | **VACUUM** at a horizon ([`for_vacuum`]) | set | any | any | remove |
//! | | — | aborted, without [`HAS_VERSIONS`] | any | remove |
//! | | — | any other | committed, visible to every snapshot at the horizon | remove (with its index entries) |
//! | | — | any other | committed not yet at the horizon, or in progress | keep: recently dead |
//! | | — | any other | 0 or aborted | keep: live |
//! | **index build** (newest committed, [`for_build`]) | set | any | any | left out |
//! | | — | aborted, without [`HAS_VERSIONS`] | any | left out |
//! | | — | any other | committed | left out |
//! | | — | any other | 0, aborted, in progress | indexed |
//!
//! An in-place update keeps every index key, so a tuple with an aborted
//! `xmin` and [`HAS_VERSIONS`] still stands for a live row (its older
//! version in the store) to the unique check, VACUUM and an index build.
//!
//! Under the row lock an updater meets no `xmax` of a transaction in
//! progress in practice (that writer holds a conflicting row lock); should
//! one appear, it is treated as a committed change not seen, the safe
//! side.
//!
//! Every function here is `#[inline]`, allocates nothing and reads the
//! transaction status with plain atomic loads: the scan path calls
//! [`for_snapshot`] once per tuple.

use super::snapshot::{Horizon, Snapshot, Snapshots};
use super::{Visibility, Xid};
use crate::heap::tuple::{TupleHeader, DEAD, HAS_VERSIONS, MOVED, SPILLED, TUPLE_HEADER, VERSION};
use crate::tid::Tid;
use std::sync::Arc;
use turnstile_storage::RelFileId;

/// What a snapshot sees of one tuple ([`for_snapshot`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SnapshotVerdict {
    /// Nothing: the row did not exist for the reader, or was deleted.
    Invisible,
    /// The tuple itself.
    This,
    /// An older version from the version store, if one is seen.
    Older,
}

/// The version of a row a reader sees ([`seen`]).
#[derive(Debug)]
pub enum Seen<'t> {
    /// None: the row did not exist for the reader, or it was deleted.
    Nothing,
    /// The tuple itself.
    Here(&'t [u8]),
    /// An older version from the version store.
    Older(Arc<[u8]>),
    /// An older version, in the heap ([`crate::heap::spill`]): the caller
    /// walks the chain from `head` after releasing the page lock.
    Spilled {
        /// The newest spilled copy (the tuple's `ctid`).
        head: Tid,
        /// The tuple's `xmin` (the replacer of that copy).
        xmin: Xid,
    },
}

impl Seen<'_> {
    /// The row's bytes, if a version is seen.
    pub fn row(&self) -> Option<&[u8]> {
        match self {
            Seen::Nothing | Seen::Spilled { .. } => None,
            Seen::Here(r) => Some(r),
            Seen::Older(r) => Some(r),
        }
    }
}

/// The version of the row whose tuple at `tid` of `rel` is `tuple` that
/// `vis` sees (call it under the page's content lock): [`for_snapshot`],
/// then the version store for [`SnapshotVerdict::Older`].
#[inline]
pub fn seen<'t>(tuple: &'t [u8], rel: RelFileId, tid: Tid, vis: &Visibility<'_>) -> Seen<'t> {
    let Some(h) = TupleHeader::read(tuple) else { return Seen::Nothing };
    match for_snapshot(&h, vis) {
        SnapshotVerdict::Invisible => Seen::Nothing,
        SnapshotVerdict::This => Seen::Here(&tuple[TUPLE_HEADER..]),
        SnapshotVerdict::Older if h.flags & SPILLED != 0 => Seen::Spilled { head: h.ctid, xmin: h.xmin },
        SnapshotVerdict::Older => match vis.versions.find(rel, tid, |x| vis.sees(x)) {
            Some(row) => Seen::Older(row),
            None => Seen::Nothing,
        },
    }
}

/// What an updater holding a row's lock does with its newest version
/// ([`for_update`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpdateVerdict {
    /// Act on it.
    Act,
    /// Leave the row: deleted, or never there for this statement.
    Skip,
    /// The row moved; its newer version is at this TID.
    MovedTo(Tid),
    /// `REPEATABLE READ` met a change its snapshot does not see
    /// (`40001`); the word names it (`update` or `delete`).
    SerializationFailure(&'static str),
}

/// What VACUUM does with one tuple ([`for_vacuum`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VacuumVerdict {
    /// No snapshot can see it: reclaim it and its index entries.
    Remove,
    /// Deleted, but a snapshot may still see it (or its deleter is open).
    RecentlyDead,
    /// A live row.
    Live,
}

/// Whether `h`'s writer aborted and no older version stands for the row:
/// the tuple never existed.
#[inline]
fn never_existed(snaps: &Snapshots, h: &TupleHeader) -> bool {
    h.flags & HAS_VERSIONS == 0 && snaps.aborted(h.xmin)
}

/// The snapshot rule (see the table).
#[inline]
pub fn for_snapshot(h: &TupleHeader, vis: &Visibility<'_>) -> SnapshotVerdict {
    if h.flags & (DEAD | VERSION) != 0 {
        return SnapshotVerdict::Invisible;
    }
    if vis.sees(h.xmin) {
        if h.xmax != 0 && vis.sees(h.xmax) {
            return SnapshotVerdict::Invisible;
        }
        return SnapshotVerdict::This;
    }
    if h.flags & HAS_VERSIONS != 0 {
        SnapshotVerdict::Older
    } else {
        SnapshotVerdict::Invisible
    }
}

/// The updater rule (see the table) for transaction `own` with `snapshot`,
/// holding the row's lock.
#[inline]
pub fn for_update(
    snaps: &Snapshots,
    snapshot: &Snapshot,
    own: Xid,
    h: &TupleHeader,
    repeatable: bool,
) -> UpdateVerdict {
    if h.flags & (DEAD | VERSION) != 0 || (h.xmin != own && snaps.aborted(h.xmin)) {
        return UpdateVerdict::Skip;
    }
    if h.xmax != 0 && !snaps.aborted(h.xmax) {
        if h.xmax == own {
            return UpdateVerdict::Skip;
        }
        let moved = h.flags & MOVED != 0;
        if repeatable && !snaps.sees(snapshot, h.xmax, own) {
            return UpdateVerdict::SerializationFailure(if moved { "update" } else { "delete" });
        }
        return if moved { UpdateVerdict::MovedTo(h.ctid) } else { UpdateVerdict::Skip };
    }
    if repeatable && !snaps.sees(snapshot, h.xmin, own) {
        return UpdateVerdict::SerializationFailure("update");
    }
    UpdateVerdict::Act
}

/// The unique-check rule (see the table): whether an index entry whose
/// heap tuple has header `h` conflicts with a new key of transaction
/// `own` (`None`: none assigned).
#[inline]
pub fn unique_conflict(snaps: &Snapshots, h: &TupleHeader, own: Option<Xid>) -> bool {
    if h.flags & (DEAD | VERSION) != 0 || never_existed(snaps, h) {
        return false;
    }
    !(h.xmax != 0 && (Some(h.xmax) == own || snaps.committed(h.xmax)))
}

/// The VACUUM rule (see the table) at `horizon`.
#[inline]
pub fn for_vacuum(snaps: &Snapshots, horizon: Horizon, h: &TupleHeader) -> VacuumVerdict {
    if h.flags & DEAD != 0 || never_existed(snaps, h) {
        return VacuumVerdict::Remove;
    }
    if h.flags & VERSION != 0 {
        // A spilled older version: needed while a snapshot does not see
        // the transaction that replaced it.
        return if snaps.aborted(h.xmax) || snaps.all_visible(horizon, h.xmax) {
            VacuumVerdict::Remove
        } else {
            VacuumVerdict::RecentlyDead
        };
    }
    if h.xmax == 0 || snaps.aborted(h.xmax) {
        return VacuumVerdict::Live;
    }
    if snaps.all_visible(horizon, h.xmax) {
        VacuumVerdict::Remove
    } else {
        VacuumVerdict::RecentlyDead
    }
}

/// The index-build rule (see the table): whether the newest version `h`
/// belongs in an index built now.
#[inline]
pub fn for_build(snaps: &Snapshots, h: &TupleHeader) -> bool {
    h.flags & (DEAD | VERSION) == 0 && !never_existed(snaps, h) && !(h.xmax != 0 && snaps.committed(h.xmax))
}

/// Whether `xid` is another transaction than `own`, still running (a
/// locker meeting it beside a compatible row lock keeps the version its
/// snapshot saw).
#[inline]
pub fn in_progress(snaps: &Snapshots, xid: Xid, own: Xid) -> bool {
    xid != 0 && xid != own && !snaps.committed(xid) && !snaps.aborted(xid)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::mvcc::VersionStore;
    use turnstile_sync::config::SnapshotProtocol;
    use turnstile_sync::LwLockPolicy;

    /// Three transactions of other backends — one committed before the
    /// snapshot, one aborted, one in progress — one committed after it,
    /// and the asker's own, under both protocols.
    struct World {
        snaps: Snapshots,
        committed: Xid,
        aborted: Xid,
        running: Xid,
        late: Xid,
        own: Xid,
        snapshot: Snapshot,
    }

    fn world(protocol: SnapshotProtocol) -> World {
        let snaps = Snapshots::new(protocol, LwLockPolicy::Fair, 8, crate::mvcc::FIRST_XID);
        for slot in 0..5 {
            snaps.register(slot);
        }
        let committed = snaps.assign_xid(0).unwrap();
        let aborted = snaps.assign_xid(1).unwrap();
        let running = snaps.assign_xid(2).unwrap();
        let late = snaps.assign_xid(3).unwrap();
        let own = snaps.assign_xid(4).unwrap();
        snaps.commit(0, committed).unwrap();
        snaps.abort(1, aborted).unwrap();
        let snapshot = snaps.take(4);
        snaps.commit(3, late).unwrap();
        World { snaps, committed, aborted, running, late, own, snapshot }
    }

    fn header(xmin: Xid, xmax: Xid, flags: u8) -> TupleHeader {
        TupleHeader { flags, xmin, xmax, ctid: Tid::new(9, 9) }
    }

    fn each(mut f: impl FnMut(&World)) {
        for p in [SnapshotProtocol::Procarray, SnapshotProtocol::Csn] {
            f(&world(p));
        }
    }

    #[test]
    fn a_snapshot_sees_own_and_committed_writers_and_ignores_aborted_and_running_deleters() {
        use SnapshotVerdict::*;
        each(|w| {
            let versions = VersionStore::default();
            let vis = Visibility { snapshot: &w.snapshot, own: w.own, snapshots: &w.snaps, versions: &versions };
            let v = |xmin, xmax, flags| for_snapshot(&header(xmin, xmax, flags), &vis);
            // xmin
            assert_eq!(v(w.committed, 0, 0), This);
            assert_eq!(v(w.own, 0, 0), This);
            assert_eq!(v(w.aborted, 0, 0), Invisible);
            assert_eq!(v(w.running, 0, 0), Invisible);
            assert_eq!(v(w.late, 0, 0), Invisible);
            assert_eq!(v(w.late, 0, HAS_VERSIONS), Older, "an in-place update the snapshot does not see");
            assert_eq!(v(w.aborted, 0, HAS_VERSIONS), Older);
            assert_eq!(v(w.committed, 0, DEAD), Invisible);
            // xmax
            assert_eq!(v(w.committed, w.committed, 0), Invisible);
            assert_eq!(v(w.committed, w.own, 0), Invisible);
            assert_eq!(v(w.committed, w.aborted, 0), This, "an aborted delete never happened");
            assert_eq!(v(w.committed, w.running, MOVED), This);
            assert_eq!(v(w.committed, w.late, 0), This, "deleted after the snapshot");
        });
    }

    #[test]
    fn an_updater_acts_skips_follows_or_fails_as_postgresql() {
        use UpdateVerdict::*;
        each(|w| {
            for repeatable in [false, true] {
                let v = |xmin, xmax, flags| {
                    for_update(&w.snaps, &w.snapshot, w.own, &header(xmin, xmax, flags), repeatable)
                };
                assert_eq!(v(w.committed, 0, 0), Act);
                assert_eq!(v(w.own, 0, 0), Act);
                assert_eq!(v(w.committed, 0, DEAD), Skip);
                assert_eq!(v(w.aborted, 0, 0), Skip, "an aborted insert never existed");
                assert_eq!(v(w.committed, w.aborted, MOVED), Act, "an aborted update never happened");
                assert_eq!(v(w.committed, w.own, 0), Skip);
                assert_eq!(v(w.committed, w.committed, 0), Skip);
                assert_eq!(v(w.committed, w.committed, MOVED), MovedTo(Tid::new(9, 9)));
                let late_rc = if repeatable { SerializationFailure("update") } else { MovedTo(Tid::new(9, 9)) };
                assert_eq!(v(w.committed, w.late, MOVED), late_rc);
                let late_delete = if repeatable { SerializationFailure("delete") } else { Skip };
                assert_eq!(v(w.committed, w.late, 0), late_delete);
                assert_eq!(v(w.committed, w.running, 0), late_delete, "treated as a change not seen");
                let late_insert = if repeatable { SerializationFailure("update") } else { Act };
                assert_eq!(v(w.late, 0, 0), late_insert);
                assert_eq!(v(w.running, 0, 0), late_insert);
            }
        });
    }

    #[test]
    fn a_unique_check_conflicts_with_every_row_not_deleted_for_good() {
        each(|w| {
            let c = |xmin, xmax, flags, own| unique_conflict(&w.snaps, &header(xmin, xmax, flags), own);
            let own = Some(w.own);
            assert!(c(w.committed, 0, 0, own));
            assert!(c(w.running, 0, 0, own), "an insert in progress: PostgreSQL would wait");
            assert!(c(w.own, 0, 0, own));
            assert!(!c(w.aborted, 0, 0, own), "an aborted insert never existed");
            assert!(c(w.aborted, 0, HAS_VERSIONS, own), "the row's older version stands");
            assert!(!c(w.committed, 0, DEAD, own));
            assert!(!c(w.committed, w.committed, 0, own));
            assert!(!c(w.committed, w.late, 0, own), "committed after the snapshot still counts");
            assert!(!c(w.committed, w.own, 0, own));
            assert!(c(w.committed, w.own, 0, None), "not ours without an id");
            assert!(c(w.committed, w.aborted, 0, own), "an aborted delete never happened");
            assert!(c(w.committed, w.running, 0, own), "a delete in progress may roll back");
        });
    }

    #[test]
    fn vacuum_removes_what_no_snapshot_can_see_and_keeps_the_rest() {
        use VacuumVerdict::*;
        each(|w| {
            // The asker's snapshot (taken before `late` committed) holds
            // the horizon back.
            let horizon = w.snaps.horizon();
            let v = |xmin, xmax, flags| for_vacuum(&w.snaps, horizon, &header(xmin, xmax, flags));
            assert_eq!(v(w.committed, 0, DEAD), Remove);
            assert_eq!(v(w.aborted, 0, 0), Remove, "an aborted insert");
            assert_eq!(v(w.aborted, 0, HAS_VERSIONS), Live);
            assert_eq!(v(w.committed, w.committed, 0), Remove);
            assert_eq!(v(w.committed, w.late, 0), RecentlyDead, "a snapshot still sees the row");
            assert_eq!(v(w.committed, w.running, 0), RecentlyDead);
            assert_eq!(v(w.committed, w.aborted, MOVED), Live);
            assert_eq!(v(w.committed, 0, 0), Live);
            assert_eq!(v(w.running, 0, 0), Live);
        });
    }

    #[test]
    fn an_index_build_takes_the_newest_version_not_deleted_for_good() {
        each(|w| {
            let b = |xmin, xmax, flags| for_build(&w.snaps, &header(xmin, xmax, flags));
            assert!(b(w.committed, 0, 0));
            assert!(b(w.running, 0, 0));
            assert!(!b(w.aborted, 0, 0));
            assert!(b(w.aborted, 0, HAS_VERSIONS));
            assert!(!b(w.committed, 0, DEAD));
            assert!(!b(w.committed, w.late, 0));
            assert!(b(w.committed, w.aborted, 0));
            assert!(b(w.committed, w.running, 0));
            assert!(in_progress(&w.snaps, w.running, w.own));
            assert!(!in_progress(&w.snaps, w.own, w.own));
            assert!(!in_progress(&w.snaps, w.aborted, w.own));
            assert!(!in_progress(&w.snaps, w.late, w.own));
        });
    }
}
