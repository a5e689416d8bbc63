//! The session's settings as typed values. A setting the code acts on (the
//! timeouts, `default_transaction_isolation`, `plan_cache_mode`) is a typed
//! field of [`Settings`], parsed once when it is set (`gucs.rs`, with
//! PostgreSQL's errors); statements read the field, never text. Every other
//! setting is only shown (`SHOW`, `current_setting`, ParameterStatus) and
//! is kept as its text. A block's undo log holds [`GucValue`]s, so a
//! rollback restores values without parsing them again; `SHOW` prints a
//! typed value as PostgreSQL prints it ([`GucValue::text`]).

use crate::command::isolation_named;
use crate::error::SqlError;
use crate::plan::CacheMode;
use std::collections::HashMap;
use turnstile_engine::mvcc::IsolationLevel;
use turnstile_lock::SqlState;

/// The session's settings: typed fields for those the code reads, text
/// for the rest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Settings {
    /// `lock_timeout` in ms (0 = wait forever).
    pub(crate) lock_timeout_ms: u64,
    /// `deadlock_timeout` in ms (at least 1).
    pub(crate) deadlock_timeout_ms: u64,
    /// `statement_timeout` in ms (0 = none).
    pub(crate) statement_timeout_ms: u64,
    /// `idle_in_transaction_session_timeout` in ms (0 = none).
    pub(crate) idle_in_transaction_session_timeout_ms: u64,
    /// `default_transaction_isolation`: what `BEGIN` starts.
    pub(crate) default_transaction_isolation: Isolation,
    /// `plan_cache_mode`.
    pub(crate) plan_cache_mode: CacheMode,
    /// Every other setting, by lower-case name, as its text.
    pub(crate) text: HashMap<String, String>,
}

/// One setting's value: what the undo log keeps and `SHOW` prints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum GucValue {
    /// A duration, in ms.
    Ms(u64),
    /// An isolation level.
    Isolation(Isolation),
    /// A plan cache mode.
    PlanCache(CacheMode),
    /// Any other setting's text.
    Text(String),
}

/// An isolation level as `default_transaction_isolation` holds it: all four
/// of PostgreSQL's names are accepted when set (as PostgreSQL does);
/// SERIALIZABLE is refused when a transaction would use it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Isolation {
    /// `read uncommitted` (runs as READ COMMITTED, as in PostgreSQL).
    ReadUncommitted,
    /// `read committed`.
    ReadCommitted,
    /// `repeatable read`.
    RepeatableRead,
    /// `serializable`.
    Serializable,
}

impl Isolation {
    /// Parses PostgreSQL's name of a level (`22023` for any other).
    pub(crate) fn parse(name: &str, value: &str) -> Result<Isolation, SqlError> {
        Ok(match value.trim().to_ascii_lowercase().as_str() {
            "read uncommitted" => Isolation::ReadUncommitted,
            "read committed" => Isolation::ReadCommitted,
            "repeatable read" => Isolation::RepeatableRead,
            "serializable" => Isolation::Serializable,
            _ => return Err(invalid_value(name, value)),
        })
    }

    /// PostgreSQL's name (`read committed`…).
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Isolation::ReadUncommitted => "read uncommitted",
            Isolation::ReadCommitted => "read committed",
            Isolation::RepeatableRead => "repeatable read",
            Isolation::Serializable => "serializable",
        }
    }

    /// The engine's level a transaction starts with (`0A000` for
    /// SERIALIZABLE).
    pub(crate) fn level(self) -> Result<IsolationLevel, SqlError> {
        isolation_named(self.name())
    }
}

impl GucValue {
    /// The value as `SHOW` prints it.
    pub(crate) fn text(&self) -> String {
        match self {
            GucValue::Ms(ms) => format_ms(*ms),
            GucValue::Isolation(i) => i.name().to_owned(),
            GucValue::PlanCache(m) => cache_mode_name(*m).to_owned(),
            GucValue::Text(t) => t.clone(),
        }
    }
}

/// `plan_cache_mode`'s PostgreSQL name for `m`.
fn cache_mode_name(m: CacheMode) -> &'static str {
    match m {
        CacheMode::Auto => "auto",
        CacheMode::ForceCustom => "force_custom_plan",
        CacheMode::ForceGeneric => "force_generic_plan",
    }
}

/// `22023`: `value` is not one `name` takes.
pub(crate) fn invalid_value(name: &str, value: &str) -> SqlError {
    SqlError::new(SqlState::INVALID_PARAMETER_VALUE, format!("invalid value for parameter \"{name}\": \"{value}\""))
}

/// The typed settings' names.
const TYPED: &[&str] = &[
    "lock_timeout",
    "deadlock_timeout",
    "statement_timeout",
    "idle_in_transaction_session_timeout",
    "default_transaction_isolation",
    "plan_cache_mode",
];

