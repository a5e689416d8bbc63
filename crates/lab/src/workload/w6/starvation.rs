//! W6, LWLock starvation (Postgres Pro 2018): many sessions do point lookups through
//! one B-tree — every lookup pins its root, so the root's `BufferMapping`
//! partition sees a steady stream of shared lockers — while a few writer
//! sessions insert into the same indexed table, so heap and index pages
//! split and both relations extend, and each new page takes its mapping
//! partition exclusive.
//!
//! # What is measured
//!
//! * `exclusive_wait_us` — Postgres Pro 2018's figure: the waits of exclusive
//!   `BufferMapping` partition acquisitions (mapping a missed or new block,
//!   removing a victim's old entry), of every session, over the measured
//!   phase only. The buffer pool times each one with
//!   `LwLock::lock_exclusive_timed` and records the ones that waited in a
//!   histogram ([`turnstile_storage::BufferPool::exclusive_mapping_waits`]);
//!   this workload subtracts the copy taken when measuring starts from the
//!   one taken when it ends. `p50`/`p99`/`max` are over the acquisitions
//!   that waited (`count` of them, 3 significant digits); `acquisitions`
//!   counts every exclusive acquisition, waiting or not.
//! * every insert's latency (`insert_latency_us` p50/p99/max and
//!   `insert_latency_us_max`, the slowest insert — Postgres Pro 2018's "no insert
//!   over 30 s" criterion), timed by the writer around `Session::insert`;
//! * the `BufferMapping` tranche's waits and wait time over the measured
//!   phase (both modes, every session);
//! * `inserter_mapping_wait_us`: wait episodes of the *writer* sessions on
//!   `LWLock:BufferMapping`, seen by a sampler thread polling their activity
//!   slots every [`EPISODE_POLL`] — coarse (waits shorter than a poll are
//!   mostly missed) and mixing the writers' shared and exclusive waits; kept
//!   as an outside cross-check of `exclusive_wait_us`.

use crate::cli::CliError;
use crate::harness::{histogram, Latency};
use crate::workload::in_process::{
    with_loader, ClientCtx, Extra, InProcess, ParamValue, Params, PointFigures, Setup, Txn, Variant,
};
use crate::workload::{engine, w6, Mode};
use hdrhistogram::Histogram;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use serde_json::{json, Value as Json};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use turnstile_engine::query::{Operand, QueryMode};
use turnstile_engine::types::Value;
use turnstile_engine::{Engine, Session};
use turnstile_storage::BufferPool;
use turnstile_sync::sync::counter::{AtomicBool, Ordering};
use turnstile_sync::{Tranche, WaitEvent};

/// How often the episode sampler polls the writers' activity slots.
pub const EPISODE_POLL: Duration = Duration::from_micros(250);
/// Writers draw keys from `rows + 1 ..= rows + INSERT_KEY_SPACE`, above every
/// key a reader looks up, spread so leaf splits happen across the tree.
const INSERT_KEY_SPACE: i32 = 1 << 30;

/// W6's workload: preloaded rows, and the writer counts to try.
pub struct Starvation {
    rows: u32,
    writers: Vec<u32>,
    point: PointState,
}

/// Figures gathered while one point runs (points run one at a time).
#[derive(Default)]
struct PointState {
    inserts_ns: Mutex<Option<Histogram<u64>>>,
    writer_slots: Mutex<Vec<usize>>,
    sampler: Mutex<Option<Sampler>>,
    episodes: Mutex<Option<(Histogram<u64>, Duration)>>,
    /// The pool's exclusive mapping waits (and acquisitions) when measuring
    /// started; replaced by the measured phase's own when it ends.
    exclusive: Mutex<Option<ExclusiveWaits>>,
}

/// Exclusive `BufferMapping` acquisitions: the waits of those that waited
/// (ns), and how many there were in all.
struct ExclusiveWaits {
    waits_ns: Histogram<u64>,
    acquisitions: u64,
}

impl ExclusiveWaits {
    /// What `pool` has recorded so far.
    fn of(pool: &BufferPool) -> ExclusiveWaits {
        // Two reads while clients run, not one snapshot: an acquisition
        // between them falls on either side of the phase boundary, which
        // is noise beside a phase's thousands.
        let waits_ns = pool.exclusive_mapping_waits();
        ExclusiveWaits { waits_ns, acquisitions: pool.stats().exclusive_mapping_acquisitions }
    }

    /// `self - earlier`: the acquisitions between two copies of one pool's.
    fn since(mut self, earlier: &ExclusiveWaits) -> Result<ExclusiveWaits, CliError> {
        self.waits_ns
            .subtract(&earlier.waits_ns)
            .map_err(|e| format!("exclusive mapping waits went backwards: {e:?}"))?;
        self.acquisitions = self.acquisitions.saturating_sub(earlier.acquisitions);
        Ok(self)
    }
}

struct Sampler {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<(Histogram<u64>, Duration)>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // The guarded figures stay consistent between statements that panic.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Starvation {
    /// `rows` preloaded rows; one variant per writer count.
    pub fn new(rows: u32, writers: Vec<u32>) -> Starvation {
        Starvation { rows, writers, point: PointState::default() }
    }

