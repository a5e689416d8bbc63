//! Write-ahead log functions: `pg_current_wal_lsn`,
//! `pg_current_wal_insert_lsn`, `pg_current_wal_flush_lsn`. Each returns
//! the position as PostgreSQL prints an LSN (`16/B374D848`: the high and
//! low 32 bits in hex), as `text` (turnstile has no `pg_lsn` type).

use super::def::{FuncDef, Volatility};
use crate::expr::EvalEnv;
use crate::value::{Datum, SqlType};

fn lsn(env: &EvalEnv<'_>, flushed: bool) -> Datum {
    let wal = env.services.shared().engine.log().wal();
    let at = if flushed { wal.flushed_lsn() } else { wal.insert_lsn() };
    Datum::Text(at.to_string())
}

/// `pg_current_wal_lsn()`: where the log has been written to (turnstile
/// writes what is inserted before anything waits on it: the insert
/// position).
pub static CURRENT_WAL_LSN: FuncDef =
    FuncDef::fixed("pg_current_wal_lsn", &[], SqlType::Text, |_, env| Ok(lsn(env, false)))
        .volatility(Volatility::Volatile);

/// `pg_current_wal_insert_lsn()`: the insert position.
pub static CURRENT_WAL_INSERT_LSN: FuncDef =
    FuncDef::fixed("pg_current_wal_insert_lsn", &[], SqlType::Text, |_, env| Ok(lsn(env, false)))
        .volatility(Volatility::Volatile);

/// `pg_current_wal_flush_lsn()`: the durable end of the log.
pub static CURRENT_WAL_FLUSH_LSN: FuncDef =
    FuncDef::fixed("pg_current_wal_flush_lsn", &[], SqlType::Text, |_, env| Ok(lsn(env, true)))
        .volatility(Volatility::Volatile);
