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

fn profiles() -> [turnstile_sync::Config; 2] {
    [
        turnstile_sync::Config::preset(turnstile_sync::Profile::Classic),
        turnstile_sync::Config::preset(turnstile_sync::Profile::Scalable),
    ]
}

#[test]
fn serial_bigserial_and_identity_columns_take_their_sequences_values() {
    for config in profiles() {
        let dir = tempfile::tempdir().unwrap();
        let e = engine_with(dir.path(), config);
        let mut s = session(&e);
        run(&mut s, "CREATE TABLE vs1 (id serial PRIMARY KEY, v text)").unwrap();
        assert_eq!(rows(&mut s, "INSERT INTO vs1 (v) VALUES ('a'), ('b') RETURNING id"), "1,2");
        assert_eq!(rows(&mut s, "INSERT INTO vs1 (id, v) VALUES (DEFAULT, 'c') RETURNING id, v"), "3|c");
        assert_eq!(rows(&mut s, "SELECT currval('vs1_id_seq'), lastval()"), "3|3");
        let (code, msg) = error(&mut s, "SELECT setval('vs1_id_seq', 3000000000)");
        assert_eq!(
            (code.as_str(), msg.as_str()),
            ("22003", "setval: value 3000000000 is out of bounds for sequence \"vs1_id_seq\" (1..2147483647)")
        );
        run(&mut s, "CREATE TABLE vs2 (id bigserial PRIMARY KEY, v text)").unwrap();
        assert_eq!(rows(&mut s, "INSERT INTO vs2 (v) VALUES ('a') RETURNING id"), "1");
        assert_eq!(rows(&mut s, "SELECT setval('vs2_id_seq', 3000000000)"), "3000000000");
        assert_eq!(rows(&mut s, "INSERT INTO vs2 (v) VALUES ('b') RETURNING id"), "3000000001");
        run(&mut s, "CREATE TABLE vs3 (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v text)").unwrap();
        assert_eq!(rows(&mut s, "INSERT INTO vs3 (v) VALUES ('a'), ('b') RETURNING id"), "1,2");
        let (code, msg) = error(&mut s, "INSERT INTO vs3 (id, v) VALUES (5, 'x')");
        assert_eq!((code.as_str(), msg.as_str()), ("428C9", "cannot insert a non-DEFAULT value into column \"id\""));
        assert_eq!(rows(&mut s, "INSERT INTO vs3 (v) VALUES ('c') RETURNING id"), "3");
        run(&mut s, "CREATE TABLE vs4 (id bigint GENERATED BY DEFAULT AS IDENTITY (START WITH 100 INCREMENT BY 10) PRIMARY KEY, v text)").unwrap();
        assert_eq!(rows(&mut s, "INSERT INTO vs4 (v) VALUES ('a'), ('b') RETURNING id"), "100,110");
        assert_eq!(rows(&mut s, "INSERT INTO vs4 (id, v) VALUES (7, 'c') RETURNING id"), "7");
        assert_eq!(rows(&mut s, "INSERT INTO vs4 (v) VALUES ('d') RETURNING id"), "120");
        run(&mut s, "DROP TABLE vs4").unwrap();
        assert_eq!(error(&mut s, "SELECT nextval('vs4_id_seq')").0, "42P01");
    }
}

