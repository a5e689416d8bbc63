//! `turnstile micro snapshot`: what taking a snapshot costs under each
//! profile's protocol (`txn.snapshot`), as the number of connected
//! sessions grows.
//!
//! `classic` takes PostgreSQL 15's snapshot (`procarray`: the `ProcArray`
//! lock shared, then a scan of every connected session's slot), so its
//! cost should grow with the sessions; `scalable` publishes and reads a
//! commit sequence number (`csn`: one store, two loads), so it should not.
//! One `Snapshots` per point, built as the engine builds it
//! (`Config::preset`: the profile's protocol and lock policy), with
//! `sessions` slots registered; the measuring thread is one of them.
//!
//! 1. **Idle sessions.** The other sessions are connected and idle. The
//!    measuring thread times `take(slot)` + `release(slot)` in a tight
//!    loop; the median of `runs` timing runs is kept.
//! 2. **Busy sessions.** `busy` more sessions each loop assigning an id and
//!    committing (the commit path the snapshot path contends with) while
//!    the measuring thread takes snapshots. On a machine with fewer cores
//!    than threads the busy threads also take the measuring thread's CPU:
//!    `ns_per_snapshot` is wall-clock time, `cpu_ns_per_snapshot` the
//!    measuring thread's own CPU time (`CLOCK_THREAD_CPUTIME_ID`), which
//!    leaves out the time it was descheduled (and the time it slept on the
//!    lock).
//!
//! Every row's `vs_one_session` is its wall-clock cost over the same
//! profile's cost with one idle session (always measured).

use crate::cli::CliError;
use crate::harness::run_workers;
use crate::report::{f, Section, Table};
use serde::Serialize;
use std::hint::black_box;
use std::time::Instant;
use turnstile_engine::mvcc::{Snapshots, FIRST_XID};
use turnstile_sync::sync::counter::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use turnstile_sync::{Config, Profile};

/// Sessions of one point at most (the lab's limit, far above
/// `lock.max_backends`' default of 256).
const SESSIONS_MAX: usize = 4096;

/// Busy sessions at most.
const BUSY_MAX: usize = 256;

/// Options of `turnstile micro snapshot`.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// `--json`.
    #[command(flatten)]
    pub output: super::Output,
    /// Connected idle sessions to measure with (the measuring one
    /// included; 1 is always measured, as the reference).
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 8, 64, 256])]
    pub sessions: Vec<usize>,
    /// Busy sessions (assigning ids and committing) of the contended row
    /// (0: no such row).
    #[arg(long, default_value_t = 8)]
    pub busy: usize,
    /// Snapshots per timing run with idle sessions.
    #[arg(long, default_value_t = 200_000)]
    pub iterations: u64,
    /// Snapshots per timing run with busy sessions (long enough for the
    /// scheduler to run every busy session during it: tens of ms).
    #[arg(long, default_value_t = 1_000_000)]
    pub busy_iterations: u64,
    /// Timing runs per point (the median is kept).
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
}

impl Args {
    /// The short run `turnstile reproduce` uses.
    pub fn reproduce() -> Args {
        Args {
            output: super::Output::default(),
            sessions: vec![1, 8, 64, 256],
            busy: 8,
            iterations: 50_000,
            busy_iterations: 200_000,
            runs: 3,
        }
    }
}

#[derive(Serialize, Debug, Clone)]
struct Row {
    profile: &'static str,
    protocol: &'static str,
    sessions: usize,
    busy: usize,
    ns_per_snapshot: f64,
    vs_one_session: f64,
    cpu_ns_per_snapshot: f64,
    /// Commits per second of the busy sessions during the measurement.
    busy_commits_per_s: f64,
}

/// One point's medians.
struct Measured {
    wall_ns: f64,
    cpu_ns: f64,
    busy_commits_per_s: f64,
}

/// Runs the benchmark.
pub fn run(args: &Args) -> Result<Section, CliError> {
    if args.iterations == 0 || args.busy_iterations == 0 || args.runs == 0 {
        return Err("iterations, busy-iterations and runs must be positive".into());
    }
    if args.sessions.iter().any(|&n| n == 0 || n > SESSIONS_MAX) {
        return Err(format!("sessions must be between 1 and {SESSIONS_MAX}").into());
    }
    if args.busy > BUSY_MAX {
        return Err(format!("busy must be at most {BUSY_MAX}").into());
    }
    let mut sessions = args.sessions.clone();
    if !sessions.contains(&1) {
        sessions.insert(0, 1);
    }
    let mut rows = Vec::new();
    for profile in Profile::ALL {
        let config = Config::preset(profile);
        let first = rows.len();
        for &n in &sessions {
            let m = measure(&config, n, 0, args.iterations, args.runs)?;
            rows.push(row(profile, &config, n, 0, &m));
        }
        if args.busy > 0 {
            let m = measure(&config, args.busy + 1, args.busy, args.busy_iterations, args.runs)?;
            rows.push(row(profile, &config, args.busy + 1, args.busy, &m));
        }
        let one = rows[first..].iter().find(|r| r.sessions == 1 && r.busy == 0).map_or(f64::NAN, |r| r.ns_per_snapshot);
        for r in &mut rows[first..] {
            r.vs_one_session = r.ns_per_snapshot / one;
        }
    }
    let json = serde_json::json!({ "bench": "snapshot", "results": rows });
    Ok(Section { json, text: render(&rows) })
}

