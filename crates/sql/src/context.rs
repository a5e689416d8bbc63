//! [`Ctx`]: the session state that SQL functions read and change (the
//! [`Services`] an expression evaluates with).

use crate::error::{Notice, Severity, SqlError};
use crate::expr::Services;
use crate::plan;
use crate::shared::Shared;
use crate::sync::atomic::AtomicBool;
use crate::typed_settings::{GucValue, Settings};
use std::collections::HashMap;
use std::sync::Arc;
use turnstile_engine::EngineError;
use turnstile_lock::SqlState;

/// Session state that functions read and change.
#[derive(Debug)]
pub(crate) struct Ctx {
    pub(crate) shared: Arc<Shared>,
    pub(crate) pid: i32,
    pub(crate) user: String,
    pub(crate) database: String,
    pub(crate) gucs: Settings,
    pub(crate) rng: u64,
    pub(crate) stmt_ts: i64,
    pub(crate) cancel: Arc<AtomicBool>,
    pub(crate) param_changes: Vec<(String, String)>,
    pub(crate) timeouts_dirty: bool,
    /// The values `RESET` goes back to: the session's start (defaults and
    /// the startup packet's).
    pub(crate) reset_values: Settings,
    /// Settings changed by the open transaction block (`None` outside one):
    /// what they were before it and what a commit keeps.
    pub(crate) xact: Option<HashMap<String, XactSetting>>,
    /// Notices of the current call.
    pub(crate) notices: Vec<Notice>,
    /// The database's OID.
    pub(crate) db_oid: u32,
    /// This session's sequence blocks, `currval` and `lastval`.
    pub(crate) sequences: crate::sequence::SeqSession,
}

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
        let db = engine.catalog().database(&self.database).map_err(|e| SqlError::from(EngineError::from(e)))?;
        let rel = engine
            .catalog()
            .relation(db, name)
            .map_err(|_| SqlError::new(SqlState::UNDEFINED_TABLE, format!("relation \"{name}\" does not exist")))?;
        if !rel.kind.has_storage() {
            return Ok(0);
        }
        let file = turnstile_storage::rel::RelFileId::new(db, rel.id);
        let fork = turnstile_storage::rel::Fork::Main;
        let exists = engine.smgr().exists(file, fork).map_err(|e| SqlError::from(EngineError::from(e)))?;
        let blocks = if exists {
            engine.smgr().nblocks(file, fork).map_err(|e| SqlError::from(EngineError::from(e)))?
        } else {
            0
        };
        Ok(i64::from(blocks) * turnstile_storage::page::PAGE_SIZE as i64)
    }

    fn user(&self) -> &str {
        &self.user
    }

    fn shared(&self) -> &Shared {
        &self.shared
    }

    fn functions(&self) -> &'static [&'static crate::expr::FuncDef] {
        crate::expr::functions::registry::FUNCTIONS
    }

    fn settings(&self) -> Vec<(String, String)> {
        let mut names: Vec<String> = self.gucs.names().map(str::to_owned).collect();
        names.extend(self.shared.knobs.keys().cloned());
        names.dedup();
        names.into_iter().filter_map(|n| self.get(&n).map(|v| (n, v))).collect()
    }

    fn sequences(&mut self) -> (&crate::sequence::Sequences, &mut crate::sequence::SeqSession, u32) {
        (&self.shared.sequences, &mut self.sequences, self.db_oid)
    }
}

/// One setting changed inside a transaction block: PostgreSQL's GUC stack
/// entry for one nesting level (there are no savepoints).
#[derive(Clone, Debug)]
pub(crate) struct XactSetting {
    /// The value before the block (`None`: it had none): what a rollback restores.
    pub(crate) prior: Option<GucValue>,
    /// What a commit keeps: `prior` until a plain `SET`, whose value it
    /// becomes; `SET LOCAL` leaves it (its value ends with the block).
    pub(crate) keep: Option<GucValue>,
}
