//! The cached metapage (`rd_amcache`): a handle — or a session, through
//! its relation cache — that cached the root keeps finding every key after
//! other handles split that root, refreshes its cache once, and never
//! uses a root past the DDL that replaced its index; a corrupt metapage is
//! still reported by the first read that needs it.
//!
//! Randomized tests print their seed; `TURNSTILE_SEED=<n>` replays one.

use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;
use turnstile_engine::btree::{BTree, BtreeError, BtreeOptions, CachedRoot, RootCacheStats};
use turnstile_engine::query::{Operand, Query, QueryMode};
use turnstile_engine::tid::Tid;
use turnstile_engine::types::{ColumnType, Value};
use turnstile_engine::Engine;
use turnstile_lock::{Backend, LockManager};
use turnstile_storage::io::OsIo;
use turnstile_storage::{BufferPool, BufferTag, Extender, Fork, PoolOptions, RelFileId, Smgr, SmgrOptions};
use turnstile_sync::config::{ExtendStrategy, LeafInsertLock};
use turnstile_sync::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use turnstile_sync::{Config, LwLockPolicy};

const REL: RelFileId = RelFileId::new(1, 16_384);
/// Key padding: ~14 entries per leaf and per inner page, so a few thousand
/// keys make a tree of three or four levels.
const PAD: usize = 500;

fn seed(test: &str) -> u64 {
    let seed = std::env::var("TURNSTILE_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
    });
    println!("{test}: seed {seed} (replay with TURNSTILE_SEED={seed})");
    seed
}

fn open(dir: &Path) -> BufferPool {
    let smgr = Smgr::open_with(
        dir,
        SmgrOptions { segment_blocks: 1024, max_open_files: 16, ..Default::default() },
        Arc::new(OsIo),
    )
    .expect("smgr");
    let options = PoolOptions {
        shared_buffers: 2048,
        mapping_partitions: 16,
        policy: LwLockPolicy::Fair,
        lookup_hints: true,
        huge_pages: false,
        prefault: false,
    };
    let pool = BufferPool::with_options(options, smgr.clone()).expect("pool");
    smgr.create(REL, Fork::Main).expect("create the index relation");
    pool
}

fn options(lock: LeafInsertLock) -> BtreeOptions {
    let edge_precheck = lock == LeafInsertLock::Exclusive;
    BtreeOptions {
        name: "wide".into(),
        key_types: vec![ColumnType::Text],
        unique: true,
        leaf_insert_lock: lock,
        edge_precheck,
    }
}

fn extender<'p>(pool: &'p BufferPool, locks: &Arc<LockManager>) -> Extender<'p, Backend> {
    Extender::new(pool, locks.register().expect("a backend slot"), ExtendStrategy::Bulk, 8)
}

fn lock_manager() -> Arc<LockManager> {
    LockManager::new(&Config::default()).expect("lock manager")
}

/// The `i`-th key: wide, so that the tree grows levels quickly.
fn key(i: u32) -> Vec<Value> {
    vec![Value::Text(format!("{i:08}{}", "k".repeat(PAD)))]
}

fn tid(i: u32) -> Tid {
    Tid::new(i / 100, (i % 100) as u16)
}

/// The root the metapage names now (a fresh handle's first read).
fn real_root(pool: &BufferPool, lock: LeafInsertLock) -> CachedRoot {
    BTree::open(pool, REL, options(lock)).unwrap().cached_root().expect("open caches the metapage's root")
}

