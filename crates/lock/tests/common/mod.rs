//! A small isolation tester: each session is a thread with its own
//! backend, driven step by step like PostgreSQL's `isolationtester`. A
//! step either completes or is seen waiting (queued on a lock); a waiting
//! step's result is collected later.

#![allow(dead_code)]

use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};
use turnstile_lock::{Backend, LockError, LockManager, LockMode, LockTag, Wait};
use turnstile_sync::Config;

/// How long a test waits for anything before declaring it hung.
pub const PATIENCE: Duration = Duration::from_secs(20);

type Command = Box<dyn FnOnce(&mut Backend) -> Result<(), LockError> + Send>;

/// What a step did.
#[derive(Debug)]
pub enum Step {
    /// Finished, with this result.
    Completed(Result<(), LockError>),
    /// Queued on a lock: `<waiting ...>`.
    Waiting,
}

impl Step {
    /// Panics unless the step completed successfully.
    #[track_caller]
    pub fn ok(self) {
        match self {
            Step::Completed(Ok(())) => {}
            other => panic!("expected the step to complete, got {other:?}"),
        }
    }

    /// Panics unless the step is waiting.
    #[track_caller]
    pub fn waiting(self) {
        assert!(matches!(self, Step::Waiting), "expected <waiting ...>, got {self:?}");
    }

    /// The error of a completed step; panics otherwise.
    #[track_caller]
    pub fn err(self) -> LockError {
        match self {
            Step::Completed(Err(e)) => e,
            other => panic!("expected an error, got {other:?}"),
        }
    }
}

/// One session: a thread owning a backend.
pub struct Session {
    pub id: usize,
    pub name: &'static str,
    manager: Arc<LockManager>,
    commands: Option<Sender<Command>>,
    results: Receiver<Result<(), LockError>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Session {
    /// Registers a backend in a new thread. An error aborts the session's
    /// transaction (`release_all`), as an error does in PostgreSQL.
    pub fn new(manager: &Arc<LockManager>, name: &'static str) -> Session {
        let (tx, rx) = channel::<Command>();
        let (rtx, rrx) = channel();
        let (idtx, idrx) = channel();
        let m = Arc::clone(manager);
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let mut backend = m.register().expect("register a session backend");
                idtx.send(backend.id()).unwrap();
                for command in rx {
                    let result = command(&mut backend);
                    if result.is_err() {
                        backend.release_all();
                    }
                    if rtx.send(result).is_err() {
                        break;
                    }
                }
            })
            .unwrap();
        let id = idrx.recv_timeout(PATIENCE).expect("session registered");
        Session { id, name, manager: Arc::clone(manager), commands: Some(tx), results: rrx, thread: Some(thread) }
    }

    /// Runs `f` on the session's backend; returns once it completed or is
    /// queued on a lock.
    pub fn step(&self, f: impl FnOnce(&mut Backend) -> Result<(), LockError> + Send + 'static) -> Step {
        self.commands.as_ref().unwrap().send(Box::new(f)).unwrap();
        let deadline = Instant::now() + PATIENCE;
        loop {
            match self.results.recv_timeout(Duration::from_micros(200)) {
                Ok(result) => return Step::Completed(result),
                Err(RecvTimeoutError::Timeout) => {
                    if self.manager.is_waiting(self.id) {
                        return Step::Waiting;
                    }
                    assert!(Instant::now() < deadline, "{}: step neither completed nor waited", self.name);
                }
                Err(RecvTimeoutError::Disconnected) => panic!("{}: session thread died", self.name),
            }
        }
    }

    /// `LOCK TABLE tag IN mode MODE`.
    pub fn lock(&self, tag: LockTag, mode: LockMode) -> Step {
        self.step(move |b| b.lock(tag, mode, Wait::Block).map(|_| ()))
    }

    /// `COMMIT`: releases everything.
    pub fn commit(&self) -> Step {
        self.step(|b| {
            b.release_all();
            Ok(())
        })
    }

    /// `SET deadlock_timeout`.
    pub fn set_deadlock_timeout(&self, timeout: Duration) {
        self.step(move |b| {
            b.set_deadlock_timeout(timeout);
            Ok(())
        })
        .ok();
    }

    /// `<... completed>`: the result of the step that was waiting.
    #[track_caller]
    pub fn completed(&self) -> Result<(), LockError> {
        self.results.recv_timeout(PATIENCE).unwrap_or_else(|_| panic!("{}: waiting step never completed", self.name))
    }

    /// Whether the session's last step is still waiting.
    pub fn is_waiting(&self) -> bool {
        self.manager.is_waiting(self.id)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        drop(self.commands.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A manager with the given profile tweaks: a long deadlock timeout by
/// default, so only sessions that ask for a short one run the check.
pub fn manager(tweak: impl FnOnce(&mut Config)) -> Arc<LockManager> {
    let mut config = Config::default();
    config.lock.deadlock_timeout_ms = 60_000;
    config.lock.max_backends = 16;
    tweak(&mut config);
    LockManager::new(&config).expect("valid test configuration")
}

/// Relation `n` of database 1.
pub fn rel(n: u32) -> LockTag {
    LockTag::relation(1, n)
}

/// Waits (bounded) until `cond` holds.
#[track_caller]
pub fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        std::thread::sleep(Duration::from_micros(200));
    }
}
