//! System administration functions: `set_config`, `current_setting`,
//! `pg_cancel_backend`, `pg_terminate_backend`, `pg_relation_size`
//! (`pg_table_size`).

use super::def::{FuncDef, Volatility};
use super::text::text_arg;
use crate::error::SqlError;
use crate::expr::EvalEnv;
use crate::value::{Datum, SqlType};
use turnstile_lock::SqlState;

/// `set_config(name, value, is_local)`: not strict — a NULL name is an
/// error (`22004`), a NULL value resets.
pub static SET_CONFIG: FuncDef =
    FuncDef::fixed("set_config", &[SqlType::Text, SqlType::Text, SqlType::Bool], SqlType::Text, set_config)
        .called_on_null()
        .volatility(Volatility::Volatile);

/// `current_setting(name [, missing_ok])`.
pub static CURRENT_SETTING: FuncDef =
    FuncDef::fixed("current_setting", &[SqlType::Text, SqlType::Bool], SqlType::Text, current_setting)
        .required(1)
        .called_on_null()
        .volatility(Volatility::Stable);

/// `pg_cancel_backend(pid)`.
pub static CANCEL_BACKEND: FuncDef =
    FuncDef::fixed("pg_cancel_backend", &[SqlType::Int4], SqlType::Bool, |args, env| signal_backend(false, args, env))
        .volatility(Volatility::Volatile);

/// `pg_terminate_backend(pid [, timeout_ms])`.
pub static TERMINATE_BACKEND: FuncDef =
    FuncDef::fixed("pg_terminate_backend", &[SqlType::Int4, SqlType::Int8], SqlType::Bool, |args, env| {
        signal_backend(true, args, env)
    })
    .required(1)
    .volatility(Volatility::Volatile);

/// `pg_relation_size(rel)`, `pg_table_size(rel)`: bytes of the relation's
/// main fork.
pub static RELATION_SIZE: FuncDef = FuncDef::fixed("pg_relation_size", &[SqlType::Text], SqlType::Int8, |args, env| {
    Ok(Datum::Int(env.services.relation_size(&text_arg(&args[0]))?))
})
.aliases(&["pg_table_size"])
.volatility(Volatility::Volatile);

fn set_config(args: &[Datum], env: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    if args[0].is_null() {
        return Err(SqlError::new(SqlState::NULL_VALUE_NOT_ALLOWED, "SET requires parameter name"));
    }
    let local = matches!(args.get(2), Some(Datum::Bool(true)));
    Ok(Datum::Text(env.services.set_setting(&text_arg(&args[0]), &text_arg(&args[1]), local)?))
}

fn current_setting(args: &[Datum], env: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    let missing_ok = matches!(args.get(1), Some(Datum::Bool(true)));
    match env.services.setting(&text_arg(&args[0]))? {
        Some(v) => Ok(Datum::Text(v)),
        None if missing_ok => Ok(Datum::Null),
        None => Err(SqlError::new(
            SqlState::UNDEFINED_OBJECT,
            format!("unrecognized configuration parameter \"{}\"", text_arg(&args[0])),
        )),
    }
}

/// `pg_cancel_backend(pid)` / `pg_terminate_backend(pid [, timeout])`.
fn signal_backend(terminate: bool, args: &[Datum], env: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    let int = |d: Option<&Datum>| match d {
        Some(Datum::Int(v)) => Some(*v),
        _ => None,
    };
    let Some(pid) = int(args.first()) else {
        return Ok(Datum::Null);
    };
    let pid =
        i32::try_from(pid).map_err(|_| SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "integer out of range"))?;
    let timeout = if terminate { int(args.get(1)).unwrap_or(0) } else { 0 };
    Ok(Datum::Bool(env.services.signal_backend(pid, terminate, timeout)?))
}