/// One handle caches a leaf root; another grows the tree by three levels;
/// handles holding roots cached at every level in between (leaf, inner)
/// search, scan and insert correctly, each refreshing its cache once,
/// while the splitting handle's cache followed its own root splits.
fn stale_roots_are_refreshed(lock: LeafInsertLock) {
    let dir = tempfile::tempdir().unwrap();
    let pool = open(dir.path());
    let locks = lock_manager();
    let mut ext = extender(&pool, &locks);
    let writer = BTree::create(&pool, &mut ext, REL, options(lock)).unwrap();
    for i in 0..5 {
        writer.insert(&mut ext, &key(i), tid(i)).unwrap();
    }
    let reader = BTree::attach(&pool, REL, options(lock)).unwrap();
    assert_eq!(reader.cached_root(), None);
    assert_eq!(reader.search(&key(3)).unwrap(), vec![tid(3)]);
    let leaf_root = reader.cached_root().expect("the first descent caches the root");
    assert_eq!(leaf_root.level, 0);
    assert_eq!(reader.search(&key(4)).unwrap(), vec![tid(4)]);
    assert_eq!(reader.root_cache_stats(), RootCacheStats { metapage_reads: 1, stale_roots: 0 }, "a cache hit");

    // Grow the tree, noting the root at each level it passes through.
    let mut roots = vec![leaf_root];
    let n = 4_000;
    for i in 5..n {
        writer.insert(&mut ext, &key(i), tid(i)).unwrap();
        let r = writer.cached_root().unwrap();
        if r != *roots.last().unwrap() {
            roots.push(r);
        }
    }
    let real = real_root(&pool, lock);
    assert!(real.level >= 3, "the tree did not grow enough: {real:?}");
    assert_eq!(writer.cached_root(), Some(real), "the splitting handle follows its own root splits");
    assert_eq!(writer.root_cache_stats().stale_roots, 0, "{:?}", writer.root_cache_stats());
    assert_eq!(roots.iter().map(|r| r.level).collect::<Vec<_>>(), (0..=real.level).collect::<Vec<_>>());

    // Searches from the cached leaf root find every key; one refresh.
    for i in 0..n {
        assert_eq!(reader.search(&key(i)).unwrap(), vec![tid(i)], "key {i}");
    }
    assert_eq!(reader.cached_root(), Some(real));
    assert_eq!(reader.root_cache_stats(), RootCacheStats { metapage_reads: 2, stale_roots: 1 });

    let mut expected: Vec<Tid> = (0..n).map(tid).collect();
    for stale in &roots[..roots.len() - 1] {
        // A range scan from a stale root.
        let scanner = BTree::attach(&pool, REL, options(lock)).unwrap().with_cached_root(Some(*stale));
        let all: Vec<Tid> =
            scanner.range(Bound::Unbounded, Bound::Unbounded).unwrap().map(|e| e.unwrap().tid).collect();
        assert!(all == expected, "scan from {stale:?}: {} entries, expected {}", all.len(), expected.len());
        assert_eq!(scanner.root_cache_stats(), RootCacheStats { metapage_reads: 1, stale_roots: 1 }, "{stale:?}");
        assert_eq!(scanner.cached_root(), Some(real));

        // An insert (and its unique check) from a stale root; a key at the
        // far right, so a trusted stale root would walk a whole level.
        let inserter = BTree::attach(&pool, REL, options(lock)).unwrap().with_cached_root(Some(*stale));
        let k = n + stale.level as u32;
        inserter.insert(&mut ext, &key(k), tid(k)).unwrap();
        assert!(matches!(inserter.insert(&mut ext, &key(k), tid(k + 1)), Err(BtreeError::UniqueViolation { .. })));
        assert_eq!(inserter.root_cache_stats(), RootCacheStats { metapage_reads: 1, stale_roots: 1 }, "{stale:?}");
        assert_eq!(inserter.search(&key(k)).unwrap(), vec![tid(k)]);
        expected.push(tid(k));
    }
    assert_eq!(writer.check().unwrap().entries, u64::from(n) + roots.len() as u64 - 1);
    pool.check_invariants();
}

#[test]
fn stale_cached_roots_are_refreshed_and_every_key_is_found_exclusive() {
    stale_roots_are_refreshed(LeafInsertLock::Exclusive);
}

