//! The B-tree's write-ahead log records: each change of tree pages is one
//! record of resource manager [`RMGR_BTREE`] carrying the pages
//! ([`turnstile_storage::page_log`]); a split logs both halves in one
//! record, so after a crash a split is whole or absent. A split whose
//! downlink was not logged yet leaves a tree that is still correct: the
//! left half's right link leads to the right half (Lehman & Yao), and the
//! next split of the parent level finds its place by moving right, as a
//! concurrent one would. Index changes are never taken back: an entry of
//! a transaction that did not commit points to a heap tuple nobody sees,
//! which VACUUM removes, as at run time.

use turnstile_storage::page_log::RecordKind;

/// The B-tree's resource-manager id in WAL records.
pub const RMGR_BTREE: u8 = 2;

/// What a B-tree record did (its `info`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum BtreeOp {
    /// An entry added to a leaf.
    Insert = 1,
    /// A page split in two (both halves).
    Split = 2,
    /// A downlink added to an inner page.
    Downlink = 3,
    /// A new root and the metapage.
    NewRoot = 4,
    /// An empty tree: its root and metapage.
    Create = 5,
    /// Entries of dead tuples removed from a leaf.
    Vacuum = 6,
    /// A page written by an index build.
    Build = 7,
}

/// The record kind of `op`.
pub(crate) fn kind(op: BtreeOp) -> RecordKind {
    RecordKind { xid: 0, rmgr: RMGR_BTREE, info: op as u8 }
}
