//! Simulated power loss (issue 34's crash tests): the engine runs on
//! [`PowerLossIo`], which keeps every file as its last `fsync` left it.
//! Writer threads commit ledger transactions (a row inserted, a counter
//! updated in place), an open transaction rewrites committed rows in place
//! and inserts rows of its own, bulk loads (thousands of rows, B-tree
//! splits) commit now and then, and checkpoints run; at a random moment
//! the power is cut — everything not synced is lost, and the last page
//! written may be torn. Then:
//!
//! * no data page on disk carries an LSN beyond the durable end of WAL
//!   (WAL before data);
//! * recovery opens the directory; every page verifies;
//! * every acknowledged commit is there, nothing of the open transaction,
//!   nothing of an unacknowledged commit but the one per writer in flight;
//! * the counter equals the number of ledger rows, and every row is found
//!   through the primary key;
//! * DDL cut short leaves a consistent catalog: a DDL thread creates
//!   tables, fills each with one bulk transaction, builds a unique index
//!   on it (a B-tree build with splits) and drops the table before; every
//!   table it saw complete is there whole with its index agreeing, every
//!   table it saw dropped is gone, and the one in flight is all or nothing.
//!
//! Several rounds on one directory, each with its own cut; the seed is
//! printed, `TURNSTILE_CRASH_SEED` replays it.

mod common;

use common::{crash_seed, int, small_pool_config as config};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use turnstile_engine::query::{Operand, Query};
use turnstile_engine::types::ColumnType::{Int4, Int8, Text};
use turnstile_engine::types::Value;
use turnstile_engine::Engine;
use turnstile_storage::io::OsIo;
use turnstile_storage::page::{self, PageBuf, PAGE_SIZE};
use turnstile_storage::power_loss::PowerLossIo;
use turnstile_storage::wal::{Lsn, WalReader};

const ROUNDS: u64 = 4;
const WRITERS: i64 = 2;
/// Ledger keys of round `r`, writer `w` start at `(r * WRITERS + w) * KEYS`.
const KEYS: i64 = 1_000_000;

/// One writer: commits ledger transactions until one fails (the power is
/// gone); every `bulk_every`th is a bulk load. Returns the acknowledged keys.
fn writer(engine: &Arc<Engine>, first: i64, bulk_every: i64) -> Vec<i64> {
    let mut s = engine.session().unwrap();
    let counter = Query::from("counter").filter("id", 0);
    let mut acked = Vec::new();
    for n in 0.. {
        let k = first + n * 10_000;
        let rows = if n % bulk_every == bulk_every - 1 { 3000 } else { 1 };
        let attempt = (|| {
            s.begin()?;
            s.insert_many(
                "ledger",
                (0..rows).map(|i| vec![Value::Int8(k + i), Value::Int4(1), Value::Text("p".repeat(60))]),
            )?;
            let mut add = |row: &[Value]| -> turnstile_engine::error::Result<Option<Vec<Value>>> {
                Ok(Some(vec![row[0].clone(), Value::Int8(int(&row[1]) + rows)]))
            };
            s.update_rows(&counter, &[], &mut add)?;
            s.commit()
        })();
        match attempt {
            Ok(()) => acked.extend(k..k + rows),
            Err(_) => break,
        }
    }
    acked
}

/// Rows of each DDL thread's table.
const DDL_ROWS: i64 = 2000;

/// What the DDL thread saw acknowledged.
#[derive(Default)]
struct DdlLog {
    /// Every table the thread began to create.
    attempted: Vec<String>,
    /// Tables created, filled and indexed, not yet dropped.
    complete: Vec<String>,
    /// Tables whose `DROP` returned.
    dropped: Vec<String>,
    /// The table whose `DROP` was under way when the power went: like a
    /// commit in flight, it may or may not survive.
    dropping: Option<String>,
}

/// The DDL thread of round `round`: until a statement fails (the power is
/// gone), creates a table, fills it in one bulk transaction, builds its
/// unique index, then drops the table before it.
fn ddl(engine: &Arc<Engine>, round: u64, log: &Mutex<DdlLog>) {
    let mut s = engine.session().unwrap();
    for n in 0.. {
        let name = format!("ddl_{round}_{n}");
        log.lock().unwrap().attempted.push(name.clone());
        let step = (|| -> turnstile_engine::error::Result<()> {
            s.create_table(&name, &[("k", Int8), ("note", Text)], None)?;
            s.insert_many(&name, (0..DDL_ROWS).map(|k| vec![Value::Int8(k), Value::Text(format!("row {k:>40}"))]))?;
            s.create_index(&name, &format!("{name}_pkey"), &["k"], true)?;
            log.lock().unwrap().complete.push(name.clone());
            if n > 0 {
                let before = format!("ddl_{round}_{}", n - 1);
                log.lock().unwrap().dropping = Some(before.clone());
                s.drop_relation(&before)?;
                let mut log = log.lock().unwrap();
                log.dropping = None;
                log.complete.retain(|t| *t != before);
                log.dropped.push(before);
            }
            Ok(())
        })();
        if step.is_err() {
            return;
        }
    }
}

