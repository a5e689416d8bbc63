//! The writes applications make: `RETURNING`, sequences and generated
//! keys, in process (PostgreSQL 15's answers; the wire-level checks are the
//! server's conformance cases).

use turnstile_sql::{Outcome, Param, SqlEngine, SqlError, SqlSession};

fn engine_with(dir: &std::path::Path, config: turnstile_sync::Config) -> SqlEngine {
    SqlEngine::open(dir, config).unwrap()
}

fn session(e: &SqlEngine) -> SqlSession {
    SqlSession::connect(e, "postgres", "tester", "writes", None).unwrap()
}

fn run(s: &mut SqlSession, sql: &str) -> Result<Outcome, SqlError> {
    let mut last = Outcome::Empty;
    for st in s.parse_batch(sql)? {
        last = s.execute(&st, &[])?;
    }
    Ok(last)
}

/// The rows (columns joined by `|`, rows by `,`), the column names and the tag.
fn answer(s: &mut SqlSession, sql: &str) -> (String, String, String) {
    match run(s, sql).unwrap_or_else(|e| panic!("{sql}: {e:?}")) {
        Outcome::Rows { fields, rows, tag } => {
            let names = fields.iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join("|");
            let rows = rows
                .to_vec()
                .into_iter()
                .map(|r| r.into_iter().map(|v| v.unwrap_or_default()).collect::<Vec<_>>().join("|"))
                .collect::<Vec<_>>()
                .join(",");
            (rows, names, tag)
        }
        Outcome::Command { tag } => (String::new(), String::new(), tag),
        other => panic!("{sql}: {other:?}"),
    }
}

fn rows(s: &mut SqlSession, sql: &str) -> String {
    answer(s, sql).0
}

fn error(s: &mut SqlSession, sql: &str) -> (String, String) {
    match run(s, sql) {
        Ok(o) => panic!("{sql}: expected an error, got {o:?}"),
        Err(e) => (e.code.to_string(), e.message),
    }
}

#[test]
fn returning_projects_inserted_updated_and_deleted_rows() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine_with(dir.path(), turnstile_sync::Config::default());
    let mut s = session(&e);
    run(&mut s, "CREATE TABLE va (id int PRIMARY KEY, v text NOT NULL, n int)").unwrap();
    let a = answer(&mut s, "INSERT INTO va VALUES (1, 'a', 10), (2, 'b', 20) RETURNING id, v || '!' AS x, n * 2");
    assert_eq!(a, ("1|a!|20,2|b!|40".into(), "id|x|?column?".into(), "INSERT 0 2".into()));
    let a = answer(&mut s, "INSERT INTO va SELECT g, 'g' || g, g * 100 FROM generate_series(3, 4) g RETURNING id, n");
    assert_eq!(a, ("3|300,4|400".into(), "id|n".into(), "INSERT 0 2".into()));
    let a = answer(&mut s, "UPDATE va SET n = n + 1 WHERE id = 2 RETURNING id, n, upper(v)");
    assert_eq!(a, ("2|21|B".into(), "id|n|upper".into(), "UPDATE 1".into()));
    let a = answer(&mut s, "DELETE FROM va WHERE id = 1 RETURNING *, n + 1 AS next");
    assert_eq!(a, ("1|a|10|11".into(), "id|v|n|next".into(), "DELETE 1".into()));
    let a = answer(&mut s, "DELETE FROM va WHERE id = 99 RETURNING id");
    assert_eq!(a, (String::new(), "id".into(), "DELETE 0".into()));
    assert_eq!(error(&mut s, "DELETE FROM va RETURNING count(*)").0, "42803");
    // Extended protocol: Describe gives the RETURNING columns.
    let st = s.prepare("UPDATE va SET n = n * $1 WHERE id = $2 RETURNING id, n, v", &[]).unwrap();
    let f: Vec<(String, u32)> = st.fields().unwrap().iter().map(|f| (f.name.clone(), f.type_oid)).collect();
    assert_eq!(f, vec![("id".into(), 23), ("n".into(), 23), ("v".into(), 25)]);
    match s.execute(&st, &[Param::text("3"), Param::text("2")]).unwrap() {
        Outcome::Rows { rows, tag, .. } => {
            assert_eq!(rows.to_vec(), vec![vec![Some("2".into()), Some("63".into()), Some("b".into())]]);
            assert_eq!(tag, "UPDATE 1");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(rows(&mut s, "SELECT id, v, n FROM va ORDER BY id"), "2|b|63,3|g3|300,4|g4|400");
}
