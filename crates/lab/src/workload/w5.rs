//! W5, select-only (Haas 2011): `pgbench -S`, a primary-key lookup of one
//! account's balance.

use super::pgbench::{self, ACCOUNTS};
use super::{Lookup, Table};

/// pgbench's accounts (not partitioned) and branches.
pub fn tables(accounts: u32) -> Vec<Table> {
    vec![pgbench::accounts(accounts, 0), pgbench::branches(pgbench::branches_for(accounts))]
}

/// `SELECT abalance FROM pgbench_accounts WHERE aid = $1`, pgbench's
/// built-in `-S` script (which pgbench sends itself).
pub fn lookup() -> Lookup {
    Lookup { select: vec!["abalance".into()], ..Lookup::new(ACCOUNTS, "aid") }
}
