//! PostgreSQL's types and parse analysis, in process: each statement's rows
//! (and, where given, result column names) or SQLSTATE, as PostgreSQL 15
//! answers them (recorded with psql against PostgreSQL 15, UTF8, locale C).

use turnstile_sql::{Outcome, SqlEngine, SqlError, SqlSession};

fn engine() -> (tempfile::TempDir, SqlEngine) {
    let dir = tempfile::tempdir().unwrap();
    let e = SqlEngine::open(dir.path(), turnstile_sync::Config::default()).unwrap();
    (dir, e)
}

fn session(e: &SqlEngine) -> SqlSession {
    SqlSession::connect(e, "postgres", "tester", "test", None).unwrap()
}

fn run(s: &mut SqlSession, sql: &str) -> Result<Outcome, SqlError> {
    let mut last = Outcome::Empty;
    for st in s.parse_batch(sql)? {
        last = s.execute(&st, &[])?;
    }
    Ok(last)
}

/// `E<sqlstate>`, or the rows joined by `,` (columns by `|`), and the
/// column names joined by `|`.
fn answer(s: &mut SqlSession, sql: &str) -> (String, String) {
    match run(s, sql) {
        Err(e) => (format!("E{}", e.code), String::new()),
        Ok(Outcome::Rows { fields, rows, .. }) => {
            let rows: Vec<String> = rows
                .to_vec()
                .into_iter()
                .map(|r| r.into_iter().map(Option::unwrap_or_default).collect::<Vec<_>>().join("|"))
                .collect();
            (rows.join(","), fields.iter().map(|f| f.name.clone()).collect::<Vec<_>>().join("|"))
        }
        Ok(other) => (format!("{other:?}"), String::new()),
    }
}

const SETUP: &[&str] = &[
    "CREATE TABLE qa_t (i int4, b int8, t text, v varchar(10), c char(5))",
    "INSERT INTO qa_t VALUES (100000, 5000000000, 'x', 'y', 'z')",
    "CREATE TABLE qa_s (x int4, y int8, z int4)",
    "INSERT INTO qa_s VALUES (2147483647, 9223372036854775807, 1), (1, 1, 2), (NULL, NULL, 2)",
    "CREATE TABLE qa_nn (id int PRIMARY KEY, v varchar(10) NOT NULL)",
];

