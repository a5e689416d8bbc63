//! Settings (PostgreSQL's GUCs) as the session keeps them: defaults,
//! validation, `SET LOCAL` and the undo of a block's settings when it ends.
//!
//! Values are parsed here, once, when a setting is set (`22023` for a bad
//! value, `42704` for an unknown name), into the typed `Settings` of
//! `typed_settings.rs`; a block's undo log holds those typed values.

use crate::context::Ctx;
use crate::context::XactSetting;
use crate::error::SqlError;
use crate::plan::CacheMode;
use crate::typed_settings::{invalid_value, parse_ms, GucValue, Isolation};
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

impl Ctx {
    /// Setting `name`'s text (a turnstile knob's too), as `SHOW` prints it.
    pub(crate) fn get(&self, name: &str) -> Option<String> {
        let lower = name.to_ascii_lowercase();
        self.gucs.get(&lower).map(|v| v.text()).or_else(|| self.shared.knobs.get(name).cloned())
    }

    /// Sets `name` to `value`, parsed now: the value stored, as text.
    pub(crate) fn set(&mut self, name: &str, value: &str) -> Result<String, SqlError> {
        let lower = name.to_ascii_lowercase();
        if self.shared.knobs.contains_key(name) {
            return Err(SqlError::new(
                SqlState::CANT_CHANGE_RUNTIME_PARAM,
                format!("parameter \"{name}\" cannot be changed now (turnstile knobs are set when the server starts)"),
            ));
        }
        let parsed = self.parse(name, &lower, value)?;
        let text = parsed.text();
        if REPORTED.contains(&lower.as_str()) {
            self.param_changes.push((display_name(&lower).to_owned(), text.clone()));
        }
        self.timeouts_dirty |= TIMEOUTS.contains(&lower.as_str());
        self.gucs.put(&lower, Some(parsed));
        if lower == "timezone" {
            crate::value::zone::set_session_zone(&text)?;
        }
        Ok(text)
    }

