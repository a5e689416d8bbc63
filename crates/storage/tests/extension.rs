//! Relation extension under concurrency, both strategies: no block is
//! handed out twice, every page is valid and holds what its writer put
//! there, and the relation's length accounts for every block.

mod common;

use common::{payload, Scratch};
use std::collections::HashSet;
use std::sync::Arc;
use turnstile_lock::LockManager;
use turnstile_storage::fault::{FaultyIo, IoFault, IoOp};
use turnstile_storage::page::{self, MAX_ITEM_SIZE};
use turnstile_storage::{
    BufferPool, Extender, ExtensionStats, FileError, Fork, PoolOptions, RelFileId, Ring, Smgr, SmgrOptions,
    StorageError,
};
use turnstile_sync::config::ExtendStrategy;
use turnstile_sync::LwLockPolicy;

const ITEM: usize = MAX_ITEM_SIZE;

fn setup(dir: &Scratch, io: Arc<FaultyIo>, buffers: usize) -> (Arc<Smgr>, BufferPool) {
    let smgr =
        Smgr::open_with(dir.path(), SmgrOptions { segment_blocks: 256, max_open_files: 8, ..Default::default() }, io)
            .unwrap();
    let options = PoolOptions {
        shared_buffers: buffers,
        mapping_partitions: 16,
        policy: LwLockPolicy::Fair,
        lookup_hints: true,
        huge_pages: false,
        prefault: false,
    };
    let pool = BufferPool::with_options(options, smgr.clone()).unwrap();
    (smgr, pool)
}

