//! Relation file identities: which relation, which fork, which block.
//!
//! A relation's storage is one file set per *fork* (PostgreSQL's
//! `ForkNumber`), each split into segments (see [`crate::smgr`]). A block
//! is addressed by `(relation, fork, block number)`, which is also the key
//! of the buffer mapping table ([`BufferTag`]).

use std::fmt;

/// A block number inside one fork of a relation (PostgreSQL's
/// `BlockNumber`). Blocks are numbered from 0 without gaps.
pub type BlockNumber = u32;

/// The largest number of blocks one fork may have: block numbers are
/// `0..MAX_BLOCKS`, and `u32::MAX` is kept free as "invalid", as in
/// PostgreSQL (`MaxBlockNumber`).
pub const MAX_BLOCKS: u32 = u32::MAX - 1;

/// The on-disk identity of a relation (PostgreSQL's `RelFileLocator`
/// without the tablespace): files live under `base/<db>/<rel>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct RelFileId {
    /// The database the relation belongs to.
    pub db: u32,
    /// The relation's file number.
    pub rel: u32,
}

impl RelFileId {
    /// The relation `rel` of database `db`.
    pub const fn new(db: u32, rel: u32) -> RelFileId {
        RelFileId { db, rel }
    }
}

impl fmt::Display for RelFileId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "base/{}/{}", self.db, self.rel)
    }
}

/// One of a relation's file sets (PostgreSQL's `ForkNumber`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[repr(u8)]
pub enum Fork {
    /// The relation's data.
    Main = 0,
    /// The free-space map (kept in memory by [`crate::fsm`]; the fork
    /// exists so an engine may persist it).
    FreeSpace = 1,
    /// The visibility map.
    VisibilityMap = 2,
}

impl Fork {
    /// Every fork, in number order.
    pub const ALL: [Fork; 3] = [Fork::Main, Fork::FreeSpace, Fork::VisibilityMap];

    /// PostgreSQL's name (`main`, `fsm`, `vm`).
    pub const fn name(self) -> &'static str {
        match self {
            Fork::Main => "main",
            Fork::FreeSpace => "fsm",
            Fork::VisibilityMap => "vm",
        }
    }

    /// What the fork adds to the relation's file name (`""`, `"_fsm"`, `"_vm"`).
    pub const fn file_suffix(self) -> &'static str {
        match self {
            Fork::Main => "",
            Fork::FreeSpace => "_fsm",
            Fork::VisibilityMap => "_vm",
        }
    }

    pub(crate) fn from_u8(v: u8) -> Fork {
        match v {
            1 => Fork::FreeSpace,
            2 => Fork::VisibilityMap,
            _ => Fork::Main,
        }
    }
}

impl fmt::Display for Fork {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The identity of one block: the key of the buffer mapping table
/// (PostgreSQL's `BufferTag`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BufferTag {
    /// The relation.
    pub rel: RelFileId,
    /// The fork.
    pub fork: Fork,
    /// The block.
    pub block: BlockNumber,
}

impl BufferTag {
    /// Block `block` of fork `fork` of `rel`.
    pub const fn new(rel: RelFileId, fork: Fork, block: BlockNumber) -> BufferTag {
        BufferTag { rel, fork, block }
    }

    /// A well-mixed 64-bit hash, stable across runs: it picks the mapping
    /// partition (`hash % partitions`), so it must not depend on a random
    /// seed (a lab run must be reproducible).
    #[inline]
    pub fn hash_code(&self) -> u64 {
        let a = (u64::from(self.rel.db) << 32) | u64::from(self.rel.rel);
        let b = (u64::from(self.fork as u8) << 32) | u64::from(self.block);
        mix64(a ^ mix64(b))
    }
}

impl fmt::Display for BufferTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "block {} of relation {} fork {}", self.block, self.rel, self.fork)
    }
}

/// splitmix64's finaliser: every input bit affects every output bit.
#[inline]
fn mix64(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_blocks_spread_over_partitions() {
        let rel = RelFileId::new(1, 16384);
        let mut seen = [0u32; 128];
        for b in 0..128 * 64 {
            seen[(BufferTag::new(rel, Fork::Main, b).hash_code() % 128) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n > 20 && n < 120), "{seen:?}");
    }
}
