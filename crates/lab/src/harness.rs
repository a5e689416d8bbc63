//! The client harness every workload runs on: N client threads, a warm-up,
//! a measured phase of fixed duration, per-transaction latency histograms,
//! and a wait-event sampler reading the activity slots while clients run
//! (the `SELECT wait_event_type, wait_event, count(*) … GROUP BY` of seed
//! 004).
//!
//! Clients are real threads; with more clients than cores the machine is
//! oversubscribed on purpose (docs/architecture.md, "The lab"): a lock holder that is
//! descheduled makes every waiter wait, which is how contention shows on a
//! 2-core machine.

use crate::cli::CliError;
use hdrhistogram::Histogram;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};
use turnstile_sync::activity::{ActivityTable, BackendState};
use turnstile_sync::sync::counter::{AtomicBool, AtomicUsize, Ordering};

/// How long and how wide one measured point is.
#[derive(Clone, Debug)]
pub struct RunSpec {
    /// Client threads.
    pub clients: usize,
    /// Warm-up before measuring (clients run, nothing is recorded).
    pub warmup: Duration,
    /// Measured phase.
    pub duration: Duration,
    /// Interval between activity samples.
    pub sample_every: Duration,
}

/// Latency percentiles, in microseconds.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Latency {
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Maximum.
    pub max: f64,
}

impl Latency {
    /// Percentiles of `h` (recorded in nanoseconds), in microseconds.
    pub fn from_ns_histogram(h: &Histogram<u64>) -> Latency {
        if h.is_empty() {
            return Latency::default();
        }
        Latency {
            p50: h.value_at_quantile(0.5) as f64 / 1000.0,
            p99: h.value_at_quantile(0.99) as f64 / 1000.0,
            max: h.max() as f64 / 1000.0,
        }
    }
}

/// What one measured point produced.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    /// Transactions completed in the measured phase.
    pub transactions: u64,
    /// Length of the measured phase.
    pub elapsed: Duration,
    /// Per-transaction latency (nanoseconds).
    pub latency_ns: Histogram<u64>,
    /// Average number of active backends per sample, by
    /// `wait_event_type:wait_event` (`CPU` for active and not waiting).
    pub wait_events: BTreeMap<String, f64>,
    /// Samples taken.
    pub samples: u64,
}

