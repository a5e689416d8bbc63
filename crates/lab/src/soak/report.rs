//! The soak's figures per run, and how they are printed: the JSON contract
//! (`--json`) and a table.
//!
//! Per run:
//! - `rss_growth_mb_per_million`: the [least-squares slope](super::slope)
//!   of the server's resident memory (MB) against mix transactions
//!   (millions), over the samples taken after warm-up, the first
//!   [`WARMUP_FRACTION`] of the run;
//! - `table_growth_ratio`: the updated tables' size (`pgbench_accounts`,
//!   `pgbench_tellers`, `pgbench_branches`) at the end over their size at
//!   the first sample at or past half of the run;
//! - `xids_per_read_only`, `xids_per_write`: from the probes (see
//!   [`run`](super::run));
//! - `transactions`: mix transactions pgbench processed.
//!
//! Beside them: every sample, `pgbench_history`'s and the data directory's
//! size, and the ids assigned per write transaction of the mix itself.

use super::sample::Sample;
use super::slope::least_squares_slope;
use super::Plan;
use crate::cli::ProfileArg;
use crate::report::{f, Table};
use serde::Serialize;

/// The share of a run's transactions that counts as warm-up: samples
/// before it are left out of the RSS slope (allocators, caches and the
/// status log fill up first).
pub const WARMUP_FRACTION: f64 = 0.2;

/// What one run measured ([`run`](super::run) fills it).
#[derive(Clone, Debug)]
pub struct Figures {
    /// One sample before the mix, then one per chunk.
    pub samples: Vec<Sample>,
    /// Mix transactions processed.
    pub transactions: u64,
    /// Of them, tpcb-like.
    pub mix_writes: u64,
    /// Of them, select-only.
    pub mix_reads: u64,
    /// Transaction ids assigned during the mix.
    pub mix_xids: u64,
    /// Seconds pgbench ran the mix (sampling excluded).
    pub pgbench_seconds: f64,
    /// From the select-only probe.
    pub xids_per_read_only: f64,
    /// From the tpcb-like probe.
    pub xids_per_write: f64,
}

/// One run in the report (the JSON object in `runs`).
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    /// `classic` or `scalable`.
    pub profile: String,
    /// Whether the long `REPEATABLE READ` session was open.
    pub long_snapshot: bool,
    /// Mix transactions processed.
    pub transactions: u64,
    /// MB of resident memory per million transactions after warm-up.
    pub rss_growth_mb_per_million: Option<f64>,
    /// Updated tables' size at the end / at the half-way point.
    pub table_growth_ratio: Option<f64>,
    /// Transaction ids per select-only transaction.
    pub xids_per_read_only: f64,
    /// Transaction ids per tpcb-like transaction.
    pub xids_per_write: f64,
    /// Ids assigned during the mix per tpcb-like transaction of the mix.
    pub xids_per_write_in_mix: Option<f64>,
    /// pgbench clients.
    pub clients: usize,
    /// `pgbench -i -s`.
    pub scale: u32,
    /// Transactions before the first sample of the slope.
    pub warmup_transactions: u64,
    /// Mix transactions that were tpcb-like, by pgbench's per-script
    /// tally (which may lose a few between threads; see
    /// [`pgbench_output`](super::pgbench_output)).
    pub write_transactions: u64,
    /// Mix transactions that were select-only, as `write_transactions`.
    pub read_only_transactions: u64,
    /// Mix transactions per second of pgbench time.
    pub tps: f64,
    /// Resident memory before the mix and at its end, MB.
    pub rss_mb_start: f64,
    /// See `rss_mb_start`.
    pub rss_mb_end: f64,
    /// Updated tables' size at the half-way point, bytes.
    pub updated_tables_bytes_half: u64,
    /// Updated tables' size at the end, bytes.
    pub updated_tables_bytes_end: u64,
    /// `pgbench_history` at the end, bytes.
    pub history_bytes_end: u64,
    /// The data directory on disk at the end, bytes.
    pub data_dir_bytes_end: u64,
    /// The status log's and the version store's bytes at the end, and the
    /// version store's fallbacks (see [`Sample`]).
    pub xact_log_bytes_end: u64,
    /// See `xact_log_bytes_end`.
    pub version_store_bytes_end: u64,
    /// See `xact_log_bytes_end`.
    pub version_store_fallbacks_end: u64,
    /// Every sample.
    pub samples: Vec<Sample>,
}

