//! # turnstile-lock: the heavyweight lock manager
//!
//! PostgreSQL's table-level lock manager (`src/backend/storage/lmgr`),
//! reimplemented: eight lock modes with the standard conflict table
//! ([`LockMode`]), tags for relations, extension, pages, tuples,
//! transaction ids, objects and advisory locks ([`LockTag`]), a
//! partitioned shared lock table with FIFO wait queues, `NOWAIT` and lock
//! timeouts ([`Wait`]), deadlock detection with soft-deadlock resolution,
//! and the **fast path** for weak relation locks — grouped, and in the
//! `scalable` profile **growing** (Haas 2011, Vondra 2024; see
//! `docs/sources.md`).
//!
//! ```
//! use turnstile_lock::{LockManager, LockMode, LockTag, Wait};
//! use turnstile_sync::{Config, Profile};
//!
//! let manager = LockManager::new(&Config::preset(Profile::Classic)).unwrap();
//! let mut session = manager.register().unwrap();
//! for rel in 0..100 {
//!     session.lock(LockTag::relation(1, rel), LockMode::AccessShare, Wait::Block).unwrap();
//! }
//! // classic: 16 fast-path slots, the other 84 locks in the shared table.
//! let s = session.stats();
//! assert_eq!((s.fast_path_acquires, s.shared_acquires), (16, 84));
//! session.release_all();
//! ```
//!
//! ## The pieces
//!
//! | structure | where | protected by |
//! |---|---|---|
//! | local lock table ([`Backend`]'s `(tag, mode)` → count, where; under `lockfree`, per-slot counts for the fast path's own locks) | the `Backend` | owned by one thread |
//! | fast-path slots of backend *b*, `lwlock` protocol | `backends[b].fast_path` | *b*'s `LwLock`, tranche `LockFastPath` |
//! | fast-path slots of backend *b*, `lockfree` protocol | `backends[b].lockfree` | each slot an atomic word (`src/lockfree.rs`); the array itself by *b*'s `LwLock` (strong lockers scan shared, *b* grows and bulk-clears exclusive) |
//! | strong-lock counters (`lock.strong_lock_counters`) | `LockManager.strong` | atomic add/sub; read by weak lockers under their own fast-path lock (`lwlock`) or after a `SeqCst` fence (`lockfree`) |
//! | shared lock table: lock objects (granted counts, holders, wait queue) | `lock.partitions` partitions | the partition's `LwLock`, tranche `LockManager` |
//! | capacity (`lock.max_locks`) | pool + per-partition spares | atomics; a partition's spare changes under its lock or by a steal CAS |
//! | a backend's wait status (`IDLE`/`WAITING`/`GRANTED`) | `backends[b].wait_status` | set `WAITING` by *b* and `GRANTED` by a releaser, both under the partition lock of the awaited tag |
//! | counters | `backends[b].counters` | written only by *b* |
//! | a pending cancel, the thread parked in *b*'s lock wait | `backends[b].cancel`, `backends[b].waiter` | bit set by any [`CancelHandle`] and consumed by *b* (atomic); the thread under its own mutex (`src/cancel.rs`) |
//!
//! ## Lock order
//!
//! 1. at most one backend's fast-path lock at a time (its own, or one
//!    backend's after another during a strong locker's scan);
//! 2. then partition locks, several only in ascending partition order
//!    (`release_all`, the deadlock check, the `locks` view);
//! 3. `LwLock` queue mutexes (inside `turnstile-sync`) are innermost.
//!
//! Nothing sleeps while holding any of these: a waiting backend drops its
//! partition lock before parking, and releasers unpark after dropping
//! theirs.
//!
//! ## Acquisition
//!
//! 1. **Local table**: already held in this mode ⇒ count + 1, done. No
//!    shared state is touched. Under `lockfree`, the weak relation locks
//!    the fast path granted are counted in the owner's private view of its
//!    slots (`src/lockfree.rs`), so this step is one search of the
//!    relation's group, with no hash; the local hash table holds the
//!    other locks, and is probed for a weak relation lock only while it
//!    holds one (granted through the shared table).
//! 2. **Fast path** — a relation tag and a weak mode (AccessShare,
//!    RowShare, RowExclusive), by `lock.fast_path_protocol`:
//!    * `lwlock` (PostgreSQL's, `classic`): take the own fast-path lock; if
//!      the tag's strong counter is 0, record the mode in the relation's
//!      slot of its group, done;
//!    * `lockfree` (`scalable`): publish the mode as *pending* in the
//!      relation's slot with a plain store, `SeqCst` fence, read the strong
//!      counter; 0 ⇒ store the mode as *held*, done; otherwise store the
//!      slot back as it was and fall through.
//!
//!    Either way the array grows if the group is full and below
//!    `lock.fast_path_slots_max`. A full group at the maximum counts a
//!    *fast-path overflow* and falls through; once a group is known full
//!    at the maximum, later requests skip the fast path altogether
//!    (PostgreSQL's `FastPathLocalUseCount` check).
//! 3. **Strong** relation modes (Share and stronger) first increment the
//!    tag's strong counter, then **transfer**: for every backend, move its
//!    slot for this relation (in the one group the relation maps to) into
//!    the shared table as granted locks — under `lwlock` holding that
//!    backend's fast-path lock; under `lockfree` after a `SeqCst` fence,
//!    holding that backend's fast-path lock *shared* (only to keep its
//!    array from being replaced) and the partition lock, claiming the slot
//!    with a CAS.
//! 4. **Shared table**: lock the tag's partition, find or create the lock
//!    object (or fail with [`LockError::OutOfLockMemory`]), grant if no
//!    conflict with other holders and with queued requests, else queue
//!    (at the tail, or ahead of the first waiter whose request conflicts
//!    with a mode the requester already holds — `src/partition.rs`) and
//!    sleep.
//!
//! Release undoes the same step: the local count drops; at zero, a
//! fast-path lock is cleared from the own slots (`lwlock`: under the own
//! fast-path lock; `lockfree`: by a CAS on the slot word, the slot's index
//! kept in the local entry) — or, if a strong locker moved it, found in
//! the shared table; a shared lock is ungranted, the queue woken in order,
//! an unused lock object deleted; a strong lock then decrements its
//! counter. `release_all` (`lwlock`) takes the own fast-path lock once:
//! when the mode bits in the slots number exactly the local fast-path
//! entries, so none was transferred, it empties whole groups without
//! searching them. Under `lockfree` it visits only the groups the
//! transaction touched (the owner lists each once); up to four locks are
//! cleared like `unlock`s, one atomic `fetch_and` each, more while holding
//! the own fast-path lock exclusively, which shuts out strong lockers, so
//! each slot is checked and cleared with plain loads and stores. Then it
//! releases shared-table locks partition by partition, one partition-lock
//! acquisition each, as `LockReleaseAll` does.
//!
//! ## Why weak and strong lockers cannot miss each other — `lwlock`
//!
//! Let weak locker *W* take relation *r* by the fast path while strong
//! locker *S* requests *r*. *W* reads `strong[h(r)]` and writes its slot
//! inside one critical section of `fp_lock(W)`. *S* increments
//! `strong[h(r)]` and afterwards, inside its own critical section of
//! `fp_lock(W)`, scans *W*'s slot. The critical sections of one `LwLock`
//! are totally ordered:
//!
//! * *W*'s first: *S*'s scan happens after *W*'s release of the lock, so it
//!   sees *W*'s slot and moves it to the shared table, where *S*'s request
//!   conflicts with it.
//! * *S*'s first: *S*'s increment is sequenced before its acquisition of
//!   `fp_lock(W)`, whose release synchronises with *W*'s acquisition, so
//!   the increment happens before *W*'s read, and *W* reads a non-zero
//!   counter (by coherence, never an older value) and uses the shared
//!   table.
//!
//! So every weak lock either sits in the shared table or its owner knew no
//! strong lock was being taken. The counter is only decremented after the
//! strong lock left the shared table (`Release`), and weak lockers read it
//! with `Acquire`. The same critical-section argument gives exactly-once
//! release of a transferred lock: the owner clears its slot under its own
//! fast-path lock, the transfer empties it under the same lock, so exactly
//! one of them finds the entry, and an owner that does not find it
//! releases from the shared table. Growth keeps this argument intact: only
//! the owner grows its array, under its own fast-path lock, and a scanner
//! computes the relation's group from the group count of the array it sees
//! under that same lock.
//!
//! ## Why weak and strong lockers cannot miss each other — `lockfree`
//!
//! Each slot is a key and a word of *held* modes, *pending* modes and a
//! *generation* (table in `src/lockfree.rs`). The weak locker *W* does
//! `P`: store its mode as pending in its slot; `F_W`: `fence(SeqCst)`;
//! `L`: load `strong[h(r)]` (`Acquire`); then a plain store turns the
//! pending bit into a held one (counter 0) or removes it. The strong locker
//! *S* does `I`: `fetch_add` on `strong[h(r)]`; `F_S`: `fence(SeqCst)`;
//! then, for every backend, loads the words of *r*'s group (`Acquire`).
//!
//! **Nobody misses.** The two fences are ordered in the single total order
//! of `SeqCst` operations. If `F_S` precedes `F_W`, then `I` (sequenced
//! before `F_S`) is visible to `L` (sequenced after `F_W`) — the C++
//! fence rule [atomics.order] for a modification before one fence and a
//! read after a later one — so *W* reads a counter ≥ 1 (*S* decrements
//! only after its strong lock left the shared table) and backs out. If
//! `F_W` precedes `F_S`, then by the same rule *S*'s load of *W*'s word
//! reads `P` or a later value: the pending bit, or what *W* made of it.
//! Both may happen; what may not is that *S* misses the slot *and* *W*
//! misses the counter — the store-buffering outcome the fences forbid.
//!
//! **No decision is taken twice.** While a word has a pending bit only its
//! owner writes it: a strong locker that sees a pending bit waits until
//! it is gone (a few instructions of the owner, none of which waits), and
//! every other write to a word is a CAS from a value without a pending
//! bit, so it fails while one is there. So *W*'s resolving store is never
//! lost, and a strong locker never transfers a mode *W* is about to take
//! back — which would grant *W* a lock that may conflict with a strong
//! lock already granted.
//!
//! **Exactly one of owner and transferrer ends each held mode.** The
//! owner's `unlock` clears its bit with a CAS; the transferrer claims the
//! whole word with a CAS from the exact value it read to "no bits, same
//! generation". Both act on one word, so one of them fails and re-reads:
//! an owner whose bit is gone releases from the shared table; a transferrer
//! that fails looks again. The claim is made under the partition lock and
//! granted before that lock is released, so an owner that sees its bit
//! claimed and takes the partition lock finds the grant. `release_all`
//! clears few slots with `fetch_and`, an atomic read-modify-write that
//! races a claim CAS exactly as `unlock`'s CAS does; many with plain
//! stores, but only while holding its own fast-path lock exclusively,
//! which shuts out every transferrer (they scan holding it shared); the
//! same lock keeps growth from replacing the
//! array under a scan, and growth re-points each local entry to its new
//! slot, turning entries whose mode was claimed into shared-table ones.
//!
//! **Keys cannot be swapped under a claim.** The owner writes a slot's key
//! only while its word has no bits, and then publishes with the generation
//! bumped (`Release`, read with `Acquire`). A transferrer reads the word,
//! then the key; if the key it read is a later one, the owner's emptying
//! of the word happened before the CAS, which therefore reads the emptied
//! word or a later one — never the old value, whose generation cannot come
//! back — and fails.
//!
//! `tests/loom_fastpath.rs` model-checks both protocols: a weak and a
//! strong locker never both hold; a transferred lock is released exactly
//! once; a transfer racing `release_all`; growth during a scan.

