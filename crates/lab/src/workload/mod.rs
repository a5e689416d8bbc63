//! The workloads W1–W6, each defined once: the tables it creates (schema),
//! the rows they hold (data), the query its clients run, and its
//! parameters. Nothing else in the lab names a workload's table, column or
//! size.
//!
//! Two renderers read these definitions:
//!
//! * `compare::workloads` writes them as SQL and pgbench scripts for the
//!   real pgbench, against PostgreSQL and `turnstile serve` (and the
//!   repository's `workloads/` directory, which a unit test keeps equal to
//!   what it generates);
//! * `run::workloads` turns them into calls of the engine's API
//!   (`create_table`, `insert_many`, a typed `Query`), which `turnstile run`
//!   measures in process.
//!
//! W1 and W5 use pgbench's own tables: through pgbench they are made by
//! `pgbench -i`, in process by [`pgbench::accounts`] and
//! [`pgbench::branches`], which describe what `pgbench -i` creates.
//! The write-ups each workload comes from are in `docs/sources.md`.

mod id;
mod lookup;
pub mod pgbench;
mod schema;
pub mod w1;
pub mod w2;
pub mod w3;
pub mod w4;
pub mod w5;
pub mod w6;

pub use id::WorkloadId;
pub use lookup::{JoinOn, Lookup};
pub use schema::{ColType, Column, Datum, Fill, Index, Table};

/// Data-set sizes: the parameters that are not swept.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sizes {
    /// W1 and W5: pgbench scale (100 000 accounts per unit).
    pub scale: f64,
    /// W2: fact rows.
    pub fact_rows: u32,
    /// W2: rows per dimension.
    pub dim_rows: u32,
    /// W4: rows per COPY (per transaction).
    pub copy_rows: u32,
}

impl Sizes {
    /// The write-ups' sizes, which `turnstile compare` uses.
    pub const DEFAULT: Sizes = Sizes { scale: 10.0, fact_rows: 100_000, dim_rows: 100, copy_rows: 10_000 };

    /// `turnstile run`'s defaults: everything in cache, in one process.
    pub const IN_PROCESS: Sizes = Sizes { scale: 0.1, fact_rows: 10_000, dim_rows: 100, copy_rows: 1000 };

    /// Accounts at this scale (at least one, at most `i32::MAX`).
    pub fn accounts(&self) -> u32 {
        (self.scale * f64::from(pgbench::ACCOUNTS_PER_SCALE)).round().clamp(1.0, f64::from(i32::MAX)) as u32
    }
}
