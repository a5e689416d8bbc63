//! `btree.leaf_insert_lock` is honoured: counted on the `BufferContent`
//! tranche, an insert that does not split takes one content lock per level
//! under `exclusive` (the handle has the root cached, so the metapage is
//! not locked), and one more — the shared visit of
//! the leaf before its exclusive lock — under `share_then_exclusive`
//! (Postgres Pro 2018). This file holds a single test because the tranche counters
//! are process-wide: another test running beside it would add its own
//! acquisitions.

use std::sync::Arc;
use turnstile_engine::btree::{BTree, BtreeOptions};
use turnstile_engine::tid::Tid;
use turnstile_engine::types::{ColumnType, Value};
use turnstile_lock::LockManager;
use turnstile_storage::io::OsIo;
use turnstile_storage::{BufferPool, Extender, Fork, PoolOptions, RelFileId, Smgr, SmgrOptions};
use turnstile_sync::config::{ExtendStrategy, LeafInsertLock};
use turnstile_sync::{tranche_stats, Config, LwLockPolicy, Tranche};

#[test]
fn the_classic_leaf_lock_takes_one_more_content_lock_per_insert() {
    let dir = tempfile::tempdir().unwrap();
    let smgr = Smgr::open_with(
        dir.path(),
        SmgrOptions { segment_blocks: 1024, max_open_files: 8, ..Default::default() },
        Arc::new(OsIo),
    )
    .unwrap();
    let options = PoolOptions {
        shared_buffers: 1024,
        mapping_partitions: 16,
        policy: LwLockPolicy::Fair,
        lookup_hints: true,
        huge_pages: false,
        prefault: false,
    };
    let pool = BufferPool::with_options(options, smgr.clone()).unwrap();
    let locks = LockManager::new(&Config::default()).unwrap();
    for (n, lock) in [LeafInsertLock::Exclusive, LeafInsertLock::ShareThenExclusive].into_iter().enumerate() {
        let rel = RelFileId::new(1, 20_000 + n as u32);
        smgr.create(rel, Fork::Main).unwrap();
        let opts = BtreeOptions {
            name: format!("i{n}"),
            key_types: vec![ColumnType::Int8],
            unique: false,
            leaf_insert_lock: lock,
            edge_precheck: true,
        };
        // Even keys, 90 % full leaves: room for the odd keys inserted below
        // without a split, one or two per leaf.
        let tree = BTree::build(&pool, rel, opts, (0..100_000i64).map(|k| (vec![Value::Int8(2 * k)], Tid::new(0, 0))))
            .unwrap();
        let levels = tree.check().unwrap().pages_per_level.len() as u64;
        assert!(levels >= 2);
        // Read every page in once, so the inserts below are all buffer hits
        // (a read-in takes the content lock too).
        assert_eq!(tree.range(std::ops::Bound::Unbounded, std::ops::Bound::Unbounded).unwrap().count(), 100_000);
        let mut ext = Extender::new(&pool, locks.register().unwrap(), ExtendStrategy::Bulk, 8);
        let inserts = 300u64;
        let before = tranche_stats(Tranche::BufferContent);
        for k in 0..inserts as i64 {
            tree.insert(&mut ext, &[Value::Int8(2 * (k * 331) + 1)], Tid::new(1, k as u16)).unwrap();
        }
        let taken = tranche_stats(Tranche::BufferContent).since(&before).acquisitions;
        let per_level = match lock {
            LeafInsertLock::Exclusive => 1,
            LeafInsertLock::ShareThenExclusive => 2,
        };
        // One lock per inner level, and the leaf's; the build cached the
        // root, so no insert read the metapage.
        assert_eq!(tree.root_cache_stats().metapage_reads, 0);
        assert_eq!(taken, inserts * ((levels - 1) + per_level), "{lock:?} with {levels} levels");
        pool.check_invariants();
    }
}
