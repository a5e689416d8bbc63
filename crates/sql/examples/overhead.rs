//! The SQL layer's cost on W1's prepared query: executions per second
//! through `SqlSession` (Bind/Execute with text parameters, text results)
//! and through the engine's typed API directly, same data, one thread,
//! alternating rounds. `cargo run --release -p turnstile-sql --example overhead [partitions] [seconds]`
//!
//! The schema and query are W1's, whose one definition is the lab's
//! (`crates/lab/src/workload/w1.rs`); this crate sits below the lab and
//! cannot use it, so the example builds the same tables through SQL here.

use std::time::{Duration, Instant};
use turnstile_engine::query::{Col, Operand, Query};
use turnstile_engine::types::Value;
use turnstile_sql::{Outcome, Param, SqlEngine, SqlSession};

fn main() {
    let mut args = std::env::args().skip(1);
    let parts: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(100);
    let secs: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(2.0);
    let dir = tempfile::tempdir().expect("tempdir");
    let e = SqlEngine::open(dir.path(), turnstile_sync::Config::default()).expect("open");
    let mut s = SqlSession::connect(&e, "postgres", "bench", "overhead", None).expect("connect");
    let rows = 10_000i64;
    let mut setup = vec![
        "create table pgbench_branches(bid int not null, bbalance int, filler char(88))".to_owned(),
        "create table pgbench_accounts(aid int not null, bid int, abalance int, filler char(84), aid_parent int) partition by range (aid)".to_owned(),
    ];
    let step = rows / i64::from(parts);
    for p in 0..parts {
        let from = if p == 0 { "minvalue".to_owned() } else { (i64::from(p) * step + 1).to_string() };
        let to = if p + 1 == parts { "maxvalue".to_owned() } else { ((i64::from(p) + 1) * step + 1).to_string() };
        setup.push(format!(
            "create table pgbench_accounts_{p} partition of pgbench_accounts for values from ({from}) to ({to})"
        ));
    }
    setup.push("insert into pgbench_branches select bid, 0, '' from generate_series(1, 1) as bid".into());
    setup
        .push(format!("insert into pgbench_accounts select aid, 1, 0, '', aid from generate_series(1, {rows}) as aid"));
    setup.push("alter table pgbench_accounts add primary key (aid)".into());
    setup.push("create index on pgbench_accounts (aid_parent)".into());
    for q in &setup {
        for st in s.parse_batch(q).expect("parse") {
            s.execute(&st, &[]).expect(q);
        }
    }
    let st = s
        .prepare(
            "SELECT * FROM pgbench_accounts pa JOIN pgbench_branches pb ON (pa.bid = pb.bid) WHERE pa.aid_parent = $1",
            &[],
        )
        .expect("prepare");
    let q = Query::from("pgbench_accounts")
        .join("pgbench_branches", Col::of("pgbench_accounts", "bid"), "bid")
        .filter(Col::of("pgbench_accounts", "aid_parent"), Operand::Param(1));
    let mut direct = e.engine().session().expect("session");
    let mut prepared = direct.prepare(&q).expect("prepare");
    let (mut sql_n, mut eng_n, mut sql_t, mut eng_t) = (0u64, 0u64, Duration::ZERO, Duration::ZERO);
    let round = Duration::from_secs_f64(secs / 10.0);
    let mut k = 0i64;
    for _ in 0..5 {
        let t = Instant::now();
        while t.elapsed() < round {
            k = k % rows + 1;
            match s.execute(&st, &[Param::text(k.to_string())]).expect("execute") {
                Outcome::Rows { rows, .. } => assert_eq!(rows.len(), 1),
                other => panic!("{other:?}"),
            }
            sql_n += 1;
        }
        sql_t += t.elapsed();
        let t = Instant::now();
        while t.elapsed() < round {
            k = k % rows + 1;
            assert_eq!(direct.execute(&mut prepared, &[Value::Int4(k as i32)]).expect("execute").len(), 1);
            eng_n += 1;
        }
        eng_t += t.elapsed();
    }
    let sql_rate = sql_n as f64 / sql_t.as_secs_f64();
    let eng_rate = eng_n as f64 / eng_t.as_secs_f64();
    println!(
        "W1 prepared, {parts} partitions: SQL layer {sql_rate:.0}/s, engine API {eng_rate:.0}/s, ratio {:.2}",
        sql_rate / eng_rate
    );
}
