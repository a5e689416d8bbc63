//! The metapage (block 0): where the root is, how tall the tree is, and
//! what the index looks like, so a reader starts every descent here
//! (PostgreSQL's `BTMetaPageData`).
//!
//! # Layout
//!
//! A B-tree page ([`super::page`]) with [`FLAG_META`] set, no high key
//! content, and one entry in slot 0:
//!
//! | bytes | field | invariant |
//! |---|---|---|
//! | 0..4 | magic `"TBTM"` | |
//! | 4..6 | version (1) | |
//! | 6..8 | key columns | equals the index definition's |
//! | 8..12 | root block | `0 < root < nblocks`; the page there has `level` |
//! | 12..14 | level of the root | the tree has `level + 1` levels |
//! | 14 | unique (0/1) | equals the index definition's |
//! | 15 | reserved | 0 |
//!
//! The metapage changes only in a root split, under its exclusive lock,
//! while the splitting old root is still locked (see `mod.rs`). A reader
//! takes it shared, copies the root and level, and releases it before
//! locking the root: a root found this way may have split since, which is
//! harmless — the old root is the leftmost page of its level and a
//! descent from it moves right as needed. Handles keep the root and level
//! they read ([`super::root_cache`], PostgreSQL's `rd_amcache`) and read
//! the metapage again only when the cached root is no longer alone on its
//! level.

use super::page::{self, Bad, Opaque, FLAG_LEFTMOST, FLAG_META};
use turnstile_storage::page::PageBuf;
use turnstile_storage::BlockNumber;

/// The metapage's block.
pub const META_BLOCK: BlockNumber = 0;
const META_MAGIC: u32 = u32::from_le_bytes(*b"TBTM");
const META_VERSION: u16 = 1;
const META_SIZE: usize = 16;

/// The metapage's contents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    /// The root page.
    pub root: BlockNumber,
    /// The root's level (0: the root is a leaf).
    pub level: u16,
    /// Key columns.
    pub ncols: u16,
    /// Whether the index is unique.
    pub unique: bool,
}

impl Meta {
    fn to_bytes(self) -> [u8; META_SIZE] {
        let mut b = [0u8; META_SIZE];
        b[0..4].copy_from_slice(&META_MAGIC.to_le_bytes());
        b[4..6].copy_from_slice(&META_VERSION.to_le_bytes());
        b[6..8].copy_from_slice(&self.ncols.to_le_bytes());
        b[8..12].copy_from_slice(&self.root.to_le_bytes());
        b[12..14].copy_from_slice(&self.level.to_le_bytes());
        b[14] = u8::from(self.unique);
        b
    }
}

/// Makes `p` the metapage holding `meta`.
pub fn write(p: &mut PageBuf, meta: Meta) {
    let op = Opaque { right: None, level: 0, flags: FLAG_META | FLAG_LEFTMOST };
    let fits = page::build(p, op, None, [&meta.to_bytes()[..]]);
    assert!(fits, "a 16-byte metapage entry always fits");
}

/// Reads and checks the metapage.
pub fn read(p: &PageBuf) -> Result<Meta, Bad> {
    let op = page::opaque(p)?;
    if op.flags & FLAG_META == 0 {
        return Err("block 0 is not a metapage");
    }
    let e = page::entry(p, 0)?;
    let b: &[u8; META_SIZE] = e.try_into().map_err(|_| "the metapage entry has the wrong size")?;
    if u32::from_le_bytes([b[0], b[1], b[2], b[3]]) != META_MAGIC {
        return Err("bad metapage magic number");
    }
    if u16::from_le_bytes([b[4], b[5]]) != META_VERSION {
        return Err("unknown metapage version");
    }
    let root = u32::from_le_bytes([b[8], b[9], b[10], b[11]]);
    if root == META_BLOCK || root == page::NO_BLOCK {
        return Err("the metapage's root block is impossible");
    }
    if b[14] > 1 {
        return Err("the metapage's unique flag is neither 0 nor 1");
    }
    Ok(Meta {
        root,
        level: u16::from_le_bytes([b[12], b[13]]),
        ncols: u16::from_le_bytes([b[6], b[7]]),
        unique: b[14] == 1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnstile_storage::page::PAGE_SIZE;

    #[test]
    fn round_trips_and_rejects_a_tree_page() {
        let mut p: Box<PageBuf> = Box::new([0; PAGE_SIZE]);
        let m = Meta { root: 7, level: 2, ncols: 3, unique: true };
        write(&mut p, m);
        assert_eq!(read(&p), Ok(m));
        assert!(page::tree_opaque(&p).is_err(), "the metapage is not a tree page");
        let mut q: Box<PageBuf> = Box::new([0; PAGE_SIZE]);
        assert!(page::build(&mut q, Opaque { right: None, level: 0, flags: 0 }, None, [&[0u8; 16][..]]));
        assert!(read(&q).is_err());
    }
}