#[test]
fn sequence_statements_and_functions_answer_as_postgresql() {
    for config in profiles() {
        let dir = tempfile::tempdir().unwrap();
        let e = engine_with(dir.path(), config);
        let mut s = session(&e);
        run(&mut s, "CREATE SEQUENCE vq1 INCREMENT BY 5 START WITH 10").unwrap();
        let (code, msg) = error(&mut s, "SELECT currval('vq1')");
        assert_eq!(
            (code.as_str(), msg.as_str()),
            ("55000", "currval of sequence \"vq1\" is not yet defined in this session")
        );
        assert_eq!(rows(&mut s, "SELECT nextval('vq1')"), "10");
        assert_eq!(rows(&mut s, "SELECT nextval('vq1')"), "15");
        assert_eq!(rows(&mut s, "SELECT currval('vq1'), lastval()"), "15|15");
        assert_eq!(rows(&mut s, "SELECT setval('vq1', 100)"), "100");
        assert_eq!(rows(&mut s, "SELECT nextval('vq1')"), "105");
        assert_eq!(rows(&mut s, "SELECT setval('vq1', 200, false)"), "200");
        assert_eq!(rows(&mut s, "SELECT nextval('vq1')"), "200");
        assert_eq!(rows(&mut s, "SELECT nextval('vq1')"), "205");
        assert_eq!(
            error(&mut s, "SELECT nextval('vq_missing')"),
            ("42P01".into(), "relation \"vq_missing\" does not exist".into())
        );
        run(&mut s, "CREATE SEQUENCE vq2 MINVALUE 1 MAXVALUE 3 CYCLE").unwrap();
        let got: Vec<String> = (0..4).map(|_| rows(&mut s, "SELECT nextval('vq2')")).collect();
        assert_eq!(got, ["1", "2", "3", "1"]);
        run(&mut s, "CREATE SEQUENCE vq3 MAXVALUE 2").unwrap();
        assert_eq!(rows(&mut s, "SELECT nextval('vq3')"), "1");
        assert_eq!(rows(&mut s, "SELECT nextval('vq3')"), "2");
        assert_eq!(
            error(&mut s, "SELECT nextval('vq3')"),
            ("2200H".into(), "nextval: reached maximum value of sequence \"vq3\" (2)".into())
        );
        run(&mut s, "CREATE SEQUENCE vq4 INCREMENT BY -2").unwrap();
        assert_eq!(rows(&mut s, "SELECT nextval('vq4')"), "-1");
        assert_eq!(rows(&mut s, "SELECT nextval('vq4')"), "-3");
        run(&mut s, "CREATE SEQUENCE vq5").unwrap();
        assert_eq!(rows(&mut s, "SELECT nextval('vq5')"), "1");
        run(&mut s, "ALTER SEQUENCE vq5 RESTART WITH 1000").unwrap();
        assert_eq!(rows(&mut s, "SELECT nextval('vq5')"), "1000");
        run(&mut s, "ALTER SEQUENCE vq5 INCREMENT BY 3").unwrap();
        assert_eq!(rows(&mut s, "SELECT nextval('vq5')"), "1003");
        run(&mut s, "DROP SEQUENCE vq5").unwrap();
        assert_eq!(error(&mut s, "SELECT nextval('vq5')").0, "42P01");
        run(&mut s, "CREATE SEQUENCE vq6").unwrap();
        run(&mut s, "BEGIN").unwrap();
        assert_eq!(rows(&mut s, "SELECT nextval('vq6')"), "1");
        run(&mut s, "ROLLBACK").unwrap();
        assert_eq!(rows(&mut s, "SELECT nextval('vq6')"), "2");
        let mut fresh = session(&e);
        assert_eq!(
            error(&mut fresh, "SELECT lastval()"),
            ("55000".into(), "lastval is not yet defined in this session".into())
        );
    }
}

#[test]
fn cache_is_per_session_and_a_restart_never_repeats_a_value() {
    for config in profiles() {
        let classic = config.txn.sequence_block == 0;
        let dir = tempfile::tempdir().unwrap();
        let mut seen = Vec::new();
        {
            let e = engine_with(dir.path(), config.clone());
            let (mut a, mut b) = (session(&e), session(&e));
            run(&mut a, "CREATE SEQUENCE vq7 CACHE 10").unwrap();
            let mut got = Vec::new();
            for k in 0..4 {
                let s = if k % 2 == 0 { &mut a } else { &mut b };
                got.push(rows(s, "SELECT nextval('vq7')").parse::<i64>().unwrap());
            }
            if classic {
                assert_eq!(got, [1, 11, 2, 12]);
            } else {
                assert!(
                    got[0] < got[2]
                        && got[1] < got[3]
                        && got.iter().collect::<std::collections::HashSet<_>>().len() == 4
                );
            }
            run(&mut a, "CREATE SEQUENCE vq8").unwrap();
            for _ in 0..40 {
                seen.push(rows(&mut a, "SELECT nextval('vq8')").parse::<i64>().unwrap());
                seen.push(rows(&mut b, "SELECT nextval('vq8')").parse::<i64>().unwrap());
            }
            e.flush().unwrap();
        }
        let e = engine_with(dir.path(), config);
        let mut c = session(&e);
        let next: i64 = rows(&mut c, "SELECT nextval('vq8')").parse().unwrap();
        assert!(seen.iter().all(|v| *v < next), "after a restart nextval gave {next}, at or below one of {seen:?}");
    }
}

