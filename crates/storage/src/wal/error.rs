//! [`WalError`]: what the write-ahead log's operations return.
//!
//! A failed write or `fdatasync` of the WAL is never retried as if nothing
//! happened (PostgreSQL since 2018: the kernel may have dropped the dirty
//! pages and cleared the error): the [`super::Wal`] becomes failed, every
//! later call returns [`WalError::Failed`], and the server must stop and
//! recover from the WAL on disk.

use super::Lsn;
use crate::error::FileError;

/// A write-ahead log operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WalError {
    /// A WAL file could not be opened, written, synced or removed.
    #[error(transparent)]
    File(#[from] FileError),
    /// An earlier write or fsync failed; nothing more is accepted.
    #[error("the write-ahead log failed earlier (a write or fsync error): the server must stop and recover")]
    Failed,
    /// The log was shut down.
    #[error("the write-ahead log is shut down")]
    ShutDown,
    /// A record that fails its CRC in the middle of the log: a valid record
    /// follows it, so it is not the torn end of the log.
    #[error(
        "invalid record at {lsn} in WAL segment file \"{file}\" at offset {offset}: {reason}; \
         a valid record follows at {next}, so this is corruption in the middle of the log, not its end"
    )]
    Corrupt {
        /// The record's position.
        lsn: Lsn,
        /// The segment file's name.
        file: String,
        /// The offset in that file.
        offset: u64,
        /// What is wrong.
        reason: &'static str,
        /// Where the valid record that follows starts.
        next: Lsn,
    },
    /// A record longer than the WAL accepts.
    #[error("WAL record of {len} bytes is too long (at most {max}; raise wal.buffers)")]
    RecordTooLarge {
        /// The record's length with its header.
        len: u64,
        /// The limit: half of `wal.buffers`.
        max: u64,
    },
    /// `Wal::open`'s end position is not the start of a record.
    #[error("cannot start the WAL at {lsn}: {reason}")]
    BadStart {
        /// The position given.
        lsn: Lsn,
        /// Why it is refused.
        reason: &'static str,
    },
}

impl WalError {
    /// PostgreSQL's SQLSTATE for the error.
    pub fn sqlstate(&self) -> &'static str {
        match self {
            WalError::File(_) | WalError::Failed => "58030",
            WalError::ShutDown => "57P01",
            WalError::Corrupt { .. } => "XX001",
            WalError::RecordTooLarge { .. } => "54000",
            WalError::BadStart { .. } => "XX000",
        }
    }
}
