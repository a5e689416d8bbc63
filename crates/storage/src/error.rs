//! Typed errors: one enum per operation family ([`FileError`] for the
//! storage manager, [`PageError`] for page verification), converted into
//! the umbrella [`StorageError`] (the redb pattern).
//!
//! Operating errors — a full disk, a failing device, too many open files,
//! a corrupt page, a pool whose every buffer is pinned — are returned,
//! never panicked on, and each names what it concerns: the file, or the
//! relation, fork and block.

use crate::rel::{BlockNumber, Fork, RelFileId};
use std::io;
use std::path::{Path, PathBuf};

/// A file operation of the storage manager, as named in error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FileOp {
    /// Creating the data directory or a database directory.
    CreateDir,
    /// Opening (or creating) a segment file.
    Open,
    /// Reading a block.
    Read,
    /// Writing a block.
    Write,
    /// Extending a segment.
    Extend,
    /// Truncating a segment.
    Truncate,
    /// Flushing a segment to stable storage.
    Sync,
    /// Removing a segment.
    Remove,
}

impl FileOp {
    /// The verb used in messages ("could not *extend* file …").
    pub const fn verb(self) -> &'static str {
        match self {
            FileOp::CreateDir => "create directory",
            FileOp::Open => "open",
            FileOp::Read => "read",
            FileOp::Write => "write",
            FileOp::Extend => "extend",
            FileOp::Truncate => "truncate",
            FileOp::Sync => "fsync",
            FileOp::Remove => "remove",
        }
    }
}

impl std::fmt::Display for FileOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.verb())
    }
}

/// A storage-manager operation on one file failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// ENOSPC (or EDQUOT): the file system is full.
    #[error("could not {op} file \"{}\": no space left on device", path.display())]
    NoSpace {
        /// The file.
        path: PathBuf,
        /// What was being done.
        op: FileOp,
    },
    /// EIO: the device reported an error.
    #[error("could not {op} file \"{}\": input/output error", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done.
        op: FileOp,
    },
    /// EMFILE or ENFILE even after the vfd cache closed what it could.
    #[error(
        "could not {op} file \"{}\": too many open files (lower storage.max_open_files or raise the process limit)",
        path.display()
    )]
    TooManyOpenFiles {
        /// The file.
        path: PathBuf,
        /// What was being done.
        op: FileOp,
    },
    /// A read ended before the block did.
    #[error("could not read block {block} in file \"{}\": read only {read} of {wanted} bytes", path.display())]
    ShortRead {
        /// The file.
        path: PathBuf,
        /// The block (relative to the fork, not the segment).
        block: BlockNumber,
        /// Bytes read.
        read: usize,
        /// Bytes wanted.
        wanted: usize,
    },
    /// Any other operating-system error.
    #[error("could not {op} file \"{}\": {source}", path.display())]
    Other {
        /// The file.
        path: PathBuf,
        /// What was being done.
        op: FileOp,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
}

/// errno values this module classifies (Linux numbering, which is what
/// `rustix` targets).
mod errno {
    pub(super) const EIO: i32 = 5;
    pub(super) const ENFILE: i32 = 23;
    pub(super) const EMFILE: i32 = 24;
    pub(super) const ENOSPC: i32 = 28;
    pub(super) const EDQUOT: i32 = 122;
}

impl FileError {
    /// Classifies an operating-system error on `path` during `op`.
    pub fn from_io(path: &Path, op: FileOp, err: io::Error) -> FileError {
        let path = path.to_path_buf();
        match err.raw_os_error() {
            Some(errno::ENOSPC | errno::EDQUOT) => FileError::NoSpace { path, op },
            Some(errno::EIO) => FileError::Io { path, op },
            Some(errno::EMFILE | errno::ENFILE) => FileError::TooManyOpenFiles { path, op },
            _ => FileError::Other { path, op, source: err },
        }
    }

    /// The file the error names.
    pub fn path(&self) -> &Path {
        match self {
            FileError::NoSpace { path, .. }
            | FileError::Io { path, .. }
            | FileError::TooManyOpenFiles { path, .. }
            | FileError::ShortRead { path, .. }
            | FileError::Other { path, .. } => path,
        }
    }

