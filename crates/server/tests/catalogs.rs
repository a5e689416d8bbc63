//! `pg_catalog` and `information_schema` through psql, under both
//! profiles: the relations and catalog functions psql's describe commands,
//! pg_dump and drivers read describe the user's objects as PostgreSQL 15
//! describes the same objects (the expected outputs were taken from
//! PostgreSQL 15 after the same setup; OIDs, which differ, are read back
//! or normalised), and the session statements those tools send (READ ONLY
//! transactions, SET SESSION CHARACTERISTICS, REINDEX) behave as there.

mod common;

use common::{have_tools, TestServer};
use turnstile_sync::config::Profile;

const PROFILES: [Profile; 2] = [Profile::Classic, Profile::Scalable];

const SETUP: &[&str] = &[
    "CREATE TABLE things (id int4 PRIMARY KEY, code varchar(20) NOT NULL UNIQUE, qty int8 NOT NULL DEFAULT 0, \
     name text DEFAULT 'unnamed', price numeric(10,2) DEFAULT 9.99, active bool NOT NULL DEFAULT true, added date, \
     seen timestamptz, blob bytea)",
    "CREATE INDEX things_added_idx ON things (added)",
    "CREATE TABLE trips (id int8 NOT NULL, thing_id int4, note text, PRIMARY KEY (id)) PARTITION BY RANGE (id)",
    "CREATE TABLE trips_1 PARTITION OF trips FOR VALUES FROM (MINVALUE) TO (100)",
    "CREATE TABLE trips_2 PARTITION OF trips FOR VALUES FROM (100) TO (200)",
    "CREATE TABLE trips_3 PARTITION OF trips FOR VALUES FROM (200) TO (MAXVALUE)",
];

fn server(profile: Profile) -> Option<TestServer> {
    if !have_tools(&["psql"]) {
        return None;
    }
    let srv = TestServer::start(profile, &[]);
    srv.psql_ok("postgres", SETUP);
    Some(srv)
}

/// One query's rows, as `psql -A -t` prints them.
fn rows(srv: &TestServer, sql: &str) -> String {
    srv.psql_ok("postgres", &[sql]).trim_end().to_owned()
}

