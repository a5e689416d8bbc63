//! Random SQL from a generator: every statement gets a result or an
//! ErrorResponse-worthy [`SqlError`], never a panic, and the session keeps
//! answering afterwards.

use proptest::prelude::*;
use turnstile_sql::{Param, SqlEngine, SqlSession};

fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("SELECT".to_owned()),
        Just("FROM".to_owned()),
        Just("WHERE".to_owned()),
        Just("t".to_owned()),
        Just("k".to_owned()),
        Just("v".to_owned()),
        Just("*".to_owned()),
        Just("=".to_owned()),
        Just("(".to_owned()),
        Just(")".to_owned()),
        Just(",".to_owned()),
        Just(";".to_owned()),
        Just("count(*)".to_owned()),
        Just("GROUP BY".to_owned()),
        Just("ORDER BY".to_owned()),
        Just("LIMIT".to_owned()),
        Just("INSERT INTO".to_owned()),
        Just("VALUES".to_owned()),
        Just("UPDATE".to_owned()),
        Just("SET".to_owned()),
        Just("DELETE".to_owned()),
        Just("BEGIN".to_owned()),
        Just("ROLLBACK".to_owned()),
        Just("pg_locks".to_owned()),
        Just("generate_series(1, 3)".to_owned()),
        Just("'x'".to_owned()),
        Just("$1".to_owned()),
        Just("NULL".to_owned()),
        Just("::int".to_owned()),
        Just("||".to_owned()),
        Just("+".to_owned()),
        Just("/".to_owned()),
        Just("AND".to_owned()),
        Just("FILTER (WHERE".to_owned()),
        (-5i64..100_000).prop_map(|n| n.to_string()),
        "[a-z_]{1,8}",
        "[ -~]{0,6}",
    ]
}

fn statement() -> impl Strategy<Value = String> {
    let templates = prop_oneof![
        Just("SELECT {a} FROM t WHERE k = {b}".to_owned()),
        Just("SELECT {a}, count(*) FROM t GROUP BY {b} ORDER BY {a}".to_owned()),
        Just("INSERT INTO t VALUES ({a}, {b})".to_owned()),
        Just("UPDATE t SET v = {a} WHERE k = {b}".to_owned()),
        Just("DELETE FROM t WHERE {a} = {b}".to_owned()),
        Just("SELECT {a} {b}".to_owned()),
    ];
    prop_oneof![
        prop::collection::vec(token(), 0..12).prop_map(|t| t.join(" ")),
        (templates, token(), token()).prop_map(|(t, a, b)| t.replace("{a}", &a).replace("{b}", &b)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 120, ..ProptestConfig::default() })]

    #[test]
    fn random_sql_never_panics(stmts in prop::collection::vec(statement(), 1..6)) {
        let dir = tempfile::tempdir().unwrap();
        let e = SqlEngine::open(dir.path(), turnstile_sync::Config::default()).unwrap();
        let mut s = SqlSession::connect(&e, "postgres", "fuzz", "", None).unwrap();
        for st in s.parse_batch("CREATE TABLE t (k int primary key, v text)").unwrap() {
            s.execute(&st, &[]).unwrap();
        }
        for sql in &stmts {
            if let Ok(batch) = s.parse_batch(sql) {
                for st in batch {
                    let _ = s.execute(&st, &[Param::text("1")]);
                }
            }
            if let Ok(st) = s.prepare(sql, &[]) {
                let params: Vec<Param> = st.param_types().iter().map(|_| Param::text("2")).collect();
                let _ = s.execute(&st, &params);
            }
        }
        // The session still answers.
        for st in s.parse_batch("ROLLBACK; SELECT count(*) FROM t").unwrap() {
            s.execute(&st, &[]).unwrap();
        }
    }
}
