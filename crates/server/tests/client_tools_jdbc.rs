//! The client-tools suite's JDBC member: pgjdbc's `DatabaseMetaData`
//! (Debian's `libpostgresql-jdbc-java`, `TURNSTILE_PGJDBC_JAR`) driven by
//! `tests/jdbc/Metadata.java` against `turnstile serve` under both
//! profiles and against a fresh PostgreSQL 15 cluster in the same run.
//! The probe creates the same tables on each (primary keys, unique and
//! secondary indexes, NOT NULL, defaults, a foreign key, a serial column,
//! a range-partitioned table) and prints what `getSchemas`, `getTables`,
//! `getColumns`, `getPrimaryKeys`, `getIndexInfo`,
//! `getImportedKeys`/`getExportedKeys`, a join's `ResultSetMetaData` and
//! `getGeneratedKeys` answer; every line must equal PostgreSQL's.
//!
//! The one normalisation: `getIndexInfo`'s `CARDINALITY` and `PAGES`,
//! which are the planner's statistics (`pg_class.reltuples`/`relpages`)
//! and not about the user's objects. Nothing the probe prints is an OID.
//!
//! The probe is compiled with `javac` into this test's directory under
//! `target/`. Without a JDK or the jar the test skips, loudly, or fails
//! where tools are required (`common::missing_tool`;
//! `scripts/install-test-tools` installs both).

mod common;

use common::pg15::Pg15;
use common::TestServer;
use std::path::{Path, PathBuf};
use std::process::Command;
use turnstile_sync::config::Profile;

/// How to get the JDK and pgjdbc.
const INSTALL: &str = "apt-get install libpostgresql-jdbc-java default-jdk-headless, or run scripts/test";

/// Columns whose values are statistics, not the user's objects.
const STATISTICS: &[&str] = &["CARDINALITY", "PAGES"];

/// The pgjdbc jar: `TURNSTILE_PGJDBC_JAR`, or Debian's path.
fn pgjdbc_jar() -> PathBuf {
    std::env::var_os("TURNSTILE_PGJDBC_JAR")
        .map_or_else(|| PathBuf::from("/usr/share/java/postgresql.jar"), PathBuf::from)
}

fn runs(program: &str) -> bool {
    Command::new(program).arg("-version").output().is_ok_and(|o| o.status.success())
}

/// The probe compiled into this test's directory, or `None` (after
/// [`common::missing_tool`]) without a JDK or the jar.
fn compile_probe() -> Option<PathBuf> {
    let jar = pgjdbc_jar();
    if !jar.exists() {
        common::missing_tool(&format!("pgjdbc ({} is missing)", jar.display()), INSTALL);
        return None;
    }
    for tool in ["javac", "java"] {
        if !runs(tool) {
            common::missing_tool(&format!("`{tool}` is not on PATH"), INSTALL);
            return None;
        }
    }
    let classes = Path::new(env!("CARGO_TARGET_TMPDIR")).join("client_tools_jdbc");
    std::fs::create_dir_all(&classes).expect("create the probe's class directory");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/jdbc/Metadata.java");
    let out = Command::new("javac").arg("-d").arg(&classes).arg(&source).output().expect("run javac");
    assert!(out.status.success(), "javac {} failed: {}", source.display(), String::from_utf8_lossy(&out.stderr));
    Some(classes)
}

