//! Interrupts of a session, PostgreSQL's `ProcessInterrupts`: what ends a
//! running statement, or the whole session, from another thread.
//!
//! | request | from | the statement | the session |
//! |---|---|---|---|
//! | cancel | `CancelRequest`, `pg_cancel_backend` | `57014` "…due to user request" | goes on |
//! | statement timeout | [`Timer`] (`statement_timeout`) | `57014` "…due to statement timeout" | goes on |
//! | terminate | `pg_terminate_backend`, server shutdown | ends | FATAL `57P01` |
//!
//! A cancel is one flag, consumed by the loop that sees it (`pg_sleep`,
//! COPY, `generate_series`, the engine's scans through the lock manager's
//! own cancel bit, and lock waits, which wake at once). Its *reason* is a
//! second word read when the error is reported, so a timeout and a user's
//! cancel share every check site. A terminate is sticky: once asked, the
//! session ends at its next look, and its open transaction rolls back as
//! the session is dropped. A session blocked reading its socket cannot
//! look, so the server registers a *waker* that shuts the socket's read
//! side down; the backend then reads end-of-file, sees the request and
//! says `57P01` before it closes.
//!
//! # Statement timeouts
//!
//! One [`Timer`] thread per [`crate::SqlEngine`] (started at the first
//! armed timeout) keeps the deadlines of running statements in a heap and
//! cancels a statement whose deadline passes, with reason
//! [`Reason::StatementTimeout`]. [`Timer::arm`] returns a guard whose drop
//! disarms; the timer fires under the same mutex, so a statement whose guard
//! was dropped is never canceled by it afterwards. A timeout that fires
//! just as its statement ends leaves a stale flag, which the next
//! statement clears when it starts (as a stale `CancelRequest` is).

use crate::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::collections::{BinaryHeap, HashMap};
use std::fmt;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// Why the pending (or last) cancel was asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// A client's `CancelRequest` or `pg_cancel_backend`.
    User = 0,
    /// `statement_timeout` passed.
    StatementTimeout = 1,
}

type Waker = Box<dyn Fn() + Send + Sync>;

/// One session's interrupt state, shared with every [`CancelHandle`].
pub(crate) struct Interrupts {
    /// A cancel is pending: consumed by the check that sees it.
    pub(crate) cancel: Arc<AtomicBool>,
    reason: AtomicU8,
    terminate: AtomicBool,
    lock: turnstile_lock::CancelHandle,
    waker: Mutex<Option<Waker>>,
}

/// Cancels or terminates one session from any thread.
#[derive(Clone)]
pub struct CancelHandle {
    pub(crate) inner: Arc<Interrupts>,
}

impl fmt::Debug for CancelHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CancelHandle")
            .field("cancel", &self.inner.cancel.load(Ordering::Relaxed))
            .field("terminate", &self.inner.terminate.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl CancelHandle {
    pub(crate) fn new(lock: turnstile_lock::CancelHandle) -> CancelHandle {
        CancelHandle {
            inner: Arc::new(Interrupts {
                cancel: Arc::new(AtomicBool::new(false)),
                reason: AtomicU8::new(Reason::User as u8),
                terminate: AtomicBool::new(false),
                lock,
                waker: Mutex::new(None),
            }),
        }
    }

    /// Requests cancellation of the running statement: a heavyweight-lock
    /// wait ends at once, loops (`pg_sleep`, COPY, `generate_series`) at
    /// their next check. The statement fails with `57014`.
    pub fn cancel(&self) {
        self.cancel_for(Reason::User);
    }

    pub(crate) fn cancel_for(&self, reason: Reason) {
        // The reason first: whoever sees the flag reads it after.
        self.inner.reason.store(reason as u8, Ordering::Release);
        self.inner.cancel.store(true, Ordering::Release);
        self.inner.lock.cancel();
    }

    /// Requests the session's end (`pg_terminate_backend`, shutdown): the
    /// running statement is canceled, an idle session is woken through its
    /// waker, and the session ends with FATAL `57P01`, rolling back its
    /// open transaction.
    pub fn terminate(&self) {
        self.inner.terminate.store(true, Ordering::Release);
        self.cancel_for(Reason::User);
        if let Some(w) = lock(&self.inner.waker).as_ref() {
            w();
        }
    }

    /// Whether [`terminate`](Self::terminate) was asked.
    pub fn terminate_requested(&self) -> bool {
        self.inner.terminate.load(Ordering::Acquire)
    }

    /// Registers what wakes the session when it is blocked outside a
    /// statement (the server shuts its socket's read side down). Called
    /// at once if a terminate is already pending.
    pub fn set_waker(&self, waker: impl Fn() + Send + Sync + 'static) {
        let mut slot = lock(&self.inner.waker);
        if self.terminate_requested() {
            waker();
        }
        *slot = Some(Box::new(waker));
    }

    /// Drops a stale cancel (the start of a statement); a terminate stays.
    pub(crate) fn clear(&self) {
        self.inner.cancel.store(false, Ordering::Release);
        self.inner.reason.store(Reason::User as u8, Ordering::Release);
    }

    /// The reason of the last cancel.
    pub(crate) fn reason(&self) -> Reason {
        if self.inner.reason.load(Ordering::Acquire) == Reason::StatementTimeout as u8 {
            Reason::StatementTimeout
        } else {
            Reason::User
        }
    }
}

struct Entry {
    handle: CancelHandle,
}

#[derive(Default)]
struct TimerState {
    /// Deadlines, earliest first (`Reverse` ordering through `Due`).
    heap: BinaryHeap<Due>,
    /// Armed timeouts by id; a heap entry whose id is gone was disarmed.
    armed: HashMap<u64, Entry>,
    next_id: u64,
}

#[derive(PartialEq, Eq)]
struct Due(Instant, u64);

impl Ord for Due {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.0.cmp(&self.0).then(other.1.cmp(&self.1))
    }
}

impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

struct TimerShared {
    state: Mutex<TimerState>,
    wake: Condvar,
}

/// The statement-timeout thread of one engine (PostgreSQL's `timeout.c`,
/// with one thread instead of one `SIGALRM` per backend).
#[derive(Default)]
pub(crate) struct Timer {
    shared: OnceLock<Arc<TimerShared>>,
}

impl fmt::Debug for Timer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Timer").field("started", &self.shared.get().is_some()).finish()
    }
}

/// An armed statement timeout; dropping it disarms it.
pub(crate) struct Armed {
    shared: Arc<TimerShared>,
    id: u64,
}

impl Drop for Armed {
    fn drop(&mut self) {
        lock(&self.shared.state).armed.remove(&self.id);
    }
}

impl Timer {
    /// Cancels `handle`'s statement with [`Reason::StatementTimeout`] after
    /// `after`, unless the returned guard is dropped first.
    pub(crate) fn arm(&self, handle: &CancelHandle, after: Duration) -> Armed {
        let shared = self.started();
        let mut st = lock(&shared.state);
        st.next_id += 1;
        let id = st.next_id;
        st.armed.insert(id, Entry { handle: handle.clone() });
        let due = Instant::now() + after;
        let earliest = st.heap.peek().is_none_or(|d| due < d.0);
        st.heap.push(Due(due, id));
        drop(st);
        if earliest {
            shared.wake.notify_one();
        }
        Armed { shared, id }
    }

    fn started(&self) -> Arc<TimerShared> {
        let s = self.shared.get_or_init(|| {
            let fresh = Arc::new(TimerShared { state: Mutex::new(TimerState::default()), wake: Condvar::new() });
            // The thread holds a weak reference: it ends soon after the engine.
            let weak = Arc::downgrade(&fresh);
            if let Err(e) = std::thread::Builder::new().name("statement timeouts".into()).spawn(move || run(&weak)) {
                eprintln!("turnstile: could not start the statement-timeout thread: {e}");
            }
            fresh
        });
        Arc::clone(s)
    }
}

/// The timer thread: sleeps until the earliest deadline, fires what is due.
fn run(weak: &std::sync::Weak<TimerShared>) {
    // Wakes at least this often to notice that the engine is gone.
    const IDLE: Duration = Duration::from_secs(1);
    loop {
        let Some(shared) = weak.upgrade() else { return };
        let mut st = lock(&shared.state);
        let now = Instant::now();
        while let Some(Due(at, id)) = st.heap.peek() {
            if *at > now {
                break;
            }
            let id = *id;
            st.heap.pop();
            if let Some(e) = st.armed.remove(&id) {
                e.handle.cancel_for(Reason::StatementTimeout);
            }
        }
        let wait = st.heap.peek().map_or(IDLE, |d| d.0.saturating_duration_since(now).min(IDLE));
        let (guard, _) = shared.wake.wait_timeout(st, wait).unwrap_or_else(std::sync::PoisonError::into_inner);
        drop(guard);
    }
}
