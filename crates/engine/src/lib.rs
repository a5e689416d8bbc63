//! # turnstile-engine: catalog, heap, B-tree, planner, executor, sessions
//!
//! Not a SQL database: a typed query API rich enough for the seed
//! workloads, built on real pages (`turnstile-storage`) and real locks
//! (`turnstile-lock`). There is no MVCC: a row is visible once its insert
//! returns, and isolation between sessions comes only from heavyweight
//! locks — enough for the lock-manager experiments this engine exists for.
//!
//! ## What lives here (so far)
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
//!
//! ## What protects what
//!
//! | data | protected by |
//! |---|---|
//! | the catalog contents | an `Arc` snapshot swapped under the `Catalog` `LwLock`; DDL serialises on it exclusive |
//! | the catalog file | written only under that exclusive lock: temp file, fsync, rename, directory fsync |
//! | a relation's definition while a query uses it | the query's heavyweight lock on the relation (DDL needs `AccessExclusive`) |
//! | a backend's relation cache | nothing: it is backend-local; invalidated by the published catalog generation |

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod btree;
pub mod catalog;
mod engine;
pub mod error;
pub mod heap;
pub mod memory;
pub mod query;
pub mod session;
pub mod tid;
pub mod types;

pub use engine::Engine;
pub use error::{EngineError, Result};
pub use session::Session;
