//! `PARTITION BY LIST (column)` with `FOR VALUES IN (…)`, in process:
//! routing, pruning, overlap, the catalog's view of it. Every answer is
//! PostgreSQL 15's (the wire-level cases are the server's conformance
//! suite).

use turnstile_sql::{Outcome, SqlEngine, SqlError, SqlSession};

fn run(s: &mut SqlSession, sql: &str) -> Result<Outcome, SqlError> {
    let mut last = Outcome::Empty;
    for st in s.parse_batch(sql)? {
        last = s.execute(&st, &[])?;
    }
    Ok(last)
}

fn rows(s: &mut SqlSession, sql: &str) -> String {
    match run(s, sql).unwrap_or_else(|e| panic!("{sql}: {e:?}")) {
        Outcome::Rows { rows, .. } => rows
            .to_vec()
            .into_iter()
            .map(|r| r.into_iter().map(|v| v.unwrap_or_default()).collect::<Vec<_>>().join("|"))
            .collect::<Vec<_>>()
            .join(","),
        other => panic!("{sql}: {other:?}"),
    }
}

fn error(s: &mut SqlSession, sql: &str) -> (String, String) {
    match run(s, sql) {
        Ok(o) => panic!("{sql}: expected an error, got {o:?}"),
        Err(e) => (e.code.to_string(), e.message),
    }
}

#[test]
fn list_partitions_route_prune_and_show_as_postgresql() {
    let dir = tempfile::tempdir().unwrap();
    let e = SqlEngine::open(dir.path(), turnstile_sync::Config::default()).unwrap();
    let mut s = SqlSession::connect(&e, "postgres", "tester", "list_partitions", None).unwrap();
    run(&mut s, "CREATE TABLE lp (a int, b text) PARTITION BY LIST (a)").unwrap();
    run(&mut s, "CREATE TABLE lp1 PARTITION OF lp FOR VALUES IN (1, 3, 2)").unwrap();
    run(&mut s, "CREATE TABLE lp2 PARTITION OF lp FOR VALUES IN (4)").unwrap();
    let (code, msg) = error(&mut s, "CREATE TABLE lp3 PARTITION OF lp FOR VALUES IN (3, 5)");
    // PostgreSQL: `partition "lp3" would overlap partition "lp1"`.
    assert_eq!(code, "42P17");
    assert!(msg.ends_with("would overlap partition \"lp1\""), "{msg}");
    let sql = "SELECT relname, pg_get_expr(relpartbound, oid), pg_get_partkeydef(oid) FROM pg_class \
               WHERE relname LIKE 'lp%' ORDER BY 1";
    assert_eq!(rows(&mut s, sql), "lp||LIST (a),lp1|FOR VALUES IN (1, 3, 2)|,lp2|FOR VALUES IN (4)|");
    assert_eq!(rows(&mut s, "SELECT partstrat FROM pg_partitioned_table WHERE partrelid = 'lp'::regclass"), "l");
    assert_eq!(rows(&mut s, "INSERT INTO lp VALUES (1, 'x'), (4, 'y') RETURNING *"), "1|x,4|y");
    assert_eq!(rows(&mut s, "SELECT a FROM lp1"), "1");
    assert_eq!(rows(&mut s, "SELECT a FROM lp2"), "4");
    let (code, _) = error(&mut s, "INSERT INTO lp VALUES (7, 'z')");
    assert_eq!(code, "23514");
    assert_eq!(rows(&mut s, "UPDATE lp SET a = 2 WHERE a = 1 RETURNING *"), "2|x");
    assert_eq!(rows(&mut s, "SELECT * FROM lp1"), "2|x");
    assert_eq!(rows(&mut s, "SELECT * FROM lp ORDER BY a"), "2|x,4|y");
    assert_eq!(rows(&mut s, "SELECT b FROM lp WHERE a = 4"), "y");
    assert_eq!(rows(&mut s, "DELETE FROM lp WHERE a = 2 RETURNING b"), "x");
    run(&mut s, "CREATE TABLE lp9 (a int, b text)").unwrap();
    run(&mut s, "INSERT INTO lp9 VALUES (9, 'n')").unwrap();
    run(&mut s, "ALTER TABLE lp ATTACH PARTITION lp9 FOR VALUES IN (9)").unwrap();
    assert_eq!(rows(&mut s, "SELECT a FROM lp ORDER BY a"), "4,9");
}
