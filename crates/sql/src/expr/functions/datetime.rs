//! Date/time functions: `now()` and its synonyms, `current_date`, and
//! `pg_sleep` (PostgreSQL's "delaying execution").

use super::def::{FuncDef, Volatility};
use crate::error::SqlError;
use crate::expr::EvalEnv;
use crate::value::{Datum, SqlType};
use std::time::{Duration, Instant};

/// `now()`, `CURRENT_TIMESTAMP`, `statement_timestamp()`,
/// `transaction_timestamp()`: the statement's start.
pub static NOW: FuncDef =
    FuncDef::fixed("now", &[], SqlType::TimestampTz, |_, env| Ok(Datum::Timestamp(env.services.statement_timestamp())))
        .aliases(&["current_timestamp", "statement_timestamp", "transaction_timestamp"])
        .volatility(Volatility::Stable);

/// `CURRENT_DATE`: the date of the statement's start (UTC).
pub static CURRENT_DATE: FuncDef = FuncDef::fixed("current_date", &[], SqlType::Date, |_, env| {
    Datum::Timestamp(env.services.statement_timestamp()).cast(SqlType::Date)
})
.volatility(Volatility::Stable);

/// `pg_sleep(seconds)`.
pub static PG_SLEEP: FuncDef =
    FuncDef::fixed("pg_sleep", &[SqlType::Float8], SqlType::Text, pg_sleep).volatility(Volatility::Volatile);

/// Longest sleep `pg_sleep` takes, in seconds (longer requests are cut).
pub const SLEEP_MAX_S: f64 = 1e6;
/// How often a sleep wakes to check for a cancel or a statement timeout.
pub const SLEEP_SLICE: Duration = Duration::from_millis(10);

/// Sleeps in slices of at most [`SLEEP_SLICE`], checking for a cancel (or
/// a statement timeout) between them.
fn pg_sleep(args: &[Datum], env: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    let secs = args[0].as_f64().unwrap_or(0.0);
    let end = Instant::now() + Duration::from_secs_f64(secs.clamp(0.0, SLEEP_MAX_S));
    loop {
        crate::plan::check_cancel(env.services)?;
        let now = Instant::now();
        if now >= end {
            return Ok(Datum::Text(String::new()));
        }
        std::thread::sleep((end - now).min(SLEEP_SLICE));
    }
}
