//! The record format: a 32-byte header, the payload, zero padding to 8
//! bytes. The layout and the CRC's coverage are stated at the top of
//! `wal/mod.rs`; this file encodes and decodes them.
//!
//! ```
//! use turnstile_storage::wal::record::{encode, RecordHeader, HEADER_BYTES};
//! use turnstile_storage::wal::{Lsn, WalRecord};
//! let rec = WalRecord { xid: 7, rmgr: 1, info: 2, parts: &[b"abc", b"de"] };
//! let mut buf = Vec::new();
//! let partial = encode(&rec, false, &mut buf);
//! turnstile_storage::wal::record::seal(&mut buf, partial, Lsn(64));
//! assert_eq!(buf.len() % 8, 0);
//! let h = RecordHeader::decode(&buf[..HEADER_BYTES]);
//! assert_eq!((h.total_len as usize, h.xid, h.lsn), (HEADER_BYTES + 5, 7, Lsn(64)));
//! assert!(h.verify(&buf[HEADER_BYTES..HEADER_BYTES + 5]));
//! ```

use super::Lsn;

/// Bytes of a record header; also the smallest record.
pub const HEADER_BYTES: usize = 32;
/// Records start at multiples of this.
pub const ALIGN: u64 = 8;
/// The longest record any reader accepts (a length beyond it is garbage,
/// i.e. the end of WAL). A [`super::Wal`] accepts at most half its ring.
pub const MAX_RECORD_BYTES: u64 = 1 << 30;
/// Flag bit: the record is a full-page image (counted as `wal_fpi`).
pub const FLAG_FPI: u8 = 1;

/// One record to insert: its payload is the concatenation of `parts`.
#[derive(Clone, Copy, Debug)]
pub struct WalRecord<'a> {
    /// The transaction that wrote it (0: none).
    pub xid: u64,
    /// The resource manager that replays it.
    pub rmgr: u8,
    /// The resource manager's own record kind.
    pub info: u8,
    /// The payload, in pieces.
    pub parts: &'a [&'a [u8]],
}

impl WalRecord<'_> {
    /// Bytes of payload.
    pub fn payload_len(&self) -> usize {
        self.parts.iter().map(|p| p.len()).sum()
    }
}

/// A record's header as stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordHeader {
    /// Header plus payload, without the padding.
    pub total_len: u32,
    /// CRC-32C (see `wal/mod.rs` for what it covers, in which order).
    pub crc: u32,
    /// The writing transaction.
    pub xid: u64,
    /// The record's own start position: a stale record of an older run
    /// or file never matches the position it is read at.
    pub lsn: Lsn,
    /// Resource manager.
    pub rmgr: u8,
    /// Resource manager's record kind.
    pub info: u8,
    /// [`FLAG_FPI`], or 0.
    pub flags: u8,
}

impl RecordHeader {
    /// Reads a header from its 32 bytes.
    pub fn decode(b: &[u8]) -> RecordHeader {
        assert!(b.len() >= HEADER_BYTES, "a record header is {HEADER_BYTES} bytes");
        let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        RecordHeader {
            total_len: u32_at(0),
            crc: u32_at(4),
            xid: u64_at(8),
            lsn: Lsn(u64_at(16)),
            rmgr: b[24],
            info: b[25],
            flags: b[26],
        }
    }

    /// Whether this is a full-page image.
    pub fn is_fpi(&self) -> bool {
        self.flags & FLAG_FPI != 0
    }

    /// Bytes the record occupies in the stream, padding included.
    pub fn aligned_len(&self) -> u64 {
        align(u64::from(self.total_len))
    }

    /// Whether `payload` and this header's fields match the stored CRC
    /// (the reader checks the stored bytes themselves with [`crc_ok`]).
    pub fn verify(&self, payload: &[u8]) -> bool {
        let mut head = [0u8; HEADER_BYTES];
        self.write_into(&mut head);
        crc_of(&head, payload) == self.crc
    }

