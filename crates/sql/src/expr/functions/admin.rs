//! System administration functions: `set_config`, `current_setting`,
//! `pg_cancel_backend`, `pg_terminate_backend`, `pg_relation_size`
//! (`pg_table_size`), `pg_total_relation_size`.

use super::def::{FuncDef, Volatility};
use super::text::text_arg;
use crate::catalog::reg::catalog_of;
use crate::error::SqlError;
use crate::expr::EvalEnv;
use crate::value::{Datum, RegKind, SqlType};
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
/// main fork (0 for a relation without storage).
pub static RELATION_SIZE: FuncDef =
    FuncDef::fixed("pg_relation_size", &[SqlType::Reg(RegKind::Class)], SqlType::Int8, |args, env| {
        Ok(relation_sizes(&args[0], env, false)?.map_or(Datum::Null, Datum::Int))
    })
    .aliases(&["pg_table_size"])
    .volatility(Volatility::Volatile);

/// `pg_total_relation_size(rel)`: the relation's bytes and its indexes'.
pub static TOTAL_RELATION_SIZE: FuncDef =
    FuncDef::fixed("pg_total_relation_size", &[SqlType::Reg(RegKind::Class)], SqlType::Int8, |args, env| {
        Ok(relation_sizes(&args[0], env, true)?.map_or(Datum::Null, Datum::Int))
    })
    .volatility(Volatility::Volatile);

/// The size of relation `rel` (an OID), with its indexes' when
/// `with_indexes`; `None` for no such relation, 0 for a system relation
/// (computed, never stored).
fn relation_sizes(rel: &Datum, env: &mut EvalEnv<'_>, with_indexes: bool) -> Result<Option<i64>, SqlError> {
    let Datum::Int(id) = rel else { return Ok(None) };
    let (cat, db) = catalog_of(&*env.services)?;
    let Some(r) = u32::try_from(*id).ok().and_then(|id| cat.relations.get(&id)).filter(|r| r.db == db) else {
        return Ok(crate::catalog::by_oid(u32::try_from(*id).unwrap_or(0)).map(|_| 0));
    };
    let mut total = env.services.relation_size(&r.name)?;
    if with_indexes {
        for ix in cat.indexes_of(r.id) {
            total += env.services.relation_size(&ix.name)?;
        }
    }
    Ok(Some(total))
}

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
