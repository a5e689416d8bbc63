//! The session's time zone (`TimeZone`): what `timestamptz` values are
//! printed in, what a `timestamptz` written without an offset is read in,
//! and what `timestamp`/`date` ↔ `timestamptz` casts convert through — as
//! PostgreSQL's `session_timezone`.
//!
//! Zones come from the IANA database through `jiff` (the system's
//! `/usr/share/zoneinfo`). As in PostgreSQL, where the session's zone is a
//! backend-global, the zone lives in a thread-local of the backend thread
//! that runs the session (one thread per connection); the session sets it
//! whenever its `timezone` setting changes ([`set_session_zone`]).
//! A thread that never set one is in UTC.
//!
//! ```
//! use turnstile_sql::value::zone;
//! assert_eq!(zone::canonical("europe/berlin").unwrap(), "Europe/Berlin");
//! zone::set_session_zone("America/New_York").unwrap();
//! // 2024-01-15 12:00:00 UTC, as microseconds since 2000-01-01.
//! let t = 758_635_200_000_000;
//! assert_eq!(zone::offset_secs(t), -5 * 3600);
//! assert_eq!(zone::local_to_utc(t - 5 * 3_600_000_000), t);
//! zone::set_session_zone("UTC").unwrap();
//! ```

use crate::error::SqlError;
use jiff::tz::TimeZone;
use jiff::Timestamp;
use std::cell::RefCell;
use turnstile_lock::SqlState;

/// Seconds from the Unix epoch to PostgreSQL's (2000-01-01).
const PG_EPOCH_UNIX_SECS: i64 = 946_684_800;

thread_local! {
    static ZONE: RefCell<TimeZone> = const { RefCell::new(TimeZone::UTC) };
}

fn bad_zone(name: &str) -> SqlError {
    SqlError::new(SqlState::INVALID_PARAMETER_VALUE, format!("invalid value for parameter \"TimeZone\": \"{name}\""))
}

/// The zone called `name` (any case: `utc`, `Europe/Berlin`), or a fixed
/// offset written as PostgreSQL's POSIX-style number of hours (`0`, `+2`).
fn zone_named(name: &str) -> Result<(TimeZone, String), SqlError> {
    let n = name.trim();
    if n.eq_ignore_ascii_case("utc") || n.eq_ignore_ascii_case("z") || n.eq_ignore_ascii_case("etc/utc") {
        return Ok((TimeZone::UTC, "UTC".into()));
    }
    if n.eq_ignore_ascii_case("gmt") {
        return Ok((TimeZone::UTC, "GMT".into()));
    }
    if let Ok(hours) = n.parse::<i8>() {
        // A bare number is hours *east* of Greenwich in PostgreSQL's
        // SET TIME ZONE, shown as `<+02>-02`.
        let offset = jiff::tz::Offset::from_hours(hours).map_err(|_| bad_zone(name))?;
        let tz = TimeZone::fixed(offset);
        let label = format!(
            "<{}{:02}>{}{:02}",
            if hours < 0 { '-' } else { '+' },
            hours.abs(),
            if hours < 0 { '+' } else { '-' },
            hours.abs()
        );
        return Ok((tz, if hours == 0 { "UTC".into() } else { label }));
    }
    let tz = TimeZone::get(n).map_err(|_| bad_zone(name))?;
    let canonical = tz.iana_name().map_or_else(|| n.to_owned(), str::to_owned);
    Ok((tz, canonical))
}

/// The zone name as `SHOW TimeZone` prints it (`Europe/Berlin`), or `22023`
/// for a name the time-zone database lacks.
pub fn canonical(name: &str) -> Result<String, SqlError> {
    zone_named(name).map(|(_, n)| n)
}

/// Makes `name` this thread's (the session's) zone.
pub fn set_session_zone(name: &str) -> Result<(), SqlError> {
    let (tz, _) = zone_named(name)?;
    ZONE.with(|z| *z.borrow_mut() = tz);
    Ok(())
}

fn to_timestamp(us: i64) -> Option<Timestamp> {
    let unix_us = us.checked_add(PG_EPOCH_UNIX_SECS.checked_mul(1_000_000)?)?;
    Timestamp::from_microsecond(unix_us).ok()
}

/// The session zone's UTC offset, in seconds, at instant `us` (UTC
/// microseconds since 2000-01-01); 0 outside the representable range.
pub fn offset_secs(us: i64) -> i32 {
    let Some(ts) = to_timestamp(us) else { return 0 };
    ZONE.with(|z| z.borrow().to_offset(ts).seconds())
}

/// The instant a local wall-clock time `local` (microseconds since
/// 2000-01-01, in the session's zone) stands for. A time in a gap (spring
/// forward) or an overlap (fall back) resolves as PostgreSQL resolves it:
/// with the offset in force before the transition.
pub fn local_to_utc(local: i64) -> i64 {
    // The offset at the instant `local` would be if it were UTC, then once
    // more at the corrected instant: two steps settle every zone.
    let first = i64::from(offset_secs(local)) * 1_000_000;
    let second = i64::from(offset_secs(local - first)) * 1_000_000;
    local - second
}

/// `+02`, `-04`, `+05:30`, `+05:30:15`: an offset as PostgreSQL prints it
/// after a `timestamptz`.
pub fn write_offset(secs: i32, out: &mut String) {
    let sign = if secs < 0 { '-' } else { '+' };
    let a = secs.unsigned_abs();
    let (h, m, s) = (a / 3600, a / 60 % 60, a % 60);
    out.push(sign);
    out.push_str(&format!("{h:02}"));
    if m != 0 || s != 0 {
        out.push_str(&format!(":{m:02}"));
    }
    if s != 0 {
        out.push_str(&format!(":{s:02}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_follow_daylight_saving_time() {
        set_session_zone("Europe/Berlin").unwrap();
        // 2024-07-01 12:00:00 UTC is 14:00 in Berlin (CEST, +02).
        let summer = 773_064_000_000_000;
        assert_eq!(offset_secs(summer), 7200);
        assert_eq!(local_to_utc(summer + 7_200_000_000), summer);
        let mut s = String::new();
        write_offset(offset_secs(summer), &mut s);
        assert_eq!(s, "+02");
        set_session_zone("UTC").unwrap();
        assert_eq!(offset_secs(summer), 0);
        assert_eq!(canonical("nowhere/atall").unwrap_err().code, SqlState::INVALID_PARAMETER_VALUE);
        let mut s = String::new();
        write_offset(-(5 * 3600 + 30 * 60), &mut s);
        assert_eq!(s, "-05:30");
    }
}
