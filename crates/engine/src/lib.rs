//! # turnstile-engine: catalog, heap, B-tree, planner, executor, sessions
//!
//! Not a SQL database: a typed query API rich enough for the workloads
//! W1–W6 (`docs/sources.md`), built on real pages (`turnstile-storage`)
//! and real locks (`turnstile-lock`). Reads see row versions through
//! snapshots ([`mvcc`]): `READ COMMITTED` and `REPEATABLE READ` as
//! PostgreSQL means them, with PostgreSQL 15's `ProcArray` snapshot under
//! `classic` and a commit sequence number under `scalable`.
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
//! let q = Query::from("t").filter("k", Operand::Param(1)).select(["v"]);
//! let mut p = s.prepare(&q).unwrap();
//! assert_eq!(s.execute(&mut p, &[Value::Int4(7)]).unwrap(), vec![vec![Value::Text("v7".into())]]);
//! ```
//!
//! ## What lives here
//!
//! * [`types`] — `int2`, `int4`, `int8`, `float4`, `float8`, `numeric(p,s)`,
//!   `text`, `bool`, `date`, `timestamp`, `char(n)`, `varchar(n)` values with
//!   PostgreSQL's type OIDs, and the row codec ([`datetime`] for dates' and
//!   timestamps' text form and validation).
//! * [`catalog`] — databases, tables, range/hash/list partitions, B-tree index
//!   definitions, persisted atomically; and the per-backend relation cache
//!   that keeps each relation's index list with each index's column set
//!   (Geier 2022).
//! * [`heap`] — slotted heap pages: insert through the free-space map and
//!   relation extension, fetch by [`tid::Tid`], sequential scan, in-place
//!   update of fixed-size columns.
//! * [`btree`] — Lehman–Yao B-tree indexes over the buffer pool: concurrent
//!   inserts with splits, search, range scans, unique checks, bulk build.
//! * [`memory`] — per-query memory contexts and the per-backend block
//!   cache of Vondra 2024 (`memory.block_cache`).
//! * [`Engine`] — one data directory: storage manager, buffer pool, lock
//!   manager, catalog, activity slots; the views (`locks_view`,
//!   `activity`, `lock_stats`, `buffer_stats`, `fd_stats`,
//!   `extension_stats`, `memory_stats`).
//! * [`Session`] — a backend: transactions (`begin`/`commit` bound
//!   heavyweight locks; outside them each statement releases its own),
//!   DDL under `AccessExclusiveLock`, `insert`/`insert_many` (COPY), and
//!   the statement cycle of queries in simple or prepared mode (with the
//!   plan cache of prepared statements).
//! * [`query`] — the typed query API, the [`query::plan::Planner`]
//!   (partition expansion and pruning, index choice with or without the
//!   prefilter of Geier 2022, join method) and the [`query::exec::Executor`]
//!   (index and sequential scans, append, nested loop, hash join). Each
//!   borrows a session's relation cache and lock-manager backend (through
//!   `lmgr`, the relation-locking step shared with the session's DDL) for
//!   one call.
//!
//! Module dependencies run one way: `session` → `query::{plan, exec}` →
//! `lmgr` → `catalog`, `btree`, `heap` → `turnstile-storage`; `session` →
//! `engine`. Nothing below the session imports it, and `engine` does not
//! import the session (`Engine::session` is defined in `session.rs`).
//!
//! ## Writes, rollback and maintenance (DML, undo, VACUUM)
//!
//! * **INSERT / COPY** ([`Session::insert`], [`Session::insert_many`]):
//!   `RowExclusiveLock` on the table, each partition a row goes to, and
//!   their indexes. Rows honour the table's `fillfactor`
//!   ([`Session::set_fillfactor`]); primary-key columns refuse NULL.
//! * **UPDATE / DELETE** ([`Session::update_rows`], [`Session::delete_rows`],
//!   in [`dml`]): the same relation locks (partitions pruned on an
//!   equality predicate of the key), then a *row write lock* per row
//!   changed, held to the end of the transaction; a second writer of the
//!   row waits on the holder's transaction id, as in PostgreSQL, so a
//!   read-modify-write never loses an update and deadlocks through rows
//!   are detected (`40P01`). Index entries follow changed keys; unique
//!   indexes are checked against live rows. See [`txn`] for the limits
//!   (inserted rows are not row-locked; lock escalation to
//!   `ExclusiveLock` after [`txn::ESCALATE_ROWS`] rows; the undo log's
//!   size limit, `txn.undo_limit_bytes`).
//! * **ROLLBACK** ([`Session::rollback`]): undoes the transaction's
//!   inserts (rows marked dead: invisible to scans, their index entries
//!   skipped), updates (before-images written back; moved rows moved
//!   back) and deletes (rows revived), newest first, then releases every
//!   lock. **Not undone:** DDL (`CREATE`, `ALTER`, `DROP`, `TRUNCATE`,
//!   `ADD PRIMARY KEY`, fillfactor) — each is named in
//!   [`RollbackReport::kept_ddl`]. A write that would take the undo log
//!   past `txn.undo_limit_bytes` fails its statement (`54000`); an undo
//!   that fails is reported with its cause ([`EngineError::UndoFailed`]).
//!   A statement that fails outside a transaction block is undone the
//!   same way; a session dropped inside a block rolls it back.
//! * **TRUNCATE** ([`Session::truncate`]): `AccessExclusiveLock` on the
//!   tables, partitions and indexes; files cut to zero blocks, indexes
//!   rebuilt empty. **ADD PRIMARY KEY** ([`Session::add_primary_key`]):
//!   `<table>_pkey`, cascading to partitions. Range partitions take
//!   `MINVALUE`/`MAXVALUE` bounds ([`catalog::PartitionBound::range`]).
//!   **CREATE/DROP DATABASE** ([`Session::create_database`],
//!   [`Session::drop_database`], [`Engine::databases`]).
//! * **VACUUM / ANALYZE** ([`Session::vacuum`], [`Session::analyze`], in
//!   [`vacuum`]): `ShareUpdateExclusiveLock` (FULL: `AccessExclusiveLock`);
//!   VACUUM removes dead tuples no open transaction can bring back, their
//!   index entries, and records the freed space in the free-space map;
//!   ANALYZE gathers no statistics (the planner uses none).
//! * **Cancel** ([`Session::cancel_handle`], [`Session::check_interrupts`]):
//!   a lock wait, scan, COPY or DML loop fails with
//!   [`EngineError::Canceled`] (`57014`). Every [`EngineError`] has a
//!   SQLSTATE ([`EngineError::sqlstate`]).
//!
//! ## Lock order
//!
//! Every lock and mutex of the engine, in the one order they may nest
//! (a lock may be taken while only locks *above* it are held); each
//! mutex comes from the `turnstile_sync::sync` facade, so the loom
//! models see it.
//!
//! 1. **Heavyweight locks** (`turnstile-lock`): the relation, then its
//!    partitions, then their indexes, in plan order; a row waiter then
//!    takes the row's *tuple* lock and then the holder's *transaction id*
//!    lock (both let go before it retries, [`txn`]); advisory locks.
//! 2. **The `Catalog` `LwLock`** (DDL only, exclusive).
//! 3. **`XidGen`** (`LwLock`, [`mvcc::snapshot`], `procarray` only):
//!    assigning a transaction id. Never held with `ProcArray` or any lock
//!    below.
//! 4. **`ProcArray`** (`LwLock`, `procarray` only): shared to take a
//!    snapshot or compute a horizon, exclusive to register a backend or
//!    end a transaction. Nothing is taken under it.
//! 5. **Buffer content locks**, one at a time (except B-tree splits and a
//!    unique check's right-sibling coupling, see [`btree`]); a unique
//!    check reads heap pages shared under the index leaf's exclusive lock
//!    (index before heap, never the reverse).
//! 6. **Version-store shards** ([`mvcc::versions`], 64 `Mutex`es): under
//!    the tuple's page content lock, one shard at a time.
//! 7. **The storage crate's own order** (buffer mapping partitions, buffer
//!    headers, the free-space map, the file table). The relation-extension
//!    lock (heavyweight) is taken while no content lock is held.
//!
//! Leaf mutexes, each taken with none of 3–7 held and nothing taken under
//! it: the **row-lock shards** ([`txn::Transactions`], 64 `Mutex`es of
//! `(relation, TID) → holders`), the **dead-row counts** of the background
//! vacuum, the **transaction-id limit file** mutex (after `XidGen` is
//! released), and the engine's **database-user counts** and **statistics
//! totals**. The **status log** ([`mvcc::clog::XactLog`]) takes no lock: one
//! atomic word per transaction id, written only by its own backend (its
//! segments are allocated once, by `OnceLock`).
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
//! | the next transaction id (`procarray`) | `XidGen` exclusive, so an id is in its backend's slot before any later id completes; under `csn` one `fetch_add` |
//! | the running ids and the latest completed id | `ProcArray`: shared for a snapshot, exclusive to end a transaction |
//! | a transaction's status word | nothing: written only by its own backend (atomic stores, `IN_PROGRESS` → final), read by atomic loads ([`mvcc::clog`]) |
//! | the xid limit on disk | the limit-file `Mutex` (one writer at a time) |
//! | a row's older versions | its page's content lock (push and pop exclusive, read shared), then the shard `Mutex` |
//! | a row's lock holders | its row-lock shard `Mutex`; a holder's entry lives until its transaction ends |
//! | which rows a tuple version means | the visibility rules of [`mvcc::visibility`], on the header read under the page's content lock |
//! | dead-row counts, database users, statistics totals | their own `Mutex` each |

