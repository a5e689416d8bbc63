//! # The write-ahead log
//!
//! Every logged change is described by a record appended to one byte
//! stream, the WAL, before the change may reach a data file ("WAL before
//! data"). A position in the stream is an [`Lsn`]. The stream is kept in
//! segment files of `wal.segment_size` bytes under the WAL directory,
//! named as PostgreSQL's `pg_wal` files are; a new WAL starts at segment 1
//! ([`Lsn::first`]). Records run on across segment boundaries; no page
//! headers interrupt them.
//!
//! ## Record format
//!
//! Every record starts at a multiple of 8 and is padded with zeros to the
//! next one. Its header is 32 bytes, little-endian:
//!
//! | bytes  | field       | meaning |
//! |--------|-------------|---------|
//! | 0..4   | `total_len` | header + payload bytes, padding excluded (32 ≤ `total_len` ≤ 1 GiB) |
//! | 4..8   | `crc`       | CRC-32C, see below |
//! | 8..16  | `xid`       | the writing transaction (0: none) |
//! | 16..24 | `lsn`       | the record's own start position |
//! | 24     | `rmgr`      | the resource manager that replays it |
//! | 25     | `info`      | the resource manager's record kind |
//! | 26     | `flags`     | bit 0: a full-page image ([`record::FLAG_FPI`]) |
//! | 27..32 | —           | zero |
//!
//! then `total_len − 32` bytes of payload. The CRC-32C (`crc32c` crate)
//! covers, in this order: the payload, header bytes 8..16, 24..32, 0..4,
//! and last the `lsn` (16..24) — so an inserter computes all but the last
//! step before it reserves its position. Because the header names its own
//! position, bytes of an older record found at a position (a recycled or
//! re-used file) never validate.
//!
//! ## Rules
//!
//! 1. **WAL before data.** A data page carries the LSN of the end of the
//!    last record that changed it; the buffer pool calls [`Wal::flush`] to
//!    that LSN before it writes the page.
//! 2. **Commit.** With `wal.synchronous_commit` on, COMMIT returns after
//!    [`Wal::commit_flush`] of its commit record, i.e. once the record is
//!    durable. Off, it returns at once, and the WAL writer flushes every
//!    `wal.writer_delay_ms`: a crash loses at most that window of commits,
//!    and never leaves a torn record anywhere but at the end.
//! 3. **Order.** The stream is written in order: bytes are written to a
//!    file only when every record below them is complete, and `flushed ≤
//!    written ≤ copied ≤ reserved` (the positions of the two profiles'
//!    code) at every moment. A write that completes a segment syncs it
//!    before the next segment is written, so the durable part of the
//!    stream is always a prefix.
//! 4. **End of WAL** (PostgreSQL's `039_end_of_wal.pl`): a zeroed tail, a
//!    truncated record, or garbage (a length out of range, a header whose
//!    `lsn` is not its position) ends the WAL. A CRC mismatch ends it too,
//!    unless a valid record follows the bad one: that is corruption in
//!    the middle of the log, and reading stops with [`WalError::Corrupt`]
//!    naming the segment file and offset (see [`reader`]).
//! 5. **Restart.** [`Wal::open`] continues at the end recovery found; it
//!    removes later segments and zeroes the rest of the current one, so no
//!    byte of the previous run can follow the new records.
//! 6. **Failure.** A failed write or `fdatasync` is not retried: the log
//!    becomes failed ([`WalError::Failed`] from then on) and the server
//!    must stop and recover. `wal.fsync = off` skips `fdatasync` (tests).
//! 7. **Recycling.** [`Wal::remove_before`] drops segments wholly before a
//!    checkpoint's redo point.
//!
//! ## Insertion (`wal.insert`)
//!
//! | | reserve | copy | written prefix | flush |
//! |---|---|---|---|---|
//! | `classic` (PostgreSQL 15) | spinlock `insertpos_lck` | under one of 8 `WALInsert` LWLocks | min of the insertion slots' `inserting_at` | wait for insertions, then `WALWrite` with `LWLockAcquireOrWait`: group commit |
//! | `scalable` (InnoDB 8.0, Aether) | one `fetch_add` | no lock | link buffer ([`link`]) | the WAL writer writes and `fdatasync`s in a loop and wakes the committers each sync covers |
//!
//! Both copy into the same [`ring`] (`wal.buffers` bytes). See
//! [`classic`] and [`scalable`] for the protocols and their orderings;
//! `tests/loom_wal.rs` model-checks the reservation, the written prefix
//! and the flush/wake-up handshake of both.
//!
//! ## Visible
//!
//! [`Wal::stats`] gives `pg_stat_wal`'s fields and the shared
//! acquisitions on the WAL path; waits show in `pg_stat_activity` as
//! `LWLock`/`WALInsert`, `LWLock`/`WALWrite`, `IO`/`WALWrite` and
//! `IO`/`WALSync`.
//!
//! ```
//! use std::sync::Arc;
//! use turnstile_storage::io::OsIo;
//! use turnstile_storage::wal::{Lsn, Wal, WalReader, WalRecord};
//! use turnstile_sync::config::{Config, Profile};
//! let dir = std::env::temp_dir().join(format!("turnstile-wal-doc-{}", std::process::id()));
//! let config = Config::preset(Profile::Scalable).wal;
//! let start = Lsn::first(config.segment_size);
//! let wal = Wal::open(&dir, Arc::new(OsIo), &config, start).unwrap();
//! let end = wal.insert(&WalRecord { xid: 5, rmgr: 1, info: 0, parts: &[b"hello"] }).unwrap();
//! wal.commit_flush(end).unwrap();
//! assert!(wal.flushed_lsn() >= end);
//! wal.shutdown();
//! let mut reader = WalReader::new(&dir, Arc::new(OsIo), start).unwrap();
//! let (at, next, header, payload) = reader.next().unwrap().unwrap();
//! assert_eq!((at, next, header.xid, &payload[..]), (start, end, 5, &b"hello"[..]));
//! assert!(reader.next().unwrap().is_none());
//! std::fs::remove_dir_all(&dir).unwrap();
//! ```

pub mod classic;
pub mod error;
pub mod gather;
pub mod link;
mod log;
pub mod lsn;
pub mod notify;
pub mod reader;
pub mod record;
pub mod ring;
pub mod scalable;
pub mod segment;
pub mod stats;

pub use error::WalError;
pub use log::{Shared, Wal};
pub use lsn::Lsn;
pub use reader::WalReader;
pub use record::{RecordHeader, WalRecord};
pub use stats::WalStats;

/// Sleeps up to `d` or until unparked (loom has no timed park: it yields).
fn park_timeout(d: std::time::Duration) {
    #[cfg(not(loom))]
    std::thread::park_timeout(d);
    #[cfg(loom)]
    {
        let _ = d;
        crate::sync::thread::yield_now();
    }
}
