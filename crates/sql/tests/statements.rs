//! In-process tests of turnstile-sql: the statements pgbench, the reproduced write-ups and
//! psql send, the views, and the SQLSTATEs of errors.

use turnstile_sql::{Outcome, Param, SqlEngine, SqlError, SqlSession, SqlState, TxStatus};

fn engine() -> (tempfile::TempDir, SqlEngine) {
    let dir = tempfile::tempdir().unwrap();
    let e = SqlEngine::open(dir.path(), turnstile_sync::Config::default()).unwrap();
    (dir, e)
}

fn session(e: &SqlEngine) -> SqlSession {
    SqlSession::connect(e, "postgres", "tester", "test", None).unwrap()
}

/// Runs a simple-query string; the last statement's outcome.
fn run(s: &mut SqlSession, sql: &str) -> Result<Outcome, SqlError> {
    let mut last = Outcome::Empty;
    for st in s.parse_batch(sql)? {
        last = s.execute(&st, &[])?;
    }
    Ok(last)
}

fn rows(s: &mut SqlSession, sql: &str) -> Vec<Vec<Option<String>>> {
    match run(s, sql).unwrap_or_else(|e| panic!("{sql}: {e:?}")) {
        Outcome::Rows { rows, .. } => rows.to_vec(),
        other => panic!("{sql}: not rows: {other:?}"),
    }
}

fn one(s: &mut SqlSession, sql: &str) -> String {
    rows(s, sql)[0][0].clone().unwrap_or_else(|| "NULL".into())
}

fn code(s: &mut SqlSession, sql: &str) -> String {
    match run(s, sql) {
        Ok(o) => panic!("{sql}: expected an error, got {o:?}"),
        Err(e) => e.code.to_string(),
    }
}

fn tag(s: &mut SqlSession, sql: &str) -> String {
    match run(s, sql).unwrap_or_else(|e| panic!("{sql}: {e:?}")) {
        Outcome::Command { tag } => tag,
        other => panic!("{sql}: {other:?}"),
    }
}

const PGBENCH_INIT: &[&str] = &[
    "drop table if exists pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers",
    "create table pgbench_history(tid int,bid int,aid    int,delta int,mtime timestamp,filler char(22))",
    "create table pgbench_tellers(tid int not null,bid int,tbalance int,filler char(84)) with (fillfactor=100)",
    "create table pgbench_accounts(aid    int not null,bid int,abalance int,filler char(84)) with (fillfactor=100) partition by range (aid)",
    "create table pgbench_branches(bid int not null,bbalance int,filler char(88)) with (fillfactor=100)",
    "create table pgbench_accounts_1\n  partition of pgbench_accounts\n  for values from (minvalue) to (501) with (fillfactor=100)",
    "create table pgbench_accounts_2\n  partition of pgbench_accounts\n  for values from (501) to (maxvalue) with (fillfactor=100)",
];

fn pgbench_init_client_side(s: &mut SqlSession) {
    for q in PGBENCH_INIT {
        run(s, q).unwrap_or_else(|e| panic!("{q}: {e:?}"));
    }
    assert_eq!(tag(s, "begin"), "BEGIN");
    for (table, n) in [("pgbench_branches", 1), ("pgbench_tellers", 10), ("pgbench_accounts", 1000)] {
        let freeze = if table == "pgbench_accounts" { "" } else { " with (freeze on)" };
        let st = s.parse_batch(&format!("copy {table} from stdin{freeze}")).unwrap();
        let Outcome::CopyIn(mut copy) = s.execute(&st[0], &[]).unwrap() else { panic!("no CopyIn") };
        let mut data = String::new();
        for i in 1..=n {
            match table {
                "pgbench_branches" => data.push_str(&format!("{i}\t0\t\\N\n")),
                "pgbench_tellers" => data.push_str(&format!("{i}\t1\t0\t\\N\n")),
                _ => data.push_str(&format!("{i}\t1\t0\t\n")),
            }
        }
        // Split at odd places, as CopyData chunks may be.
        for chunk in data.as_bytes().chunks(37) {
            s.copy_data(&mut copy, chunk).unwrap();
        }
        assert_eq!(s.copy_done(copy).unwrap(), format!("COPY {n}"));
    }
    assert_eq!(tag(s, "commit"), "COMMIT");
    run(s, "vacuum analyze pgbench_branches").unwrap();
    run(s, "vacuum analyze pgbench_accounts").unwrap();
    for q in [
        "alter table pgbench_branches add primary key (bid)",
        "alter table pgbench_tellers add primary key (tid)",
        "alter table pgbench_accounts add primary key (aid)",
    ] {
        assert_eq!(tag(s, q), "ALTER TABLE");
    }
}

