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
    /// lock table full, too many backends).
    #[error(transparent)]
    Lock(#[from] LockError),
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
}

/// Shorthand for engine results.
pub type Result<T, E = EngineError> = std::result::Result<T, E>;
