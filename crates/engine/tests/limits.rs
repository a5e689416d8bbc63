//! Resource limits surface as typed errors with a message that names the
//! knob, and the engine keeps working afterwards (or refuses to open and
//! says what to do): a full lock table, `max_backends`, `max_open_files`
//! below the relations of one query, a buffer pool with every buffer
//! pinned, a data directory that cannot be created, a corrupted catalog.

use turnstile_engine::catalog::{CatalogError, PartitionBound, PartitionStrategy};
use turnstile_engine::heap::HeapError;
use turnstile_engine::query::Query;
use turnstile_engine::types::ColumnType::{Int4, Text};
use turnstile_engine::types::Value;
use turnstile_engine::{Engine, EngineError, Session};
use turnstile_lock::LockError;
use turnstile_storage::rel::{BufferTag, Fork, RelFileId};
use turnstile_storage::StorageError;
use turnstile_sync::{Config, Profile};

/// `t` range-partitioned on `k` into `partitions` partitions of 10 keys,
/// one row per key, `pad` bytes of text each.
fn partitioned(s: &mut Session, partitions: i32, pad: usize) {
    s.create_table("t", &[("k", Int4), ("v", Int4), ("pad", Text)], Some((PartitionStrategy::Range, "k"))).unwrap();
    for p in 0..partitions {
        let bound = PartitionBound::Range { from: i64::from(p * 10), to: i64::from(p * 10 + 10) };
        s.create_partition("t", &format!("t_{p}"), bound).unwrap();
    }
    let rows = (0..partitions * 10).map(|k| vec![Value::Int4(k), Value::Int4(k % 7), Value::Text("x".repeat(pad))]);
    s.insert_many("t", rows).unwrap();
}

/// `v = 3` is not on the partition key: every partition is scanned and locked.
fn count_v3(s: &mut Session) -> Result<usize, EngineError> {
    Ok(s.query(&Query::from("t").filter("v", Value::Int4(3)).select(["k"]), &[])?.len())
}

#[test]
fn lock_table_full_is_a_typed_error_and_the_engine_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    {
        let engine = Engine::open(dir.path(), Config::default()).unwrap();
        partitioned(&mut engine.session().unwrap(), 60, 8);
        engine.flush().unwrap();
    }
    let mut config = Config::preset(Profile::Classic); // 16 fast-path slots
    config.lock.max_locks = 32;
    let engine = Engine::open(dir.path(), config).unwrap();
    let mut s = engine.session().unwrap();
    let expected = (0..600).filter(|k| k % 7 == 3).count();
    // 61 relation locks: 16 by the fast path, 45 > 32 in the shared table.
    let err = count_v3(&mut s).unwrap_err();
    assert!(matches!(err, EngineError::Lock(LockError::OutOfLockMemory { max_locks: 32 })), "{err:?}");
    assert!(err.to_string().contains("raise lock.max_locks"), "{err}");
    // The failed statement left nothing behind, and smaller queries work.
    assert!(engine.locks_view().is_empty(), "{:?}", engine.locks_view());
    let one = s.query(&Query::from("t").filter("k", Value::Int4(13)).select(["v"]), &[]).unwrap();
    assert_eq!(one, vec![vec![Value::Int4(13 % 7)]]);
    drop(s);
    // With room for the query, the same engine's data answers it.
    drop(engine);
    let mut config = Config::preset(Profile::Classic);
    config.lock.max_locks = 128;
    let engine = Engine::open(dir.path(), config).unwrap();
    assert_eq!(count_v3(&mut engine.session().unwrap()).unwrap(), expected);
    engine.check_invariants();
}

#[test]
fn max_backends_reached_is_a_typed_error_until_a_session_ends() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.lock.max_backends = 2;
    let engine = Engine::open(dir.path(), config).unwrap();
    let mut a = engine.session().unwrap();
    let b = engine.session().unwrap();
    let err = engine.session().unwrap_err();
    assert!(matches!(err, EngineError::TooManySessions(_)), "{err:?}");
    assert!(err.to_string().contains("lock.max_backends"), "{err}");
    drop(b);
    let mut c = engine.session().unwrap();
    a.create_table("t", &[("a", Int4)], None).unwrap();
    c.insert("t", &[Value::Int4(1)]).unwrap();
    assert_eq!(a.scan_all("t").unwrap(), vec![vec![Value::Int4(1)]]);
    engine.check_invariants();
}