    fn write_into(&self, b: &mut [u8]) {
        b[0..4].copy_from_slice(&self.total_len.to_le_bytes());
        b[4..8].copy_from_slice(&self.crc.to_le_bytes());
        b[8..16].copy_from_slice(&self.xid.to_le_bytes());
        b[16..24].copy_from_slice(&self.lsn.0.to_le_bytes());
        b[24] = self.rmgr;
        b[25] = self.info;
        b[26] = self.flags;
        b[27..32].fill(0);
    }
}

/// Whether the stored header bytes `head` (all 32, the reserved ones
/// included) and `payload` match the CRC stored in `head`.
pub fn crc_ok(head: &[u8], payload: &[u8]) -> bool {
    crc_of(head, payload) == u32::from_le_bytes([head[4], head[5], head[6], head[7]])
}

/// `n` rounded up to [`ALIGN`].
pub const fn align(n: u64) -> u64 {
    (n + ALIGN - 1) & !(ALIGN - 1)
}

/// The CRC of everything but the LSN: payload, then header bytes 8..16,
/// 24..32 and 0..4.
fn crc_without_lsn(head: &[u8], payload_crc: u32) -> u32 {
    let c = crc32c::crc32c_append(payload_crc, &head[8..16]);
    let c = crc32c::crc32c_append(c, &head[24..32]);
    crc32c::crc32c_append(c, &head[0..4])
}

fn crc_of(head: &[u8], payload: &[u8]) -> u32 {
    let c = crc_without_lsn(head, crc32c::crc32c(payload));
    crc32c::crc32c_append(c, &head[16..24])
}

/// Builds `rec` into `buf` (cleared first): header with LSN and CRC still
/// zero, payload, padding. Returns the CRC of everything but the LSN, for
/// [`seal`] once the record's position is known. Done before any lock.
pub fn encode(rec: &WalRecord<'_>, fpi: bool, buf: &mut Vec<u8>) -> u32 {
    let total = HEADER_BYTES + rec.payload_len();
    buf.clear();
    buf.resize(HEADER_BYTES, 0);
    let mut payload_crc = 0;
    for part in rec.parts {
        payload_crc = crc32c::crc32c_append(payload_crc, part);
        buf.extend_from_slice(part);
    }
    buf.resize(align(total as u64) as usize, 0);
    let h = RecordHeader {
        total_len: u32::try_from(total).unwrap_or(u32::MAX),
        crc: 0,
        xid: rec.xid,
        lsn: Lsn(0),
        rmgr: rec.rmgr,
        info: rec.info,
        flags: if fpi { FLAG_FPI } else { 0 },
    };
    h.write_into(&mut buf[..HEADER_BYTES]);
    crc_without_lsn(&buf[..HEADER_BYTES], payload_crc)
}

/// Stores the record's position and its final CRC into an [`encode`]d
/// buffer: the only per-record work done after the reservation.
pub fn seal(buf: &mut [u8], partial_crc: u32, lsn: Lsn) {
    buf[16..24].copy_from_slice(&lsn.0.to_le_bytes());
    let crc = crc32c::crc32c_append(partial_crc, &buf[16..24]);
    buf[4..8].copy_from_slice(&crc.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flipped_bit_anywhere_fails_the_crc() {
        let rec = WalRecord { xid: 9, rmgr: 3, info: 4, parts: &[b"hello", b" world"] };
        let mut buf = Vec::new();
        let p = encode(&rec, true, &mut buf);
        seal(&mut buf, p, Lsn(4096));
        let len = HEADER_BYTES + 11;
        let h = RecordHeader::decode(&buf);
        assert!(h.verify(&buf[HEADER_BYTES..len]) && h.is_fpi());
        assert!(crc_ok(&buf[..HEADER_BYTES], &buf[HEADER_BYTES..len]));
        for bit in 0..len * 8 {
            if (4..8).contains(&(bit / 8)) {
                continue;
            }
            let mut b = buf.clone();
            b[bit / 8] ^= 1 << (bit % 8);
            assert!(!crc_ok(&b[..HEADER_BYTES], &b[HEADER_BYTES..len]), "bit {bit} flipped unnoticed");
        }
    }
}