/// (statement, rows or `E` + SQLSTATE, column names or "").
const CASES: &[(&str, &str, &str)] = &[
    // integers: overflow is 22003 everywhere, division by zero 22012
    ("SELECT 2147483647 + 1", "E22003", ""),
    ("SELECT 65536 * 65536", "E22003", ""),
    ("SELECT -(-2147483647 - 1)", "E22003", ""),
    ("SELECT (-2147483647 - 1) / -1", "E22003", ""),
    ("SELECT 32767::int2 + 1::int2", "E22003", ""),
    ("SELECT (-32768)::int2 / (-1)::int2", "E22003", ""),
    ("SELECT 9223372036854775807 + 1", "E22003", ""),
    ("SELECT (-9223372036854775807 - 1) / -1", "E22003", ""),
    ("SELECT 3000000000::int4", "E22003", ""),
    ("SELECT i * 30000 FROM qa_t WHERE i = 100000", "E22003", ""),
    ("SELECT sum(x), sum(y) FROM qa_s", "2147483648|9223372036854775808", "sum|sum"),
    ("SELECT -7 / 2, -7 % 3", "-3|-1", ""),
    ("SELECT 1 / 0", "E22012", ""),
    ("SELECT -2147483648, (-2147483647 - 1) % -1", "-2147483648|0", ""),
    ("SELECT 32767::int2 + 1", "32768", ""),
    // numeric: exact, PostgreSQL's display scales
    ("SELECT 0.1 + 0.2", "0.3", ""),
    ("SELECT 1.0 / 3", "0.33333333333333333333", ""),
    ("SELECT avg(z) FROM qa_s", "1.6666666666666667", "avg"),
    ("SELECT CAST(59 AS numeric) / 4", "14.7500000000000000", ""),
    ("SELECT 1.10 * 2, 1.5 + 1.25", "2.20|2.75", ""),
    ("SELECT 2.675::numeric(10,2), (-2.5)::numeric(10,0)", "2.68|-3", ""),
    ("SELECT 12345.678::numeric(12,2)", "12345.68", "numeric"),
    ("SELECT 123456.789::numeric(5,2)", "E22003", ""),
    ("SELECT 1.5 / 0", "E22012", ""),
    ("SELECT 123456789012345678901234567890 + 1", "123456789012345678901234567891", ""),
    ("SELECT avg(y), sum(y) / 2 FROM qa_s", "4611686018427387904|4611686018427387904", ""),
    // text, varchar, char(n)
    ("SELECT 'abc' = 'abc '", "f", ""),
    ("SELECT length('  x  '), length('漢字🙂')", "5|3", ""),
    ("SELECT 'abc'::char(5) = 'abc', length('abc'::char(5))", "t|3", ""),
    ("SELECT 'abc'::varchar(2), 'abc '::varchar(10) = 'abc'", "ab|f", "varchar|?column?"),
    ("SELECT 'abc'::char(5) || '<'", "abc<", ""),
    ("SELECT c, c = 'z', length(c) FROM qa_t", "z    |t|1", ""),
    ("SELECT count(*) FROM qa_t WHERE i = 5000000000", "0", ""),
    ("SELECT count(*) FROM qa_t WHERE v = 'yyyyyyyyyyyyyyy' OR c = 'zzzzzzzzz'", "0", ""),
    ("SELECT count(*) FROM qa_t WHERE v = 'y' AND c = 'z  ' AND t = 'x'", "1", ""),
    ("INSERT INTO qa_nn VALUES (1, '12345678901')", "E22001", ""),
    // floats
    ("SELECT 1e308::float8 * 10", "E22003", ""),
    ("SELECT 1e-300::float8 * 1e-300", "E22003", ""),
    ("SELECT '1e400'::float8", "E22003", ""),
    ("SELECT 0.1::float8 + 0.2::float8", "0.30000000000000004", ""),
    ("SELECT 1e308::float8, 1.5::float4 * 2", "1e+308|3", ""),
    ("SELECT 1.0::float8 / 0", "E22012", ""),
    // casts
    ("SELECT 2.5::int, (-2.5)::int, 0.5::int, 2.5::float8::int", "3|-3|1|2", ""),
    ("SELECT '12.5'::int", "E22P02", ""),
    ("SELECT true::text, 'yes'::boolean, 'off'::boolean", "true|t|f", "text|bool|bool"),
    ("SELECT 'maybe'::boolean", "E22P02", ""),
    // dates and timestamps
    ("SELECT '2023-02-29'::date", "E22008", ""),
    ("SELECT '2023-02-29'::timestamp", "E22008", ""),
    (
        "SELECT '2024-02-29'::timestamp, '2024-01-02 03:04:05.123+02'::timestamp",
        "2024-02-29 00:00:00|2024-01-02 03:04:05.123",
        "",
    ),
    ("SELECT '2024-02-29'::date, DATE '2024-03-01' > '2024-02-29'::date", "2024-02-29|t", "date|?column?"),
    // function and operator resolution
    ("SELECT length(123)", "E42883", ""),
    ("SELECT i LIKE 1 FROM qa_t", "E42883", ""),
    ("SELECT 'a' || 1, upper(t) FROM qa_t", "a1|X", ""),
    ("SELECT 1 + true", "E42883", ""),
    // grouping
    ("SELECT i, count(*) FROM qa_t", "E42803", ""),
    ("SELECT i, b FROM qa_t GROUP BY i", "E42803", ""),
    ("SELECT i + 1, count(*) FROM qa_t GROUP BY i + 1", "100001|1", ""),
    ("SELECT i AS x, sum(i), count(*) FROM qa_t GROUP BY i", "100000|100000|1", "x|sum|count"),
    // NOT NULL
    ("INSERT INTO qa_nn (id) VALUES (2)", "E23502", ""),
    ("INSERT INTO qa_nn VALUES (3, NULL)", "E23502", ""),
    // result column names
    ("SELECT 1::integer, 2::bigint, true::boolean, CAST(3 AS smallint)", "1|2|t|3", "int4|int8|bool|int2"),
    ("SELECT substr('abc', 1, 2), CASE WHEN 1 = 1 THEN 'y' END, 1 + 1", "ab|y|2", "substr|case|?column?"),
    ("SELECT true, CASE WHEN false THEN 1 ELSE 2.5 END", "t|2.5", "?column?|case"),
    ("SELECT CAST(1.5::float8 AS int), 'on'::bool::text, (1)::int", "2|true|1", "int4|text|int4"),
    (
        "SELECT round(2), round(2.5::float8), round(-2.5), round(1234.5678, 2), round(1234.5678, -2)",
        "2|2|-3|1234.57|1200",
        "round|round|round|round|round",
    ),
    ("SELECT round('x'::text)", "E42883", ""),
    ("SELECT 0.1::float4::text, 'r=' || 0.1::float4", "0.1|r=0.1", ""),
    ("SELECT 12::char(1), true::varchar(2), 1.5::varchar", "1|tr|1.5", "bpchar|varchar|varchar"),
    ("SELECT t FROM qa_t WHERE t IN ('a', 1)", "E42883", ""),
    ("SELECT i IN (100000.0, 2), c IN ('z', 'q'), current_date > '2000-01-01' FROM qa_t", "t|t|t", ""),
    ("SELECT abs(-2147483647 - 1)", "E22003", ""),
    // Case maps by Unicode, as PostgreSQL 15 under LC_CTYPE C.utf8 (the conformance recording's).
    ("SELECT abs(-5::int2), upper('héllo'), lower('ÉA')", "5|HÉLLO|éa", ""),
    ("SELECT 0.00005::numeric(3,4), 0.1::numeric(3,4)", "E22003", ""),
    ("SELECT 0.00005::numeric(3,4)", "0.0001", ""),
];