//! ## Invariants
//!
//! * **Locks bound statements.** Outside `begin`/`commit` a session holds
//!   no heavyweight lock between statements: `Session::statement`
//!   releases them all, on success and on error; inside a transaction
//!   they last until `commit`; dropping the session releases everything.
//! * **Lock before read.** A relation's definition is read only after the
//!   lock that protects it is granted: the planner locks each table
//!   `AccessShare` and re-resolves its name (retrying if DDL replaced it)
//!   before reading its partitions and indexes; DDL holds
//!   `AccessExclusive` on every existing relation it changes before it
//!   touches the catalog.
//! * **A plan is re-locked on every execution.** The executor takes
//!   `AccessShare` on every relation and index of `Plan::executor_locks`
//!   before it reads a page, so a prepared plan never scans a relation
//!   DDL could be changing; a prepared plan whose `generation` differs
//!   from the catalog's published generation is re-made first.
//! * **Caches never outlive the catalog generation.** Relation-cache
//!   entries and cached B-tree roots belong to the generation they were
//!   built at and are dropped when it changes; a cached root is only a
//!   hint, verified under the root page's content lock on every descent.
//! * **No pin or content lock outlives a statement.** Scans, inserts and
//!   COPY's bulk inserter release their pins and content locks before the
//!   statement returns; a B-tree walk holds one content lock at a time
//!   (except a split: left, new right, then parent), and moves right while
//!   its key is at or beyond a page's high key (Lehman–Yao).
//! * **Unique means one live entry.** A unique index holds at most one
//!   entry per key without NULLs that points at a live heap tuple: the
//!   check and the insert run under one exclusive leaf lock, and a row
//!   whose index insert failed is marked dead in the heap.
//!
//! Executed: [`Engine::check_invariants`] (the buffer pool's and the lock
//! manager's checks) runs at quiescent points of the engine's integration
//! tests; `BTree::check` verifies a tree's structure; debug builds assert
//! the pin and I/O hand-offs in the buffer pool.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod advisory;
mod attach;
mod autovacuum;
pub mod btree;
pub mod catalog;
mod constraints;
pub mod datetime;
mod ddl;
pub mod dml;
pub mod durability;
mod engine;
pub mod error;
pub mod heap;
mod key_filter;
pub mod keyshare;
mod lmgr;
pub mod memory;
pub mod mvcc;
pub mod query;
mod reindex;
mod relfiles;
mod rollback;
mod routing;
pub mod session;
pub mod speculative;
pub mod subxact;
pub mod tid;
pub mod txn;
pub mod types;
mod unique_wait;
pub mod vacuum;
mod xact_id;

pub use engine::Engine;
pub use error::{EngineError, Internal, InvalidTransactionState, Result, UniqueViolation};
pub use session::Session;
pub use turnstile_lock::SqlState;
pub use txn::RollbackReport;