/// The probe's output against `127.0.0.1:port` (panics with its stderr
/// when a call fails).
fn probe(classes: &Path, port: u16, name: &str) -> String {
    let mut cp = pgjdbc_jar().into_os_string();
    cp.push(":");
    cp.push(classes);
    let out = Command::new("java")
        .arg("-cp")
        .arg(cp)
        .args(["-Duser.timezone=UTC", "Metadata", "127.0.0.1", &port.to_string()])
        .output()
        .expect("run java");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "the pgjdbc probe failed against {name}:\n{}\n(after printing:\n{stdout})",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The probe's lines with the [`STATISTICS`] columns blanked: each
/// section is `== title`, a `|`-separated header, then its rows.
fn normalise(out: &str) -> Vec<String> {
    let mut masked: Vec<usize> = Vec::new();
    let mut header_next = false;
    let mut lines = Vec::new();
    for line in out.lines() {
        if line.starts_with("== ") {
            header_next = true;
            lines.push(line.to_owned());
            continue;
        }
        let mut fields: Vec<&str> = line.split('|').collect();
        if header_next {
            header_next = false;
            masked = (0..fields.len()).filter(|&i| STATISTICS.contains(&fields[i])).collect();
        } else {
            for &i in &masked {
                if let Some(f) = fields.get_mut(i) {
                    *f = "<statistic>";
                }
            }
        }
        lines.push(fields.join("|"));
    }
    lines
}

/// The probe's lines by section: (`== title`, the lines under it).
fn sections(lines: &[String]) -> Vec<(&str, &[String])> {
    let starts: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].starts_with("== ")).collect();
    let ends = starts.iter().skip(1).copied().chain(std::iter::once(lines.len()));
    starts.iter().zip(ends).map(|(&s, e)| (lines[s].as_str(), &lines[s + 1..e])).collect()
}

/// Each section whose lines differ (or that one side lacks), with both
/// sides' lines.
fn differences(want: &[String], got: &[String], name: &str) -> Vec<String> {
    let (want, got) = (sections(want), sections(got));
    let mut bad = Vec::new();
    for (title, w) in &want {
        match got.iter().find(|(t, _)| t == title) {
            None => bad.push(format!("{name}: {title}: missing")),
            Some((_, g)) if g != w => bad.push(format!(
                "{name}: {title}:\n  got:  {}\n  want: {}",
                g.join("\n        "),
                w.join("\n        ")
            )),
            Some(_) => {}
        }
    }
    for (title, _) in got.iter().filter(|(t, _)| !want.iter().any(|(w, _)| w == t)) {
        bad.push(format!("{name}: {title}: not in PostgreSQL's answers"));
    }
    bad
}

#[test]
fn database_metadata_answers_as_postgresql_15() {
    let Some(classes) = compile_probe() else { return };
    let Some(pg) = Pg15::start() else { return };
    let want = normalise(&probe(&classes, pg.port, "PostgreSQL 15"));
    // The reference must hold what the probe is about, or the comparison
    // would check nothing.
    let joined = want.join("\n");
    for needle in [
        "|public|j_parent|id|4|int4|10|",
        "|public|j_child|cid|1|j_child_pkey",
        "j_parent_name_qty_idx|3|2|qty|A|",
        "|public|j_parent|id|<null>|public|j_child|parent_id|1|",
        "|public|j_auto_id_seq|SEQUENCE|",
        "== getGeneratedKeys(id) three",
    ] {
        assert!(joined.contains(needle), "PostgreSQL 15's answers lack {needle:?}:\n{joined}");
    }
    let mut bad = Vec::new();
    for profile in [Profile::Classic, Profile::Scalable] {
        let srv = TestServer::start(profile, &[]);
        let name = format!("turnstile ({profile:?})");
        bad.extend(differences(&want, &normalise(&probe(&classes, srv.port, &name)), &name));
    }
    assert!(bad.is_empty(), "pgjdbc's DatabaseMetaData differs from PostgreSQL 15's:\n{}", bad.join("\n"));
}

#[test]
fn normalisation_blanks_only_statistics() {
    let out = "== getIndexInfo t\nINDEX_NAME|CARDINALITY|PAGES|COLUMN_NAME\nt_pkey|0|1|id\n== rows\nid|PAGES2\n1|7\n";
    assert_eq!(
        normalise(out),
        [
            "== getIndexInfo t",
            "INDEX_NAME|CARDINALITY|PAGES|COLUMN_NAME",
            "t_pkey|<statistic>|<statistic>|id",
            "== rows",
            "id|PAGES2",
            "1|7"
        ]
    );
    let want = vec!["== a".to_owned(), "x".to_owned()];
    assert!(differences(&want, &want, "t").is_empty());
    assert_eq!(differences(&want, &["== a".to_owned()], "t"), ["t: == a:\n  got:  \n  want: x"]);
    assert_eq!(differences(&want, &[], "t"), ["t: == a: missing"]);
}