fn row(profile: Profile, config: &Config, sessions: usize, busy: usize, m: &Measured) -> Row {
    Row {
        profile: profile.name(),
        protocol: config.txn.snapshot.name(),
        sessions,
        busy,
        ns_per_snapshot: m.wall_ns,
        vs_one_session: f64::NAN,
        cpu_ns_per_snapshot: m.cpu_ns,
        busy_commits_per_s: m.busy_commits_per_s,
    }
}

/// Sets the flag when dropped: however the measuring thread ends, the busy
/// threads stop.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// What one thread of a point does.
type Work<'a> = Box<dyn FnOnce() -> Result<Option<Measured>, CliError> + 'a>;

/// Times snapshots on slot 0 of a `Snapshots` with `sessions` connected
/// sessions, the last `busy` of them committing in a loop. The threads run
/// on the lab harness ([`run_workers`]): worker 0 measures, workers
/// `1..=busy` commit.
fn measure(config: &Config, sessions: usize, busy: usize, iterations: u64, runs: usize) -> Result<Measured, CliError> {
    assert!(busy < sessions, "the measuring session is not a busy one");
    let snapshots = Snapshots::new(config.txn.snapshot, config.lwlock.policy, sessions, FIRST_XID);
    for slot in 0..sessions {
        snapshots.register(slot);
    }
    let stop = AtomicBool::new(false);
    let started = AtomicUsize::new(0);
    let commits = AtomicU64::new(0);
    let (s, stop, started, commits) = (&snapshots, &stop, &started, &commits);
    let results = run_workers(busy + 1, |i| -> Result<Work<'_>, CliError> {
        if i > 0 {
            let slot = sessions - i;
            return Ok(Box::new(move || {
                let mut n = 0u64;
                loop {
                    let xid = s.assign_xid(slot)?;
                    s.commit(slot, xid)?;
                    n += 1;
                    // Counted as started once it has committed: the
                    // timing begins with every busy session running.
                    if n == 1 {
                        started.fetch_add(1, Ordering::Relaxed);
                    }
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                }
                commits.fetch_add(n, Ordering::Relaxed);
                Ok(None)
            }));
        }
        Ok(Box::new(move || {
            let _stop_busy = StopOnDrop(stop);
            while started.load(Ordering::Relaxed) < busy {
                std::thread::yield_now();
            }
            let clock = Instant::now();
            for _ in 0..iterations / 10 + 1 {
                black_box(s.take(0));
                s.release(0);
            }
            let (mut wall, mut cpu) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
            for _ in 0..runs {
                let (t0, c0) = (Instant::now(), thread_cpu_ns());
                for _ in 0..iterations {
                    black_box(s.take(0));
                    s.release(0);
                }
                cpu.push(thread_cpu_ns().saturating_sub(c0) as f64 / iterations as f64);
                wall.push(t0.elapsed().as_nanos() as f64 / iterations as f64);
            }
            let elapsed = clock.elapsed().as_secs_f64();
            Ok(Some(Measured { wall_ns: median(&mut wall), cpu_ns: median(&mut cpu), busy_commits_per_s: elapsed }))
        }))
    })?;
    let mut m = results.into_iter().flatten().next().ok_or("the measuring thread returned nothing")?;
    // The busy threads have all stopped now: their commits over the window.
    m.busy_commits_per_s = commits.load(Ordering::Relaxed) as f64 / m.busy_commits_per_s;
    Ok(m)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The calling thread's CPU time in nanoseconds (0 if the clock fails).
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable `timespec` that outlives the call,
    // and `CLOCK_THREAD_CPUTIME_ID` is a clock every Linux kernel has.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn render(rows: &[Row]) -> String {
    let mut t = Table::new(
        "Snapshot cost: take + release on one session (median of runs; cpu ns leaves out time descheduled)",
        &[
            "profile",
            "protocol",
            "sessions",
            "busy",
            "ns/snapshot",
            "vs 1 session",
            "cpu ns/snapshot",
            "busy commits/s",
        ],
    );
    for r in rows {
        t.row(vec![
            r.profile.into(),
            r.protocol.into(),
            r.sessions.to_string(),
            r.busy.to_string(),
            f(r.ns_per_snapshot, 1),
            f(r.vs_one_session, 2),
            f(r.cpu_ns_per_snapshot, 1),
            if r.busy > 0 { f(r.busy_commits_per_s, 0) } else { "-".into() },
        ]);
    }
    t.render()
}
