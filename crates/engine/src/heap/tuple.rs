//! A heap tuple's header: flags, `xmin`, `xmax`, `ctid` (15 bytes, then the
//! row). Which version of a row a reader sees is
//! [`crate::mvcc::visibility`]'s.
//!
//! | bytes | field | meaning |
//! |---|---|---|
//! | 0 | flags | [`DEAD`]: no snapshot sees it (a rolled-back or failed insert); [`HAS_VERSIONS`]: older versions may be in the version store; [`MOVED`]: an update wrote the next version at `ctid` |
//! | 1..5 | `xmin` | the transaction that wrote this version |
//! | 5..9 | `xmax` | the transaction that deleted it or moved it away; 0 if none |
//! | 9..15 | `ctid` | block (4 bytes) and slot (2) of the next version, when [`MOVED`] |

use crate::tid::Tid;

/// Flag: no snapshot sees the tuple; VACUUM reclaims it.
pub const DEAD: u8 = 0x01;
/// Flag: the row was updated in place; older versions may be in the
/// version store.
pub const HAS_VERSIONS: u8 = 0x02;
/// Flag: `xmax` moved the row; its next version is at `ctid`.
pub const MOVED: u8 = 0x04;
/// Bytes before the row in a tuple.
pub const TUPLE_HEADER: usize = 15;

/// A decoded tuple header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TupleHeader {
    /// [`DEAD`], [`HAS_VERSIONS`], [`MOVED`].
    pub flags: u8,
    /// The writer.
    pub xmin: u32,
    /// The deleter or mover (0: none).
    pub xmax: u32,
    /// The next version, when [`MOVED`].
    pub ctid: Tid,
}

impl TupleHeader {
    /// A live version written by `xmin`.
    pub fn new(xmin: u32) -> TupleHeader {
        TupleHeader { xmin, ..TupleHeader::default() }
    }

    /// Reads the header at the start of `tuple`.
    #[inline]
    pub fn read(tuple: &[u8]) -> Option<TupleHeader> {
        let h = tuple.get(..TUPLE_HEADER)?;
        let u32_at = |i: usize| u32::from_le_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
        Some(TupleHeader {
            flags: h[0],
            xmin: u32_at(1),
            xmax: u32_at(5),
            ctid: Tid::new(u32_at(9), u16::from_le_bytes([h[13], h[14]])),
        })
    }

    /// Writes the header over the start of `tuple`.
    pub fn write(&self, tuple: &mut [u8]) {
        tuple[0] = self.flags;
        tuple[1..5].copy_from_slice(&self.xmin.to_le_bytes());
        tuple[5..9].copy_from_slice(&self.xmax.to_le_bytes());
        tuple[9..13].copy_from_slice(&self.ctid.block.to_le_bytes());
        tuple[13..15].copy_from_slice(&self.ctid.slot.to_le_bytes());
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
