//! # turnstile-sql: SQL text → turnstile's engine
//!
//! The statements `pgbench`, `psql`, `createdb` and the seeds send, parsed
//! and run against [`turnstile_engine::Session`], in-process (no socket).
//! The wire protocol lives in `turnstile-server`, which maps [`Outcome`]s
//! and [`SqlError`]s to messages.
//!
//! ```
//! use turnstile_sql::{Outcome, SqlEngine, SqlSession};
//! let dir = tempfile::tempdir().unwrap();
//! let e = SqlEngine::open(dir.path(), turnstile_sync::Config::default()).unwrap();
//! let mut s = SqlSession::connect(&e, "postgres", "me", "doc", None).unwrap();
//! for st in s.parse_batch("CREATE TABLE t (k int, v text); INSERT INTO t VALUES (1, 'one')").unwrap() {
//!     s.execute(&st, &[]).unwrap();
//! }
//! let st = s.prepare("SELECT v FROM t WHERE k = $1", &[]).unwrap();
//! assert_eq!(st.param_types(), &[23]);
//! match s.execute(&st, &[Some("1".into())]).unwrap() {
//!     Outcome::Rows { rows, .. } => assert_eq!(rows, vec![vec![Some("one".to_owned())]]),
//!     other => panic!("{other:?}"),
//! }
//! ```
//!
//! ## Layers
//!
//! * [`parse`] — splits a query string at top-level semicolons; a small
//!   pre-parser for what sqlparser cannot parse (`VACUUM`, `ANALYZE`,
//!   `CHECKPOINT`, `COPY` with its options); sqlparser's PostgreSQL
//!   dialect for the rest. Syntax errors are `42601` with a position.
//! * [`plan`] — SELECT and INSERT compiled once per [`Statement`]: table
//!   access becomes the engine's typed `Query` (joins on an equality of
//!   columns, `column = constant|$n` pushed down as engine filters) so the
//!   engine's planner and executor take PostgreSQL's locks; residual
//!   predicates, expressions, aggregates (`FILTER` too), `GROUP BY`,
//!   `ORDER BY`, `LIMIT` are evaluated here. A statement from
//!   [`SqlSession::prepare`] follows PostgreSQL's plan cache: five custom
//!   plans, then the engine's cached generic plan (`plan_cache_mode`).
//! * [`expr`] — typed expressions, functions, aggregates.
//! * [`views`] — `pg_locks`, `pg_stat_activity`, `pg_stat_lock`,
//!   `pg_class`, `pg_namespace`, `pg_database`.
//!
//! ## Transactions
//!
//! `BEGIN`/`START TRANSACTION` … `COMMIT`/`END`/`ROLLBACK` map to the
//! engine's transaction (heavyweight locks held to the end). Only `COMMIT`
//! keeps work: dropping a session inside a block (a closed connection, a
//! terminate, shutdown) rolls it back. An error inside a block aborts the
//! transaction at once ([`SqlSession::statement_failed`], PostgreSQL's
//! `AbortTransaction`): its writes are undone through the engine's undo log
//! and its locks released, and the block answers `25P02` until it ends
//! (`COMMIT` then answers `ROLLBACK`). DDL is not transactional here: a
//! rollback warns about it and it stays. Settings changed inside a block
//! are restored when it rolls back; `SET LOCAL` ends with the block.
//!
//! ## Interrupts
//!
//! A [`CancelHandle`] cancels the running statement (`57014`: a
//! CancelRequest, `pg_cancel_backend`, or the engine's timer thread for
//! `statement_timeout`) or terminates the session (FATAL `57P01`:
//! `pg_terminate_backend`, server shutdown). See the `interrupt` module.

//! ## What is not there (each is an ErrorResponse, never a crash)
//!
//! Subqueries, CTEs, set operations, outer joins and cross joins of tables,
//! self-joins, window functions, `ON CONFLICT`, `RETURNING`, savepoints:
//! `0A000` naming the construct. `VACUUM [FULL] [ANALYZE]` is the
//! engine's (reclaims dead tuples under PostgreSQL's locks); `ANALYZE`
//! takes its lock and has no statistics to gather.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod error;
pub mod expr;
mod interrupt;
pub mod parse;
pub mod plan;
mod sync;
pub mod value;
pub mod views;

pub use error::{Notice, Severity, SqlError};
pub use interrupt::CancelHandle;
use interrupt::{Reason, Timer};
pub use turnstile_lock::SqlState;

use crate::sync::atomic::AtomicBool;
use expr::{object_name, parse_type_name, Compiler, EvalEnv, Scope, Services};
use parse::{Parsed, PreStmt};
use plan::{CacheMode, Catalog, InsertPlan, Run, SelectPlan};
use sqlparser::ast;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};
use turnstile_engine::catalog::{PartitionBound, PartitionStrategy};
use turnstile_engine::types::{ColumnType, Value};
use turnstile_engine::{Engine, Session};
use turnstile_lock::{LockMode, LockTag, Wait};
use value::{now_timestamp, Datum, SqlType};

/// What every session shares: the engine and the registry of connected
/// backends (for `pg_stat_activity`).
#[derive(Debug)]
pub struct Shared {
    engine: Arc<Engine>,
    registry: Mutex<Vec<Arc<BackendInfo>>>,
    /// Wall-clock timestamp (PostgreSQL epoch, µs) when the engine opened:
    /// the lock manager's and activity table's time origin.
    pub started: i64,
    knobs: BTreeMap<String, String>,
    /// Fires `statement_timeout`s.
    timer: Timer,
}

impl Shared {
    /// The connected backends.
    pub fn backends(&self) -> Vec<Arc<BackendInfo>> {
        self.registry.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

/// One connected backend, as `pg_stat_activity` shows it.
#[derive(Debug)]
pub struct BackendInfo {
    /// `pid`.
    pub pid: i32,
    /// Its activity slot.
    pub activity_slot: usize,
    /// `datid`.
    pub datid: u32,
    /// `datname`.
    pub datname: String,
    /// `usename`.
    pub usename: String,
    /// `client_addr`.
    pub client_addr: Option<String>,
    /// `backend_start`.
    pub backend_start: i64,
    application_name: Mutex<String>,
    query: Mutex<String>,
    /// Cancels or terminates the backend (`pg_cancel_backend`,
    /// `pg_terminate_backend`).
    cancel: CancelHandle,
}

impl BackendInfo {
    /// `application_name`.
    pub fn application_name(&self) -> String {
        self.application_name.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// The last statement's text.
    pub fn query(&self) -> String {
        self.query.lock().map(|s| s.clone()).unwrap_or_default()
    }

    fn set_query(&self, text: &str) {
        if let Ok(mut q) = self.query.lock() {
            q.clear();
            q.push_str(&text[..floor_char(text, 1024)]);
        }
    }
}

fn floor_char(s: &str, max: usize) -> usize {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    end
}

/// One open data directory, shared by every connection.
#[derive(Clone, Debug)]
pub struct SqlEngine {
    shared: Arc<Shared>,
}

fn flatten_toml(prefix: &str, v: &toml::Value, out: &mut BTreeMap<String, String>) {
    match v {
        toml::Value::Table(t) => {
            for (k, v) in t {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten_toml(&key, v, out);
            }
        }
        toml::Value::String(s) => {
            out.insert(prefix.to_owned(), s.clone());
        }
        other => {
            out.insert(prefix.to_owned(), other.to_string());
        }
    }
}

impl SqlEngine {
    /// Opens (creating if needed) `data_dir`; a new directory holds the
    /// database `postgres`.
    pub fn open(data_dir: &Path, config: turnstile_sync::Config) -> Result<SqlEngine, SqlError> {
        let engine = Engine::open(data_dir, config).map_err(SqlError::from_engine)?;
        let started = now_timestamp();
        let mut knobs = BTreeMap::new();
        if let Ok(v) = engine.config().to_toml_string().parse::<toml::Table>() {
            flatten_toml("", &toml::Value::Table(v), &mut knobs);
        }
        Ok(SqlEngine {
            shared: Arc::new(Shared {
                engine,
                registry: Mutex::new(Vec::new()),
                started,
                knobs,
                timer: Timer::default(),
            }),
        })
    }

    /// The engine underneath.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.shared.engine
    }

    /// Writes every dirty buffer and fsyncs (server shutdown, `CHECKPOINT`).
    pub fn flush(&self) -> Result<(), SqlError> {
        self.shared.engine.flush().map_err(SqlError::from_engine)
    }
}

/// The transaction state reported in ReadyForQuery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxStatus {
    /// Not in a transaction block (`I`).
    Idle,
    /// In a transaction block (`T`).
    InBlock,
    /// In a failed transaction block (`E`).
    Failed,
}

/// A column of a result (RowDescription).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldInfo {
    /// Column name.
    pub name: String,
    /// OID of the table the column comes from, 0 if none.
    pub table_oid: u32,
    /// Attribute number in that table, 0 if none.
    pub column: i16,
    /// Type OID.
    pub type_oid: u32,
    /// Type length (-1 variable).
    pub type_len: i16,
    /// Type modifier (-1 none).
    pub type_modifier: i32,
}

/// What a statement compiles to (cached in the [`Statement`]).
#[derive(Debug)]
enum Compiled {
    Select(Box<SelectPlan>),
    Insert(InsertPlan),
    Modify(plan::ModifyPlan),
}

/// A parsed (and, once executed, planned) statement. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Statement {
    inner: Arc<StatementInner>,
}

#[derive(Debug)]
struct StatementInner {
    sql: String,
    parsed: Parsed,
    param_types: Vec<u32>,
    declared: Vec<SqlType>,
    fields: Option<Vec<FieldInfo>>,
    tag: String,
    /// From `prepare` (extended protocol): its plan is cached.
    saved: bool,
    compiled: Mutex<Option<(u64, Arc<Compiled>)>>,
}

impl Statement {
    /// Parameter type OIDs (ParameterDescription).
    pub fn param_types(&self) -> &[u32] {
        &self.inner.param_types
    }

    /// Result columns (RowDescription); `None` = NoData.
    pub fn fields(&self) -> Option<&[FieldInfo]> {
        self.inner.fields.as_deref()
    }

    /// Whether the statement is empty (EmptyQueryResponse).
    pub fn is_empty(&self) -> bool {
        matches!(self.inner.parsed, Parsed::Empty)
    }

    /// The command tag's first word (`SELECT`, `BEGIN`…).
    pub fn tag_hint(&self) -> &str {
        &self.inner.tag
    }

