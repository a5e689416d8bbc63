//! Deadlock detection and soft-deadlock resolution (PostgreSQL's
//! `deadlock.c` ideas, reimplemented; see the lmgr README, "The deadlock
//! detection algorithm").
//!
//! The checker builds a [`WaitGraph`] while holding every partition lock,
//! so the graph is one consistent snapshot. A backend `A` waits for `B`
//! when `A` is queued on a lock and
//!
//! * `B` holds a mode conflicting with `A`'s request — a **hard** edge;
//! * `B` is queued ahead of `A` on the same lock with a conflicting
//!   request — a **soft** edge (wake-ups are in queue order, so `A` cannot
//!   be granted before `B`).
//!
//! [`check`] searches for a cycle through the checking backend only (a
//! cycle elsewhere is some other backend's to break). A cycle with soft
//! edges may be broken without aborting anyone by re-ordering wait queues:
//! reversing soft edge `A → B` means moving `A` ahead of `B`. The search
//! tries every set of reversals recursively; a candidate re-ordering is a
//! stable topological sort of each affected queue under the constraints
//! "`A` before `B`", and it is accepted only if no cycle remains through
//! the checker nor through any backend it moved. If none works, the
//! checker's request is the victim ([`Outcome::Deadlock`]), reported with
//! the cycle found in the unmodified graph.
//!
//! Relation-extension locks never appear in the graph: a backend holding
//! one never waits for another heavyweight lock, and its waiters never run
//! the check.

use crate::error::DeadlockEdge;
use crate::mode::{LockMode, ModeMask};
use crate::tag::LockTag;
use std::collections::HashMap;

/// Largest number of simultaneous edge reversals tried (PostgreSQL bounds
/// it by `MaxBackends`; the graph's waiter count is the real bound).
const MAX_CONSTRAINTS: usize = 64;
/// Largest number of configurations tested before giving up and
/// declaring a deadlock (a limit on everything).
const MAX_TESTS: usize = 10_000;

/// One lock of the snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GraphLock {
    pub(crate) tag: LockTag,
    /// `(backend, modes held)`.
    pub(crate) holders: Vec<(u32, ModeMask)>,
    /// `(backend, mode requested)`, head first.
    pub(crate) queue: Vec<(u32, LockMode)>,
}

/// A snapshot of every queued request and the holders of those locks.
#[derive(Clone, Debug, Default)]
pub(crate) struct WaitGraph {
    pub(crate) locks: Vec<GraphLock>,
    /// Backend → (index into `locks`, mode requested).
    waiting: HashMap<u32, (usize, LockMode)>,
}

impl WaitGraph {
    /// Adds a lock that has waiters.
    pub(crate) fn add_lock(&mut self, lock: GraphLock) {
        let index = self.locks.len();
        for &(backend, mode) in &lock.queue {
            let previous = self.waiting.insert(backend, (index, mode));
            assert!(previous.is_none(), "backend {backend} queued twice");
        }
        self.locks.push(lock);
    }
}

/// "`waiter` before `blocker` in the queue of `lock`": the reversal of the
/// soft edge `waiter → blocker`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Constraint {
    lock: usize,
    waiter: u32,
    blocker: u32,
}

/// The result of a check.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// No cycle runs through the checker.
    NoDeadlock,
    /// Soft cycles exist; these new queue orders (lock index, backends in
    /// order) remove them without creating others.
    Rearrange(Vec<(usize, Vec<u32>)>),
    /// A cycle that re-ordering cannot break; its edges, starting at the
    /// checker.
    Deadlock(Vec<DeadlockEdge>),
}

/// Checks for a deadlock through `start`, which must be queued in `graph`.
pub(crate) fn check(graph: &WaitGraph, start: u32) -> Outcome {
    let mut search = Search { graph, visited: Vec::new(), details: Vec::new(), soft: Vec::new(), tests: 0 };
    let mut constraints = Vec::new();
    if !search.deadlocked(start, &mut constraints) {
        if constraints.is_empty() {
            return Outcome::NoDeadlock;
        }
        let orders = expand(graph, &constraints).expect("an accepted configuration sorts");
        let mut orders: Vec<(usize, Vec<u32>)> =
            orders.into_iter().map(|(lock, queue)| (lock, queue.into_iter().map(|(b, _)| b).collect())).collect();
        orders.sort_unstable_by_key(|(lock, _)| *lock);
        return Outcome::Rearrange(orders);
    }
    // Report the cycle of the real (un-rearranged) configuration.
    let found = search.find_cycle(start, &HashMap::new());
    assert!(found, "a hard deadlock has a cycle in the real configuration");
    let mut cycle = std::mem::take(&mut search.details);
    cycle.reverse();
    Outcome::Deadlock(cycle)
}

