//! Which workload: an index into the registry, which `turnstile run` and
//! `turnstile compare` take on their command lines by name (`W1` …).

use super::registry::DEFINITIONS;
use super::Definition;
use std::fmt;

/// A workload of the registry (the write-up each reproduces is in
/// `docs/sources.md`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WorkloadId(usize);

/// Every workload, in report order.
static ALL: [WorkloadId; DEFINITIONS.len()] = {
    let mut ids = [WorkloadId(0); DEFINITIONS.len()];
    let mut i = 0;
    while i < ids.len() {
        ids[i] = WorkloadId(i);
        i += 1;
    }
    ids
};

impl WorkloadId {
    /// Every workload, in report order.
    pub fn all() -> &'static [WorkloadId] {
        &ALL
    }

    /// The workloads that also run through pgbench (`turnstile compare`).
    pub fn through_pgbench() -> Vec<WorkloadId> {
        ALL.iter().copied().filter(|w| w.definition().pgbench.is_some()).collect()
    }

    /// The workload called `name` (`W1` …, any case).
    pub fn named(name: &str) -> Option<WorkloadId> {
        ALL.iter().copied().find(|w| w.name().eq_ignore_ascii_case(name))
    }

    /// Its definition.
    pub fn definition(self) -> &'static Definition {
        DEFINITIONS[self.0]
    }

    /// `W1` …
    pub fn name(self) -> &'static str {
        self.definition().name
    }

    /// A title for reports.
    pub fn title(self) -> &'static str {
        self.definition().title
    }
}

impl fmt::Debug for WorkloadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for WorkloadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl clap::ValueEnum for WorkloadId {
    fn value_variants<'a>() -> &'a [Self] {
        &ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()).help(self.definition().summary))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found_again() {
        for &w in WorkloadId::all() {
            assert_eq!(WorkloadId::named(w.name()), Some(w));
            assert_eq!(WorkloadId::named(&w.name().to_lowercase()), Some(w));
        }
        assert_eq!(WorkloadId::named("W0"), None);
    }
}
