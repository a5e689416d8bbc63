//! System information functions: `version()`, `pg_backend_pid()`,
//! `current_database()`, `current_user`/`session_user`.

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
