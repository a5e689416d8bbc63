//! A heap tuple's header: flags, `xmin`, `xmax`, `ctid` (23 bytes, then the
//! row). Which version of a row a reader sees is
//! [`crate::mvcc::visibility`]'s.
//!
//! | bytes | field | meaning |
//! |---|---|---|
//! | 0 | flags | [`DEAD`]: no snapshot sees it (a rolled-back or failed insert); [`HAS_VERSIONS`]: older versions may be in the version store; [`MOVED`]: an update wrote the next version at `ctid`; [`SPILLED`]: older versions continue in the heap at `ctid`; [`VERSION`]: this tuple is such an older version |
//! | 1..9 | `xmin` | the transaction that wrote this version (64-bit) |
//! | 9..17 | `xmax` | the transaction that deleted it or moved it away; 0 if none (64-bit) |
//! | 17..23 | `ctid` | block (4 bytes) and slot (2) of the next version, when [`MOVED`]; of the newest older version, when [`SPILLED`] |
//!
//! # What 64-bit ids cost per row
//!
//! Transaction ids are 64-bit, so they never wrap around: no freezing, no
//! anti-wraparound VACUUM, no database that refuses writes until one
//! finishes. The header is 23 bytes, exactly PostgreSQL's
//! `HeapTupleHeaderData` (23 bytes, padded to 24 by `MAXALIGN`) with its
//! 32-bit ids: the 8 bytes the wider ids add are paid for by what this
//! header does not carry — PostgreSQL's command id (4 bytes; a
//! statement's own writes are told apart by the undo log instead), its
//! two infomask words (4; hint bits are unneeded when a status check is
//! a few atomic loads and no lock) and its header-length byte (1; the header has one
//! size) — less one byte of flags. Tuples are not aligned, so nothing is
//! lost to padding. A per-page base with 32-bit offsets (Postgres Pro's
//! 64-bit proposal) would save those 8 bytes per row at the price of
//! rewriting a page whose ids outgrow its base.

use crate::mvcc::Xid;
use crate::tid::Tid;

/// Flag: no snapshot sees the tuple; VACUUM reclaims it.
pub const DEAD: u8 = 0x01;
/// Flag: the row was updated in place; older versions may be in the
/// version store.
pub const HAS_VERSIONS: u8 = 0x02;
/// Flag: `xmax` moved the row; its next version is at `ctid`.
pub const MOVED: u8 = 0x04;
/// Flag: the row's older versions continue in the heap, newest first,
/// starting at `ctid` ([`crate::heap::spill`]: the version store was full).
pub const SPILLED: u8 = 0x08;
/// Flag: a copy of an older version of a row, reached only from the row's
/// tuple through `ctid` links; never a row of its own, never indexed. Its
/// `xmax` is the transaction that replaced it.
pub const VERSION: u8 = 0x10;
/// Bytes before the row in a tuple.
pub const TUPLE_HEADER: usize = 23;

/// A decoded tuple header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TupleHeader {
    /// [`DEAD`], [`HAS_VERSIONS`], [`MOVED`].
    pub flags: u8,
    /// The writer.
    pub xmin: Xid,
    /// The deleter or mover (0: none).
    pub xmax: Xid,
    /// The next version, when [`MOVED`].
    pub ctid: Tid,
}

impl TupleHeader {
    /// A live version written by `xmin`.
    pub fn new(xmin: Xid) -> TupleHeader {
        TupleHeader { xmin, ..TupleHeader::default() }
    }

    /// Reads the header at the start of `tuple`.
    #[inline]
    pub fn read(tuple: &[u8]) -> Option<TupleHeader> {
        let h = tuple.get(..TUPLE_HEADER)?;
        let u64_at = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().unwrap_or([0; 8]));
        Some(TupleHeader {
            flags: h[0],
            xmin: u64_at(1),
            xmax: u64_at(9),
            ctid: Tid::new(u32::from_le_bytes([h[17], h[18], h[19], h[20]]), u16::from_le_bytes([h[21], h[22]])),
        })
    }

    /// Writes the header over the start of `tuple`.
    pub fn write(&self, tuple: &mut [u8]) {
        tuple[0] = self.flags;
        tuple[1..9].copy_from_slice(&self.xmin.to_le_bytes());
        tuple[9..17].copy_from_slice(&self.xmax.to_le_bytes());
        tuple[17..21].copy_from_slice(&self.ctid.block.to_le_bytes());
        tuple[21..23].copy_from_slice(&self.ctid.slot.to_le_bytes());
    }

    /// Whether the tuple is marked [`DEAD`].
    pub fn is_dead(&self) -> bool {
        self.flags & DEAD != 0
    }
}

/// A header followed by `row`.
pub fn make_tuple(header: &TupleHeader, row: &[u8]) -> Vec<u8> {
    let mut t = vec![0; TUPLE_HEADER + row.len()];
    header.write(&mut t);
    t[TUPLE_HEADER..].copy_from_slice(row);
    t
}
