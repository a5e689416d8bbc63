//! W7, pgbench's built-in tpcb-like: the write workload every user runs
//! first. Each transaction updates one account, one teller and one branch,
//! reads the account back and inserts a history row, and commits: through
//! pgbench on every server with `fsync` and `synchronous_commit` on, so a
//! commit returns only once its WAL is durable, and commits share
//! `fdatasync`s (group commit) as far as each server's WAL lets them.

use super::in_process::{with_loader, ClientCtx, InProcess, ParamValue, Params, Setup, Txn, Variant};
use super::pgbench::{self, ACCOUNTS, BRANCHES};
use super::through_pgbench::{params, PgbenchSetup, PgbenchVariant, Step};
use super::{engine, ColType, Column, Definition, Fill, InProcessForm, Mode, ModeUse, Modes, PgbenchForm, Table};
use crate::cli::CliError;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value as Json};
use std::path::Path;
use turnstile_engine::query::Query;
use turnstile_engine::types::Value;
use turnstile_engine::Session;

/// W7.
pub const DEFINITION: Definition = Definition {
    name: "W7",
    summary:
        "pgbench's built-in tpcb-like at scale 10 (a full run), with fsync and synchronous_commit on: durable commits.",
    title: "W7 tpcb-like (pgbench's default): every commit durable, fsync on",
    sweep: None,
    modes: Modes { in_process: ModeUse::Fixed(Mode::Simple), pgbench: ModeUse::Fixed(Mode::Simple), quick: &[] },
    min_clients: 1,
    in_process: InProcessForm::Own(TpcbLike::make),
    pgbench: Some(PgbenchForm { variants, repository_files: Vec::new }),
    growth_table: None,
    extra_table: None,
};

/// `pgbench_tellers`.
pub const TELLERS: &str = "pgbench_tellers";
/// `pgbench_history`.
pub const HISTORY: &str = "pgbench_history";
/// Tellers per branch, as pgbench.
const TELLERS_PER_BRANCH: u32 = 10;

/// One database made by `pgbench -i -s S` (10 in a full run: 1,000,000
/// accounts); pgbench's built-in script.
fn variants(setup: &PgbenchSetup<'_>) -> Vec<PgbenchVariant> {
    let scale = setup.sizes.pgbench_scale();
    vec![PgbenchVariant {
        params: params(&[("scale", json!(scale))]),
        db: "w7".into(),
        setup: vec![Step::PgbenchInit(vec!["-s".into(), scale.to_string()])],
        files: Vec::new(),
        pgbench_args: Vec::new(),
        query: None,
    }]
}

/// `pgbench_tellers (tid int PRIMARY KEY, bid int, tbalance int, filler
/// char(84))`.
fn tellers(branches: u32) -> Table {
    let mut tid = Column::new("tid", ColType::Int4, Fill::Row);
    tid.not_null = true;
    let columns = vec![
        tid,
        Column::new("bid", ColType::Int4, Fill::Group { per: i64::from(TELLERS_PER_BRANCH) }),
        Column::new("tbalance", ColType::Int4, Fill::Const(0)),
        Column::new("filler", ColType::Char(84), Fill::Repeat(String::new())),
    ];
    Table { primary_key: Some("tid".into()), ..Table::new(TELLERS, columns, branches * TELLERS_PER_BRANCH) }
}

/// `pgbench_history (tid, bid, aid, delta, mtime, filler)`, empty (in
/// process `mtime` is an `int`: the lab's schemas have no timestamp type).
fn history() -> Table {
    let columns = vec![
        Column::new("tid", ColType::Int4, Fill::Const(0)),
        Column::new("bid", ColType::Int4, Fill::Const(0)),
        Column::new("aid", ColType::Int4, Fill::Const(0)),
        Column::new("delta", ColType::Int4, Fill::Const(0)),
        Column::new("mtime", ColType::Int4, Fill::Const(0)),
        Column::new("filler", ColType::Char(22), Fill::Repeat(String::new())),
    ];
    Table::new(HISTORY, columns, 0)
}

/// W7 in process: pgbench's tpcb-like transaction on the engine's API.
struct TpcbLike {
    accounts: u32,
    branches: u32,
}

impl TpcbLike {
    fn make(setup: Setup) -> Result<Box<dyn InProcess>, CliError> {
        let accounts = setup.sizes.accounts();
        Ok(Box::new(TpcbLike { accounts, branches: pgbench::branches_for(accounts) }))
    }
}

fn add_to(column: usize, delta: i32) -> impl FnMut(&[Value]) -> turnstile_engine::error::Result<Option<Vec<Value>>> {
    move |row: &[Value]| {
        let mut row = row.to_vec();
        if let Value::Int4(v) = row[column] {
            row[column] = Value::Int4(v.wrapping_add(delta));
        }
        Ok(Some(row))
    }
}

impl InProcess for TpcbLike {
    fn params_json(&self) -> Json {
        json!({ "accounts": self.accounts, "branches": self.branches })
    }

    fn variants(&self) -> Result<Vec<Variant>, CliError> {
        let params = Params::default().with("accounts", ParamValue::Count(self.accounts));
        Ok(vec![Variant { params, value: 0, mode: Mode::Simple }])
    }

    fn load(&self, dir: &Path, _v: &Variant) -> Result<(), CliError> {
        let tables =
            [pgbench::accounts(self.accounts, 0), pgbench::branches(self.branches), tellers(self.branches), history()];
        with_loader(dir, |s| engine::load(s, &tables, &[]))
    }

    fn writes(&self) -> bool {
        true
    }

    fn client<'a>(&'a self, c: &ClientCtx, _v: &'a Variant) -> Result<Txn<'a>, CliError> {
        let mut rng = SmallRng::seed_from_u64(c.seed);
        let tellers = self.branches * TELLERS_PER_BRANCH;
        Ok(Box::new(move |s: &mut Session| {
            let aid = rng.random_range(1..=self.accounts as i32);
            let bid = rng.random_range(1..=self.branches as i32);
            let tid = rng.random_range(1..=tellers as i32);
            let delta = rng.random_range(-5000..=5000);
            s.begin()?;
            s.update_rows(&Query::from(ACCOUNTS).filter("aid", aid), &[], &mut add_to(2, delta))?;
            s.query(&Query::from(ACCOUNTS).filter("aid", aid).select(["abalance"]), &[])?;
            s.update_rows(&Query::from(TELLERS).filter("tid", tid), &[], &mut add_to(2, delta))?;
            s.update_rows(&Query::from(BRANCHES).filter("bid", bid), &[], &mut add_to(1, delta))?;
            let history = [tid, bid, aid, delta, 0].map(Value::Int4);
            let mut row = history.to_vec();
            row.push(Value::Null);
            s.insert(HISTORY, &row)?;
            s.commit()?;
            Ok(())
        }))
    }
}