    /// The statement's text.
    pub fn sql(&self) -> &str {
        &self.inner.sql
    }
}

/// A COPY FROM STDIN in progress.
#[derive(Debug)]
pub struct CopyIn {
    table: String,
    types: Vec<ColumnType>,
    sql_types: Vec<SqlType>,
    targets: Vec<usize>,
    partial: Vec<u8>,
    batch: Vec<Vec<Value>>,
    count: u64,
    done: bool,
}

impl CopyIn {
    /// Columns each line holds.
    pub fn columns(&self) -> usize {
        self.targets.len()
    }
}

/// What executing a statement produced.
#[derive(Debug)]
pub enum Outcome {
    /// A command without rows: its tag (`INSERT 0 1`, `BEGIN`…).
    Command {
        /// CommandComplete tag.
        tag: String,
    },
    /// Rows, in text format.
    Rows {
        /// RowDescription.
        fields: Vec<FieldInfo>,
        /// Values (None = NULL).
        rows: Vec<Vec<Option<String>>>,
        /// CommandComplete tag (`SELECT n`).
        tag: String,
    },
    /// EmptyQueryResponse.
    Empty,
    /// COPY FROM STDIN: feed [`SqlSession::copy_data`], then `copy_done`.
    CopyIn(CopyIn),
    /// COPY TO STDOUT: each line one CopyData.
    CopyOut {
        /// Columns per line.
        columns: usize,
        /// Lines, `\n` terminated.
        lines: Vec<Vec<u8>>,
        /// CommandComplete tag (`COPY n`).
        tag: String,
    },
}

/// Session state that functions read and change.
#[derive(Debug)]
struct Ctx {
    shared: Arc<Shared>,
    pid: i32,
    user: String,
    database: String,
    gucs: HashMap<String, String>,
    rng: u64,
    stmt_ts: i64,
    cancel: Arc<AtomicBool>,
    param_changes: Vec<(String, String)>,
    timeouts_dirty: bool,
    /// The values `RESET` goes back to: the session's start (defaults and
    /// the startup packet's).
    reset_values: HashMap<String, String>,
    /// Settings changed by the open transaction block (`None` outside one):
    /// what they were before it and what a commit keeps.
    xact: Option<HashMap<String, XactSetting>>,
    /// `statement_timeout` in ms (0 = none), parsed when it changes.
    statement_timeout_ms: u64,
    /// `idle_in_transaction_session_timeout` in ms (0 = none).
    idle_in_transaction_ms: u64,
    /// Notices of the current call.
    notices: Vec<Notice>,
}

/// One setting changed inside a transaction block: PostgreSQL's GUC stack
/// entry for one nesting level (there are no savepoints).
#[derive(Clone, Debug)]
struct XactSetting {
    /// The value before the block (`None`: it had none): what a rollback restores.
    prior: Option<String>,
    /// What a commit keeps: `prior` until a plain `SET`, whose value it
    /// becomes; `SET LOCAL` leaves it (its value ends with the block).
    keep: Option<String>,
}

/// Parameters PostgreSQL reports with ParameterStatus when they change.
const REPORTED: &[&str] = &[
    "application_name",
    "client_encoding",
    "datestyle",
    "timezone",
    "integer_datetimes",
    "standard_conforming_strings",
    "intervalstyle",
    "is_superuser",
    "server_encoding",
    "server_version",
    "session_authorization",
];

/// PostgreSQL's spelling of a parameter name (for ParameterStatus).
fn display_name(name: &str) -> &str {
    match name {
        "datestyle" => "DateStyle",
        "timezone" => "TimeZone",
        "intervalstyle" => "IntervalStyle",
        other => other,
    }
}

fn default_gucs(user: &str, application_name: &str, max_backends: u32) -> HashMap<String, String> {
    let mut g = HashMap::new();
    for (k, v) in [
        ("server_version", "15.0 (turnstile)"),
        ("server_version_num", "150000"),
        ("server_encoding", "UTF8"),
        ("client_encoding", "UTF8"),
        ("datestyle", "ISO, MDY"),
        ("intervalstyle", "postgres"),
        ("integer_datetimes", "on"),
        ("standard_conforming_strings", "on"),
        ("timezone", "UTC"),
        ("is_superuser", "on"),
        ("lock_timeout", "0"),
        ("deadlock_timeout", "1s"),
        ("statement_timeout", "0"),
        ("idle_in_transaction_session_timeout", "0"),
        ("plan_cache_mode", "auto"),
        ("search_path", "\"$user\", public"),
        ("transaction_isolation", "read committed"),
        ("default_transaction_isolation", "read committed"),
        ("extra_float_digits", "1"),
        ("synchronous_commit", "on"),
        ("max_locks_per_transaction", "64"),
        ("client_min_messages", "notice"),
    ] {
        g.insert(k.to_owned(), v.to_owned());
    }
    g.insert("application_name".into(), application_name.to_owned());
    g.insert("session_authorization".into(), user.to_owned());
    g.insert("max_connections".into(), max_backends.to_string());
    g
}

/// Parses a duration setting (`1s`, `100ms`, `5min`, bare = ms) to ms.
fn parse_ms(v: &str) -> Option<u64> {
    let v = v.trim().to_ascii_lowercase();
    let split = v.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let n: f64 = num.parse().ok()?;
    let mult = match unit.trim() {
        "" | "ms" => 1.0,
        "s" => 1000.0,
        "min" => 60_000.0,
        "h" => 3_600_000.0,
        "d" => 86_400_000.0,
        "us" => 0.001,
        _ => return None,
    };
    let ms = n * mult;
    (0.0..2_147_483_647.0).contains(&ms).then_some(ms as u64)
}

fn format_ms(ms: u64) -> String {
    match ms {
        0 => "0".into(),
        ms if ms % 3_600_000 == 0 => format!("{}h", ms / 3_600_000),
        ms if ms % 60_000 == 0 => format!("{}min", ms / 60_000),
        ms if ms % 1000 == 0 => format!("{}s", ms / 1000),
        ms => format!("{ms}ms"),
    }
}

impl Ctx {
    fn get(&self, name: &str) -> Option<String> {
        let lower = name.to_ascii_lowercase();
        self.gucs.get(&lower).cloned().or_else(|| self.shared.knobs.get(name).cloned())
    }

    fn set(&mut self, name: &str, value: &str) -> Result<String, SqlError> {
        let lower = name.to_ascii_lowercase();
        if self.shared.knobs.contains_key(name) {
            return Err(SqlError::new(
                SqlState::CANT_CHANGE_RUNTIME_PARAM,
                format!("parameter \"{name}\" cannot be changed now (turnstile knobs are set when the server starts)"),
            ));
        }
        let value = match lower.as_str() {
            l if TIMEOUTS.contains(&l) => {
                let ms = parse_ms(value).ok_or_else(|| {
                    SqlError::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        format!("invalid value for parameter \"{lower}\": \"{value}\""),
                    )
                })?;
                if lower == "deadlock_timeout" && ms == 0 {
                    return Err(SqlError::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        "deadlock_timeout must be at least 1ms",
                    ));
                }
                self.timeouts_dirty = true;
                format_ms(ms)
            }
            "plan_cache_mode" => match value.to_ascii_lowercase().as_str() {
                v @ ("auto" | "force_custom_plan" | "force_generic_plan") => v.to_owned(),
                _ => {
                    return Err(SqlError::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        format!("invalid value for parameter \"plan_cache_mode\": \"{value}\""),
                    ))
                }
            },
            "client_encoding" => match value.to_ascii_uppercase().replace(['-', '_'], "").as_str() {
                "UTF8" | "UNICODE" => "UTF8".to_owned(),
                _ => {
                    return Err(SqlError::new(
                        SqlState::FEATURE_NOT_SUPPORTED,
                        format!("conversion between {value} and UTF8 is not supported"),
                    ))
                }
            },
            "datestyle" => {
                let v = value.to_ascii_uppercase();
                if !v.contains("ISO")
                    && !v.trim().is_empty()
                    && !v.contains("MDY")
                    && !v.contains("DMY")
                    && !v.contains("YMD")
                {
                    return Err(SqlError::unsupported(&format!("DateStyle {value} (only ISO output)")));
                }
                "ISO, MDY".to_owned()
            }
            "timezone" => match value.to_ascii_uppercase().as_str() {
                "UTC" | "GMT" | "ETC/UTC" | "Z" | "0" | "+00" => "UTC".to_owned(),
                _ => return Err(SqlError::unsupported(&format!("time zone {value} (turnstile runs in UTC)"))),
            },
            l if FIXED.contains(&l) => {
                return Err(SqlError::new(
                    SqlState::CANT_CHANGE_RUNTIME_PARAM,
                    format!("parameter \"{lower}\" cannot be changed"),
                ));
            }
            "standard_conforming_strings" => match value.to_ascii_lowercase().as_str() {
                "on" | "true" | "1" => "on".to_owned(),
                _ => return Err(SqlError::unsupported("standard_conforming_strings = off")),
            },
            "transaction_isolation" | "default_transaction_isolation" => {
                // No MVCC: every isolation level behaves the same (locks only).
                value.to_ascii_lowercase()
            }
            _ => {
                if !self.gucs.contains_key(&lower) && !lower.contains('.') && !KNOWN_EXTRA.contains(&lower.as_str()) {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("unrecognized configuration parameter \"{name}\""),
                    ));
                }
                value.to_owned()
            }
        };
        if REPORTED.contains(&lower.as_str()) {
            self.param_changes.push((display_name(&lower).to_owned(), value.clone()));
        }
        self.gucs.insert(lower, value.clone());
        Ok(value)
    }

    /// `SET [LOCAL]`, `set_config(…, is_local)`, `RESET`: sets `name`,
    /// remembering inside a transaction block what the block's end must
    /// restore. `SET LOCAL` outside a block has no lasting effect (the
    /// caller warns, as PostgreSQL does).
    fn set_scoped(&mut self, name: &str, value: &str, local: bool) -> Result<String, SqlError> {
        let lower = name.to_ascii_lowercase();
        let before = self.gucs.get(&lower).cloned();
        let value = self.set(name, value)?;
        match &mut self.xact {
            Some(changed) => {
                let e = changed.entry(lower).or_insert_with(|| XactSetting { prior: before.clone(), keep: before });
                if !local {
                    e.keep = Some(value.clone());
                }
            }
            None if local => self.restore(&lower, before),
            None => {}
        }
        Ok(value)
    }

    /// Puts `value` back as `lower`'s setting, reporting the change.
    fn restore(&mut self, lower: &str, value: Option<String>) {
        if self.gucs.get(lower) == value.as_ref() {
            return;
        }
        match value {
            Some(v) => {
                if REPORTED.contains(&lower) {
                    self.param_changes.push((display_name(lower).to_owned(), v.clone()));
                }
                self.gucs.insert(lower.to_owned(), v);
            }
            None => {
                self.gucs.remove(lower);
            }
        }
        self.timeouts_dirty |= TIMEOUTS.contains(&lower);
    }

    /// The end of a transaction block: a commit keeps plain `SET`s and
    /// ends `SET LOCAL`s; a rollback restores every setting the block
    /// changed (PostgreSQL's `AtEOXact_GUC`).
    fn end_xact(&mut self, commit: bool) {
        for (name, s) in self.xact.take().unwrap_or_default() {
            self.restore(&name, if commit { s.keep } else { s.prior });
        }
    }

    /// `RESET name`: the value the session started with.
    fn reset_value(&self, name: &str) -> Result<String, SqlError> {
        let lower = name.to_ascii_lowercase();
        self.reset_values.get(&lower).cloned().ok_or_else(|| {
            SqlError::new(SqlState::UNDEFINED_OBJECT, format!("unrecognized configuration parameter \"{name}\""))
        })
    }
}

