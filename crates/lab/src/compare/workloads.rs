//! The SQL form of the workloads' definitions (`crate::workload`): setup
//! SQL and pgbench scripts, as PostgreSQL and `turnstile serve` see them.
//! Every file is generated from the definitions; `turnstile compare
//! --write-workloads DIR` writes them, the repository's `workloads/`
//! directory holds them for the reader, and a test keeps the committed
//! copies equal to what this code generates.
//!
//! Nothing here needs PL/pgSQL: every statement is plain SQL that
//! `turnstile serve` parses as well.

use crate::workload::{w1, w2, w3, w4, WorkloadId};
use serde_json::{json, Map, Value as Json};
use std::path::Path;

pub use crate::workload::Sizes;
pub use w4::ROWS_FILE;

/// The protocol floor: `SELECT 1`.
pub const FLOOR_SCRIPT: &str = "SELECT 1;\n";

/// W1's query for the lock census, `$1` for the looked-up `aid_parent`.
pub fn w1_query() -> String {
    w1::lookup().sql("$1")
}

/// pgbench's query mode (`-M`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mode {
    /// `-M simple`: planned every time.
    Simple,
    /// `-M prepared`: prepared once, a generic plan after five executions.
    Prepared,
}

impl Mode {
    /// `simple` / `prepared`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Simple => "simple",
            Mode::Prepared => "prepared",
        }
    }

    /// Parses `--mode` values.
    pub fn parse(s: &str) -> Result<Mode, String> {
        match s {
            "simple" => Ok(Mode::Simple),
            "prepared" => Ok(Mode::Prepared),
            other => Err(format!("unknown --mode {other:?}: expected simple or prepared")),
        }
    }
}

/// One step of loading a variant's database.
#[derive(Clone, Debug)]
pub enum Step {
    /// `pgbench -i` with these extra arguments.
    PgbenchInit(Vec<String>),
    /// SQL run by psql, stopping at the first error.
    Sql(String),
}

/// One point of a workload's parameter lists: its own database, how to
/// load it, how pgbench runs it.
#[derive(Clone, Debug)]
pub struct Variant {
    /// The workload.
    pub workload: WorkloadId,
    /// Its parameters (`{"partitions":100}`), without the mode.
    pub params: Map<String, Json>,
    /// The database it lives in.
    pub db: String,
    /// Loading steps, after `CREATE DATABASE`.
    pub setup: Vec<Step>,
    /// The script file (under the scripts directory), or none for a built-in.
    pub script: Option<(String, String)>,
    /// pgbench arguments besides connection, clients, duration and mode.
    pub pgbench_args: Vec<String>,
    /// The query counted in the lock census (`$1` for the parameter).
    pub query: Option<String>,
    /// Query modes it runs in.
    pub modes: Vec<Mode>,
}

impl Variant {
    /// `partitions=100` (the params, as in `turnstile run`).
    pub fn label(&self) -> String {
        let l: Vec<String> = self
            .params
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().map_or(v.to_string(), str::to_owned)))
            .collect();
        if l.is_empty() {
            self.workload.name().to_owned()
        } else {
            l.join(" ")
        }
    }

    /// The params with the mode, as the JSON reports them.
    pub fn params_with(&self, mode: Mode) -> Json {
        let mut p = self.params.clone();
        p.insert("mode".into(), json!(mode.name()));
        Json::Object(p)
    }
}

/// The parameter lists of one compare run.
#[derive(Clone, Debug)]
pub struct Lists {
    /// W1 partition counts.
    pub partitions: Vec<u32>,
    /// W2 dimension counts.
    pub dimensions: Vec<u32>,
    /// W3 index counts.
    pub indexes: Vec<u32>,
    /// W1–W3 query modes.
    pub modes: Vec<Mode>,
}