fn run(strategy: ExtendStrategy) {
    let dir = Scratch::new("extend");
    let (smgr, pool) = setup(&dir, Arc::new(FaultyIo::new()), 256);
    let rel = RelFileId::new(1, 500);
    smgr.create(rel, Fork::Main).unwrap();
    let locks = LockManager::new(&turnstile_sync::Config::default()).unwrap();
    let threads = 6u32;
    let per_thread = 150;
    let handed: Vec<(u32, Vec<u32>, ExtensionStats)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (pool, locks) = (&pool, locks.clone());
                s.spawn(move || {
                    let backend = locks.register().unwrap();
                    let mut ext = Extender::new(pool, backend, strategy, 64).with_ring(Ring::new(16));
                    let mut blocks = Vec::new();
                    for _ in 0..per_thread {
                        let buf = ext.get_page(rel, ITEM).unwrap();
                        let mut page = buf.lock_exclusive();
                        assert!(!page::is_new(&page), "handed an uninitialised page");
                        assert_eq!(page::item_count(&page), 0, "block {} handed out twice", buf.block());
                        page::add_item(&mut page, &payload(t, buf.block(), ITEM)).unwrap();
                        page.mark_dirty();
                        blocks.push(buf.block());
                    }
                    (t, blocks, ext.stats())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    // Not every thread need extend: spares (bulk) and extra blocks
    // (classic) may serve all of one thread's requests.
    let mut total = ExtensionStats::default();
    for (_, _, stats) in &handed {
        total.add(stats);
    }
    assert!(total.extensions > 0 && total.blocks_added > 0, "{strategy:?}: {total:?}");
    let mut seen = HashSet::new();
    for (_, blocks, _) in &handed {
        for &b in blocks {
            assert!(seen.insert(b), "{strategy:?}: block {b} handed out twice");
        }
    }
    let nblocks = smgr.nblocks(rel, Fork::Main).unwrap();
    let spare = pool.fsm().pages(rel) as u32;
    assert_eq!(seen.len() as u32 + spare, nblocks, "{strategy:?}: blocks neither handed out nor free");
    pool.check_invariants();
    pool.flush_all().unwrap();
    pool.check_invariants();
    let handed = handed.iter().map(|(t, blocks, _)| (*t, &blocks[..]));
    common::assert_payloads_on_disk(smgr.clone(), rel, ITEM, handed, &format!("{strategy:?}"));
}

#[test]
fn classic_extension_hands_out_each_block_once() {
    run(ExtendStrategy::Classic);
}

#[test]
fn bulk_extension_hands_out_each_block_once_and_shares_spares() {
    run(ExtendStrategy::Bulk);
}

#[test]
fn bulk_extension_grows_with_its_history_up_to_the_cap() {
    let dir = Scratch::new("ramp");
    let (smgr, pool) = setup(&dir, Arc::new(FaultyIo::new()), 2048);
    let rel = RelFileId::new(1, 501);
    smgr.create(rel, Fork::Main).unwrap();
    let mut ext = Extender::new(
        &pool,
        LockManager::new(&turnstile_sync::Config::default()).unwrap().register().unwrap(),
        ExtendStrategy::Bulk,
        32,
    );
    let mut sizes = Vec::new();
    for _ in 0..7 {
        let before = smgr.nblocks(rel, Fork::Main).unwrap();
        drop(ext.extend(rel).unwrap());
        sizes.push(smgr.nblocks(rel, Fork::Main).unwrap() - before);
    }
    assert_eq!(sizes, [1, 2, 4, 8, 16, 32, 32]);
    assert_eq!(pool.fsm().pages(rel), (1 + 2 + 4 + 8 + 16 + 32 + 32) - 7);
    let s = ext.stats();
    assert_eq!((s.extensions, s.blocks_added), (7, 95));
    assert!(s.lock_held >= s.filesystem);
    pool.check_invariants();
}

/// A failed extension (ENOSPC) under either strategy returns the error,
/// leaves the relation's length alone, gives the victims back, and the
/// next extension succeeds.
#[test]
fn a_failed_extension_claims_nothing_and_leaks_no_buffer() {
    for strategy in [ExtendStrategy::Classic, ExtendStrategy::Bulk] {
        let dir = Scratch::new("extfail");
        let io = Arc::new(FaultyIo::new());
        let (smgr, pool) = setup(&dir, io.clone(), 32);
        let rel = RelFileId::new(1, 502);
        smgr.create(rel, Fork::Main).unwrap();
        let mut ext = Extender::new(
            &pool,
            LockManager::new(&turnstile_sync::Config::default()).unwrap().register().unwrap(),
            strategy,
            8,
        );
        for _ in 0..5 {
            drop(ext.get_page(rel, ITEM).unwrap());
        }
        let before = smgr.nblocks(rel, Fork::Main).unwrap();
        io.inject(IoFault::new(IoOp::Extend, io.calls(IoOp::Extend) + 1, IoFault::ENOSPC).partial());
        let err = ext.extend(rel).unwrap_err();
        assert!(
            matches!(&err, StorageError::File(FileError::NoSpace { path, .. }) if path.ends_with("base/1/502")),
            "{err:?}"
        );
        assert_eq!(smgr.nblocks(rel, Fork::Main).unwrap(), before, "{strategy:?}");
        assert_eq!(std::fs::metadata(dir.path().join("base/1/502")).unwrap().len(), u64::from(before) * 8192);
        pool.check_invariants();
        // No victim leaked a pin: all but the two victims a bulk extension
        // needs can be pinned at once.
        let pins: Vec<_> = (0..30).map(|_| ext.extend(rel).unwrap()).collect();
        assert_eq!(pins.len(), 30);
        drop(pins);
        pool.check_invariants();
    }
}

/// `k` grows with the queue on the extension lock: with one backend
/// already waiting behind the holder, a fresh bulk extender adds 1 + 1
/// blocks. The lock is the heavyweight lock manager's.
#[test]
fn bulk_extension_grows_with_the_waiters_on_the_heavyweight_lock() {
    use turnstile_storage::ExtensionLocker;
    let dir = Scratch::new("waiters");
    let (smgr, pool) = setup(&dir, Arc::new(FaultyIo::new()), 256);
    let rel = RelFileId::new(1, 503);
    smgr.create(rel, Fork::Main).unwrap();
    let manager = LockManager::new(&turnstile_sync::Config::default()).unwrap();
    let mut holder = manager.register().unwrap();
    let held = holder.lock_extension(rel).unwrap();
    let tag = turnstile_storage::extlock::extension_tag(rel);
    std::thread::scope(|s| {
        let waiter = {
            let manager = manager.clone();
            s.spawn(move || {
                let mut b = manager.register().unwrap();
                drop(b.lock_extension(rel).unwrap());
            })
        };
        while manager.waiters(&tag) < 1 {
            std::thread::yield_now();
        }
        let extender = {
            let (pool, manager) = (&pool, manager.clone());
            s.spawn(move || {
                let mut ext = Extender::new(pool, manager.register().unwrap(), ExtendStrategy::Bulk, 64);
                drop(ext.extend(rel).unwrap());
                ext.stats()
            })
        };
        while manager.waiters(&tag) < 2 {
            std::thread::yield_now();
        }
        drop(held);
        waiter.join().unwrap();
        let stats = extender.join().unwrap();
        assert_eq!(stats.blocks_added, 2, "{stats:?}");
        assert!(stats.lock_wait > std::time::Duration::ZERO);
    });
    assert_eq!(smgr.nblocks(rel, Fork::Main).unwrap(), 2);
    pool.check_invariants();
}

/// A bulk extension pins at most the backend's share of the pool,
/// `shared_buffers / lock.max_backends` (PostgreSQL's
/// `LimitAdditionalPins`), however long the queue or the ramp: with 256
/// buffers and 64 backends, 4 blocks an extension.
#[test]
fn bulk_extension_pins_at_most_the_backends_share_of_the_pool() {
    let dir = Scratch::new("pinshare");
    let smgr = Smgr::open_with(
        dir.path(),
        SmgrOptions { segment_blocks: 256, max_open_files: 8, ..Default::default() },
        Arc::new(FaultyIo::new()),
    )
    .unwrap();
    let mut config = turnstile_sync::Config::default();
    config.buffer.shared_buffers = 256;
    config.buffer.mapping_partitions = 16;
    config.lock.max_backends = 64;
    let pool = BufferPool::new(&config, smgr.clone()).unwrap();
    assert_eq!(pool.proportional_pins(), 4);
    let rel = RelFileId::new(1, 504);
    smgr.create(rel, Fork::Main).unwrap();
    let manager = LockManager::new(&config).unwrap();
    let mut ext = Extender::new(&pool, manager.register().unwrap(), ExtendStrategy::Bulk, 64);
    for _ in 0..200 {
        drop(ext.get_page(rel, ITEM).unwrap());
    }
    let stats = ext.stats();
    assert!(stats.extensions > 0);
    assert!(
        stats.blocks_added <= 4 * stats.extensions,
        "{} blocks in {} extensions: more than 4 pinned at once",
        stats.blocks_added,
        stats.extensions
    );
    assert!(stats.blocks_added > stats.extensions, "the ramp never grew past one block: {stats:?}");
    pool.check_invariants();
}