/// An insert meeting a key that an open transaction inserted waits for it,
/// then fails with `23505` if it committed and succeeds if it rolled back
/// (PostgreSQL's `XactLockTableWait` in the unique check).
#[test]
fn a_unique_check_waits_for_the_open_transaction_then_decides() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine_with(dir.path(), turnstile_sync::Config::default());
    let mut a = session(&e);
    run(&mut a, "CREATE TABLE uw (k int PRIMARY KEY, v int)").unwrap();
    for (end, want) in [("ROLLBACK", None), ("COMMIT", Some("23505"))] {
        run(&mut a, "DELETE FROM uw").unwrap();
        run(&mut a, "BEGIN").unwrap();
        run(&mut a, "INSERT INTO uw VALUES (1, 1)").unwrap();
        let e2 = e.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let b = std::thread::spawn(move || {
            let mut b = session(&e2);
            let r = run(&mut b, "INSERT INTO uw VALUES (1, 2)").map(|_| ()).map_err(|e| e.code.to_string());
            tx.send(r).unwrap();
        });
        assert!(
            rx.recv_timeout(std::time::Duration::from_millis(500)).is_err(),
            "B answered while A's insert of the key was open"
        );
        run(&mut a, end).unwrap();
        let got = rx.recv_timeout(std::time::Duration::from_secs(10)).expect("B still waits after A ended");
        b.join().unwrap();
        assert_eq!(got.err().as_deref(), want, "after A's {end}");
        assert_eq!(rows(&mut a, "SELECT count(*) FROM uw"), "1");
    }
}

#[test]
fn on_conflict_answers_as_postgresql() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine_with(dir.path(), turnstile_sync::Config::default());
    let mut s = session(&e);
    run(&mut s, "CREATE TABLE vu (k int PRIMARY KEY, v int NOT NULL, note text)").unwrap();
    run(&mut s, "INSERT INTO vu VALUES (1, 10, 'a')").unwrap();
    let sql = "INSERT INTO vu VALUES (1, 5, 'b') ON CONFLICT (k) DO UPDATE SET v = vu.v + EXCLUDED.v, note = EXCLUDED.note RETURNING k, v, note";
    assert_eq!(answer(&mut s, sql), ("1|15|b".into(), "k|v|note".into(), "INSERT 0 1".into()));
    let sql = "INSERT INTO vu VALUES (1, 99, 'c') ON CONFLICT ON CONSTRAINT vu_pkey DO NOTHING RETURNING k";
    assert_eq!(answer(&mut s, sql), (String::new(), "k".into(), "INSERT 0 0".into()));
    let sql = "INSERT INTO vu VALUES (1, 1, 'd') ON CONFLICT (k) DO UPDATE SET v = 0 WHERE vu.v > 100 RETURNING k";
    assert_eq!(answer(&mut s, sql).2, "INSERT 0 0");
    let sql = "INSERT INTO vu VALUES (2, 2, 'e'), (1, 1, 'f') ON CONFLICT DO NOTHING RETURNING k";
    assert_eq!(answer(&mut s, sql), ("2".into(), "k".into(), "INSERT 0 1".into()));
    let sql = "INSERT INTO vu AS t VALUES (2, 7, 'g') ON CONFLICT (k) DO UPDATE SET v = t.v * 10 + EXCLUDED.v WHERE t.note = 'e' RETURNING t.k, t.v";
    assert_eq!(answer(&mut s, sql), ("2|27".into(), "k|v".into(), "INSERT 0 1".into()));
    let (code, msg) = error(&mut s, "INSERT INTO vu VALUES (3, 1, 'x') ON CONFLICT (v) DO NOTHING");
    assert_eq!(
        (code.as_str(), msg.as_str()),
        ("42P10", "there is no unique or exclusion constraint matching the ON CONFLICT specification")
    );
    let (code, msg) =
        error(&mut s, "INSERT INTO vu VALUES (4, 1, 'x'), (4, 2, 'y') ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v");
    assert_eq!(
        (code.as_str(), msg.as_str()),
        ("21000", "ON CONFLICT DO UPDATE command cannot affect row a second time")
    );
    assert_eq!(rows(&mut s, "SELECT k, v, note FROM vu ORDER BY k"), "1|15|b,2|27|e");
}

