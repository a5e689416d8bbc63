//! Settings (PostgreSQL's GUCs): `SET`, `SET LOCAL`, `RESET`, `SHOW`'s
//! values, their transactional undo, and the timeouts they drive.

use crate::error::{Severity, SqlError};
use crate::gucs::{display_name, FIXED, REPORTED};
use crate::session::{SqlSession, TxStatus};
use crate::statement::{show_name, text_field, Outcome};
use sqlparser::ast;
use std::collections::BTreeMap;
use turnstile_lock::SqlState;

impl SqlSession {
    /// ParameterStatus values to send after authentication.
    pub fn startup_parameters(&self) -> Vec<(String, String)> {
        REPORTED.iter().filter_map(|k| self.ctx.gucs.get(k).map(|v| (display_name(k).to_owned(), v.text()))).collect()
    }

    /// Applies the settings a startup packet carries (`TimeZone`,
    /// `DateStyle`, `extra_float_digits`, …): each a known setting's
    /// value, which `RESET` then returns to. Names that are not settings
    /// (`user`, `database`, `options`, `replication`, a driver's own
    /// extras) are left alone; a bad value is the connection's error.
    pub fn apply_startup_settings(&mut self, params: &[(&str, &str)]) -> Result<(), SqlError> {
        crate::value::zone::set_session_zone("UTC")?;
        for (name, value) in params {
            let lower = name.to_ascii_lowercase();
            if matches!(lower.as_str(), "user" | "database" | "application_name" | "options" | "replication") {
                continue;
            }
            if self.ctx.get(&lower).is_some() && !self.ctx.shared.knobs.contains_key(*name) {
                self.ctx.set(name, value)?;
            }
        }
        self.ctx.param_changes.clear();
        self.ctx.reset_values = self.ctx.gucs.clone();
        Ok(())
    }

    /// Setting `name`'s value, as `SHOW` prints it.
    pub fn setting(&self, name: &str) -> Option<String> {
        self.ctx.get(name)
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

    pub(crate) fn apply_timeouts(&mut self) {
        self.ctx.timeouts_dirty = false;
        let (lock, deadlock) = (self.ctx.gucs.lock_timeout_ms, self.ctx.gucs.deadlock_timeout_ms.max(1));
        let b = self.es.backend_mut();
        b.set_lock_timeout((lock > 0).then(|| std::time::Duration::from_millis(lock)));
        b.set_deadlock_timeout(std::time::Duration::from_millis(deadlock));
    }

    /// `SET [LOCAL] name = value`: `SET LOCAL` outside a transaction block
    /// warns and changes nothing, as in PostgreSQL.
    pub(crate) fn set_command(&mut self, name: &str, value: &str, local: bool) -> Result<Outcome, SqlError> {
        self.ctx.set_scoped(name, value, local)?;
        if name.eq_ignore_ascii_case("synchronous_commit") {
            let on = self.ctx.get("synchronous_commit").is_none_or(|v| !v.eq_ignore_ascii_case("off"));
            self.es.set_synchronous_commit(on);
        }
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
    pub(crate) fn run_reset(&mut self, r: &ast::Reset) -> Result<Outcome, SqlError> {
        let names: Vec<String> = match r {
            ast::Reset::ConfigurationParameter(n) => vec![n.to_string().trim_matches('"').to_owned()],
            ast::Reset::ALL => {
                // Only what a user can set: fixed parameters stay as they are.
                let (now, start) = (&self.ctx.gucs, &self.ctx.reset_values);
                let mut n: Vec<String> = now
                    .names()
                    .filter(|k| !FIXED.contains(k) && start.get(k) != now.get(k))
                    .map(str::to_owned)
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
                Err(_) if name.contains('.') || self.ctx.gucs.get(&name.to_ascii_lowercase()).is_some() => {
                    self.ctx.set_scoped(&name, "", false)?;
                }
                Err(e) => return Err(e),
            }
        }
        Self::command("RESET")
    }

    pub(crate) fn run_set(&mut self, set: &ast::Set) -> Result<Outcome, SqlError> {
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
                if name.eq_ignore_ascii_case("transaction_isolation") {
                    return self.set_transaction_isolation(Some(crate::command::isolation_named(&value)?));
                }
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
            ast::Set::SetTransaction { modes, session: false, .. } => {
                let out = self.set_transaction_isolation(crate::command::isolation_of(modes)?)?;
                self.set_transaction_access_mode(crate::command::access_mode_of(modes))?;
                Ok(out)
            }
            ast::Set::SetTransaction { modes, session: true, .. } => self.set_session_characteristics(modes),
            ast::Set::SetNames { charset_name, .. } => {
                self.set_command("client_encoding", &charset_name.to_string(), false)
            }
            other => Err(SqlError::unsupported(&format!("{other}"))),
        }
    }

    /// `SHOW name` / `SHOW ALL`.
    pub(crate) fn show(&mut self, variable: &[ast::Ident]) -> Result<Outcome, SqlError> {
        let name = show_name(variable);
        let raw = variable.iter().map(|i| i.value.clone()).collect::<Vec<_>>().join(" ");
        if name == "all" {
            let gucs = &self.ctx.gucs;
            let mut all: BTreeMap<String, String> =
                gucs.names().filter_map(|k| Some((k.to_owned(), gucs.get(k)?.text()))).collect();
            for (k, v) in &self.ctx.shared.knobs {
                all.insert(k.clone(), v.clone());
            }
            let rows = all.into_iter().map(|(k, v)| vec![Some(k), Some(v), None]).collect::<Vec<_>>();
            let n = rows.len();
            return Ok(Outcome::Rows {
                fields: vec![text_field("name"), text_field("setting"), text_field("description")].into(),
                rows: rows.into(),
                tag: format!("SHOW {n}"),
            });
        }
        if name == "transaction_isolation" || name == "transaction isolation level" {
            let v = self.transaction_isolation();
            return Ok(Outcome::Rows {
                fields: vec![text_field("transaction_isolation")].into(),
                rows: vec![vec![Some(v)]].into(),
                tag: "SHOW".into(),
            });
        }
        let v = self.ctx.get(&raw).or_else(|| self.ctx.get(&name)).ok_or_else(|| {
            SqlError::new(SqlState::UNDEFINED_OBJECT, format!("unrecognized configuration parameter \"{raw}\""))
        })?;
        Ok(Outcome::Rows {
            fields: vec![text_field(&name)].into(),
            rows: vec![vec![Some(v)]].into(),
            tag: "SHOW".into(),
        })
    }
}