/// Result of testing one configuration.
enum Test {
    /// No cycle through the checked backends.
    Ok,
    /// A cycle with no soft edge: cannot be fixed.
    Hard,
    /// A cycle whose soft edges (innermost first) could be reversed.
    Soft(Vec<Constraint>),
}

struct Search<'g> {
    graph: &'g WaitGraph,
    /// Backends seen by the current `find_cycle`; `visited[0]` is its start.
    visited: Vec<u32>,
    /// Edges of the cycle found, innermost first.
    details: Vec<DeadlockEdge>,
    /// Soft edges of the cycle found, innermost first.
    soft: Vec<Constraint>,
    tests: usize,
}

type Orders = HashMap<usize, Vec<(u32, LockMode)>>;

impl Search<'_> {
    /// Whether no set of soft-edge reversals, added to `constraints`,
    /// removes every cycle through `start`. On `false`, `constraints` holds
    /// a working set.
    fn deadlocked(&mut self, start: u32, constraints: &mut Vec<Constraint>) -> bool {
        self.tests += 1;
        if self.tests > MAX_TESTS {
            return true;
        }
        match self.test(start, constraints) {
            Test::Ok => false,
            Test::Hard => true,
            Test::Soft(edges) => {
                if constraints.len() >= MAX_CONSTRAINTS {
                    return true;
                }
                for edge in edges {
                    constraints.push(edge);
                    if !self.deadlocked(start, constraints) {
                        return false;
                    }
                    constraints.pop();
                }
                true
            }
        }
    }

    /// Tests the configuration `constraints` describe: looks for cycles
    /// through `start` and through every backend the constraints move.
    fn test(&mut self, start: u32, constraints: &[Constraint]) -> Test {
        let Some(orders) = expand(self.graph, constraints) else {
            return Test::Hard;
        };
        let mut soft_found = None;
        let backends = std::iter::once(start).chain(constraints.iter().flat_map(|c| [c.waiter, c.blocker]));
        for backend in backends {
            if self.find_cycle(backend, &orders) {
                if self.soft.is_empty() {
                    return Test::Hard;
                }
                soft_found = Some(self.soft.clone());
            }
        }
        soft_found.map_or(Test::Ok, Test::Soft)
    }

    /// Whether a cycle runs through `start` under the queue orders
    /// `orders` (the real queue where absent). Fills `details` and `soft`.
    fn find_cycle(&mut self, start: u32, orders: &Orders) -> bool {
        self.visited.clear();
        self.details.clear();
        self.soft.clear();
        self.recurse(start, orders)
    }

    fn recurse(&mut self, backend: u32, orders: &Orders) -> bool {
        if let Some(i) = self.visited.iter().position(|&b| b == backend) {
            // Back at the start: a cycle through it. Elsewhere: a cycle that
            // does not include the start, or a node already explored.
            return i == 0;
        }
        self.visited.push(backend);
        let Some(&(lock_index, mode)) = self.graph.waiting.get(&backend) else {
            return false; // running, no outgoing edge
        };
        let graph = self.graph;
        let lock = &graph.locks[lock_index];
        let conflicts = mode.conflict_mask();
        for &(holder, held) in &lock.holders {
            if holder != backend && held & conflicts != 0 && self.recurse(holder, orders) {
                self.details.push(DeadlockEdge {
                    backend: backend as usize,
                    tag: lock.tag,
                    mode,
                    blocked_by: holder as usize,
                    soft: false,
                });
                return true;
            }
        }
        let queue = orders.get(&lock_index).unwrap_or(&lock.queue);
        for &(ahead, ahead_mode) in queue {
            if ahead == backend {
                break;
            }
            if conflicts & ahead_mode.bit() != 0 && self.recurse(ahead, orders) {
                self.details.push(DeadlockEdge {
                    backend: backend as usize,
                    tag: lock.tag,
                    mode,
                    blocked_by: ahead as usize,
                    soft: true,
                });
                self.soft.push(Constraint { lock: lock_index, waiter: backend, blocker: ahead });
                return true;
            }
        }
        false
    }
}

/// The queue orders `constraints` ask for, or `None` if they contradict
/// each other.
fn expand(graph: &WaitGraph, constraints: &[Constraint]) -> Option<Orders> {
    let mut orders = Orders::new();
    for c in constraints {
        if orders.contains_key(&c.lock) {
            continue;
        }
        let mine: Vec<(u32, u32)> =
            constraints.iter().filter(|d| d.lock == c.lock).map(|d| (d.waiter, d.blocker)).collect();
        orders.insert(c.lock, topo_sort(&graph.locks[c.lock].queue, &mine)?);
    }
    Some(orders)
}