#[test]
fn pgbench_init_client_side_then_select_only() {
    let (_d, e) = engine();
    let mut s = session(&e);
    pgbench_init_client_side(&mut s);
    assert_eq!(one(&mut s, "select count(*) from pgbench_branches"), "1");
    assert_eq!(one(&mut s, "select count(*) from pgbench_accounts"), "1000");
    // -S, prepared: 6 executions cross the custom → generic switch.
    let st = s.prepare("SELECT abalance FROM pgbench_accounts WHERE aid = $1;", &[]).unwrap();
    assert_eq!(st.param_types(), &[23]);
    assert_eq!(st.fields().unwrap()[0].type_oid, 23);
    for aid in [1, 500, 501, 1000, 7, 8, 9] {
        match s.execute(&st, &[Param::text(aid.to_string())]).unwrap() {
            Outcome::Rows { rows, tag, .. } => {
                assert_eq!(rows, vec![vec![Some("0".to_owned())]]);
                assert_eq!(tag, "SELECT 1");
            }
            other => panic!("{other:?}"),
        }
    }
    // char(n) is padded; the filler NULLs read back as NULL.
    assert_eq!(one(&mut s, "select filler from pgbench_tellers where tid = 3"), "NULL");
    assert_eq!(one(&mut s, "select length(filler) from pgbench_accounts where aid = 3"), "0");
    assert_eq!(code(&mut s, "insert into pgbench_accounts values (3, 1, 0, '')"), "23505");
}

#[test]
fn pgbench_init_server_side_generate_series() {
    let (_d, e) = engine();
    let mut s = session(&e);
    for q in PGBENCH_INIT {
        run(&mut s, q).unwrap();
    }
    let n = tag(&mut s, "insert into pgbench_branches(bid,bbalance) select bid, 0 from generate_series(1, 2) as bid");
    assert_eq!(n, "INSERT 0 2");
    run(&mut s, "insert into pgbench_tellers(tid,bid,tbalance) select tid, (tid - 1) / 10 + 1, 0 from generate_series(1, 20) as tid").unwrap();
    let n = tag(
        &mut s,
        "insert into pgbench_accounts(aid,bid,abalance,filler) select aid, (aid - 1) / 500 + 1, 0, '' from generate_series(1, 1000) as aid",
    );
    assert_eq!(n, "INSERT 0 1000");
    assert_eq!(one(&mut s, "select sum(bid) from pgbench_tellers"), "30");
    assert_eq!(one(&mut s, "select max(bid) from pgbench_accounts"), "2");
    assert_eq!(
        rows(&mut s, "select bid, count(*) from pgbench_accounts group by bid order by 1"),
        vec![vec![Some("1".into()), Some("500".into())], vec![Some("2".into()), Some("500".into())]]
    );
}

