//! The lock torture tests' independent checker (the lock crate's
//! `tests/stress.rs` and the lab's `turnstile stress locks`): its own
//! record of who holds and who requests what, kept by the stress threads
//! around every call into the lock manager — never read from the lock
//! manager's bookkeeping, so a bug there cannot hide itself.
//!
//! ## The record
//!
//! Every event takes the next number of one sequence (`Record::seq`), under
//! one mutex:
//!
//! * a **hold** is opened *after* `Backend::lock` returned a grant and
//!   closed *before* `Backend::unlock`/`release_all` is called, so every
//!   recorded hold lies inside the real one: two recorded holds that
//!   overlap mean two real holds that overlapped;
//! * a **request** is opened just before `Backend::lock` and closed after
//!   its result was recorded.
//!
//! ## What it verifies
//!
//! 1. **Mutual exclusion**: opening a hold finds no open hold of another
//!    backend on the same tag in a conflicting mode.
//! 2. **Deadlock reports are real cycles**: every edge's waiter requested
//!    exactly that lock while the victim waited; its blocker held (hard
//!    edge) or requested (soft edge) a conflicting mode on that tag in that
//!    time; the edges chain back to the victim.
//! 3. **Progress** (the watchdog, [`Record::stalled`]): a waiter is
//!    *stalled* when no backend that could be holding it back is running —
//!    every conflicting holder and conflicting requester of its tag, and
//!    transitively theirs, is itself waiting (an undetected deadlock), or
//!    nothing holds it back at all (a lost wake-up). A waiter stalled for
//!    10 × `deadlock_timeout` in a row, or still waiting 10 ×
//!    `deadlock_timeout` past its own timeout, is a **hang**.
//!
//! Violations are counted and described, not panicked on, so a run reports
//! everything it found.

use crate::{DeadlockEdge, LockMode, LockTag};
use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Descriptions kept of violations (the count is exact; the text is for
/// the first few).
const VIOLATION_TEXTS_MAX: usize = 20;

/// Closed intervals are pruned every this many closings.
const PRUNE_EVERY: u64 = 4096;

/// An interval of the checker's sequence numbers; `end == None` while open.
#[derive(Clone, Copy, Debug)]
struct Interval {
    backend: usize,
    tag: LockTag,
    mode: LockMode,
    start: u64,
    end: Option<u64>,
}

impl Interval {
    fn overlaps(&self, from: u64, to: u64) -> bool {
        self.start <= to && self.end.is_none_or(|end| end >= from)
    }
}

/// An open request: the interval, and the wall-clock times the watchdog
/// judges it by.
#[derive(Clone, Copy, Debug)]
struct Pending {
    interval: Interval,
    /// Latest moment the lock manager may end the wait on its own (a lock
    /// timeout), if it has one.
    limit: Option<Instant>,
}

/// An open request the watchdog found stalled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stall {
    /// The waiting backend.
    pub backend: usize,
    /// The request's sequence number (identifies it across samples).
    pub request: u64,
    /// The open requests `(backend, sequence number)` of the waiter and of
    /// every waiting backend that holds it back, sorted: while this stays
    /// the same, nobody in the chain made progress (a request that ends —
    /// granted, refused, timed out or a deadlock victim — leaves it).
    pub chain: Vec<(usize, u64)>,
    /// Why it counts as stalled.
    pub why: String,
}

/// The checker's record.
#[derive(Debug, Default)]
pub struct Record {
    seq: u64,
    /// Open holds, per tag.
    held: HashMap<LockTag, Vec<Interval>>,
    /// Open requests, per backend.
    pending: HashMap<usize, Pending>,
    /// Closed holds and requests still needed to judge a deadlock report.
    closed_holds: Vec<Interval>,
    closed_requests: Vec<Interval>,
    closings: u64,
    violations: u64,
    texts: Vec<String>,
}

/// The independent checker, shared by every stress thread and the watchdog.
#[derive(Debug, Default)]
pub struct Checker {
    record: Mutex<Record>,
}

impl Checker {
    fn lock(&self) -> MutexGuard<'_, Record> {
        // A panicking stress thread is itself reported; its record stays usable.
        self.record.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Opens `backend`'s request for `mode` on `tag`; `limit` is when the
    /// lock manager must end the wait by itself at the latest.
    pub fn begin_request(&self, backend: usize, tag: LockTag, mode: LockMode, limit: Option<Instant>) {
        let mut r = self.lock();
        r.seq += 1;
        let start = r.seq;
        let interval = Interval { backend, tag, mode, start, end: None };
        if r.pending.insert(backend, Pending { interval, limit }).is_some() {
            r.violation(format!("backend {backend} has two requests open"));
        }
    }