    /// Whether `err` is "too many open files" (the vfd cache then closes
    /// its least recently used file and retries).
    pub(crate) fn is_emfile(err: &io::Error) -> bool {
        matches!(err.raw_os_error(), Some(errno::EMFILE | errno::ENFILE))
    }
}

/// A page read from disk failed verification.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PageError {
    /// The stored CRC32C does not match the page's contents.
    #[error(
        "invalid page in block {block} of relation {rel} fork {fork} (file \"{file}\"): \
         checksum {stored:#010x} does not match computed {computed:#010x}"
    )]
    ChecksumMismatch {
        /// The relation.
        rel: RelFileId,
        /// The fork.
        fork: Fork,
        /// The block.
        block: BlockNumber,
        /// The file holding the block.
        file: String,
        /// The checksum in the page header.
        stored: u32,
        /// The checksum of the page as read.
        computed: u32,
    },
    /// The checksum matched but the header is not one this code writes.
    #[error("invalid page header in block {block} of relation {rel} fork {fork} (file \"{file}\"): {reason}")]
    BadHeader {
        /// The relation.
        rel: RelFileId,
        /// The fork.
        fork: Fork,
        /// The block.
        block: BlockNumber,
        /// The file holding the block.
        file: String,
        /// What is wrong.
        reason: &'static str,
    },
}

/// Every error of this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StorageError {
    /// A file operation failed.
    #[error(transparent)]
    File(#[from] FileError),
    /// A page failed verification.
    #[error(transparent)]
    Page(#[from] PageError),
    /// A block past the end of the relation was asked for.
    #[error("could not read block {block} of relation {rel} fork {fork}: it has only {nblocks} blocks")]
    BlockOutOfRange {
        /// The relation.
        rel: RelFileId,
        /// The fork.
        fork: Fork,
        /// The block asked for.
        block: BlockNumber,
        /// The fork's length.
        nblocks: BlockNumber,
    },
    /// The relation fork would grow past [`crate::rel::MAX_BLOCKS`].
    #[error("cannot extend relation {rel} fork {fork} beyond {max} blocks")]
    RelationTooLarge {
        /// The relation.
        rel: RelFileId,
        /// The fork.
        fork: Fork,
        /// The limit.
        max: u64,
    },
    /// Clock sweep went round without finding an unpinned buffer.
    #[error(
        "no unpinned buffers available: all {shared_buffers} shared buffers are pinned \
         (raise buffer.shared_buffers or pin fewer pages at once)"
    )]
    AllBuffersPinned {
        /// The pool's size.
        shared_buffers: usize,
    },
    /// A buffer that had to be dropped is pinned by someone.
    #[error("cannot drop buffer for {tag}: it is pinned")]
    BufferPinned {
        /// The block.
        tag: String,
    },
    /// The relation-extension lock could not be taken.
    #[error("could not lock relation {rel} for extension: {source}")]
    ExtensionLock {
        /// The relation.
        rel: RelFileId,
        /// The lock manager's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A configuration value this crate cannot use.
    #[error("invalid storage configuration: {0}")]
    Config(String),
    /// The write-ahead log failed.
    #[error(transparent)]
    Wal(#[from] crate::wal::WalError),
}

/// Shorthand for this crate's results.
pub type Result<T, E = StorageError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_values_are_classified_and_name_the_file() {
        let p = Path::new("/data/base/1/2.3");
        let e = FileError::from_io(p, FileOp::Extend, io::Error::from_raw_os_error(28));
        assert!(matches!(e, FileError::NoSpace { .. }));
        assert!(e.to_string().contains("/data/base/1/2.3") && e.to_string().contains("extend"), "{e}");
        assert!(matches!(FileError::from_io(p, FileOp::Write, io::Error::from_raw_os_error(5)), FileError::Io { .. }));
        assert!(matches!(
            FileError::from_io(p, FileOp::Open, io::Error::from_raw_os_error(24)),
            FileError::TooManyOpenFiles { .. }
        ));
        assert_eq!(FileError::from_io(p, FileOp::Read, io::Error::from_raw_os_error(2)).path(), p);
    }
}
