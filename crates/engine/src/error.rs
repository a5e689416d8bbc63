//! The engine's umbrella error: one variant per layer, each carrying that
//! layer's typed error, so a caller can match on exactly what failed.

use crate::btree::BtreeError;
use crate::catalog::CatalogError;
use crate::heap::HeapError;
use crate::query::QueryError;
use crate::types::CodecError;
use turnstile_lock::LockError;
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
    pub fn sqlstate(&self) -> &'static str {
        use crate::btree::BtreeError as B;
        use crate::query::QueryError as Q;
        use crate::types::CodecError as C;
        use turnstile_storage::FileError as F;
        match self {
            EngineError::Config(_) => "22023",
            EngineError::Catalog(e) => match e {
                CatalogError::UnknownDatabase(_) => "3D000",
                CatalogError::UnknownRelation(_) => "42P01",
                CatalogError::UnknownColumn { .. } => "42703",
                CatalogError::DuplicateDatabase(_) => "42P04",
                CatalogError::DuplicateRelation(_) => "42P07",
                CatalogError::DuplicateColumn { .. } => "42701",
                CatalogError::UnknownType(_) => "42704",
                CatalogError::WrongKind { .. } => "42809",
                CatalogError::Invalid(_) => "42P17",
                CatalogError::Corrupted { .. } => "XX001",
                CatalogError::Io { .. } => "58030",
            },
            EngineError::Lock(e) => lock_sqlstate(e),
            EngineError::Storage(e) | EngineError::Heap(HeapError::Storage(e)) | EngineError::Index(B::Storage(e)) => {
                match e {
                    StorageError::File(F::NoSpace { .. }) => "53100",
                    StorageError::File(_) => "58030",
                    StorageError::Page(_) => "XX001",
                    StorageError::AllBuffersPinned { .. } => "53000",
                    StorageError::RelationTooLarge { .. } => "54000",
                    StorageError::ExtensionLock { source, .. } => {
                        source.downcast_ref::<LockError>().map_or("XX000", lock_sqlstate)
                    }
                    _ => "XX000",
                }
            }
            EngineError::Heap(HeapError::TupleTooLarge { .. }) => "54000",
            EngineError::Heap(HeapError::Codec(c)) | EngineError::Codec(c) => match c {
                C::Type { .. } => "42804",
                C::Arity { .. } => "42601",
                C::TooLongFor { .. } => "22001",
                C::TooLong(_) => "54000",
                C::BadInput { .. } => "22P02",
                C::Corrupted(_) => "XX001",
            },
            EngineError::Heap(_) => "XX000",
            EngineError::Query(q) => match q {
                Q::UnknownColumn(_) => "42703",
                Q::AmbiguousColumn(_) => "42702",
                Q::DuplicateTable(_) => "42712",
                Q::MissingParam(_) => "42P02",
                Q::ParamCount { .. } => "08P01",
                Q::TypeMismatch { .. } => "42883",
                Q::JoinTypeMismatch { .. } => "42883",
                Q::NotATable(_) => "42809",
            },
            EngineError::Index(B::UniqueViolation { .. }) => "23505",
            EngineError::Index(B::EntryTooLarge { .. }) => "54000",
            EngineError::Index(B::Key { .. }) => "42804",
            EngineError::Index(B::Corrupt { .. }) => "XX002",
            EngineError::Index(_) => "XX000",
            EngineError::TooManySessions(_) => "53300",
            EngineError::State(_) => "25000",
            EngineError::NotNullViolation { .. } => "23502",
            EngineError::NotSupported(_) => "0A000",
            EngineError::ObjectInUse(_) => "55006",
            EngineError::NoPartition { .. } => "23514",
            EngineError::Canceled => "57014",
        }
    }
}

fn lock_sqlstate(e: &LockError) -> &'static str {
    match e {
        LockError::OutOfLockMemory { .. } => "53200",
        LockError::TooManyBackends { .. } => "53300",
        LockError::NotAvailable { .. } | LockError::Timeout { .. } => "55P03",
        LockError::Deadlock { .. } => "40P01",
        LockError::Canceled { .. } => "57014",
        _ => "XX000",
    }
}

/// Shorthand for engine results.
pub type Result<T, E = EngineError> = std::result::Result<T, E>;
