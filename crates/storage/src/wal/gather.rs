//! Group-commit gathering for the `scalable` WAL writer: when to hold a
//! flush back a little so that one `fdatasync` covers more commits.
//!
//! PostgreSQL's answer is `commit_delay`: a flusher sleeps a fixed time
//! when `commit_siblings` other transactions write, off by default because
//! a fixed sleep is wrong for every disk but one. The `scalable` writer
//! adapts instead (Aether's consolidation, MySQL's
//! `binlog_group_commit_sync_delay` made self-tuning):
//!
//! * it waits only while another transaction writes (`active writers ≥ 2`:
//!   someone may commit soon);
//! * for at most `wal.group_wait_us` (1 ms), and only with `wal.fsync` on
//!   (a log that never syncs has nothing to gather for).
//!   The bound is not one sync's time: with many clients on few cores the
//!   commits arrive further apart than a fast disk syncs (200 µs here
//!   against one commit every ~900 µs at 8 pgbench clients on 2 cores), so
//!   a wait of one sync would rarely catch anyone;
//! * it stops waiting as soon as a second commit asks for a flush and its
//!   record is copied;
//! * it keeps a score of recent waits: one that caught a second commit
//!   raises it, one that timed out lowers it twice as fast. At zero it
//!   stops waiting (one client alone never waits) and probes again every
//!   [`PROBE_EVERY`]th flush, so rising concurrency turns it back on.
//!
//! A committer's wait is then at most one sync longer; the writer sleeps
//! while it waits (the committers ring its bell), so the cores stay with
//! the transactions.
//!
//! ```
//! use turnstile_storage::wal::gather::Gather;
//! use std::time::Duration;
//! let mut g = Gather::new(Duration::from_micros(1000));
//! assert_eq!(g.wait_for(1), None); // nobody else writes
//! assert_eq!(g.wait_for(4), Some(Duration::from_micros(1000)));
//! ```

use std::time::Duration;

/// The highest score (waits that caught a second commit, net).
const SCORE_MAX: u32 = 8;
/// While the score is zero, every this-many flushes wait once anyway.
pub const PROBE_EVERY: u32 = 16;

/// The writer's gathering state (owned by the writer thread).
#[derive(Debug, Clone)]
pub struct Gather {
    max: Duration,
    score: u32,
    since_probe: u32,
}

impl Gather {
    /// A policy that waits at most `max` (zero: never, as with `fsync` off).
    pub fn new(max: Duration) -> Gather {
        Gather { max, score: SCORE_MAX, since_probe: 0 }
    }

    /// How long to wait for more commits before a flush, with
    /// `active_writers` transactions writing (the flusher's own included);
    /// `None`: flush now.
    pub fn wait_for(&mut self, active_writers: u64) -> Option<Duration> {
        if self.max.is_zero() || active_writers < 2 {
            return None;
        }
        if self.score == 0 {
            self.since_probe += 1;
            if self.since_probe < PROBE_EVERY {
                return None;
            }
            self.since_probe = 0;
        }
        Some(self.max)
    }

    /// A wait ended: `caught` if another commit arrived within it.
    pub fn record_wait(&mut self, caught: bool) {
        self.score = if caught { (self.score + 1).min(SCORE_MAX) } else { self.score.saturating_sub(2) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warm(max_us: u64) -> Gather {
        Gather::new(Duration::from_micros(max_us))
    }

    #[test]
    fn off_when_zero_or_alone() {
        assert_eq!(warm(0).wait_for(8), None);
        assert_eq!(warm(1000).wait_for(1), None);
    }

    #[test]
    fn waits_the_knob() {
        assert_eq!(warm(1000).wait_for(3), Some(Duration::from_micros(1000)));
    }

    #[test]
    fn timeouts_turn_it_off_and_probes_turn_it_back_on() {
        let mut g = warm(1000);
        for _ in 0..SCORE_MAX / 2 {
            assert!(g.wait_for(2).is_some());
            g.record_wait(false);
        }
        let waits = (0..PROBE_EVERY * 2).filter(|_| g.wait_for(2).is_some()).count();
        assert_eq!(waits, 2, "one probe per {PROBE_EVERY} flushes");
        g.record_wait(true);
        assert!(g.wait_for(2).is_some(), "a caught commit turns it back on");
    }
}
