//! `turnstile micro fk`: T sessions inserting children of one hot parent
//! row, under both profiles: inserts per second and acquisitions of the
//! shared row-lock table per insert (issue 36).
//!
//! Each point opens a SQL engine in a temporary directory under the
//! profile's preset, creates `parent (id int PRIMARY KEY)` with one row
//! and `child (id int PRIMARY KEY, pid int REFERENCES parent)`, and runs T
//! threads, each with its own SQL session, executing the prepared
//! `INSERT INTO child VALUES ($1, 1)` `inserts` times, each its own
//! transaction — the path a client's insert takes, the foreign key's check
//! included: it locks parent row 1 `FOR KEY SHARE` until the insert
//! commits. Under `classic` (`txn.key_share_fast_path = false`) every
//! insert takes that lock in the shared row-lock table and releases it
//! there (PostgreSQL's multixact role): 2 acquisitions of the table's
//! shard lock per insert, all on the one parent row's shard. Under
//! `scalable` the lock stays in the session's own slots: 0 (see
//! `turnstile_engine::keyshare`).
//!
//! Every point checks what it measured: the child table holds exactly
//! the rows inserted; otherwise the command fails.

use crate::cli::CliError;
use crate::harness::run_workers;
use crate::report::{f, Section, Table};
use serde::Serialize;
use std::time::Instant;
use turnstile_sql::{Outcome, Param, SqlEngine, SqlSession};
use turnstile_sync::{Config, Profile};

/// Threads of one point at most.
const THREADS_MAX: usize = 256;

/// Options of `turnstile micro fk`.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// `--json`.
    #[command(flatten)]
    pub output: super::Output,
    /// Threads (sessions) inserting children at once.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 2, 8, 32])]
    pub threads: Vec<usize>,
    /// Inserts per thread (enough that a point lasts seconds, not the
    /// scheduler's tenths of one).
    #[arg(long, default_value_t = 10_000)]
    pub inserts: u64,
}

impl Args {
    /// The short run `turnstile reproduce` uses.
    pub fn reproduce() -> Args {
        Args { output: super::Output::default(), threads: vec![1, 2, 8, 32], inserts: 300 }
    }
}

#[derive(Serialize, Debug, Clone)]
struct Row {
    profile: &'static str,
    threads: usize,
    inserts_per_s: f64,
    shared_acquisitions_per_insert: f64,
}

/// Runs the benchmark.
pub fn run(args: &Args) -> Result<Section, CliError> {
    if args.inserts == 0 || args.threads.iter().any(|&t| t == 0 || t > THREADS_MAX) {
        return Err(format!("inserts must be positive and threads between 1 and {THREADS_MAX}").into());
    }
    let mut rows = Vec::new();
    for profile in Profile::ALL {
        for &t in &args.threads {
            rows.push(measure(profile, t, args.inserts)?);
        }
    }
    let json = serde_json::json!({ "bench": "fk", "results": rows });
    Ok(Section { json, text: render(&rows) })
}

fn sql(session: &mut SqlSession, text: &str) -> Result<Outcome, CliError> {
    let stmt = session.prepare(text, &[])?;
    Ok(session.execute(&stmt, &[])?)
}

fn measure(profile: Profile, threads: usize, inserts: u64) -> Result<Row, CliError> {
    let dir = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
    let mut config = Config::preset(profile);
    config.lock.max_backends = config.lock.max_backends.max(threads as u32 + 4);
    let engine = SqlEngine::open(dir.path(), config)?;
    {
        let mut s = SqlSession::connect(&engine, "postgres", "postgres", "turnstile micro fk", None)?;
        sql(&mut s, "CREATE TABLE parent (id int PRIMARY KEY)")?;
        sql(&mut s, "CREATE TABLE child (id int PRIMARY KEY, pid int REFERENCES parent)")?;
        sql(&mut s, "INSERT INTO parent VALUES (1)")?;
    }
    let engine = &engine;
    let before = engine.engine().key_shares().shared_acquisitions();
    let spans = run_workers(threads, |i| -> Result<_, CliError> {
        let mut session = SqlSession::connect(engine, "postgres", "postgres", "turnstile micro fk", None)?;
        let stmt = session.prepare("INSERT INTO child VALUES ($1, 1)", &[])?;
        let first = i as u64 * inserts;
        Ok(move || -> Result<(Instant, Instant), CliError> {
            let t0 = Instant::now();
            for k in first..first + inserts {
                session.execute(&stmt, &[Param::text(k.to_string())])?;
            }
            Ok((t0, Instant::now()))
        })
    })?;
    let acquisitions = engine.engine().key_shares().shared_acquisitions() - before;
    let start = spans.iter().map(|s| s.0).min().ok_or("no thread ran")?;
    let end = spans.iter().map(|s| s.1).max().ok_or("no thread ran")?;
    let total = threads as u64 * inserts;
    let mut s = SqlSession::connect(engine, "postgres", "postgres", "turnstile micro fk", None)?;
    let counted = match sql(&mut s, "SELECT count(*) FROM child")? {
        Outcome::Rows { rows, .. } => rows.to_vec().first().and_then(|r| r.first().cloned().flatten()),
        _ => None,
    };
    if counted.as_deref() != Some(total.to_string().as_str()) {
        return Err(format!("{}: the child table holds {counted:?} rows, not {total}", profile.name()).into());
    }
    Ok(Row {
        profile: profile.name(),
        threads,
        inserts_per_s: total as f64 / end.duration_since(start).as_secs_f64().max(1e-9),
        shared_acquisitions_per_insert: acquisitions as f64 / total as f64,
    })
}

fn render(rows: &[Row]) -> String {
    let mut t = Table::new(
        "fk: T sessions inserting children of one parent row; acquisitions of the shared row-lock table per insert",
        &["profile", "threads", "inserts/s", "shared acq/insert"],
    );
    for r in rows {
        t.row(vec![
            r.profile.into(),
            r.threads.to_string(),
            f(r.inserts_per_s, 0),
            f(r.shared_acquisitions_per_insert, 4),
        ]);
    }
    t.render()
}
