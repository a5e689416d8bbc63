//! UPDATE, DELETE and ROLLBACK through the engine: row changes under row
//! write locks, index maintenance, the undo log.

use std::sync::Arc;
use turnstile_engine::catalog::{PartitionBound, PartitionStrategy};
use turnstile_engine::query::{Operand, Query};
use turnstile_engine::types::ColumnType::{Int4, Int8, Text};
use turnstile_engine::types::Value;
use turnstile_engine::{Engine, EngineError, Session};
use turnstile_lock::LockMode;
use turnstile_sync::{Config, Profile};

fn accounts(engine: &Arc<Engine>, n: i32) -> Session {
    let mut s = engine.session().unwrap();
    s.create_table("acc", &[("aid", Int4), ("abalance", Int8), ("filler", Text)], None).unwrap();
    s.insert_many("acc", (0..n).map(|i| vec![Value::Int4(i), Value::Int8(0), Value::Text(format!("f{i}"))])).unwrap();
    s.create_index("acc", "acc_pkey", &["aid"], true).unwrap();
    s
}

fn by_aid(aid: i32) -> Query {
    Query::from("acc").filter("aid", Operand::Const(Value::Int4(aid)))
}

fn balance(s: &mut Session, aid: i32) -> Option<i64> {
    let rows = s.query(&by_aid(aid), &[]).unwrap();
    assert!(rows.len() <= 1, "aid {aid} found {} times", rows.len());
    rows.first().map(|r| r[1].as_i64().unwrap())
}

fn add(delta: i64) -> impl FnMut(&[Value]) -> turnstile_engine::Result<Option<Vec<Value>>> {
    move |row: &[Value]| {
        // Between the read and the write: let another thread run, so a
        // missing row lock shows as a lost update.
        std::thread::yield_now();
        let mut new = row.to_vec();
        new[1] = Value::Int8(row[1].as_i64().unwrap() + delta);
        Ok(Some(new))
    }
}

#[test]
fn update_by_index_and_by_scan_changes_exactly_the_matching_rows() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut s = accounts(&engine, 500);
    assert_eq!(s.update_rows(&by_aid(7), &[], &mut add(5)).unwrap(), 1);
    assert_eq!(balance(&mut s, 7), Some(5));
    assert_eq!(balance(&mut s, 8), Some(0));
    // A parameter, and a key that matches nothing.
    let q = Query::from("acc").filter("aid", Operand::Param(1));
    assert_eq!(s.update_rows(&q, &[Value::Int4(9)], &mut add(-3)).unwrap(), 1);
    assert_eq!(s.update_rows(&q, &[Value::Int4(10_000)], &mut add(1)).unwrap(), 0);
    assert_eq!(balance(&mut s, 9), Some(-3));
    // No filter: a sequential scan; the function is the residual WHERE.
    let n = s
        .update_rows(&Query::from("acc"), &[], &mut |row| {
            Ok((row[0].as_i64().unwrap() % 10 == 0).then(|| {
                let mut new = row.to_vec();
                new[2] = Value::Text("x".repeat(300)); // grows: moves off full pages
                new
            }))
        })
        .unwrap();
    assert_eq!(n, 50);
    let all = s.scan_all("acc").unwrap();
    assert_eq!(all.len(), 500, "an update lost or duplicated rows");
    assert_eq!(all.iter().filter(|r| r[2] == Value::Text("x".repeat(300))).count(), 50);
    for aid in [0, 10, 490, 7, 9] {
        assert!(balance(&mut s, aid).is_some(), "aid {aid} no longer found through the index");
    }
    // Errors: unknown column, bad arity, bad type; nothing changes.
    let bad = s.update_rows(&Query::from("acc").filter("nope", 1), &[], &mut add(1)).unwrap_err();
    assert_eq!(bad.sqlstate(), "42703", "{bad}");
    let bad = s.update_rows(&by_aid(1), &[], &mut |_| Ok(Some(vec![Value::Int4(1)]))).unwrap_err();
    assert!(matches!(bad, EngineError::Codec(_)), "{bad}");
    let bad = s.update_rows(&Query::from("nope"), &[], &mut add(1)).unwrap_err();
    assert_eq!(bad.sqlstate(), "42P01");
    assert_eq!(balance(&mut s, 1), Some(0));
    assert!(engine.locks_view().is_empty(), "statement locks outlived the statement");
    assert_eq!(engine.txns().row_locks_held(), 0, "row locks outlived the statement");
}

