//! The workloads as a compare run takes them: each definition's pgbench
//! form (`crate::workload`: setup SQL and pgbench scripts, as PostgreSQL
//! and `turnstile serve` see them) at the run's lists and modes.
//! Every file is generated from the definitions; `turnstile compare
//! --write-workloads DIR` writes them, the repository's `workloads/`
//! directory holds them for the reader, and a test keeps the committed
//! copies equal to what this code generates.
//!
//! Nothing here needs PL/pgSQL: every statement is plain SQL that
//! `turnstile serve` parses as well.

use crate::workload::through_pgbench::{self, PgbenchSetup, PgbenchVariant};
use crate::workload::{Mode, Param, WorkloadId};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::Path;

pub use crate::workload::Sizes;

/// The protocol floor: `SELECT 1`.
pub const FLOOR_SCRIPT: &str = "SELECT 1;\n";

/// One point of a workload's parameter lists in a compare run: its pgbench
/// form (its own database, how to load it, how pgbench runs it; reached
/// through `Deref`) and the modes it runs in.
#[derive(Clone, Debug)]
pub struct Variant {
    /// The workload.
    pub workload: WorkloadId,
    /// What its definition's pgbench form made for this point.
    pub form: PgbenchVariant,
    /// Query modes it runs in.
    pub modes: Vec<Mode>,
}

impl std::ops::Deref for Variant {
    type Target = PgbenchVariant;

    fn deref(&self) -> &PgbenchVariant {
        &self.form
    }
}

impl Variant {
    /// `partitions=100` (the params, as in `turnstile run`).
    pub fn label(&self) -> String {
        let l: Vec<String> = self
            .params
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().map_or(v.to_string(), str::to_owned)))
            .collect();
        if l.is_empty() {
            self.workload.name().to_owned()
        } else {
            l.join(" ")
        }
    }

    /// The params with the mode, as the JSON reports them.
    pub fn params_with(&self, mode: Mode) -> Json {
        through_pgbench::params_with(&self.params, mode)
    }

    /// The table whose growth is the figure (W4's), if any.
    pub fn growth_table(&self) -> Option<&'static str> {
        self.workload.definition().growth_table
    }
}

/// The parameter lists of one compare run.
#[derive(Clone, Debug)]
pub struct Lists {
    /// The values of each swept parameter.
    pub values: BTreeMap<Param, Vec<u32>>,
    /// The query modes of the workloads that sweep them.
    pub modes: Vec<Mode>,
}

impl Lists {
    /// The values of `param` (none if the run has no list for it).
    pub fn values(&self, param: Param) -> &[u32] {
        self.values.get(&param).map_or(&[], Vec::as_slice)
    }
}

/// The variants of `workload` (none if it runs only in process).
pub fn variants(workload: WorkloadId, lists: &Lists, sizes: Sizes, scripts: &Path) -> Vec<Variant> {
    let definition = workload.definition();
    let Some(form) = &definition.pgbench else { return Vec::new() };
    let values = definition.sweep.map_or(&[][..], |s| lists.values(s.param));
    let modes = definition.modes.pgbench.pick(&lists.modes);
    (form.variants)(&PgbenchSetup { values, sizes, scripts })
        .into_iter()
        .map(|form| Variant { workload, form, modes: modes.clone() })
        .collect()
}

/// pgbench's `-s`: compare's scale is whole.
pub fn pgbench_scale(sizes: Sizes) -> u32 {
    sizes.pgbench_scale()
}

/// Every file of the repository's `workloads/` directory, with the
/// default parameter lists: `(name, contents)`.
pub fn repository_files() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = vec![("floor.sql".into(), FLOOR_SCRIPT.into())];
    for &w in WorkloadId::all() {
        if let Some(form) = &w.definition().pgbench {
            files.extend((form.repository_files)());
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{w1, w2, w3, w4, w5};

    #[test]
    fn the_committed_workload_files_are_what_the_code_generates() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads");
        for (name, text) in repository_files() {
            let committed = std::fs::read_to_string(dir.join(&name)).unwrap_or_else(|e| {
                panic!("workloads/{name}: {e} (regenerate: turnstile compare --write-workloads workloads)")
            });
            assert_eq!(
                committed, text,
                "workloads/{name} differs from the generator: turnstile compare --write-workloads workloads"
            );
        }
    }

    #[test]
    fn w2_joins_every_dimension_and_w3_indexes_the_scanned_column() {
        let q = w2::lookup(3).sql("$1");
        assert_eq!(
            q,
            "SELECT * FROM fact_n3 f JOIN dim1 d1 ON (d1.id = f.d1) JOIN dim2 d2 ON (d2.id = f.d2) \
             JOIN dim3 d3 ON (d3.id = f.d3) WHERE f.id = $1"
        );
        assert!(w3::setup_sql(1).contains("(col5)"));
        assert_eq!(w3::setup_sql(60).matches("CREATE INDEX").count(), 60);
        assert!(w3::setup_sql(2).contains("(col5)"), "every index set has the scanned column's");
        assert_eq!(
            w1::lookup().sql("$1"),
            "SELECT * FROM pgbench_accounts pa JOIN pgbench_branches pb ON (pa.bid = pb.bid) WHERE pa.aid_parent = $1"
        );
        assert_eq!(
            w5::lookup().sql("$1"),
            "SELECT abalance FROM pgbench_accounts WHERE aid = $1",
            "pgbench -S's query"
        );
        let rows = w4::rows_file(100);
        assert_eq!(rows.lines().count(), 100);
        assert!(rows.lines().all(|l| l.len() == 95), "{}", rows.lines().next().unwrap_or(""));
    }
}
