//! System information functions: `version()`, `pg_backend_pid()`,
//! `current_database()`, `current_user`/`session_user`, and the
//! transaction's id (`txid_current()`, `txid_current_if_assigned()`).

use super::def::{FuncDef, Volatility};
use crate::value::{Datum, SqlType};

/// What `version()` returns (`server_version`, in `gucs.rs`, is its
/// `15.0 (turnstile)` part).
pub const VERSION: &str = "PostgreSQL 15.0 (turnstile) on x86_64-pc-linux-gnu, compiled by rustc, 64-bit";

/// `version()`.
pub static VERSION_FN: FuncDef =
    FuncDef::fixed("version", &[], SqlType::Text, |_, _| Ok(Datum::Text(VERSION.to_owned())))
        .volatility(Volatility::Stable);

/// `pg_backend_pid()`.
pub static BACKEND_PID: FuncDef =
    FuncDef::fixed("pg_backend_pid", &[], SqlType::Int4, |_, env| Ok(Datum::Int(env.services.pid().into())))
        .volatility(Volatility::Stable);

/// `current_database()`.
pub static CURRENT_DATABASE: FuncDef = FuncDef::fixed("current_database", &[], SqlType::Name, |_, env| {
    Ok(Datum::Text(env.services.database().to_owned()))
})
.volatility(Volatility::Stable);

/// `current_user`, `session_user` (also written without parentheses, and
/// as `user`).
pub static CURRENT_USER: FuncDef =
    FuncDef::fixed("current_user", &[], SqlType::Name, |_, env| Ok(Datum::Text(env.services.user().to_owned())))
        .aliases(&["session_user"])
        .volatility(Volatility::Stable);

/// `txid_current()`: the transaction's 64-bit id, assigned now if it has
/// none (a read-only transaction takes one by asking).
pub static TXID_CURRENT: FuncDef = FuncDef::fixed("txid_current", &[], SqlType::Int8, |_, env| {
    let session = env.session.as_deref_mut().ok_or_else(crate::plan::no_session)?;
    Ok(Datum::Int(session.txid_current()? as i64))
})
.volatility(Volatility::Stable);

/// `txid_current_if_assigned()`: the transaction's id, or NULL while it has
/// written nothing.
pub static TXID_CURRENT_IF_ASSIGNED: FuncDef =
    FuncDef::fixed("txid_current_if_assigned", &[], SqlType::Int8, |_, env| {
        let session = env.session.as_deref_mut().ok_or_else(crate::plan::no_session)?;
        Ok(session.txid_if_assigned().map_or(Datum::Null, |x| Datum::Int(x as i64)))
    })
    .volatility(Volatility::Stable);