/// After recovery: every complete table is whole and its index agrees,
/// every dropped one is gone, any other is empty or whole. The `DROP` in
/// flight is settled: dropped if its table is gone.
fn check_ddl(s: &mut turnstile_engine::Session, log: &mut DdlLog, round: u64) {
    if let Some(t) = log.dropping.take() {
        if s.scan_all(&t).is_err() {
            log.complete.retain(|c| *c != t);
            log.dropped.push(t);
        }
    }
    for t in &log.dropped {
        assert!(s.scan_all(t).is_err(), "round {round}: dropped table {t} is back");
    }
    for t in &log.attempted {
        if log.dropped.contains(t) {
            continue;
        }
        let rows = match s.scan_all(t) {
            Ok(rows) => rows,
            Err(e) => {
                let dropping = log.dropping.as_ref() == Some(t);
                assert!(dropping || !log.complete.contains(t), "round {round}: complete table {t} is lost: {e}");
                continue;
            }
        };
        if !log.complete.contains(t) {
            assert!(rows.is_empty() || rows.len() as i64 == DDL_ROWS, "round {round}: {t} has {} rows", rows.len());
        } else {
            assert_eq!(rows.len() as i64, DDL_ROWS, "round {round}: complete table {t}");
        }
        let lookup = Query::from(t.as_str()).filter("k", Operand::Param(1)).select(["k"]);
        let plan = s.explain(&lookup).unwrap();
        assert!(
            !log.complete.contains(t) || plan.contains(&format!("{t}_pkey")),
            "round {round}: {t}'s index is lost:\n{plan}"
        );
        let mut prepared = s.prepare(&lookup).unwrap();
        for k in (0..rows.len() as i64).step_by(97) {
            let found = s.execute(&mut prepared, &[Value::Int8(k)]).unwrap();
            assert_eq!(found, vec![vec![Value::Int8(k)]], "round {round}: {t} lookup of {k} ({plan})");
        }
    }
}

/// The end of the WAL that survived, read from the last checkpoint's
/// redo point (`control`).
fn durable_wal_end(dir: &Path) -> u64 {
    let control = std::fs::read_to_string(dir.join("control")).expect("a checkpoint wrote control");
    let field = |name: &str| {
        control.lines().find_map(|l| l.strip_prefix(name)?.trim().parse::<u64>().ok()).expect("control field")
    };
    let start = field("redo ").min(field("undo_start "));
    let mut reader = WalReader::new(&dir.join("pg_wal"), Arc::new(OsIo), Lsn(start)).unwrap();
    while reader.next().expect("the WAL reads to its end").is_some() {}
    reader.end_lsn().0
}

/// Every page of every relation file (under `base/`) carries an LSN at or
/// before `end`.
fn check_wal_before_data(dir: &Path, end: u64, round: u64) -> usize {
    let mut pages = 0;
    let mut stack = vec![dir.join("base")];
    let mut buf: Box<PageBuf> = Box::new([0; PAGE_SIZE]);
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.contains('_')) {
                continue; // another fork (free space, visibility)
            }
            let bytes = std::fs::read(&p).unwrap();
            for (i, chunk) in bytes.chunks_exact(PAGE_SIZE).enumerate() {
                buf.copy_from_slice(chunk);
                if chunk.iter().all(|b| *b == 0) {
                    continue;
                }
                let lsn = page::lsn(&buf);
                assert!(
                    lsn <= end,
                    "round {round}: {} block {i} has LSN {lsn} beyond the durable WAL end {end}",
                    p.display()
                );
                pages += 1;
            }
        }
    }
    pages
}

