//! The faithfulness census: the relation locks one execution of a
//! workload's query takes, counted by the server itself in `pg_locks`
//! inside an open transaction; and planning time from `EXPLAIN (ANALYZE)`.
//!
//! Simple mode runs the statement with its parameter as a literal (planned
//! each time). Prepared mode is what `pgbench -M prepared` settles on: a
//! generic plan (`PREPARE` under `plan_cache_mode = force_generic_plan`,
//! then `EXECUTE`). Either way the statement runs once to warm the caches,
//! then again inside `BEGIN`; before `COMMIT` the session counts its own
//! `relation` locks on user relations (`oid >= 16384`, PostgreSQL's
//! `FirstNormalObjectId`), split into fast path and index locks.

use super::client::Conn;
use crate::workload::Mode;
use crate::CliError;
use serde::Serialize;
use std::time::Duration;

/// The parameter value bound in the census and in `EXPLAIN`.
pub const PARAM: &str = "42";

/// Locks of one execution, as `pg_locks` shows them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LockCount {
    /// Relation locks on user relations (tables and indexes).
    pub relation_locks: u32,
    /// Of those, on the fast path.
    pub fastpath_locks: u32,
    /// Of those, on indexes.
    pub index_locks: u32,
    /// Of those, on tables (plain and partitioned).
    pub table_locks: u32,
}

impl LockCount {
    /// `303 (16 fp, 201 idx)`.
    pub fn cell(&self) -> String {
        format!("{} ({} fp, {} idx)", self.relation_locks, self.fastpath_locks, self.index_locks)
    }
}

/// Counts the locks of one execution of `query` (`$1` = [`PARAM`]).
pub fn count_locks(conn: &Conn<'_>, query: &str, mode: Mode) -> Result<LockCount, CliError> {
    let (pre, run) = match mode {
        Mode::Simple => (String::new(), format!("{};", query.replace("$1", PARAM))),
        Mode::Prepared => (
            format!("SET plan_cache_mode = force_generic_plan;\nPREPARE q(int) AS {query};\n"),
            format!("EXECUTE q({PARAM});"),
        ),
    };
    let script = format!(
        "{pre}\\o /dev/null\n{run}\n\\o\nBEGIN;\n\\o /dev/null\n{run}\n\\o\n\
         SELECT count(*), count(*) FILTER (WHERE l.fastpath), count(*) FILTER (WHERE c.relkind IN ('i', 'I')), \
         count(*) FILTER (WHERE c.relkind IN ('r', 'p')) \
         FROM pg_locks l JOIN pg_class c ON c.oid = l.relation \
         WHERE l.pid = pg_backend_pid() AND l.locktype = 'relation' AND l.relation >= 16384;\nCOMMIT;\n"
    );
    let out = conn.psql(&script, Duration::from_secs(600))?;
    let line = out.lines().map(str::trim).find(|l| !l.is_empty() && l.contains(','));
    let nums: Vec<u32> = line.map(|l| l.split(',').filter_map(|v| v.trim().parse().ok()).collect()).unwrap_or_default();
    match nums[..] {
        [relation_locks, fastpath_locks, index_locks, table_locks] => {
            Ok(LockCount { relation_locks, fastpath_locks, index_locks, table_locks })
        }
        _ => Err(format!("the lock census on {} printed {:?}, not four counts", conn.db, out.trim()).into()),
    }
}

/// Planning and execution time of a query, from `EXPLAIN (ANALYZE)`.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Planning {
    /// The first execution in a fresh session (cold caches).
    pub first_ms: f64,
    /// Median of the others.
    pub median_ms: f64,
    /// Median execution time of the others.
    pub execution_median_ms: f64,
    /// Executions.
    pub n: usize,
}

/// Runs `EXPLAIN (ANALYZE) query` `n` times in one session.
pub fn planning(conn: &Conn<'_>, query: &str, n: usize) -> Result<Planning, CliError> {
    let q = query.replace("$1", PARAM);
    let script: String = (0..n).map(|_| format!("EXPLAIN (ANALYZE) {q};\n")).collect();
    let out = conn.psql(&script, Duration::from_secs(600))?;
    let times = |label: &str| -> Vec<f64> {
        out.lines()
            .filter_map(|l| l.trim().strip_prefix(label))
            .filter_map(|r| r.trim().trim_end_matches("ms").trim().parse().ok())
            .collect()
    };
    let plan = times("Planning Time:");
    let exec = times("Execution Time:");
    if plan.len() != n {
        return Err(format!("EXPLAIN (ANALYZE) on {} gave {} planning times for {n} runs", conn.db, plan.len()).into());
    }
    Ok(Planning {
        first_ms: plan[0],
        median_ms: median(&plan[1.min(n - 1)..]),
        execution_median_ms: if exec.len() > 1 {
            median(&exec[1..])
        } else {
            exec.first().copied().unwrap_or(f64::NAN)
        },
        n,
    })
}

/// The median (mean of the middle two for an even count); NaN when empty.
pub fn median(values: &[f64]) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }
}
