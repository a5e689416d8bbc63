use super::*;

/// A log of 16-id segments starting at `base`, with `n` ids claimed.
fn log_with(base: Xid, n: u64) -> XactLog {
    let log = XactLog::with_segment_bits(base, 4);
    for x in base..base + n {
        log.claim(x);
    }
    log
}

#[test]
fn ids_before_the_base_are_settled_and_new_ones_start_in_progress() {
    let log = log_with(100, 40);
    assert_eq!(log.lookup(7), Word::Settled);
    assert_eq!(log.status(7), COMMITTED);
    assert_eq!(log.status(100), IN_PROGRESS);
    log.set(100, ABORTED).unwrap();
    log.set(117, FIRST_CSN + 9).unwrap();
    assert_eq!(log.set(7, COMMITTED), Err(NoStatusWord { xid: 7 }), "an earlier run's id");
    assert!(log.set(100 + (1 << 28), COMMITTED).is_err(), "an id never claimed");
    assert!(log.aborted(100) && !log.committed(100));
    assert_eq!(log.settled(117), Word::Exact(FIRST_CSN + 9));
    assert!(log.committed(117));
    assert_eq!(log.status(116), IN_PROGRESS, "a neighbour in another segment is untouched");
}

#[test]
fn ids_past_2_to_the_32_have_words_of_their_own() {
    let base = (1 << 32) - 20;
    let log = log_with(base, 40);
    for (i, x) in (base..base + 40).enumerate() {
        log.set(x, FIRST_CSN + i as u64).unwrap();
    }
    for (i, x) in (base..base + 40).enumerate() {
        assert_eq!(log.lookup(x), Word::Exact(FIRST_CSN + i as u64), "{x}");
    }
    assert_eq!(log.lookup(1 << 32), Word::Exact(FIRST_CSN + 20), "2^32 is an id like any other");
    assert_eq!(log.lookup((1 << 32) + 3 - (1 << 32)), Word::Settled, "3 is not 2^32 + 3");
}

#[test]
fn ended_segments_shrink_to_ranges_then_to_the_base() {
    let log = log_with(16, 16 * 50);
    for x in 16..16 * 51 {
        log.set(x, if x % 7 == 0 { ABORTED } else { FIRST_CSN + x }).unwrap();
    }
    let full = log.size();
    assert_eq!(full.word_segments, 50);
    // The newest segment stays words while ids can still be assigned in it.
    assert_eq!(log.summarise(16 * 50, |_, _| true), 49, "segments 1..=49 end at or below 16 * 50");
    let summarised = log.size();
    assert_eq!((summarised.word_segments, summarised.ranges), (1, 1), "adjacent ranges merge");
    // 50 segments claimed at once: 34 went to the overflow, freed now.
    assert_eq!(full.word_buffers, 50);
    assert_eq!(summarised.word_buffers, RING as u64 + 1, "the ring's buffers stay for reuse: {summarised:?}");
    assert!(summarised.bytes < full.bytes / 2);
    assert_eq!(log.lookup(20), Word::Range { lo: FIRST_CSN + 16, hi: FIRST_CSN + 799 });
    assert!(log.committed(20) && !log.aborted(21), "aborted and undone ids are forgotten");
    assert_eq!(log.advance_base(|_, hi| hi < FIRST_CSN + 799), 16, "a range moves the base whole or not at all");
    assert_eq!(log.advance_base(|_, hi| hi <= FIRST_CSN + 799), 800);
    assert_eq!(log.size().ranges, 0);
    assert_eq!(log.lookup(799), Word::Settled);
    assert_eq!(log.lookup(800), Word::Exact(FIRST_CSN + 800), "still words");
}

#[test]
fn a_segment_a_published_snapshot_sees_only_in_part_keeps_its_words() {
    let log = log_with(16, 48);
    // Segment 1 commits numbers 10..=25, segment 2 26..=41, segment 3 42..=57.
    for x in 16..64 {
        log.set(x, x - 6).unwrap();
    }
    let snapshot = 30; // sees all of segment 1, part of 2, none of 3
    let unambiguous = |lo: u64, hi: u64| hi <= snapshot || lo > snapshot;
    assert_eq!(log.summarise(64, unambiguous), 2);
    assert!(matches!(log.lookup(20), Word::Range { .. }));
    assert_eq!(log.lookup(36), Word::Exact(30), "segment 2 keeps its words");
    assert_eq!(log.lookup(50), Word::Range { lo: 42, hi: 57 });
    assert_eq!(log.size().ranges, 2, "ranges 1 and 3 are not adjacent");
}

#[test]
fn a_failed_rollback_stays_aborted_through_summaries_and_the_base() {
    let log = log_with(16, 32);
    for x in 16..48 {
        log.set(x, if x == 20 { ABORTED } else { FIRST_CSN + x }).unwrap();
    }
    log.mark_failed(20);
    log.summarise(48, |_, _| true);
    assert!(log.aborted(20) && !log.committed(20));
    log.advance_base(|_, _| true);
    assert_eq!(log.base(), 48);
    assert!(log.aborted(20), "below the base too");
    assert_eq!(log.lookup(21), Word::Settled);
    assert_eq!(log.failed_ids(), vec![20]);
}

#[test]
fn a_transaction_that_never_ends_moves_later_segments_to_the_overflow() {
    let segments = RING as u64 + 5;
    let log = log_with(16, 16 * segments);
    let never = 17;
    for x in 16..16 * (segments + 1) {
        if x != never {
            log.set(x, COMMITTED).unwrap();
        }
    }
    log.summarise(16 * (segments + 1), |_, _| true);
    // The segment of `never` keeps its ring slot; the slot's later
    // segments and every other one are ranges.
    let later = 16 * (1 + RING as u64) + 3;
    log.claim(16 * (segments + 1));
    assert_eq!(log.size().word_segments, 2);
    // A new segment whose slot is taken by `never`'s lives in the overflow.
    let wrap = 16 * (1 + 2 * RING as u64);
    for x in 16 * (segments + 1)..wrap + 16 {
        log.claim(x);
        log.set(x, COMMITTED).unwrap();
    }
    assert_eq!(log.lookup(wrap + 1), Word::Exact(COMMITTED), "the overflow answers");
    assert_eq!(log.lookup(never), Word::Exact(IN_PROGRESS));
    assert!(matches!(log.lookup(later), Word::Range { .. }));
    log.set(never, COMMITTED).unwrap();
    log.summarise(wrap + 16, |_, _| true);
    log.advance_base(|_, _| true);
    assert_eq!(log.base(), wrap + 16, "once it ends, everything settles");
    assert_eq!(log.size().word_segments, 0);
}