#[test]
fn stale_cached_roots_are_refreshed_and_every_key_is_found_share_then_exclusive() {
    stale_roots_are_refreshed(LeafInsertLock::ShareThenExclusive);
}

/// Readers, each with its own handle (its own cache, as each backend has),
/// look up keys already inserted while one writer grows the tree from a
/// single leaf: every key is found, and each reader ends with the final
/// root cached.
#[test]
fn readers_with_their_own_cached_roots_find_every_key_while_the_root_splits() {
    let seed = seed("readers_with_their_own_cached_roots_find_every_key_while_the_root_splits");
    let dir = tempfile::tempdir().unwrap();
    let pool = open(dir.path());
    let locks = lock_manager();
    let lock = LeafInsertLock::Exclusive;
    let mut ext = extender(&pool, &locks);
    let writer = BTree::create(&pool, &mut ext, REL, options(lock)).unwrap();
    let n = 3_000u32;
    let mut order: Vec<u32> = (0..n).collect();
    order.shuffle(&mut SmallRng::seed_from_u64(seed));
    writer.insert(&mut ext, &key(order[0]), tid(order[0])).unwrap();
    let inserted = AtomicUsize::new(1);
    let done = AtomicBool::new(false);
    let stats = std::thread::scope(|s| {
        let readers: Vec<_> = (0..3u64)
            .map(|r| {
                let (pool, order, inserted, done) = (&pool, &order, &inserted, &done);
                s.spawn(move || {
                    let mut rng = SmallRng::seed_from_u64(seed ^ (r + 1));
                    let tree = BTree::attach(pool, REL, options(lock)).unwrap();
                    let mut lookups = 0u64;
                    while !done.load(Ordering::Acquire) {
                        let upto = inserted.load(Ordering::Acquire);
                        let i = order[rng.random_range(0..upto)];
                        assert_eq!(tree.search(&key(i)).unwrap(), vec![tid(i)], "seed {seed}: key {i}");
                        lookups += 1;
                    }
                    // Once more after the last split.
                    assert_eq!(tree.search(&key(order[0])).unwrap(), vec![tid(order[0])]);
                    (tree.cached_root(), tree.root_cache_stats(), lookups)
                })
            })
            .collect();
        for &i in &order[1..] {
            writer.insert(&mut ext, &key(i), tid(i)).unwrap();
            inserted.fetch_add(1, Ordering::Release);
        }
        done.store(true, Ordering::Release);
        readers.into_iter().map(|h| h.join().unwrap()).collect::<Vec<_>>()
    });
    let real = real_root(&pool, lock);
    assert!(real.level >= 2, "{real:?}");
    for (root, st, lookups) in stats {
        assert_eq!(root, Some(real), "seed {seed}");
        // At most one metapage read per descent: the first, then one per
        // refresh.
        assert_eq!(st.metapage_reads, st.stale_roots + 1, "seed {seed}: {st:?}");
        // A reader sees its root stale only after the metapage names a
        // newer one (the old root is unlocked after the metapage is
        // updated), so at most once per root split.
        assert!(st.stale_roots <= u64::from(real.level), "seed {seed}: {st:?} after {lookups} lookups");
    }
    assert_eq!(writer.check().unwrap().entries, u64::from(n));
    pool.check_invariants();
}

/// Flips the metapage's magic number through the pool (so its checksum
/// stays valid: a sound page with an impossible metapage).
fn corrupt_metapage(pool: &BufferPool) {
    let pin = pool.read_buffer(BufferTag::new(REL, Fork::Main, 0)).unwrap();
    let mut g = pin.lock_exclusive();
    let at = g.windows(4).position(|w| w == b"TBTM").expect("the metapage magic");
    g[at] ^= 0xFF;
    g.mark_dirty();
}

