//! W4, relation extension (Freund 2020): clients load rows into one
//! unindexed table, so it grows all the time. Through pgbench each
//! transaction is one server-side `COPY` of a rows file; in process, one
//! `insert_many` of the same rows. The table's growth is the figure: MB/s,
//! and in process the time of each extension phase.

use super::in_process::{
    with_loader, ClientCtx, Extra, InProcess, ParamValue, Params, PointFigures, Setup, Txn, Variant,
};
use super::through_pgbench::{params, PgbenchSetup, PgbenchVariant, Step};
use super::{
    engine, ColType, Column, Definition, ExtraColumn, ExtraTable, Fill, InProcessForm, Mode, ModeUse, Modes,
    PgbenchForm, Table,
};
use crate::cli::CliError;
use serde::Serialize;
use serde_json::{json, Value as Json};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use turnstile_engine::types::{encode_row, Value};
use turnstile_engine::{Engine, Session};
use turnstile_lock::LockMode;
use turnstile_storage::{Fork, RelFileId};

/// W4.
pub const DEFINITION: Definition = Definition {
    name: "W4",
    summary: "Relation extension (Freund 2020).",
    title: "W4 relation extension (Freund 2020): COPY into one unlogged table",
    sweep: None,
    modes: Modes { in_process: ModeUse::Fixed(Mode::Simple), pgbench: ModeUse::Fixed(Mode::Simple), quick: &[] },
    min_clients: 1,
    in_process: InProcessForm::Own(Extension::make),
    pgbench: Some(PgbenchForm { variants, repository_files }),
    growth_table: Some(TABLE),
    extra_table: Some(ExtraTable {
        title: "Relation extension (Freund 2020): throughput and the per-phase times, summed over clients",
        columns: &[
            ExtraColumn { header: "MB/s", pointer: "/mb_per_s", digits: 2 },
            ExtraColumn { header: "lock wait s", pointer: "/extension/lock_wait_s", digits: 3 },
            ExtraColumn { header: "lock held s", pointer: "/extension/lock_held_s", digits: 3 },
            ExtraColumn { header: "filesystem s", pointer: "/extension/filesystem_s", digits: 3 },
            ExtraColumn { header: "buffer search s", pointer: "/extension/buffer_search_s", digits: 3 },
            ExtraColumn { header: "held s/s", pointer: "/held_seconds_per_second", digits: 2 },
            ExtraColumn { header: "extensions", pointer: "/extension/extensions", digits: 0 },
            ExtraColumn { header: "blocks", pointer: "/extension/blocks_added", digits: 0 },
        ],
        note: None,
    }),
};

/// The table.
pub const TABLE: &str = "copy_unlogged";
/// The rows file, under compare's scripts directory.
pub const ROWS_FILE: &str = "w4_rows.txt";

/// `copy_unlogged (data text NOT NULL)`, unlogged in PostgreSQL, empty.
pub fn table() -> Table {
    let mut data = Column::new("data", ColType::Text, Fill::Repeat(String::new()));
    data.not_null = true;
    Table { unlogged: true, ..Table::new(TABLE, vec![data], 0) }
}

/// Through pgbench: the table.
pub fn setup_sql() -> String {
    table().create_sql()
}

/// The pgbench script: one server-side `COPY` of the rows file
/// (`-D rows_file='…'`).
pub fn script() -> String {
    format!("COPY {TABLE} FROM :rows_file;\n")
}

/// The rows one transaction loads: `rows` texts of 95 bytes, as the
/// write-up's `repeat(random()::text, 5)`, from a fixed seed.
pub fn rows(rows: u32) -> Vec<String> {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    (0..rows)
        .map(|_| {
            // xorshift64*: a fixed, dependency-free sequence.
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            let r = x.wrapping_mul(0x2545_f491_4f6c_dd1d) % 10u64.pow(17);
            format!("0.{r:017}").repeat(5)
        })
        .collect()
}

/// The rows file: [`rows`], one per line.
pub fn rows_file(n: u32) -> String {
    let mut out = String::with_capacity(n as usize * 96);
    for r in rows(n) {
        out.push_str(&r);
        out.push('\n');
    }
    out
}

/// One database, the table created empty; every transaction is a
/// server-side `COPY` of the rows file.
fn variants(setup: &PgbenchSetup<'_>) -> Vec<PgbenchVariant> {
    let rows = setup.sizes.copy_rows;
    vec![PgbenchVariant {
        params: params(&[("table", json!("unlogged")), ("rows_per_copy", json!(rows))]),
        db: "w4".into(),
        setup: vec![Step::Sql(setup_sql())],
        files: vec![("w4_copy.sql".into(), script()), (ROWS_FILE.into(), rows_file(rows))],
        pgbench_args: vec![
            "-f".into(),
            setup.file("w4_copy.sql"),
            "-D".into(),
            format!("rows_file='{}'", setup.file(ROWS_FILE)),
        ],
        query: None,
    }]
}

/// `w4_setup.sql` and `w4_copy.sql` (the rows file depends on the size).
fn repository_files() -> Vec<(String, String)> {
    vec![("w4_setup.sql".into(), setup_sql()), ("w4_copy.sql".into(), script())]
}