#[test]
fn changing_an_indexed_key_moves_the_index_entry_and_unique_keys_are_enforced() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut s = accounts(&engine, 100);
    let set_aid = |to: i32| {
        move |row: &[Value]| {
            let mut new = row.to_vec();
            new[0] = Value::Int4(to);
            Ok(Some(new))
        }
    };
    assert_eq!(s.update_rows(&by_aid(5), &[], &mut set_aid(1005)).unwrap(), 1);
    assert_eq!(balance(&mut s, 5), None, "the old key is still found");
    assert_eq!(balance(&mut s, 1005), Some(0));
    // The old key is free again; the new one is taken.
    s.insert("acc", &[Value::Int4(5), Value::Int8(55), Value::Null]).unwrap();
    assert_eq!(balance(&mut s, 5), Some(55));
    let dup = s.update_rows(&by_aid(6), &[], &mut set_aid(1005)).unwrap_err();
    assert_eq!(dup.sqlstate(), "23505", "{dup}");
    assert_eq!(balance(&mut s, 6), Some(0), "a failed key update lost the row");
    assert_eq!(s.scan_all("acc").unwrap().len(), 101);
    // Moving a key back and forth keeps exactly one live entry per key.
    for i in 0..20 {
        let (from, to) = if i % 2 == 0 { (1005, 2005) } else { (2005, 1005) };
        assert_eq!(s.update_rows(&by_aid(from), &[], &mut set_aid(to)).unwrap(), 1);
    }
    assert_eq!(balance(&mut s, 1005), Some(0));
    assert_eq!(balance(&mut s, 2005), None);
}

#[test]
fn eight_threads_incrementing_the_same_rows_lose_no_update_in_both_profiles() {
    for profile in Profile::ALL {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(dir.path(), Config::preset(profile)).unwrap();
        let rows = 4;
        drop(accounts(&engine, rows));
        let per_thread = 150;
        std::thread::scope(|scope| {
            for t in 0..8 {
                let engine = &engine;
                scope.spawn(move || {
                    let mut s = engine.session().unwrap();
                    let q = Query::from("acc").filter("aid", Operand::Param(1));
                    for i in 0..per_thread {
                        let aid = (t + i) % rows;
                        // Half in transaction blocks touching two rows in a
                        // fixed order (no deadlock), half autocommit.
                        if i % 2 == 0 {
                            s.begin().unwrap();
                            assert_eq!(s.update_rows(&q, &[Value::Int4(aid)], &mut add(1)).unwrap(), 1);
                            assert_eq!(s.update_rows(&by_aid(rows), &[], &mut add(0)).unwrap(), 0);
                            s.commit().unwrap();
                        } else {
                            assert_eq!(s.update_rows(&q, &[Value::Int4(aid)], &mut add(1)).unwrap(), 1);
                        }
                    }
                });
            }
        });
        let mut s = engine.session().unwrap();
        let total: i64 = (0..rows).map(|aid| balance(&mut s, aid).unwrap()).sum();
        assert_eq!(total, 8 * per_thread as i64, "{profile}: lost updates");
        assert_eq!(engine.txns().row_locks_held(), 0);
        assert!(engine.locks_view().is_empty(), "{profile}: locks left behind");
    }
}

#[test]
fn a_writer_waits_for_the_row_holder_and_sees_its_committed_value() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut a = accounts(&engine, 10);
    a.begin().unwrap();
    a.update_rows(&by_aid(3), &[], &mut add(100)).unwrap();
    std::thread::scope(|scope| {
        let waiter = scope.spawn(|| {
            let mut b = engine.session().unwrap();
            b.update_rows(&by_aid(3), &[], &mut add(1)).unwrap()
        });
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !engine.locks_view().iter().any(|r| !r.granted && r.locktype == "transactionid") {
            assert!(std::time::Instant::now() < deadline, "the second writer never waited on the transaction id");
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        assert!(!waiter.is_finished());
        a.commit().unwrap();
        assert_eq!(waiter.join().unwrap(), 1);
    });
    assert_eq!(balance(&mut a, 3), Some(101));
}

