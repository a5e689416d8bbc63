//! What every session shares: the engine, the registry of connected
//! backends (`pg_stat_activity`, `pg_cancel_backend`), the statement timer.

use crate::error::SqlError;
use crate::interrupt::{CancelHandle, Timer};
use crate::value::now_timestamp;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use turnstile_engine::Engine;

/// What every session shares: the engine and the registry of connected
/// backends (for `pg_stat_activity`).
#[derive(Debug)]
pub struct Shared {
    pub(crate) engine: Arc<Engine>,
    pub(crate) registry: Mutex<Vec<Arc<BackendInfo>>>,
    /// Wall-clock timestamp (PostgreSQL epoch, µs) when the engine opened:
    /// the lock manager's and activity table's time origin.
    pub started: i64,
    pub(crate) knobs: BTreeMap<String, String>,
    /// Fires `statement_timeout`s.
    pub(crate) timer: Timer,
    /// Every sequence.
    pub(crate) sequences: crate::sequence::Sequences,
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
    pub(crate) application_name: Mutex<String>,
    pub(crate) query: Mutex<String>,
    /// Cancels or terminates the backend (`pg_cancel_backend`,
    /// `pg_terminate_backend`).
    pub(crate) cancel: CancelHandle,
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

    pub(crate) fn set_query(&self, text: &str) {
        if let Ok(mut q) = self.query.lock() {
            q.clear();
            q.push_str(&text[..floor_char(text, 1024)]);
        }
    }
}

pub(crate) fn floor_char(s: &str, max: usize) -> usize {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    end
}

/// One open data directory, shared by every connection.
#[derive(Clone, Debug)]
pub struct SqlEngine {
    pub(crate) shared: Arc<Shared>,
}

pub(crate) fn flatten_toml(prefix: &str, v: &toml::Value, out: &mut BTreeMap<String, String>) {
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
        let block = config.txn.sequence_block;
        let engine = Engine::open(data_dir, config)?;
        let sequences = crate::sequence::Sequences::open_with(data_dir, block, Some(Arc::clone(engine.log())))?;
        let started = now_timestamp();
        let mut knobs = BTreeMap::new();
        if let Ok(v) = engine.config().to_toml_string().parse::<toml::Table>() {
            flatten_toml("", &toml::Value::Table(v), &mut knobs);
        }
        let shared = Arc::new(Shared {
            engine,
            registry: Mutex::new(Vec::new()),
            started,
            knobs,
            timer: Timer::default(),
            sequences,
        });
        crate::index_expr::register(&shared);
        Ok(SqlEngine { shared })
    }

    /// The engine underneath.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.shared.engine
    }

    /// A checkpoint (`CHECKPOINT`).
    pub fn flush(&self) -> Result<(), SqlError> {
        self.shared.engine.flush().map_err(SqlError::from)
    }

    /// The checkpoint of a clean shutdown ([`turnstile_engine::Engine::close`]).
    pub fn close(&self) -> Result<(), SqlError> {
        self.shared.engine.close().map_err(SqlError::from)
    }
}