//! ## Limits
//!
//! * `lock.max_backends` backend slots; [`LockManager::register`] past
//!   them fails with [`LockError::TooManyBackends`].
//! * `lock.max_locks` lock objects in the shared table (one per locked tag,
//!   whatever its number of holders and waiters — at most
//!   `lock.max_backends` each); past it, [`LockError::OutOfLockMemory`],
//!   after which the failed request has left nothing behind.
//! * Fast-path slots per backend: `lock.fast_path_slots` at registration,
//!   at most `lock.fast_path_slots_max`.
//! * The deadlock search tries a bounded number of queue re-orderings;
//!   past the bound the checker's request is treated as deadlocked.
//!
//! ## Invariants
//!
//! * `strong[i]` = number of strong relation requests hashing to `i` that
//!   are between phase 3 and their release (granted or still trying).
//! * `strong[h(r)] > 0` ⇒ no backend adds a fast-path entry for `r`
//!   (`lockfree`: it may publish a *pending* mode, which it then takes
//!   back).
//! * `lockfree`: a slot word with a pending bit is written only by its
//!   owner; a held bit in slot *s* ⇔ a local entry of the owner for that
//!   mode pointing at *s* that no strong locker has claimed.
//! * For every lock object: `granted[m]` = #{holders holding `m`},
//!   `grant_mask` bit `m` ⇔ `granted[m] > 0`, `wait_mask` bit `m` ⇔ a queued
//!   request for `m`; an object exists ⇔ it has a holder or a waiter.
//! * Capacity: `pool + Σ spare[p] + #lock objects = lock.max_locks`.
//! * A local entry with count > 0 ⇔ exactly one grant of its mode to this
//!   backend, in its fast-path slots or in the shared table.
//! * A backend is queued on at most one lock; its `wait_status` is
//!   `WAITING` exactly while queued, and becomes `GRANTED` only by a
//!   releaser that moved it from the queue to the holders.
//!
//! ## Waiting and deadlocks
//!
//! A waiter sleeps on its own thread's parker, showing `Lock` /
//! `<lock type>` in its activity slot. After its `deadlock_timeout` it runs
//! the deadlock check once, with every partition locked in order
//! (`src/deadlock.rs`): hard edges to holders, soft edges to
//! conflicting requests queued ahead; soft cycles are broken by
//! re-ordering queues when possible, otherwise the checker gets
//! [`LockError::Deadlock`] naming every edge. Relation-extension locks
//! never take part: they are held briefly, and a backend holding one must
//! not wait for another heavyweight lock (PostgreSQL's rule too). The lock timeout, [`Wait::NoWait`] and a
//! [`CancelHandle`] (another thread's cancel request, PostgreSQL's
//! `CancelRequest`) end a wait with their own errors; leaving a queue
//! wakes whoever it held back.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod backend;
mod cancel;
mod capacity;
mod deadlock;
mod error;
mod fastpath;
mod local;
mod lockfree;
mod manager;
mod mode;
mod partition;
mod shared_table;
mod slot;
mod sqlstate;
mod stats;
mod sync;
mod tag;
#[cfg(feature = "testing")]
pub mod testing;
mod view;
mod wait;

pub use backend::{Backend, ScopedLock};
pub use cancel::CancelHandle;
pub use error::{DeadlockEdge, LockError};
pub use fastpath::SLOTS_PER_GROUP;
pub use manager::{LockManager, Occupancy};
pub use mode::{LockMode, ModeMask};
pub use sqlstate::SqlState;
pub use stats::LockStats;
pub use tag::{LockTag, LockTagKind};
pub use view::LockRow;
pub use wait::{Acquired, Wait};
