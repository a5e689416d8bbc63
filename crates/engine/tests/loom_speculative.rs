//! loom model of the speculative-insertion handshake (`speculative.rs`):
//! an upsert's insert takes its token, places its row, registers it,
//! places an index entry, then confirms or kills the row and ends its
//! transaction; a second session's unique check meets the entry and, as
//! `unique_wait.rs` does, waits on what [`Speculations::wait_target`]
//! names (the token, or the transaction), then looks again.
//!
//! Checked in every interleaving, for each ending (confirm and commit,
//! kill and commit, confirm and abort):
//!
//! 1. **No decision on a key that is later killed**: the checker answers
//!    "conflict" only when the row was confirmed and its transaction
//!    committed, and "free" after meeting the entry only when the row was
//!    killed or its transaction aborted.
//! 2. **No lost wake-up**: every wait ends (loom fails a model in which
//!    all threads block), and the checker decides within a bounded number
//!    of looks.
//! 3. The registry is empty afterwards.
//!
//! The model found one race, fixed in `unique_wait.rs`: a check that read
//! the row live, then (after the kill and the commit) its writer's status
//! committed, answered "conflict" on a killed row; the check now reads
//! the row again once it has found a committed writer.
//!
//! The registry and the [`Speculation`] handle are the engine's code; the
//! lock table is a mutex and condvar from the `turnstile_sync::sync`
//! facade standing for the lock manager (exclusive and share modes).
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test --release
//! -p turnstile-engine --test loom_speculative --target-dir target/loom`
#![cfg(loom)]

use std::collections::HashMap;
use turnstile_engine::speculative::{Speculation, SpeculationLocks, Speculations, Token, WaitOn};
use turnstile_sync::sync::atomic::{AtomicU8, Ordering};
use turnstile_sync::sync::{thread, Arc, Condvar, Mutex};

const XID: u64 = 7;
const TOKEN: Token = 1;
/// The row's heap position (the registry's key).
const ROW: u32 = 42;

/// The row: not placed, placed (its `xmin` is `XID`), dead.
const ABSENT: u8 = 0;
const PLACED: u8 = 1;
const DEAD: u8 = 2;
/// `XID`'s status.
const RUNNING: u8 = 0;
const COMMITTED: u8 = 1;
const ABORTED: u8 = 2;
/// Looks the checker may take: one per wait (token, transaction) and one
/// to decide.
const LOOKS_MAX: usize = 3;

/// A lock table: per tag, whether it is held exclusive and its share count.
#[derive(Default)]
struct Table {
    held: Mutex<HashMap<WaitOn, (bool, u32)>>,
    changed: Condvar,
}

#[derive(Clone)]
struct Locks(Arc<Table>);

impl Locks {
    fn lock(&self, tag: WaitOn, exclusive: bool) {
        let mut held = self.0.held.lock().unwrap();
        loop {
            let (x, shares) = held.get(&tag).copied().unwrap_or((false, 0));
            if !x && (!exclusive || shares == 0) {
                let e = held.entry(tag).or_insert((false, 0));
                if exclusive {
                    e.0 = true;
                } else {
                    e.1 += 1;
                }
                return;
            }
            held = self.0.changed.wait(held).unwrap();
        }
    }

    fn unlock(&self, tag: WaitOn, exclusive: bool) {
        let mut held = self.0.held.lock().unwrap();
        let e = held.get_mut(&tag).expect("unlock of a lock not held");
        if exclusive {
            assert!(e.0);
            e.0 = false;
        } else {
            e.1 -= 1;
        }
        if *e == (false, 0) {
            held.remove(&tag);
        }
        self.0.changed.notify_all();
    }
}

impl SpeculationLocks for Locks {
    type Error = ();

    fn lock_token(&mut self, xid: u64, token: Token) -> Result<(), ()> {
        self.lock(WaitOn::Token(xid, token), true);
        Ok(())
    }

