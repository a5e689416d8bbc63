//! The B-tree's errors: [`KeyError`] for a key that does not fit the
//! index's column types, and the umbrella [`BtreeError`]. Operating errors
//! (a duplicate in a unique index, a corrupt page, an I/O failure) are
//! returned and name the index; broken invariants of the code itself
//! assert.

use crate::tid::Tid;
use crate::types::{ColumnType, Value};
use turnstile_storage::{BlockNumber, StorageError};

/// A key value list that cannot be encoded for an index.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// More values than the index has columns (or, for an insert, not
    /// one per column).
    #[error("the key has {got} columns but the index has {expected}")]
    ColumnCount {
        /// Index columns.
        expected: usize,
        /// Values given.
        got: usize,
    },
    /// A value of a type the column cannot hold (or out of its range).
    #[error("key column {column} is {expected}, got a value of type {got}")]
    TypeMismatch {
        /// The column, from 0.
        column: usize,
        /// Its type.
        expected: ColumnType,
        /// The value's type.
        got: &'static str,
    },
}

/// Every error of the B-tree.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BtreeError {
    /// The buffer pool or the storage below it failed (including a page
    /// whose checksum does not match).
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The key does not fit the index's columns.
    #[error("bad key for index \"{index}\": {source}")]
    Key {
        /// The index.
        index: String,
        /// What is wrong.
        #[source]
        source: KeyError,
    },
    /// An insert into a unique index found the key already present.
    /// The engine adds the table and column names
    /// ([`crate::EngineError::from_index`]); the SQL layer words it.
    #[error("duplicate key value violates unique constraint \"{index}\"")]
    UniqueViolation {
        /// The index.
        index: String,
        /// The key's values, in key order.
        key: Vec<Value>,
    },
    /// The same (key, TID) pair was inserted twice.
    #[error("index \"{index}\" already has an entry for key {key} pointing to {tid}")]
    DuplicateEntry {
        /// The index.
        index: String,
        /// The key, rendered.
        key: String,
        /// The heap tuple.
        tid: Tid,
    },
    /// The entry is larger than a third of a page (so a split could not
    /// place it together with a high key).
    #[error("index row size {size} exceeds maximum {max} for index \"{index}\"")]
    EntryTooLarge {
        /// The index.
        index: String,
        /// Bytes of the encoded entry.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// A page of the index breaks the B-tree's own structure (its checksum
    /// was fine): reported, never trusted.
    #[error("index \"{index}\" contains corrupted page at block {block}: {reason}")]
    Corrupt {
        /// The index.
        index: String,
        /// The block.
        block: BlockNumber,
        /// What is impossible about it.
        reason: String,
    },
    /// `create` or `build` was asked to write into a relation that already
    /// has blocks.
    #[error("cannot build index \"{index}\": its relation already has {nblocks} blocks")]
    NotEmpty {
        /// The index.
        index: String,
        /// The relation's length.
        nblocks: BlockNumber,
    },
    /// The metapage describes a different index than the caller's
    /// definition (e.g. another column count).
    #[error("index \"{index}\" does not match its definition: {reason}")]
    Definition {
        /// The index.
        index: String,
        /// The difference.
        reason: String,
    },
}

/// Shorthand for the B-tree's results.
pub type Result<T, E = BtreeError> = std::result::Result<T, E>;