#[test]
fn max_open_files_below_the_relations_of_one_query_still_answers_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.storage.max_open_files = 4;
    config.buffer.shared_buffers = 16; // pages are evicted and read back
    config.buffer.mapping_partitions = 16;
    let engine = Engine::open(dir.path(), config).unwrap();
    let mut s = engine.session().unwrap();
    partitioned(&mut s, 30, 600);
    engine.flush().unwrap();
    let before = engine.fd_stats();
    let expected = (0..300).filter(|k| k % 7 == 3).count();
    for _ in 0..3 {
        assert_eq!(count_v3(&mut s).unwrap(), expected);
    }
    let after = engine.fd_stats();
    assert!(after.closes > before.closes, "the vfd cache closed no file: {before:?} → {after:?}");
    assert!(after.open_now <= 4, "more files open than storage.max_open_files: {after:?}");
    engine.check_invariants();
}

#[test]
fn every_buffer_pinned_is_a_typed_error_and_unpinning_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.buffer.shared_buffers = 16;
    config.buffer.mapping_partitions = 16;
    let engine = Engine::open(dir.path(), config).unwrap();
    let mut s = engine.session().unwrap();
    s.create_table("big", &[("k", Int4), ("pad", Text)], None).unwrap();
    s.create_table("small", &[("k", Int4)], None).unwrap();
    // ~2 kB rows: 4 per page, 40 pages.
    s.insert_many("big", (0..160).map(|k| vec![Value::Int4(k), Value::Text("p".repeat(2000))])).unwrap();
    s.insert("small", &[Value::Int4(7)]).unwrap();
    engine.flush().unwrap();
    let db = engine.catalog().database("postgres").unwrap();
    let big = engine.catalog().relation(db, "big").unwrap().id;
    let pins: Vec<_> = (0..16)
        .map(|block| engine.pool().read_buffer(BufferTag::new(RelFileId::new(db, big), Fork::Main, block)).unwrap())
        .collect();
    let err = s.scan_all("small").unwrap_err();
    let pinned = |e: &StorageError| matches!(e, StorageError::AllBuffersPinned { shared_buffers: 16 });
    let typed = match &err {
        EngineError::Storage(e) | EngineError::Heap(HeapError::Storage(e)) => pinned(e),
        _ => false,
    };
    assert!(typed, "{err:?}");
    assert!(err.to_string().contains("buffer.shared_buffers"), "{err}");
    drop(pins);
    assert_eq!(s.scan_all("small").unwrap(), vec![vec![Value::Int4(7)]]);
    assert_eq!(s.scan_all("big").unwrap().len(), 160);
    engine.check_invariants();
}

#[test]
fn an_uncreatable_data_directory_is_refused_with_its_path() {
    // Root ignores permission bits, so use a path under a regular file:
    // creating it fails with ENOTDIR for every user.
    let parent = tempfile::NamedTempFile::new().unwrap();
    let dir = parent.path().join("data");
    let err = Engine::open(&dir, Config::default()).unwrap_err();
    let text = err.to_string();
    assert!(text.contains(&parent.path().display().to_string()), "the message names the path: {text}");
    assert!(matches!(err, EngineError::Storage(_) | EngineError::Catalog(_)), "{err:?}");
}

#[test]
fn a_corrupted_catalog_is_refused_with_what_to_do_and_a_restored_one_opens() {
    let dir = tempfile::tempdir().unwrap();
    {
        let engine = Engine::open(dir.path(), Config::default()).unwrap();
        let mut s = engine.session().unwrap();
        s.create_table("kept", &[("a", Int4)], None).unwrap();
        s.insert("kept", &[Value::Int4(42)]).unwrap();
        engine.flush().unwrap();
    }
    let path = dir.path().join("catalog");
    let good = std::fs::read(&path).unwrap();
    let mut bad = good.clone();
    let last = bad.len() - 2;
    bad[last] ^= 0x20; // one flipped bit in the body
    std::fs::write(&path, &bad).unwrap();
    let err = Engine::open(dir.path(), Config::default()).unwrap_err();
    assert!(matches!(err, EngineError::Catalog(CatalogError::Corrupted { .. })), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("restore it from a backup"), "{text}");
    // Truncated too.
    std::fs::write(&path, &good[..good.len() / 2]).unwrap();
    assert!(matches!(
        Engine::open(dir.path(), Config::default()),
        Err(EngineError::Catalog(CatalogError::Corrupted { .. }))
    ));
    // Restored, the engine opens with the data.
    std::fs::write(&path, &good).unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    assert_eq!(engine.session().unwrap().scan_all("kept").unwrap(), vec![vec![Value::Int4(42)]]);
    engine.check_invariants();
}