/// The first, uncached read of a corrupt metapage is a typed error; a
/// handle whose cached root is still the root does not need the metapage
/// (as in PostgreSQL), but the structure check reads the real one; a
/// cached root that fails its check is refreshed, and a corrupt metapage
/// then reported.
#[test]
fn a_corrupt_metapage_is_reported_by_the_first_read_that_needs_it() {
    let dir = tempfile::tempdir().unwrap();
    let pool = open(dir.path());
    let lock = LeafInsertLock::Exclusive;
    let n = 2_000u32;
    BTree::build(&pool, REL, options(lock), (0..n).map(|i| (key(i), tid(i)))).unwrap();
    let real = real_root(&pool, lock);
    assert!(real.level >= 1);

    // A bogus cached root with a sound metapage: refreshed, keys found.
    for bogus in [
        CachedRoot { root: 1, level: real.level },
        CachedRoot { root: 1, level: 0 },
        CachedRoot { root: 1_000_000, level: 1 },
    ] {
        let t = BTree::attach(&pool, REL, options(lock)).unwrap().with_cached_root(Some(bogus));
        assert_eq!(t.search(&key(n - 1)).unwrap(), vec![tid(n - 1)], "{bogus:?}");
        assert_eq!(t.root_cache_stats(), RootCacheStats { metapage_reads: 1, stale_roots: 1 }, "{bogus:?}");
        assert_eq!(t.cached_root(), Some(real));
    }

    let cached = BTree::open(&pool, REL, options(lock)).unwrap();
    corrupt_metapage(&pool);
    let fresh = BTree::attach(&pool, REL, options(lock)).unwrap();
    let err = fresh.search(&key(7)).unwrap_err();
    assert!(matches!(err, BtreeError::Corrupt { block: 0, .. }), "{err}");
    assert!(err.to_string().contains("magic"), "{err}");
    assert_eq!(fresh.cached_root(), None, "a failed metapage read caches nothing");
    assert!(matches!(fresh.search(&key(7)), Err(BtreeError::Corrupt { block: 0, .. })), "and fails again");
    assert!(matches!(BTree::open(&pool, REL, options(lock)), Err(BtreeError::Corrupt { block: 0, .. })));

    assert_eq!(cached.search(&key(7)).unwrap(), vec![tid(7)], "the cached root is still the root");
    assert!(matches!(cached.check(), Err(BtreeError::Corrupt { block: 0, .. })), "check reads the real metapage");

    let bogus =
        BTree::attach(&pool, REL, options(lock)).unwrap().with_cached_root(Some(CachedRoot { root: 1, level: 0 }));
    assert!(matches!(bogus.search(&key(n - 1)), Err(BtreeError::Corrupt { block: 0, .. })));
    pool.check_invariants();
}

/// `accounts(aid int4, name text)` with a unique index on the wide `name`;
/// returns the index's id.
fn wide_table(s: &mut turnstile_engine::Session, rows: std::ops::Range<u32>) -> u32 {
    s.create_table("t", &[("aid", ColumnType::Int4), ("name", ColumnType::Text)], None).unwrap();
    let ix = s.create_index("t", "t_name", &["name"], true).unwrap();
    insert_rows(s, rows);
    ix
}

fn row(i: u32) -> Vec<Value> {
    let mut r = vec![Value::Int4(i as i32)];
    r.extend(key(i));
    r
}

fn insert_rows(s: &mut turnstile_engine::Session, rows: std::ops::Range<u32>) {
    s.insert_many("t", rows.map(row)).unwrap();
}

fn by_name() -> Query {
    Query::from("t").filter("name", Operand::Param(1)).select(["aid"])
}