    /// Closes `backend`'s open request.
    pub fn end_request(&self, backend: usize) {
        let mut r = self.lock();
        r.seq += 1;
        let end = r.seq;
        match r.pending.remove(&backend) {
            Some(mut p) => {
                p.interval.end = Some(end);
                r.closed_requests.push(p.interval);
            }
            None => r.violation(format!("backend {backend} ended a request it never began")),
        }
        r.prune();
    }

    /// Opens a hold after a grant; a conflicting open hold of another
    /// backend on the tag is a violation.
    pub fn granted(&self, backend: usize, tag: LockTag, mode: LockMode) {
        let mut r = self.lock();
        r.seq += 1;
        let start = r.seq;
        let conflict = r
            .held
            .get(&tag)
            .into_iter()
            .flatten()
            .find(|h| h.backend != backend && h.mode.conflicts_with(mode))
            .copied();
        if let Some(h) = conflict {
            r.violation(format!(
                "CONFLICT: backend {backend} granted {mode} on {tag} while backend {} holds {}",
                h.backend, h.mode
            ));
        }
        r.held.entry(tag).or_default().push(Interval { backend, tag, mode, start, end: None });
    }

    /// Closes a hold, before the lock manager is asked to release it.
    pub fn releasing(&self, backend: usize, tag: LockTag, mode: LockMode) {
        let mut r = self.lock();
        r.seq += 1;
        let end = r.seq;
        let Some(holders) = r.held.get_mut(&tag) else {
            r.violation(format!("backend {backend} releases {mode} on {tag}, which the record does not hold"));
            return;
        };
        let Some(i) = holders.iter().position(|h| h.backend == backend && h.mode == mode) else {
            r.violation(format!("backend {backend} releases {mode} on {tag}, which the record does not hold"));
            return;
        };
        let mut hold = holders.swap_remove(i);
        if holders.is_empty() {
            r.held.remove(&tag);
        }
        hold.end = Some(end);
        r.closed_holds.push(hold);
        r.prune();
    }

    /// Records a violation found outside the record (an unexpected error,
    /// a panicking thread, a broken invariant at the end).
    pub fn report(&self, text: String) {
        self.lock().violation(text);
    }

    /// Describes a hang the watchdog found (counted by the watchdog, not
    /// as a violation).
    pub fn report_hang(&self, text: String) {
        let mut r = self.lock();
        if r.texts.len() < VIOLATION_TEXTS_MAX {
            r.texts.push(text);
        }
    }

    /// Checks a deadlock report received by `victim` while its request is
    /// still open; returns whether it named a real cycle.
    pub fn check_cycle(&self, victim: usize, cycle: &[DeadlockEdge]) -> bool {
        let mut r = self.lock();
        let problem = r.cycle_problem(victim, cycle);
        match problem {
            None => true,
            Some(text) => {
                r.violation(format!("bogus deadlock report to backend {victim}: {text}: {cycle:?}"));
                false
            }
        }
    }

    /// Violations so far, and the first descriptions.
    pub fn violations(&self) -> (u64, Vec<String>) {
        let r = self.lock();
        (r.violations, r.texts.clone())
    }

    /// The watchdog's sample: the open requests that are stalled now (see
    /// the module documentation), and those waiting more than `grace` past
    /// their own limit.
    pub fn stalled(&self, now: Instant, grace: Duration) -> Vec<Stall> {
        self.lock().stalled(now, grace)
    }
}

impl Record {
    fn violation(&mut self, text: String) {
        self.violations += 1;
        if self.texts.len() < VIOLATION_TEXTS_MAX {
            self.texts.push(text);
        }
    }

    /// Forgets closed intervals that ended before every open request began
    /// (no deadlock report can refer to them any more).
    fn prune(&mut self) {
        self.closings += 1;
        if self.closings % PRUNE_EVERY != 0 {
            return;
        }
        let oldest = self.pending.values().map(|p| p.interval.start).min().unwrap_or(self.seq);
        self.closed_holds.retain(|h| h.end.is_none_or(|e| e >= oldest));
        self.closed_requests.retain(|h| h.end.is_none_or(|e| e >= oldest));
    }