#[test]
fn expressions_answer_as_postgresql_15() {
    let (_d, e) = engine();
    let mut s = session(&e);
    for q in SETUP {
        run(&mut s, q).unwrap_or_else(|e| panic!("{q}: {e:?}"));
    }
    let mut failures = Vec::new();
    for (sql, want, names) in CASES {
        let (got, got_names) = answer(&mut s, sql);
        if got != *want || (!names.is_empty() && got_names != *names) {
            failures.push(format!("{sql}: got {got:?} columns {got_names:?}, want {want:?} columns {names:?}"));
        }
    }
    assert!(failures.is_empty(), "{} of {} differ:\n{}", failures.len(), CASES.len(), failures.join("\n"));
}

#[test]
fn a_table_joins_itself_and_text_joins_varchar() {
    let (_d, e) = engine();
    let mut s = session(&e);
    for q in [
        "CREATE TABLE acc (aid int PRIMARY KEY, bid int)",
        "INSERT INTO acc SELECT g, g % 3 FROM generate_series(1, 50) g",
        "CREATE TABLE qc_t (id int, t text)",
        "CREATE TABLE qc_v (id int, v varchar(10))",
        "INSERT INTO qc_t VALUES (1, 'a'), (2, 'b '), (3, 'c')",
        "INSERT INTO qc_v VALUES (10, 'a'), (20, 'b'), (30, 'c'), (40, 'd')",
    ] {
        run(&mut s, q).unwrap_or_else(|e| panic!("{q}: {e:?}"));
    }
    let self_join = "SELECT a.aid, b.aid FROM acc a JOIN acc b ON a.aid = b.aid + 1 WHERE a.aid = 5";
    assert_eq!(answer(&mut s, self_join).0, "5|4");
    let equi = "SELECT a.aid, b.bid FROM acc a JOIN acc b ON a.aid = b.aid WHERE b.aid = 7";
    assert_eq!(answer(&mut s, equi).0, "7|1");
    let left = "SELECT a.aid, b.aid FROM acc a LEFT JOIN acc b ON b.aid = a.aid + 49 WHERE a.aid < 3 ORDER BY 1";
    assert_eq!(answer(&mut s, left).0, "1|50,2|");
    assert_eq!(answer(&mut s, "SELECT 1 FROM acc a JOIN acc a ON a.aid = a.aid").0, "E42712");
    let tv = "SELECT qc_t.id, qc_v.id FROM qc_t JOIN qc_v ON qc_t.t = qc_v.v ORDER BY 1";
    assert_eq!(answer(&mut s, tv).0, "1|10,3|30");
}

#[test]
fn new_column_types_store_exactly() {
    let (_d, e) = engine();
    let mut s = session(&e);
    for q in [
        "CREATE TABLE n (a int2, b float4, c float8, d numeric(10,2), e numeric, f date)",
        "INSERT INTO n VALUES (-32768, 1.5, 0.1, 2.675, 1.10, '2024-02-29')",
        "INSERT INTO n VALUES (1, 1e-3, 1e300, -0.005, 123456789012345678901234567890.123, '1999-12-31')",
    ] {
        run(&mut s, q).unwrap_or_else(|e| panic!("{q}: {e:?}"));
    }
    assert_eq!(
        answer(&mut s, "SELECT a, b, c, d, e, f FROM n ORDER BY a").0,
        "-32768|1.5|0.1|2.68|1.10|2024-02-29,1|0.001|1e+300|-0.01|123456789012345678901234567890.123|1999-12-31"
    );
    assert_eq!(answer(&mut s, "SELECT sum(d), avg(a) FROM n").0, "2.67|-16383.500000000000");
    assert_eq!(answer(&mut s, "SELECT a FROM n WHERE d = 2.68").0, "-32768");
    assert_eq!(answer(&mut s, "INSERT INTO n (a) VALUES (32768)").0, "E22003");
    assert_eq!(answer(&mut s, "INSERT INTO n (d) VALUES (123456789)").0, "E22003");
    assert_eq!(answer(&mut s, "INSERT INTO n (f) VALUES ('2023-02-29')").0, "E22008");
    assert_eq!(answer(&mut s, "INSERT INTO n (b) VALUES (1e39)").0, "E22003");
}