/// Session 1 caches the index root; session 2 inserts until the root has
/// split three times; session 1's prepared lookups still find every row,
/// with one refresh of its cache; session 2, which split the root, never
/// found its own cache stale.
#[test]
fn a_session_s_cached_root_is_refreshed_after_another_session_splits_it() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut s1 = engine.session().unwrap();
    let mut s2 = engine.session().unwrap();
    let ix = wide_table(&mut s1, 0..5);
    let q = by_name();
    let mut slot = None;
    for i in 0..5 {
        let rows = s1.run(QueryMode::Prepared, &q, &mut slot, &key(i)).unwrap();
        assert_eq!(rows, vec![vec![Value::Int4(i as i32)]]);
    }
    let before = s1.cached_index_root(ix).expect("the scans cached the root");
    assert_eq!(before.level, 0);
    let warm = s1.root_cache_stats();
    assert_eq!(warm.stale_roots, 0);
    assert_eq!(warm.metapage_reads, 1, "{warm:?}: one read, by the first insert");

    let n = 3_000;
    insert_rows(&mut s2, 5..n);
    let after = s2.cached_index_root(ix).expect("the inserts cached the root");
    assert!(after.level >= 2, "{after:?}");
    assert_eq!(s2.root_cache_stats().stale_roots, 0, "{:?}", s2.root_cache_stats());
    assert_eq!(s1.cached_index_root(ix), Some(before), "nothing told session 1");

    for i in 0..n {
        let rows = s1.run(QueryMode::Prepared, &q, &mut slot, &key(i)).unwrap();
        assert_eq!(rows, vec![vec![Value::Int4(i as i32)]], "row {i}");
    }
    assert_eq!(s1.cached_index_root(ix), Some(after));
    let refreshed = s1.root_cache_stats();
    assert_eq!(refreshed.stale_roots, 1, "{refreshed:?}");
    assert_eq!(refreshed.metapage_reads, warm.metapage_reads + 1, "{refreshed:?}");
    engine.check_invariants();
}

/// A cached root belongs to one relation file: DDL (here `DROP INDEX` and
/// `CREATE INDEX` of the same name) makes every session forget it, and the
/// next execution reads the new index's metapage.
#[test]
fn dropping_and_recreating_an_index_forgets_its_cached_root() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut s1 = engine.session().unwrap();
    let mut s2 = engine.session().unwrap();
    let old = wide_table(&mut s1, 0..1_000);
    let q = by_name();
    let mut slot = None;
    assert_eq!(s1.run(QueryMode::Prepared, &q, &mut slot, &key(500)).unwrap(), vec![vec![Value::Int4(500)]]);
    assert!(s1.cached_index_root(old).is_some(), "cached");
    let reads = s1.root_cache_stats().metapage_reads;

    s2.drop_relation("t_name").unwrap();
    insert_rows(&mut s2, 1_000..1_500);
    let new = s2.create_index("t", "t_name", &["name"], true).unwrap();
    assert_ne!(new, old);
    assert_eq!(s1.cached_index_root(old), None, "DDL invalidated the cached root");
    assert_eq!(s1.cached_index_root(new), None);

    for i in [0, 500, 999, 1_000, 1_499] {
        let rows = s1.run(QueryMode::Prepared, &q, &mut slot, &key(i)).unwrap();
        assert_eq!(rows, vec![vec![Value::Int4(i as i32)]], "row {i}");
    }
    let new_root = s1.cached_index_root(new).expect("cached again");
    let opts = BtreeOptions::new("t_name", vec![ColumnType::Text], true, engine.config());
    let file = RelFileId::new(s1.database(), new);
    assert_eq!(Some(new_root), BTree::open(engine.pool(), file, opts).unwrap().cached_root(), "the new index's root");
    assert_eq!(s1.root_cache_stats().metapage_reads, reads + 1, "one read of the new metapage");
    assert_eq!(s1.root_cache_stats().stale_roots, 0);

    // The insert path caches the new index's root too.
    insert_rows(&mut s2, 1_500..1_600);
    assert!(s2.cached_index_root(new).is_some());
    assert_eq!(s2.cached_index_root(old), None);
    let rows = s1.run(QueryMode::Prepared, &q, &mut slot, &key(1_599)).unwrap();
    assert_eq!(rows, vec![vec![Value::Int4(1_599)]]);
    engine.check_invariants();
}
