//! The client-tools suite: PostgreSQL 15's own psql describe commands run
//! against turnstile (both profiles) and against a fresh PostgreSQL 15
//! cluster started beside it, after the same setup, and must print the
//! same thing, after a narrow normalisation that leaves out what is not
//! about the user's objects (owners, encodings and locales, sizes, the
//! `(N rows)` footers and the `Access method:` line, and in `\dx` the
//! `plpgsql` row that `initdb` installs). Everything else — names, types,
//! nullability, defaults, index definitions, PRIMARY KEY and UNIQUE
//! CONSTRAINT lines, partition keys and partition lists, storage, roles'
//! attributes, the template databases and their privileges — is compared.
//! PostgreSQL's output is recorded in the same run, so an expectation
//! PostgreSQL does not meet cannot exist. The maintenance tools
//! (`vacuumdb`, `reindexdb`, `createdb -T template0 -E UTF8`) run against
//! both as well, and so do pg_dump and pg_restore: `pg_dump -Fp | psql`,
//! `pg_dump -Fc` + `pg_restore`, and PostgreSQL 15's own plain dump
//! loaded, each into a fresh database whose describe output must equal
//! the source's on PostgreSQL 15 and whose rows must equal the source
//! database's.
//!
//! The tools are PostgreSQL 15's (`TURNSTILE_PG15_BIN`, default
//! `/usr/lib/postgresql/15/bin`); without them the tests skip, loudly, or
//! fail where tools are required (`common::missing_tool`).

mod common;

use common::pg15::{pg15_bin, Pg15};
use common::TestServer;
use std::path::PathBuf;
use std::process::Command;
use turnstile_sync::config::Profile;

/// psql's record separator here, so that a multi-line cell (`\l`'s access
/// privileges) stays one record.
const RS: &str = "\x1e";

/// The setup both servers get: a table of every basic type with a primary
/// key, a UNIQUE column, NOT NULL and defaults, a secondary index, a
/// pgbench-like table, and a table partitioned by range into three.
const SETUP: &str = "
CREATE TABLE things (
  id int4 PRIMARY KEY,
  code varchar(20) NOT NULL UNIQUE,
  qty int8 NOT NULL DEFAULT 0,
  name text DEFAULT 'unnamed',
  price numeric(10,2) DEFAULT 9.99,
  active bool NOT NULL DEFAULT true,
  added date,
  seen timestamptz,
  blob bytea
);
CREATE INDEX things_added_idx ON things (added);
CREATE TABLE pgbench_accounts (aid int4 PRIMARY KEY, bid int4, abalance int4 NOT NULL DEFAULT 0, filler char(84));
CREATE TABLE trips (id int8 NOT NULL, thing_id int4, note text, PRIMARY KEY (id)) PARTITION BY RANGE (id);
CREATE TABLE trips_1 PARTITION OF trips FOR VALUES FROM (MINVALUE) TO (100);
CREATE TABLE trips_2 PARTITION OF trips FOR VALUES FROM (100) TO (200);
CREATE TABLE trips_3 PARTITION OF trips FOR VALUES FROM (200) TO (MAXVALUE);
INSERT INTO things VALUES (1, 'A-1', 5, 'first', 12.50, true, '2024-02-29', '2024-01-02 03:04:05.123+00', '\\x00ff27');
INSERT INTO things (id, code) VALUES (2, 'B-2');
INSERT INTO pgbench_accounts VALUES (1, 1, 0, ''), (2, 1, -50, 'x'), (3, NULL, 7, NULL);
INSERT INTO trips VALUES (5, 1, 'a'), (150, 2, NULL), (250, 3, 'c'), (99, NULL, 'd');
";

/// The describe commands compared.
const DESCRIBE: &[&str] = &[
    r"\dt",
    r"\d things",
    r"\d+ things",
    r"\d pgbench_accounts",
    r"\di",
    r"\dn",
    r"\du",
    r"\l",
    r"\d trips",
    r"\d+ trips",
    r"\d trips_2",
    r"\dx",
    r"\ds",
];

/// Columns left out: not about the user's objects.
const DROP_COLUMNS: &[&str] =
    &["Owner", "Collation", "Encoding", "Collate", "Ctype", "ICU Locale", "Locale Provider", "Size"];

/// A server psql can reach: its unix socket directory and port.
struct Target {
    name: String,
    socket_dir: PathBuf,
    port: u16,
}