/// Settings fixed at server start.
const FIXED: &[&str] = &[
    "server_version",
    "server_encoding",
    "integer_datetimes",
    "is_superuser",
    "max_connections",
    "server_version_num",
];

/// The settings whose change must reach the lock manager or the timers.
const TIMEOUTS: &[&str] =
    &["lock_timeout", "deadlock_timeout", "statement_timeout", "idle_in_transaction_session_timeout"];

/// Settings accepted (and only echoed back): clients set them routinely.
const KNOWN_EXTRA: &[&str] = &[
    "work_mem",
    "maintenance_work_mem",
    "random_page_cost",
    "enable_seqscan",
    "enable_indexscan",
    "enable_bitmapscan",
    "jit",
    "row_security",
    "check_function_bodies",
    "xmloption",
    "lc_messages",
    "lc_monetary",
    "lc_numeric",
    "lc_time",
    "default_tablespace",
    "default_with_oids",
    "escape_string_warning",
    "log_statement",
    "log_min_duration_statement",
    "track_activities",
    "track_counts",
    "bytea_output",
    "vacuum_freeze_min_age",
];

impl Services for Ctx {
    fn pid(&self) -> i32 {
        self.pid
    }

    fn statement_timestamp(&self) -> i64 {
        self.stmt_ts
    }

    fn random(&mut self) -> f64 {
        // xorshift64*: fast, per session.
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn setting(&self, name: &str) -> Result<Option<String>, SqlError> {
        Ok(self.get(name))
    }

    fn set_setting(&mut self, name: &str, value: &str, local: bool) -> Result<String, SqlError> {
        self.set_scoped(name, value, local)
    }

    fn signal_backend(&mut self, pid: i32, terminate: bool, timeout_ms: i64) -> Result<bool, SqlError> {
        if timeout_ms < 0 {
            return Err(SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "\"timeout\" must not be negative"));
        }
        let target = self.shared.backends().into_iter().find(|b| b.pid == pid);
        let Some(target) = target else {
            self.notices.push(Notice {
                severity: Severity::Warning,
                code: SqlState::WARNING,
                message: format!("PID {pid} is not a PostgreSQL backend process"),
            });
            return Ok(false);
        };
        if !terminate {
            target.cancel.cancel();
            return Ok(true);
        }
        target.cancel.terminate();
        if timeout_ms == 0 || pid == self.pid {
            return Ok(true);
        }
        // pg_terminate_backend(pid, timeout): wait for the backend to leave.
        let end = std::time::Instant::now() + std::time::Duration::from_millis(timeout_ms as u64);
        while self.shared.backends().iter().any(|b| Arc::ptr_eq(b, &target)) {
            plan::check_cancel(self)?;
            if std::time::Instant::now() >= end {
                self.notices.push(Notice {
                    severity: Severity::Warning,
                    code: SqlState::WARNING,
                    message: format!("backend with PID {pid} did not terminate within {timeout_ms} milliseconds"),
                });
                return Ok(false);
            }
            // Polled, as PostgreSQL's pg_wait_until_termination does.
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        Ok(true)
    }

    fn cancel_flag(&self) -> &AtomicBool {
        &self.cancel
    }

    fn database(&self) -> &str {
        &self.database
    }

    fn relation_size(&self, name: &str) -> Result<i64, SqlError> {
        let engine = &self.shared.engine;
        let db = engine.catalog().database(&self.database).map_err(|e| SqlError::from_engine(e.into()))?;
        let rel = engine
            .catalog()
            .relation(db, name)
            .map_err(|_| SqlError::new(SqlState::UNDEFINED_TABLE, format!("relation \"{name}\" does not exist")))?;
        if !rel.kind.has_storage() {
            return Ok(0);
        }
        let file = turnstile_storage::rel::RelFileId::new(db, rel.id);
        let fork = turnstile_storage::rel::Fork::Main;
        let exists = engine.smgr().exists(file, fork).map_err(|e| SqlError::from_engine(e.into()))?;
        let blocks =
            if exists { engine.smgr().nblocks(file, fork).map_err(|e| SqlError::from_engine(e.into()))? } else { 0 };
        Ok(i64::from(blocks) * turnstile_storage::page::PAGE_SIZE as i64)
    }

    fn user(&self) -> &str {
        &self.user
    }

    fn shared(&self) -> &Shared {
        &self.shared
    }
}

/// One connection's session: lives on its backend thread.
#[derive(Debug)]
pub struct SqlSession {
    ctx: Ctx,
    es: Session,
    info: Arc<BackendInfo>,
    tx: TxStatus,
    wrote: bool,
    prepared: HashMap<String, Statement>,
    cancel: CancelHandle,
}

fn stmt_kind(s: &ast::Statement) -> String {
    let text = s.to_string();
    text.split_whitespace().take(2).collect::<Vec<_>>().join(" ").to_ascii_uppercase()
}

fn lock_mode(m: Option<&ast::LockTableMode>) -> LockMode {
    match m {
        None | Some(ast::LockTableMode::AccessExclusive) => LockMode::AccessExclusive,
        Some(ast::LockTableMode::AccessShare) => LockMode::AccessShare,
        Some(ast::LockTableMode::RowShare) => LockMode::RowShare,
        Some(ast::LockTableMode::RowExclusive) => LockMode::RowExclusive,
        Some(ast::LockTableMode::ShareUpdateExclusive) => LockMode::ShareUpdateExclusive,
        Some(ast::LockTableMode::Share) => LockMode::Share,
        Some(ast::LockTableMode::ShareRowExclusive) => LockMode::ShareRowExclusive,
        Some(ast::LockTableMode::Exclusive) => LockMode::Exclusive,
    }
}

fn text_row(row: &[Datum], types: &[SqlType]) -> Vec<Option<String>> {
    row.iter().zip(types).map(|(d, t)| d.to_text(*t)).collect()
}

/// COPY text format: `\N` is NULL, backslash escapes.
fn copy_escape(s: &str, out: &mut Vec<u8>) {
    for b in s.bytes() {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b => out.push(b),
        }
    }
}

fn copy_unescape(field: &str) -> Option<String> {
    if field == "\\N" {
        return None;
    }
    if !field.contains('\\') {
        return Some(field.to_owned());
    }
    let mut out = String::with_capacity(field.len());
    let mut it = field.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('v') => out.push('\u{b}'),
            Some(o) => out.push(o),
            None => out.push('\\'),
        }
    }
    Some(out)
}

/// Rows per engine call while COPY streams in.
const COPY_BATCH: usize = 10_000;

impl SqlSession {
    /// Opens a session on `database` (`3D000` if unknown; `53300` if every
    /// backend slot is taken).
    pub fn connect(
        e: &SqlEngine,
        database: &str,
        user: &str,
        application_name: &str,
        client_addr: Option<String>,
    ) -> Result<SqlSession, SqlError> {
        let shared = Arc::clone(&e.shared);
        let es = shared.engine.session_on(database).map_err(|err| {
            let mut s = SqlError::from_engine(err);
            s.severity = Severity::Fatal;
            if s.code == SqlState::INTERNAL_ERROR || s.code == SqlState::OUT_OF_MEMORY {
                s.code = SqlState::TOO_MANY_CONNECTIONS;
                s.message = "sorry, too many clients already".into();
            }
            s
        })?;
        let pid = views::PID_BASE + es.backend().id() as i32;
        let info = Arc::new(BackendInfo {
            pid,
            activity_slot: es.activity_slot(),
            datid: es.database(),
            datname: database.to_owned(),
            usename: user.to_owned(),
            client_addr,
            backend_start: now_timestamp(),
            application_name: Mutex::new(application_name.to_owned()),
            query: Mutex::new(String::new()),
            cancel: CancelHandle::new(es.backend().cancel_handle()),
        });
        if let Ok(mut r) = shared.registry.lock() {
            r.retain(|b| b.activity_slot != info.activity_slot);
            r.push(Arc::clone(&info));
        }
        let cancel = info.cancel.clone();
        let max_backends = shared.engine.config().lock.max_backends;
        let seed = (now_timestamp() as u64) ^ ((pid as u64) << 32) | 1;
        let gucs = default_gucs(user, application_name, max_backends);
        let ctx = Ctx {
            shared,
            pid,
            user: user.to_owned(),
            database: database.to_owned(),
            reset_values: gucs.clone(),
            gucs,
            rng: seed,
            stmt_ts: now_timestamp(),
            cancel: Arc::clone(&cancel.inner.cancel),
            param_changes: Vec::new(),
            timeouts_dirty: false,
            xact: None,
            statement_timeout_ms: 0,
            idle_in_transaction_ms: 0,
            notices: Vec::new(),
        };
        Ok(SqlSession { ctx, es, info, tx: TxStatus::Idle, wrote: false, prepared: HashMap::new(), cancel })
    }

    /// The backend's pid (`pg_backend_pid()`, BackendKeyData).
    pub fn pid(&self) -> i32 {
        self.ctx.pid
    }

    /// A handle that cancels this session's running statement.
    pub fn cancel_handle(&self) -> CancelHandle {
        self.cancel.clone()
    }

    /// Whether the session was asked to end (`pg_terminate_backend`,
    /// shutdown): its server ends it with FATAL `57P01`.
    pub fn terminate_requested(&self) -> bool {
        self.cancel.terminate_requested()
    }

