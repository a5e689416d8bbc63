//! Bulk load through the engine: COPY rows into a heap, build a B-tree on
//! the loaded table, and find every key through the index (issue "access
//! methods": a 1 000 000-row table loads and every key is found).
//!
//! `cargo test --release -p turnstile-engine --test bulk_load -- --ignored --nocapture`
//! runs the full million and prints the times; CI runs 50 000 rows.

use std::time::Instant;
use turnstile_engine::query::{Operand, Query};
use turnstile_engine::types::ColumnType::{Int4, Text};
use turnstile_engine::types::Value;
use turnstile_engine::Engine;
use turnstile_sync::Config;

fn load_and_check(rows: i32) {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut s = engine.session().unwrap();
    s.create_table("t", &[("k", Int4), ("v", Int4), ("filler", Text)], None).unwrap();
    let filler = "f".repeat(40);
    // Keys in a scrambled order, so the index build really sorts.
    let key = |i: i32| ((i64::from(i) * 7919) % i64::from(rows)) as i32;
    let started = Instant::now();
    let n = s
        .insert_many("t", (0..rows).map(|i| vec![Value::Int4(key(i)), Value::Int4(i), Value::Text(filler.clone())]))
        .unwrap();
    let copied = started.elapsed();
    s.create_index("t", "t_k", &["k"], true).unwrap();
    let indexed = started.elapsed();
    engine.flush().unwrap();
    let flushed = started.elapsed();
    assert_eq!(n, rows as u64);
    let mut p = s.prepare(&Query::from("t").filter("k", Operand::Param(1)).select(["v"])).unwrap();
    assert!(p.plan().explain().contains("Index Scan using t_k"), "{}", p.plan().explain());
    for i in 0..rows {
        let got = s.execute(&mut p, &[Value::Int4(key(i))]).unwrap();
        assert_eq!(got, vec![vec![Value::Int4(i)]], "key {} (row {i})", key(i));
    }
    let checked = started.elapsed();
    println!(
        "{rows} rows: COPY {:.2} s, index build {:.2} s, flush {:.2} s, {rows} index lookups {:.2} s",
        copied.as_secs_f64(),
        (indexed - copied).as_secs_f64(),
        (flushed - indexed).as_secs_f64(),
        (checked - flushed).as_secs_f64()
    );
    engine.check_invariants();
}

#[test]
fn fifty_thousand_rows_load_and_every_key_is_found() {
    load_and_check(50_000);
}

#[test]
#[ignore = "a million rows: run with --release -- --ignored --nocapture"]
fn a_million_rows_load_and_every_key_is_found() {
    load_and_check(1_000_000);
}
