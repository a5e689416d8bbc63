//! The client-tools suite's Rust driver: tokio-postgres 0.7 with its
//! default settings (extended query protocol, binary parameters and
//! results, statement preparation with type inference) against turnstile
//! under both profiles and against PostgreSQL 15 started beside it. The
//! same session runs on each server and writes a transcript — typed values
//! read back, row counts, SQLSTATEs — and every transcript must equal
//! PostgreSQL 15's, so that an expectation PostgreSQL does not meet is a
//! bug of this test.

mod common;

use common::pg15::Pg15;
use common::TestServer;
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};
use turnstile_sync::config::Profile;

/// Seconds one session may take on one server.
const SESSION_TIMEOUT_S: u64 = 60;

/// The session: every step appends a line to the transcript.
async fn session(client: &Client) -> Result<Vec<String>, tokio_postgres::Error> {
    let mut out = Vec::new();
    client
        .batch_execute("CREATE TABLE rd (id int4 PRIMARY KEY, big int8, name text, ok bool, x float8, raw bytea)")
        .await?;
    let insert = client.prepare("INSERT INTO rd VALUES ($1, $2, $3, $4, $5, $6)").await?;
    out.push(format!("insert params: {:?}", insert.params().iter().map(|t| t.name()).collect::<Vec<_>>()));
    let n = client.execute(&insert, &[&1i32, &5_000_000_000i64, &"héllo", &true, &1.5f64, &vec![0u8, 255, 39]]).await?;
    out.push(format!("inserted {n}"));
    let none: Option<String> = None;
    client.execute(&insert, &[&2i32, &None::<i64>, &none, &false, &-0.25f64, &Vec::<u8>::new()]).await?;
    for row in client.query("SELECT id, big, name, ok, x, raw FROM rd ORDER BY id", &[]).await? {
        let (id, big, name, ok, x): (i32, Option<i64>, Option<String>, bool, f64) =
            (row.get(0), row.get(1), row.get(2), row.get(3), row.get(4));
        let raw: Vec<u8> = row.get(5);
        out.push(format!("row {id} {big:?} {name:?} {ok} {x} {raw:?}"));
    }
    let tags = vec!["a".to_owned(), "b c".to_owned(), String::new()];
    let arr = client.query_one("SELECT $1::text[] AS tags, ARRAY[1, 2]::int4[] AS ns", &[&tags]).await?;
    out.push(format!("arrays {:?} {:?}", arr.get::<_, Vec<String>>(0), arr.get::<_, Vec<i32>>(1)));
    let one = client.query_one("SELECT $1::int8 + 1 AS next, $2::text || '!' AS shout", &[&41i64, &"hi"]).await?;
    out.push(format!("typed {} {}", one.get::<_, i64>("next"), one.get::<_, String>("shout")));
    let dup = client.execute(&insert, &[&1i32, &0i64, &"x", &true, &0.0f64, &Vec::<u8>::new()]).await;
    out.push(format!("duplicate: {:?}", dup.err().and_then(|e| e.code().map(|c| c.code().to_owned()))));
    let cat = client
        .query(
            "SELECT c.relname, c.relkind::text FROM pg_class c WHERE c.relname = ANY($1) ORDER BY 1",
            &[&vec!["rd", "rd_pkey", "nope"]],
        )
        .await?;
    out.push(format!(
        "catalog {:?}",
        cat.iter().map(|r| (r.get::<_, String>(0), r.get::<_, String>(1))).collect::<Vec<_>>()
    ));
    client.batch_execute("BEGIN; UPDATE rd SET name = 'gone' WHERE id = 1; ROLLBACK").await?;
    let name: String = client.query_one("SELECT name FROM rd WHERE id = $1", &[&1i32]).await?.get(0);
    out.push(format!("after rollback {name}"));
    for m in client.simple_query("SELECT count(*) FROM rd; SELECT 'simple'").await? {
        if let SimpleQueryMessage::Row(r) = m {
            out.push(format!("simple {:?}", r.get(0)));
        }
    }
    Ok(out)
}

/// Runs [`session`] against `host:port` (database `postgres`).
fn transcript(name: &str, port: u16) -> Vec<String> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    rt.block_on(async {
        let conf = format!("host=127.0.0.1 port={port} user=postgres dbname=postgres");
        let (client, connection) =
            tokio_postgres::connect(&conf, NoTls).await.unwrap_or_else(|e| panic!("{name}: {e}"));
        let conn = tokio::spawn(connection);
        let run = tokio::time::timeout(std::time::Duration::from_secs(SESSION_TIMEOUT_S), session(&client));
        let out = run.await.unwrap_or_else(|_| panic!("{name}: no answer within {SESSION_TIMEOUT_S} s"));
        drop(client);
        let _ = conn.await;
        out.unwrap_or_else(|e| panic!("{name}: {e}: {:?}", e.as_db_error()))
    })
}

#[test]
fn tokio_postgres_reads_and_writes_as_against_postgresql_15() {
    let Some(pg) = Pg15::start() else { return };
    let want = transcript("PostgreSQL 15", pg.port);
    assert!(want.iter().any(|l| l.starts_with("duplicate: Some(\"23505\")")), "PostgreSQL 15: {want:#?}");
    for profile in [Profile::Classic, Profile::Scalable] {
        let srv = TestServer::start(profile, &[]);
        let got = transcript(&format!("turnstile ({profile:?})"), srv.port);
        assert_eq!(got, want, "turnstile ({profile:?}) differs from PostgreSQL 15");
    }
}
