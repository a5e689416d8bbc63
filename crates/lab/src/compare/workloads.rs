//! The workloads as PostgreSQL sees them: setup SQL and pgbench
//! scripts. The fixed files live in the repository's `workloads/`
//! directory and are compiled in; W2's star schema and W3's index sets
//! depend on their parameter and are generated here (`turnstile compare
//! --write-workloads DIR` writes every file, and a test keeps the
//! committed copies equal to what this code generates).
//!
//! Nothing here needs PL/pgSQL: every statement is plain SQL that
//! `turnstile serve` parses as well.

use serde_json::{json, Map, Value as Json};
use std::fmt::Write as _;
use std::path::Path;

/// W1's pgbench script (Vondra 2024).
pub const W1_SCRIPT: &str = include_str!("../../../../workloads/w1.sql");
/// W1's setup after `pgbench -i`.
pub const W1_SETUP: &str = include_str!("../../../../workloads/w1_setup.sql");
/// W3's pgbench script (Geier 2022).
pub const W3_SCRIPT: &str = include_str!("../../../../workloads/w3.sql");
/// W4's table (Freund 2020).
pub const W4_SETUP: &str = include_str!("../../../../workloads/w4_setup.sql");
/// W4's pgbench script: one server-side COPY of the rows file (`-D rows_file='…'`).
pub const W4_SCRIPT: &str = include_str!("../../../../workloads/w4_copy.sql");
/// The protocol floor: `SELECT 1`.
pub const FLOOR_SCRIPT: &str = include_str!("../../../../workloads/floor.sql");

/// W1's query for the lock census, `$1` for the looked-up `aid_parent`.
pub const W1_QUERY: &str =
    "SELECT * FROM pgbench_accounts pa JOIN pgbench_branches pb ON (pa.bid = pb.bid) WHERE pa.aid_parent = $1";
/// W3's query for the lock census.
pub const W3_QUERY: &str = "SELECT * FROM synth_table WHERE col5 = $1";
/// W4's target table.
pub const W4_TABLE: &str = "copy_unlogged";

/// The workloads compare runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum)]
#[value(rename_all = "UPPER")]
pub enum Workload {
    /// Partitioned join (Vondra 2024).
    W1,
    /// Star join (Vondra 2024).
    W2,
    /// Many indexes (Geier 2022).
    W3,
    /// COPY into one unlogged table (Freund 2020).
    W4,
    /// `pgbench -S` (Haas 2011).
    W5,
}

impl Workload {
    /// `W1` …
    pub fn name(self) -> &'static str {
        match self {
            Workload::W1 => "W1",
            Workload::W2 => "W2",
            Workload::W3 => "W3",
            Workload::W4 => "W4",
            Workload::W5 => "W5",
        }
    }

    /// A title for reports.
    pub fn title(self) -> &'static str {
        match self {
            Workload::W1 => "W1 partitioned join (Vondra 2024): pgbench_accounts by aid_parent JOIN pgbench_branches",
            Workload::W2 => "W2 star join (Vondra 2024): one fact row JOIN every dimension",
            Workload::W3 => "W3 many indexes (Geier 2022): SELECT * FROM synth_table WHERE col5 = 42",
            Workload::W4 => "W4 relation extension (Freund 2020): COPY into one unlogged table",
            Workload::W5 => "W5 select-only (Haas 2011): pgbench -S -M prepared",
        }
    }
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

/// Data-set sizes.
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    /// W1 and W5: pgbench scale (100 000 accounts per unit).
    pub scale: u32,
    /// W2: fact rows.
    pub fact_rows: u32,
    /// W2: rows per dimension.
    pub dim_rows: u32,
    /// W4: rows per COPY.
    pub copy_rows: u32,
}

