//! `classic` relation extension is PostgreSQL ≤ 15's
//! `RelationGetBufferForTuple`: a conditional lock attempt, and when the
//! lock is contended a recheck of the free-space map after the wait and
//! `RelationAddExtraBlocks` (`min(512, 20 × waiters)` extra blocks) before
//! the block for the caller. No added block is ever lost: each is handed
//! out or in the free-space map.

mod common;

use common::{payload, Scratch};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use turnstile_lock::LockManager;
use turnstile_storage::extend::{CLASSIC_EXTRA_BLOCKS_MAX, CLASSIC_EXTRA_BLOCKS_PER_WAITER};
use turnstile_storage::fault::FaultyIo;
use turnstile_storage::page::{self, MAX_ITEM_SIZE};
use turnstile_storage::{
    BufferPool, Extender, ExtensionLocker, ExtensionStats, Fork, PoolOptions, RelFileId, Ring, Smgr, SmgrOptions,
};
use turnstile_sync::config::ExtendStrategy;
use turnstile_sync::LwLockPolicy;

fn setup(dir: &Scratch, buffers: usize) -> (Arc<Smgr>, BufferPool) {
    let options = SmgrOptions { segment_blocks: 256, max_open_files: 8, ..Default::default() };
    let smgr = Smgr::open_with(dir.path(), options, Arc::new(FaultyIo::new())).unwrap();
    let options = PoolOptions {
        shared_buffers: buffers,
        mapping_partitions: 16,
        policy: LwLockPolicy::Fair,
        lookup_hints: false,
        huge_pages: false,
        prefault: false,
    };
    let pool = BufferPool::with_options(options, smgr.clone()).unwrap();
    (smgr, pool)
}

/// Spins until `tag`'s extension lock has `n` waiters (bounded: a test
/// that cannot get there fails instead of hanging).
fn wait_for_waiters(manager: &LockManager, rel: RelFileId, n: usize) {
    let tag = turnstile_storage::extlock::extension_tag(rel);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while manager.waiters(&tag) < n {
        assert!(std::time::Instant::now() < deadline, "never saw {n} waiters on the extension lock");
        std::thread::yield_now();
    }
}

/// Nobody else extends: the conditional attempt succeeds, one block per
/// extension, nothing extra, nothing in the map.
#[test]
fn an_uncontended_classic_extension_adds_exactly_one_block() {
    let dir = Scratch::new("classic-alone");
    let (smgr, pool) = setup(&dir, 64);
    let rel = RelFileId::new(1, 600);
    smgr.create(rel, Fork::Main).unwrap();
    let backend = LockManager::new(&turnstile_sync::Config::default()).unwrap().register().unwrap();
    let mut ext = Extender::new(&pool, backend, ExtendStrategy::Classic, 64);
    for expected in 0..5 {
        let buf = ext.get_page(rel, MAX_ITEM_SIZE).unwrap();
        assert_eq!(buf.block(), expected);
        page::add_item(&mut buf.lock_exclusive(), &[1; MAX_ITEM_SIZE]).unwrap();
    }
    let s = ext.stats();
    assert_eq!((s.extensions, s.blocks_added, s.pages_from_fsm), (5, 5, 0), "{s:?}");
    assert_eq!(pool.fsm().pages(rel), 0);
    assert_eq!(smgr.nblocks(rel, Fork::Main).unwrap(), 5);
    assert!(s.lock_held >= s.filesystem + s.buffer_search, "{s:?}");
    pool.check_invariants();
}

/// The extender waits behind a holder with one more backend queued
/// behind it: when it gets the lock and the map is still empty it adds
/// `20 × 1` extra blocks, each recorded in the map, then its own.
#[test]
fn a_contended_classic_extension_adds_twenty_blocks_per_waiter() {
    let dir = Scratch::new("classic-extra");
    let (smgr, pool) = setup(&dir, 256);
    let rel = RelFileId::new(1, 601);
    smgr.create(rel, Fork::Main).unwrap();
    let manager = LockManager::new(&turnstile_sync::Config::default()).unwrap();
    let mut holder = manager.register().unwrap();
    let held = holder.lock_extension(rel).unwrap();
    let (stats, mine) = std::thread::scope(|s| {
        let extender = {
            let (pool, manager) = (&pool, manager.clone());
            s.spawn(move || {
                let mut ext = Extender::new(pool, manager.register().unwrap(), ExtendStrategy::Classic, 64)
                    .with_ring(Ring::new(16));
                let block = ext.get_page(rel, MAX_ITEM_SIZE).unwrap().block();
                (ext.stats(), block)
            })
        };
        wait_for_waiters(&manager, rel, 1);
        let waiter = {
            let manager = manager.clone();
            s.spawn(move || {
                let mut b = manager.register().unwrap();
                drop(b.lock_extension(rel).unwrap());
            })
        };
        wait_for_waiters(&manager, rel, 2);
        drop(held);
        waiter.join().unwrap();
        extender.join().unwrap()
    });
    let extra = CLASSIC_EXTRA_BLOCKS_PER_WAITER;
    assert_eq!((stats.extensions, stats.blocks_added), (1, u64::from(extra) + 1), "{stats:?}");
    assert!(stats.lock_wait > Duration::ZERO);
    assert_eq!(smgr.nblocks(rel, Fork::Main).unwrap(), extra + 1);
    assert_eq!(mine, extra, "the caller's own block comes after the extra ones");
    assert_eq!(pool.fsm().pages(rel), extra as usize);
    for b in 0..extra {
        assert_eq!(pool.fsm().claim(rel, MAX_ITEM_SIZE), Some(b), "extra block {b} is offered with a whole page free");
    }
    const { assert!(CLASSIC_EXTRA_BLOCKS_MAX == 512 && CLASSIC_EXTRA_BLOCKS_PER_WAITER == 20) };
    pool.check_invariants();
}

