//! [`Lsn`]: a byte position in the write-ahead log stream, and the names
//! of the segment files that hold the stream (PostgreSQL's `pg_wal`).
//!
//! Segment `n` holds bytes `n × segment_size .. (n + 1) × segment_size`;
//! its file is named `TTTTTTTTXXXXXXXXYYYYYYYY` as PostgreSQL's are
//! (timeline 1, then `n` split into "log" and "segment within log" for
//! 4 GiB logs), so `000000010000000000000001` is the first segment of a
//! new directory with 16 MiB segments.
//!
//! ```
//! use turnstile_storage::wal::Lsn;
//! assert_eq!(Lsn(0x1_0000_0028).to_string(), "1/28");
//! assert_eq!(Lsn::parse("1/28"), Some(Lsn(0x1_0000_0028)));
//! assert_eq!(Lsn::first(16 << 20), Lsn(16 << 20));
//! ```

use std::fmt;

/// A byte position in the WAL stream. `Lsn(0)` is invalid: a new WAL
/// starts at its first segment, segment 1 ([`Lsn::first`]), as
/// PostgreSQL's `initdb` does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Lsn(pub u64);

impl Lsn {
    /// No position (a page never logged carries it).
    pub const INVALID: Lsn = Lsn(0);

    /// Where a new WAL with `segment_size`-byte segments starts: the start
    /// of segment 1.
    pub const fn first(segment_size: u64) -> Lsn {
        Lsn(segment_size)
    }

    /// The segment number holding this position.
    pub const fn segment(self, segment_size: u64) -> u64 {
        self.0 / segment_size
    }

    /// The offset of this position in its segment file.
    pub const fn segment_offset(self, segment_size: u64) -> u64 {
        self.0 % segment_size
    }

    /// Parses PostgreSQL's `X/Y` notation (hexadecimal high and low 32 bits).
    pub fn parse(text: &str) -> Option<Lsn> {
        let (hi, lo) = text.trim().split_once('/')?;
        let hi = u32::from_str_radix(hi, 16).ok()?;
        let lo = u32::from_str_radix(lo, 16).ok()?;
        Some(Lsn(u64::from(hi) << 32 | u64::from(lo)))
    }
}

impl fmt::Display for Lsn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:X}/{:X}", self.0 >> 32, self.0 & 0xffff_ffff)
    }
}

/// The file name of segment `segno` (timeline 1).
pub fn segment_file_name(segno: u64, segment_size: u64) -> String {
    let per_log = (1u64 << 32) / segment_size;
    format!("{:08X}{:08X}{:08X}", 1, segno / per_log, segno % per_log)
}

/// The segment number a file name stands for, if it is a segment's name.
pub fn parse_segment_file_name(name: &str, segment_size: u64) -> Option<u64> {
    if name.len() != 24 || !name.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let log = u64::from_str_radix(&name[8..16], 16).ok()?;
    let seg = u64::from_str_radix(&name[16..24], 16).ok()?;
    let per_log = (1u64 << 32) / segment_size;
    (seg < per_log).then_some(log * per_log + seg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_as_postgresql_spells_them() {
        let s = 16 << 20;
        assert_eq!(segment_file_name(1, s), "000000010000000000000001");
        assert_eq!(segment_file_name(256, s), "000000010000000100000000");
        assert_eq!(parse_segment_file_name("000000010000000100000000", s), Some(256));
        assert_eq!(parse_segment_file_name("00000001000000010000000G", s), None);
        assert_eq!(Lsn(0x16B_3748).to_string(), "0/16B3748");
        assert_eq!(Lsn::parse("0/16B3748"), Some(Lsn(0x16B_3748)));
        assert_eq!(Lsn::parse("nope"), None);
    }
}