impl RunOutcome {
    /// Transactions per second.
    pub fn tps(&self) -> f64 {
        self.transactions as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// A new latency histogram: 1 ns to 1 h, 3 significant digits.
pub fn histogram() -> Histogram<u64> {
    // Fixed bounds: `saturating_record` on an auto-resizing histogram clamps
    // to its current range and would hide the slowest transactions.
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("constant bounds are valid")
}

/// Runs `spec.clients` clients. `make_client(i, measuring)` is called on
/// client thread `i` and returns its transaction function (it typically
/// opens a session there); `measuring` is true during the measured phase,
/// for clients that record figures of their own. `on_measure` is called on the calling thread when the
/// measured phase starts and when it ends (`true`, then `false`), for
/// counter snapshots. A client error stops the run and is returned.
pub fn run_clients<C, M>(
    spec: &RunSpec,
    activity: Option<Arc<ActivityTable>>,
    make_client: M,
    mut on_measure: impl FnMut(bool),
) -> Result<RunOutcome, CliError>
where
    M: Fn(usize, Arc<AtomicBool>) -> Result<C, CliError> + Sync,
    C: FnMut() -> Result<(), CliError>,
{
    if spec.clients == 0 {
        return Err("clients must be at least 1".into());
    }
    let measuring = Arc::new(AtomicBool::new(false));
    let stop = AtomicBool::new(false);
    let failed: Mutex<Option<CliError>> = Mutex::new(None);
    let ready = Barrier::new(spec.clients + 1);
    let alive = AtomicUsize::new(spec.clients);
    let results: Mutex<Vec<(u64, Histogram<u64>)>> = Mutex::new(Vec::new());

    std::thread::scope(|s| -> Result<RunOutcome, CliError> {
        for i in 0..spec.clients {
            let (measuring, stop, failed, ready, alive, results, make_client) =
                (&measuring, &stop, &failed, &ready, &alive, &results, &make_client);
            s.spawn(move || {
                // A panic while a client is set up must still reach the start
                // barrier, or every other thread would wait there forever.
                let made =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| make_client(i, Arc::clone(measuring))))
                        .unwrap_or_else(|_| Err(format!("client {i} panicked while it was being set up").into()));
                let mut client = match made {
                    Ok(c) => Some(c),
                    Err(e) => {
                        failed.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                        None
                    }
                };
                ready.wait();
                let mut hist = histogram();
                let mut count = 0u64;
                if let Some(client) = client.as_mut() {
                    while !stop.load(Ordering::Relaxed) {
                        let started = Instant::now();
                        if let Err(e) = client() {
                            failed.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                            stop.store(true, Ordering::Relaxed);
                            break;
                        }
                        if measuring.load(Ordering::Relaxed) {
                            hist.saturating_record(started.elapsed().as_nanos() as u64);
                            count += 1;
                        }
                    }
                }
                drop(client);
                results.lock().unwrap_or_else(|p| p.into_inner()).push((count, hist));
                alive.fetch_sub(1, Ordering::Relaxed);
            });
        }
        ready.wait();
        if let Some(e) = failed.lock().unwrap_or_else(|p| p.into_inner()).take() {
            stop.store(true, Ordering::Relaxed);
            return Err(e);
        }
        sleep_unless(&stop, spec.warmup);
        on_measure(true);
        measuring.store(true, Ordering::Relaxed);
        let started = Instant::now();
        let (wait_events, samples) =
            sample_until(activity.as_deref(), &stop, started + spec.duration, spec.sample_every);
        measuring.store(false, Ordering::Relaxed);
        let elapsed = started.elapsed();
        on_measure(false);
        stop.store(true, Ordering::Relaxed);
        while alive.load(Ordering::Relaxed) > 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        if let Some(e) = failed.lock().unwrap_or_else(|p| p.into_inner()).take() {
            return Err(e);
        }
        let mut latency_ns = histogram();
        let mut transactions = 0;
        for (count, h) in results.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            transactions += count;
            latency_ns.add(h).map_err(|e| format!("histogram merge: {e}"))?;
        }
        Ok(RunOutcome { transactions, elapsed, latency_ns, wait_events, samples })
    })
}

/// Runs `workers` threads of fixed work, for micro-benchmarks that measure
/// an amount of work rather than a fixed duration, or whose threads play
/// different roles. `setup(i)` runs on thread `i` and returns its work;
/// every thread then waits at one barrier, so all start together (a setup
/// error or panic still reaches the barrier), and runs its work. Returns
/// each thread's result in thread order, or the first error (a panic
/// becomes an error naming the thread).
pub fn run_workers<T, S, W>(workers: usize, setup: S) -> Result<Vec<T>, CliError>
where
    T: Send,
    S: Fn(usize) -> Result<W, CliError> + Sync,
    W: FnOnce() -> Result<T, CliError>,
{
    if workers == 0 {
        return Err("threads must be at least 1".into());
    }
    let start = Barrier::new(workers);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|i| {
                let (setup, start) = (&setup, &start);
                s.spawn(move || {
                    let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| setup(i)))
                        .unwrap_or_else(|_| Err(format!("worker {i} panicked while it was being set up").into()));
                    start.wait();
                    made.and_then(|work| work())
                })
            })
            .collect();
        let mut out = Vec::with_capacity(workers);
        let mut first_err = None;
        for (i, h) in handles.into_iter().enumerate() {
            match h.join() {
                Ok(Ok(v)) => out.push(v),
                Ok(Err(e)) => {
                    first_err.get_or_insert(e);
                }
                Err(_) => {
                    first_err.get_or_insert(format!("worker {i} panicked").into());
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(out),
        }
    })
}

fn sleep_unless(stop: &AtomicBool, d: Duration) {
    let until = Instant::now() + d;
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now >= until {
            break;
        }
        std::thread::sleep((until - now).min(Duration::from_millis(10)));
    }
}

