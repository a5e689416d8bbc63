//! Per-backend activity slots: the `pg_stat_activity` of turnstile.
//!
//! Each backend owns one [`ActivitySlot`] in an [`ActivityTable`] and is the
//! only writer of it. Any thread may read every slot at any time without a
//! lock ([`ActivityTable::snapshot`]); a sampler thread does so while
//! queries run to build the wait-event profile of Postgres Pro 2018.
//!
//! # What a reader can rely on
//!
//! * `state` and the wait event are single atomic words: a reader sees
//!   either the old or the new value, never a mix.
//! * The query text is guarded by a sequence counter, as PostgreSQL's
//!   `st_changecount`: the writer makes it odd, writes, makes it even; a
//!   reader copies the text and retries if the counter was odd or moved.
//!   Invariant: `query_seq` is even ⇔ no write of the text is in progress.
//!   A reader that loses [`MAX_READ_RETRIES`] races reports the text as
//!   `<changing>` rather than spin without bound.
//!
//! # Lightweight-lock waits
//!
//! A thread that has [`ActivityHandle::attach`]ed its slot reports every
//! wait through [`report_wait`]: an `LwLock` wait shows
//! `wait_event_type = LWLock`, `wait_event = <tranche>`.
//!
//! ```
//! use turnstile_sync::activity::{ActivityTable, BackendState};
//! let table = ActivityTable::new(4);
//! let me = table.register().unwrap();
//! me.set_state(BackendState::Active);
//! me.set_query("SELECT 1");
//! let rows = table.snapshot();
//! assert_eq!(rows[0].query, "SELECT 1");
//! assert_eq!(rows[0].state, BackendState::Active);
//! ```

use crate::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use crate::wait_event::WaitEvent;
// The table is shared by `std` Arc even under loom: `self: &Arc<Self>`
// needs std's, and no modelled handshake clones it.
use crossbeam_utils::CachePadded;
use std::sync::Arc;
use std::time::Instant;

/// Bytes of query text kept per backend (PostgreSQL's
/// `track_activity_query_size` default); longer text is truncated.
pub const QUERY_TEXT_MAX: usize = 1024;
const QUERY_WORDS: usize = QUERY_TEXT_MAX / 8;
/// How often a reader retries a torn read of the query text.
pub const MAX_READ_RETRIES: u32 = 64;

/// What a backend is doing (`pg_stat_activity.state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[repr(u8)]
pub enum BackendState {
    /// Registered, no query.
    Idle = 0,
    /// Running a query.
    Active,
    /// Between queries inside a transaction.
    IdleInTransaction,
}

impl BackendState {
    /// PostgreSQL's name (`idle`, `active`, `idle in transaction`).
    pub const fn name(self) -> &'static str {
        match self {
            BackendState::Idle => "idle",
            BackendState::Active => "active",
            BackendState::IdleInTransaction => "idle in transaction",
        }
    }

    fn from_u8(v: u8) -> BackendState {
        match v {
            1 => BackendState::Active,
            2 => BackendState::IdleInTransaction,
            _ => BackendState::Idle,
        }
    }
}

/// One backend's published activity. Written only by its owner.
#[derive(Debug)]
pub struct ActivitySlot {
    in_use: AtomicBool,
    state: AtomicU8,
    /// [`WaitEvent::encode`] of the current wait, 0 when not waiting.
    wait: AtomicU32,
    /// Microseconds since the table's epoch when the current query started.
    query_start_us: AtomicU64,
    /// Sequence counter of the query text (even ⇔ stable).
    query_seq: AtomicU32,
    query_len: AtomicU32,
    query: [AtomicU64; QUERY_WORDS],
}

