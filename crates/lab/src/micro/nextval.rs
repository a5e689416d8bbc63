//! `turnstile micro nextval`: T sessions calling `nextval` on one sequence,
//! under both profiles: calls per second and shared-lock acquisitions per
//! call (issue 36).
//!
//! Each point opens the SQL layer's sequence registry in a temporary
//! directory with the profile's `txn.sequence_block`, creates one sequence
//! (`CACHE 1`, PostgreSQL's default) and runs T threads, each with its own
//! session state ([`SeqSession`]), calling `nextval` `calls` times — the
//! same code path a SQL `nextval` runs, the sequence's file and its
//! logging ahead included. `classic` takes the sequence's lock on every
//! call (PostgreSQL 15's buffer content lock), so it should count 1
//! acquisition per call; `scalable` takes blocks of values by a
//! compare-and-swap, so it should count 0. `log_writes_per_call` counts
//! the file writes (the values logged ahead).
//!
//! Every point checks what it measured: all values distinct, and each
//! thread's increasing; otherwise the command fails.

use crate::cli::CliError;
use crate::harness::run_workers;
use crate::report::{f, Section, Table};
use serde::Serialize;
use std::collections::HashSet;
use std::time::Instant;
use turnstile_sql::sequence::{SeqDef, SeqSession, SeqType, Sequences};
use turnstile_sync::{Config, Profile};

/// Threads of one point at most.
const THREADS_MAX: usize = 256;

/// The database OID the benchmark's sequence belongs to.
const DB: u32 = 1;

/// Options of `turnstile micro nextval`.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// `--json`.
    #[command(flatten)]
    pub output: super::Output,
    /// Threads (sessions) calling `nextval` at once.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 2, 8, 32])]
    pub threads: Vec<usize>,
    /// `nextval` calls per thread.
    #[arg(long, default_value_t = 20_000)]
    pub calls: u64,
}

impl Args {
    /// The short run `turnstile reproduce` uses.
    pub fn reproduce() -> Args {
        Args { output: super::Output::default(), threads: vec![1, 2, 8, 32], calls: 5_000 }
    }
}

#[derive(Serialize, Debug, Clone)]
struct Row {
    profile: &'static str,
    threads: usize,
    calls_per_s: f64,
    shared_acquisitions_per_call: f64,
    log_writes_per_call: f64,
}

/// Runs the benchmark.
pub fn run(args: &Args) -> Result<Section, CliError> {
    if args.calls == 0 || args.threads.iter().any(|&t| t == 0 || t > THREADS_MAX) {
        return Err(format!("calls must be positive and threads between 1 and {THREADS_MAX}").into());
    }
    let mut rows = Vec::new();
    for profile in Profile::ALL {
        let config = Config::preset(profile);
        for &t in &args.threads {
            rows.push(measure(profile, &config, t, args.calls)?);
        }
    }
    let json = serde_json::json!({ "bench": "nextval", "results": rows });
    Ok(Section { json, text: render(&rows) })
}

fn measure(profile: Profile, config: &Config, threads: usize, calls: u64) -> Result<Row, CliError> {
    let dir = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
    let seqs = Sequences::open(dir.path(), config.txn.sequence_block).map_err(|e| e.message)?;
    let seq = seqs.create(DB, "micro_seq", SeqDef::new(SeqType::Int8), None).map_err(|e| e.message)?;
    let seqs = &seqs;
    let t0 = Instant::now();
    let per_thread = run_workers(threads, |_| -> Result<_, CliError> {
        Ok(move || -> Result<Vec<i64>, CliError> {
            let mut session = SeqSession::default();
            let mut got = Vec::with_capacity(calls as usize);
            for _ in 0..calls {
                got.push(session.nextval(seqs, DB, "micro_seq").map_err(|e| e.message)?);
            }
            Ok(got)
        })
    })?;
    let elapsed = t0.elapsed().as_secs_f64();
    let total = threads as u64 * calls;
    let mut all = HashSet::with_capacity(total as usize);
    for values in &per_thread {
        if values.windows(2).any(|w| w[0] >= w[1]) {
            return Err(format!("{}: a session's nextval values did not increase", profile.name()).into());
        }
        all.extend(values.iter().copied());
    }
    if all.len() as u64 != total {
        return Err(format!("{}: {} distinct values of {total} nextval calls", profile.name(), all.len()).into());
    }
    Ok(Row {
        profile: profile.name(),
        threads,
        calls_per_s: total as f64 / elapsed,
        shared_acquisitions_per_call: seq.acquisitions() as f64 / total as f64,
        log_writes_per_call: seq.log_writes() as f64 / total as f64,
    })
}

fn render(rows: &[Row]) -> String {
    let mut t = Table::new(
        "nextval: T sessions on one sequence (CACHE 1); shared-lock acquisitions and file writes per call",
        &["profile", "threads", "calls/s", "shared acq/call", "log writes/call"],
    );
    for r in rows {
        t.row(vec![
            r.profile.into(),
            r.threads.to_string(),
            f(r.calls_per_s, 0),
            f(r.shared_acquisitions_per_call, 4),
            f(r.log_writes_per_call, 4),
        ]);
    }
    t.render()
}