    /// W6's in-process form: as many preloaded rows as `setup`'s scale has
    /// accounts, one variant per writer count of the sweep.
    pub fn make(setup: Setup) -> Result<Box<dyn InProcess>, CliError> {
        Ok(Box::new(Starvation::new(setup.sizes.accounts(), setup.values)))
    }

    /// Writers among `clients` sessions: as asked, but leaving at least one
    /// reader when there are two sessions or more.
    pub fn writers_of(asked: u32, clients: usize) -> usize {
        (asked as usize).min(clients.saturating_sub(1)).max(1)
    }
}

impl InProcess for Starvation {
    fn data_key(&self, _v: &Variant) -> String {
        "hot".into()
    }

    fn params_json(&self) -> Json {
        json!({ "rows": self.rows, "writers": self.writers, "filler_bytes": w6::FILLER_BYTES, "reader_mode": "prepared" })
    }

    fn variants(&self) -> Result<Vec<Variant>, CliError> {
        self.writers
            .iter()
            .map(|&w| {
                if w == 0 {
                    Err("--writers takes counts of at least 1".into())
                } else {
                    Ok(Variant {
                        params: Params::default().with("writers", ParamValue::Count(w)),
                        value: w,
                        mode: Mode::Prepared,
                    })
                }
            })
            .collect()
    }

    fn load(&self, dir: &Path, _v: &Variant) -> Result<(), CliError> {
        // The index is not unique: writers' random keys may repeat, and a
        // rerun on a kept `--data-dir` inserts into what earlier runs left.
        with_loader(dir, |s| engine::load(s, &[w6::table(self.rows)], &w6::indexes()))
    }

    fn writes(&self) -> bool {
        true
    }

    fn before_point(&self, _engine: &Arc<Engine>, _v: &Variant) -> Result<(), CliError> {
        *lock(&self.point.inserts_ns) = Some(histogram());
        lock(&self.point.writer_slots).clear();
        *lock(&self.point.episodes) = None;
        *lock(&self.point.exclusive) = None;
        Ok(())
    }

    fn on_measure(&self, engine: &Arc<Engine>, start: bool) -> Result<(), CliError> {
        if start {
            *lock(&self.point.exclusive) = Some(ExclusiveWaits::of(engine.pool()));
            let slots = lock(&self.point.writer_slots).clone();
            let stop = Arc::new(AtomicBool::new(false));
            let activity = Arc::clone(engine.activity_table());
            let flag = Arc::clone(&stop);
            let thread = std::thread::Builder::new()
                .name("w6-episodes".into())
                .spawn(move || sample_episodes(&activity, &slots, &flag))?;
            *lock(&self.point.sampler) = Some(Sampler { stop, thread });
        } else {
            let now = ExclusiveWaits::of(engine.pool());
            // Stop the sampler before anything below can fail.
            let episodes = match lock(&self.point.sampler).take() {
                Some(sampler) => {
                    sampler.stop.store(true, Ordering::Relaxed);
                    Some(sampler.thread.join().map_err(|_| "the W6 episode sampler panicked")?)
                }
                None => None,
            };
            *lock(&self.point.episodes) = episodes;
            let mut exclusive = lock(&self.point.exclusive);
            if let Some(before) = exclusive.take() {
                *exclusive = Some(now.since(&before)?);
            }
        }
        Ok(())
    }

    fn client<'a>(&'a self, c: &ClientCtx, v: &'a Variant) -> Result<Txn<'a>, CliError> {
        let mut rng = SmallRng::seed_from_u64(c.seed);
        let rows = self.rows.clamp(1, i32::MAX as u32) as i32;
        if c.index < Starvation::writers_of(v.value, c.clients) {
            let measuring = Arc::clone(&c.measuring);
            let filler = "w".repeat(w6::FILLER_BYTES);
            let mut registered = false;
            return Ok(Box::new(move |s: &mut Session| {
                if !registered {
                    lock(&self.point.writer_slots).push(s.activity_slot());
                    registered = true;
                }
                let k = rows.saturating_add(rng.random_range(1..=INSERT_KEY_SPACE));
                let started = Instant::now();
                s.insert(w6::TABLE, &[Value::Int4(k), Value::Int4(-1), Value::Text(filler.clone())])?;
                let ns = started.elapsed().as_nanos() as u64;
                if measuring.load(Ordering::Relaxed) {
                    if let Some(h) = lock(&self.point.inserts_ns).as_mut() {
                        h.saturating_record(ns);
                    }
                }
                Ok(())
            }));
        }
        let query = engine::query(&w6::lookup(), Operand::Param(1));
        let mut slot = None;
        Ok(Box::new(move |s: &mut Session| {
            let k = rng.random_range(1..=rows);
            s.run(QueryMode::Prepared, &query, &mut slot, &[Value::Int4(k)])?;
            Ok(())
        }))
    }

