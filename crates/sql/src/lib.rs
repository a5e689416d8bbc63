//! # turnstile-sql: SQL text → turnstile's engine
//!
//! The statements `pgbench`, `psql`, `createdb` and the reproduced write-ups send, parsed
//! and run against [`turnstile_engine::Session`], in-process (no socket).
//! The wire protocol lives in `turnstile-server`, which maps [`Outcome`]s
//! and [`SqlError`]s to messages.
//!
//! ```
//! use turnstile_sql::{Outcome, Param, SqlEngine, SqlSession};
//! let dir = tempfile::tempdir().unwrap();
//! let e = SqlEngine::open(dir.path(), turnstile_sync::Config::default()).unwrap();
//! let mut s = SqlSession::connect(&e, "postgres", "me", "doc", None).unwrap();
//! for st in s.parse_batch("CREATE TABLE t (k int, v text); INSERT INTO t VALUES (1, 'one')").unwrap() {
//!     s.execute(&st, &[]).unwrap();
//! }
//! let st = s.prepare("SELECT v FROM t WHERE k = $1", &[]).unwrap();
//! assert_eq!(st.param_types(), &[23]);
//! match s.execute(&st, &[Param::text("1")]).unwrap() {
//!     Outcome::Rows { rows, .. } => assert_eq!(rows, vec![vec![Some("one".to_owned())]]),
//!     other => panic!("{other:?}"),
//! }
//! ```
//!
//! ## Layers
//!
//! * [`parse`] — splits a query string at top-level semicolons; a small
//!   pre-parser for what sqlparser cannot parse (`VACUUM`, `ANALYZE`,
//!   `CHECKPOINT`, `COPY` with its options, `REINDEX`, `CREATE DATABASE …
//!   ENCODING`); sqlparser's PostgreSQL
//!   dialect for the rest. Syntax errors are `42601` with a position.
//! * `command` — what a statement is, decided once at parse: a `Command`
//!   carrying its AST and, for queries and DML, a typed plan cache. Every
//!   later step (Describe, tag, failed-block check, execution) matches on
//!   it.
//! * [`plan`] — SELECT, INSERT, UPDATE and DELETE compiled once per
//!   [`Statement`]: the binder resolves names once, and table access
//!   becomes the engine's typed `Query` of resolved columns (inner joins
//!   on an equality of columns, `column = constant|$n` pushed down as
//!   engine filters) so the engine's planner and executor take
//!   PostgreSQL's locks. `LEFT [OUTER] JOIN … ON`, `CROSS JOIN`,
//!   `FROM a, b`, inner joins on no column equality, system views and
//!   `generate_series` are joined here instead, in a nested loop over each
//!   item's own engine query (filters still pushed down, except on the
//!   nullable side of a LEFT JOIN). Residual
//!   predicates, expressions, aggregates (`FILTER` too), `GROUP BY`,
//!   `ORDER BY`, `LIMIT` are evaluated here. A statement from
//!   [`SqlSession::prepare`] follows PostgreSQL's plan cache: five custom
//!   plans, then the engine's cached generic plan (`plan_cache_mode`).
//! * [`expr`] — typed expressions, functions, aggregates.
//! * [`views`] — `pg_locks`, `pg_stat_activity`, `pg_stat_lock` from the
//!   engine's live state, and the relations of [`catalog`]: `pg_catalog`
//!   (`pg_class`, `pg_attribute`, `pg_index`, `pg_constraint`, `pg_type`,
//!   `pg_database`, `pg_roles`, `pg_settings`, `pg_proc`, …) and
//!   `information_schema` (`tables`, `columns`, `table_constraints`,
//!   `key_column_usage`, `schemata`) computed from the engine's catalog
//!   with PostgreSQL 15's columns and OIDs, with the catalog functions
//!   (`format_type`, `pg_get_indexdef`, `regclass`, …) reading the same
//!   snapshot.
//! * Sessions as drivers set them up: the session's `TimeZone`
//!   ([`value::zone`]) for `timestamptz` input, output and casts;
//!   read-only transactions (`25006`); `SET SESSION CHARACTERISTICS`.
//!
//! ## Transactions
//!
//! `BEGIN`/`START TRANSACTION` … `COMMIT`/`END`/`ROLLBACK` map to the
//! engine's transaction (heavyweight locks held to the end). Only `COMMIT`
//! keeps work: dropping a session inside a block (a closed connection, a
//! terminate, shutdown) rolls it back. An error inside a block aborts the
//! transaction at once ([`SqlSession::statement_failed`], PostgreSQL's
//! `AbortTransaction`): its writes are undone through the engine's undo log
//! and its locks released, and the block answers `25P02` until it ends
//! (`COMMIT` then answers `ROLLBACK`). `SAVEPOINT`, `ROLLBACK TO SAVEPOINT`
//! and `RELEASE SAVEPOINT` are the engine's subtransactions
//! (`turnstile_engine::subxact`): with savepoints set, an error undoes only
//! the work since the innermost one, and `ROLLBACK TO` clears the failure.
//! DDL is not transactional here: a rollback warns about it and it stays.
//! Settings changed inside a block are restored when it rolls back;
//! `SET LOCAL` ends with the block.
//!
//! ## The SQL of locking
//!
//! `SELECT … FOR UPDATE | FOR NO KEY UPDATE | FOR SHARE | FOR KEY SHARE
//! [OF t] [NOWAIT | SKIP LOCKED]` runs through `locking.rs` and the
//! engine's `Session::select_locking` (row-lock modes in
//! `turnstile_engine::txn`); the advisory-lock functions through
//! `advisory.rs` (recognising the call) and `run_advisory.rs` (running it on
//! `turnstile_engine::advisory`).
//!
//! ## Interrupts
//!
//! A [`CancelHandle`] cancels the running statement (`57014`: a
//! CancelRequest, `pg_cancel_backend`, or the engine's timer thread for
//! `statement_timeout`) or terminates the session (FATAL `57P01`:
//! `pg_terminate_backend`, server shutdown). See the `interrupt` module.
//!
//! ## What is not there (each is an ErrorResponse, never a crash)
//!
//! `RIGHT` and `FULL` joins, window frame clauses, named windows and window
//! functions in a grouped query; a locking
//! clause on a join or with aggregates; an advisory-lock function inside a
//! larger query: `0A000` naming the construct. `VACUUM [FULL] [ANALYZE]` is the
//! engine's (reclaims dead tuples under PostgreSQL's locks); `ANALYZE`
//! takes its lock and has no statistics to gather.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod advisory;
pub mod attach_index;
pub mod between;
pub mod binary;
mod binary_datum;
pub mod catalog;
mod command;
pub mod conflict_target;
mod context;
mod copy;
pub mod create_database;
mod ddl;
mod deallocate;
mod error;
mod explain;
pub mod expr;
pub mod fk;
mod gucs;
pub mod index_expr;
mod interrupt;
mod locking;
pub mod mvcc_views;
pub mod operator_any;
mod param;
pub mod parse;
pub mod plan;
mod prepare;
mod protocol_statements;
mod read_only;
mod reindex;
mod result_format;
mod rewrite_tokens;
mod rows;
mod run_advisory;
mod run_copy;
pub mod sequence;
mod session;
mod settings;
mod shared;
mod statement;
mod sync;
mod tokens;
mod transaction;
mod typed_settings;
mod utility;
pub mod value;
pub mod views;
pub mod wal_views;

pub use error::{ErrorObject, Notice, Severity, SqlError};
pub use interrupt::CancelHandle;
pub use param::Param;
pub use protocol_statements::Deallocated;
pub use result_format::column_formats;
pub use rows::ResultRows;
pub use session::{SqlSession, TxStatus};
pub use shared::{BackendInfo, Shared, SqlEngine};
pub use statement::{CopyIn, FieldInfo, Outcome, Statement};
pub use turnstile_lock::SqlState;