impl Sizes {
    /// The write-ups' sizes.
    pub const DEFAULT: Sizes = Sizes { scale: 10, fact_rows: 100_000, dim_rows: 100, copy_rows: 10_000 };
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
    pub workload: Workload,
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
pub fn variants(workload: Workload, lists: &Lists, sizes: Sizes, scripts: &Path) -> Vec<Variant> {
    let scale = sizes.scale.to_string();
    let file = |name: &str| scripts.join(name).display().to_string();
    match workload {
        Workload::W1 => lists
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
                    setup: vec![Step::PgbenchInit(init), Step::Sql(W1_SETUP.to_owned())],
                    script: Some(("w1.sql".into(), W1_SCRIPT.into())),
                    pgbench_args: vec!["-s".into(), scale.clone(), "-f".into(), file("w1.sql")],
                    query: Some(W1_QUERY.into()),
                    modes: lists.modes.clone(),
                }
            })
            .collect(),
        Workload::W2 => lists
            .dimensions
            .iter()
            .map(|&n| {
                let name = format!("w2_n{n}.sql");
                Variant {
                    workload,
                    params: obj(json!({ "dimensions": n })),
                    db: format!("w2_n{n}"),
                    setup: vec![Step::Sql(w2_setup(n, sizes))],
                    script: Some((name.clone(), w2_script(n, sizes))),
                    pgbench_args: vec!["-f".into(), file(&name)],
                    query: Some(w2_query(n, "$1")),
                    modes: lists.modes.clone(),
                }
            })
            .collect(),
        Workload::W3 => lists
            .indexes
            .iter()
            .map(|&k| Variant {
                workload,
                params: obj(json!({ "indexes": k })),
                db: format!("w3_i{k}"),
                setup: vec![Step::Sql(w3_setup(k))],
                script: Some(("w3.sql".into(), W3_SCRIPT.into())),
                pgbench_args: vec!["-f".into(), file("w3.sql")],
                query: Some(W3_QUERY.into()),
                modes: lists.modes.clone(),
            })
            .collect(),
        Workload::W4 => vec![Variant {
            workload,
            params: obj(json!({ "table": "unlogged", "rows_per_copy": sizes.copy_rows })),
            db: "w4".into(),
            setup: vec![Step::Sql(W4_SETUP.to_owned())],
            script: Some(("w4_copy.sql".into(), W4_SCRIPT.into())),
            pgbench_args: vec![
                "-f".into(),
                file("w4_copy.sql"),
                "-D".into(),
                format!("rows_file='{}'", file(ROWS_FILE)),
            ],
            query: None,
            modes: vec![Mode::Simple],
        }],
        Workload::W5 => vec![Variant {
            workload,
            params: obj(json!({ "scale": sizes.scale })),
            db: "w5".into(),
            setup: vec![Step::PgbenchInit(vec!["-s".into(), scale])],
            script: None,
            pgbench_args: vec!["-S".into()],
            query: None,
            modes: vec![Mode::Prepared],
        }],
    }
}

fn obj(v: Json) -> Map<String, Json> {
    match v {
        Json::Object(m) => m,
        _ => Map::new(),
    }
}

/// W4's rows file (server-side COPY source), under the scripts directory.
pub const ROWS_FILE: &str = "w4_rows.txt";

/// W2's setup for `n` dimensions: `dim1..dimN (id int PRIMARY KEY, val
/// text)` of `dim_rows` rows, and `fact_nN (id int PRIMARY KEY, d1..dN
/// int)` of `fact_rows` rows whose keys spread deterministically over the
/// dimensions, then `VACUUM ANALYZE`.
pub fn w2_setup(n: u32, sizes: Sizes) -> String {
    let mut s = String::new();
    for k in 1..=n {
        let _ = writeln!(s, "CREATE TABLE dim{k} (id int PRIMARY KEY, val text);");
        let _ = writeln!(s, "INSERT INTO dim{k} SELECT i, md5(i::text) FROM generate_series(1, {}) i;", sizes.dim_rows);
    }
    let cols: Vec<String> = (1..=n).map(|g| format!("d{g} int")).collect();
    let _ = writeln!(s, "CREATE TABLE fact_n{n} (id int PRIMARY KEY, {});", cols.join(", "));
    let keys: Vec<String> = (1..=n).map(|g| format!("1 + (i * {} + {g}) % {}", 2 * g + 1, sizes.dim_rows)).collect();
    let _ = writeln!(
        s,
        "INSERT INTO fact_n{n} SELECT i, {} FROM generate_series(1, {}) i;",
        keys.join(", "),
        sizes.fact_rows
    );
    s.push_str("VACUUM ANALYZE;\n");
    s
}

