//! Settings (PostgreSQL's GUCs) as the session keeps them: defaults,
//! validation, `SET LOCAL` and the undo of a block's settings when it ends.

use crate::context::Ctx;
use crate::context::XactSetting;
use crate::error::SqlError;
use std::collections::HashMap;
use turnstile_lock::SqlState;

/// Parameters PostgreSQL reports with ParameterStatus when they change.
pub(crate) const REPORTED: &[&str] = &[
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
pub(crate) fn display_name(name: &str) -> &str {
    match name {
        "datestyle" => "DateStyle",
        "timezone" => "TimeZone",
        "intervalstyle" => "IntervalStyle",
        other => other,
    }
}

pub(crate) fn default_gucs(user: &str, application_name: &str, max_backends: u32) -> HashMap<String, String> {
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
pub(crate) fn parse_ms(v: &str) -> Option<u64> {
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

pub(crate) fn format_ms(ms: u64) -> String {
    match ms {
        0 => "0".into(),
        ms if ms % 3_600_000 == 0 => format!("{}h", ms / 3_600_000),
        ms if ms % 60_000 == 0 => format!("{}min", ms / 60_000),
        ms if ms % 1000 == 0 => format!("{}s", ms / 1000),
        ms => format!("{ms}ms"),
    }
}

impl Ctx {
    pub(crate) fn get(&self, name: &str) -> Option<String> {
        let lower = name.to_ascii_lowercase();
        self.gucs.get(&lower).cloned().or_else(|| self.shared.knobs.get(name).cloned())
    }

    pub(crate) fn set(&mut self, name: &str, value: &str) -> Result<String, SqlError> {
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
                // SERIALIZABLE is refused when a transaction would use it.
                let v = value.trim().to_ascii_lowercase();
                if !["read committed", "read uncommitted", "repeatable read", "serializable"].contains(&v.as_str()) {
                    return Err(SqlError::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        format!("invalid value for parameter \"{lower}\": \"{value}\""),
                    ));
                }
                v
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
    pub(crate) fn set_scoped(&mut self, name: &str, value: &str, local: bool) -> Result<String, SqlError> {
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
    pub(crate) fn restore(&mut self, lower: &str, value: Option<String>) {
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
    pub(crate) fn end_xact(&mut self, commit: bool) {
        for (name, s) in self.xact.take().unwrap_or_default() {
            self.restore(&name, if commit { s.keep } else { s.prior });
        }
    }

    /// `RESET name`: the value the session started with.
    pub(crate) fn reset_value(&self, name: &str) -> Result<String, SqlError> {
        let lower = name.to_ascii_lowercase();
        self.reset_values.get(&lower).cloned().ok_or_else(|| {
            SqlError::new(SqlState::UNDEFINED_OBJECT, format!("unrecognized configuration parameter \"{name}\""))
        })
    }
}

/// Settings fixed at server start.
pub(crate) const FIXED: &[&str] = &[
    "server_version",
    "server_encoding",
    "integer_datetimes",
    "is_superuser",
    "max_connections",
    "server_version_num",
];

/// The settings whose change must reach the lock manager or the timers.
pub(crate) const TIMEOUTS: &[&str] =
    &["lock_timeout", "deadlock_timeout", "statement_timeout", "idle_in_transaction_session_timeout"];

/// Settings accepted (and only echoed back): clients set them routinely.
pub(crate) const KNOWN_EXTRA: &[&str] = &[
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
