//! loom models of the transaction status log's lock-free read
//! (`mvcc/clog.rs`): a lookup loads the base, a ring slot's tag, the word
//! and the tag again, while the compactor summarises the segment into a
//! range, reuses the slot for a later segment and moves the base.
//!
//! 1. **An ended id never reads as running**: ids 0 and 1 (one 2-id
//!    segment) have committed; a reader looks them up while the compactor
//!    summarises the segment, claims the slot for segment 16 (which zeroes
//!    the words) and settles the base. Every answer is "committed": the
//!    word, the range or the base — never the zeroed word of the reused
//!    slot (`IN_PROGRESS`).
//! 2. **A write lands in the segment that holds its id**: a committer sets
//!    id 2's word while the compactor summarises the ended segment 0 and
//!    claims segment 16; the word of id 2 is read back intact.
//!
//! The ring's word buffers are std `OnceLock`s allocated by `claim`
//! (outside loom's view, as in `loom_snapshot.rs`); every atomic, mutex and
//! read-write lock comes from the `turnstile_sync::sync` facade.
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test --release
//! -p turnstile-engine --test loom_clog --target-dir target/loom`
#![cfg(loom)]

use turnstile_engine::mvcc::clog::{Word, XactLog, FIRST_CSN};
use turnstile_sync::sync::{thread, Arc};

/// Segments of 2^1 ids; the ring has 16 slots, so segment 16 reuses
/// segment 0's.
const BITS: u32 = 1;

fn committed(w: Word) -> bool {
    match w {
        Word::Exact(s) => s >= FIRST_CSN,
        Word::Range { .. } | Word::Settled => true,
    }
}

#[test]
fn an_ended_id_never_reads_as_running() {
    loom::model(|| {
        let log = Arc::new(XactLog::with_segment_bits(0, BITS));
        log.claim(0);
        log.set(0, FIRST_CSN).unwrap();
        log.set(1, FIRST_CSN + 1).unwrap();
        let compactor = {
            let log = log.clone();
            thread::spawn(move || {
                assert_eq!(log.summarise(2, |_, _| true), 1);
                log.claim(32);
                log.advance_base(|_, _| true);
            })
        };
        for x in [0, 1] {
            let w = log.lookup(x);
            assert!(committed(w), "id {x} read as {w:?}");
        }
        compactor.join().unwrap();
        assert_eq!(log.lookup(0), Word::Settled);
        assert_eq!(log.lookup(32), Word::Exact(0), "the reused slot's words start in progress");
    });
}

#[test]
fn a_write_lands_in_the_segment_that_holds_its_id() {
    loom::model(|| {
        let log = Arc::new(XactLog::with_segment_bits(0, BITS));
        log.claim(0);
        log.claim(2);
        log.set(0, FIRST_CSN).unwrap();
        log.set(1, FIRST_CSN + 1).unwrap();
        let compactor = {
            let log = log.clone();
            thread::spawn(move || {
                log.summarise(4, |_, _| true);
                log.claim(32);
            })
        };
        log.set(2, FIRST_CSN + 2).unwrap();
        compactor.join().unwrap();
        assert_eq!(log.lookup(2), Word::Exact(FIRST_CSN + 2));
        assert!(committed(log.lookup(1)));
    });
}
