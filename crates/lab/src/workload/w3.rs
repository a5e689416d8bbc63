//! W3, many indexes (Geier 2022): an empty 60-column table with K
//! single-column indexes, one of them on the scanned `col5`; the query
//! looks up `col5 = 42`, so planning (and, before the prefilter, locking)
//! every index is the cost.

use super::in_process::Setup;
use super::through_pgbench::{params, PgbenchSetup, PgbenchVariant, Step};
use super::{
    ColType, Column, Dataset, Definition, ExtraColumn, ExtraTable, Fill, InProcessForm, Index, Key, Lookup, Mode,
    ModeUse, Modes, Param, PgbenchForm, Sizes, Sweep, Table,
};
use serde_json::{json, Value as Json};

/// W3.
pub const DEFINITION: Definition = Definition {
    name: "W3",
    summary: "Many indexes (Geier 2022).",
    title: "W3 many indexes (Geier 2022): SELECT * FROM synth_table WHERE col5 = 42",
    sweep: Some(INDEXES),
    modes: Modes { in_process: ModeUse::Fixed(Mode::Simple), pgbench: ModeUse::Swept, quick: &[Mode::Simple] },
    min_clients: 1,
    in_process: InProcessForm::Lookup { dataset, params: params_json },
    pgbench: Some(PgbenchForm { variants, repository_files }),
    growth_table: None,
    extra_table: Some(ExtraTable {
        title: "Planning time per query (Geier 2022: 2.48 ms -> 0.062 ms with the prefilter)",
        columns: &[
            ExtraColumn { header: "planning us", pointer: "/planning_us", digits: 1 },
            ExtraColumn { header: "p50 us", pointer: "/latency_us/p50", digits: 0 },
            ExtraColumn { header: "p99 us", pointer: "/latency_us/p99", digits: 0 },
        ],
        note: None,
    }),
};

/// The index counts.
pub const INDEXES: Sweep = Sweep {
    param: Param::Indexes,
    min: 1,
    max: COLUMNS,
    full: &[1, 10, 60],
    quick: &[1, 60],
    pgbench: &[1, 10, 60],
    pgbench_quick: &[10],
    alloc: &[1, 60],
};

/// The table.
pub const TABLE: &str = "synth_table";
/// Its columns (`col1..col60`), and the most indexes a variant may have.
pub const COLUMNS: u32 = 60;
/// The column the query looks up.
pub const SCANNED: u32 = 5;
/// The value it looks up.
pub const VALUE: i32 = 42;

/// `synth_table (col1 int, …, col60 int)`, empty. It is never analyzed,
/// so PostgreSQL's planner uses its 10-page guess and picks an index scan
/// on `col5`, as in the write-up.
pub fn table() -> Table {
    let columns = (1..=COLUMNS).map(|c| Column::new(format!("col{c}"), ColType::Int4, Fill::Const(0))).collect();
    Table::new(TABLE, columns, 0)
}

/// `k` indexes: `col5` first, so every variant has the one the query can
/// use, then the lowest-numbered others; in column order.
pub fn indexes(k: u32) -> Vec<Index> {
    let mut cols: Vec<u32> =
        std::iter::once(SCANNED).chain((1..=COLUMNS).filter(|&c| c != SCANNED)).take(k as usize).collect();
    cols.sort_unstable();
    cols.into_iter().map(|c| Index { table: TABLE.into(), column: format!("col{c}") }).collect()
}

/// `SELECT * FROM synth_table WHERE col5 = $1`.
pub fn lookup() -> Lookup {
    Lookup::new(TABLE, format!("col{SCANNED}"))
}

/// Through pgbench: the table and its `k` indexes.
pub fn setup_sql(k: u32) -> String {
    let mut s = table().create_sql();
    for i in indexes(k) {
        s.push_str(&i.create_sql());
    }
    s
}

/// The pgbench script: the lookup of [`VALUE`].
pub fn script() -> String {
    format!("{};\n", lookup().sql(&VALUE.to_string()))
}

/// The data set with `k` indexes, in process.
fn dataset(k: u32, _sizes: Sizes) -> Dataset {
    Dataset { tables: vec![table()], indexes: indexes(k), lookup: lookup(), key: Key::Fixed(VALUE) }
}

/// `turnstile run W3`'s workload-level parameters.
fn params_json(setup: &Setup) -> Json {
    json!({ "columns": COLUMNS, "indexes": setup.values, "mode": "simple" })
}

/// One database per index count, made by [`setup_sql`].
fn variants(setup: &PgbenchSetup<'_>) -> Vec<PgbenchVariant> {
    setup
        .values
        .iter()
        .map(|&k| PgbenchVariant {
            params: params(&[("indexes", json!(k))]),
            db: format!("w3_i{k}"),
            setup: vec![Step::Sql(setup_sql(k))],
            files: vec![("w3.sql".into(), script())],
            pgbench_args: vec!["-f".into(), setup.file("w3.sql")],
            query: Some(lookup().sql("$1")),
        })
        .collect()
}

/// `w3.sql` and `w3_setup_i<k>.sql` for compare's index counts.
fn repository_files() -> Vec<(String, String)> {
    let mut files = vec![("w3.sql".to_owned(), script())];
    files.extend(INDEXES.pgbench.iter().map(|&k| (format!("w3_setup_i{k}.sql"), setup_sql(k))));
    files
}
