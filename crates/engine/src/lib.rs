//! # turnstile-engine: catalog, heap, B-tree, planner, executor, sessions
//!
//! Not a SQL database: a typed query API rich enough for the seed
//! workloads, built on real pages (`turnstile-storage`) and real locks
//! (`turnstile-lock`). There is no MVCC: a row is visible once its insert
//! returns, and isolation between sessions comes only from heavyweight
//! locks — enough for the lock-manager experiments this engine exists for.
//!
//! ```
//! use turnstile_engine::query::{Operand, Query};
//! use turnstile_engine::types::{ColumnType, Value};
//! use turnstile_engine::Engine;
//! let dir = tempfile::tempdir().unwrap();
//! let engine = Engine::open(dir.path(), turnstile_sync::Config::default()).unwrap();
//! let mut s = engine.session().unwrap();
//! s.create_table("t", &[("k", ColumnType::Int4), ("v", ColumnType::Text)], None).unwrap();
//! s.insert_many("t", (0..100).map(|i| vec![Value::Int4(i), Value::Text(format!("v{i}"))])).unwrap();
//! s.create_index("t", "t_k", &["k"], true).unwrap();
//! let q = Query::from("t").filter("k", Operand::Param(1)).select(&["v"]);
//! let mut p = s.prepare(&q).unwrap();
//! assert_eq!(s.execute(&mut p, &[Value::Int4(7)]).unwrap(), vec![vec![Value::Text("v7".into())]]);
//! ```
//!
//! ## What lives here
//!
//! * [`types`] — `int4`, `int8`, `text` values and the row codec.
//! * [`catalog`] — databases, tables, range/hash partitions, B-tree index
//!   definitions, persisted atomically; and the per-backend relation cache
//!   that keeps each relation's index list with each index's column set
//!   (seed 003).
//! * [`heap`] — slotted heap pages: insert through the free-space map and
//!   relation extension, fetch by [`tid::Tid`], sequential scan, in-place
//!   update of fixed-size columns.
//! * [`btree`] — Lehman–Yao B-tree indexes over the buffer pool: concurrent
//!   inserts with splits, search, range scans, unique checks, bulk build.
//! * [`memory`] — per-query memory contexts and the per-backend block
//!   cache of seed 000 (`memory.block_cache`).
//! * [`Engine`] — one data directory: storage manager, buffer pool, lock
//!   manager, catalog, activity slots; the views (`locks_view`,
//!   `activity`, `lock_stats`, `buffer_stats`, `fd_stats`,
//!   `extension_stats`, `memory_stats`).
//! * [`Session`] — a backend: transactions (`begin`/`commit` bound
//!   heavyweight locks; outside them each statement releases its own),
//!   DDL under `AccessExclusiveLock`, `insert`/`insert_many` (COPY), and
//!   queries in simple or prepared mode.
//! * [`query`] — the typed query API, the planner (partition expansion and
//!   pruning, index choice with or without the seed-003 prefilter, join
//!   method) and the executor (index and sequential scans, append, nested
//!   loop, hash join).
//!
//! ## Lock order
//!
//! heavyweight locks (relation, then its partitions, then indexes, in plan
//! order) → the `Catalog` `LwLock` (DDL only) → buffer content locks (one
//! at a time, except B-tree splits, see [`btree`]) → the storage crate's
//! own order below that. The relation-extension lock is taken while no
//! content lock is held.
//!
//! ## What protects what
//!
//! | data | protected by |
//! |---|---|
//! | the catalog contents | an `Arc` snapshot swapped under the `Catalog` `LwLock`; DDL serialises on it exclusive |
//! | the catalog file | written only under that exclusive lock: temp file, fsync, rename, directory fsync |
//! | a relation's definition while a query uses it | the query's heavyweight lock on the relation (DDL needs `AccessExclusive`) |
//! | a backend's relation cache, with its cached B-tree roots (`rd_amcache`) | nothing: it is backend-local; invalidated by the published catalog generation; a cached root is re-checked under the root page's lock on every descent ([`btree::root_cache`]) |
//! | a backend's memory contexts and block cache | nothing: backend-local |
//! | heap and index pages | buffer content `LwLock`s (see [`heap`], [`btree`]) |

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod btree;
pub mod catalog;
pub mod datetime;
mod ddl;
pub mod dml;
mod engine;
pub mod error;
pub mod heap;
pub mod memory;
pub mod query;
pub mod session;
pub mod tid;
pub mod txn;
pub mod types;

pub use engine::Engine;
pub use error::{EngineError, Result};
pub use session::Session;
pub use txn::RollbackReport;