#[test]
fn power_loss_keeps_acknowledged_commits_and_nothing_else() {
    let seed = crash_seed("power_loss");
    let mut rng = SmallRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    {
        let engine = Engine::open(dir.path(), config()).unwrap();
        let mut s = engine.session().unwrap();
        s.create_table("ledger", &[("k", Int8), ("delta", Int4), ("note", Text)], None).unwrap();
        s.create_index("ledger", "ledger_pkey", &["k"], true).unwrap();
        s.create_table("counter", &[("id", Int4), ("total", Int8)], None).unwrap();
        s.insert("counter", &[Value::Int4(0), Value::Int8(0)]).unwrap();
        drop(s);
        engine.close().unwrap();
    }
    let mut acknowledged: HashSet<i64> = HashSet::new();
    let ddl_log = Mutex::new(DdlLog::default());
    for round in 0..ROUNDS {
        let io = Arc::new(PowerLossIo::new());
        let engine = Engine::open_with_io(dir.path(), config(), io.clone()).expect("open (recovery)");
        let cut_after = Duration::from_millis(rng.random_range(20..1500));
        let tear = rng.random_bool(0.5);
        let bulk_every = rng.random_range(5..40);
        let acked = Arc::new(Mutex::new(Vec::new()));
        std::thread::scope(|scope| {
            scope.spawn(|| ddl(&engine, round, &ddl_log));
            for w in 0..WRITERS {
                let (engine, acked) = (&engine, acked.clone());
                let first = (round as i64 * WRITERS + w) * KEYS;
                scope.spawn(move || {
                    let keys = writer(engine, first, bulk_every);
                    acked.lock().unwrap().extend(keys);
                });
            }
            // The transaction that never commits, and checkpoints.
            scope.spawn(|| {
                let mut b = engine.session().unwrap();
                let _ = b.begin();
                let mut bump = |row: &[Value]| -> turnstile_engine::error::Result<Option<Vec<Value>>> {
                    Ok(Some(vec![row[0].clone(), Value::Int4(999), Value::Text("loser".into())]))
                };
                for n in 0i64.. {
                    if io.is_cut() {
                        break;
                    }
                    let k = (n * 7919) % (round as i64 * WRITERS * KEYS).max(1);
                    let _ = b.update_rows(&Query::from("ledger").filter("k", k), &[], &mut bump);
                    let _ = b.insert(
                        "ledger",
                        &[Value::Int8(-n - 1 - round as i64 * KEYS), Value::Int4(-1), Value::Text("x".into())],
                    );
                    if n % 20 == 19 {
                        let _ = engine.checkpoint();
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
            });
            std::thread::sleep(cut_after);
            io.cut_power();
        });
        let acked = std::mem::take(&mut *acked.lock().unwrap());
        let tables = {
            let log = ddl_log.lock().unwrap();
            log.complete.len() + log.dropped.len()
        };
        println!(
            "power_loss: round {round} cut after {cut_after:?} (torn page: {tear}); {} acknowledged, {tables} DDL tables so far",
            acked.len()
        );
        drop(engine);
        io.lose_unsynced(tear);
        acknowledged.extend(acked);

        let end = durable_wal_end(dir.path());
        let pages = check_wal_before_data(dir.path(), end, round);
        assert!(pages > 0, "round {round}: no data page found under base/");

        let engine = Engine::open(dir.path(), config()).expect("recover after the power loss");
        assert!(engine.verify_pages().expect("every page verifies after recovery") > 0);
        let mut s = engine.session().unwrap();
        let ledger = s.scan_all("ledger").unwrap();
        let present: HashSet<i64> = ledger.iter().map(|r| int(&r[0])).collect();
        for k in &acknowledged {
            assert!(present.contains(k), "round {round}: acknowledged commit {k} is lost");
        }
        assert!(present.iter().all(|k| *k >= 0), "round {round}: rows of the open transaction survived");
        for r in &ledger {
            assert_eq!(int(&r[1]), 1, "round {round}: ledger row {} keeps the open transaction's update", int(&r[0]));
        }
        let total = s.scan_all("counter").unwrap();
        assert_eq!(int(&total[0][1]), ledger.len() as i64, "round {round}: counter and ledger disagree");
        let lookup = Query::from("ledger").filter("k", Operand::Param(1)).select(["k"]);
        let mut prepared = s.prepare(&lookup).unwrap();
        for k in present.iter().step_by(7) {
            let rows = s.execute(&mut prepared, &[Value::Int8(*k)]).unwrap();
            assert_eq!(rows, vec![vec![Value::Int8(*k)]], "round {round}: index lookup of {k}");
        }
        check_ddl(&mut s, &mut ddl_log.lock().unwrap(), round);
        // Rows of a commit in flight at the cut count as acknowledged from now on.
        acknowledged.extend(present);
        drop(s);
        engine.close().unwrap();
    }
}