    fn extra(&self, point: &PointFigures<'_>) -> Result<Extra, CliError> {
        let inserts = lock(&self.point.inserts_ns).take().unwrap_or_else(histogram);
        let secs = point.outcome.elapsed.as_secs_f64().max(1e-9);
        let insert_latency = Latency::from_ns_histogram(&inserts);
        let reads = point.outcome.transactions.saturating_sub(inserts.len());
        let exclusive =
            lock(&self.point.exclusive).take().ok_or("W6: the measured phase's exclusive waits were not read")?;
        let l = Latency::from_ns_histogram(&exclusive.waits_ns);
        let map = point.mapping;
        let episodes = lock(&self.point.episodes).take().map(|(episodes, poll)| {
            let l = Latency::from_ns_histogram(&episodes);
            EpisodeFigures {
                p50: l.p50,
                p99: l.p99,
                max: l.max,
                episodes: episodes.len(),
                resolution_us: poll.as_secs_f64() * 1e6,
            }
        });
        let figures = StarvationFigures {
            writers_running: lock(&self.point.writer_slots).len(),
            exclusive_wait_us: ExclusiveWaitFigures {
                p50: l.p50,
                p99: l.p99,
                max: l.max,
                count: exclusive.waits_ns.len(),
                acquisitions: exclusive.acquisitions,
            },
            insert_latency_us: insert_latency,
            insert_latency_us_max: insert_latency.max,
            inserts_per_s: inserts.len() as f64 / secs,
            reads_per_s: reads as f64 / secs,
            mapping_waits: map.waits,
            mapping_wait_us_mean: if map.waits > 0 { map.wait_ns as f64 / map.waits as f64 / 1000.0 } else { 0.0 },
            inserter_mapping_wait_us: episodes,
        };
        Extra::own(&figures)
    }
}

/// W6's figures of a point (see the module documentation).
#[derive(Clone, Debug, Serialize)]
pub struct StarvationFigures {
    /// Writer sessions that inserted.
    pub writers_running: usize,
    /// Waits of exclusive `BufferMapping` acquisitions (all sessions).
    pub exclusive_wait_us: ExclusiveWaitFigures,
    /// Every measured insert's latency.
    pub insert_latency_us: Latency,
    /// The slowest insert.
    pub insert_latency_us_max: f64,
    /// Inserts per second.
    pub inserts_per_s: f64,
    /// Reader lookups per second.
    pub reads_per_s: f64,
    /// `BufferMapping` waits over the measured phase (both modes).
    pub mapping_waits: u64,
    /// Their mean length.
    pub mapping_wait_us_mean: f64,
    /// The writers' wait episodes seen by the sampler.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inserter_mapping_wait_us: Option<EpisodeFigures>,
}

/// `exclusive_wait_us`: over the acquisitions that waited.
#[derive(Clone, Debug, Serialize)]
pub struct ExclusiveWaitFigures {
    /// Median wait.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Longest.
    pub max: f64,
    /// Acquisitions that waited.
    pub count: u64,
    /// Exclusive acquisitions in all.
    pub acquisitions: u64,
}

/// `inserter_mapping_wait_us`: the sampler's wait episodes.
#[derive(Clone, Debug, Serialize)]
pub struct EpisodeFigures {
    /// Median episode.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Longest.
    pub max: f64,
    /// Episodes seen.
    pub episodes: u64,
    /// The sampler's mean poll interval.
    pub resolution_us: f64,
}

/// Polls the writers' activity slots until `stop`, timing each run of
/// consecutive polls that see a slot waiting on `LWLock:BufferMapping`.
/// Returns the episode lengths (ns) and the mean poll interval achieved.
fn sample_episodes(
    activity: &turnstile_sync::ActivityTable,
    slots: &[usize],
    stop: &AtomicBool,
) -> (Histogram<u64>, Duration) {
    let target = WaitEvent::LwLock(Tranche::BufferMapping);
    let mut open: Vec<Option<Instant>> = vec![None; slots.len()];
    let mut episodes = histogram();
    let started = Instant::now();
    let mut polls = 0u32;
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        for (i, &slot) in slots.iter().enumerate() {
            let waiting = activity.wait_event_of(slot) == Some(target);
            match (waiting, open[i]) {
                (true, None) => open[i] = Some(now),
                (false, Some(since)) => {
                    episodes.saturating_record(now.duration_since(since).as_nanos() as u64);
                    open[i] = None;
                }
                _ => {}
            }
        }
        polls = polls.saturating_add(1);
        std::thread::sleep(EPISODE_POLL);
    }
    // Waits still open when measuring ended count as long as seen so far.
    let end = Instant::now();
    for since in open.into_iter().flatten() {
        episodes.saturating_record(end.duration_since(since).as_nanos() as u64);
    }
    (episodes, started.elapsed() / polls.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_point_keeps_a_reader_once_there_are_two_sessions() {
        assert_eq!(Starvation::writers_of(2, 1), 1);
        assert_eq!(Starvation::writers_of(2, 2), 1);
        assert_eq!(Starvation::writers_of(2, 8), 2);
        assert_eq!(Starvation::writers_of(1, 32), 1);
    }
}