impl ActivitySlot {
    fn new() -> Self {
        ActivitySlot {
            in_use: AtomicBool::new(false),
            state: AtomicU8::new(BackendState::Idle as u8),
            wait: AtomicU32::new(0),
            query_start_us: AtomicU64::new(0),
            query_seq: AtomicU32::new(0),
            query_len: AtomicU32::new(0),
            query: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    fn write_query(&self, text: &str) {
        let bytes = truncate_at_char(text, QUERY_TEXT_MAX).as_bytes();
        let seq = self.query_seq.load(Ordering::Relaxed);
        debug_assert!(seq % 2 == 0, "only the owner writes the query text");
        self.query_seq.store(seq.wrapping_add(1), Ordering::Relaxed);
        fence(Ordering::Release);
        for (i, chunk) in bytes.chunks(8).enumerate() {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.query[i].store(u64::from_le_bytes(word), Ordering::Relaxed);
        }
        self.query_len.store(bytes.len() as u32, Ordering::Relaxed);
        self.query_seq.store(seq.wrapping_add(2), Ordering::Release);
    }

    fn read_query(&self) -> String {
        let mut buf = [0u8; QUERY_TEXT_MAX];
        for _ in 0..MAX_READ_RETRIES {
            let before = self.query_seq.load(Ordering::Acquire);
            if before % 2 == 1 {
                crate::sync::spin_loop();
                continue;
            }
            let len = (self.query_len.load(Ordering::Relaxed) as usize).min(QUERY_TEXT_MAX);
            for i in 0..len.div_ceil(8) {
                let word = self.query[i].load(Ordering::Relaxed).to_le_bytes();
                let end = (i * 8 + 8).min(len);
                buf[i * 8..end].copy_from_slice(&word[..end - i * 8]);
            }
            fence(Ordering::Acquire);
            if self.query_seq.load(Ordering::Relaxed) == before {
                return String::from_utf8_lossy(&buf[..len]).into_owned();
            }
        }
        "<changing>".to_owned()
    }
}

fn truncate_at_char(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// A fixed array of activity slots, one per registered backend.
#[derive(Debug)]
pub struct ActivityTable {
    slots: Box<[CachePadded<ActivitySlot>]>,
    epoch: Instant,
}

/// The table has no free slot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("too many backends: all {max} activity slots are in use (raise lock.max_backends)")]
pub struct ActivityFull {
    /// The table's size.
    pub max: usize,
}

/// One row of [`ActivityTable::snapshot`], like a row of `pg_stat_activity`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ActivityRow {
    /// Slot number of the backend.
    pub backend: usize,
    /// What it is doing.
    pub state: BackendState,
    /// `LWLock`, `Lock`, `IO`, `BufferPin`, or `None` when not waiting.
    pub wait_event_type: Option<&'static str>,
    /// The tranche, lock type or I/O event waited for.
    pub wait_event: Option<&'static str>,
    /// Microseconds since the table was created at which the query started.
    pub query_start_us: u64,
    /// The current (or last) query text.
    pub query: String,
}

impl ActivityTable {
    /// A table with `max_backends` slots.
    pub fn new(max_backends: usize) -> Arc<Self> {
        Arc::new(ActivityTable {
            slots: (0..max_backends).map(|_| CachePadded::new(ActivitySlot::new())).collect(),
            epoch: Instant::now(),
        })
    }

    /// Number of slots.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Claims a free slot for a new backend.
    pub fn register(self: &Arc<Self>) -> Result<ActivityHandle, ActivityFull> {
        for (index, slot) in self.slots.iter().enumerate() {
            if slot.in_use.compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
                slot.state.store(BackendState::Idle as u8, Ordering::Relaxed);
                slot.wait.store(0, Ordering::Relaxed);
                slot.write_query("");
                return Ok(ActivityHandle { table: Arc::clone(self), index });
            }
        }
        Err(ActivityFull { max: self.slots.len() })
    }

    /// Reads every slot in use, without taking a lock.
    pub fn snapshot(&self) -> Vec<ActivityRow> {
        let mut rows = Vec::new();
        for (backend, slot) in self.slots.iter().enumerate() {
            if !slot.in_use.load(Ordering::Acquire) {
                continue;
            }
            let wait = WaitEvent::decode(slot.wait.load(Ordering::Relaxed));
            rows.push(ActivityRow {
                backend,
                state: BackendState::from_u8(slot.state.load(Ordering::Relaxed)),
                wait_event_type: wait.map(WaitEvent::type_name),
                wait_event: wait.map(WaitEvent::name),
                query_start_us: slot.query_start_us.load(Ordering::Relaxed),
                query: slot.read_query(),
            });
        }
        rows
    }

    /// The current wait of backend `backend`, if it is registered and waiting.
    pub fn wait_event_of(&self, backend: usize) -> Option<WaitEvent> {
        let slot = self.slots.get(backend)?;
        WaitEvent::decode(slot.wait.load(Ordering::Relaxed))
    }
}

/// A backend's claim on its slot; dropping it frees the slot.
#[derive(Debug)]
pub struct ActivityHandle {
    table: Arc<ActivityTable>,
    index: usize,
}

impl ActivityHandle {
    /// The slot number (the backend id shown in rows).
    pub fn backend(&self) -> usize {
        self.index
    }