    /// ParameterStatus values to send after authentication.
    pub fn startup_parameters(&self) -> Vec<(String, String)> {
        REPORTED.iter().filter_map(|k| self.ctx.gucs.get(*k).map(|v| (display_name(k).to_owned(), v.clone()))).collect()
    }

    /// The transaction state for ReadyForQuery.
    pub fn transaction_status(&self) -> TxStatus {
        self.tx
    }

    /// The engine session underneath.
    pub fn engine_session(&mut self) -> &mut Session {
        &mut self.es
    }

    fn make_statement(
        &mut self,
        sql: &str,
        piece: &str,
        offset: usize,
        types: &[u32],
        saved: bool,
    ) -> Result<Statement, SqlError> {
        let parsed = parse::parse_one(sql, piece, offset)?;
        let declared = types
            .iter()
            .map(|t| {
                SqlType::from_oid(*t).ok_or_else(|| {
                    SqlError::new(
                        SqlState::FEATURE_NOT_SUPPORTED,
                        format!("parameters of type OID {t} are not supported"),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let tag = match &parsed {
            Parsed::Empty => String::new(),
            Parsed::Pre(p) => match p {
                PreStmt::Vacuum { .. } => "VACUUM",
                PreStmt::Analyze(_) => "ANALYZE",
                PreStmt::Checkpoint => "CHECKPOINT",
                PreStmt::CopyFrom { .. } | PreStmt::CopyTo { .. } => "COPY",
            }
            .to_owned(),
            Parsed::Ast(a) => stmt_kind(a).split_whitespace().next().unwrap_or("").to_owned(),
        };
        let mut st = StatementInner {
            sql: piece.trim().to_owned(),
            parsed,
            param_types: Vec::new(),
            declared,
            fields: None,
            tag,
            saved,
            compiled: Mutex::new(None),
        };
        if saved {
            // Describe needs parameter types and result columns now.
            match &st.parsed {
                Parsed::Ast(a) => match a.as_ref() {
                    ast::Statement::Query(_)
                    | ast::Statement::Insert(_)
                    | ast::Statement::Update(_)
                    | ast::Statement::Delete(_) => {
                        let (compiled, params) = self.compile(&st)?;
                        st.param_types =
                            params.iter().map(|t| if *t == SqlType::Unknown { 25 } else { t.oid() }).collect();
                        if let Compiled::Select(p) = &compiled {
                            st.fields = Some(p.fields.clone());
                        }
                        let generation = self.es.engine().catalog().published_generation();
                        st.compiled = Mutex::new(Some((generation, Arc::new(compiled))));
                    }
                    ast::Statement::ShowVariable { variable } => {
                        let name = variable.iter().map(expr::ident_name).collect::<Vec<_>>().join(" ");
                        st.fields = Some(vec![text_field(&name)]);
                    }
                    ast::Statement::Explain { .. } => st.fields = Some(vec![text_field("QUERY PLAN")]),
                    ast::Statement::Execute { name: Some(n), .. } => {
                        if let Some(p) = object_name(n).ok().and_then(|n| self.prepared.get(&n)) {
                            st.fields = p.inner.fields.clone();
                        }
                    }
                    _ => {}
                },
                Parsed::Pre(PreStmt::CopyTo { .. }) | Parsed::Pre(_) | Parsed::Empty => {}
            }
            if st.param_types.len() < st.declared.len() {
                st.param_types = st.declared.iter().map(|t| t.oid()).collect();
            }
        }
        Ok(Statement { inner: Arc::new(st) })
    }

    fn compile(&self, st: &StatementInner) -> Result<(Compiled, Vec<SqlType>), SqlError> {
        let cat = Catalog { session: &self.es };
        let mut params = st.declared.clone();
        let compiled = match &st.parsed {
            Parsed::Ast(a) => match a.as_ref() {
                ast::Statement::Query(q) => Compiled::Select(Box::new(plan::compile_select(&cat, q, &mut params)?)),
                ast::Statement::Insert(i) => Compiled::Insert(plan::compile_insert(&cat, i, &mut params)?),
                ast::Statement::Update(u) => Compiled::Modify(plan::compile_update(&cat, u, &mut params)?),
                ast::Statement::Delete(d) => Compiled::Modify(plan::compile_delete(&cat, d, &mut params)?),
                other => return Err(SqlError::unsupported(&stmt_kind(other))),
            },
            _ => return Err(SqlError::new(SqlState::INTERNAL_ERROR, "not a compilable statement")),
        };
        Ok((compiled, params))
    }

    /// The cached compilation of `st`, redone if DDL ran since.
    fn compiled(&self, st: &Statement) -> Result<Arc<Compiled>, SqlError> {
        let generation = self.es.engine().catalog().published_generation();
        let mut slot = st
            .inner
            .compiled
            .lock()
            .map_err(|_| SqlError::new(SqlState::INTERNAL_ERROR, "statement cache poisoned"))?;
        if let Some((g, c)) = slot.as_ref() {
            if *g == generation {
                return Ok(Arc::clone(c));
            }
        }
        let (c, params) = self.compile(&st.inner)?;
        if st.inner.saved && params.len() != st.inner.param_types.len() {
            return Err(SqlError::new(SqlState::FEATURE_NOT_SUPPORTED, "cached plan must not change result type"));
        }
        let c = Arc::new(c);
        *slot = Some((generation, Arc::clone(&c)));
        Ok(c)
    }

    /// Parses a simple Query string into its statements.
    /// A syntax error inside a transaction block aborts it.
    pub fn parse_batch(&mut self, sql: &str) -> Result<Vec<Statement>, SqlError> {
        self.ctx.notices.clear();
        let pieces = parse::split(sql);
        let r = if pieces.is_empty() {
            self.make_statement(sql, "", 0, &[], false).map(|s| vec![s])
        } else {
            pieces.into_iter().map(|(offset, piece)| self.make_statement(sql, piece, offset, &[], false)).collect()
        };
        if r.is_err() {
            self.statement_failed();
        }
        r
    }

    /// Parses one statement for the extended protocol (Parse).
    pub fn prepare(&mut self, sql: &str, param_types: &[u32]) -> Result<Statement, SqlError> {
        self.ctx.notices.clear();
        let pieces = parse::split(sql);
        if self.tx == TxStatus::Failed {
            let first = pieces.first().map(|(_, p)| p.trim_start().to_ascii_lowercase()).unwrap_or_default();
            let exits = ["rollback", "commit", "end", "abort"];
            if !exits.iter().any(|w| first.starts_with(w)) {
                return Err(SqlError::new(
                    SqlState::IN_FAILED_SQL_TRANSACTION,
                    "current transaction is aborted, commands ignored until end of transaction block",
                ));
            }
        }
        let r = match pieces.as_slice() {
            [] => self.make_statement(sql, "", 0, param_types, true),
            [(offset, piece)] => self.make_statement(sql, piece, *offset, param_types, true),
            _ => {
                Err(SqlError::new(SqlState::SYNTAX_ERROR, "cannot insert multiple commands into a prepared statement"))
            }
        };
        if r.is_err() {
            self.statement_failed();
        }
        r
    }

    /// Executes a statement with text-format parameters.
    ///
    /// An error inside a transaction block aborts the transaction at once
    /// ([`SqlSession::statement_failed`]); `statement_timeout` cancels the
    /// statement with `57014`; a pending terminate ends the session with
    /// FATAL `57P01`.
    pub fn execute(&mut self, stmt: &Statement, params: &[Option<String>]) -> Result<Outcome, SqlError> {
        self.ctx.notices.clear();
        let is_end = matches!(
            &stmt.inner.parsed,
            Parsed::Ast(a) if matches!(a.as_ref(), ast::Statement::Commit { .. } | ast::Statement::Rollback { .. })
        );
        if self.tx == TxStatus::Failed && !is_end {
            return Err(SqlError::new(
                SqlState::IN_FAILED_SQL_TRANSACTION,
                "current transaction is aborted, commands ignored until end of transaction block",
            ));
        }
        if self.cancel.terminate_requested() {
            return Err(self.interrupted(SqlError::new(SqlState::QUERY_CANCELED, "")));
        }
        // A cancel that arrived while idle is not for this statement.
        self.cancel.clear();
        self.es.backend().clear_cancel();
        if self.tx == TxStatus::Idle {
            self.ctx.stmt_ts = now_timestamp();
        }
        self.info.set_query(&stmt.inner.sql);
        let timeout = (self.ctx.statement_timeout_ms > 0).then(|| {
            self.ctx.shared.timer.arm(&self.cancel, std::time::Duration::from_millis(self.ctx.statement_timeout_ms))
        });
        let result = self.dispatch(stmt, params);
        drop(timeout);
        let result = result.map_err(|e| self.interrupted(e));
        if result.is_err() {
            self.statement_failed();
        }
        if self.ctx.timeouts_dirty {
            self.apply_timeouts();
        }
        result
    }

    /// A canceled statement's error, as the interrupt's reason names it:
    /// `57014` for a cancel or a statement timeout, FATAL `57P01` when the
    /// session is being terminated.
    fn interrupted(&self, e: SqlError) -> SqlError {
        if e.code != SqlState::QUERY_CANCELED || e.severity != Severity::Error {
            return e;
        }
        if self.cancel.terminate_requested() {
            let mut f = SqlError::new(SqlState::ADMIN_SHUTDOWN, "terminating connection due to administrator command");
            f.severity = Severity::Fatal;
            return f;
        }
        match self.cancel.reason() {
            Reason::StatementTimeout => {
                SqlError::new(SqlState::QUERY_CANCELED, "canceling statement due to statement timeout")
            }
            Reason::User => e,
        }
    }

    /// A statement, or a protocol message, failed: inside a transaction
    /// block the transaction is aborted now, as PostgreSQL's
    /// `AbortTransaction` does — its writes undone through the undo log,
    /// its row and heavyweight locks released, its settings restored. The
    /// block stays failed (`25P02`) until `ROLLBACK` (or `COMMIT`, which
    /// answers `ROLLBACK`). Outside a block the failed statement was already
    /// undone by the engine.
    pub fn statement_failed(&mut self) {
        if self.tx != TxStatus::InBlock {
            return;
        }
        self.tx = TxStatus::Failed;
        self.abort_engine_transaction();
    }

    /// Undoes and ends the engine's transaction, restoring the block's
    /// settings; warns about what could not be undone.
    fn abort_engine_transaction(&mut self) {
        self.wrote = false;
        self.ctx.end_xact(false);
        if !self.es.in_transaction() {
            return;
        }
        match self.es.rollback() {
            Ok(report) => {
                for ddl in &report.kept_ddl {
                    self.notice(
                        Severity::Warning,
                        SqlState::WARNING,
                        format!("{ddl} is not transactional in turnstile: it stays"),
                    );
                }
                if report.kept_writes > 0 {
                    self.notice(
                        Severity::Warning,
                        SqlState::WARNING,
                        format!("{} writes could not be undone (undo log full): they stay", report.kept_writes),
                    );
                }
            }
            Err(e) => self.notice(
                Severity::Warning,
                SqlState::INTERNAL_ERROR,
                format!("rollback could not undo every write: {e}"),
            ),
        }
    }

    /// `idle_in_transaction_session_timeout`, if set: how long the server
    /// waits for the next message of a session inside a transaction block
    /// before it ends the session with FATAL `25P03`.
    pub fn idle_in_transaction_timeout(&self) -> Option<std::time::Duration> {
        (self.tx != TxStatus::Idle && self.ctx.idle_in_transaction_ms > 0)
            .then(|| std::time::Duration::from_millis(self.ctx.idle_in_transaction_ms))
    }

    fn apply_timeouts(&mut self) {
        self.ctx.timeouts_dirty = false;
        let ctx = &self.ctx;
        let ms = |name: &str, default: u64| ctx.get(name).and_then(|v| parse_ms(&v)).unwrap_or(default);
        let (lock, deadlock) = (ms("lock_timeout", 0), ms("deadlock_timeout", 1000).max(1));
        let (statement, idle) = (ms("statement_timeout", 0), ms("idle_in_transaction_session_timeout", 0));
        self.ctx.statement_timeout_ms = statement;
        self.ctx.idle_in_transaction_ms = idle;
        let b = self.es.backend_mut();
        b.set_lock_timeout((lock > 0).then(|| std::time::Duration::from_millis(lock)));
        b.set_deadlock_timeout(std::time::Duration::from_millis(deadlock));
    }

    fn typed_params(&self, stmt: &Statement, params: &[Option<String>]) -> Result<Vec<Datum>, SqlError> {
        let types = &stmt.inner.param_types;
        if !types.is_empty() && params.len() != types.len() {
            return Err(SqlError::new(
                SqlState::PROTOCOL_VIOLATION,
                format!(
                    "bind message supplies {} parameters, but prepared statement requires {}",
                    params.len(),
                    types.len()
                ),
            ));
        }
        params
            .iter()
            .enumerate()
            .map(|(i, p)| match p {
                None => Ok(Datum::Null),
                Some(s) => {
                    let ty = types.get(i).and_then(|t| SqlType::from_oid(*t)).unwrap_or(SqlType::Text);
                    Datum::parse(s, ty)
                }
            })
            .collect()
    }

    fn cache_mode(&self) -> CacheMode {
        match self.ctx.get("plan_cache_mode").as_deref() {
            Some("force_custom_plan") => CacheMode::ForceCustom,
            Some("force_generic_plan") => CacheMode::ForceGeneric,
            _ => CacheMode::Auto,
        }
    }

    fn dispatch(&mut self, stmt: &Statement, params: &[Option<String>]) -> Result<Outcome, SqlError> {
        match &stmt.inner.parsed {
            Parsed::Empty => Ok(Outcome::Empty),
            Parsed::Pre(p) => self.run_pre(p),
            Parsed::Ast(a) => match a.as_ref() {
                ast::Statement::Query(_) => {
                    let compiled = self.compiled(stmt)?;
                    let Compiled::Select(plan) = compiled.as_ref() else {
                        return Err(SqlError::new(SqlState::INTERNAL_ERROR, "statement compiled to the wrong kind"));
                    };
                    let values = self.typed_params(stmt, params)?;
                    let rows = self.run_select(plan, &values, !stmt.inner.saved)?;
                    let n = rows.len();
                    let rows = rows.iter().map(|r| text_row(r, &plan.out_types)).collect();
                    Ok(Outcome::Rows { fields: plan.fields.clone(), rows, tag: format!("SELECT {n}") })
                }
                ast::Statement::Insert(_) => {
                    let compiled = self.compiled(stmt)?;
                    let Compiled::Insert(plan) = compiled.as_ref() else {
                        return Err(SqlError::new(SqlState::INTERNAL_ERROR, "statement compiled to the wrong kind"));
                    };
                    let values = self.typed_params(stmt, params)?;
                    let cache_mode = self.cache_mode();
                    let mut run = Run {
                        session: &mut self.es,
                        env: EvalEnv { params: &values, aggs: &[], services: &mut self.ctx },
                        cache_mode,
                        one_shot: !stmt.inner.saved,
                    };
                    let n = plan.run(&mut run)?;
                    self.wrote = true;
                    Ok(Outcome::Command { tag: format!("INSERT 0 {n}") })
                }
                ast::Statement::Update(_) | ast::Statement::Delete(_) => {
                    let delete = matches!(a.as_ref(), ast::Statement::Delete(_));
                    let compiled = self.compiled(stmt)?;
                    let Compiled::Modify(plan) = compiled.as_ref() else {
                        return Err(SqlError::new(SqlState::INTERNAL_ERROR, "statement compiled to the wrong kind"));
                    };
                    let values = self.typed_params(stmt, params)?;
                    let cache_mode = self.cache_mode();
                    let mut run = Run {
                        session: &mut self.es,
                        env: EvalEnv { params: &values, aggs: &[], services: &mut self.ctx },
                        cache_mode,
                        one_shot: !stmt.inner.saved,
                    };
                    let n = plan.run(&mut run, delete)?;
                    self.wrote = true;
                    Ok(Outcome::Command { tag: format!("{} {n}", if delete { "DELETE" } else { "UPDATE" }) })
                }
                other => self.run_other(other, params),
            },
        }
    }

    fn run_select(&mut self, plan: &SelectPlan, values: &[Datum], one_shot: bool) -> Result<Vec<Vec<Datum>>, SqlError> {
        let cache_mode = self.cache_mode();
        let mut run = Run {
            session: &mut self.es,
            env: EvalEnv { params: values, aggs: &[], services: &mut self.ctx },
            cache_mode,
            one_shot,
        };
        plan.run(&mut run)
    }

    fn command(tag: &str) -> Result<Outcome, SqlError> {
        Ok(Outcome::Command { tag: tag.to_owned() })
    }

    fn notice(&mut self, severity: Severity, code: SqlState, message: impl Into<String>) {
        self.ctx.notices.push(Notice { severity, code, message: message.into() });
    }

    fn lock_with_partitions(&mut self, name: &str, mode: LockMode, wait: Wait) -> Result<(), SqlError> {
        let engine = Arc::clone(self.es.engine());
        let db = self.es.database();
        let rel = engine
            .catalog()
            .relation(db, name)
            .map_err(|_| SqlError::new(SqlState::UNDEFINED_TABLE, format!("relation \"{name}\" does not exist")))?;
        if rel.index.is_some() {
            return Err(SqlError::new(SqlState::WRONG_OBJECT_TYPE, format!("\"{name}\" is not a table")));
        }
        self.es.backend_mut().lock(LockTag::relation(db, rel.id), mode, wait).map_err(|e| lock_error(e, name, wait))?;
        let parts: Vec<u32> = engine.catalog().snapshot().partitions_of(rel.id).map(|p| p.id).collect();
        for p in parts {
            self.es.backend_mut().lock(LockTag::relation(db, p), mode, wait).map_err(|e| lock_error(e, name, wait))?;
        }
        Ok(())
    }

    fn run_pre(&mut self, p: &PreStmt) -> Result<Outcome, SqlError> {
        match p {
            PreStmt::Checkpoint => {
                eng(self.es.engine().flush())?;
                Self::command("CHECKPOINT")
            }
            PreStmt::Vacuum { full, analyze, tables } => {
                if self.tx != TxStatus::Idle {
                    return Err(SqlError::new(
                        SqlState::ACTIVE_SQL_TRANSACTION,
                        "VACUUM cannot run inside a transaction block",
                    ));
                }
                let targets: Vec<Option<&str>> =
                    if tables.is_empty() { vec![None] } else { tables.iter().map(|t| Some(t.as_str())).collect() };
                for t in targets {
                    eng(self.es.vacuum(t, *full))?;
                    if *analyze {
                        eng(self.es.analyze(t))?;
                    }
                }
                Self::command("VACUUM")
            }
            PreStmt::Analyze(tables) => {
                let targets: Vec<Option<&str>> =
                    if tables.is_empty() { vec![None] } else { tables.iter().map(|t| Some(t.as_str())).collect() };
                for t in targets {
                    eng(self.es.analyze(t))?;
                }
                Self::command("ANALYZE")
            }
            PreStmt::CopyFrom { table, columns, file, freeze: _ } => {
                let cat = Catalog { session: &self.es };
                let def = cat.table(table)?;
                let targets = if columns.is_empty() {
                    (0..def.names.len()).collect()
                } else {
                    columns
                        .iter()
                        .map(|c| {
                            def.names.iter().position(|n| n == c).ok_or_else(|| {
                                SqlError::new(
                                    SqlState::UNDEFINED_COLUMN,
                                    format!("column \"{c}\" of relation \"{table}\" does not exist"),
                                )
                            })
                        })
                        .collect::<Result<Vec<_>, _>>()?
                };
                let mut copy = CopyIn {
                    table: table.clone(),
                    types: def.types,
                    sql_types: def.sql_types,
                    targets,
                    partial: Vec::new(),
                    batch: Vec::new(),
                    count: 0,
                    done: false,
                };
                match file {
                    None => Ok(Outcome::CopyIn(copy)),
                    Some(path) => {
                        let data = std::fs::read(path).map_err(|e| {
                            SqlError::new(
                                SqlState::UNDEFINED_FILE,
                                format!("could not open file \"{path}\" for reading: {e}"),
                            )
                        })?;
                        self.copy_data(&mut copy, &data)?;
                        let tag = self.copy_done(copy)?;
                        Ok(Outcome::Command { tag })
                    }
                }
            }
            PreStmt::CopyTo { query, file } => {
                let st = self.make_statement(query, query, 0, &[], false)?;
                let compiled = self.compiled(&st)?;
                let Compiled::Select(plan) = compiled.as_ref() else {
                    return Err(SqlError::unsupported("COPY of a non-SELECT"));
                };
                let rows = self.run_select(plan, &[], true)?;
                let mut lines = Vec::with_capacity(rows.len());
                for r in &rows {
                    let mut line = Vec::new();
                    for (i, (d, t)) in r.iter().zip(&plan.out_types).enumerate() {
                        if i > 0 {
                            line.push(b'\t');
                        }
                        match d.to_text(*t) {
                            None => line.extend_from_slice(b"\\N"),
                            Some(s) => copy_escape(&s, &mut line),
                        }
                    }
                    line.push(b'\n');
                    lines.push(line);
                }
                let tag = format!("COPY {}", rows.len());
                match file {
                    None => Ok(Outcome::CopyOut { columns: plan.fields.len(), lines, tag }),
                    Some(path) => {
                        std::fs::write(path, lines.concat()).map_err(|e| {
                            SqlError::new(
                                SqlState::UNDEFINED_FILE,
                                format!("could not open file \"{path}\" for writing: {e}"),
                            )
                        })?;
                        Ok(Outcome::Command { tag })
                    }
                }
            }
        }
    }

    /// Feeds a CopyData chunk (lines may be split anywhere).
    pub fn copy_data(&mut self, copy: &mut CopyIn, data: &[u8]) -> Result<(), SqlError> {
        self.ctx.notices.clear();
        if copy.done {
            return Ok(());
        }
        copy.partial.extend_from_slice(data);
        let mut start = 0;
        let buf = std::mem::take(&mut copy.partial);
        while let Some(nl) = buf[start..].iter().position(|b| *b == b'\n') {
            let line = &buf[start..start + nl];
            start += nl + 1;
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line == b"\\." {
                copy.done = true;
                break;
            }
            let text = std::str::from_utf8(line).map_err(|_| {
                SqlError::new(SqlState::CHARACTER_NOT_IN_REPERTOIRE, "invalid byte sequence for encoding \"UTF8\"")
            })?;
            let fields: Vec<&str> = text.split('\t').collect();
            if fields.len() != copy.targets.len() {
                let what = if fields.len() < copy.targets.len() {
                    "missing data for column"
                } else {
                    "extra data after last expected column"
                };
                return Err(SqlError::new(
                    SqlState::BAD_COPY_FILE_FORMAT,
                    format!("{what} (COPY {}, line {})", copy.table, copy.count + copy.batch.len() as u64 + 1),
                ));
            }
            let mut row = vec![Value::Null; copy.types.len()];
            for (f, &t) in fields.iter().zip(&copy.targets) {
                if let Some(s) = copy_unescape(f) {
                    row[t] = Datum::parse(&s, copy.sql_types[t])?.to_engine(copy.types[t])?;
                }
            }
            copy.batch.push(row);
            if copy.batch.len() >= COPY_BATCH {
                self.flush_copy(copy)?;
            }
        }
        if !copy.done {
            copy.partial = buf[start..].to_vec();
        }
        Ok(())
    }

    fn flush_copy(&mut self, copy: &mut CopyIn) -> Result<(), SqlError> {
        plan::check_cancel(&self.ctx)?;
        let rows = std::mem::take(&mut copy.batch);
        if rows.is_empty() {
            return Ok(());
        }
        let n = self.es.insert_many(&copy.table, rows).map_err(SqlError::from_engine);
        let n = n?;
        self.wrote = true;
        copy.count += n;
        Ok(())
    }

    /// Ends a COPY FROM STDIN (CopyDone): the tag `COPY n`.
    pub fn copy_done(&mut self, mut copy: CopyIn) -> Result<String, SqlError> {
        self.ctx.notices.clear();
        if !copy.partial.is_empty() && !copy.done {
            let mut rest = std::mem::take(&mut copy.partial);
            rest.push(b'\n');
            self.copy_data(&mut copy, &rest)?;
        }
        let done = self.flush_copy(&mut copy);
        if done.is_err() {
            self.statement_failed();
        }
        done.map(|()| format!("COPY {}", copy.count))
    }

    /// Aborts a COPY FROM STDIN (CopyFail).
    pub fn copy_fail(&mut self, copy: CopyIn, message: &str) -> SqlError {
        let _ = copy;
        self.statement_failed();
        SqlError::new(SqlState::QUERY_CANCELED, format!("COPY from stdin failed: {message}"))
    }

    /// Notices produced by the last call.
    pub fn take_notices(&mut self) -> Vec<Notice> {
        std::mem::take(&mut self.ctx.notices)
    }

    /// ParameterStatus messages owed after a SET of a reported parameter.
    pub fn set_parameter_changes(&mut self) -> Vec<(String, String)> {
        let changes = std::mem::take(&mut self.ctx.param_changes);
        if let Some((_, v)) = changes.iter().rev().find(|(k, _)| k == "application_name") {
            if let Ok(mut a) = self.info.application_name.lock() {
                a.clone_from(v);
            }
        }
        changes
    }

    fn end_transaction(&mut self, commit: bool) -> Result<Outcome, SqlError> {
        match self.tx {
            TxStatus::Idle => {
                self.notice(
                    Severity::Warning,
                    SqlState::NO_ACTIVE_SQL_TRANSACTION,
                    "there is no transaction in progress",
                );
                Self::command(if commit { "COMMIT" } else { "ROLLBACK" })
            }
            TxStatus::InBlock if commit => {
                self.tx = TxStatus::Idle;
                self.wrote = false;
                self.ctx.end_xact(true);
                eng(self.es.commit())?;
                Self::command("COMMIT")
            }
            TxStatus::InBlock => {
                self.tx = TxStatus::Idle;
                self.abort_engine_transaction();
                Self::command("ROLLBACK")
            }
            // Aborted at the error already: only the block ends.
            TxStatus::Failed => {
                self.tx = TxStatus::Idle;
                Self::command("ROLLBACK")
            }
        }
    }

    fn run_other(&mut self, s: &ast::Statement, params: &[Option<String>]) -> Result<Outcome, SqlError> {
        use ast::Statement as S;
        match s {
            S::StartTransaction { statements, exception, .. } => {
                if !statements.is_empty() || exception.is_some() {
                    return Err(SqlError::unsupported("BEGIN … END blocks"));
                }
                if self.tx != TxStatus::Idle {
                    self.notice(
                        Severity::Warning,
                        SqlState::ACTIVE_SQL_TRANSACTION,
                        "there is already a transaction in progress",
                    );
                    return Self::command("BEGIN");
                }
                eng(self.es.begin())?;
                self.tx = TxStatus::InBlock;
                self.wrote = false;
                self.ctx.xact = Some(HashMap::new());
                self.ctx.stmt_ts = now_timestamp();
                Self::command(if matches!(s, S::StartTransaction { begin: false, .. }) {
                    "START TRANSACTION"
                } else {
                    "BEGIN"
                })
            }
            S::Commit { chain: false, .. } => self.end_transaction(true),
            S::Rollback { chain: false, savepoint: None } => self.end_transaction(false),
            S::Rollback { savepoint: Some(_), .. } => Err(SqlError::unsupported("ROLLBACK TO SAVEPOINT")),
            S::Set(set) => self.run_set(set),
            S::Reset(r) => self.run_reset(&r.reset),
            S::ShowVariable { variable } => {
                let name = variable.iter().map(expr::ident_name).collect::<Vec<_>>().join(" ");
                let raw = variable.iter().map(|i| i.value.clone()).collect::<Vec<_>>().join(" ");
                if name == "all" {
                    let mut all: BTreeMap<String, String> = self.ctx.gucs.clone().into_iter().collect();
                    for (k, v) in &self.ctx.shared.knobs {
                        all.insert(k.clone(), v.clone());
                    }
                    let rows = all.into_iter().map(|(k, v)| vec![Some(k), Some(v), None]).collect::<Vec<_>>();
                    let n = rows.len();
                    return Ok(Outcome::Rows {
                        fields: vec![text_field("name"), text_field("setting"), text_field("description")],
                        rows,
                        tag: format!("SHOW {n}"),
                    });
                }
                let v = self.ctx.get(&raw).or_else(|| self.ctx.get(&name)).ok_or_else(|| {
                    SqlError::new(SqlState::UNDEFINED_OBJECT, format!("unrecognized configuration parameter \"{raw}\""))
                })?;
                Ok(Outcome::Rows { fields: vec![text_field(&name)], rows: vec![vec![Some(v)]], tag: "SHOW".into() })
            }
            S::CreateTable(ct) => self.create_table(ct),
            S::CreateIndex(ci) => self.create_index(ci),
            S::AlterTable(at) => self.alter_table(at),
            S::Drop { object_type, if_exists, names, cascade: _, .. } => match object_type {
                ast::ObjectType::Table | ast::ObjectType::Index => {
                    let kind = if *object_type == ast::ObjectType::Table { "table" } else { "index" };
                    for n in names {
                        let name = object_name(n)?;
                        let exists = self.es.engine().catalog().relation(self.es.database(), &name).is_ok();
                        if !exists {
                            if *if_exists {
                                self.notice(
                                    Severity::Notice,
                                    SqlState::SUCCESSFUL_COMPLETION,
                                    format!("{kind} \"{name}\" does not exist, skipping"),
                                );
                                continue;
                            }
                            return Err(SqlError::new(
                                SqlState::UNDEFINED_TABLE,
                                format!("{kind} \"{name}\" does not exist"),
                            ));
                        }
                        eng(self.es.drop_relation(&name))?;
                    }
                    Self::command(if kind == "table" { "DROP TABLE" } else { "DROP INDEX" })
                }
                ast::ObjectType::Database => {
                    if self.tx != TxStatus::Idle {
                        return Err(SqlError::new(
                            SqlState::ACTIVE_SQL_TRANSACTION,
                            "DROP DATABASE cannot run inside a transaction block",
                        ));
                    }
                    for n in names {
                        let name = object_name(n)?;
                        match self.es.drop_database(&name).map_err(SqlError::from_engine) {
                            Ok(()) => {}
                            Err(e) if e.code == SqlState::INVALID_CATALOG_NAME && *if_exists => {
                                self.notice(
                                    Severity::Notice,
                                    SqlState::SUCCESSFUL_COMPLETION,
                                    format!("database \"{name}\" does not exist, skipping"),
                                );
                            }
                            Err(e) => return Err(e),
                        }
                    }
                    Self::command("DROP DATABASE")
                }
                other => Err(SqlError::unsupported(&format!("DROP {other}"))),
            },
            S::CreateDatabase { db_name, if_not_exists, .. } => {
                if self.tx != TxStatus::Idle {
                    return Err(SqlError::new(
                        SqlState::ACTIVE_SQL_TRANSACTION,
                        "CREATE DATABASE cannot run inside a transaction block",
                    ));
                }
                let name = object_name(db_name)?;
                match self.es.create_database(&name).map_err(SqlError::from_engine) {
                    Ok(_) => Self::command("CREATE DATABASE"),
                    Err(e) if e.code == SqlState::DUPLICATE_DATABASE && *if_not_exists => {
                        self.notice(
                            Severity::Notice,
                            SqlState::DUPLICATE_DATABASE,
                            format!("database \"{name}\" already exists, skipping"),
                        );
                        Self::command("CREATE DATABASE")
                    }
                    Err(e) => Err(e),
                }
            }
            S::Lock(l) => {
                if self.tx == TxStatus::Idle {
                    return Err(SqlError::new(
                        SqlState::NO_ACTIVE_SQL_TRANSACTION,
                        "LOCK TABLE can only be used in transaction blocks",
                    ));
                }
                let mode = lock_mode(l.lock_mode.as_ref());
                let wait = if l.nowait { Wait::NoWait } else { Wait::Block };
                for t in &l.tables {
                    let text = t.to_string();
                    let name = text.trim_start_matches("ONLY ").trim().trim_matches('"').to_ascii_lowercase();
                    self.lock_with_partitions(&name, mode, wait)?;
                }
                Self::command("LOCK TABLE")
            }
            S::Prepare { name, data_types, statement } => {
                let n = expr::ident_name(name);
                if self.prepared.contains_key(&n) {
                    return Err(SqlError::new(
                        SqlState::DUPLICATE_PREPARED_STATEMENT,
                        format!("prepared statement \"{n}\" already exists"),
                    ));
                }
                let types = data_types
                    .iter()
                    .map(|t| parse_type_name(&t.to_string()).map(|t| t.oid()))
                    .collect::<Result<Vec<_>, _>>()?;
                let text = statement.to_string();
                let st = self.make_statement(&text, &text, 0, &types, true)?;
                self.prepared.insert(n, st);
                Self::command("PREPARE")
            }
            S::Execute { name: Some(name), parameters, using, .. } => {
                if !using.is_empty() {
                    return Err(SqlError::unsupported("EXECUTE … USING"));
                }
                let n = object_name(name)?;
                let st = self.prepared.get(&n).cloned().ok_or_else(|| {
                    SqlError::new(
                        SqlState::INVALID_SQL_STATEMENT_NAME,
                        format!("prepared statement \"{n}\" does not exist"),
                    )
                })?;
                let outer = Statement {
                    inner: Arc::new(StatementInner {
                        sql: String::new(),
                        parsed: Parsed::Empty,
                        param_types: Vec::new(),
                        declared: Vec::new(),
                        fields: None,
                        tag: String::new(),
                        saved: false,
                        compiled: Mutex::new(None),
                    }),
                };
                let outer_params = self.typed_params(&outer, params)?;
                let empty = Scope::default();
                let mut vals = Vec::new();
                for (i, p) in parameters.iter().enumerate() {
                    let hint = st.inner.param_types.get(i).and_then(|t| SqlType::from_oid(*t));
                    let mut ptypes = Vec::new();
                    let (x, t) = Compiler { scope: &empty, params: &mut ptypes, aggs: None }.compile(p, hint)?;
                    let d = x.eval(&[], &mut EvalEnv { params: &outer_params, aggs: &[], services: &mut self.ctx })?;
                    vals.push(d.to_text(t));
                }
                self.dispatch(&st, &vals)
            }
            S::Deallocate { name, .. } => {
                let n = expr::ident_name(name);
                if n == "all" {
                    self.prepared.clear();
                } else if self.prepared.remove(&n).is_none() {
                    return Err(SqlError::new(
                        SqlState::INVALID_SQL_STATEMENT_NAME,
                        format!("prepared statement \"{n}\" does not exist"),
                    ));
                }
                Self::command("DEALLOCATE")
            }
            S::Explain { analyze, statement, .. } => self.explain(*analyze, statement),
            S::Truncate(t) => {
                let names = t.table_names.iter().map(|n| object_name(&n.name)).collect::<Result<Vec<_>, _>>()?;
                let refs: Vec<&str> = names.iter().map(String::as_str).collect();
                eng(self.es.truncate(&refs))?;
                self.wrote = true;
                Self::command("TRUNCATE TABLE")
            }
            other => Err(SqlError::unsupported(&stmt_kind(other))),
        }
    }

    /// `SET [LOCAL] name = value`: `SET LOCAL` outside a transaction block
    /// warns and changes nothing, as in PostgreSQL.
    fn set_command(&mut self, name: &str, value: &str, local: bool) -> Result<Outcome, SqlError> {
        self.ctx.set_scoped(name, value, local)?;
        if local && self.tx == TxStatus::Idle {
            self.notice(
                Severity::Warning,
                SqlState::NO_ACTIVE_SQL_TRANSACTION,
                "SET LOCAL can only be used in transaction blocks",
            );
        }
        Self::command("SET")
    }

    /// `RESET name` / `RESET ALL`: back to the session's start values
    /// (transactional like `SET`).
    fn run_reset(&mut self, r: &ast::Reset) -> Result<Outcome, SqlError> {
        let names: Vec<String> = match r {
            ast::Reset::ConfigurationParameter(n) => vec![n.to_string().trim_matches('"').to_owned()],
            ast::Reset::ALL => {
                // Only what a user can set: fixed parameters stay as they are.
                let mut n: Vec<String> = self
                    .ctx
                    .gucs
                    .keys()
                    .filter(|k| !FIXED.contains(&k.as_str()) && self.ctx.reset_values.get(*k) != self.ctx.gucs.get(*k))
                    .cloned()
                    .collect();
                n.sort();
                n
            }
            ast::Reset::SessionAuthorization => vec!["session_authorization".to_owned()],
        };
        for name in names {
            if FIXED.contains(&name.to_ascii_lowercase().as_str()) {
                return Err(SqlError::new(
                    SqlState::CANT_CHANGE_RUNTIME_PARAM,
                    format!("parameter \"{name}\" cannot be changed"),
                ));
            }
            match self.ctx.reset_value(&name) {
                Ok(v) => {
                    self.ctx.set_scoped(&name, &v, false)?;
                }
                // A custom (dotted) setting has no start value: RESET empties it.
                Err(_) if name.contains('.') || self.ctx.gucs.contains_key(&name.to_ascii_lowercase()) => {
                    self.ctx.set_scoped(&name, "", false)?;
                }
                Err(e) => return Err(e),
            }
        }
        Self::command("RESET")
    }

    fn run_set(&mut self, set: &ast::Set) -> Result<Outcome, SqlError> {
        match set {
            ast::Set::SingleAssignment { variable, values, scope, .. } => {
                let local = matches!(scope, Some(ast::ContextModifier::Local));
                let name = variable.to_string().trim_matches('"').to_owned();
                let value = values
                    .iter()
                    .map(|v| match v {
                        ast::Expr::Value(v) => match &v.value {
                            ast::Value::SingleQuotedString(s) => s.clone(),
                            other => other.to_string(),
                        },
                        ast::Expr::Identifier(i) => i.value.clone(),
                        other => other.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                let value = if value.eq_ignore_ascii_case("default") { self.ctx.reset_value(&name)? } else { value };
                self.set_command(&name, &value, local)
            }
            ast::Set::SetTimeZone { value, local } => {
                let v = match value {
                    ast::Expr::Value(v) => match &v.value {
                        ast::Value::SingleQuotedString(s) => s.clone(),
                        other => other.to_string(),
                    },
                    other => other.to_string(),
                };
                self.set_command("timezone", &v, *local)
            }
            ast::Set::SetNames { charset_name, .. } => {
                self.set_command("client_encoding", &charset_name.to_string(), false)
            }
            other => Err(SqlError::unsupported(&format!("{other}"))),
        }
    }

    fn create_table(&mut self, ct: &ast::CreateTable) -> Result<Outcome, SqlError> {
        let name = object_name(&ct.name)?;
        if ct.query.is_some() {
            return Err(SqlError::unsupported("CREATE TABLE … AS"));
        }
        if ct.if_not_exists && self.es.engine().catalog().relation(self.es.database(), &name).is_ok() {
            self.notice(
                Severity::Notice,
                SqlState::DUPLICATE_TABLE,
                format!("relation \"{name}\" already exists, skipping"),
            );
            return Self::command("CREATE TABLE");
        }
        let fillfactor = table_fillfactor(&ct.table_options)?;
        if let Some(parent) = &ct.partition_of {
            let parent = object_name(parent)?;
            let bound = match &ct.for_values {
                Some(ast::ForValues::From { from, to }) if from.len() == 1 && to.len() == 1 => {
                    PartitionBound::Range { from: bound_value(&from[0], i64::MIN)?, to: bound_value(&to[0], i64::MAX)? }
                }
                Some(ast::ForValues::With { modulus, remainder }) => PartitionBound::Hash {
                    modulus: u32::try_from(*modulus)
                        .map_err(|_| SqlError::new(SqlState::INVALID_PARAMETER_VALUE, "modulus out of range"))?,
                    remainder: u32::try_from(*remainder)
                        .map_err(|_| SqlError::new(SqlState::INVALID_PARAMETER_VALUE, "remainder out of range"))?,
                },
                Some(ast::ForValues::Default) => return Err(SqlError::unsupported("DEFAULT partitions")),
                Some(ast::ForValues::In(_)) => return Err(SqlError::unsupported("list partitions")),
                _ => return Err(SqlError::unsupported("multi-column partition bounds")),
            };
            eng(self.es.create_partition(&parent, &name, bound))?;
            if fillfactor.is_some() {
                eng(self.es.set_fillfactor(&name, fillfactor))?;
            }
            return Self::command("CREATE TABLE");
        }
        let mut cols: Vec<(String, ColumnType)> = Vec::new();
        let mut pk: Option<Vec<String>> = None;
        for c in &ct.columns {
            let ty = parse_type_name(&c.data_type.to_string())?.to_column()?;
            let cname = expr::ident_name(&c.name);
            for o in &c.options {
                match &o.option {
                    ast::ColumnOption::Null | ast::ColumnOption::NotNull => {}
                    ast::ColumnOption::PrimaryKey(_) => pk = Some(vec![cname.clone()]),
                    other => return Err(SqlError::unsupported(&format!("the column option {other}"))),
                }
            }
            cols.push((cname, ty));
        }
        for con in &ct.constraints {
            match con {
                ast::TableConstraint::PrimaryKey(p) => {
                    pk = Some(p.columns.iter().map(|c| c.to_string().trim_matches('"').to_ascii_lowercase()).collect())
                }
                other => return Err(SqlError::unsupported(&format!("the constraint {other}"))),
            }
        }
        let partition_by = match &ct.partition_by {
            None => None,
            Some(e) => Some(partition_spec(e)?),
        };
        let col_refs: Vec<(&str, ColumnType)> = cols.iter().map(|(n, t)| (n.as_str(), *t)).collect();
        let pb = partition_by.as_ref().map(|(s, c)| (*s, c.as_str()));
        eng(self.es.create_table(&name, &col_refs, pb))?;
        if fillfactor.is_some() {
            eng(self.es.set_fillfactor(&name, fillfactor))?;
        }
        if let Some(cols) = pk {
            let refs: Vec<&str> = cols.iter().map(String::as_str).collect();
            eng(self.es.add_primary_key(&name, &refs))?;
        }
        Self::command("CREATE TABLE")
    }

    fn create_index(&mut self, ci: &ast::CreateIndex) -> Result<Outcome, SqlError> {
        let table = object_name(&ci.table_name)?;
        if ci.predicate.is_some() {
            return Err(SqlError::unsupported("partial indexes"));
        }
        if ci.using.as_ref().is_some_and(|u| !u.to_string().eq_ignore_ascii_case("btree")) {
            return Err(SqlError::unsupported("index methods other than btree"));
        }
        let mut cols = Vec::new();
        for c in &ci.columns {
            match &c.column.expr {
                ast::Expr::Identifier(i) => cols.push(expr::ident_name(i)),
                other => return Err(SqlError::unsupported(&format!("an index on the expression {other}"))),
            }
        }
        let name = match &ci.name {
            Some(n) => object_name(n)?,
            None => {
                // PostgreSQL's ChooseRelationName: table_col_idx, then _idx1, …
                let base = format!("{table}_{}_{}", cols.join("_"), if ci.unique { "key" } else { "idx" });
                let cat = self.es.engine().catalog().snapshot();
                let db = self.es.database();
                let mut candidate = base.clone();
                let mut k = 0;
                while cat.find(db, &candidate).is_some() {
                    k += 1;
                    candidate = format!("{base}{k}");
                }
                candidate
            }
        };
        if ci.if_not_exists && self.es.engine().catalog().relation(self.es.database(), &name).is_ok() {
            self.notice(
                Severity::Notice,
                SqlState::DUPLICATE_TABLE,
                format!("relation \"{name}\" already exists, skipping"),
            );
            return Self::command("CREATE INDEX");
        }
        let refs: Vec<&str> = cols.iter().map(String::as_str).collect();
        eng(self.es.create_index(&table, &name, &refs, ci.unique))?;
        Self::command("CREATE INDEX")
    }

    fn alter_table(&mut self, at: &ast::AlterTable) -> Result<Outcome, SqlError> {
        let table = object_name(&at.name)?;
        for op in &at.operations {
            match op {
                ast::AlterTableOperation::AddColumn { column_def, if_not_exists, .. } => {
                    let ty = parse_type_name(&column_def.data_type.to_string())?.to_column()?;
                    if !column_def.options.is_empty() {
                        return Err(SqlError::unsupported("column options in ADD COLUMN"));
                    }
                    let cname = expr::ident_name(&column_def.name);
                    match self.es.add_column(&table, &cname, ty) {
                        Err(turnstile_engine::EngineError::Catalog(
                            turnstile_engine::catalog::CatalogError::DuplicateColumn { .. },
                        )) if *if_not_exists => {
                            self.notice(
                                Severity::Notice,
                                SqlState::DUPLICATE_COLUMN,
                                format!("column \"{cname}\" of relation \"{table}\" already exists, skipping"),
                            );
                        }
                        r => eng(r)?,
                    }
                }
                ast::AlterTableOperation::AddConstraint { constraint: ast::TableConstraint::PrimaryKey(p), .. } => {
                    let cols: Vec<String> =
                        p.columns.iter().map(|c| c.to_string().trim_matches('"').to_ascii_lowercase()).collect();
                    let refs: Vec<&str> = cols.iter().map(String::as_str).collect();
                    if p.name.is_some() {
                        return Err(SqlError::unsupported("a named primary key constraint"));
                    }
                    eng(self.es.add_primary_key(&table, &refs))?;
                }
                other => return Err(SqlError::unsupported(&format!("ALTER TABLE … {other}"))),
            }
        }
        Self::command("ALTER TABLE")
    }

    fn explain(&mut self, analyze: bool, statement: &ast::Statement) -> Result<Outcome, SqlError> {
        let ast::Statement::Query(_) = statement else {
            return Err(SqlError::unsupported("EXPLAIN of anything but SELECT"));
        };
        let text = statement.to_string();
        let st = self.make_statement(&text, &text, 0, &[], false)?;
        let started = std::time::Instant::now();
        let compiled = self.compiled(&st)?;
        let Compiled::Select(plan) = compiled.as_ref() else {
            return Err(SqlError::new(SqlState::INTERNAL_ERROR, "statement compiled to the wrong kind"));
        };
        let mut lines: Vec<String> = Vec::new();
        let planning;
        match &plan.source {
            plan::Source::Engine { query, .. } => {
                let e = eng(self.es.explain(query))?;
                planning =
                    self.es.last_planning_time() + started.elapsed().saturating_sub(self.es.last_planning_time());
                lines.extend(e.lines().map(str::to_owned));
            }
            plan::Source::One => {
                planning = started.elapsed();
                lines.push("Result".into());
            }
            plan::Source::Rows(items) => {
                planning = started.elapsed();
                for it in items {
                    lines.push(match &it.producer {
                        plan::Producer::View(v) => format!("Function Scan on {v:?} (system view)"),
                        plan::Producer::Series(..) => "Function Scan on generate_series".into(),
                    });
                }
            }
        }
        if plan.residual.is_some() {
            lines.push("  Filter: (residual predicate evaluated by turnstile-sql)".into());
        }
        if plan.grouped {
            lines.insert(0, "Aggregate (turnstile-sql)".into());
        }
        lines.push(format!("Planning Time: {:.3} ms", planning.as_secs_f64() * 1e3));
        if analyze {
            let t = std::time::Instant::now();
            let rows = self.run_select(plan, &[], true)?;
            lines.push(format!("Rows: {}", rows.len()));
            lines.push(format!("Execution Time: {:.3} ms", t.elapsed().as_secs_f64() * 1e3));
        }

        Ok(Outcome::Rows {
            fields: vec![text_field("QUERY PLAN")],
            rows: lines.into_iter().map(|l| vec![Some(l)]).collect(),
            tag: "EXPLAIN".into(),
        })
    }
}

fn eng<T>(r: turnstile_engine::Result<T>) -> Result<T, SqlError> {
    r.map_err(SqlError::from_engine)
}

fn lock_error(e: turnstile_lock::LockError, name: &str, wait: Wait) -> SqlError {
    SqlError::from_lock(&e, (wait == Wait::NoWait).then_some(name))
}

fn text_field(name: &str) -> FieldInfo {
    FieldInfo { name: name.to_owned(), table_oid: 0, column: 0, type_oid: 25, type_len: -1, type_modifier: -1 }
}

fn bound_value(v: &ast::PartitionBoundValue, inf: i64) -> Result<i64, SqlError> {
    match v {
        ast::PartitionBoundValue::MinValue | ast::PartitionBoundValue::MaxValue => {
            let min = matches!(v, ast::PartitionBoundValue::MinValue);
            if (inf == i64::MIN) != min {
                // MAXVALUE as a lower bound or MINVALUE as an upper one: an empty range.
                return Ok(if min { i64::MIN } else { i64::MAX });
            }
            Ok(inf)
        }
        ast::PartitionBoundValue::Expr(e) => {
            let empty = Scope::default();
            let mut p = Vec::new();
            let (x, _) = Compiler { scope: &empty, params: &mut p, aggs: None }.compile(e, Some(SqlType::Int8))?;
            match x {
                expr::Expr::Const(d) => match d.cast(SqlType::Int8)? {
                    Datum::Int(v) => Ok(v),
                    _ => Err(SqlError::new(SqlState::NULL_VALUE_NOT_ALLOWED, "partition bound is NULL")),
                },
                _ => Err(SqlError::new(SqlState::INVALID_OBJECT_DEFINITION, "partition bound must be a constant")),
            }
        }
    }
}

fn partition_spec(e: &ast::Expr) -> Result<(PartitionStrategy, String), SqlError> {
    // sqlparser keeps `PARTITION BY RANGE (aid)` as an expression; read it from its text.
    let text = e.to_string().to_ascii_lowercase();
    let (strategy, rest) = if let Some(r) = text.strip_prefix("range") {
        (PartitionStrategy::Range, r)
    } else if let Some(r) = text.strip_prefix("hash") {
        (PartitionStrategy::Hash, r)
    } else {
        return Err(SqlError::unsupported(&format!("PARTITION BY {text}")));
    };
    let col = rest.trim().trim_start_matches('(').trim_end_matches(')').trim().trim_matches('"').to_owned();
    if col.is_empty() || col.contains(',') || col.contains('(') {
        return Err(SqlError::unsupported("a partition key other than one column"));
    }
    Ok((strategy, col))
}

fn table_fillfactor(o: &ast::CreateTableOptions) -> Result<Option<u8>, SqlError> {
    let opts = match o {
        ast::CreateTableOptions::None => return Ok(None),
        ast::CreateTableOptions::With(v) => v,
        other => return Err(SqlError::unsupported(&format!("table options {other}"))),
    };
    let mut ff = None;
    for opt in opts {
        let text = opt.to_string().to_ascii_lowercase().replace(' ', "");
        match text.strip_prefix("fillfactor=") {
            Some(v) => {
                let n: u8 = v.parse().ok().filter(|n| (10..=100).contains(n)).ok_or_else(|| {
                    SqlError::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        format!("value {v} out of bounds for option \"fillfactor\""),
                    )
                })?;
                ff = Some(n);
            }
            None => return Err(SqlError::unsupported(&format!("the storage parameter {text}"))),
        }
    }
    Ok(ff)
}

impl Drop for SqlSession {
    fn drop(&mut self) {
        if let Ok(mut r) = self.ctx.shared.registry.lock() {
            r.retain(|b| !Arc::ptr_eq(b, &self.info));
        }
        // Every exit that is not COMMIT rolls back: a closed or broken
        // connection, a terminate, a shutdown.
        if self.es.in_transaction() {
            let _ = self.es.rollback();
        }
    }
}
