//! # turnstile-storage: pages, files, the buffer pool, relation extension
//!
//! The layer between the engine's access methods and the file system,
//! built as PostgreSQL's is, so that the bottlenecks measured in
//! Vondra 2024, Freund 2020 and Postgres Pro 2018 (`docs/sources.md`)
//! exist here — and their fixes are switches.
//!
//! ```text
//!  engine (heap, B-tree)
//!     │  Extender::get_page / BufferPool::read_buffer → PinnedBuffer → lock_shared / lock_exclusive
//!  buffer pool ── mapping table (N partitions) ── clock sweep / rings ── free-space map
//!     │  PageStore: read_page / write_pages / extend / nblocks
//!  Smgr ── vfd cache (≤ max_open_files descriptors, LRU)
//!     │  StorageIo (OsIo, or FaultyIo in tests)
//!  files: <data>/base/<db>/<rel>[_fsm|_vm][.<segment>], 1 GiB segments, 8 kB checksummed pages
//! ```
//!
//! ## What protects what
//!
//! | data | protected by |
//! |---|---|
//! | mapping `tag → buffer` | the tag's `BufferMapping` partition `LwLock` (shared to look up, exclusive to change) |
//! | a buffer's tag, flags, pins, usage count | its descriptor's atomic state word; tag and flag stores under the header-lock bit |
//! | a buffer's page bytes | its `BufferContent` `LwLock`; the pin keeps the page from being replaced |
//! | a buffer's I/O (read-in, write-out, new-page init) | its `BufferIO` `LwLock`, held exclusive by the performer |
//! | victim selection | the clock hand (an atomic) and the free list (a mutex) |
//! | a relation's length in blocks (`nblocks`) | only extension changes it: the relation-extension lock (heavyweight, `turnstile-lock`), and the smgr's per-fork mutex |
//! | free space of pages | the `FreeSpaceMap` `LwLock`s |
//! | open descriptors | the vfd cache's `FileCache` `LwLock` |
//!
//! ## Lock order
//!
//! 1. the relation-extension lock (heavyweight; nothing else is held when
//!    it is requested — bulk victims are pinned, not locked, while waiting);
//! 2. buffer content locks (a write-back takes them with `try`, never
//!    waiting while holding another);
//! 3. buffer I/O locks (several only in buffer-address order, by a
//!    write-back run or a bulk extension, on buffers only it has pinned);
//! 4. one mapping partition;
//! 5. the buffer header bit (held for a few instructions, never across an
//!    acquisition).
//!
//! Exception to 2 → 3: a read-in or a new page takes I/O then content, on
//! a buffer that is not `VALID`, whose content lock nobody else can hold
//! (content locks are taken only on pinned `VALID` buffers). The
//! free-space-map, smgr-fork and vfd locks are leaves.
//!
//! ## Relation extension (Freund 2020)
//!
//! [`Extender::get_page`] hands an inserter a page: from the free-space
//! map, else by extending. `classic` does PostgreSQL ≤ 15's extension —
//! one block at a time with everything under the lock, plus
//! `RelationAddExtraBlocks` (20 extra blocks per waiter, at most 512) when
//! the lock is contended; `bulk` finds and cleans `k`
//! victims first (writing consecutive dirty pages back with one `pwritev`
//! per run), then under the lock only checks the size, `fallocate`s `k`
//! blocks and inserts `k` mapping entries, and initialises the pages and
//! publishes the spares after release. See [`extend`].
//!
//! ## Invariants
//!
//! * `TAG_VALID(b) ⇔ mapping[tag(b)] = b`; a tag is mapped to at most one
//!   buffer.
//! * `refcount(b) > 0 ⇒ b` is not chosen as a victim and `tag(b)` does not
//!   change (model-checked in `tests/loom_pin.rs`).
//! * `DIRTY ⇒ VALID ⇒ TAG_VALID`.
//! * `nblocks(rel, fork)` = blocks the files hold; a failed extension
//!   leaves it, and the files, as they were.
//! * Every page written carries the CRC32C of its bytes and block number;
//!   every page read is verified before `VALID` is set.
//! * Vfd cache entries `≤ max_open_files`.
//!
//! Executed: [`BufferPool::check_invariants`] checks the first three (and
//! that no pin, header, content or I/O lock is left) at quiescent points of
//! this crate's and the engine's integration tests. Debug builds assert
//! the hand-offs in pairs: a pin is taken on a buffer mapped to its tag
//! and still holds that tag when it is dropped; a victim is pinned by its
//! chooser alone when it is installed; `IO_IN_PROGRESS` is still set when
//! the I/O lock's holder clears it.
//!
//! ## Memory ordering
//!
//! Pins are `Acquire` CASes, unpins `Release`; the header lock is taken
//! with an `Acquire` RMW and released by a `Release` store of the whole
//! word. Page bytes are ordered by the content `LwLock`. `nblocks` is
//! stored `Release` after the file system has the blocks and read `Acquire`.

#![deny(unsafe_op_in_unsafe_fn)]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod buffer;
pub mod error;
pub mod extend;
pub mod extlock;
pub mod fault;
pub mod fsm;
pub mod io;
pub mod page;
pub mod page_log;
pub mod power_loss;
pub mod rel;
pub mod smgr;
pub(crate) mod stats;
pub mod store;
pub mod vfd;
pub mod wal;

pub(crate) use turnstile_sync::sync;

pub use buffer::{
    BufferPool, BufferPoolStats, ChangedPage, PageReadGuard, PageWriteGuard, PinnedBuffer, PoolOptions, Ring,
};
pub use error::{FileError, FileOp, PageError, Result, StorageError};
pub use extend::{Extender, ExtensionLocker, ExtensionStats};
pub use fsm::FreeSpaceMap;
pub use rel::{BlockNumber, BufferTag, Fork, RelFileId};
pub use smgr::{Smgr, SmgrOptions};
pub use store::PageStore;
pub use vfd::FdStats;