#[test]
fn w1_setup_and_join_query_in_every_mode() {
    let (_d, e) = engine();
    let mut s = session(&e);
    pgbench_init_client_side(&mut s);
    run(&mut s, "ALTER TABLE pgbench_accounts ADD COLUMN aid_parent INT").unwrap();
    run(&mut s, "CREATE INDEX ON pgbench_accounts(aid_parent)").unwrap();
    run(&mut s, "insert into pgbench_accounts (aid, bid, abalance, aid_parent) values (1001, 1, 5, 77)").unwrap();
    let q = "SELECT * FROM pgbench_accounts pa JOIN pgbench_branches pb ON (pa.bid = pb.bid) WHERE pa.aid_parent = $1";
    let st = s.prepare(q, &[]).unwrap();
    let fields: Vec<&str> = st.fields().unwrap().iter().map(|f| f.name.as_str()).collect();
    assert_eq!(fields, ["aid", "bid", "abalance", "filler", "aid_parent", "bid", "bbalance", "filler"]);
    for _ in 0..7 {
        match s.execute(&st, &[Param::text("77")]).unwrap() {
            Outcome::Rows { rows, .. } => {
                let rows = rows.to_vec();
                assert_eq!(rows.len(), 1);
                assert_eq!(rows[0][0].as_deref(), Some("1001"));
                assert_eq!(rows[0][5].as_deref(), Some("1"));
            }
            other => panic!("{other:?}"),
        }
    }
    let simple = q.replace("$1", "77");
    assert_eq!(rows(&mut s, &simple).len(), 1);
    assert_eq!(rows(&mut s, &q.replace("$1", "78")).len(), 0);
}

#[test]
fn views_show_own_locks_and_activity() {
    let (_d, e) = engine();
    let mut s = session(&e);
    run(&mut s, "create table t (k int, v text)").unwrap();
    run(&mut s, "begin; select * from t").unwrap();
    let counts = rows(
        &mut s,
        "SELECT count(*) FILTER (WHERE fastpath) AS fast, count(*) FILTER (WHERE NOT fastpath) AS slow, count(*) FROM pg_locks WHERE pid = pg_backend_pid()",
    );
    let fast: i64 = counts[0][0].as_deref().unwrap().parse().unwrap();
    assert!(fast >= 1, "own AccessShareLock on t not seen: {counts:?}");
    let t_oid = one(&mut s, "select oid from pg_class where relname = 't'");
    let mode = one(&mut s, &format!("select mode from pg_locks where relation = {t_oid} and pid = pg_backend_pid()"));
    assert_eq!(mode, "AccessShareLock");
    run(&mut s, "commit").unwrap();
    let other = session(&e);
    let grouped = rows(&mut s, "SELECT wait_event_type, wait_event, count(*) FROM pg_stat_activity GROUP BY 1, 2");
    let total: i64 = grouped.iter().map(|r| r[2].as_deref().unwrap().parse::<i64>().unwrap()).sum();
    assert_eq!(total, 2);
    drop(other);
    assert_eq!(one(&mut s, "select state from pg_stat_activity where pid = pg_backend_pid()"), "active");
    assert_eq!(one(&mut s, "select relkind from pg_class where relname = 't'"), "r");
    assert!(one(&mut s, "select version()").starts_with("PostgreSQL 15"));
    assert_eq!(one(&mut s, "select count(*) > 0 from pg_stat_lock where fastpath_exceeded >= 0"), "t");
}

