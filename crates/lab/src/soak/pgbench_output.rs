//! What the soak reads from pgbench's output: the transactions a run
//! actually processed, in total and per script.
//!
//! pgbench 15 prints `number of transactions actually processed: 2000/2000`
//! in its summary (read by the lab's [`Bench`]), and, when a run has more
//! than one script (`-b tpcb-like@1 -b select-only@1`), one section per
//! script:
//!
//! ```text
//! SQL script 1: <builtin: TPC-B (sort of)>
//!  - weight: 1 (targets 50.0% of total)
//!  - 976 transactions (48.8% of total, tps = 844.375387)
//! ```
//!
//! A run of one script has no such section; its script is named by the
//! summary's `transaction type:` line and ran every transaction.
//!
//! The total is exact; the per-script counts may fall a few short of it
//! with more than one thread (`-j 2`): pgbench 15 tallies them in one
//! struct per script that its threads share without a lock, so an
//! increment can be lost (seen: 2435 + 2564 of 5000). The soak takes the
//! total as the count of the run and the per-script counts as pgbench
//! gives them.

use crate::compare::client::Bench;

/// How pgbench names its built-in `tpcb-like` script.
pub const TPCB_LIKE: &str = "<builtin: TPC-B (sort of)>";
/// How pgbench names its built-in `select-only` script.
pub const SELECT_ONLY: &str = "<builtin: select only>";

/// The transactions one pgbench run processed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Processed {
    /// `number of transactions actually processed`.
    pub total: u64,
    /// Per script, in pgbench's order: its name (`<builtin: select only>`)
    /// and the transactions it ran.
    pub by_script: Vec<(String, u64)>,
}

impl Processed {
    /// Reads pgbench's output; `None` when it has no summary, or when the
    /// per-script counts exceed the total (lost increments only lower them).
    pub fn parse(text: &str) -> Option<Processed> {
        let total = Bench::parse(text)?.transactions;
        let mut by_script: Vec<(String, u64)> = Vec::new();
        let mut current: Option<String> = None;
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("SQL script ") {
                current = rest.split_once(": ").map(|(_, name)| name.trim().to_owned());
            } else if let (Some(name), Some(rest)) = (&current, line.trim_start().strip_prefix("- ")) {
                let mut words = rest.split_whitespace();
                if let (Some(n), Some("transactions")) = (words.next(), words.next()) {
                    by_script.push((name.clone(), n.parse().ok()?));
                    current = None;
                }
            }
        }
        if by_script.is_empty() {
            let name = text.lines().find_map(|l| l.strip_prefix("transaction type: "))?;
            by_script.push((name.trim().to_owned(), total));
        }
        (by_script.iter().map(|s| s.1).sum::<u64>() <= total).then_some(Processed { total, by_script })
    }

    /// The transactions that script `name` ran (0 when it did not run).
    pub fn of(&self, name: &str) -> u64 {
        self.by_script.iter().filter(|s| s.0 == name).map(|s| s.1).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `pgbench -n -b tpcb-like@1 -b select-only@1 -c 2 -j 2 -t 1000`
    /// (pgbench 15.18) against `turnstile serve --profile scalable`.
    const MIX: &str = "\
pgbench (15.18 (Debian 15.18-0+deb12u1), server 15.0 (turnstile))
transaction type: multiple scripts
scaling factor: 1
query mode: simple
number of clients: 2
number of threads: 2
maximum number of tries: 1
number of transactions per client: 1000
number of transactions actually processed: 2000/2000
number of failed transactions: 0 (0.000%)
latency average = 1.156 ms
initial connection time = 0.607 ms
tps = 1730.277433 (without initial connection time)
SQL script 1: <builtin: TPC-B (sort of)>
 - weight: 1 (targets 50.0% of total)
 - 976 transactions (48.8% of total, tps = 844.375387)
 - number of failed transactions: 0 (0.000%)
 - latency average = 1.572 ms
 - latency stddev = 1.933 ms
SQL script 2: <builtin: select only>
 - weight: 1 (targets 50.0% of total)
 - 1024 transactions (51.2% of total, tps = 885.902046)
 - number of failed transactions: 0 (0.000%)
 - latency average = 0.269 ms
 - latency stddev = 0.723 ms
";

    /// `pgbench -n -b select-only -c 2 -j 2 -t 250`, the same server.
    const ONE_SCRIPT: &str = "\
pgbench (15.18 (Debian 15.18-0+deb12u1), server 15.0 (turnstile))
transaction type: <builtin: select only>
scaling factor: 1
query mode: simple
number of clients: 2
number of threads: 2
maximum number of tries: 1
number of transactions per client: 250
number of transactions actually processed: 500/500
number of failed transactions: 0 (0.000%)
latency average = 0.175 ms
initial connection time = 0.773 ms
tps = 11402.248523 (without initial connection time)
";

    #[test]
    fn a_mix_is_counted_per_script() {
        let p = Processed::parse(MIX).unwrap();
        assert_eq!(p.total, 2000);
        assert_eq!(p.by_script, vec![(TPCB_LIKE.to_owned(), 976), (SELECT_ONLY.to_owned(), 1024)]);
        assert_eq!(p.of(TPCB_LIKE) + p.of(SELECT_ONLY), p.total);
        assert_eq!(p.of("<builtin: simple update>"), 0);
    }

    #[test]
    fn one_script_ran_every_transaction() {
        let p = Processed::parse(ONE_SCRIPT).unwrap();
        assert_eq!(p.total, 500);
        assert_eq!(p.by_script, vec![(SELECT_ONLY.to_owned(), 500)]);
    }

    #[test]
    fn output_without_a_summary_or_with_counts_past_the_total_is_refused() {
        assert_eq!(Processed::parse("pgbench: error: connection to server failed"), None);
        let lost = MIX.replace(" - 1024 transactions", " - 1023 transactions");
        let p = Processed::parse(&lost).expect("a per-script increment lost between threads");
        assert_eq!((p.total, p.of(SELECT_ONLY)), (2000, 1023), "the total stays pgbench's exact count");
        let wrong = MIX.replace(" - 1024 transactions", " - 1025 transactions");
        assert_eq!(Processed::parse(&wrong), None, "976 + 1025 is more than the 2000 processed");
        let garbled = MIX.replace(" - 1024 transactions", " - many transactions");
        assert_eq!(Processed::parse(&garbled), None);
    }
}