    fn cycle_problem(&self, victim: usize, cycle: &[DeadlockEdge]) -> Option<String> {
        let Some(mine) = self.pending.get(&victim).map(|p| p.interval) else {
            return Some("the victim has no open request".into());
        };
        let (from, to) = (mine.start, self.seq);
        if cycle.len() < 2 {
            return Some("a cycle has at least two edges".into());
        }
        if cycle[0].backend != victim || (cycle[0].tag, cycle[0].mode) != (mine.tag, mine.mode) {
            return Some("the cycle does not start with the victim's request".into());
        }
        let closed_requests = self.closed_requests.iter();
        let requests = || self.pending.values().map(|p| &p.interval).chain(closed_requests.clone());
        for (i, edge) in cycle.iter().enumerate() {
            let next = &cycle[(i + 1) % cycle.len()];
            if edge.blocked_by != next.backend || edge.backend == edge.blocked_by {
                return Some(format!("edge {edge} does not chain into a cycle"));
            }
            let requested = requests()
                .any(|q| q.backend == edge.backend && q.tag == edge.tag && q.mode == edge.mode && q.overlaps(from, to));
            if !requested {
                return Some(format!("edge {edge}: the waiter never requested that lock while the victim waited"));
            }
            let blocking = if edge.soft {
                requests().any(|q| {
                    q.backend == edge.blocked_by
                        && q.tag == edge.tag
                        && q.mode.conflicts_with(edge.mode)
                        && q.overlaps(from, to)
                })
            } else {
                self.held.get(&edge.tag).into_iter().flatten().chain(self.closed_holds.iter()).any(|h| {
                    h.backend == edge.blocked_by
                        && h.tag == edge.tag
                        && h.mode.conflicts_with(edge.mode)
                        && h.overlaps(from, to)
                })
            };
            if !blocking {
                return Some(format!("edge {edge}: the blocker neither held nor requested a conflicting mode"));
            }
        }
        None
    }