/// `bytea` is held as bytes from the literal to the row and back: stored,
/// compared, ordered (byte order), aggregated and cast to text as
/// PostgreSQL 15 answers.
#[test]
fn bytea_values_are_bytes_end_to_end() {
    let (_d, e) = engine();
    let mut s = session(&e);
    for q in [
        "CREATE TABLE qb (id int4, b bytea)",
        "INSERT INTO qb VALUES (1, '\\x00ff'), (2, 'abc'), (3, NULL), (4, '\\x616263')",
    ] {
        run(&mut s, q).unwrap_or_else(|e| panic!("{q}: {e:?}"));
    }
    assert_eq!(answer(&mut s, "SELECT b FROM qb ORDER BY b, id").0, "\\x00ff,\\x616263,\\x616263,");
    assert_eq!(answer(&mut s, "SELECT id FROM qb WHERE b = '\\x616263' ORDER BY id").0, "2,4");
    assert_eq!(answer(&mut s, "SELECT id FROM qb WHERE b < 'abc'").0, "1");
    assert_eq!(answer(&mut s, "SELECT b::text, length(b::text) FROM qb WHERE id = 1").0, "\\x00ff|6");
    assert_eq!(answer(&mut s, "SELECT max(b), min(b), count(DISTINCT b) FROM qb").0, "\\x616263|\\x00ff|2");
    assert_eq!(answer(&mut s, "SELECT coalesce(b, '\\x01') FROM qb WHERE id = 3").0, "\\x01");
    assert_eq!(answer(&mut s, "SELECT 'a\\\\b'::bytea").0, "\\x615c62");
    assert_eq!(answer(&mut s, "SELECT '\\x0'::bytea").0, "E22P02");
    assert_eq!(answer(&mut s, "INSERT INTO qb VALUES (5, '\\x0g')").0, "E22P02");
}

#[test]
fn not_null_holds_on_every_insert_path() {
    let (_d, e) = engine();
    let mut s = session(&e);
    run(&mut s, "CREATE TABLE nn (id int, v text NOT NULL)").unwrap();
    assert_eq!(answer(&mut s, "INSERT INTO nn (id) VALUES (1)").0, "E23502");
    assert_eq!(answer(&mut s, "INSERT INTO nn VALUES (1, NULL), (2, 'x')").0, "E23502");
    assert_eq!(answer(&mut s, "INSERT INTO nn SELECT g, NULL FROM generate_series(1, 3) g").0, "E23502");
    run(&mut s, "INSERT INTO nn VALUES (1, 'a')").unwrap();
    assert_eq!(answer(&mut s, "UPDATE nn SET v = NULL").0, "E23502");
    let st = s.parse_batch("COPY nn FROM STDIN").unwrap();
    let Outcome::CopyIn(mut copy) = s.execute(&st[0], &[]).unwrap() else { panic!("no CopyIn") };
    s.copy_data(&mut copy, b"5\t\\N\n").unwrap_or_else(|e| panic!("{e:?}"));
    let err = s.copy_done(copy).expect_err("a NULL copied into a NOT NULL column");
    assert_eq!(err.code, "23502", "{err:?}");
    assert_eq!(answer(&mut s, "SELECT count(*) FROM nn").0, "1");
}

#[test]
fn joins_the_engine_cannot_run_are_nested_loops_and_unsupported_ones_say_so() {
    let (_d, e) = engine();
    let mut s = session(&e);
    for q in [
        "CREATE TABLE l (a int, t text)",
        "CREATE TABLE r (b int8, u varchar(5))",
        "INSERT INTO l VALUES (1, 'x'), (2, 'y'), (3, NULL)",
        "INSERT INTO r VALUES (2, 'y'), (3, 'z')",
    ] {
        run(&mut s, q).unwrap_or_else(|e| panic!("{q}: {e:?}"));
    }
    assert_eq!(answer(&mut s, "SELECT a, b FROM l, r WHERE a = b ORDER BY 1").0, "2|2,3|3");
    assert_eq!(answer(&mut s, "SELECT a, u FROM l CROSS JOIN r WHERE t = u").0, "2|y");
    assert_eq!(answer(&mut s, "SELECT count(*) FROM l JOIN r ON a < b").0, "3");
    assert_eq!(answer(&mut s, "SELECT a, g FROM l JOIN generate_series(1, 2) g ON a = g ORDER BY 1").0, "1|1,2|2");
    let right = run(&mut s, "SELECT 1 FROM l RIGHT JOIN r ON a = b").unwrap_err();
    assert_eq!(right.code, "0A000");
    assert!(right.message.contains("RIGHT JOIN") && !right.message.contains("On("), "{}", right.message);
}
