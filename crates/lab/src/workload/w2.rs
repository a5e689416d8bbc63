//! W2, star join (Vondra 2024): one fact row, looked up by its primary
//! key, joined with each of N dimension tables on the dimension's primary
//! key.

use super::in_process::Setup;
use super::through_pgbench::{params, PgbenchSetup, PgbenchVariant, Step};
use super::{
    ColType, Column, Dataset, Definition, Fill, InProcessForm, JoinOn, Key, Lookup, Mode, ModeUse, Modes, Param,
    PgbenchForm, Sizes, Sweep, Table,
};
use serde_json::{json, Value as Json};

/// W2.
pub const DEFINITION: Definition = Definition {
    name: "W2",
    summary: "Star join (Vondra 2024).",
    title: "W2 star join (Vondra 2024): one fact row JOIN every dimension",
    sweep: Some(DIMENSIONS),
    modes: Modes { in_process: ModeUse::Swept, pgbench: ModeUse::Swept, quick: &[Mode::Prepared] },
    min_clients: 1,
    in_process: InProcessForm::Lookup { dataset, params: params_json },
    pgbench: Some(PgbenchForm { variants, repository_files }),
    growth_table: None,
    extra_table: None,
};

/// The most dimensions a variant may have.
pub const MAX_DIMENSIONS: u32 = 200;

/// The dimension counts.
pub const DIMENSIONS: Sweep = Sweep {
    param: Param::Dimensions,
    min: 1,
    max: MAX_DIMENSIONS,
    full: &[1, 10, 100],
    quick: &[1, 10],
    pgbench: &[1, 10, 100],
    pgbench_quick: &[10],
    alloc: &[1, 10, 100],
};

/// `dim<k> (id int PRIMARY KEY, val text)`: `dim_rows` rows, `val =
/// md5(id)`.
pub fn dimension(k: u32, sizes: Sizes) -> Table {
    let columns = vec![Column::new("id", ColType::Int4, Fill::Row), Column::new("val", ColType::Text, Fill::Md5)];
    Table { primary_key: Some("id".into()), ..Table::new(format!("dim{k}"), columns, sizes.dim_rows) }
}

/// `fact_n<n> (id int PRIMARY KEY, d1 int, …, dN int)`: `fact_rows` rows
/// whose keys spread deterministically over the dimensions' rows.
pub fn fact(n: u32, sizes: Sizes) -> Table {
    let mut columns = vec![Column::new("id", ColType::Int4, Fill::Row)];
    for g in 1..=i64::from(n) {
        let fill = Fill::Spread { base: 1, mul: 2 * g + 1, add: g, modulo: i64::from(sizes.dim_rows) };
        columns.push(Column::new(format!("d{g}"), ColType::Int4, fill));
    }
    Table { primary_key: Some("id".into()), ..Table::new(format!("fact_n{n}"), columns, sizes.fact_rows) }
}

/// Every table of `n` dimensions: the dimensions, then the fact table.
pub fn tables(n: u32, sizes: Sizes) -> Vec<Table> {
    (1..=n).map(|k| dimension(k, sizes)).chain(std::iter::once(fact(n, sizes))).collect()
}

/// The fact row `id = $1` joined with every dimension.
pub fn lookup(n: u32) -> Lookup {
    let joins = (1..=n)
        .map(|k| JoinOn {
            table: format!("dim{k}"),
            alias: format!("d{k}"),
            outer: format!("d{k}"),
            inner: "id".into(),
            inner_first: true,
        })
        .collect();
    Lookup { alias: Some("f".into()), joins, ..Lookup::new(format!("fact_n{n}"), "id") }
}

/// Through pgbench: every table created and filled, then statistics.
pub fn setup_sql(n: u32, sizes: Sizes) -> String {
    let mut s = String::new();
    for t in tables(n, sizes) {
        s.push_str(&t.create_sql());
        s.push_str(&t.insert_sql());
    }
    s.push_str("VACUUM ANALYZE;\n");
    s
}

/// The pgbench script: a random fact row.
pub fn script(n: u32, sizes: Sizes) -> String {
    format!("\\set id random(1, {})\n{};\n", sizes.fact_rows, lookup(n).sql(":id"))
}

/// The data set at `n` dimensions, in process.
fn dataset(n: u32, sizes: Sizes) -> Dataset {
    Dataset { tables: tables(n, sizes), indexes: Vec::new(), lookup: lookup(n), key: Key::Random(sizes.fact_rows) }
}

/// `turnstile run W2`'s workload-level parameters.
fn params_json(setup: &Setup) -> Json {
    json!({ "facts": setup.sizes.fact_rows, "dimension_rows": setup.sizes.dim_rows, "dimensions": setup.values })
}

/// One database per dimension count, made by [`setup_sql`].
fn variants(setup: &PgbenchSetup<'_>) -> Vec<PgbenchVariant> {
    setup
        .values
        .iter()
        .map(|&n| {
            let name = format!("w2_n{n}.sql");
            PgbenchVariant {
                params: params(&[("dimensions", json!(n))]),
                db: format!("w2_n{n}"),
                setup: vec![Step::Sql(setup_sql(n, setup.sizes))],
                files: vec![(name.clone(), script(n, setup.sizes))],
                pgbench_args: vec!["-f".into(), setup.file(&name)],
                query: Some(lookup(n).sql("$1")),
            }
        })
        .collect()
}

/// `w2_setup_n<n>.sql` and `w2_n<n>.sql` for compare's dimension counts.
fn repository_files() -> Vec<(String, String)> {
    let sizes = Sizes::DEFAULT;
    DIMENSIONS
        .pgbench
        .iter()
        .flat_map(|&n| {
            [(format!("w2_setup_n{n}.sql"), setup_sql(n, sizes)), (format!("w2_n{n}.sql"), script(n, sizes))]
        })
        .collect()
}
