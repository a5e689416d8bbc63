//! W1, partitioned join (Vondra 2024): pgbench's accounts with 0 to 1000
//! range partitions on `aid`, looked up on `aid_parent` (equal to `aid`,
//! but not the partition key, so every partition is locked and its index
//! probed) and joined with `pgbench_branches`.

use super::pgbench::{self, ACCOUNTS, BRANCHES};
use super::{ColType, Column, Fill, Index, JoinOn, Lookup, Table};

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
