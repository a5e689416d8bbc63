//! # turnstile-sync: lightweight locks, wait events and activity slots
//!
//! The bottom crate of turnstile. Everything above it takes its atomics,
//! mutexes and thread parking from [`sync`], so the handshakes that matter
//! are model-checked with loom (`RUSTFLAGS="--cfg loom"`).
//!
//! ## What lives here
//!
//! * [`LwLock`] — PostgreSQL's lightweight lock: one atomic state word
//!   (shared count, exclusive bit, waiter and wake-up flags), a wait queue,
//!   and two admission policies: [`LwLockPolicy::Barging`] (PostgreSQL
//!   15, which starves exclusive lockers in Postgres Pro 2018's report) and
//!   [`LwLockPolicy::Fair`] (that report's patch: a shared locker does not
//!   pass a queued exclusive one). Under both, a release wakes waiters to
//!   retry, as PostgreSQL's does; it never hands the lock over. Every lock belongs to a [`Tranche`] whose counters
//!   ([`stats::tranche_stats`]) count acquisitions, waits and wait time.
//! * [`activity`] — per-backend slots (`state`, `wait_event_type`,
//!   `wait_event`, query text) readable by any thread without a lock; an
//!   `LwLock` wait publishes `LWLock` / `<tranche>` there.
//! * [`config`] — every knob of the system with the `classic` and
//!   `scalable` presets (it lives in the bottom crate so that every layer
//!   reads its own section of one `Config`).
//! * [`frames`] — the buffer pool's memory: page frames cut from one
//!   anonymous mapping and a [`frames::HugeArray`] for the descriptors,
//!   both optionally advised onto transparent huge pages
//!   (`buffer.huge_pages`).
//!
//! ## What protects what
//!
//! | data | protected by |
//! |---|---|
//! | `LwLock` holder bits | CAS on the state word (acquire) / `fetch_sub` (release) |
//! | `LwLock` waiter flags and wait queue | the lock's queue mutex; flags change by CAS under it |
//! | `LwLock` wake-up flags (`WAKING`, `EXCLUSIVE_WAKING`) | set by a releaser's CAS under the queue mutex; cleared by the woken waiter's granting or re-queueing CAS |
//! | a waiter's wake-up (`RETRY`) | its own atomic, written once per queueing by the releaser that dequeued it, then `unpark` |
//! | activity `state`, wait event | single atomic words written only by the owning backend |
//! | activity query text | a sequence counter (even ⇔ stable), written only by the owner |
//! | tranche counters | one block per thread, written only by that thread |
//!
//! Lock order inside this crate: an `LwLock`'s queue mutex is the innermost
//! lock of the system; nothing is acquired while holding it, and waiters
//! are unparked after it is released.
//!
//! ## Invariants
//!
//! For every `LwLock` (the state word's layout is in [`lwlock`], checked at
//! compile time):
//!
//! * holders: `EXCLUSIVE` set ⇒ shared count `== 0`; the shared count is the
//!   number of live shared guards, `EXCLUSIVE` ⇔ one live exclusive guard.
//! * queue: `WAITERS` ⇔ the queue is non-empty; `EXCLUSIVE_WAITING` ⇔ it
//!   holds an exclusive waiter (the queue's `exclusive` count `> 0`).
//! * wake-ups: `EXCLUSIVE_WAKING` ⇒ `WAKING`; at most one exclusive waiter
//!   is woken and not yet retried, and it is the one `EXCLUSIVE_WAKING`
//!   stands for.
//! * no lost wake-up: a waiter is queued only while a holder, a queued or
//!   woken exclusive waiter, or a pending release is bound to process the
//!   queue after it (the argument is in [`lwlock`]; loom checks it).
//! * fairness (`fair`): no shared request that began after an
//!   exclusive waiter queued is granted before that waiter.
//! * quiescence: once no thread holds, waits for or is releasing a lock,
//!   its state word is `0` ([`LwLock::is_idle`]; the unit and loom tests
//!   check it after every run).
//! * a thread's tranche counters and activity slot are written only by
//!   that thread; an `LwLock` wait shows `LWLock` / `<tranche>` in the slot
//!   exactly while the thread is in the slow path.
//!
//! ## Memory ordering
//!
//! Grants use `Acquire` CAS, releases `Release` `fetch_sub`, so a holder
//! sees everything every previous holder wrote. A woken waiter takes the
//! lock by its own `Acquire` CAS, like any other locker; the releaser's
//! wake-up (an `AcqRel` CAS of the flags under the queue mutex, then a
//! `Release` store of the waiter's `RETRY`, read with `Acquire`) carries
//! no data, only the turn to retry.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod activity;
pub mod alloc_count;
pub mod config;
pub mod frames;
pub mod lwlock;
pub mod stats;
pub mod sync;
pub mod wait_event;

pub use activity::{ActivityHandle, ActivityRow, ActivityTable, BackendState};
pub use config::{Config, ConfigError, FastPathProtocol, Profile, WalConfig, WalInsert};
pub use crossbeam_utils::{Backoff, CachePadded};
pub use lwlock::{LwLock, LwLockExclusiveGuard, LwLockPolicy, LwLockSharedGuard};
pub use stats::{tranche_stats, TrancheStats};
pub use wait_event::{IoEvent, LockWaitKind, Tranche, WaitEvent};
