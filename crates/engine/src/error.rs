//! The engine's umbrella error: one variant per layer, each carrying that
//! layer's typed error, so a caller can match on exactly what failed.

use crate::btree::BtreeError;
use crate::catalog::CatalogError;
use crate::heap::HeapError;
use crate::query::QueryError;
use crate::types::CodecError;
use turnstile_lock::{LockError, SqlState};
use turnstile_storage::wal::WalError;
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
    /// A statement that is not valid in the session's transaction state
    /// (`25001`, `25P01`).
    #[error(transparent)]
    TransactionState(#[from] InvalidTransactionState),
    /// A broken invariant of the engine itself (`XX000`): a bug, reported
    /// rather than trusted.
    #[error(transparent)]
    Internal(#[from] Internal),
    /// An insert or update met a unique index's key already present
    /// (`23505`): the facts, as data; the SQL layer words them.
    #[error(transparent)]
    UniqueViolation(Box<UniqueViolation>),
    /// A caller's callback (an `UPDATE`'s new row, a locking filter)
    /// failed; the caller keeps its own error and reports that one.
    #[error("a statement callback failed")]
    CallbackFailed,
    /// The transaction's undo log is full (`txn.undo_limit_bytes`,
    /// `54000`): the statement fails, and the transaction can still be
    /// rolled back.
    #[error("transaction undo log is full: more than {limit_bytes} bytes of undo records (txn.undo_limit_bytes)")]
    UndoLimit {
        /// The limit.
        limit_bytes: u64,
    },
    /// Taking back a transaction's writes failed: its cause, and how many
    /// writes stay. The transaction still ended (its status says aborted,
    /// which makes its writes invisible to every rule of
    /// [`crate::mvcc::visibility`]), but the rows could not be restored.
    #[error("could not undo {kept} write(s) of the aborted transaction: {source}")]
    UndoFailed {
        /// Writes not undone.
        kept: u64,
        /// The first failure.
        #[source]
        source: Box<EngineError>,
    },
    /// A NULL for a column that refuses them (a primary-key column).
    #[error("null value in column \"{column}\" of relation \"{table}\" violates not-null constraint")]
    NotNullViolation {
        /// The table.
        table: String,
        /// The column.
        column: String,
    },
    /// `SET NOT NULL` or `ADD PRIMARY KEY` on a column holding a NULL.
    #[error("column \"{column}\" of relation \"{table}\" contains null values")]
    ContainsNulls {
        /// The table (the partition holding the row).
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
    /// A row of a table being attached as a partition lies outside the
    /// partition's bound (SQLSTATE `23514`).
    #[error("partition constraint of relation \"{table}\" is violated by some row")]
    PartitionConstraint {
        /// The table being attached.
        table: String,
    },
    /// A row inserted into a partition directly lies outside its bound
    /// (SQLSTATE `23514`).
    #[error("new row for relation \"{table}\" violates partition constraint")]
    OutsidePartition {
        /// The partition.
        table: String,
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
    /// A transaction-id file of the data directory (the id limit, the ids
    /// kept aborted) could not be read or written (SQLSTATE `58030`).
    #[error("could not record transaction ids: {0}")]
    XidLimit(String),
    /// Computing an index expression's key failed (a division by zero in
    /// it, or an expression that could not be compiled): the SQL layer's
    /// error, with its SQLSTATE.
    #[error("{message}")]
    IndexExpression {
        /// The SQLSTATE.
        code: SqlState,
        /// The message.
        message: String,
    },
    /// Crash recovery could not go on: a malformed record, a page the log
    /// cannot rebuild (SQLSTATE `XX001`, data corrupted).
    #[error("recovery failed: {0}")]
    Recovery(String),
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
                CatalogError::UnknownType(_) | CatalogError::UnknownConstraint { .. } => S::UNDEFINED_OBJECT,
                CatalogError::DuplicateConstraint { .. } => S::DUPLICATE_OBJECT,
                CatalogError::WrongKind { .. } => S::WRONG_OBJECT_TYPE,
                CatalogError::Invalid(_) => S::INVALID_OBJECT_DEFINITION,
                CatalogError::InvalidTable(_) => S::INVALID_TABLE_DEFINITION,
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
                    StorageError::Wal(w) => match w {
                        WalError::File(F::NoSpace { .. }) => S::DISK_FULL,
                        WalError::File(_) | WalError::Failed => S::IO_ERROR,
                        WalError::Corrupt { .. } => S::DATA_CORRUPTED,
                        WalError::RecordTooLarge { .. } => S::PROGRAM_LIMIT_EXCEEDED,
                        _ => S::INTERNAL_ERROR,
                    },
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
            EngineError::TransactionState(e) => e.sqlstate(),
            EngineError::Internal(_) | EngineError::CallbackFailed => S::INTERNAL_ERROR,
            EngineError::UniqueViolation(_) => S::UNIQUE_VIOLATION,
            EngineError::UndoLimit { .. } => S::PROGRAM_LIMIT_EXCEEDED,
            EngineError::UndoFailed { source, .. } => source.sqlstate(),
            EngineError::NotNullViolation { .. } | EngineError::ContainsNulls { .. } => S::NOT_NULL_VIOLATION,
            EngineError::NotSupported(_) => S::FEATURE_NOT_SUPPORTED,
            EngineError::ObjectInUse(_) => S::OBJECT_IN_USE,
            EngineError::NoPartition { .. }
            | EngineError::PartitionConstraint { .. }
            | EngineError::OutsidePartition { .. } => S::CHECK_VIOLATION,
            EngineError::Canceled => S::QUERY_CANCELED,
            EngineError::RowLockNotAvailable { .. } => S::LOCK_NOT_AVAILABLE,
            EngineError::SerializationFailure(_) => S::SERIALIZATION_FAILURE,
            EngineError::XidLimit(_) => S::IO_ERROR,
            EngineError::Recovery(_) => S::DATA_CORRUPTED,
            EngineError::IndexExpression { code, .. } => *code,
        }
    }
}

/// A statement not valid in the session's transaction state, with
/// PostgreSQL 15's message and SQLSTATE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidTransactionState {
    /// `BEGIN` inside a block (`25001`; PostgreSQL warns).
    #[error("there is already a transaction in progress")]
    AlreadyInProgress,
    /// `COMMIT`/`ROLLBACK` outside a block (`25P01`; PostgreSQL warns).
    #[error("there is no transaction in progress")]
    NoneInProgress,
    /// A statement that refuses a transaction block (`VACUUM`,
    /// `CREATE DATABASE`…: `PreventInTransactionBlock`, `25001`).
    #[error("{0} cannot run inside a transaction block")]
    InsideBlock(&'static str),
    /// A statement that needs a transaction block (`SAVEPOINT`,
    /// `LOCK TABLE`…: `RequireTransactionBlock`, `25P01`).
    #[error("{0} can only be used in transaction blocks")]
    OutsideBlock(&'static str),
    /// `SET TRANSACTION ISOLATION LEVEL` after the transaction's first
    /// query (`25001`).
    #[error("SET TRANSACTION ISOLATION LEVEL must be called before any query")]
    IsolationAfterQuery,
}

impl InvalidTransactionState {
    /// PostgreSQL's SQLSTATE for the case.
    pub const fn sqlstate(self) -> SqlState {
        match self {
            InvalidTransactionState::NoneInProgress | InvalidTransactionState::OutsideBlock(_) => {
                SqlState::NO_ACTIVE_SQL_TRANSACTION
            }
            InvalidTransactionState::AlreadyInProgress
            | InvalidTransactionState::InsideBlock(_)
            | InvalidTransactionState::IsolationAfterQuery => SqlState::ACTIVE_SQL_TRANSACTION,
        }
    }
}

/// A broken invariant of the engine (`XX000`): each case says what cannot
/// happen, and happened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Internal {
    /// DDL replaced a relation every time it was about to be locked.
    #[error("relation \"{relation}\" kept changing while it was being locked; try again")]
    RelationKeptChanging {
        /// The relation's name.
        relation: String,
    },
    /// A row moved more than the statement follows.
    #[error("a row of \"{relation}\" kept moving while it was being {doing}; try again")]
    RowKeptMoving {
        /// The relation's name.
        relation: String,
        /// `changed` or `locked`.
        doing: &'static str,
    },
    /// A locking `SELECT`'s filter named a row that was not a candidate.
    #[error("a locking filter named row {index} of {candidates} candidates")]
    NotACandidate {
        /// The index named.
        index: usize,
        /// The candidates.
        candidates: usize,
    },
    /// A prepared statement disappeared while it was being executed.
    #[error("prepared statement vanished while it was executed")]
    PreparedStatementVanished,
    /// An insert returned without placing its row.
    #[error("insert placed no row")]
    InsertPlacedNoRow,
    /// The transaction status log has no word for a transaction id.
    #[error(transparent)]
    StatusLog(#[from] crate::mvcc::clog::NoStatusWord),
}

/// The facts of a unique violation (PostgreSQL's `_bt_check_unique`
/// report): the SQL layer turns them into `duplicate key value violates
/// unique constraint "t_pkey"` and `DETAIL: Key (a, b)=(1, 2) already
/// exists.`
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("duplicate key value violates unique constraint \"{index}\"")]
pub struct UniqueViolation {
    /// The table the index is on.
    pub table: String,
    /// The index (the constraint).
    pub index: String,
    /// The key columns' names, in key order.
    pub columns: Vec<String>,
    /// The key's values, in key order.
    pub values: Vec<crate::types::Value>,
}

impl EngineError {
    /// A B-tree error of an index `index` on `table` whose key columns are
    /// `columns`: a unique violation gets its table and column names, any
    /// other error passes through.
    pub fn from_index(e: BtreeError, table: &str, columns: impl FnOnce() -> Vec<String>) -> EngineError {
        match e {
            BtreeError::UniqueViolation { index, key } => EngineError::UniqueViolation(Box::new(UniqueViolation {
                table: table.to_owned(),
                index,
                columns: columns(),
                values: key,
            })),
            other => EngineError::Index(other),
        }
    }
}

/// Logs `e`, with every cause under it, where no caller is left to
/// return it to (the background vacuum, an undo behind another error, a
/// closing session): one line on standard error, as PostgreSQL's server
/// log would have it.
pub(crate) fn log_error(context: &str, e: &EngineError) {
    let mut line = format!("turnstile: {context}: ERROR ({}): {e}", e.sqlstate());
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        line.push_str(&format!("; caused by: {c}"));
        cause = c.source();
    }
    eprintln!("{line}");
}

/// Shorthand for engine results.
pub type Result<T, E = EngineError> = std::result::Result<T, E>;