impl Target {
    /// PostgreSQL 15's psql, `-X -A` with [`RS`] between records, one
    /// command; (success, stdout, stderr).
    fn psql(&self, db: &str, args: &[&str]) -> (bool, String, String) {
        let out = Command::new(pg15_bin().join("psql"))
            .args(["-X", "-A", "-P"])
            .arg(format!("recordsep={RS}"))
            .arg("-h")
            .arg(&self.socket_dir)
            .args(["-p", &self.port.to_string(), "-U", "postgres", "-d", db])
            .args(args)
            .env_remove("PGTZ")
            .output()
            .expect("run psql");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.success() && !err.contains("ERROR"), String::from_utf8_lossy(&out.stdout).into_owned(), err)
    }

    /// Runs the setup script (stopping at the first error).
    fn setup(&self) {
        let (ok, _, err) = self.psql("postgres", &["-q", "-v", "ON_ERROR_STOP=1", "-c", SETUP]);
        assert!(ok, "setup failed on {}: {err}", self.name);
    }
}

/// psql's `-A` output of a describe command without what is not about the
/// user's objects (see the module header).
fn normalise(cmd: &str, out: &str) -> Vec<String> {
    let mut res = Vec::new();
    let mut head: Option<Vec<&str>> = None;
    let mut keep: Vec<usize> = Vec::new();
    for (i, rec) in out.trim_end_matches('\n').split(RS).enumerate() {
        if i == 0 && !rec.contains('|') {
            res.push(rec.to_owned()); // the title
            continue;
        }
        let Some(h) = &head else {
            let h: Vec<&str> = rec.split('|').collect();
            keep = (0..h.len()).filter(|&j| !DROP_COLUMNS.contains(&h[j])).collect();
            res.push(keep.iter().map(|&j| h[j]).collect::<Vec<_>>().join("|"));
            head = Some(h);
            continue;
        };
        let f: Vec<&str> = rec.split('|').collect();
        if f.len() == h.len() {
            if cmd == r"\dx" && f[0] == "plpgsql" {
                continue;
            }
            res.push(keep.iter().map(|&j| f[j]).collect::<Vec<_>>().join("|"));
        } else if !is_row_count(rec) && !rec.starts_with("Access method: ") {
            res.push(rec.to_owned());
        }
    }
    res.into_iter().map(|r| r.lines().map(str::trim_end).collect::<Vec<_>>().join("\n")).collect()
}

/// `(N rows)` / `(1 row)`.
fn is_row_count(rec: &str) -> bool {
    rec.strip_prefix('(')
        .and_then(|r| r.strip_suffix(" rows)").or_else(|| r.strip_suffix(" row)")))
        .is_some_and(|n| n.parse::<u64>().is_ok())
}

/// Each describe command's normalised output, or its error.
fn describe_all(t: &Target, db: &str, cmds: &[&str]) -> Vec<Result<Vec<String>, String>> {
    cmds.iter()
        .map(|cmd| {
            let (ok, out, err) = t.psql(db, &["-c", cmd]);
            if ok {
                Ok(normalise(cmd, &out))
            } else {
                Err(err)
            }
        })
        .collect()
}

/// The first difference between two normalised outputs.
fn first_difference(want: &[String], got: &[String]) -> Option<String> {
    if let Some(i) = want.iter().zip(got).position(|(w, g)| w != g) {
        return Some(format!("line {}: got {:?}, want {:?}", i + 1, got[i], want[i]));
    }
    match got.len().cmp(&want.len()) {
        std::cmp::Ordering::Greater => Some(format!("extra line {}: {:?}", want.len() + 1, got[want.len()])),
        std::cmp::Ordering::Less => Some(format!("missing line {}: {:?}", got.len() + 1, want[got.len()])),
        std::cmp::Ordering::Equal => None,
    }
}

/// The reference: PostgreSQL 15 after the setup, and what it prints.
fn reference() -> Option<(Pg15, Vec<Vec<String>>)> {
    if !pg15_bin().join("psql").exists() {
        common::missing_tool("PostgreSQL 15's psql", "apt-get install postgresql-client-15");
        return None;
    }
    let pg = Pg15::start()?;
    let t = Target { name: "PostgreSQL 15".into(), socket_dir: pg.socket_dir.clone(), port: pg.port };
    t.setup();
    let want = describe_all(&t, "postgres", DESCRIBE)
        .into_iter()
        .zip(DESCRIBE)
        .map(|(r, cmd)| r.unwrap_or_else(|e| panic!("{cmd} failed on PostgreSQL 15 (a bug of this test): {e}")))
        .collect();
    Some((pg, want))
}

fn turnstile(profile: Profile) -> (TestServer, Target) {
    let srv = TestServer::start(profile, &[]);
    let t = Target { name: format!("turnstile ({profile:?})"), socket_dir: srv.socket_dir.clone(), port: srv.port };
    t.setup();
    (srv, t)
}

