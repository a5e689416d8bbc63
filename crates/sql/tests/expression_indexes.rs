//! Indexes on expressions (`CREATE [UNIQUE] INDEX … ON t (lower(k))`), in
//! process: kept up by INSERT, UPDATE and DELETE, checked by the unique
//! check, inferred by `ON CONFLICT (lower(k))`, shown by the catalog, and
//! still computed after a restart. Every answer is PostgreSQL 15's.

use turnstile_sql::{Outcome, SqlEngine, SqlError, SqlSession};

fn session(e: &SqlEngine) -> SqlSession {
    SqlSession::connect(e, "postgres", "tester", "expression_indexes", None).unwrap()
}

fn run(s: &mut SqlSession, sql: &str) -> Result<Outcome, SqlError> {
    let mut last = Outcome::Empty;
    for st in s.parse_batch(sql)? {
        last = s.execute(&st, &[])?;
    }
    Ok(last)
}

/// The rows (columns joined by `|`, rows by `,`) and the tag.
fn answer(s: &mut SqlSession, sql: &str) -> (String, String) {
    match run(s, sql).unwrap_or_else(|e| panic!("{sql}: {e:?}")) {
        Outcome::Rows { rows, tag, .. } => {
            let rows = rows
                .to_vec()
                .into_iter()
                .map(|r| r.into_iter().map(|v| v.unwrap_or_default()).collect::<Vec<_>>().join("|"))
                .collect::<Vec<_>>()
                .join(",");
            (rows, tag)
        }
        Outcome::Command { tag } => (String::new(), tag),
        other => panic!("{sql}: {other:?}"),
    }
}

fn rows(s: &mut SqlSession, sql: &str) -> String {
    answer(s, sql).0
}

/// SQLSTATE, message and DETAIL of the error `sql` must give.
fn error(s: &mut SqlSession, sql: &str) -> (String, String, String) {
    match run(s, sql) {
        Ok(o) => panic!("{sql}: expected an error, got {o:?}"),
        Err(e) => (e.code.to_string(), e.message, e.detail.unwrap_or_default()),
    }
}

fn profiles() -> [turnstile_sync::Config; 2] {
    [
        turnstile_sync::Config::preset(turnstile_sync::Profile::Classic),
        turnstile_sync::Config::preset(turnstile_sync::Profile::Scalable),
    ]
}

#[test]
fn a_unique_expression_index_checks_and_arbitrates_as_postgresql() {
    for config in profiles() {
        let dir = tempfile::tempdir().unwrap();
        let e = SqlEngine::open(dir.path(), config).unwrap();
        let mut s = session(&e);
        run(&mut s, "CREATE TABLE ei (id int PRIMARY KEY, k text, n int)").unwrap();
        run(&mut s, "INSERT INTO ei VALUES (1, 'Ab', 1), (2, 'cD', 2)").unwrap();
        // Built over the rows already there.
        run(&mut s, "CREATE UNIQUE INDEX ON ei (lower(k))").unwrap();
        let dup = error(&mut s, "INSERT INTO ei VALUES (3, 'AB', 3)");
        assert_eq!(
            dup,
            (
                "23505".into(),
                "duplicate key value violates unique constraint \"ei_lower_idx\"".into(),
                "Key (lower(k))=(ab) already exists.".into()
            )
        );
        let sql = "INSERT INTO ei VALUES (3, 'AB', 3) ON CONFLICT (lower(k)) DO UPDATE SET n = ei.n + EXCLUDED.n \
                   RETURNING id, k, n";
        assert_eq!(answer(&mut s, sql), ("1|Ab|4".into(), "INSERT 0 1".into()));
        let sql = "INSERT INTO ei VALUES (4, 'CD', 4) ON CONFLICT (LOWER(k)) DO NOTHING RETURNING id";
        assert_eq!(answer(&mut s, sql), (String::new(), "INSERT 0 0".into()));
        let sql = "INSERT INTO ei VALUES (5, 'Ef', 5) ON CONFLICT (lower(k)) DO NOTHING RETURNING id";
        assert_eq!(answer(&mut s, sql), ("5".into(), "INSERT 0 1".into()));
        let (code, msg, _) = error(&mut s, "INSERT INTO ei VALUES (6, 'x', 6) ON CONFLICT (upper(k)) DO NOTHING");
        assert_eq!(
            (code.as_str(), msg.as_str()),
            ("42P10", "there is no unique or exclusion constraint matching the ON CONFLICT specification")
        );
        // An UPDATE's new key is checked; the old one is free once changed.
        let (code, _, detail) = error(&mut s, "UPDATE ei SET k = 'EF' WHERE id = 1");
        assert_eq!((code.as_str(), detail.as_str()), ("23505", "Key (lower(k))=(ef) already exists."));
        run(&mut s, "UPDATE ei SET k = 'xy' WHERE id = 1").unwrap();
        run(&mut s, "INSERT INTO ei VALUES (7, 'AB', 7)").unwrap();
        // A deleted key is free again.
        run(&mut s, "DELETE FROM ei WHERE id = 7").unwrap();
        run(&mut s, "INSERT INTO ei VALUES (7, 'aB', 7)").unwrap();
        assert_eq!(rows(&mut s, "SELECT id, k, n FROM ei ORDER BY id"), "1|xy|4,2|cD|2,5|Ef|5,7|aB|7");
        assert_eq!(rows(&mut s, "SELECT id FROM ei WHERE lower(k) = 'ab'"), "7");
        // After a restart the expression is compiled again.
        drop(s);
        drop(e);
        let e = SqlEngine::open(dir.path(), profiles()[0].clone()).unwrap();
        let mut s = session(&e);
        let (code, _, detail) = error(&mut s, "INSERT INTO ei VALUES (8, 'XY', 8)");
        assert_eq!((code.as_str(), detail.as_str()), ("23505", "Key (lower(k))=(xy) already exists."));
        let sql =
            "INSERT INTO ei VALUES (8, 'XY', 8) ON CONFLICT (lower(k)) DO UPDATE SET k = EXCLUDED.k RETURNING id, k";
        assert_eq!(answer(&mut s, sql), ("1|XY".into(), "INSERT 0 1".into()));
    }
}

