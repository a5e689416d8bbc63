//! W1, partitioned join (Vondra 2024): pgbench's accounts with 0 to 1000
//! range partitions on `aid`, looked up on `aid_parent` (equal to `aid`,
//! but not the partition key, so every partition is locked and its index
//! probed) and joined with `pgbench_branches`.

use super::in_process::Setup;
use super::pgbench::{self, ACCOUNTS, BRANCHES};
use super::through_pgbench::{params, PgbenchSetup, PgbenchVariant, Step};
use super::{
    ColType, Column, Dataset, Definition, Fill, InProcessForm, Index, JoinOn, Key, Lookup, Mode, ModeUse, Modes, Param,
    PgbenchForm, Sizes, Sweep, Table,
};
use serde_json::{json, Value as Json};

/// W1.
pub const DEFINITION: Definition = Definition {
    name: "W1",
    summary: "Partitioned join (Vondra 2024).",
    title: "W1 partitioned join (Vondra 2024): pgbench_accounts by aid_parent JOIN pgbench_branches",
    sweep: Some(PARTITIONS),
    modes: Modes { in_process: ModeUse::Swept, pgbench: ModeUse::Swept, quick: &Mode::BOTH },
    min_clients: 1,
    in_process: InProcessForm::Lookup { dataset, params: params_json },
    pgbench: Some(PgbenchForm { variants, repository_files }),
    growth_table: None,
    extra_table: None,
};

/// The partition counts. Through pgbench, at the write-ups' scale, 10
/// partitions add little to 0 and cost a fourth database on every server,
/// so compare's default skips them; CI's quick compare keeps 0 and 10.
pub const PARTITIONS: Sweep = Sweep {
    param: Param::Partitions,
    min: 0,
    // No bound of the lab's own: the engine refuses what it cannot hold.
    max: u32::MAX,
    full: &[0, 10, 100, 1000],
    quick: &[0, 100],
    pgbench: &[0, 100, 1000],
    pgbench_quick: &[0, 10],
    alloc: &[0, 100, 1000],
};

/// The looked-up column.
pub const AID_PARENT: &str = "aid_parent";

/// The tables: `pgbench_accounts` with `aid_parent`, and `branches` rows
/// of `pgbench_branches`.
pub fn tables(accounts: u32, partitions: u32, branches: u32) -> Vec<Table> {
    let mut a = pgbench::accounts(accounts, partitions);
    a.columns.push(Column::new(AID_PARENT, ColType::Int4, Fill::Row));
    vec![a, pgbench::branches(branches)]
}

/// The index the lookup uses.
pub fn indexes() -> Vec<Index> {
    vec![Index { table: ACCOUNTS.into(), column: AID_PARENT.into() }]
}

/// `SELECT * FROM pgbench_accounts pa JOIN pgbench_branches pb ON (pa.bid
/// = pb.bid) WHERE pa.aid_parent = $1`.
pub fn lookup() -> Lookup {
    Lookup {
        alias: Some("pa".into()),
        joins: vec![JoinOn {
            table: BRANCHES.into(),
            alias: "pb".into(),
            outer: "bid".into(),
            inner: "bid".into(),
            inner_first: false,
        }],
        ..Lookup::new(ACCOUNTS, AID_PARENT)
    }
}

/// Through pgbench: what turns `pgbench -i`'s tables into [`tables`] (the
/// column, its values and [`indexes`]), then a rewrite and statistics.
pub fn setup_sql() -> String {
    let index = &indexes()[0];
    format!(
        "ALTER TABLE {ACCOUNTS} ADD COLUMN {AID_PARENT} INT;\n\
         UPDATE {ACCOUNTS} SET {AID_PARENT} = aid;\n\
         CREATE INDEX ON {}({});\n\
         VACUUM FULL {ACCOUNTS};\n\
         VACUUM ANALYZE;\n",
        index.table, index.column
    )
}

/// The pgbench script: a random `aid_parent` among the scale's accounts.
pub fn script() -> String {
    format!("\\set aid random(1, {} * :scale)\n{};\n", pgbench::ACCOUNTS_PER_SCALE, lookup().sql(":aid"))
}

/// The data set at `partitions` partitions, in process.
fn dataset(partitions: u32, sizes: Sizes) -> Dataset {
    let accounts = sizes.accounts();
    Dataset {
        tables: tables(accounts, partitions, pgbench::branches_for(accounts)),
        indexes: indexes(),
        lookup: lookup(),
        key: Key::Random(accounts),
    }
}

/// `turnstile run W1`'s workload-level parameters.
fn params_json(setup: &Setup) -> Json {
    let accounts = setup.sizes.accounts();
    json!({ "accounts": accounts, "partitions": setup.values, "branches": pgbench::branches_for(accounts) })
}

/// One database per partition count, made by `pgbench -i --partitions`.
fn variants(setup: &PgbenchSetup<'_>) -> Vec<PgbenchVariant> {
    let scale = setup.sizes.pgbench_scale().to_string();
    setup
        .values
        .iter()
        .map(|&p| {
            let mut init = vec!["-s".to_owned(), scale.clone()];
            if p > 0 {
                init.extend(["--partitions".to_owned(), p.to_string()]);
            }
            PgbenchVariant {
                params: params(&[("partitions", json!(p))]),
                db: format!("w1_p{p}"),
                setup: vec![Step::PgbenchInit(init), Step::Sql(setup_sql())],
                files: vec![("w1.sql".into(), script())],
                pgbench_args: vec!["-s".into(), scale.clone(), "-f".into(), setup.file("w1.sql")],
                query: Some(lookup().sql("$1")),
            }
        })
        .collect()
}

/// `w1.sql` and `w1_setup.sql`.
fn repository_files() -> Vec<(String, String)> {
    vec![("w1.sql".into(), script()), ("w1_setup.sql".into(), setup_sql())]
}
