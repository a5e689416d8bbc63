//! Data-set sizes: the parameters of a workload that are not swept.

use super::pgbench;

/// Data-set sizes.
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

    /// pgbench's `-s`: a whole scale, at least 1.
    pub fn pgbench_scale(&self) -> u32 {
        self.scale.round().max(1.0) as u32
    }
}