/// W4 in process: every transaction inserts one batch of [`rows`].
struct Extension {
    /// The rows one transaction loads (W4's, as the engine takes them).
    rows: Vec<Value>,
    /// Bytes of one row as the heap encodes it.
    row_bytes: f64,
}

impl Extension {
    /// `setup.sizes.copy_rows` rows per transaction.
    fn make(setup: Setup) -> Result<Box<dyn InProcess>, CliError> {
        let ty = engine::column_type(table().columns[0].ty);
        let rows: Vec<Value> = self::rows(setup.sizes.copy_rows).into_iter().map(Value::Text).collect();
        let first = rows.first().ok_or("--batch takes at least 1")?;
        let row_bytes =
            encode_row(&[ty], std::slice::from_ref(first)).map_err(|e| format!("W4 row: {e}"))?.len() as f64;
        Ok(Box::new(Extension { rows, row_bytes }))
    }

    fn batch(&self) -> u32 {
        self.rows.len() as u32
    }
}

impl InProcess for Extension {
    fn params_json(&self) -> Json {
        json!({ "batch_rows": self.batch(), "row_bytes": self.row_bytes })
    }

    fn variants(&self) -> Result<Vec<Variant>, CliError> {
        let params = Params::default().with("table", ParamValue::Name("unindexed"));
        Ok(vec![Variant { params, value: 0, mode: Mode::Simple }])
    }

    fn load(&self, dir: &Path, _v: &Variant) -> Result<(), CliError> {
        with_loader(dir, |s| engine::load(s, &[table()], &[]))
    }

    /// Empties the table, so that every point — each profile at each
    /// client count — extends the same empty relation. Otherwise the table
    /// only grows over the run and each point writes into a bigger file and
    /// a bigger page cache than the one before: measured on the 2-core
    /// development VM, three 16-client points in a row fell from 810 to
    /// 220 MB/s under `scalable` and from 550 to 200 MB/s under `classic`,
    /// the time going to the kernel (`copy_folio_from_iter_atomic`, the
    /// inode's rwsem) — so a point's figure depended on how much the points
    /// before it had written, not only on its profile.
    fn before_point(&self, engine: &Arc<Engine>, _v: &Variant) -> Result<(), CliError> {
        let mut s = engine.session()?;
        s.begin()?;
        let table = s.lock_table(TABLE, LockMode::AccessExclusive)?;
        let file = RelFileId::new(s.database(), table.rel.id);
        engine.pool().truncate_relation(engine.smgr(), file, Fork::Main, 0)?;
        s.commit()?;
        Ok(())
    }

    fn writes(&self) -> bool {
        true
    }

    fn client<'a>(&'a self, _c: &ClientCtx, _v: &'a Variant) -> Result<Txn<'a>, CliError> {
        Ok(Box::new(move |s: &mut Session| {
            s.insert_many(TABLE, self.rows.iter().map(|r| vec![r.clone()]))?;
            Ok(())
        }))
    }

    fn extra(&self, point: &PointFigures<'_>) -> Result<Extra, CliError> {
        let (before, after) = &point.extension;
        let outcome = point.outcome;
        let secs = outcome.elapsed.as_secs_f64().max(1e-9);
        let rows = outcome.transactions as f64 * f64::from(self.batch());
        let d = |a: Duration, b: Duration| a.saturating_sub(b).as_secs_f64();
        let held = d(after.lock_held, before.lock_held);
        Extra::own(&ExtensionFigures {
            mb_per_s: rows * self.row_bytes / secs / 1e6,
            extension: ExtensionPhases {
                lock_wait_s: d(after.lock_wait, before.lock_wait),
                lock_held_s: held,
                filesystem_s: d(after.filesystem, before.filesystem),
                buffer_search_s: d(after.buffer_search, before.buffer_search),
                extensions: after.extensions.saturating_sub(before.extensions),
                blocks_added: after.blocks_added.saturating_sub(before.blocks_added),
            },
            held_seconds_per_second: held / secs,
        })
    }
}

/// W4's figures of a point.
#[derive(Clone, Debug, Serialize)]
pub struct ExtensionFigures {
    /// Rows loaded, in MB of encoded rows per second.
    pub mb_per_s: f64,
    /// The extension phases over the measured phase, summed over clients.
    pub extension: ExtensionPhases,
    /// Seconds the extension lock was held per second of the phase.
    pub held_seconds_per_second: f64,
}

/// Where relation extension spent its time (Freund 2020's breakdown).
#[derive(Clone, Debug, Serialize)]
pub struct ExtensionPhases {
    /// Waiting for the extension lock.
    pub lock_wait_s: f64,
    /// Holding it.
    pub lock_held_s: f64,
    /// In the filesystem (`pwritev`, `fallocate`).
    pub filesystem_s: f64,
    /// Finding and clearing victim buffers.
    pub buffer_search_s: f64,
    /// Extensions done.
    pub extensions: u64,
    /// Blocks added by them.
    pub blocks_added: u64,
}
