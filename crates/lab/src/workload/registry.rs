//! Every workload, in report order: the one list a new workload joins.

use super::{w1, w2, w3, w4, w5, w6, w7, Definition};

/// The definitions; a [`WorkloadId`](super::WorkloadId) is an index here.
pub const DEFINITIONS: &[&Definition] = &[
    &w1::DEFINITION,
    &w2::DEFINITION,
    &w3::DEFINITION,
    &w4::DEFINITION,
    &w5::DEFINITION,
    &w6::DEFINITION,
    &w7::DEFINITION,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Every default list of every sweep is within the sweep's bounds, and
    /// a workload with a pgbench form has lists for it.
    #[test]
    fn every_default_list_is_within_its_bounds() {
        for d in DEFINITIONS {
            let Some(sweep) = d.sweep else { continue };
            for list in [sweep.full, sweep.quick, sweep.pgbench, sweep.pgbench_quick, sweep.alloc] {
                sweep.check(list).unwrap_or_else(|e| panic!("{}: {e}", d.name));
            }
            assert!(!sweep.full.is_empty() && !sweep.quick.is_empty(), "{}", d.name);
            if d.pgbench.is_some() {
                assert!(!sweep.pgbench.is_empty() && !sweep.pgbench_quick.is_empty(), "{}", d.name);
            }
        }
    }
}