    /// `value` as setting `lower` takes it, or PostgreSQL's error.
    fn parse(&self, name: &str, lower: &str, value: &str) -> Result<GucValue, SqlError> {
        let text = match lower {
            l if TIMEOUTS.contains(&l) => {
                let ms = parse_ms(value).ok_or_else(|| invalid_value(lower, value))?;
                if lower == "deadlock_timeout" && ms == 0 {
                    return Err(SqlError::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        "deadlock_timeout must be at least 1ms",
                    ));
                }
                return Ok(GucValue::Ms(ms));
            }
            "plan_cache_mode" => {
                return Ok(GucValue::PlanCache(match value.to_ascii_lowercase().as_str() {
                    "auto" => CacheMode::Auto,
                    "force_custom_plan" => CacheMode::ForceCustom,
                    "force_generic_plan" => CacheMode::ForceGeneric,
                    _ => return Err(invalid_value("plan_cache_mode", value)),
                }))
            }
            "default_transaction_isolation" => return Ok(GucValue::Isolation(Isolation::parse(lower, value)?)),
            // SERIALIZABLE is refused when a transaction would use it.
            "transaction_isolation" => Isolation::parse(lower, value)?.name().to_owned(),
            // PostgreSQL's `clean_encoding_name`: only letters and digits
            // count (asyncpg sends `'utf-8'`, quotes included).
            "client_encoding" => match value
                .chars()
                .filter(char::is_ascii_alphanumeric)
                .collect::<String>()
                .to_ascii_uppercase()
                .as_str()
            {
                "UTF8" | "UNICODE" => "UTF8".to_owned(),
                // SQL_ASCII converts nothing: the bytes pass as they are.
                "SQLASCII" => "SQL_ASCII".to_owned(),
                // Converted by the server crate, as they are read and sent.
                "LATIN1" | "ISO88591" => "LATIN1".to_owned(),
                "WIN1252" | "WINDOWS1252" => "WIN1252".to_owned(),
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
            "timezone" => crate::value::zone::canonical(value)?,
            l if FIXED.contains(&l) => {
                return Err(SqlError::new(
                    SqlState::CANT_CHANGE_RUNTIME_PARAM,
                    format!("parameter \"{lower}\" cannot be changed"),
                ));
            }
            "default_transaction_read_only"
            | "transaction_read_only"
            | "default_transaction_deferrable"
            | "transaction_deferrable" => match value.to_ascii_lowercase().as_str() {
                "on" | "true" | "yes" | "1" => "on".to_owned(),
                "off" | "false" | "no" | "0" => "off".to_owned(),
                _ => return Err(invalid_value(lower, value)),
            },
            "default_table_access_method" => match value {
                "heap" => "heap".to_owned(),
                _ => {
                    return Err(SqlError::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        format!("invalid value for parameter \"default_table_access_method\": \"{value}\""),
                    ))
                }
            },
            "standard_conforming_strings" => match value.to_ascii_lowercase().as_str() {
                "on" | "true" | "1" => "on".to_owned(),
                _ => return Err(SqlError::unsupported("standard_conforming_strings = off")),
            },
            _ => {
                if self.gucs.get(lower).is_none() && !lower.contains('.') && !KNOWN_EXTRA.contains(&lower) {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("unrecognized configuration parameter \"{name}\""),
                    ));
                }
                value.to_owned()
            }
        };
        Ok(GucValue::Text(text))
    }

    /// `SET [LOCAL]`, `set_config(…, is_local)`, `RESET`: sets `name`,
    /// remembering inside a transaction block what the block's end must
    /// restore. `SET LOCAL` outside a block has no lasting effect (the
    /// caller warns, as PostgreSQL does).
    pub(crate) fn set_scoped(&mut self, name: &str, value: &str, local: bool) -> Result<String, SqlError> {
        let lower = name.to_ascii_lowercase();
        let before = self.gucs.get(&lower);
        let text = self.set(name, value)?;
        let after = self.gucs.get(&lower);
        match &mut self.xact {
            Some(changed) => {
                let e = changed.entry(lower).or_insert_with(|| XactSetting { prior: before.clone(), keep: before });
                if !local {
                    e.keep = after;
                }
            }
            None if local => self.restore(&lower, before),
            None => {}
        }
        Ok(text)
    }

    /// Puts `value` back as `lower`'s setting, reporting the change.
    pub(crate) fn restore(&mut self, lower: &str, value: Option<GucValue>) {
        if self.gucs.get(lower) == value {
            return;
        }
        if let (Some(v), true) = (&value, REPORTED.contains(&lower)) {
            self.param_changes.push((display_name(lower).to_owned(), v.text()));
        }
        self.gucs.put(lower, value);
        self.timeouts_dirty |= TIMEOUTS.contains(&lower);
        if lower == "timezone" {
            let name = self.get("timezone").unwrap_or_else(|| "UTC".into());
            // The value was valid when it was set.
            let _ = crate::value::zone::set_session_zone(&name);
        }
    }

    /// The end of a transaction block: a commit keeps plain `SET`s and
    /// ends `SET LOCAL`s; a rollback restores every setting the block
    /// changed (PostgreSQL's `AtEOXact_GUC`).
    pub(crate) fn end_xact(&mut self, commit: bool) {
        for (name, s) in self.xact.take().unwrap_or_default() {
            self.restore(&name, if commit { s.keep } else { s.prior });
        }
    }

    /// `RESET name`: the value the session started with, as text.
    pub(crate) fn reset_value(&self, name: &str) -> Result<String, SqlError> {
        let lower = name.to_ascii_lowercase();
        self.reset_values.get(&lower).map(|v| v.text()).ok_or_else(|| {
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
    "max_index_keys",
    "max_identifier_length",
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
    // pg_dump turns synchronized scans off; turnstile's scans always start
    // at the beginning of a relation, as with the setting off.
    "synchronize_seqscans",
    "quote_all_identifiers",
    "default_toast_compression",
];