#[test]
fn session_statements() {
    let (_d, e) = engine();
    let mut s = session(&e);
    assert_eq!(one(&mut s, "SELECT pg_catalog.set_config('search_path', '', false)"), "");
    assert_eq!(tag(&mut s, "SET lock_timeout = '2s'"), "SET");
    assert_eq!(one(&mut s, "SHOW lock_timeout"), "2s");
    assert_eq!(one(&mut s, "select current_setting('lock_timeout')"), "2s");
    let partitions = e.engine().config().lock.partitions.to_string();
    assert_eq!(one(&mut s, "SHOW \"lock.partitions\""), partitions);
    run(&mut s, "SET application_name = 'bench'").unwrap();
    assert!(s.set_parameter_changes().contains(&("application_name".into(), "bench".into())));
    assert_eq!(code(&mut s, "SET plan_cache_mode = wrong"), "22023");
    assert_eq!(code(&mut s, "SET no_such_thing = 1"), "42704");
    assert_eq!(one(&mut s, "select 1 + 2 * 3"), "7");
    assert_eq!(one(&mut s, "select 'a' || 1::text || 'b'"), "a1b");
    assert_eq!(one(&mut s, "select md5('1')"), "c4ca4238a0b923820dcc509a6f75849b");
    assert_eq!(one(&mut s, "select length(repeat('ab', 3))"), "6");
    assert_eq!(one(&mut s, "select left('abcdef', 2) || right('abcdef', 2) || substr('abcdef', 3, 2)"), "abefcd");
    assert_eq!(one(&mut s, "select random() < 1.0"), "t");
    assert_eq!(one(&mut s, "select now() = CURRENT_TIMESTAMP"), "t");
    run(&mut s, "create table t (k int primary key, v text)").unwrap();
    assert_eq!(tag(&mut s, "PREPARE p (int, text) AS INSERT INTO t VALUES ($1, $2)"), "PREPARE");
    assert_eq!(tag(&mut s, "EXECUTE p (1, 'one')"), "INSERT 0 1");
    assert_eq!(tag(&mut s, "DEALLOCATE p"), "DEALLOCATE");
    assert_eq!(code(&mut s, "EXECUTE p (1, 'one')"), "26000");
    let plan = rows(&mut s, "EXPLAIN ANALYZE SELECT * FROM t WHERE k = 1");
    let text: Vec<String> = plan.into_iter().map(|r| r[0].clone().unwrap()).collect();
    assert!(text.iter().any(|l| l.starts_with("Planning Time:")), "{text:?}");
    assert!(text.iter().any(|l| l.starts_with("Execution Time:")), "{text:?}");
    run(&mut s, "CHECKPOINT").unwrap();
    assert_eq!(tag(&mut s, "CREATE DATABASE other"), "CREATE DATABASE");
    let mut o = SqlSession::connect(&e, "other", "u", "", None).unwrap();
    assert_eq!(one(&mut o, "select current_database()"), "other");
    assert_eq!(SqlSession::connect(&e, "nope", "u", "", None).unwrap_err().code, "3D000");
}

#[test]
fn errors_carry_sqlstates_and_the_session_goes_on() {
    let (_d, e) = engine();
    let mut s = session(&e);
    let err = run(&mut s, "SELECT 1; SELEC 2").unwrap_err();
    assert_eq!(err.code, "42601");
    assert_eq!(err.position, Some(11));
    assert_eq!(code(&mut s, "select * from nope"), "42P01");
    run(&mut s, "create table t (k int primary key, v text)").unwrap();
    assert_eq!(code(&mut s, "select nope from t"), "42703");
    run(&mut s, "insert into t values (1, 'a')").unwrap();
    assert_eq!(code(&mut s, "insert into t values (1, 'b')"), "23505");
    assert_eq!(code(&mut s, "insert into t values ('x', 'b')"), "22P02");
    assert_eq!(code(&mut s, "select * from t where k = 'x'"), "22P02");
    // Subqueries in FROM, set operations and WITH RECURSIVE run; LATERAL does not.
    assert_eq!(one(&mut s, "select * from (select 1) as x"), "1");
    assert_eq!(one(&mut s, "select count(*) from (select 1 union select 2) u"), "2");
    assert_eq!(code(&mut s, "select * from t, lateral (select t.k) as x"), "0A000");
    assert_eq!(one(&mut s, "with recursive r as (select 1) select * from r"), "1");
    assert_eq!(code(&mut s, "create view v as select 1"), "0A000");
    // Failed transaction block until ROLLBACK.
    run(&mut s, "begin").unwrap();
    assert_eq!(code(&mut s, "select * from nope"), "42P01");
    assert_eq!(s.transaction_status(), TxStatus::Failed);
    assert_eq!(code(&mut s, "select 1"), "25P02");
    assert_eq!(tag(&mut s, "rollback"), "ROLLBACK");
    assert_eq!(s.transaction_status(), TxStatus::Idle);
    assert_eq!(one(&mut s, "select v from t where k = 1"), "a");
    // NOWAIT against another session's lock: 55P03.
    let mut other = session(&e);
    run(&mut other, "begin; lock table t in access exclusive mode").unwrap();
    run(&mut s, "begin").unwrap();
    assert_eq!(code(&mut s, "lock table t in access share mode nowait"), "55P03");
    run(&mut s, "rollback").unwrap();
    run(&mut s, "set lock_timeout = '50ms'").unwrap();
    assert_eq!(code(&mut s, "select * from t"), "55P03");
    run(&mut other, "commit").unwrap();
    assert_eq!(one(&mut s, "select count(*) from t"), "1");
    run(&mut s, "begin").unwrap();
    let x = one(&mut s, "select txid_current() from t");
    assert_eq!(one(&mut s, "select txid_current()"), x, "the same id evaluated over a scan");
    run(&mut s, "commit").unwrap();
}