/// W2's query: the fact row `id = param` joined with every dimension.
pub fn w2_query(n: u32, param: &str) -> String {
    let mut q = format!("SELECT * FROM fact_n{n} f");
    for k in 1..=n {
        let _ = write!(q, " JOIN dim{k} d{k} ON (d{k}.id = f.d{k})");
    }
    let _ = write!(q, " WHERE f.id = {param}");
    q
}

/// W2's pgbench script.
pub fn w2_script(n: u32, sizes: Sizes) -> String {
    format!("\\set id random(1, {})\n{};\n", sizes.fact_rows, w2_query(n, ":id"))
}

/// W3's setup: `synth_table (col1 int, …, col60 int)` and `k` indexes
/// (`k = 1`: on col5 only; otherwise col1..colK). The table stays empty
/// and is never analyzed, so the planner uses its 10-page guess and picks
/// an index scan on col5, as in the write-up.
pub fn w3_setup(k: u32) -> String {
    let cols: Vec<String> = (1..=60).map(|c| format!("col{c} int")).collect();
    let mut s = format!("CREATE TABLE synth_table ({});\n", cols.join(", "));
    if k == 1 {
        s.push_str("CREATE INDEX ON synth_table (col5);\n");
    } else {
        for c in 1..=k {
            let _ = writeln!(s, "CREATE INDEX ON synth_table (col{c});");
        }
    }
    s
}

/// W4's rows: `rows` lines of about 90 bytes of text, as the write-up's
/// `repeat(random()::text, 5)`, from a fixed seed.
pub fn w4_rows(rows: u32) -> String {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut out = String::with_capacity(rows as usize * 92);
    for _ in 0..rows {
        // xorshift64*: a fixed, dependency-free sequence.
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        let r = x.wrapping_mul(0x2545_f491_4f6c_dd1d) % 10u64.pow(17);
        let piece = format!("0.{r:017}");
        for _ in 0..5 {
            out.push_str(&piece);
        }
        out.push('\n');
    }
    out
}

/// Every file of the repository's `workloads/` directory, with the
/// default parameter lists: `(name, contents)`.
pub fn repository_files() -> Vec<(String, String)> {
    let sizes = Sizes::DEFAULT;
    let mut files: Vec<(String, String)> = vec![
        ("w1.sql".into(), W1_SCRIPT.into()),
        ("w1_setup.sql".into(), W1_SETUP.into()),
        ("w3.sql".into(), W3_SCRIPT.into()),
        ("w4_setup.sql".into(), W4_SETUP.into()),
        ("w4_copy.sql".into(), W4_SCRIPT.into()),
        ("floor.sql".into(), FLOOR_SCRIPT.into()),
    ];
    for n in [1, 10, 100] {
        files.push((format!("w2_setup_n{n}.sql"), w2_setup(n, sizes)));
        files.push((format!("w2_n{n}.sql"), w2_script(n, sizes)));
    }
    for k in [1, 10, 60] {
        files.push((format!("w3_setup_i{k}.sql"), w3_setup(k)));
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let q = w2_query(3, "$1");
        assert_eq!(
            q,
            "SELECT * FROM fact_n3 f JOIN dim1 d1 ON (d1.id = f.d1) JOIN dim2 d2 ON (d2.id = f.d2) \
             JOIN dim3 d3 ON (d3.id = f.d3) WHERE f.id = $1"
        );
        assert!(w3_setup(1).contains("(col5)"));
        assert_eq!(w3_setup(60).matches("CREATE INDEX").count(), 60);
        let rows = w4_rows(100);
        assert_eq!(rows.lines().count(), 100);
        assert!(rows.lines().all(|l| l.len() == 95), "{}", rows.lines().next().unwrap_or(""));
    }
}