impl RunReport {
    /// The report of one run.
    pub fn new(plan: &Plan, profile: ProfileArg, long_snapshot: bool, fig: Figures) -> RunReport {
        let warmup = (plan.transactions as f64 * WARMUP_FRACTION).ceil() as u64;
        let points: Vec<(f64, f64)> = fig
            .samples
            .iter()
            .filter(|s| s.transactions >= warmup && s.transactions > 0)
            .map(|s| (s.transactions as f64 / 1e6, s.rss_mb))
            .collect();
        let first = fig.samples.first().copied();
        let last = fig.samples.last().copied();
        let half = fig.samples.iter().find(|s| s.transactions >= plan.transactions.div_ceil(2)).copied();
        let half_bytes = half.map_or(0, |s| s.updated_tables_bytes);
        let end_bytes = last.map_or(0, |s| s.updated_tables_bytes);
        RunReport {
            profile: profile.to_string(),
            long_snapshot,
            transactions: fig.transactions,
            rss_growth_mb_per_million: least_squares_slope(&points),
            table_growth_ratio: (half_bytes > 0).then(|| end_bytes as f64 / half_bytes as f64),
            xids_per_read_only: fig.xids_per_read_only,
            xids_per_write: fig.xids_per_write,
            xids_per_write_in_mix: (fig.mix_writes > 0).then(|| fig.mix_xids as f64 / fig.mix_writes as f64),
            clients: plan.clients,
            scale: plan.scale,
            warmup_transactions: warmup,
            write_transactions: fig.mix_writes,
            read_only_transactions: fig.mix_reads,
            tps: if fig.pgbench_seconds > 0.0 { fig.transactions as f64 / fig.pgbench_seconds } else { 0.0 },
            rss_mb_start: first.map_or(0.0, |s| s.rss_mb),
            rss_mb_end: last.map_or(0.0, |s| s.rss_mb),
            updated_tables_bytes_half: half_bytes,
            updated_tables_bytes_end: end_bytes,
            history_bytes_end: last.map_or(0, |s| s.history_bytes),
            data_dir_bytes_end: last.map_or(0, |s| s.data_dir_bytes),
            xact_log_bytes_end: last.map_or(0, |s| s.xact_log_bytes),
            version_store_bytes_end: last.map_or(0, |s| s.version_store_bytes),
            version_store_fallbacks_end: last.map_or(0, |s| s.version_store_fallbacks),
            samples: fig.samples,
        }
    }
}

/// `{"runs":[…]}`.
pub fn to_json(runs: &[RunReport]) -> serde_json::Value {
    serde_json::json!({ "runs": runs })
}

/// The runs as a table, one row per run.
pub fn text(runs: &[RunReport]) -> String {
    let mut t = Table::new(
        format!(
            "turnstile soak: tpcb-like + select-only through pgbench (RSS slope after the first {:.0}% of each run)",
            WARMUP_FRACTION * 100.0
        ),
        &[
            "run",
            "transactions",
            "tps",
            "RSS MB start",
            "RSS MB end",
            "RSS MB/M",
            "tables MB half",
            "tables MB end",
            "end/half",
            "history MB",
            "data dir MB",
            "xact log MB",
            "version store MB",
            "xids/read-only",
            "xids/write",
        ],
    );
    let mb = |bytes: u64| f(bytes as f64 / (1024.0 * 1024.0), 1);
    let opt = |v: Option<f64>, digits: usize| v.map_or_else(|| "-".to_owned(), |v| f(v, digits));
    for r in runs {
        t.row(vec![
            format!("{}{}", r.profile, if r.long_snapshot { " + long REPEATABLE READ" } else { "" }),
            r.transactions.to_string(),
            f(r.tps, 0),
            f(r.rss_mb_start, 1),
            f(r.rss_mb_end, 1),
            opt(r.rss_growth_mb_per_million, 2),
            mb(r.updated_tables_bytes_half),
            mb(r.updated_tables_bytes_end),
            opt(r.table_growth_ratio, 3),
            mb(r.history_bytes_end),
            mb(r.data_dir_bytes_end),
            mb(r.xact_log_bytes_end),
            mb(r.version_store_bytes_end),
            f(r.xids_per_read_only, 3),
            f(r.xids_per_write, 3),
        ]);
    }
    t.render()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(transactions: u64, rss_mb: f64, tables: u64) -> Sample {
        Sample {
            transactions,
            seconds: transactions as f64 / 1000.0,
            rss_mb,
            data_dir_bytes: 2 * tables,
            updated_tables_bytes: tables,
            history_bytes: transactions * 50,
            xact_log_bytes: 4096,
            version_store_bytes: 0,
            version_store_fallbacks: 0,
        }
    }

    #[test]
    fn warm_up_is_left_out_of_the_slope_and_the_ratio_is_end_over_half() {
        let plan = Plan::new(1_000_000, 4, 1, 1000, Vec::new()).unwrap();
        // Memory jumps during warm-up, then grows by 0.5 MB per million.
        let mut samples = vec![sample(0, 50.0, 1000), sample(100_000, 90.0, 1100)];
        samples.extend((2..=10).map(|i| sample(i * 100_000, 100.0 + 0.05 * i as f64, 1100 + 10 * i)));
        let fig = Figures {
            transactions: 1_000_000,
            mix_writes: 500_000,
            mix_reads: 500_000,
            mix_xids: 500_000,
            pgbench_seconds: 100.0,
            xids_per_read_only: 0.0,
            xids_per_write: 1.0,
            samples,
        };
        let r = RunReport::new(&plan, ProfileArg::Scalable, true, fig);
        let slope = r.rss_growth_mb_per_million.unwrap();
        assert!((slope - 0.5).abs() < 1e-9, "{slope}");
        assert_eq!(r.warmup_transactions, 200_000);
        assert_eq!((r.updated_tables_bytes_half, r.updated_tables_bytes_end), (1150, 1200));
        assert!((r.table_growth_ratio.unwrap() - 1200.0 / 1150.0).abs() < 1e-12);
        assert_eq!(r.xids_per_write_in_mix, Some(1.0));
        assert!((r.tps - 10_000.0).abs() < 1e-9);
        let json = to_json(&[r]);
        let run = &json["runs"][0];
        assert_eq!(run["profile"], "scalable");
        assert_eq!(run["long_snapshot"], true);
        assert_eq!(run["transactions"], 1_000_000);
        assert_eq!(run["xids_per_read_only"], 0.0);
        assert_eq!(run["samples"].as_array().map(Vec::len), Some(11));
    }
}