#[test]
fn index_expressions_are_checked_named_and_shown_as_postgresql() {
    let dir = tempfile::tempdir().unwrap();
    let e = SqlEngine::open(dir.path(), turnstile_sync::Config::default()).unwrap();
    let mut s = session(&e);
    run(&mut s, "CREATE TABLE ei (id int PRIMARY KEY, k text, n int)").unwrap();
    run(&mut s, "CREATE UNIQUE INDEX ON ei (lower(k))").unwrap();
    run(&mut s, "CREATE INDEX ON ei ((n * 2), k)").unwrap();
    for sql in ["CREATE INDEX ON ei (random())", "CREATE INDEX ON ei ((k || now()))"] {
        let (code, msg, _) = error(&mut s, sql);
        assert_eq!((code.as_str(), msg.as_str()), ("42P17", "functions in index expression must be marked IMMUTABLE"));
    }
    run(&mut s, "CREATE TABLE ej (k text)").unwrap();
    run(&mut s, "INSERT INTO ej VALUES ('a'), ('A')").unwrap();
    let (code, _, _) = error(&mut s, "CREATE UNIQUE INDEX ej_u ON ej (lower(k))");
    assert_eq!(code, "23505");
    assert_eq!(rows(&mut s, "SELECT relname FROM pg_class WHERE relname LIKE 'ej%' ORDER BY 1"), "ej");
    // An index on an expression is no constraint.
    assert_eq!(rows(&mut s, "SELECT count(*) FROM pg_constraint WHERE conrelid = 'ei'::regclass"), "1");
    let sql =
        "SELECT indkey, indexprs IS NOT NULL, pg_get_indexdef(indexrelid), pg_get_indexdef(indexrelid, 1, false) \
               FROM pg_index WHERE indrelid = 'ei'::regclass ORDER BY indexrelid";
    assert_eq!(
        rows(&mut s, sql),
        "1|f|CREATE UNIQUE INDEX ei_pkey ON public.ei USING btree (id)|id,\
         0|t|CREATE UNIQUE INDEX ei_lower_idx ON public.ei USING btree (lower(k))|lower(k),\
         0 2|t|CREATE INDEX ei_expr_k_idx ON public.ei USING btree (((n * 2)), k)|((n * 2))"
    );
    let sql = "SELECT pg_get_indexdef(indexrelid, 0, true), pg_get_expr(indexprs, indrelid) FROM pg_index \
               WHERE indexrelid = 'ei_expr_k_idx'::regclass";
    assert_eq!(rows(&mut s, sql), "CREATE INDEX ei_expr_k_idx ON ei USING btree ((n * 2), k)|(n * 2)");
    let sql = "SELECT attname, atttypid::regtype FROM pg_attribute WHERE attrelid = 'ei_lower_idx'::regclass";
    assert_eq!(rows(&mut s, sql), "lower|text");
}
