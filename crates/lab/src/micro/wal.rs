//! `turnstile micro wal`: T threads inserting WAL records of B bytes into
//! one [`Wal`] in process, every 10th record a commit
//! ([`Wal::commit_flush`], `synchronous_commit` and `fsync` on), under
//! both `wal.insert` profiles: records per second, shared-lock
//! acquisitions per record and `fdatasync`s (issue 34).
//!
//! Each point opens a new WAL in a temporary directory with the
//! profile's preset `[wal]` knobs and runs for `--duration-ms`. The shared
//! acquisitions are the WAL's own count of the locks its code path took
//! (`classic`: the reservation spinlock and a `WALInsert` lock per record,
//! plus the flush's; `scalable`: none), not a computed figure. Every point
//! checks what it measured: after shutdown a reader finds exactly the
//! records inserted, each intact, in LSN order; otherwise the command
//! fails.

use crate::cli::CliError;
use crate::harness::run_workers;
use crate::report::{f, Section, Table};
use serde::Serialize;
use std::sync::Arc;
use std::time::{Duration, Instant};
use turnstile_storage::io::OsIo;
use turnstile_storage::wal::{Lsn, Wal, WalReader, WalRecord};
use turnstile_sync::{Config, Profile};

/// Threads of one point at most.
const THREADS_MAX: usize = 256;
/// Largest record payload accepted.
const RECORD_BYTES_MAX: usize = 1 << 20;
/// Every this-many-th record of a thread is a commit.
const COMMIT_EVERY: u64 = 10;

/// Options of `turnstile micro wal`.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// `--json`.
    #[command(flatten)]
    pub output: super::Output,
    /// Threads inserting at once.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 2, 8, 32, 64])]
    pub threads: Vec<usize>,
    /// Payload bytes of each record (the record adds a 32-byte header).
    #[arg(long, value_delimiter = ',', default_values_t = vec![100, 8192])]
    pub record_bytes: Vec<usize>,
    /// Milliseconds each point runs.
    #[arg(long, default_value_t = 1000)]
    pub duration_ms: u64,
}

impl Args {
    /// The short run `turnstile reproduce` uses.
    pub fn reproduce() -> Args {
        Args { output: super::Output::default(), threads: vec![1, 8, 32], record_bytes: vec![100], duration_ms: 500 }
    }
}

#[derive(Serialize, Debug, Clone)]
struct Row {
    profile: &'static str,
    threads: usize,
    record_bytes: usize,
    records_per_s: f64,
    shared_acquisitions_per_record: f64,
    fsyncs: u64,
}

/// Runs the benchmark.
pub fn run(args: &Args) -> Result<Section, CliError> {
    if args.threads.iter().any(|&t| t == 0 || t > THREADS_MAX) {
        return Err(format!("threads must be between 1 and {THREADS_MAX}").into());
    }
    if args.record_bytes.iter().any(|&b| b > RECORD_BYTES_MAX) || args.duration_ms == 0 {
        return Err(format!("record bytes must be at most {RECORD_BYTES_MAX} and the duration positive").into());
    }
    let mut rows = Vec::new();
    for &bytes in &args.record_bytes {
        for &t in &args.threads {
            for profile in Profile::ALL {
                rows.push(measure(profile, t, bytes, Duration::from_millis(args.duration_ms))?);
            }
        }
    }
    let json = serde_json::json!({ "results": rows });
    Ok(Section { json, text: render(&rows) })
}

fn payload(thread: usize, n: u64, len: usize) -> Vec<u8> {
    (0..len).map(|k| (thread * 7 + n as usize * 13 + k) as u8).collect()
}

fn measure(profile: Profile, threads: usize, bytes: usize, duration: Duration) -> Result<Row, CliError> {
    let dir = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
    let config = Config::preset(profile).wal;
    let start = Lsn::first(config.segment_size);
    let wal = Wal::open(dir.path(), Arc::new(OsIo), &config, start).map_err(|e| e.to_string())?;
    let wal = &wal;
    let t0 = Instant::now();
    let per_thread = run_workers(threads, |i| -> Result<_, CliError> {
        let data = payload(i, 0, bytes);
        Ok(move || -> Result<u64, CliError> {
            wal.enter_writer();
            let mut n = 0u64;
            let deadline = Instant::now() + duration;
            while Instant::now() < deadline {
                let end = wal
                    .insert(&WalRecord { xid: i as u64 + 1, rmgr: 1, info: 0, parts: &[&data] })
                    .map_err(|e| e.to_string())?;
                n += 1;
                if n % COMMIT_EVERY == 0 {
                    wal.commit_flush(end).map_err(|e| e.to_string())?;
                }
            }
            wal.leave_writer();
            Ok(n)
        })
    })?;
    let elapsed = t0.elapsed().as_secs_f64();
    let stats = wal.stats();
    wal.shutdown();
    let total: u64 = per_thread.iter().sum();
    check_read_back(dir.path(), start, config.segment_size, total, bytes)
        .map_err(|e| format!("{} {threads} threads {bytes} B: {e}", profile.name()))?;
    Ok(Row {
        profile: profile.name(),
        threads,
        record_bytes: bytes,
        records_per_s: total as f64 / elapsed,
        shared_acquisitions_per_record: stats.shared_acquisitions as f64 / total.max(1) as f64,
        fsyncs: stats.wal_sync,
    })
}

/// Reads the WAL back: `total` records of `bytes` payload bytes, each
/// the payload its thread (its xid) inserted, contiguous in LSN order.
fn check_read_back(
    dir: &std::path::Path,
    start: Lsn,
    segment_size: u64,
    total: u64,
    bytes: usize,
) -> Result<(), String> {
    let mut reader = WalReader::with_segment_size(dir, Arc::new(OsIo), start, segment_size);
    let (mut n, mut at) = (0u64, start);
    while let Some((s, e, h, p)) = reader.next().map_err(|e| e.to_string())? {
        if s != at || p.len() != bytes || p != payload(h.xid as usize - 1, 0, bytes) {
            return Err(format!("record {n} at {s} is not what was inserted"));
        }
        at = e;
        n += 1;
    }
    if n != total {
        return Err(format!("{n} records read back of {total} inserted"));
    }
    Ok(())
}

fn render(rows: &[Row]) -> String {
    let mut t = Table::new(
        "wal: T threads inserting B-byte records, every 10th a commit (fsync on); shared-lock acquisitions per record",
        &["profile", "threads", "record B", "records/s", "shared acq/record", "fsyncs"],
    );
    for r in rows {
        t.row(vec![
            r.profile.into(),
            r.threads.to_string(),
            r.record_bytes.to_string(),
            f(r.records_per_s, 0),
            f(r.shared_acquisitions_per_record, 3),
            r.fsyncs.to_string(),
        ]);
    }
    t.render()
}
