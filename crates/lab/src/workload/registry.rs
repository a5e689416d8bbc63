//! Every workload, in report order: the one list a new workload joins.

use super::{w1, w2, w3, w4, w5, w6, Definition};

/// The definitions; a [`WorkloadId`](super::WorkloadId) is an index here.
pub const DEFINITIONS: &[&Definition] =
    &[&w1::DEFINITION, &w2::DEFINITION, &w3::DEFINITION, &w4::DEFINITION, &w5::DEFINITION, &w6::DEFINITION];
