//! The engine's own WAL records: transaction ends and relation
//! truncation (page changes are the heap's and the B-tree's).
//!
//! | rmgr | info | data |
//! |---|---|---|
//! | [`RMGR_XACT`] | [`XactOp::Commit`], [`XactOp::Abort`] | none (the header's xid) |
//! | [`RMGR_SMGR`] | [`SmgrOp::Truncate`] | `u32 db, u32 rel, u8 fork, u32 blocks`: the fork keeps its first `blocks` blocks |
//! | [`RMGR_SEQ`] | [`SeqOp::Log`] | `u64 state`, then the sequence's key (UTF-8): its logged state ([`super::sequence_log`]) |

use turnstile_storage::rel::{BlockNumber, Fork, RelFileId};

/// Transaction ends.
pub const RMGR_XACT: u8 = 3;
/// Relation files.
pub const RMGR_SMGR: u8 = 4;
/// Sequences (PostgreSQL's `RM_SEQ_ID`).
pub const RMGR_SEQ: u8 = 5;

/// A sequence record's `info`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum SeqOp {
    /// A sequence's state, at or beyond every value handed out.
    Log = 1,
}

/// The data of a sequence record.
pub fn encode_seq_log(key: &str, state: u64) -> Vec<u8> {
    let mut b = Vec::with_capacity(8 + key.len());
    b.extend_from_slice(&state.to_le_bytes());
    b.extend_from_slice(key.as_bytes());
    b
}

/// Decodes a sequence record's data (`None`: malformed).
pub fn decode_seq_log(b: &[u8]) -> Option<(String, u64)> {
    let state = u64::from_le_bytes(b.get(..8)?.try_into().ok()?);
    let key = std::str::from_utf8(b.get(8..)?).ok()?;
    (!key.is_empty()).then(|| (key.to_owned(), state))
}

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

    #[test]
    fn sequence_records_round_trip() {
        let b = encode_seq_log("5/orders_id_seq", (1 << 63) | 64);
        assert_eq!(decode_seq_log(&b), Some(("5/orders_id_seq".into(), (1 << 63) | 64)));
        assert_eq!(decode_seq_log(&b[..7]), None);
        assert_eq!(decode_seq_log(&b[..8]), None);
    }
}
