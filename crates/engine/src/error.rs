//! The engine's umbrella error: one variant per layer, each carrying that
//! layer's typed error, so a caller can match on exactly what failed.

use crate::btree::BtreeError;
use crate::catalog::CatalogError;
use crate::heap::HeapError;
use crate::query::QueryError;
use crate::types::CodecError;
use turnstile_lock::{LockError, SqlState};
use turnstile_storage::StorageError;
use turnstile_sync::activity::ActivityFull;
use turnstile_sync::ConfigError;

/// Anything an engine operation can fail with. Every failure leaves the
/// engine usable; a failed statement inside a transaction keeps the locks
/// already taken until `commit` (or the session's end).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// A bad configuration value.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A catalog lookup or DDL failed (unknown or duplicate names…).
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// A heavyweight lock could not be taken (deadlock, timeout, NOWAIT,
    /// lock table full, too many backends). A cancelled wait is
    /// [`EngineError::Canceled`] instead.
    #[error(transparent)]
    Lock(LockError),
    /// The storage layer failed (I/O, checksum, no free buffer…).
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// A heap access failed.
    #[error(transparent)]
    Heap(#[from] HeapError),
    /// A query does not fit the catalog (unknown or ambiguous column…).
    #[error(transparent)]
    Query(#[from] QueryError),
    /// An index access failed (unique violation, corrupted index page…).
    #[error(transparent)]
    Index(#[from] BtreeError),
    /// A row did not fit its table.
    #[error(transparent)]
    Codec(#[from] CodecError),
    /// Every activity slot is taken.
    #[error(transparent)]
    TooManySessions(#[from] ActivityFull),
    /// A statement that is not valid in the session's state (e.g. `commit`
    /// outside a transaction).
    #[error("{0}")]
    State(String),
    /// A NULL for a column that refuses them (a primary-key column).
    #[error("null value in column \"{column}\" of relation \"{table}\" violates not-null constraint")]
    NotNullViolation {
        /// The table.
        table: String,
        /// The column.
        column: String,
    },
    /// A valid request the engine does not support (SQLSTATE `0A000`).
    #[error("not supported: {0}")]
    NotSupported(String),
    /// No partition of the table takes the row's key (SQLSTATE `23514`).
    #[error("no partition of relation \"{table}\" found for row (partition key {key})")]
    NoPartition {
        /// The partitioned table.
        table: String,
        /// The row's partition key.
        key: String,
    },
    /// The object is in use by another session (SQLSTATE `55006`).
    #[error("{0}")]
    ObjectInUse(String),
    /// The statement was cancelled ([`crate::Session::cancel_handle`]).
    #[error("canceling statement due to user request")]
    Canceled,
    /// `NOWAIT` met a row locked by another transaction (`55P03`).
    #[error("could not obtain lock on row in relation \"{relation}\"")]
    RowLockNotAvailable {
        /// The relation.
        relation: String,
    },
    /// A `REPEATABLE READ` transaction tried to change a row that a
    /// transaction its snapshot does not see changed (SQLSTATE `40001`).
    #[error("could not serialize access due to concurrent {0}")]
    SerializationFailure(&'static str),
    /// The transaction-id limit file could not be written (SQLSTATE `58030`).
    #[error("could not record the transaction-id limit: {0}")]
    XidLimit(String),
}

impl From<LockError> for EngineError {
    fn from(e: LockError) -> EngineError {
        match e {
            LockError::Canceled { .. } => EngineError::Canceled,
            other => EngineError::Lock(other),
        }
    }
}

impl EngineError {
    /// The PostgreSQL SQLSTATE this error corresponds to (`XX000` when
    /// nothing closer exists).
    pub fn sqlstate(&self) -> SqlState {
        use crate::btree::BtreeError as B;
        use crate::query::QueryError as Q;
        use crate::types::CodecError as C;
        use turnstile_storage::FileError as F;
        use SqlState as S;
        match self {
            EngineError::Config(_) => S::INVALID_PARAMETER_VALUE,
            EngineError::Catalog(e) => match e {
                CatalogError::UnknownDatabase(_) => S::INVALID_CATALOG_NAME,
                CatalogError::UnknownRelation(_) => S::UNDEFINED_TABLE,
                CatalogError::UnknownColumn { .. } => S::UNDEFINED_COLUMN,
                CatalogError::DuplicateDatabase(_) => S::DUPLICATE_DATABASE,
                CatalogError::DuplicateRelation(_) => S::DUPLICATE_TABLE,
                CatalogError::DuplicateColumn { .. } => S::DUPLICATE_COLUMN,
                CatalogError::UnknownType(_) => S::UNDEFINED_OBJECT,
                CatalogError::WrongKind { .. } => S::WRONG_OBJECT_TYPE,
                CatalogError::Invalid(_) => S::INVALID_OBJECT_DEFINITION,
                CatalogError::Corrupted { .. } => S::DATA_CORRUPTED,
                CatalogError::Io { .. } => S::IO_ERROR,
            },
            EngineError::Lock(e) => e.sqlstate(),
            EngineError::Storage(e) | EngineError::Heap(HeapError::Storage(e)) | EngineError::Index(B::Storage(e)) => {
                match e {
                    StorageError::File(F::NoSpace { .. }) => S::DISK_FULL,
                    StorageError::File(_) => S::IO_ERROR,
                    StorageError::Page(_) => S::DATA_CORRUPTED,
                    StorageError::AllBuffersPinned { .. } => S::INSUFFICIENT_RESOURCES,
                    StorageError::RelationTooLarge { .. } => S::PROGRAM_LIMIT_EXCEEDED,
                    StorageError::ExtensionLock { source, .. } => {
                        source.downcast_ref::<LockError>().map_or(S::INTERNAL_ERROR, LockError::sqlstate)
                    }
                    _ => S::INTERNAL_ERROR,
                }
            }
            EngineError::Heap(HeapError::TupleTooLarge { .. }) => S::PROGRAM_LIMIT_EXCEEDED,
            EngineError::Heap(HeapError::Codec(c)) | EngineError::Codec(c) => match c {
                C::Type { .. } => S::DATATYPE_MISMATCH,
                C::Arity { .. } => S::SYNTAX_ERROR,
                C::TooLongFor { .. } => S::STRING_DATA_RIGHT_TRUNCATION,
                C::TooLong(_) => S::PROGRAM_LIMIT_EXCEEDED,
                C::BadInput { .. } => S::INVALID_TEXT_REPRESENTATION,
                C::Corrupted(_) => S::DATA_CORRUPTED,
            },
            EngineError::Heap(_) => S::INTERNAL_ERROR,
            EngineError::Query(q) => match q {
                Q::UnknownColumn(_) => S::UNDEFINED_COLUMN,
                Q::AmbiguousColumn(_) => S::AMBIGUOUS_COLUMN,
                Q::DuplicateTable(_) => S::DUPLICATE_ALIAS,
                Q::MissingParam(_) => S::UNDEFINED_PARAMETER,
                Q::ParamCount { .. } => S::PROTOCOL_VIOLATION,
                Q::TypeMismatch { .. } => S::UNDEFINED_FUNCTION,
                Q::JoinTypeMismatch { .. } => S::UNDEFINED_FUNCTION,
                Q::NotATable(_) => S::WRONG_OBJECT_TYPE,
                Q::InvalidPlan(_) => S::INTERNAL_ERROR,
            },
            EngineError::Index(B::UniqueViolation { .. }) => S::UNIQUE_VIOLATION,
            EngineError::Index(B::EntryTooLarge { .. }) => S::PROGRAM_LIMIT_EXCEEDED,
            EngineError::Index(B::Key { .. }) => S::DATATYPE_MISMATCH,
            EngineError::Index(B::Corrupt { .. }) => S::INDEX_CORRUPTED,
            EngineError::Index(_) => S::INTERNAL_ERROR,
            EngineError::TooManySessions(_) => S::TOO_MANY_CONNECTIONS,
            EngineError::State(_) => S::INVALID_TRANSACTION_STATE,
            EngineError::NotNullViolation { .. } => S::NOT_NULL_VIOLATION,
            EngineError::NotSupported(_) => S::FEATURE_NOT_SUPPORTED,
            EngineError::ObjectInUse(_) => S::OBJECT_IN_USE,
            EngineError::NoPartition { .. } => S::CHECK_VIOLATION,
            EngineError::Canceled => S::QUERY_CANCELED,
            EngineError::RowLockNotAvailable { .. } => S::LOCK_NOT_AVAILABLE,
            EngineError::SerializationFailure(_) => S::SERIALIZATION_FAILURE,
            EngineError::XidLimit(_) => S::IO_ERROR,
        }
    }
}

/// Shorthand for engine results.
pub type Result<T, E = EngineError> = std::result::Result<T, E>;