#[test]
fn relations_describe_tables_indexes_and_partitions_as_postgresql() {
    for profile in PROFILES {
        let Some(srv) = server(profile) else { return };
        let classes = "SELECT c.relname, c.relkind, c.relispartition FROM pg_class c \
                       JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' ORDER BY c.relname";
        assert_eq!(
            rows(&srv, classes),
            "things|r|f\nthings_added_idx|i|f\nthings_code_key|i|f\nthings_pkey|i|f\ntrips|p|f\ntrips_1|r|t\n\
             trips_1_pkey|i|t\ntrips_2|r|t\ntrips_2_pkey|i|t\ntrips_3|r|t\ntrips_3_pkey|i|t\ntrips_pkey|I|f",
            "{profile:?}"
        );
        // psql's \d query for a table's columns.
        let columns = "SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), \
                       (SELECT pg_catalog.pg_get_expr(d.adbin, d.adrelid, true) FROM pg_catalog.pg_attrdef d \
                        WHERE d.adrelid = a.attrelid AND d.adnum = a.attnum AND a.atthasdef), a.attnotnull \
                       FROM pg_catalog.pg_attribute a WHERE a.attrelid = 'things'::regclass AND a.attnum > 0 \
                       AND NOT a.attisdropped ORDER BY a.attnum";
        let columns_joined = "SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), \
                              pg_catalog.pg_get_expr(d.adbin, d.adrelid, true), a.attnotnull \
                              FROM pg_catalog.pg_attribute a LEFT JOIN pg_catalog.pg_attrdef d \
                              ON d.adrelid = a.attrelid AND d.adnum = a.attnum \
                              WHERE a.attrelid = 'things'::regclass AND a.attnum > 0 ORDER BY a.attnum";
        let want = "id|integer||t\ncode|character varying(20)||t\nqty|bigint|0|t\nname|text|'unnamed'::text|f\n\
                    price|numeric(10,2)|9.99|f\nactive|boolean|true|t\nadded|date||f\n\
                    seen|timestamp with time zone||f\nblob|bytea||f";
        // The scalar subquery form needs subqueries; the join form does not.
        let got = srv.psql("postgres", &[columns]);
        if got.status.success() {
            assert_eq!(String::from_utf8_lossy(&got.stdout).trim_end(), want, "{profile:?}");
        }
        assert_eq!(rows(&srv, columns_joined), want, "{profile:?}");
        // psql's \d query for a table's indexes.
        let indexes =
            "SELECT c2.relname, i.indisprimary, i.indisunique, pg_catalog.pg_get_indexdef(i.indexrelid, 0, true), \
                       pg_catalog.pg_get_constraintdef(con.oid, true), contype \
                       FROM pg_catalog.pg_class c, pg_catalog.pg_class c2, pg_catalog.pg_index i \
                       LEFT JOIN pg_catalog.pg_constraint con ON (conrelid = i.indrelid AND conindid = i.indexrelid \
                       AND contype IN ('p','u','x')) \
                       WHERE c.oid = 'things'::regclass AND c.oid = i.indrelid AND i.indexrelid = c2.oid \
                       ORDER BY i.indisprimary DESC, c2.relname";
        assert_eq!(
            rows(&srv, indexes),
            "things_pkey|t|t|CREATE UNIQUE INDEX things_pkey ON things USING btree (id)|PRIMARY KEY (id)|p\n\
             things_added_idx|f|f|CREATE INDEX things_added_idx ON things USING btree (added)||\n\
             things_code_key|f|t|CREATE UNIQUE INDEX things_code_key ON things USING btree (code)|UNIQUE (code)|u",
            "{profile:?}"
        );
        // psql's \d+ query for a partitioned table's partitions.
        let partitions = "SELECT c.oid::pg_catalog.regclass, c.relkind, inhdetachpending, \
                          pg_catalog.pg_get_expr(c.relpartbound, c.oid) \
                          FROM pg_catalog.pg_class c, pg_catalog.pg_inherits i \
                          WHERE c.oid = i.inhrelid AND i.inhparent = 'trips'::regclass \
                          ORDER BY c.oid::pg_catalog.regclass::pg_catalog.text";
        assert_eq!(
            rows(&srv, partitions),
            "trips_1|r|f|FOR VALUES FROM (MINVALUE) TO ('100')\ntrips_2|r|f|FOR VALUES FROM ('100') TO ('200')\n\
             trips_3|r|f|FOR VALUES FROM ('200') TO (MAXVALUE)",
            "{profile:?}"
        );
        assert_eq!(rows(&srv, "SELECT pg_catalog.pg_get_partkeydef('trips'::regclass)"), "RANGE (id)");
        // \dx: turnstile has no extensions (PostgreSQL lists plpgsql).
        let dx = srv.psql_ok("postgres", &["\\dx"]);
        assert_eq!(dx.trim(), "", "{profile:?}: {dx}");
    }
}

