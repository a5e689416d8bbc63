//! # turnstile-sync: lightweight locks, wait events and activity slots
//!
//! The bottom crate of turnstile. Everything above it takes its atomics,
//! mutexes and thread parking from [`sync`], so the handshakes that matter
//! are model-checked with loom (`RUSTFLAGS="--cfg loom"`).
//!
//! ## What lives here
//!
//! * [`LwLock`] — PostgreSQL's lightweight lock: one atomic state word
//!   (shared count, exclusive bit, waiter flags), a FIFO wait queue, and
//!   two admission policies ([`LwLockPolicy::Barging`], the pre-fix
//!   behaviour that starves exclusive lockers in seed 004, and
//!   [`LwLockPolicy::Fair`]). Every lock belongs to a [`Tranche`] whose
//!   counters ([`stats::tranche_stats`]) count acquisitions, waits and
//!   wait time.
//! * [`activity`] — per-backend slots (`state`, `wait_event_type`,
//!   `wait_event`, query text) readable by any thread without a lock; an
//!   `LwLock` wait publishes `LWLock` / `<tranche>` there.
//! * [`config`] — every knob of the system with the `classic` and
//!   `scalable` presets (it lives in the bottom crate so that every layer
//!   reads its own section of one `Config`).
//!
//! ## What protects what
//!
//! | data | protected by |
//! |---|---|
//! | `LwLock` holder bits | CAS on the state word (acquire) / `fetch_sub` (release) |
//! | `LwLock` waiter flags and wait queue | the lock's queue mutex; flags change by CAS under it |
//! | a waiter's grant | its own atomic, written once by the releaser, then `unpark` |
//! | activity `state`, wait event | single atomic words written only by the owning backend |
//! | activity query text | a sequence counter (even ⇔ stable), written only by the owner |
//! | tranche counters | one block per thread, written only by that thread |
//!
//! Lock order inside this crate: an `LwLock`'s queue mutex is the innermost
//! lock of the system; nothing is acquired while holding it, and waiters
//! are unparked after it is released.
//!
//! ## Memory ordering
//!
//! Grants use `Acquire` CAS, releases `Release` `fetch_sub`; a hand-off
//! grant made by a releaser on a waiter's behalf is an `AcqRel` CAS (it
//! continues the release sequence of the previous holder) followed by a
//! `Release` store of the waiter's grant flag, which the waiter reads with
//! `Acquire` — so the waiter sees everything every previous holder wrote.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod activity;
pub mod config;
pub mod lwlock;
pub mod stats;
pub mod sync;
pub mod wait_event;

pub use activity::{ActivityHandle, ActivityRow, ActivityTable, BackendState};
pub use config::{Config, ConfigError, FastPathProtocol, Profile};
pub use crossbeam_utils::{Backoff, CachePadded};
pub use lwlock::{LwLock, LwLockExclusiveGuard, LwLockPolicy, LwLockSharedGuard};
pub use stats::{tranche_stats, TrancheStats};
pub use wait_event::{IoEvent, LockWaitKind, Tranche, WaitEvent};
