//! `turnstile micro lwlock`: what an `LwLock` costs, and whether a writer
//! starves (Postgres Pro 2018).
//!
//! 1. **Uncontended cost.** Shared and exclusive lock+unlock in a tight
//!    loop, for both policies (`fair`, `barging`), with `parking_lot::RwLock` read and write
//!    lock+unlock timed in the same run as the reference. Rounds alternate
//!    between the variants and the best round of each is kept, so a noisy
//!    neighbour slows all variants alike rather than one.
//! 2. **Starvation probe.** `readers` threads take the lock shared
//!    back-to-back, each holding it for `hold_ns`; one writer asks for it
//!    exclusive every `writer_interval_us`. On a 2-core machine 8 readers
//!    oversubscribe the cores, so a reader is often descheduled while it
//!    holds the lock — the situation of Postgres Pro 2018's 300-core machine, where
//!    the shared count on a hot `BufferMapping` partition never fell to
//!    zero. Reported: the writer's wait p50/p99/max and its acquisitions per
//!    second under each policy. The threads run on the lab harness
//!    ([`crate::harness::run_workers`]): worker 0 is the writer, the others
//!    are the readers.

use crate::cli::CliError;
use crate::harness::run_workers;
use crate::report::{f, Section, Table};
use hdrhistogram::Histogram;
use serde::Serialize;
use std::hint::black_box;
use std::time::{Duration, Instant};
use turnstile_sync::sync::counter::{AtomicBool, Ordering};
use turnstile_sync::{LwLock, LwLockPolicy, Tranche};

/// Options of `turnstile micro lwlock`.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// `--json`.
    #[command(flatten)]
    pub output: super::Output,
    /// Lock+unlock pairs per timing round of the uncontended test.
    #[arg(long, default_value_t = 2_000_000)]
    pub iterations: u64,
    /// Timing rounds per variant (the best one is kept).
    #[arg(long, default_value_t = 5)]
    pub rounds: u32,
    /// Reader threads in the starvation probe.
    #[arg(long, default_value_t = 8)]
    pub readers: usize,
    /// How long each reader holds the shared lock, in nanoseconds.
    #[arg(long, default_value_t = 2_000)]
    pub hold_ns: u64,
    /// Interval between the writer's exclusive requests, in microseconds.
    #[arg(long, default_value_t = 1_000)]
    pub writer_interval_us: u64,
    /// Duration of the probe under each policy, in seconds.
    #[arg(long, default_value_t = 3.0)]
    pub seconds: f64,
}

impl Args {
    /// The short run `turnstile reproduce` uses.
    pub fn reproduce() -> Args {
        Args {
            output: super::Output::default(),
            iterations: 1_000_000,
            rounds: 3,
            readers: 8,
            hold_ns: 2_000,
            writer_interval_us: 1_000,
            seconds: 1.5,
        }
    }
}

#[derive(Serialize, Debug, Clone)]
struct CostRow {
    name: &'static str,
    policy: &'static str,
    ns_per_op: f64,
    ratio_to_ref: f64,
}

#[derive(Serialize, Debug, Clone)]
struct Percentiles {
    p50: f64,
    p99: f64,
    max: f64,
}

#[derive(Serialize, Debug, Clone)]
struct StarvationRow {
    policy: &'static str,
    readers: usize,
    hold_ns: u64,
    writer_interval_us: u64,
    seconds: f64,
    writer_wait_us: Percentiles,
    writer_acquisitions: u64,
    writer_acquisitions_per_s: f64,
    reader_acquisitions_per_s: f64,
}

/// Runs the benchmark.
pub fn run(args: &Args) -> Result<Section, CliError> {
    if args.iterations == 0 || args.rounds == 0 || args.readers == 0 || args.seconds <= 0.0 {
        return Err("iterations, rounds, readers and seconds must be positive".into());
    }
    let costs = uncontended(args);
    let starvation: Vec<StarvationRow> =
        LwLockPolicy::ALL.into_iter().map(|p| probe(args, p)).collect::<Result<_, _>>()?;
    let json = serde_json::json!({
        "bench": "lwlock",
        "results": costs,
        "starvation": starvation,
    });
    Ok(Section { json, text: render(&costs, &starvation) })
}

/// Times `op` over `iterations` calls, returning ns per call.
fn time_loop(iterations: u64, mut op: impl FnMut()) -> f64 {
    let start = Instant::now();
    for _ in 0..iterations {
        op();
    }
    start.elapsed().as_nanos() as f64 / iterations as f64
}

fn uncontended(args: &Args) -> Vec<CostRow> {
    let locks = LwLockPolicy::ALL.map(|p| LwLock::new(Tranche::Bench, p, 0u64));
    let reference = parking_lot::RwLock::new(0u64);
    type Variant<'a> = (&'static str, &'static str, Box<dyn Fn() + 'a>);
    let mut variants: Vec<Variant> =
        vec![("shared_lock_unlock", "parking_lot", Box::new(|| drop(black_box(reference.read()))))];
    for lock in &locks {
        variants.push((
            "shared_lock_unlock",
            lock.policy().name(),
            Box::new(move || drop(black_box(lock.lock_shared()))),
        ));
    }
    variants.push(("exclusive_lock_unlock", "parking_lot", Box::new(|| drop(black_box(reference.write())))));
    for lock in &locks {
        variants.push((
            "exclusive_lock_unlock",
            lock.policy().name(),
            Box::new(move || drop(black_box(lock.lock_exclusive()))),
        ));
    }
    let mut best = vec![f64::INFINITY; variants.len()];
    for v in &variants {
        time_loop(args.iterations / 10 + 1, &v.2); // warm-up
    }
    for _ in 0..args.rounds {
        for (i, v) in variants.iter().enumerate() {
            best[i] = best[i].min(time_loop(args.iterations, &v.2));
        }
    }
    variants
        .iter()
        .enumerate()
        .map(|(i, (name, policy, _))| {
            let reference_ns =
                variants.iter().position(|(n, p, _)| n == name && *p == "parking_lot").map_or(f64::NAN, |r| best[r]);
            CostRow { name, policy, ns_per_op: best[i], ratio_to_ref: best[i] / reference_ns }
        })
        .collect()
}

