//! Write errors that must reach the client as what they are: the undo
//! log's limit (`54000`, the statement fails and is undone, never a write
//! kept without undo), and a storage fault met by a unique check (`XX001`,
//! never a duplicate key).

use std::io::{Read, Seek, SeekFrom, Write};
use turnstile_engine::types::ColumnType::{Int4, Text};
use turnstile_engine::types::Value;
use turnstile_engine::{Engine, EngineError};
use turnstile_storage::rel::{Fork, RelFileId};
use turnstile_sync::Config;

fn config() -> Config {
    let mut c = Config::default();
    c.txn.autovacuum_naptime_ms = 0;
    c
}

/// A row of `t` with `2 × filler` bytes of text.
fn row(k: i32, filler: usize) -> Vec<Value> {
    vec![Value::Int4(k), Value::Text("x".repeat(filler)), Value::Text("y".repeat(filler))]
}

#[test]
fn a_write_past_the_undo_limit_fails_with_54000_and_is_undone() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config();
    c.set("txn.undo_limit_bytes", "1024").unwrap();
    let engine = Engine::open(dir.path(), c).unwrap();
    let mut s = engine.session().unwrap();
    s.create_table("t", &[("k", Int4), ("v", Text), ("w", Text)], None).unwrap();
    s.insert_many("t", (0..10).map(|k| row(k, 1))).unwrap();

    // Outside a block: the statement fails and none of its rows stay.
    let err = s.insert_many("t", (100..1100).map(|k| row(k, 1))).unwrap_err();
    assert!(matches!(err, EngineError::UndoLimit { limit_bytes: 1024 }), "{err}");
    assert_eq!(err.sqlstate(), "54000");
    assert_eq!(s.scan_all("t").unwrap().len(), 10, "a write past the limit was kept");

    // Inside a block: the statement fails; the transaction rolls back in full.
    s.begin().unwrap();
    s.insert("t", &row(50, 1)).unwrap();
    assert_eq!(s.insert_many("t", (200..1200).map(|k| row(k, 1))).unwrap_err().sqlstate(), "54000");
    let report = s.rollback().unwrap();
    assert!(report.complete(), "{report:?}");
    assert_eq!(s.scan_all("t").unwrap().len(), 10);
    engine.check_invariants();
}

#[test]
fn a_checksum_failure_in_a_unique_check_is_a_storage_error_not_a_duplicate_key() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), config()).unwrap();
    let mut s = engine.session().unwrap();
    s.create_table("t", &[("k", Int4), ("v", Text), ("w", Text)], None).unwrap();
    s.create_index("t", "t_k", &["k"], true).unwrap();
    // A row that fills most of block 0, so the next one goes to block 1.
    s.insert("t", &row(1, 2500)).unwrap();
    let err = s.insert("t", &row(1, 2500)).unwrap_err();
    assert_eq!(err.sqlstate(), "23505", "the check works before the fault: {err}");
    let rel = engine.catalog().snapshot().find(s.database(), "t").unwrap().id;
    let file = RelFileId::new(s.database(), rel);
    engine.flush().unwrap();
    engine.pool().drop_relation_buffers(file, Fork::Main, 0).unwrap();
    // Flip bytes in the middle of block 0 (inside the first row): its
    // checksum no longer matches.
    let path = engine.smgr().segment_path(file, Fork::Main, 0);
    let mut f = std::fs::OpenOptions::new().read(true).write(true).open(&path).unwrap();
    let mut b = [0u8; 16];
    f.seek(SeekFrom::Start(6000)).unwrap();
    f.read_exact(&mut b).unwrap();
    b.iter_mut().for_each(|x| *x ^= 0xff);
    f.seek(SeekFrom::Start(6000)).unwrap();
    f.write_all(&b).unwrap();
    f.sync_all().unwrap();
    drop(f);

    let err = s.insert("t", &row(1, 2500)).unwrap_err();
    assert_ne!(err.sqlstate(), "23505", "a storage fault reported as a duplicate key: {err}");
    assert_eq!(err.sqlstate(), "XX001", "{err}");
}