    /// Backends that could be holding back `waiter`: other backends that
    /// hold a mode conflicting with its request on its tag, or request one
    /// there (wherever they are queued — over-approximating only makes the
    /// watchdog more lenient).
    fn blockers(&self, waiter: &Interval) -> impl Iterator<Item = usize> + '_ {
        let w = *waiter;
        let holders = self.held.get(&w.tag).into_iter().flatten();
        let requesters = self.pending.values().map(|p| &p.interval);
        holders
            .chain(requesters.filter(move |q| q.tag == w.tag))
            .filter(move |x| x.backend != w.backend && x.mode.conflicts_with(w.mode))
            .map(|x| x.backend)
    }

    fn stalled(&self, now: Instant, grace: Duration) -> Vec<Stall> {
        let mut out = Vec::new();
        'waiters: for (&backend, p) in &self.pending {
            let w = p.interval;
            let stall = |chain: Vec<(usize, u64)>, why: String| Stall { backend, request: w.start, chain, why };
            if let Some(limit) = p.limit.filter(|&limit| now > limit + grace) {
                let late = now.duration_since(limit);
                let why = format!("waits for {} on {} {late:?} past its own timeout", w.mode, w.tag);
                out.push(stall(vec![(backend, w.start)], why));
                continue;
            }
            // Search the blockers' closure for a running backend.
            let mut seen = HashSet::from([backend]);
            let mut stack: Vec<usize> = self.blockers(&w).collect();
            while let Some(b) = stack.pop() {
                if !seen.insert(b) {
                    continue;
                }
                match self.pending.get(&b) {
                    None => continue 'waiters, // b runs and will release or move on
                    Some(q) => stack.extend(self.blockers(&q.interval)),
                }
            }
            let mut chain: Vec<(usize, u64)> = seen
                .iter()
                .filter_map(|b| self.pending.get(b))
                .map(|q| (q.interval.backend, q.interval.start))
                .collect();
            chain.sort_unstable();
            let why = if seen.len() == 1 {
                format!("waits for {} on {} and nothing holds it back", w.mode, w.tag)
            } else {
                let mut texts: Vec<String> = seen
                    .iter()
                    .filter(|&&b| b != backend)
                    .filter_map(|b| self.pending.get(b))
                    .map(|q| format!("{} waits for {} on {}", q.interval.backend, q.interval.mode, q.interval.tag))
                    .collect();
                texts.sort();
                format!("waits for {} on {}; everything holding it back waits too: {}", w.mode, w.tag, texts.join("; "))
            };
            out.push(stall(chain, why));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(n: u64) -> LockTag {
        LockTag::advisory(9, n)
    }

    #[test]
    fn a_conflicting_grant_is_a_violation() {
        let c = Checker::default();
        c.granted(1, t(1), LockMode::Share);
        c.granted(2, t(1), LockMode::RowShare);
        assert_eq!(c.violations().0, 0);
        c.granted(3, t(1), LockMode::Exclusive);
        let (n, texts) = c.violations();
        assert_eq!(n, 1);
        assert!(texts[0].contains("CONFLICT"), "{texts:?}");
        // The same backend may hold conflicting modes itself.
        c.granted(1, t(1), LockMode::AccessExclusive);
        assert_eq!(c.violations().0, 2, "backend 1's AccessExclusive conflicts with 2's RowShare");
    }

    #[test]
    fn a_real_cycle_passes_and_an_invented_one_fails() {
        let c = Checker::default();
        c.granted(1, t(1), LockMode::Exclusive);
        c.granted(2, t(2), LockMode::Exclusive);
        c.begin_request(2, t(1), LockMode::Exclusive, None);
        c.begin_request(1, t(2), LockMode::Exclusive, None);
        let edge = |backend, tag, blocked_by| DeadlockEdge {
            backend,
            tag,
            mode: LockMode::Exclusive,
            blocked_by,
            soft: false,
        };
        assert!(c.check_cycle(1, &[edge(1, t(2), 2), edge(2, t(1), 1)]));
        assert_eq!(c.violations().0, 0);
        // Backend 2 never waited for t(3).
        assert!(!c.check_cycle(1, &[edge(1, t(2), 2), edge(2, t(3), 1)]));
        assert_eq!(c.violations().0, 1);
    }

    #[test]
    fn the_watchdog_sees_cycles_and_lost_wakeups_but_not_running_blockers() {
        let c = Checker::default();
        let now = Instant::now();
        let grace = Duration::from_millis(200);
        // 1 waits for 2, which runs: not stalled.
        c.granted(2, t(1), LockMode::Exclusive);
        c.begin_request(1, t(1), LockMode::Share, None);
        assert!(c.stalled(now, grace).is_empty());
        // 2 now waits for 1: a cycle, both stalled.
        c.granted(1, t(2), LockMode::Exclusive);
        c.begin_request(2, t(2), LockMode::Exclusive, None);
        let mut s: Vec<usize> = c.stalled(now, grace).into_iter().map(|s| s.backend).collect();
        s.sort();
        assert_eq!(s, [1, 2]);
        // 3 waits on a free tag: a lost wake-up if it lasts.
        c.begin_request(3, t(3), LockMode::Share, Some(now));
        assert!(c.stalled(now, grace).iter().any(|s| s.backend == 3));
        // Past its own limit plus the grace.
        assert!(c
            .stalled(now + 2 * grace, grace)
            .iter()
            .any(|s| s.backend == 3 && s.why.contains("past its own timeout")));
    }

    #[test]
    fn a_chain_whose_members_get_answers_changes_its_signature() {
        let c = Checker::default();
        let now = Instant::now();
        let grace = Duration::from_millis(200);
        let chain_of = |b: usize| c.stalled(now, grace).into_iter().find(|s| s.backend == b).map(|s| s.chain);
        // 1 waits for t(1), held by 2; 2 waits for t(2), held by 3; 3 waits for t(3) held by 2.
        c.granted(2, t(1), LockMode::Exclusive);
        c.granted(3, t(2), LockMode::Exclusive);
        c.granted(2, t(3), LockMode::Exclusive);
        c.begin_request(1, t(1), LockMode::Exclusive, None);
        c.begin_request(2, t(2), LockMode::Exclusive, None);
        c.begin_request(3, t(3), LockMode::Exclusive, None);
        let first = chain_of(1).expect("1 is stalled");
        assert_eq!(first.iter().map(|&(b, _)| b).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(chain_of(1), Some(first.clone()), "nothing moved, the signature stays");
        // 3 is chosen as the victim and at once waits again: progress for 1.
        c.end_request(3);
        c.begin_request(3, t(3), LockMode::Exclusive, None);
        let second = chain_of(1).expect("1 is still stalled");
        assert_ne!(first, second, "an answered request must change the chain");
    }
}