/// Sorts `queue` so that for each `(a, b)` in `before`, `a` precedes `b`,
/// changing the original order as little as possible: positions are
/// filled from the back, each time with the last remaining entry that no
/// constraint requires before a remaining one. `None` if the constraints
/// form a cycle.
fn topo_sort(queue: &[(u32, LockMode)], before: &[(u32, u32)]) -> Option<Vec<(u32, LockMode)>> {
    let mut remaining = queue.to_vec();
    let mut reversed = Vec::with_capacity(queue.len());
    while !remaining.is_empty() {
        let pos = remaining
            .iter()
            .rposition(|&(p, _)| !before.iter().any(|&(a, b)| a == p && remaining.iter().any(|&(q, _)| q == b)))?;
        reversed.push(remaining.remove(pos));
    }
    reversed.reverse();
    Some(reversed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use LockMode::*;

    fn rel(n: u32) -> LockTag {
        LockTag::relation(1, n)
    }

    fn lock(tag: LockTag, holders: &[(u32, LockMode)], queue: &[(u32, LockMode)]) -> GraphLock {
        GraphLock { tag, holders: holders.iter().map(|&(b, m)| (b, m.bit())).collect(), queue: queue.to_vec() }
    }

    #[test]
    fn no_cycle_is_no_deadlock() {
        let mut g = WaitGraph::default();
        g.add_lock(lock(rel(1), &[(1, AccessExclusive)], &[(2, AccessShare)]));
        assert_eq!(check(&g, 2), Outcome::NoDeadlock);
    }

    #[test]
    fn a_hard_cycle_names_every_edge_from_the_checker() {
        // 1 holds a, waits b; 2 holds b, waits c; 3 holds c, waits a.
        let mut g = WaitGraph::default();
        g.add_lock(lock(rel(1), &[(1, AccessExclusive)], &[(3, AccessExclusive)]));
        g.add_lock(lock(rel(2), &[(2, AccessExclusive)], &[(1, AccessExclusive)]));
        g.add_lock(lock(rel(3), &[(3, AccessExclusive)], &[(2, AccessExclusive)]));
        let Outcome::Deadlock(cycle) = check(&g, 1) else { panic!("hard cycle not found") };
        let path: Vec<_> = cycle.iter().map(|e| (e.backend, e.blocked_by, e.tag, e.soft)).collect();
        assert_eq!(path, vec![(1, 2, rel(2), false), (2, 3, rel(3), false), (3, 1, rel(1), false)]);
    }

    #[test]
    fn a_cycle_not_through_the_checker_is_not_its_business() {
        let mut g = WaitGraph::default();
        g.add_lock(lock(rel(1), &[(1, AccessExclusive)], &[(2, AccessExclusive)]));
        g.add_lock(lock(rel(2), &[(2, AccessExclusive)], &[(1, AccessExclusive), (3, AccessShare)]));
        assert_eq!(check(&g, 3), Outcome::NoDeadlock);
        assert!(matches!(check(&g, 1), Outcome::Deadlock(_)));
    }

    /// PostgreSQL's `deadlock-soft`: d1 = 1, d2 = 2, e1 = 3, e2 = 4.
    #[test]
    fn deadlock_soft_is_resolved_by_moving_d1_ahead_of_e2() {
        let mut g = WaitGraph::default();
        g.add_lock(lock(rel(1), &[(1, AccessShare)], &[(3, AccessExclusive), (2, AccessShare)]));
        g.add_lock(lock(rel(2), &[(2, AccessShare)], &[(4, AccessExclusive), (1, AccessShare)]));
        assert_eq!(check(&g, 2), Outcome::Rearrange(vec![(1, vec![1, 4])]));
    }

    /// PostgreSQL's `deadlock-soft-2`: s1 must jump over both s3 and s4.
    #[test]
    fn deadlock_soft_2_reverses_two_edges() {
        let mut g = WaitGraph::default();
        // a1: s1 holds SUE; s2 waits SUE. a2: s2 holds AS; queue s3 AE, s4 AE, s1 SUE.
        g.add_lock(lock(rel(1), &[(1, ShareUpdateExclusive)], &[(2, ShareUpdateExclusive)]));
        g.add_lock(lock(
            rel(2),
            &[(2, AccessShare)],
            &[(3, AccessExclusive), (4, AccessExclusive), (1, ShareUpdateExclusive)],
        ));
        let Outcome::Rearrange(orders) = check(&g, 1) else { panic!("expected a re-ordering") };
        assert_eq!(orders, vec![(1, vec![1, 3, 4])]);
    }

    #[test]
    fn topo_sort_moves_the_waiter_just_ahead_and_detects_contradictions() {
        let q = [(1, AccessShare), (2, AccessShare), (3, AccessShare)];
        let order: Vec<u32> = topo_sort(&q, &[(3, 1)]).unwrap().into_iter().map(|p| p.0).collect();
        assert_eq!(order, vec![3, 1, 2]);
        assert!(topo_sort(&q, &[(3, 1), (1, 3)]).is_none());
        assert_eq!(topo_sort(&q, &[]).unwrap(), q.to_vec());
    }
}
