//! W5, select-only (Haas 2011): `pgbench -S`, a primary-key lookup of one
//! account's balance.

use super::in_process::Setup;
use super::pgbench::{self, ACCOUNTS};
use super::through_pgbench::{params, PgbenchSetup, PgbenchVariant, Step};
use super::{Dataset, Definition, InProcessForm, Key, Lookup, Mode, ModeUse, Modes, PgbenchForm, Sizes, Table};
use serde_json::{json, Value as Json};

/// W5.
pub const DEFINITION: Definition = Definition {
    name: "W5",
    summary: "Select-only, pgbench -S (Haas 2011).",
    title: "W5 select-only (Haas 2011): pgbench -S",
    sweep: None,
    modes: Modes { in_process: ModeUse::Swept, pgbench: ModeUse::Fixed(Mode::Prepared), quick: &[Mode::Prepared] },
    min_clients: 1,
    in_process: InProcessForm::Lookup { dataset, params: params_json },
    pgbench: Some(PgbenchForm { variants, repository_files: Vec::new }),
    growth_table: None,
    extra_table: None,
};

/// pgbench's accounts (not partitioned) and branches.
pub fn tables(accounts: u32) -> Vec<Table> {
    vec![pgbench::accounts(accounts, 0), pgbench::branches(pgbench::branches_for(accounts))]
}

/// `SELECT abalance FROM pgbench_accounts WHERE aid = $1`, pgbench's
/// built-in `-S` script (which pgbench sends itself).
pub fn lookup() -> Lookup {
    Lookup { select: vec!["abalance".into()], ..Lookup::new(ACCOUNTS, "aid") }
}

/// The data set, in process.
fn dataset(_: u32, sizes: Sizes) -> Dataset {
    let accounts = sizes.accounts();
    Dataset { tables: tables(accounts), indexes: Vec::new(), lookup: lookup(), key: Key::Random(accounts) }
}

/// `turnstile run W5`'s workload-level parameters.
fn params_json(setup: &Setup) -> Json {
    json!({ "accounts": setup.sizes.accounts() })
}

/// One database, made by `pgbench -i`; pgbench's built-in `-S` script is
/// [`lookup`].
fn variants(setup: &PgbenchSetup<'_>) -> Vec<PgbenchVariant> {
    let scale = setup.sizes.pgbench_scale();
    vec![PgbenchVariant {
        params: params(&[("scale", json!(scale))]),
        db: "w5".into(),
        setup: vec![Step::PgbenchInit(vec!["-s".into(), scale.to_string()])],
        files: Vec::new(),
        pgbench_args: vec!["-S".into()],
        query: None,
    }]
}