/// While the extender waited, the holder added a page and recorded it:
/// the extender takes that page instead of extending (the recheck after
/// the wait), releasing the lock at once.
#[test]
fn a_classic_waiter_uses_the_page_added_while_it_waited() {
    let dir = Scratch::new("classic-recheck");
    let (smgr, pool) = setup(&dir, 64);
    let rel = RelFileId::new(1, 602);
    smgr.create(rel, Fork::Main).unwrap();
    let manager = LockManager::new(&turnstile_sync::Config::default()).unwrap();
    let mut holder = manager.register().unwrap();
    let held = holder.lock_extension(rel).unwrap();
    let (stats, got) = std::thread::scope(|s| {
        let extender = {
            let (pool, manager) = (&pool, manager.clone());
            s.spawn(move || {
                let mut ext = Extender::new(pool, manager.register().unwrap(), ExtendStrategy::Classic, 64);
                let buf = ext.get_page(rel, MAX_ITEM_SIZE).unwrap();
                assert!(!page::is_new(&buf.lock_shared()), "a claimed new page is initialised");
                (ext.stats(), buf.block())
            })
        };
        wait_for_waiters(&manager, rel, 1);
        // What the holder did with the lock: one block, into the map.
        assert_eq!(smgr.extend(rel, Fork::Main, 1).unwrap(), 0);
        pool.fsm().record(rel, 0, MAX_ITEM_SIZE);
        drop(held);
        extender.join().unwrap()
    });
    assert_eq!(got, 0);
    assert_eq!((stats.extensions, stats.blocks_added, stats.pages_from_fsm), (1, 0, 1), "{stats:?}");
    assert_eq!(smgr.nblocks(rel, Fork::Main).unwrap(), 1);
    assert_eq!(pool.fsm().pages(rel), 0);
    pool.check_invariants();
}

/// N threads insert whole-page items concurrently through bulk-write
/// rings. Contended extensions add extra blocks (more blocks than lock
/// acquisitions), every block is handed out once or left in the map, and
/// every handed-out page holds what its writer put there.
///
/// An extension takes microseconds, so on two cores the threads may well
/// never meet at the lock on their own: a holder keeps the lock until all
/// of them queue for their first page, then lets them go.
#[test]
fn concurrent_classic_inserters_get_extra_blocks_and_lose_none() {
    let dir = Scratch::new("classic-concurrent");
    let (smgr, pool) = setup(&dir, 256);
    let rel = RelFileId::new(1, 603);
    smgr.create(rel, Fork::Main).unwrap();
    let manager = LockManager::new(&turnstile_sync::Config::default()).unwrap();
    let threads = 8u32;
    let per_thread = 120;
    let mut holder = manager.register().unwrap();
    let held = holder.lock_extension(rel).unwrap();
    let handed: Vec<(u32, Vec<u32>, ExtensionStats)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (pool, manager) = (&pool, manager.clone());
                s.spawn(move || {
                    let mut ext = Extender::new(pool, manager.register().unwrap(), ExtendStrategy::Classic, 64)
                        .with_ring(Ring::new(16));
                    let mut blocks = Vec::new();
                    for _ in 0..per_thread {
                        let buf = ext.get_page(rel, MAX_ITEM_SIZE).unwrap();
                        let mut content = buf.lock_exclusive();
                        assert_eq!(page::item_count(&content), 0, "block {} handed out twice", buf.block());
                        page::add_item(&mut content, &payload(t, buf.block(), MAX_ITEM_SIZE)).unwrap();
                        content.mark_dirty();
                        blocks.push(buf.block());
                    }
                    (t, blocks, ext.stats())
                })
            })
            .collect::<Vec<_>>();
        wait_for_waiters(&manager, rel, threads as usize);
        drop(held);
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut total = ExtensionStats::default();
    let mut used = HashSet::new();
    for (_, blocks, stats) in &handed {
        total.add(stats);
        for &b in blocks {
            assert!(used.insert(b), "block {b} handed out twice");
        }
    }
    println!("{total:?}");
    assert!(total.blocks_added > total.extensions, "no extra blocks under contention: {total:?}");
    assert!(total.pages_from_fsm > 0, "nobody took an extra block: {total:?}");
    let nblocks = smgr.nblocks(rel, Fork::Main).unwrap();
    assert_eq!(u64::from(nblocks), total.blocks_added, "{total:?}");
    // Whatever was not handed out is in the map, exactly once.
    let mut free = HashSet::new();
    while let Some(b) = pool.fsm().claim(rel, MAX_ITEM_SIZE) {
        assert!(!used.contains(&b), "block {b} is in use and in the map");
        assert!(free.insert(b), "block {b} in the map twice");
    }
    assert_eq!(used.len() + free.len(), nblocks as usize, "blocks neither handed out nor free");
    assert!(used.iter().chain(&free).all(|&b| b < nblocks));
    pool.check_invariants();
    pool.flush_all().unwrap();
    pool.check_invariants();
    let handed = handed.iter().map(|(t, blocks, _)| (*t, &blocks[..]));
    common::assert_payloads_on_disk(smgr.clone(), rel, MAX_ITEM_SIZE, handed, "classic");
}