    fn slot(&self) -> &ActivitySlot {
        &self.table.slots[self.index]
    }

    /// Publishes the backend state.
    pub fn set_state(&self, state: BackendState) {
        self.slot().state.store(state as u8, Ordering::Relaxed);
    }

    /// Publishes the query text (truncated to [`QUERY_TEXT_MAX`] bytes) and
    /// stamps its start time.
    pub fn set_query(&self, text: &str) {
        self.start_query();
        self.slot().write_query(text);
    }

    /// Stamps a query's start time, keeping the published text (a caller
    /// that publishes its statements' text elsewhere).
    pub fn start_query(&self) {
        let now = self.table.epoch.elapsed().as_micros() as u64;
        self.slot().query_start_us.store(now, Ordering::Relaxed);
    }

    /// Publishes `event` until the returned guard is dropped, then restores
    /// the previous wait (waits may nest, e.g. an LWLock inside I/O).
    pub fn wait(&self, event: WaitEvent) -> WaitGuard<'_> {
        let slot = self.slot();
        let previous = slot.wait.swap(event.encode(), Ordering::Relaxed);
        WaitGuard { slot, previous }
    }

    /// Makes this slot the one the current thread's waits are reported to
    /// (by [`report_wait`], which `LwLock` and the lock manager call), until
    /// the returned guard is dropped.
    pub fn attach(&self) -> AttachGuard {
        current::attach(Arc::clone(&self.table), self.index)
    }
}

impl Drop for ActivityHandle {
    fn drop(&mut self) {
        let slot = self.slot();
        slot.wait.store(0, Ordering::Relaxed);
        slot.state.store(BackendState::Idle as u8, Ordering::Relaxed);
        slot.in_use.store(false, Ordering::Release);
    }
}

/// Restores the previous wait event of a slot when dropped.
#[must_use = "the wait event is cleared when the guard is dropped"]
#[derive(Debug)]
pub struct WaitGuard<'a> {
    slot: &'a ActivitySlot,
    previous: u32,
}

impl Drop for WaitGuard<'_> {
    fn drop(&mut self) {
        self.slot.wait.store(self.previous, Ordering::Relaxed);
    }
}

/// Reports `event` on the slot attached to the current thread, if any,
/// until the returned guard is dropped. Costs one thread-local read when no
/// slot is attached.
pub fn report_wait(event: WaitEvent) -> ReportGuard {
    current::report(event)
}

pub use current::{AttachGuard, ReportGuard};

#[cfg(not(loom))]
mod current {
    use super::{ActivityTable, WaitEvent};
    use crate::sync::atomic::Ordering;
    use std::cell::RefCell;
    use std::sync::Arc;

    thread_local! {
        static CURRENT: RefCell<Option<(Arc<ActivityTable>, usize)>> = const { RefCell::new(None) };
    }

    /// Detaches the slot from the thread when dropped (restoring any slot
    /// attached before).
    #[must_use = "the slot is detached when the guard is dropped"]
    #[derive(Debug)]
    pub struct AttachGuard {
        previous: Option<(Arc<ActivityTable>, usize)>,
    }

    pub(super) fn attach(table: Arc<ActivityTable>, index: usize) -> AttachGuard {
        let previous = CURRENT.with(|c| c.borrow_mut().replace((table, index)));
        AttachGuard { previous }
    }

    impl Drop for AttachGuard {
        fn drop(&mut self) {
            let previous = self.previous.take();
            CURRENT.with(|c| *c.borrow_mut() = previous);
        }
    }

