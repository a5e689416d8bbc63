//! Tuple identifiers: where a heap row lives (PostgreSQL's `ItemPointer`).

use std::fmt;

/// A heap tuple's address: block number and line-pointer slot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct Tid {
    /// The heap block.
    pub block: u32,
    /// The slot (line pointer number, from 0) on that block.
    pub slot: u16,
}

impl Tid {
    /// The tuple at `slot` of `block`.
    pub const fn new(block: u32, slot: u16) -> Tid {
        Tid { block, slot }
    }

    /// Six bytes, big-endian, so byte order is TID order.
    pub fn to_bytes(self) -> [u8; 6] {
        let b = self.block.to_be_bytes();
        let s = self.slot.to_be_bytes();
        [b[0], b[1], b[2], b[3], s[0], s[1]]
    }

    /// The inverse of [`Tid::to_bytes`].
    pub fn from_bytes(bytes: [u8; 6]) -> Tid {
        Tid {
            block: u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]),
            slot: u16::from_be_bytes([bytes[4], bytes[5]]),
        }
    }
}

impl fmt::Display for Tid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({},{})", self.block, self.slot)
    }
}

#[cfg(test)]
mod tests {
    use super::Tid;

    #[test]
    fn byte_order_is_tid_order() {
        let tids = [Tid::new(0, 5), Tid::new(1, 0), Tid::new(1, 2), Tid::new(70_000, 1)];
        for w in tids.windows(2) {
            assert!(w[0] < w[1]);
            assert!(w[0].to_bytes() < w[1].to_bytes());
        }
        assert_eq!(Tid::from_bytes(tids[3].to_bytes()), tids[3]);
    }
}