/// N sessions upserting random keys of a small key space: no upsert fails,
/// no key twice, and every increment counted (no lost update). The seed is
/// printed; `UPSERT_SEED` replays it.
#[test]
fn concurrent_upserts_never_fail_duplicate_or_lose_an_update() {
    let seed: u64 = std::env::var("UPSERT_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
    });
    eprintln!("concurrent_upserts seed: {seed} (UPSERT_SEED={seed} replays it)");
    for config in profiles() {
        let dir = tempfile::tempdir().unwrap();
        let e = engine_with(dir.path(), config);
        let mut s = session(&e);
        run(&mut s, "CREATE TABLE kv (k int PRIMARY KEY, v int NOT NULL)").unwrap();
        run(&mut s, "CREATE TABLE kvn (k int PRIMARY KEY, v int NOT NULL)").unwrap();
        let (clients, per_client, keys) = (6u64, 60u64, 5u64);
        let threads: Vec<_> = (0..clients)
            .map(|c| {
                let e = e.clone();
                std::thread::spawn(move || {
                    let mut s = session(&e);
                    let mut x = seed ^ (c + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                    let mut drawn = std::collections::HashSet::new();
                    for _ in 0..per_client {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let k = x % keys + 1;
                        drawn.insert(k);
                        run(
                            &mut s,
                            &format!("INSERT INTO kv VALUES ({k}, 1) ON CONFLICT (k) DO UPDATE SET v = kv.v + 1"),
                        )
                        .unwrap_or_else(|e| panic!("seed {seed}: upsert of {k} failed: {e:?}"));
                        run(&mut s, &format!("INSERT INTO kvn VALUES ({k}, 1) ON CONFLICT DO NOTHING"))
                            .unwrap_or_else(|e| panic!("seed {seed}: DO NOTHING of {k} failed: {e:?}"));
                    }
                    drawn
                })
            })
            .collect();
        let mut drawn = std::collections::HashSet::new();
        for t in threads {
            drawn.extend(t.join().unwrap());
        }
        let total = (clients * per_client).to_string();
        assert_eq!(rows(&mut s, "SELECT sum(v) FROM kv"), total, "seed {seed}: lost or doubled updates");
        assert_eq!(
            rows(&mut s, "SELECT count(*), count(DISTINCT k) FROM kv"),
            format!("{0}|{0}", drawn.len()),
            "seed {seed}"
        );
        assert_eq!(rows(&mut s, "SELECT count(*), sum(v) FROM kvn"), format!("{0}|{0}", drawn.len()), "seed {seed}");
    }
}

/// Runs `COPY … FROM STDIN` with `data`; the tag or the error's SQLSTATE
/// and message.
fn copy_in(s: &mut SqlSession, sql: &str, data: &str) -> Result<String, (String, String)> {
    let st = s.parse_batch(sql).unwrap();
    let Outcome::CopyIn(mut copy) = s.execute(&st[0], &[]).unwrap() else { panic!("{sql}: no CopyIn") };
    s.copy_data(&mut copy, data.as_bytes()).map_err(|e| (e.code.to_string(), e.message.clone()))?;
    s.copy_done(copy).map_err(|e| (e.code.to_string(), e.message))
}

#[test]
fn copy_into_a_referencing_table_checks_its_foreign_keys_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine_with(dir.path(), turnstile_sync::Config::default());
    let mut s = session(&e);
    run(&mut s, "CREATE TABLE cp (id int PRIMARY KEY)").unwrap();
    run(&mut s, "CREATE TABLE cc (id int, p int REFERENCES cp)").unwrap();
    run(&mut s, "INSERT INTO cp VALUES (1)").unwrap();
    let (code, message) = copy_in(&mut s, "COPY cc FROM STDIN", "1\t1\n2\t2\n").unwrap_err();
    assert_eq!(code, "23503");
    assert_eq!(message, "insert or update on table \"cc\" violates foreign key constraint \"cc_p_fkey\"");
    assert_eq!(rows(&mut s, "SELECT count(*) FROM cc"), "0", "the failed COPY left rows");
    assert_eq!(copy_in(&mut s, "COPY cc FROM STDIN", "1\t1\n2\t\\N\n").unwrap(), "COPY 2");
    // As PostgreSQL's after-statement check: a row may reference one the
    // same COPY loads after it.
    run(&mut s, "CREATE TABLE tree (id int PRIMARY KEY, parent int REFERENCES tree)").unwrap();
    assert_eq!(copy_in(&mut s, "COPY tree FROM STDIN", "1\t2\n2\t\\N\n").unwrap(), "COPY 2");
    assert_eq!(rows(&mut s, "SELECT id, parent FROM tree ORDER BY id"), "1|2,2|");
}