#[test]
fn describe_commands_print_what_postgresql_15_prints() {
    let Some((_pg, want)) = reference() else { return };
    // The normalisation leaves the user's objects: a reference that lost
    // them would compare nothing.
    let joined = want.iter().flatten().cloned().collect::<Vec<_>>().join("\n");
    for needle in ["things_code_key", "UNIQUE CONSTRAINT", "Partition key: RANGE (id)", "template0", "=c/postgres"] {
        assert!(joined.contains(needle), "PostgreSQL 15's describe output lacks {needle:?}:\n{joined}");
    }
    let mut failures = Vec::new();
    for profile in [Profile::Classic, Profile::Scalable] {
        let (_srv, t) = turnstile(profile);
        for ((cmd, w), got) in DESCRIBE.iter().zip(&want).zip(describe_all(&t, "postgres", DESCRIBE)) {
            match got {
                Err(e) => failures.push(format!("{}: {cmd}: {e}", t.name)),
                Ok(g) => {
                    if let Some(d) = first_difference(w, &g) {
                        failures.push(format!("{}: {cmd}: {d}", t.name));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "describe output differs from PostgreSQL 15's:\n{}", failures.join("\n"));
}

impl Target {
    /// One of PostgreSQL 15's client programs against this server, with
    /// `args` after the connection options; (success, stderr).
    fn tool(&self, program: &str, args: &[&str]) -> (bool, String) {
        let out = Command::new(pg15_bin().join(program))
            .arg("-h")
            .arg(&self.socket_dir)
            .args(["-p", &self.port.to_string(), "-U", "postgres"])
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("run {program}: {e}"));
        (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// vacuumdb, reindexdb and `createdb -T template0 -E UTF8` (what a dump's
/// restore starts with) succeed against turnstile as against PostgreSQL
/// 15, and the new database is UTF8 on both.
#[test]
fn maintenance_tools_run_as_against_postgresql_15() {
    let Some((pg, _)) = reference() else { return };
    let reference = Target { name: "PostgreSQL 15".into(), socket_dir: pg.socket_dir.clone(), port: pg.port };
    let servers: Vec<(TestServer, Target)> = [Profile::Classic, Profile::Scalable].into_iter().map(turnstile).collect();
    let check =
        "SELECT current_database(), pg_encoding_to_char(encoding) FROM pg_database WHERE datname = current_database()";
    for t in std::iter::once(&reference).chain(servers.iter().map(|s| &s.1)) {
        for (program, args) in [
            ("vacuumdb", &["-d", "postgres"][..]),
            ("reindexdb", &["-d", "postgres"][..]),
            ("createdb", &["-T", "template0", "-E", "UTF8", "made_by_createdb"][..]),
        ] {
            let (ok, err) = t.tool(program, args);
            assert!(ok, "{program} {args:?} failed against {}: {err}", t.name);
        }
        let (ok, out, err) = t.psql("made_by_createdb", &["-t", "-c", check]);
        assert!(ok, "{}: {err}", t.name);
        assert_eq!(out.trim(), "made_by_createdb|UTF8", "{}", t.name);
    }
}

/// The describe commands compared after a restore.
const RESTORED: &[&str] =
    &[r"\dt", r"\di", r"\d things", r"\d+ things", r"\d pgbench_accounts", r"\d trips", r"\d+ trips", r"\d trips_2"];

/// The tables whose rows a restore must reproduce, with their keys.
const TABLES: &[(&str, &str)] = &[
    ("things", "id"),
    ("pgbench_accounts", "aid"),
    ("trips", "id"),
    ("trips_1", "id"),
    ("trips_2", "id"),
    ("trips_3", "id"),
];

impl Target {
    /// Every table's rows (psql `-A`, ORDER BY its key), in [`TABLES`] order.
    fn rows(&self, db: &str) -> Vec<String> {
        TABLES
            .iter()
            .map(|(t, key)| {
                let (ok, out, err) = self.psql(db, &["-c", &format!("SELECT * FROM {t} ORDER BY {key}")]);
                assert!(ok, "{}: reading {t} in {db}: {err}", self.name);
                out
            })
            .collect()
    }

    /// What restoring into the fresh database `db` left, against the
    /// source (PostgreSQL 15's describe output, this server's rows):
    /// the differences, one line each.
    fn compare_restored(&self, db: &str, want: &[Vec<String>], rows: &[String]) -> Vec<String> {
        let mut bad = Vec::new();
        for ((cmd, w), got) in RESTORED.iter().zip(want).zip(describe_all(self, db, RESTORED)) {
            match got {
                Err(e) => bad.push(format!("{}: {db}: {cmd}: {e}", self.name)),
                Ok(g) => bad.extend(first_difference(w, &g).map(|d| format!("{}: {db}: {cmd}: {d}", self.name))),
            }
        }
        for ((t, _), (w, g)) in TABLES.iter().zip(rows.iter().zip(self.rows(db))) {
            if *w != g {
                bad.push(format!("{}: {db}: rows of {t}: got {g:?}, want {w:?}", self.name));
            }
        }
        bad
    }
}

/// `pg_dump -Fp | psql`, `pg_dump -Fc` + `pg_restore`, and PostgreSQL
/// 15's plain dump loaded with `ON_ERROR_STOP`, each into a fresh
/// database, against PostgreSQL 15 and both profiles: the restored
/// database describes as the source does on PostgreSQL 15 and holds the
/// source's rows.
#[test]
fn dump_and_restore_round_trip_as_with_postgresql_15() {
    let Some((pg, _)) = reference() else { return };
    let reference = Target { name: "PostgreSQL 15".into(), socket_dir: pg.socket_dir.clone(), port: pg.port };
    let want: Vec<Vec<String>> = describe_all(&reference, "postgres", RESTORED)
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| panic!("PostgreSQL 15 (a bug of this test): {e}")))
        .collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let pg15_dump = dir.path().join("pg15-plain.sql");
    let (ok, err) = reference.tool("pg_dump", &["-Fp", "-f", path(&pg15_dump), "-d", "postgres"]);
    assert!(ok, "pg_dump of PostgreSQL 15 failed: {err}");
    let servers: Vec<(TestServer, Target)> = [Profile::Classic, Profile::Scalable].into_iter().map(turnstile).collect();
    let mut bad = Vec::new();
    for (k, t) in std::iter::once(&reference).chain(servers.iter().map(|s| &s.1)).enumerate() {
        let rows = t.rows("postgres");
        let (plain, custom) = (dir.path().join(format!("{k}-plain.sql")), dir.path().join(format!("{k}.dump")));
        let steps: [Step<'_>; 3] = [
            (Some(&["-Fp", "-f", path(&plain), "-d", "postgres"]), "psql", &["-f", path(&plain)]),
            (Some(&["-Fc", "-f", path(&custom), "-d", "postgres"]), "pg_restore", &[path(&custom)]),
            (None, "psql", &["-f", path(&pg15_dump)]),
        ];
        for ((dump_args, load, load_args), db) in steps.into_iter().zip(["u_plain", "u_custom", "u_pg15"]) {
            let (ok, err) = t.tool("createdb", &[db]);
            assert!(ok, "{}: createdb {db}: {err}", t.name);
            if let Some(a) = dump_args {
                let (ok, err) = t.tool("pg_dump", a);
                assert!(ok, "{}: pg_dump {a:?}: {err}", t.name);
            }
            let mut args = vec!["-d", db];
            if load == "psql" {
                args.extend(["-X", "-q", "-v", "ON_ERROR_STOP=1"]);
            }
            args.extend(load_args);
            let (ok, err) = t.tool(load, &args);
            if !ok || err.contains("ERROR") || err.contains("error") {
                bad.push(format!("{}: {load} {args:?}: {err}", t.name));
                continue;
            }
            bad.extend(t.compare_restored(db, &want, &rows));
        }
    }
    assert!(bad.is_empty(), "dump and restore differ from PostgreSQL 15's:\n{}", bad.join("\n"));
}

/// One restore: pg_dump's arguments (when this server is dumped), the
/// loader and its arguments.
type Step<'a> = (Option<&'a [&'a str]>, &'a str, &'a [&'a str]);

fn path(p: &std::path::Path) -> &str {
    p.to_str().expect("a UTF-8 temporary path")
}

#[test]
fn normalisation_keeps_the_users_objects() {
    let out = format!("List of relations{RS}Schema|Name|Type|Owner{RS}public|t|table|postgres{RS}(1 row)\n");
    assert_eq!(normalise(r"\dt", &out), ["List of relations", "Schema|Name|Type", "public|t|table"]);
    let dx = format!("List of installed extensions{RS}Name|Version|Schema|Description{RS}plpgsql|1.0|pg_catalog|PL\n");
    assert_eq!(normalise(r"\dx", &dx), ["List of installed extensions", "Name|Version|Schema|Description"]);
    assert!(is_row_count("(12 rows)") && is_row_count("(1 row)") && !is_row_count("(x rows)"));
}
