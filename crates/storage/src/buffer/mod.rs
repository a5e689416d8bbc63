//! The shared buffer pool (`docs/architecture.md`): descriptors, the partitioned
//! mapping table, clock-sweep victim selection, rings, pins. The pages
//! are frames of one mapping and the descriptors one array
//! (`turnstile_sync::frames`), both on huge pages with
//! `buffer.huge_pages`.
//!
//! | file | what |
//! |---|---|
//! | [`pool`] | options, counters, the pool's shared state, exclusive mapping acquisitions, the lock order |
//! | `read` | the read path: hit, miss, read-in and checksum check; mapping new blocks |
//! | `victim` | victim selection (ring, clock sweep) and write-back |
//! | `flush` | flush, drop and truncate a relation's buffers |
//! | `log` | logging a change of locked pages ([`crate::page_log`]) and WAL before data |
//! | [`guard`] | pins and content-lock guards |
//! | [`desc`], `mapping`, [`clock`], [`ring`] | descriptors and their state word, the mapping table, the clock, rings |

pub mod clock;
pub mod desc;
mod flush;
pub mod guard;
mod log;
pub(crate) mod mapping;
pub mod pool;
mod read;
pub mod ring;
mod scratch;
mod unlogged;
mod victim;

pub use desc::BufferId;
pub use guard::{ChangedPage, PageReadGuard, PageWriteGuard, PinnedBuffer};
pub use pool::{BufferPool, BufferPoolStats, PoolOptions};
pub use ring::Ring;
pub use victim::MAX_WRITE_RUN;
