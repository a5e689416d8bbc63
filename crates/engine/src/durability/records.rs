//! The engine's own WAL records: transaction ends and relation
//! truncation (page changes are the heap's and the B-tree's).
//!
//! | rmgr | info | data |
//! |---|---|---|
//! | [`RMGR_XACT`] | [`XactOp::Commit`], [`XactOp::Abort`] | none (the header's xid) |
//! | [`RMGR_SMGR`] | [`SmgrOp::Truncate`] | `u32 db, u32 rel, u8 fork, u32 blocks`: the fork keeps its first `blocks` blocks |

use turnstile_storage::rel::{BlockNumber, Fork, RelFileId};

/// Transaction ends.
pub const RMGR_XACT: u8 = 3;
/// Relation files.
pub const RMGR_SMGR: u8 = 4;

/// A transaction record's `info`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum XactOp {
    /// The transaction committed.
    Commit = 1,
    /// The transaction aborted (its changes were taken back first).
    Abort = 2,
}

/// A relation-file record's `info`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum SmgrOp {
    /// A fork cut short.
    Truncate = 1,
}

/// The data of a truncate record.
pub fn encode_truncate(rel: RelFileId, fork: Fork, blocks: BlockNumber) -> [u8; 13] {
    let mut b = [0; 13];
    b[..4].copy_from_slice(&rel.db.to_le_bytes());
    b[4..8].copy_from_slice(&rel.rel.to_le_bytes());
    b[8] = fork as u8;
    b[9..].copy_from_slice(&blocks.to_le_bytes());
    b
}

/// Decodes a truncate record's data (`None`: malformed).
pub fn decode_truncate(b: &[u8]) -> Option<(RelFileId, Fork, BlockNumber)> {
    let b: &[u8; 13] = b.try_into().ok()?;
    let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
    let fork = Fork::ALL.into_iter().find(|f| *f as u8 == b[8])?;
    Some((RelFileId::new(u32_at(0), u32_at(4)), fork, u32_at(9)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncate_records_round_trip() {
        let rel = RelFileId::new(3, 16390);
        assert_eq!(decode_truncate(&encode_truncate(rel, Fork::Main, 7)), Some((rel, Fork::Main, 7)));
        assert_eq!(decode_truncate(&[0; 12]), None);
    }
}
