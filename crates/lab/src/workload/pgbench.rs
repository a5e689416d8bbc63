//! pgbench's tables, as `pgbench -i -s S [--partitions P]` creates and
//! fills them: W1 and W5 run on them. Through pgbench, `pgbench -i` makes
//! them; in process, the engine renderer makes these.

use super::{ColType, Column, Fill, Table};

/// Accounts per unit of pgbench's scale.
pub const ACCOUNTS_PER_SCALE: u32 = 100_000;
/// `pgbench_accounts`.
pub const ACCOUNTS: &str = "pgbench_accounts";
/// `pgbench_branches`.
pub const BRANCHES: &str = "pgbench_branches";

/// Branches for `accounts` accounts: one per scale unit begun, as pgbench.
pub fn branches_for(accounts: u32) -> u32 {
    accounts.div_ceil(ACCOUNTS_PER_SCALE).max(1)
}

/// `pgbench_accounts (aid int PRIMARY KEY, bid int, abalance int, filler
/// char(84))` with `rows` accounts `aid = 1..=rows`, each in branch
/// `1 + (aid - 1) / 100000`, range-partitioned on `aid` into `partitions`
/// (0: not partitioned).
pub fn accounts(rows: u32, partitions: u32) -> Table {
    let mut aid = Column::new("aid", ColType::Int4, Fill::Row);
    aid.not_null = true;
    let columns = vec![
        aid,
        Column::new("bid", ColType::Int4, Fill::Group { per: i64::from(ACCOUNTS_PER_SCALE) }),
        Column::new("abalance", ColType::Int4, Fill::Const(0)),
        Column::new("filler", ColType::Char(84), Fill::Repeat(String::new())),
    ];
    Table { primary_key: Some("aid".into()), partitions, ..Table::new(ACCOUNTS, columns, rows) }
}

/// `pgbench_branches (bid int PRIMARY KEY, bbalance int, filler
/// char(88))` with `rows` branches `bid = 1..=rows`.
pub fn branches(rows: u32) -> Table {
    let mut bid = Column::new("bid", ColType::Int4, Fill::Row);
    bid.not_null = true;
    let columns = vec![
        bid,
        Column::new("bbalance", ColType::Int4, Fill::Const(0)),
        Column::new("filler", ColType::Char(88), Fill::Repeat(String::new())),
    ];
    Table { primary_key: Some("bid".into()), ..Table::new(BRANCHES, columns, rows) }
}