    fn unlock_token(&mut self, xid: u64, token: Token) -> Result<(), ()> {
        self.unlock(WaitOn::Token(xid, token), true);
        Ok(())
    }

    fn wait(&mut self, on: WaitOn) -> Result<(), ()> {
        self.lock(on, false);
        self.unlock(on, false);
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Ending {
    ConfirmCommit,
    KillCommit,
    ConfirmAbort,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Decision {
    /// The entry was not there yet: the checker's own entry goes first
    /// (the B-tree page orders the two; not modelled).
    Before,
    /// The key is free (the row was taken back or its writer aborted).
    Free,
    /// The key is taken by a committed row.
    Conflict,
}

struct World {
    registry: Speculations<u32>,
    row: AtomicU8,
    entry: AtomicU8,
    status: AtomicU8,
}

fn inserter(w: &World, mut locks: Locks, ending: Ending) {
    // The transaction's own id lock, held until it ends.
    locks.lock(WaitOn::Transaction(XID), true);
    let mut s = Speculation::begin(&w.registry, &mut locks, XID, TOKEN).unwrap();
    w.row.store(PLACED, Ordering::Release);
    s.placed(ROW);
    w.entry.store(1, Ordering::Release);
    match ending {
        Ending::ConfirmCommit | Ending::ConfirmAbort => s.confirm(&mut locks).unwrap(),
        Ending::KillCommit => {
            let killed = s.kill(&mut locks, |_| w.row.store(DEAD, Ordering::Release)).unwrap();
            assert!(killed.is_some());
        }
    }
    let end = if ending == Ending::ConfirmAbort { ABORTED } else { COMMITTED };
    w.status.store(end, Ordering::Release);
    locks.unlock(WaitOn::Transaction(XID), true);
}

fn checker(w: &World, mut locks: Locks) -> Decision {
    for _ in 0..LOOKS_MAX {
        if w.entry.load(Ordering::Acquire) == 0 {
            return Decision::Before;
        }
        if w.row.load(Ordering::Acquire) == DEAD {
            return Decision::Free;
        }
        match w.status.load(Ordering::Acquire) {
            ABORTED => return Decision::Free,
            // As `UniqueCheck::conflicts`: a conflict found on a row read
            // before its writer's status is confirmed by reading the row
            // again, since the kill may have come in between (the model
            // found that race: the row read live, then killed, then the
            // transaction committed).
            COMMITTED if w.row.load(Ordering::Acquire) == DEAD => return Decision::Free,
            COMMITTED => return Decision::Conflict,
            _ => {}
        }
        let on = w.registry.wait_target(&ROW, XID);
        locks.wait(on).unwrap();
    }
    panic!("the checker did not decide in {LOOKS_MAX} looks");
}

fn model(ending: Ending) {
    loom::model(move || {
        let w = Arc::new(World {
            registry: Speculations::new(),
            row: AtomicU8::new(ABSENT),
            entry: AtomicU8::new(0),
            status: AtomicU8::new(RUNNING),
        });
        let locks = Locks(Arc::new(Table::default()));
        let t = {
            let (w, locks) = (w.clone(), locks.clone());
            thread::spawn(move || inserter(&w, locks, ending))
        };
        let d = checker(&w, locks);
        t.join().unwrap();
        match d {
            Decision::Before => {}
            Decision::Conflict => assert_eq!(ending, Ending::ConfirmCommit, "decided on a row not confirmed"),
            Decision::Free => assert_ne!(ending, Ending::ConfirmCommit, "missed a committed row"),
        }
        assert!(w.registry.is_empty(), "a speculation left registered");
    });
}

#[test]
fn a_confirmed_committed_row_conflicts() {
    model(Ending::ConfirmCommit);
}

#[test]
fn a_killed_row_is_never_a_conflict() {
    model(Ending::KillCommit);
}

#[test]
fn an_aborted_row_is_free() {
    model(Ending::ConfirmAbort);
}