/// Samples `activity` every `every` until `until` (or a stop), counting
/// active backends by wait event; returns averages per sample.
fn sample_until(
    activity: Option<&ActivityTable>,
    stop: &AtomicBool,
    until: Instant,
    every: Duration,
) -> (BTreeMap<String, f64>, u64) {
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut samples = 0u64;
    while !stop.load(Ordering::Relaxed) && Instant::now() < until {
        if let Some(table) = activity {
            for row in table.snapshot() {
                if row.state != BackendState::Active {
                    continue;
                }
                let key = match (row.wait_event_type, row.wait_event) {
                    (Some(t), Some(e)) => format!("{t}:{e}"),
                    _ => "CPU".to_owned(),
                };
                *counts.entry(key).or_default() += 1;
            }
            samples += 1;
        }
        let left = until.saturating_duration_since(Instant::now());
        std::thread::sleep(every.min(left));
    }
    let per_sample = counts.into_iter().map(|(k, v)| (k, v as f64 / samples.max(1) as f64)).collect();
    (per_sample, samples)
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnstile_sync::activity::ActivityTable;
    use turnstile_sync::{LwLock, LwLockPolicy, Tranche};

    #[test]
    fn run_workers_returns_results_in_order_and_the_first_error() {
        let out = run_workers(3, |i| Ok(move || Ok(i * 10))).unwrap();
        assert_eq!(out, vec![0, 10, 20]);
        let err = run_workers(2, |i| -> Result<Box<dyn FnOnce() -> Result<usize, CliError>>, CliError> {
            if i == 1 {
                Err("setup failed".into())
            } else {
                Ok(Box::new(|| Ok(1)))
            }
        });
        assert_eq!(err.unwrap_err().to_string(), "setup failed");
    }

    #[test]
    fn clients_run_measure_and_report_their_waits() {
        let table = ActivityTable::new(8);
        let lock = LwLock::new(Tranche::Bench, LwLockPolicy::Fair, 0u64);
        let spec = RunSpec {
            clients: 4,
            warmup: Duration::from_millis(20),
            duration: Duration::from_millis(200),
            sample_every: Duration::from_millis(1),
        };
        let mut phases = Vec::new();
        let out = run_clients(
            &spec,
            Some(table.clone()),
            |_, _| {
                let me = table.register()?;
                me.set_state(BackendState::Active);
                let lock = &lock;
                Ok(move || {
                    let _a = me.attach();
                    let mut g = lock.lock_exclusive();
                    // Hold the lock long enough that others queue behind it.
                    let t = Instant::now();
                    while t.elapsed() < Duration::from_micros(200) {
                        std::hint::spin_loop();
                    }
                    *g += 1;
                    Ok(())
                })
            },
            |start| phases.push(start),
        )
        .unwrap();
        assert_eq!(phases, vec![true, false]);
        assert!(out.transactions > 0);
        assert!(out.samples > 10);
        assert!(out.tps() > 0.0);
        assert!(
            out.wait_events.get("LWLock:Bench").copied().unwrap_or(0.0) > 0.0,
            "no LWLock:Bench waits sampled: {:?}",
            out.wait_events
        );
    }

    #[test]
    fn a_client_that_panics_while_set_up_fails_the_run_instead_of_hanging_it() {
        let spec = RunSpec {
            clients: 3,
            warmup: Duration::from_millis(1),
            duration: Duration::from_millis(20),
            sample_every: Duration::from_millis(5),
        };
        let err = run_clients(
            &spec,
            None,
            |i, _| {
                assert!(i != 1, "set-up failure");
                Ok(|| Ok(()))
            },
            |_| {},
        )
        .unwrap_err();
        assert!(err.to_string().contains("panicked"), "{err}");
    }

    #[test]
    fn a_failing_client_fails_the_run() {
        let spec = RunSpec {
            clients: 2,
            warmup: Duration::from_millis(1),
            duration: Duration::from_millis(50),
            sample_every: Duration::from_millis(5),
        };
        let err = run_clients(&spec, None, |i, _| Ok(move || if i == 1 { Err("boom".into()) } else { Ok(()) }), |_| {})
            .unwrap_err();
        assert_eq!(err.to_string(), "boom");
    }
}