#[test]
fn information_schema_lists_columns_and_constraints_as_postgresql() {
    for profile in PROFILES {
        let Some(srv) = server(profile) else { return };
        assert_eq!(
            rows(
                &srv,
                "SELECT column_name, data_type, is_nullable, column_default FROM information_schema.columns \
                 WHERE table_schema = 'public' AND table_name = 'things' ORDER BY ordinal_position"
            ),
            "id|integer|NO|\ncode|character varying|NO|\nqty|bigint|NO|0\nname|text|YES|'unnamed'::text\n\
             price|numeric|YES|9.99\nactive|boolean|NO|true\nadded|date|YES|\nseen|timestamp with time zone|YES|\n\
             blob|bytea|YES|",
            "{profile:?}"
        );
        // NOT NULL shows as CHECK constraints named after OIDs: read them
        // back through pg_class to compare.
        let constraints = rows(
            &srv,
            "SELECT constraint_name, table_name, constraint_type FROM information_schema.table_constraints \
             WHERE table_schema = 'public' AND table_name IN ('things', 'trips_2') \
             ORDER BY table_name, constraint_type, constraint_name",
        );
        let things = rows(&srv, "SELECT 'things'::regclass::oid");
        let trips_2 = rows(&srv, "SELECT 'trips_2'::regclass::oid");
        let want = format!(
            "2200_{things}_1_not_null|things|CHECK\n2200_{things}_2_not_null|things|CHECK\n\
             2200_{things}_3_not_null|things|CHECK\n2200_{things}_6_not_null|things|CHECK\n\
             things_pkey|things|PRIMARY KEY\nthings_code_key|things|UNIQUE\n\
             2200_{trips_2}_1_not_null|trips_2|CHECK\ntrips_2_pkey|trips_2|PRIMARY KEY"
        );
        assert_eq!(constraints, want, "{profile:?}");
        assert_eq!(
            rows(
                &srv,
                "SELECT constraint_name, table_name, column_name, ordinal_position \
                 FROM information_schema.key_column_usage WHERE table_schema = 'public' \
                 ORDER BY table_name, constraint_name, ordinal_position"
            ),
            "things_code_key|things|code|1\nthings_pkey|things|id|1\ntrips_pkey|trips|id|1\n\
             trips_1_pkey|trips_1|id|1\ntrips_2_pkey|trips_2|id|1\ntrips_3_pkey|trips_3|id|1",
            "{profile:?}"
        );
    }
}

#[test]
fn catalog_functions_and_regclass_agree_with_the_relations() {
    for profile in PROFILES {
        let Some(srv) = server(profile) else { return };
        let oid = rows(&srv, "SELECT oid FROM pg_class WHERE relname = 'things'");
        assert_eq!(rows(&srv, "SELECT 'things'::regclass::oid"), oid, "{profile:?}");
        assert_eq!(rows(&srv, &format!("SELECT {oid}::regclass, 'public.things'::regclass")), "things|things");
        assert_eq!(rows(&srv, "SELECT 'pg_catalog.pg_class'::regclass::oid, 'pg_class'::regclass"), "1259|pg_class");
        assert_eq!(
            rows(
                &srv,
                "SELECT pg_get_userbyid(10), format_type(1043, 24), format_type(23, NULL), current_schema(), \
                 current_schemas(true), pg_table_is_visible('things'::regclass), pg_encoding_to_char(6), \
                 pg_is_in_recovery(), has_table_privilege('things', 'SELECT'), obj_description(1259, 'pg_class')"
            ),
            "postgres|character varying(20)|integer|public|{pg_catalog,public}|t|UTF8|f|t|"
        );
        // A name[]: pgjdbc's getSchemas reads its first element.
        assert_eq!(
            rows(&srv, "SELECT (current_schemas(true))[1], array_length(current_schemas(false), 1)"),
            "pg_catalog|1"
        );
        let err = srv.psql("postgres", &["SELECT 'nope'::regclass"]);
        assert!(String::from_utf8_lossy(&err.stderr).contains("42P01"), "{profile:?}: {err:?}");
        // Every relation's columns are in pg_attribute, under its OID.
        assert_eq!(
            rows(
                &srv,
                "SELECT count(*) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid \
                 WHERE c.relname = 'pg_class' AND a.attnum > 0"
            ),
            "33"
        );
        assert_eq!(
            rows(&srv, "SELECT typname, typlen, typcategory FROM pg_type WHERE oid IN (23, 1009) ORDER BY oid"),
            "int4|4|N\n_text|-1|A"
        );
    }
}