    /// Restores the reported wait when dropped.
    #[must_use = "the wait event is cleared when the guard is dropped"]
    #[derive(Debug)]
    pub struct ReportGuard {
        target: Option<(Arc<ActivityTable>, usize, u32)>,
    }

    pub(super) fn report(event: WaitEvent) -> ReportGuard {
        let target = CURRENT.with(|c| {
            c.borrow().as_ref().map(|(table, index)| {
                let previous = table.slots[*index].wait.swap(event.encode(), Ordering::Relaxed);
                (Arc::clone(table), *index, previous)
            })
        });
        ReportGuard { target }
    }

    impl Drop for ReportGuard {
        fn drop(&mut self) {
            if let Some((table, index, previous)) = self.target.take() {
                table.slots[index].wait.store(previous, Ordering::Relaxed);
            }
        }
    }
}

/// Under loom all model threads share one OS thread, so a std thread-local
/// would mix them up; wait reporting is not part of any modelled handshake
/// and is a no-op there.
#[cfg(loom)]
mod current {
    use super::{ActivityTable, WaitEvent};
    use std::sync::Arc;

    /// No-op under loom.
    #[derive(Debug)]
    pub struct AttachGuard;
    /// No-op under loom.
    #[derive(Debug)]
    pub struct ReportGuard;

    pub(super) fn attach(_table: Arc<ActivityTable>, _index: usize) -> AttachGuard {
        AttachGuard
    }

    pub(super) fn report(_event: WaitEvent) -> ReportGuard {
        ReportGuard
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::wait_event::{LockWaitKind, Tranche};

    #[test]
    fn registering_past_capacity_is_an_error_and_dropping_frees_the_slot() {
        let table = ActivityTable::new(2);
        let a = table.register().unwrap();
        let _b = table.register().unwrap();
        assert_eq!(table.register().unwrap_err(), ActivityFull { max: 2 });
        drop(a);
        let c = table.register().unwrap();
        assert_eq!(c.backend(), 0);
    }

    #[test]
    fn waits_nest_and_restore() {
        let table = ActivityTable::new(1);
        let me = table.register().unwrap();
        {
            let _outer = me.wait(WaitEvent::Lock(LockWaitKind::Extend));
            {
                let _attached = me.attach();
                let _inner = report_wait(WaitEvent::LwLock(Tranche::BufferMapping));
                let row = &table.snapshot()[0];
                assert_eq!(row.wait_event_type, Some("LWLock"));
                assert_eq!(row.wait_event, Some("BufferMapping"));
            }
            assert_eq!(table.snapshot()[0].wait_event, Some("extend"));
        }
        assert_eq!(table.snapshot()[0].wait_event_type, None);
    }

    #[test]
    fn long_query_text_is_truncated_on_a_char_boundary() {
        let table = ActivityTable::new(1);
        let me = table.register().unwrap();
        let text = "é".repeat(QUERY_TEXT_MAX); // two bytes each
        me.set_query(&text);
        let got = &table.snapshot()[0].query;
        assert_eq!(got.len(), QUERY_TEXT_MAX);
        assert!(got.chars().all(|c| c == 'é'));
    }

    #[test]
    fn a_sampler_never_sees_a_torn_query_text() {
        let table = ActivityTable::new(1);
        let me = table.register().unwrap();
        let texts = ["SELECT aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "INSERT bbbbbbb", ""];
        let stop = std::sync::Arc::new(crate::sync::counter::AtomicBool::new(false));
        let sampler = {
            let table = Arc::clone(&table);
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut reads = 0u64;
                while !stop.load(crate::sync::counter::Ordering::Relaxed) {
                    let q = table.snapshot()[0].query.clone();
                    assert!(q == "<changing>" || texts.contains(&q.as_str()), "torn read: {q:?}");
                    reads += 1;
                }
                reads
            })
        };
        for i in 0..200_000 {
            me.set_query(texts[i % texts.len()]);
        }
        stop.store(true, crate::sync::counter::Ordering::Relaxed);
        assert!(sampler.join().unwrap() > 0);
    }
}