#[test]
fn two_writers_crossing_rows_deadlock_and_exactly_one_fails_with_40p01() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.lock.deadlock_timeout_ms = 50;
    let engine = Engine::open(dir.path(), config).unwrap();
    drop(accounts(&engine, 10));
    let barrier = std::sync::Barrier::new(2);
    let results: Vec<Result<(), EngineError>> = std::thread::scope(|scope| {
        let hs: Vec<_> = [(1, 2), (2, 1)]
            .into_iter()
            .map(|(first, second)| {
                let (engine, barrier) = (&engine, &barrier);
                scope.spawn(move || {
                    let mut s = engine.session().unwrap();
                    s.begin().unwrap();
                    s.update_rows(&by_aid(first), &[], &mut add(1)).unwrap();
                    barrier.wait();
                    let r = s.update_rows(&by_aid(second), &[], &mut add(1)).map(|_| ());
                    if r.is_ok() {
                        s.commit().unwrap();
                    } else {
                        s.rollback().unwrap();
                    }
                    r
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let failed: Vec<_> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!(failed.len(), 1, "{results:?}");
    assert_eq!(failed[0].sqlstate(), "40P01", "{}", failed[0]);
    let mut s = engine.session().unwrap();
    // The winner added 1 to both rows; the loser's first update was undone.
    assert_eq!(balance(&mut s, 1).unwrap() + balance(&mut s, 2).unwrap(), 2);
}

#[test]
fn rollback_undoes_inserts_updates_and_deletes_and_reports_ddl_as_kept() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut s = accounts(&engine, 50);
    let before = s.scan_all("acc").unwrap();
    s.begin().unwrap();
    s.insert("acc", &[Value::Int4(777), Value::Int8(1), Value::Null]).unwrap();
    s.update_rows(&by_aid(3), &[], &mut add(10)).unwrap();
    s.update_rows(&by_aid(777), &[], &mut add(10)).unwrap();
    s.update_rows(&by_aid(4), &[], &mut |row| {
        let mut new = row.to_vec();
        new[0] = Value::Int4(4004);
        Ok(Some(new))
    })
    .unwrap();
    assert_eq!(s.delete_rows(&by_aid(5), &[], &mut |_| Ok(true)).unwrap(), 1);
    assert_eq!(s.delete_rows(&Query::from("acc"), &[], &mut |r| Ok(r[0] == Value::Int4(6))).unwrap(), 1);
    s.create_table("made_in_txn", &[("a", Int4)], None).unwrap();
    assert_eq!(balance(&mut s, 5), None);
    let report = s.rollback().unwrap();
    assert_eq!((report.undone_inserts, report.undone_updates, report.undone_deletes), (1, 3, 2), "{report:?}");
    assert_eq!(report.kept_ddl, ["CREATE TABLE made_in_txn"]);
    assert!(!report.complete());
    assert!(!s.in_transaction());
    let mut after = s.scan_all("acc").unwrap();
    let mut want = before;
    after.sort_by_key(|r| r[0].as_i64());
    want.sort_by_key(|r| r[0].as_i64());
    assert_eq!(after, want, "rollback did not restore the table");
    assert_eq!(balance(&mut s, 777), None, "the undone insert is still found through the index");
    assert_eq!(balance(&mut s, 4004), None);
    assert_eq!(balance(&mut s, 4), Some(0));
    // The undone insert's key can be inserted again.
    s.insert("acc", &[Value::Int4(777), Value::Int8(2), Value::Null]).unwrap();
    assert_eq!(balance(&mut s, 777), Some(2));
    assert!(engine.locks_view().is_empty());
    assert_eq!(engine.txns().row_locks_held(), 0);
    assert!(matches!(
        s.rollback(),
        Err(EngineError::TransactionState(turnstile_engine::InvalidTransactionState::NoneInProgress))
    ));
}

#[test]
fn a_failed_statement_outside_a_block_leaves_nothing_and_a_dropped_session_aborts() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut s = accounts(&engine, 10);
    let rows = (100..200).map(|i| vec![Value::Int4(i), Value::Int8(0), Value::Null]).chain([vec![
        Value::Int4(3),
        Value::Int8(0),
        Value::Null,
    ]]);
    let err = s.insert_many("acc", rows).unwrap_err();
    assert_eq!(err.sqlstate(), "23505");
    assert_eq!(s.scan_all("acc").unwrap().len(), 10, "a failed COPY left rows behind");
    assert_eq!(balance(&mut s, 150), None);
    {
        let mut t = engine.session().unwrap();
        t.begin().unwrap();
        t.update_rows(&by_aid(2), &[], &mut add(9)).unwrap();
        t.insert("acc", &[Value::Int4(500), Value::Int8(0), Value::Null]).unwrap();
    }
    assert_eq!(balance(&mut s, 2), Some(0), "a session dropped mid-transaction kept its update");
    assert_eq!(balance(&mut s, 500), None);
    assert_eq!(engine.txns().row_locks_held(), 0);
}

#[test]
fn dml_on_a_partitioned_table_locks_only_the_touched_partitions_and_their_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut s = engine.session().unwrap();
    s.create_table("p", &[("k", Int4), ("v", Int4)], Some((PartitionStrategy::Range, "k"))).unwrap();
    for i in 0..4 {
        s.create_partition("p", &format!("p{i}"), PartitionBound::Range { from: i * 100, to: (i + 1) * 100 }).unwrap();
    }
    s.create_index("p", "p_k", &["k"], true).unwrap();
    s.insert_many("p", (0..400).map(|i| vec![Value::Int4(i), Value::Int4(0)])).unwrap();
    s.begin().unwrap();
    let q = Query::from("p").filter("k", 250);
    let n = s
        .update_rows(&q, &[], &mut |r| {
            let mut new = r.to_vec();
            new[1] = Value::Int4(1);
            Ok(Some(new))
        })
        .unwrap();
    assert_eq!(n, 1);
    let mine: Vec<_> =
        engine.locks_view().into_iter().filter(|r| r.backend == s.backend().id() && r.locktype == "relation").collect();
    let cat = engine.catalog().snapshot();
    let names: Vec<String> = mine.iter().map(|r| cat.relations[&r.relation.unwrap()].name.clone()).collect();
    assert!(mine.iter().all(|r| r.mode == LockMode::RowExclusive), "{mine:?}");
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(sorted, ["p", "p2", "p2_k_key"], "locked {names:?}");
    s.commit().unwrap();
    // Moving a row to another partition is refused, and changes nothing.
    let err = s
        .update_rows(&Query::from("p").filter("k", 5), &[], &mut |r| {
            let mut new = r.to_vec();
            new[0] = Value::Int4(305);
            Ok(Some(new))
        })
        .unwrap_err();
    assert_eq!(err.sqlstate(), "0A000", "{err}");
    assert_eq!(s.delete_rows(&Query::from("p"), &[], &mut |r| Ok(r[0].as_i64().unwrap() % 2 == 0)).unwrap(), 200);
    assert_eq!(s.scan_all("p").unwrap().len(), 200);
}

#[test]
fn a_waiting_writer_follows_a_row_moved_by_the_holder() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut a = accounts(&engine, 2000);
    a.begin().unwrap();
    // Grows the row past what its page has free: it moves to a new TID.
    a.update_rows(&by_aid(3), &[], &mut |row| {
        let mut new = row.to_vec();
        new[2] = Value::Text("y".repeat(3000));
        Ok(Some(new))
    })
    .unwrap();
    std::thread::scope(|scope| {
        let waiter = scope.spawn(|| {
            let mut b = engine.session().unwrap();
            b.update_rows(&by_aid(3), &[], &mut add(7)).unwrap()
        });
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !engine.locks_view().iter().any(|r| !r.granted && r.locktype == "transactionid") {
            assert!(std::time::Instant::now() < deadline, "the second writer never waited");
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        a.commit().unwrap();
        assert_eq!(waiter.join().unwrap(), 1, "the waiter lost the moved row");
    });
    let rows = a.query(&by_aid(3), &[]).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][1], Value::Int8(7));
    assert_eq!(rows[0][2], Value::Text("y".repeat(3000)));
}

#[test]
fn a_big_update_escalates_to_an_exclusive_table_lock_instead_of_row_locks() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let n = turnstile_engine::txn::ESCALATE_ROWS as i32 + 2000;
    let mut s = accounts(&engine, n);
    s.begin().unwrap();
    assert_eq!(s.update_rows(&Query::from("acc"), &[], &mut add(1)).unwrap(), n as u64);
    assert_eq!(engine.txns().row_locks_held(), turnstile_engine::txn::ESCALATE_ROWS);
    let table = engine.catalog().relation(s.database(), "acc").unwrap().id;
    assert!(engine
        .locks_view()
        .iter()
        .any(|r| r.relation == Some(table) && r.mode == LockMode::Exclusive && r.granted));
    let report = s.rollback().unwrap();
    assert_eq!(report.undone_updates, n as u64);
    assert_eq!(engine.txns().row_locks_held(), 0);
    assert_eq!(balance(&mut s, n - 1), Some(0));
}
