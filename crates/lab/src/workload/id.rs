//! Which workload: the one enum `turnstile run` and `turnstile compare`
//! take on their command lines.

/// A workload (the write-up each reproduces is in `docs/sources.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum)]
#[value(rename_all = "UPPER")]
pub enum WorkloadId {
    /// Partitioned join (Vondra 2024).
    W1,
    /// Star join (Vondra 2024).
    W2,
    /// Many indexes (Geier 2022).
    W3,
    /// Relation extension (Freund 2020).
    W4,
    /// Select-only, pgbench -S (Haas 2011).
    W5,
    /// LWLock starvation: readers through a hot B-tree root while writers
    /// insert and extend (Postgres Pro 2018; in process only).
    W6,
}

impl WorkloadId {
    /// Every workload, in report order.
    pub const ALL: [WorkloadId; 6] =
        [WorkloadId::W1, WorkloadId::W2, WorkloadId::W3, WorkloadId::W4, WorkloadId::W5, WorkloadId::W6];

    /// The workloads that also run through pgbench (`turnstile compare`).
    pub const THROUGH_PGBENCH: [WorkloadId; 5] =
        [WorkloadId::W1, WorkloadId::W2, WorkloadId::W3, WorkloadId::W4, WorkloadId::W5];

    /// `W1` …
    pub fn name(self) -> &'static str {
        match self {
            WorkloadId::W1 => "W1",
            WorkloadId::W2 => "W2",
            WorkloadId::W3 => "W3",
            WorkloadId::W4 => "W4",
            WorkloadId::W5 => "W5",
            WorkloadId::W6 => "W6",
        }
    }

    /// A title for reports.
    pub fn title(self) -> &'static str {
        match self {
            WorkloadId::W1 => "W1 partitioned join (Vondra 2024): pgbench_accounts by aid_parent JOIN pgbench_branches",
            WorkloadId::W2 => "W2 star join (Vondra 2024): one fact row JOIN every dimension",
            WorkloadId::W3 => "W3 many indexes (Geier 2022): SELECT * FROM synth_table WHERE col5 = 42",
            WorkloadId::W4 => "W4 relation extension (Freund 2020): COPY into one unlogged table",
            WorkloadId::W5 => "W5 select-only (Haas 2011): pgbench -S",
            WorkloadId::W6 => {
                "W6 LWLock starvation (Postgres Pro 2018): point lookups through a hot B-tree root while writers insert"
            }
        }
    }
}
