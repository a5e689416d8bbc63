//! The pool's record of exclusive `BufferMapping` acquisitions
//! (Postgres Pro 2018's figure): every one is counted, only the ones that waited reach
//! the histogram, and counters and histogram agree under concurrency.

mod common;

use common::{seed, Scratch};
use rand::{rngs::SmallRng, Rng, SeedableRng};
use std::sync::Arc;
use turnstile_storage::fault::FaultyIo;
use turnstile_storage::{BufferPool, BufferTag, Fork, PoolOptions, RelFileId, Smgr, SmgrOptions};
use turnstile_sync::LwLockPolicy;

fn setup(dir: &Scratch, blocks: u32, buffers: usize, partitions: usize, policy: LwLockPolicy) -> BufferPool {
    let smgr = Smgr::open_with(
        dir.path(),
        SmgrOptions { segment_blocks: 64, max_open_files: 16, ..Default::default() },
        Arc::new(FaultyIo::new()),
    )
    .unwrap();
    smgr.create(RelFileId::new(1, 1), Fork::Main).unwrap();
    smgr.extend(RelFileId::new(1, 1), Fork::Main, blocks).unwrap();
    let options = PoolOptions {
        shared_buffers: buffers,
        mapping_partitions: partitions,
        policy,
        lookup_hints: false,
        huge_pages: false,
        prefault: false,
    };
    BufferPool::with_options(options, smgr).unwrap()
}

/// One thread: each miss maps its block (one exclusive acquisition), each
/// eviction removes the victim's old entry (one more); free-list victims
/// have no entry to remove. Nothing waits.
#[test]
fn a_single_reader_counts_each_miss_and_eviction_and_records_no_wait() {
    let dir = Scratch::new("mapping-waits-single");
    let pool = setup(&dir, 100, 16, 4, LwLockPolicy::Fair);
    for b in 0..100 {
        drop(pool.read_buffer(BufferTag::new(RelFileId::new(1, 1), Fork::Main, b)).unwrap());
    }
    let s = pool.stats();
    assert_eq!((s.misses, s.evictions), (100, 84), "{s:?}");
    assert_eq!(s.exclusive_mapping_acquisitions, s.misses + s.evictions, "{s:?}");
    assert_eq!((s.exclusive_mapping_waits, s.exclusive_mapping_wait_ns), (0, 0), "{s:?}");
    assert!(pool.exclusive_mapping_waits().is_empty());
    pool.check_invariants();
}

/// Several threads missing on one partition: whatever waited is in the
/// histogram exactly once, and a phase's waits are the difference of two
/// copies.
#[test]
fn concurrent_misses_agree_between_counters_and_histogram() {
    let seed = seed("concurrent_misses_agree_between_counters_and_histogram");
    for policy in [LwLockPolicy::Fair, LwLockPolicy::Barging] {
        let dir = Scratch::new("mapping-waits-concurrent");
        let pool = setup(&dir, 256, 32, 1, policy);
        let before = pool.exclusive_mapping_waits();
        let stats_before = pool.stats();
        std::thread::scope(|scope| {
            for t in 0..4u64 {
                let pool = &pool;
                scope.spawn(move || {
                    let mut rng = SmallRng::seed_from_u64(seed ^ t);
                    for _ in 0..2_000 {
                        let block = rng.random_range(0..256);
                        drop(pool.read_buffer(BufferTag::new(RelFileId::new(1, 1), Fork::Main, block)).unwrap());
                    }
                });
            }
        });
        let s = pool.stats();
        // A victim pinned again between its choice and its unmapping took
        // the lock without being evicted: hence `>=`.
        assert!(s.exclusive_mapping_acquisitions >= s.misses + s.evictions, "{policy}: {s:?}");
        assert!(s.exclusive_mapping_waits <= s.exclusive_mapping_acquisitions, "{policy}: {s:?}");
        let mut phase = pool.exclusive_mapping_waits();
        phase.subtract(&before).unwrap();
        assert_eq!(phase.len(), s.exclusive_mapping_waits - stats_before.exclusive_mapping_waits, "{policy}: {s:?}");
        if s.exclusive_mapping_waits > 0 {
            assert!(phase.max() > 0);
            assert!(s.exclusive_mapping_wait_ns >= s.exclusive_mapping_waits, "{policy}: {s:?}");
        }
        pool.check_invariants();
    }
}