/// Busy-holds the lock for about `ns` nanoseconds (a real critical section,
/// not a sleep: the holder stays runnable, as a backend reading a page does).
fn hold_for(ns: u64) {
    let start = Instant::now();
    while (start.elapsed().as_nanos() as u64) < ns {
        std::hint::spin_loop();
    }
}

/// Sets the flag when dropped.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// What one probe thread measured.
enum Measured {
    Writer { waits: Histogram<u64>, acquisitions: u64, elapsed: f64 },
    Reader { acquisitions: u64 },
}

fn probe(args: &Args, policy: LwLockPolicy) -> Result<StarvationRow, CliError> {
    let lock = LwLock::new(Tranche::Bench, policy, 0u64);
    let stop = AtomicBool::new(false);
    let duration = Duration::from_secs_f64(args.seconds);
    let interval = Duration::from_micros(args.writer_interval_us);
    let (lock, stop) = (&lock, &stop);
    let measured =
        run_workers(args.readers + 1, |i| -> Result<Box<dyn FnOnce() -> Result<Measured, CliError>>, CliError> {
            if i > 0 {
                let hold_ns = args.hold_ns;
                return Ok(Box::new(move || {
                    let mut acquisitions = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        let g = lock.lock_shared();
                        hold_for(hold_ns);
                        black_box(*g);
                        drop(g);
                        acquisitions += 1;
                    }
                    Ok(Measured::Reader { acquisitions })
                }));
            }
            Ok(Box::new(move || {
                // However the writer ends (done, error, panic), the readers stop.
                let _stop_readers = StopOnDrop(stop);
                // Bounds, not auto-resize: `saturating_record` clamps to the
                // current range of an auto-resizing histogram, which would hide
                // the longest waits.
                let mut waits = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3)?;
                let start = Instant::now();
                let mut next = start;
                let mut acquisitions = 0u64;
                while start.elapsed() < duration {
                    next += interval;
                    // Wait for the tick on the CPU, not in the kernel: a sleeping
                    // writer would measure how fast the scheduler wakes it among 8
                    // busy readers, not how the lock treats it.
                    while Instant::now() < next {
                        std::hint::spin_loop();
                    }
                    let asked = Instant::now();
                    let mut g = lock.lock_exclusive();
                    let waited = asked.elapsed();
                    *g += 1;
                    drop(g);
                    waits.saturating_record(waited.as_micros() as u64);
                    acquisitions += 1;
                }
                let elapsed = start.elapsed().as_secs_f64();
                Ok(Measured::Writer { waits, acquisitions, elapsed })
            }))
        });
    let mut writer = None;
    let mut reader_acquisitions = 0u64;
    for m in measured? {
        match m {
            Measured::Writer { waits, acquisitions, elapsed } => writer = Some((waits, acquisitions, elapsed)),
            Measured::Reader { acquisitions } => reader_acquisitions += acquisitions,
        }
    }
    let (waits, acquisitions, elapsed) = writer.ok_or("the probe ran no writer")?;
    Ok(StarvationRow {
        policy: policy.name(),
        readers: args.readers,
        hold_ns: args.hold_ns,
        writer_interval_us: args.writer_interval_us,
        seconds: elapsed,
        writer_wait_us: Percentiles {
            p50: waits.value_at_quantile(0.5) as f64,
            p99: waits.value_at_quantile(0.99) as f64,
            max: waits.max() as f64,
        },
        writer_acquisitions: acquisitions,
        writer_acquisitions_per_s: acquisitions as f64 / elapsed,
        reader_acquisitions_per_s: reader_acquisitions as f64 / elapsed,
    })
}

fn render(costs: &[CostRow], starvation: &[StarvationRow]) -> String {
    let mut t = Table::new(
        "LWLock, uncontended lock+unlock (reference: parking_lot::RwLock, same run)",
        &["operation", "policy", "ns/op", "ratio to ref"],
    );
    for c in costs {
        t.row(vec![c.name.into(), c.policy.into(), f(c.ns_per_op, 1), f(c.ratio_to_ref, 2)]);
    }
    let mut s = Table::new(
        format!(
            "LWLock starvation probe (Postgres Pro 2018): {} readers back-to-back, writer every {} us",
            starvation.first().map_or(0, |r| r.readers),
            starvation.first().map_or(0, |r| r.writer_interval_us)
        ),
        &["policy", "writer wait p50 us", "p99 us", "max us", "writer acq/s", "reader acq/s"],
    );
    for r in starvation {
        s.row(vec![
            r.policy.into(),
            f(r.writer_wait_us.p50, 0),
            f(r.writer_wait_us.p99, 0),
            f(r.writer_wait_us.max, 0),
            f(r.writer_acquisitions_per_s, 0),
            f(r.reader_acquisitions_per_s, 0),
        ]);
    }
    format!("{}\n{}", t.render(), s.render())
}