#[test]
fn deadlock_is_40p01_for_exactly_one() {
    let (_d, e) = engine();
    let mut a = session(&e);
    run(&mut a, "create table x (k int); create table y (k int)").unwrap();
    run(&mut a, "set deadlock_timeout = '20ms'").unwrap();
    let mut b = session(&e);
    run(&mut b, "set deadlock_timeout = '20ms'").unwrap();
    run(&mut a, "begin; lock table x in access exclusive mode").unwrap();
    run(&mut b, "begin; lock table y in access exclusive mode").unwrap();
    let t = std::thread::spawn(move || {
        let r = run(&mut b, "lock table x in access exclusive mode").map(|_| ()).map_err(|e| e.code);
        run(&mut b, "rollback").unwrap();
        r
    });
    std::thread::sleep(std::time::Duration::from_millis(50));
    let ra = run(&mut a, "lock table y in access exclusive mode").map(|_| ()).map_err(|e| e.code);
    run(&mut a, "rollback").unwrap();
    let rb = t.join().unwrap();
    let codes: Vec<_> = [ra, rb].into_iter().filter_map(Result::err).collect();
    assert_eq!(codes, vec!["40P01"]);
}

#[test]
fn cancel_stops_pg_sleep_with_57014() {
    let (_d, e) = engine();
    let mut s = session(&e);
    let h = s.cancel_handle();
    let t = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(100));
        h.cancel();
    });
    assert_eq!(code(&mut s, "select pg_sleep(30)"), "57014");
    t.join().unwrap();
    assert_eq!(one(&mut s, "select 1"), "1");
}

#[test]
fn tpcb_like_rollback_truncate_and_w1_update() {
    let (_d, e) = engine();
    let mut s = session(&e);
    pgbench_init_client_side(&mut s);
    let script = [
        "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;",
        "SELECT abalance FROM pgbench_accounts WHERE aid = $1",
        "UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2;",
        "UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2;",
        "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP);",
    ];
    let st: Vec<_> = script.iter().map(|q| s.prepare(q, &[]).unwrap()).collect();
    assert_eq!(st[0].param_types(), &[23, 23]);
    for i in 1..=8i64 {
        let (aid, tid, delta) = (i * 97 % 1000 + 1, i % 10 + 1, i * 10 - 40);
        let p = |v: &[i64]| v.iter().map(|x| Param::text(x.to_string())).collect::<Vec<_>>();
        run(&mut s, "BEGIN").unwrap();
        assert!(matches!(s.execute(&st[0], &p(&[delta, aid])).unwrap(), Outcome::Command { tag } if tag == "UPDATE 1"));
        s.execute(&st[1], &p(&[aid])).unwrap();
        s.execute(&st[2], &p(&[delta, tid])).unwrap();
        s.execute(&st[3], &p(&[delta, 1])).unwrap();
        s.execute(&st[4], &p(&[tid, 1, aid, delta])).unwrap();
        run(&mut s, "END").unwrap();
    }
    let a = one(&mut s, "select sum(abalance) from pgbench_accounts");
    assert_eq!(a, one(&mut s, "select sum(tbalance) from pgbench_tellers"));
    assert_eq!(a, one(&mut s, "select sum(bbalance) from pgbench_branches"));
    assert_eq!(a, one(&mut s, "select sum(delta) from pgbench_history"));
    assert_eq!(one(&mut s, "select count(*) from pgbench_history"), "8");
    // ROLLBACK undoes the writes.
    run(&mut s, "begin; update pgbench_branches set bbalance = 999 where bid = 1; delete from pgbench_history")
        .unwrap();
    assert_eq!(one(&mut s, "select count(*) from pgbench_history"), "0");
    run(&mut s, "rollback").unwrap();
    assert_eq!(one(&mut s, "select count(*) from pgbench_history"), "8");
    assert_eq!(a, one(&mut s, "select sum(bbalance) from pgbench_branches"));
    // The W1 setup.
    run(&mut s, "ALTER TABLE pgbench_accounts ADD COLUMN aid_parent INT").unwrap();
    assert_eq!(tag(&mut s, "UPDATE pgbench_accounts SET aid_parent = aid"), "UPDATE 1000");
    run(&mut s, "CREATE INDEX ON pgbench_accounts(aid_parent); VACUUM FULL pgbench_accounts; VACUUM ANALYZE").unwrap();
    assert_eq!(one(&mut s, "select aid from pgbench_accounts where aid_parent = 640"), "640");
    assert_eq!(tag(&mut s, "truncate pgbench_history"), "TRUNCATE TABLE");
    assert_eq!(one(&mut s, "select count(*) from pgbench_history"), "0");
    assert_eq!(tag(&mut s, "delete from pgbench_tellers where tid > 5 and tbalance >= 0 or tid = 1"), "DELETE 6");
}