/// The variants of `workload`.
pub fn variants(workload: WorkloadId, lists: &Lists, sizes: Sizes, scripts: &Path) -> Vec<Variant> {
    let scale = pgbench_scale(sizes).to_string();
    let file = |name: &str| scripts.join(name).display().to_string();
    match workload {
        WorkloadId::W1 => lists
            .partitions
            .iter()
            .map(|&p| {
                let mut init = vec!["-s".to_owned(), scale.clone()];
                if p > 0 {
                    init.extend(["--partitions".to_owned(), p.to_string()]);
                }
                Variant {
                    workload,
                    params: obj(json!({ "partitions": p })),
                    db: format!("w1_p{p}"),
                    setup: vec![Step::PgbenchInit(init), Step::Sql(w1::setup_sql())],
                    script: Some(("w1.sql".into(), w1::script())),
                    pgbench_args: vec!["-s".into(), scale.clone(), "-f".into(), file("w1.sql")],
                    query: Some(w1_query()),
                    modes: lists.modes.clone(),
                }
            })
            .collect(),
        WorkloadId::W2 => lists
            .dimensions
            .iter()
            .map(|&n| {
                let name = format!("w2_n{n}.sql");
                Variant {
                    workload,
                    params: obj(json!({ "dimensions": n })),
                    db: format!("w2_n{n}"),
                    setup: vec![Step::Sql(w2::setup_sql(n, sizes))],
                    script: Some((name.clone(), w2::script(n, sizes))),
                    pgbench_args: vec!["-f".into(), file(&name)],
                    query: Some(w2::lookup(n).sql("$1")),
                    modes: lists.modes.clone(),
                }
            })
            .collect(),
        WorkloadId::W3 => lists
            .indexes
            .iter()
            .map(|&k| Variant {
                workload,
                params: obj(json!({ "indexes": k })),
                db: format!("w3_i{k}"),
                setup: vec![Step::Sql(w3::setup_sql(k))],
                script: Some(("w3.sql".into(), w3::script())),
                pgbench_args: vec!["-f".into(), file("w3.sql")],
                query: Some(w3::lookup().sql("$1")),
                modes: lists.modes.clone(),
            })
            .collect(),
        WorkloadId::W4 => vec![Variant {
            workload,
            params: obj(json!({ "table": "unlogged", "rows_per_copy": sizes.copy_rows })),
            db: "w4".into(),
            setup: vec![Step::Sql(w4::setup_sql())],
            script: Some(("w4_copy.sql".into(), w4::script())),
            pgbench_args: vec![
                "-f".into(),
                file("w4_copy.sql"),
                "-D".into(),
                format!("rows_file='{}'", file(ROWS_FILE)),
            ],
            query: None,
            modes: vec![Mode::Simple],
        }],
        WorkloadId::W5 => vec![Variant {
            workload,
            params: obj(json!({ "scale": pgbench_scale(sizes) })),
            db: "w5".into(),
            setup: vec![Step::PgbenchInit(vec!["-s".into(), scale])],
            script: None,
            // pgbench's built-in `-S` script is `w5::lookup()`.
            pgbench_args: vec!["-S".into()],
            query: None,
            modes: vec![Mode::Prepared],
        }],
        WorkloadId::W6 => Vec::new(),
    }
}

/// pgbench's `-s`: compare's scale is whole.
pub fn pgbench_scale(sizes: Sizes) -> u32 {
    sizes.scale.round().max(1.0) as u32
}

fn obj(v: Json) -> Map<String, Json> {
    match v {
        Json::Object(m) => m,
        _ => Map::new(),
    }
}

/// W4's rows file (server-side COPY source): one row per line.
pub fn w4_rows(rows: u32) -> String {
    w4::rows_file(rows)
}

/// Every file of the repository's `workloads/` directory, with the
/// default parameter lists: `(name, contents)`.
pub fn repository_files() -> Vec<(String, String)> {
    let sizes = Sizes::DEFAULT;
    let mut files: Vec<(String, String)> = vec![
        ("w1.sql".into(), w1::script()),
        ("w1_setup.sql".into(), w1::setup_sql()),
        ("w3.sql".into(), w3::script()),
        ("w4_setup.sql".into(), w4::setup_sql()),
        ("w4_copy.sql".into(), w4::script()),
        ("floor.sql".into(), FLOOR_SCRIPT.into()),
    ];
    for n in [1, 10, 100] {
        files.push((format!("w2_setup_n{n}.sql"), w2::setup_sql(n, sizes)));
        files.push((format!("w2_n{n}.sql"), w2::script(n, sizes)));
    }
    for k in [1, 10, 60] {
        files.push((format!("w3_setup_i{k}.sql"), w3::setup_sql(k)));
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::w5;

    #[test]
    fn the_committed_workload_files_are_what_the_code_generates() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads");
        for (name, text) in repository_files() {
            let committed = std::fs::read_to_string(dir.join(&name)).unwrap_or_else(|e| {
                panic!("workloads/{name}: {e} (regenerate: turnstile compare --write-workloads workloads)")
            });
            assert_eq!(
                committed, text,
                "workloads/{name} differs from the generator: turnstile compare --write-workloads workloads"
            );
        }
    }

    #[test]
    fn w2_joins_every_dimension_and_w3_indexes_the_scanned_column() {
        let q = w2::lookup(3).sql("$1");
        assert_eq!(
            q,
            "SELECT * FROM fact_n3 f JOIN dim1 d1 ON (d1.id = f.d1) JOIN dim2 d2 ON (d2.id = f.d2) \
             JOIN dim3 d3 ON (d3.id = f.d3) WHERE f.id = $1"
        );
        assert!(w3::setup_sql(1).contains("(col5)"));
        assert_eq!(w3::setup_sql(60).matches("CREATE INDEX").count(), 60);
        assert!(w3::setup_sql(2).contains("(col5)"), "every index set has the scanned column's");
        assert_eq!(
            w1_query(),
            "SELECT * FROM pgbench_accounts pa JOIN pgbench_branches pb ON (pa.bid = pb.bid) WHERE pa.aid_parent = $1"
        );
        assert_eq!(
            w5::lookup().sql("$1"),
            "SELECT abalance FROM pgbench_accounts WHERE aid = $1",
            "pgbench -S's query"
        );
        let rows = w4_rows(100);
        assert_eq!(rows.lines().count(), 100);
        assert!(rows.lines().all(|l| l.len() == 95), "{}", rows.lines().next().unwrap_or(""));
    }
}