impl Settings {
    /// The value of setting `lower` (a lower-case name), if it has one.
    pub(crate) fn get(&self, lower: &str) -> Option<GucValue> {
        Some(match lower {
            "lock_timeout" => GucValue::Ms(self.lock_timeout_ms),
            "deadlock_timeout" => GucValue::Ms(self.deadlock_timeout_ms),
            "statement_timeout" => GucValue::Ms(self.statement_timeout_ms),
            "idle_in_transaction_session_timeout" => GucValue::Ms(self.idle_in_transaction_session_timeout_ms),
            "default_transaction_isolation" => GucValue::Isolation(self.default_transaction_isolation),
            "plan_cache_mode" => GucValue::PlanCache(self.plan_cache_mode),
            other => GucValue::Text(self.text.get(other)?.clone()),
        })
    }

    /// Sets `lower` to `value` (`None`: a text setting goes away). A typed
    /// setting takes only its own kind of value (`Ctx::set` parsed it).
    pub(crate) fn put(&mut self, lower: &str, value: Option<GucValue>) {
        match (lower, value) {
            ("lock_timeout", Some(GucValue::Ms(ms))) => self.lock_timeout_ms = ms,
            ("deadlock_timeout", Some(GucValue::Ms(ms))) => self.deadlock_timeout_ms = ms,
            ("statement_timeout", Some(GucValue::Ms(ms))) => self.statement_timeout_ms = ms,
            ("idle_in_transaction_session_timeout", Some(GucValue::Ms(ms))) => {
                self.idle_in_transaction_session_timeout_ms = ms
            }
            ("default_transaction_isolation", Some(GucValue::Isolation(i))) => self.default_transaction_isolation = i,
            ("plan_cache_mode", Some(GucValue::PlanCache(m))) => self.plan_cache_mode = m,
            (l, v) => {
                debug_assert!(!TYPED.contains(&l), "a typed setting {l} given {v:?}");
                match v {
                    Some(v) => {
                        self.text.insert(l.to_owned(), v.text());
                    }
                    None => {
                        self.text.remove(l);
                    }
                }
            }
        }
    }

    /// Every setting's name, typed ones first.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        TYPED.iter().copied().chain(self.text.keys().map(String::as_str))
    }
}

/// The settings a session starts with.
pub(crate) fn default_settings(user: &str, application_name: &str, max_backends: u32) -> Settings {
    let mut text = HashMap::new();
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
        ("search_path", "\"$user\", public"),
        ("transaction_isolation", "read committed"),
        ("extra_float_digits", "1"),
        ("synchronous_commit", "on"),
        ("max_locks_per_transaction", "64"),
        ("client_min_messages", "notice"),
        ("default_transaction_read_only", "off"),
        ("transaction_read_only", "off"),
        ("default_transaction_deferrable", "off"),
        ("transaction_deferrable", "off"),
        ("default_table_access_method", "heap"),
    ] {
        text.insert(k.to_owned(), v.to_owned());
    }
    text.insert("application_name".into(), application_name.to_owned());
    text.insert("session_authorization".into(), user.to_owned());
    text.insert("max_connections".into(), max_backends.to_string());
    // Preset options (PostgreSQL's compile-time limits), read-only.
    text.insert("max_index_keys".into(), turnstile_engine::catalog::INDEX_MAX_KEYS.to_string());
    text.insert("max_identifier_length".into(), (turnstile_engine::catalog::NAME_MAX).to_string());
    Settings {
        lock_timeout_ms: 0,
        deadlock_timeout_ms: 1000,
        statement_timeout_ms: 0,
        idle_in_transaction_session_timeout_ms: 0,
        default_transaction_isolation: Isolation::ReadCommitted,
        plan_cache_mode: CacheMode::Auto,
        text,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_settings_read_back_as_postgresql_shows_them() {
        let mut s = default_settings("u", "app", 10);
        assert_eq!(s.get("statement_timeout"), Some(GucValue::Ms(0)));
        s.put("statement_timeout", Some(GucValue::Ms(90_000)));
        assert_eq!(s.statement_timeout_ms, 90_000);
        assert_eq!(s.get("statement_timeout").map(|v| v.text()).as_deref(), Some("90s"));
        s.put("plan_cache_mode", Some(GucValue::PlanCache(CacheMode::ForceGeneric)));
        assert_eq!(s.get("plan_cache_mode").map(|v| v.text()).as_deref(), Some("force_generic_plan"));
        assert_eq!(s.get("default_transaction_isolation").map(|v| v.text()).as_deref(), Some("read committed"));
        s.put("my.option", Some(GucValue::Text("x".into())));
        assert!(s.names().any(|n| n == "my.option") && s.names().any(|n| n == "lock_timeout"));
        s.put("my.option", None);
        assert_eq!(s.get("my.option"), None);
    }

    #[test]
    fn isolation_names_parse_once_and_serializable_is_refused_when_used() {
        let e = Isolation::parse("default_transaction_isolation", "chaos").unwrap_err();
        assert_eq!(e.code, SqlState::INVALID_PARAMETER_VALUE);
        let s = Isolation::parse("default_transaction_isolation", " Serializable ").unwrap();
        assert_eq!(s.name(), "serializable");
        assert_eq!(s.level().unwrap_err().code, SqlState::FEATURE_NOT_SUPPORTED);
        assert_eq!(Isolation::ReadUncommitted.level().unwrap(), IsolationLevel::ReadCommitted);
    }
}