#[test]
fn cancel_during_a_lock_wait_is_57014() {
    let (_d, e) = engine();
    let mut a = session(&e);
    run(&mut a, "create table t (k int)").unwrap();
    run(&mut a, "begin; lock table t in access exclusive mode").unwrap();
    let mut b = session(&e);
    let h = b.cancel_handle();
    let waiter = std::thread::spawn(move || {
        let r = run(&mut b, "select * from t").map(|_| ()).map_err(|e| e.code);
        (r, one(&mut b, "select 1"))
    });
    // Wait until b is seen waiting on a Lock, then cancel it.
    let mut seen = false;
    for _ in 0..500 {
        let w = rows(&mut a, "select count(*) from pg_locks where not granted");
        if w[0][0].as_deref() == Some("1") {
            seen = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(seen, "the waiter never showed up in pg_locks");
    assert_eq!(one(&mut a, "select count(*) from pg_stat_activity where wait_event_type = 'Lock'"), "1");
    h.cancel();
    let (r, after) = waiter.join().unwrap();
    assert_eq!(r, Err(SqlState::QUERY_CANCELED));
    assert_eq!(after, "1");
    run(&mut a, "commit").unwrap();
}

#[test]
fn w4_copy_to_and_from_a_file_and_out_of_lock_memory() {
    let (d, e) = engine();
    let mut s = session(&e);
    let path = d.path().join("copy_rows.txt");
    let p = path.display();
    run(
        &mut s,
        "CREATE UNLOGGED TABLE copy_unlogged (data text NOT NULL); CREATE TABLE copy_logged (data text NOT NULL)",
    )
    .unwrap();
    assert_eq!(
        tag(&mut s, &format!("COPY (SELECT repeat(random()::text, 5) FROM generate_series(1, 50)) TO '{p}'")),
        "COPY 50"
    );
    assert_eq!(tag(&mut s, &format!("COPY copy_unlogged FROM '{p}'")), "COPY 50");
    assert_eq!(one(&mut s, "select count(*) from copy_unlogged where length(data) > 10"), "50");
    match run(&mut s, "COPY copy_unlogged TO STDOUT").unwrap() {
        Outcome::CopyOut { lines, tag, .. } => {
            assert_eq!(lines.len(), 50);
            assert_eq!(tag, "COPY 50");
        }
        other => panic!("{other:?}"),
    }
    // 53200: more strong locks than the shared lock table holds.
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = turnstile_sync::Config::default();
    cfg.set("lock.max_locks", "64").unwrap();
    let small = SqlEngine::open(dir.path(), cfg).unwrap();
    let mut t = session(&small);
    for i in 0..80 {
        run(&mut t, &format!("create table t{i} (k int)")).unwrap();
    }
    run(&mut t, "begin").unwrap();
    let mut got = None;
    for i in 0..80 {
        if let Err(e) = run(&mut t, &format!("lock table t{i} in access exclusive mode")) {
            got = Some(e.code);
            break;
        }
    }
    assert_eq!(got, Some(SqlState::OUT_OF_MEMORY));
    run(&mut t, "rollback").unwrap();
    assert_eq!(one(&mut t, "select count(*) from t1"), "0");
}

#[test]
fn w2_star_join_and_w3_wide_table() {
    let (_d, e) = engine();
    let mut s = session(&e);
    for k in 1..=3 {
        run(&mut s, &format!("CREATE TABLE dim{k} (id int PRIMARY KEY, val text)")).unwrap();
        run(&mut s, &format!("INSERT INTO dim{k} SELECT i, md5(i::text) FROM generate_series(1, 100) i")).unwrap();
    }
    run(&mut s, "CREATE TABLE fact_n3 (id int PRIMARY KEY, d1 int, d2 int, d3 int)").unwrap();
    run(&mut s, "INSERT INTO fact_n3 SELECT i, 1 + (i * 3 + 1) % 100, 1 + (i * 5 + 2) % 100, 1 + (i * 7 + 3) % 100 FROM generate_series(1, 1000) i").unwrap();
    let q = "SELECT * FROM fact_n3 f JOIN dim1 d1 ON (d1.id = f.d1) JOIN dim2 d2 ON (d2.id = f.d2) JOIN dim3 d3 ON (d3.id = f.d3) WHERE f.id = $1";
    let st = s.prepare(q, &[]).unwrap();
    assert_eq!(st.fields().unwrap().len(), 4 + 3 * 2);
    match s.execute(&st, &[Param::text("10")]).unwrap() {
        Outcome::Rows { rows, .. } => {
            let rows = rows.to_vec();
            assert_eq!(rows.len(), 1);
            assert_eq!(rows[0][1].as_deref(), Some("32"));
            assert_eq!(rows[0][5].as_deref(), Some("6364d3f0f495b6ab9dcf8d3b5c6e0b01"));
        }
        other => panic!("{other:?}"),
    }
    let cols: Vec<String> = (1..=60).map(|i| format!("col{i} int")).collect();
    run(&mut s, &format!("CREATE TABLE synth_table ({})", cols.join(","))).unwrap();
    for i in 1..=10 {
        run(&mut s, &format!("CREATE INDEX ON synth_table (col{i})")).unwrap();
    }
    assert!(rows(&mut s, "SELECT * FROM synth_table WHERE col5 = 42").is_empty());
}

#[test]
fn pg_relation_size_counts_main_fork_bytes_and_drop_database_removes_a_database() {
    let (_dir, e) = engine();
    let mut s = session(&e);
    run(&mut s, "CREATE UNLOGGED TABLE copy_unlogged (data text NOT NULL)").unwrap();
    assert_eq!(one(&mut s, "SELECT pg_relation_size('copy_unlogged')"), "0");
    run(&mut s, "INSERT INTO copy_unlogged SELECT repeat('x', 500) FROM generate_series(1, 100) g").unwrap();
    let size: i64 = one(&mut s, "SELECT pg_relation_size('copy_unlogged')").parse().unwrap();
    assert!(size >= 8192 * 6 && size % 8192 == 0, "100 rows of 500 bytes take at least 6 pages: {size}");
    assert_eq!(code(&mut s, "SELECT pg_relation_size('no_such_table')"), "42P01");

    assert_eq!(tag(&mut s, "CREATE DATABASE scratch"), "CREATE DATABASE");
    assert_eq!(tag(&mut s, "DROP DATABASE scratch"), "DROP DATABASE");
    assert_eq!(code(&mut s, "DROP DATABASE scratch"), "3D000");
    assert_eq!(tag(&mut s, "DROP DATABASE IF EXISTS scratch"), "DROP DATABASE");
    assert!(SqlSession::connect(&e, "scratch", "u", "t", None).is_err(), "a dropped database cannot be connected to");
}

#[test]
fn typed_settings_are_transactional_and_shown_as_postgresql_prints_them() {
    let (_d, e) = engine();
    let mut s = session(&e);
    assert_eq!(code(&mut s, "SET statement_timeout = 'soon'"), "22023");
    assert_eq!(code(&mut s, "SET default_transaction_isolation = 'chaos'"), "22023");
    run(&mut s, "SET statement_timeout = 60000").unwrap();
    assert_eq!(one(&mut s, "SHOW statement_timeout"), "1min");
    run(&mut s, "BEGIN").unwrap();
    run(&mut s, "SET statement_timeout = '5s'").unwrap();
    run(&mut s, "SET LOCAL plan_cache_mode = force_generic_plan").unwrap();
    assert_eq!(one(&mut s, "SHOW plan_cache_mode"), "force_generic_plan");
    run(&mut s, "ROLLBACK").unwrap();
    assert_eq!(one(&mut s, "SHOW statement_timeout"), "1min");
    assert_eq!(one(&mut s, "SHOW plan_cache_mode"), "auto");
    run(&mut s, "BEGIN").unwrap();
    run(&mut s, "SET default_transaction_isolation = 'repeatable read'").unwrap();
    run(&mut s, "COMMIT").unwrap();
    assert_eq!(one(&mut s, "SHOW default_transaction_isolation"), "repeatable read");
    run(&mut s, "BEGIN").unwrap();
    assert_eq!(one(&mut s, "SHOW transaction_isolation"), "repeatable read");
    run(&mut s, "COMMIT").unwrap();
    run(&mut s, "RESET ALL").unwrap();
    assert_eq!(one(&mut s, "SHOW default_transaction_isolation"), "read committed");
    assert_eq!(one(&mut s, "SHOW statement_timeout"), "0");
}

#[test]
fn explain_plans_the_parsed_query() {
    let (_d, e) = engine();
    let mut s = session(&e);
    run(&mut s, "create table t (k int primary key, v text)").unwrap();
    let plan = rows(&mut s, "EXPLAIN SELECT v FROM t WHERE k = 1");
    assert!(plan.iter().any(|r| r[0].as_deref().is_some_and(|l| l.starts_with("Planning Time"))), "{plan:?}");
    assert_eq!(code(&mut s, "EXPLAIN SELECT nosuch FROM t"), "42703");
    assert_eq!(code(&mut s, "EXPLAIN INSERT INTO t VALUES (1, 'a')"), "0A000");
}

#[test]
fn txid_current_assigns_an_id_as_postgresql_and_runs_past_2_to_the_32() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = turnstile_sync::Config::default();
    let start = (1u64 << 32) - 2;
    config.set("txn.start_xid", &start.to_string()).unwrap();
    let e = SqlEngine::open(dir.path(), config).unwrap();
    let mut s = session(&e);
    run(&mut s, "create table t(a int)").unwrap();
    // A read-only transaction has no id until it asks for one; then it keeps it.
    run(&mut s, "begin").unwrap();
    assert_eq!(one(&mut s, "select txid_current_if_assigned()"), "NULL");
    let first: u64 = one(&mut s, "select txid_current()").parse().unwrap();
    assert!(first >= start, "{first} below txn.start_xid {start}");
    assert_eq!(one(&mut s, "select txid_current_if_assigned()"), first.to_string());
    run(&mut s, "insert into t values (1)").unwrap();
    assert_eq!(one(&mut s, "select txid_current()"), first.to_string(), "the id of a write is the same");
    run(&mut s, "commit").unwrap();
    // In autocommit each call is its own transaction: ids climb through 2^32.
    let mut last = first;
    for _ in 0..4 {
        let x: u64 = one(&mut s, "select txid_current()").parse().unwrap();
        assert!(x > last, "{x} after {last}");
        last = x;
    }
    assert!(last > 1 << 32, "{last} has not passed 2^32");
    assert_eq!(one(&mut s, "select txid_current_if_assigned()"), "NULL");
    assert_eq!(one(&mut s, "select count(*) from t"), "1");
    run(&mut s, "begin").unwrap();
    let x = one(&mut s, "select txid_current() from t");
    assert_eq!(one(&mut s, "select txid_current()"), x, "the same id evaluated over a scan");
    run(&mut s, "commit").unwrap();
}
