//! Sequence states in the WAL survive SIGKILL, under both profiles
//! (`durability/sequence_log.rs`): a child logs a sequence's state ahead
//! as `nextval` does (a window of 32 values under `classic`, 32 blocks
//! under `scalable`), printing each state once `log_sequence` returned,
//! with checkpoints now and then (which remove the log before them and
//! must log the state again). The parent kills it after a random while
//! (the seed is printed; `TURNSTILE_CRASH_SEED` replays it), reopens the
//! directory and checks that recovery holds a state at or beyond every
//! one acknowledged: no value handed out before the crash is handed out
//! again. The SQL layer's end-to-end test is `turnstile-sql`'s
//! `tests/sequence_crash.rs`.

mod common;

use std::io::Write;
use std::time::{Duration, Instant};
use turnstile_engine::Engine;
use turnstile_sync::{Config, Profile};

const CHILD_ENV: &str = "TURNSTILE_SEQUENCE_LOG_CRASH_CHILD";
/// A child stops by itself after this long (if the parent died).
const CHILD_LIFETIME: Duration = Duration::from_secs(60);
/// The state word's "called" bit (the SQL layer's `CALLED`).
const CALLED: u64 = 1 << 63;
const KEY: &str = "5/orders_id_seq";

fn config(profile: &str) -> Config {
    let mut c = Config::preset(if profile == "scalable" { Profile::Scalable } else { Profile::Classic });
    let small = common::small_pool_config();
    c.buffer.shared_buffers = small.buffer.shared_buffers;
    c.buffer.mapping_partitions = small.buffer.mapping_partitions;
    c
}

/// The child: logs ever higher states, printing each once durable.
#[test]
fn sequence_log_crash_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else { return };
    let (dir, profile) = spec.rsplit_once(':').expect("dir:profile");
    let engine = Engine::open(dir, config(profile)).unwrap();
    let window: u64 = if profile == "scalable" { 32 * 64 } else { 32 };
    let mut state = engine.log().recovered_sequences().get(KEY).map_or(0, |w| w & !CALLED);
    let started = Instant::now();
    let mut out = std::io::stdout().lock();
    let mut n = 0u64;
    while started.elapsed() < CHILD_LIFETIME {
        state += window;
        engine.log().log_sequence(KEY, CALLED | state).unwrap();
        writeln!(out, "logged {state}").unwrap();
        out.flush().unwrap();
        if n % 200 == 199 {
            engine.checkpoint().unwrap();
        }
        n += 1;
    }
}

#[test]
fn logged_sequence_states_survive_sigkill_and_checkpoints() {
    let mut rng = common::crash_seed("sequence_log_crash");
    for profile in ["classic", "scalable"] {
        let dir = tempfile::tempdir().unwrap();
        for run in 0..3 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let kill_after = Duration::from_millis(50 + rng % 1500);
            let report = |line: &str| line.rsplit_once("logged ").and_then(|(_, v)| v.trim().parse().ok());
            let spec = format!("{}:{profile}", dir.path().display());
            let states = common::run_and_kill("sequence_log_crash_child", CHILD_ENV, &spec, kill_after, report);
            let max = states.iter().copied().max().unwrap() as u64;
            let engine = Engine::open(dir.path(), config(profile)).expect("recover after SIGKILL");
            let got = engine.log().recovered_sequences().get(KEY).copied().expect("the sequence's state recovered");
            println!(
                "sequence_log_crash: {profile} run {run}: {} states up to {max}, recovered {}",
                states.len(),
                got & !CALLED
            );
            assert!(
                got & CALLED != 0 && got & !CALLED >= max,
                "{profile} run {run}: recovered {got:#x}, {max} was acknowledged"
            );
        }
    }
}