#[test]
fn read_only_transactions_refuse_writes_and_session_characteristics_stick() {
    for profile in PROFILES {
        let Some(srv) = server(profile) else { return };
        let ins = "INSERT INTO things (id, code) VALUES (100, 'read-only?')";
        for begin in [&["BEGIN READ ONLY"][..], &["BEGIN", "SET TRANSACTION READ ONLY"]] {
            let mut stmts = begin.to_vec();
            stmts.push(ins);
            let out = srv.psql("postgres", &stmts);
            assert!(String::from_utf8_lossy(&out.stderr).contains("25006"), "{profile:?} {begin:?}: {out:?}");
        }
        assert_eq!(rows(&srv, "SELECT count(*) FROM things"), "0");
        assert_eq!(rows(&srv, "SHOW transaction isolation level"), "read committed");
        let out = srv.psql_ok(
            "postgres",
            &[
                "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY",
                "SHOW transaction_isolation",
                "SHOW default_transaction_read_only",
                "BEGIN",
                "SHOW transaction_read_only",
                "COMMIT",
            ],
        );
        assert_eq!(out.trim(), "repeatable read\non\non", "{profile:?}");
        srv.psql_ok(
            "postgres",
            &[ins, "REINDEX TABLE things", "REINDEX INDEX trips_pkey", "REINDEX DATABASE postgres"],
        );
        assert_eq!(rows(&srv, "SELECT code FROM things WHERE id = 100"), "read-only?", "{profile:?}");
        assert_eq!(rows(&srv, "SELECT count(*) FROM things WHERE code = 'read-only?'"), "1", "{profile:?}");
    }
}

/// psql on `srv` with `env` set (`PGTZ`), statements as `-c`s.
fn psql_env(srv: &TestServer, env: &[(&str, &str)], statements: &[&str]) -> String {
    let mut cmd = std::process::Command::new("psql");
    cmd.args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h"]).arg(&srv.socket_dir).args([
        "-p",
        &srv.port.to_string(),
        "-U",
        "postgres",
        "-d",
        "postgres",
    ]);
    for s in statements {
        cmd.args(["-c", s]);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run psql");
    assert!(out.status.success(), "psql {statements:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim_end().to_owned()
}

#[test]
fn time_zone_from_the_startup_packet_and_set_time_zone() {
    for profile in PROFILES {
        let Some(srv) = server(profile) else { return };
        let got = psql_env(
            &srv,
            &[("PGTZ", "Europe/Berlin")],
            &["SHOW TimeZone", "SELECT '2024-07-01 12:00:00+00'::timestamptz::text"],
        );
        assert_eq!(got, "Europe/Berlin\n2024-07-01 14:00:00+02", "{profile:?}");
        let got = psql_env(
            &srv,
            &[],
            &[
                "SET TimeZone = 'America/New_York'",
                "SELECT '2024-01-15 12:00:00+00'::timestamptz::text, '2024-07-01 12:00:00'::timestamptz::text, \
                 '2024-07-01 12:00:00'::timestamptz = '2024-07-01 16:00:00+00'::timestamptz, \
                 '2024-07-01 12:00:00+00'::timestamptz::timestamp",
            ],
        );
        assert_eq!(got, "2024-01-15 07:00:00-05|2024-07-01 12:00:00-04|t|2024-07-01 08:00:00", "{profile:?}");
        let bad = srv.psql("postgres", &["SET TimeZone = 'Nowhere/Atall'"]);
        assert!(String::from_utf8_lossy(&bad.stderr).contains("22023"), "{profile:?}: {bad:?}");
    }
}

#[test]
fn createdb_and_reindexdb_run_against_the_server() {
    if !have_tools(&["psql", "createdb", "reindexdb"]) {
        return;
    }
    let Some(srv) = server(Profile::Classic) else { return };
    let tool = |name: &str, args: &[&str]| {
        let out = std::process::Command::new(name)
            .arg("-h")
            .arg(&srv.socket_dir)
            .args(["-p", &srv.port.to_string(), "-U", "postgres"])
            .args(args)
            .output()
            .expect("run the tool");
        assert!(out.status.success(), "{name} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    tool("createdb", &["-T", "template0", "-E", "UTF8", "u_created"]);
    assert_eq!(
        srv.psql_ok(
            "u_created",
            &["SELECT current_database(), pg_encoding_to_char(encoding) FROM pg_database \
               WHERE datname = current_database()"]
        )
        .trim(),
        "u_created|UTF8"
    );
    tool("reindexdb", &["-d", "postgres"]);
    let refused = srv.psql("postgres", &["CREATE DATABASE u_x TEMPLATE nope"]);
    assert!(String::from_utf8_lossy(&refused.stderr).contains("3D000"), "{refused:?}");
}
