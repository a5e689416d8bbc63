//! `timestamp` values: microseconds since 2000-01-01 00:00:00 (PostgreSQL's
//! epoch, no time zone), converted from and to PostgreSQL's ISO text form
//! (`DateStyle = ISO`): `2024-02-29 13:05:07.25`.
//!
//! ```
//! use turnstile_engine::datetime::{format_timestamp, parse_timestamp};
//! assert_eq!(parse_timestamp("2000-01-01 00:00:01"), Some(1_000_000));
//! assert_eq!(format_timestamp(-1), "1999-12-31 23:59:59.999999");
//! let t = parse_timestamp("2024-02-29 13:05:07.25").unwrap();
//! assert_eq!(format_timestamp(t), "2024-02-29 13:05:07.25");
//! ```

/// Microseconds in a day.
pub const USECS_PER_DAY: i64 = 86_400_000_000;
/// Days from 1970-01-01 (Unix epoch) to 2000-01-01 (PostgreSQL's epoch).
pub const UNIX_TO_PG_DAYS: i64 = 10_957;

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of `days` since 1970-01-01 (`civil_from_days`).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        _ => 31,
    }
}

/// PostgreSQL's ISO text of a timestamp: `YYYY-MM-DD HH:MM:SS`, then the
/// fraction without trailing zeros if it is not zero.
pub fn format_timestamp(us: i64) -> String {
    let days = us.div_euclid(USECS_PER_DAY);
    let rest = us.rem_euclid(USECS_PER_DAY);
    let (y, mo, d) = civil_from_days(days + UNIX_TO_PG_DAYS);
    let secs = rest / 1_000_000;
    let frac = rest % 1_000_000;
    let mut s = format!("{y:04}-{mo:02}-{d:02} {:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
    if frac != 0 {
        let f = format!("{frac:06}");
        s.push('.');
        s.push_str(f.trim_end_matches('0'));
    }
    s
}

/// Why a date or timestamp input was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DateTimeError {
    /// Not a date/time at all (PostgreSQL's `22007`, "invalid input
    /// syntax for type …").
    Syntax,
    /// A well-formed value with a field out of range, such as February 29
    /// of a common year or hour 25 (`22008`, "date/time field value out of
    /// range").
    FieldOutOfRange,
}

/// Parses `YYYY-MM-DD`, optionally followed by ` ` or `T` and
/// `HH:MM[:SS[.ffffff]]`; `None` if it is not a valid timestamp. The
/// special inputs `epoch` (1970-01-01) are accepted too.
pub fn parse_timestamp(text: &str) -> Option<i64> {
    parse_timestamp_checked(text).ok()
}

/// `-infinity` as a date (PostgreSQL's `DATEVAL_NOBEGIN`): before every date.
pub const DATE_NOBEGIN: i32 = i32::MIN;
/// `infinity` as a date (PostgreSQL's `DATEVAL_NOEND`): after every date.
pub const DATE_NOEND: i32 = i32::MAX;

/// Parses a date `YYYY-MM-DD` into days since 2000-01-01; `infinity` and
/// `-infinity` are [`DATE_NOEND`] and [`DATE_NOBEGIN`].
pub fn parse_date(text: &str) -> Result<i32, DateTimeError> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("epoch") {
        return Ok(-(UNIX_TO_PG_DAYS as i32));
    }
    if t.eq_ignore_ascii_case("infinity") || t.eq_ignore_ascii_case("+infinity") {
        return Ok(DATE_NOEND);
    }
    if t.eq_ignore_ascii_case("-infinity") {
        return Ok(DATE_NOBEGIN);
    }
    // A time after the date is accepted and dropped, as PostgreSQL does.
    let date = t.find([' ', 'T']).map_or(t, |at| &t[..at]);
    let days = parse_ymd(date)?;
    i32::try_from(days).map_err(|_| DateTimeError::FieldOutOfRange)
}

/// PostgreSQL's ISO text of a date (days since 2000-01-01).
pub fn format_date(days: i32) -> String {
    match days {
        DATE_NOBEGIN => return "-infinity".to_owned(),
        DATE_NOEND => return "infinity".to_owned(),
        _ => {}
    }
    let (y, m, d) = civil_from_days(i64::from(days) + UNIX_TO_PG_DAYS);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Days since 2000-01-01 of `YYYY-MM-DD`.
fn parse_ymd(date: &str) -> Result<i64, DateTimeError> {
    let mut parts = date.splitn(3, '-');
    let mut field = |max_len: usize| -> Result<i64, DateTimeError> {
        let f = parts.next().ok_or(DateTimeError::Syntax)?;
        if f.is_empty() || f.len() > max_len || !f.bytes().all(|b| b.is_ascii_digit()) {
            return Err(DateTimeError::Syntax);
        }
        f.parse().map_err(|_| DateTimeError::Syntax)
    };
    let year = field(6)?;
    let month = field(2)?;
    let day = field(2)?;
    if !(1..=12).contains(&month) || !(1..=294_276).contains(&year) {
        return Err(DateTimeError::FieldOutOfRange);
    }
    let month = month as u32;
    if day == 0 || day > i64::from(days_in_month(year, month)) {
        return Err(DateTimeError::FieldOutOfRange);
    }
    Ok(days_from_civil(year, month, day as u32) - UNIX_TO_PG_DAYS)
}

/// As [`parse_timestamp`], saying why it failed. A trailing time-zone
/// offset (`+02`, `-05:30`, `Z`, ` UTC`) is accepted and ignored, as
/// `timestamp without time zone` does in PostgreSQL; fractions beyond
/// microseconds are rounded.
pub fn parse_timestamp_checked(text: &str) -> Result<i64, DateTimeError> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("epoch") {
        return Ok(-UNIX_TO_PG_DAYS * USECS_PER_DAY);
    }
    let (date, time) = match t.find([' ', 'T']) {
        Some(at) => (&t[..at], Some(t[at + 1..].trim())),
        None => (t, None),
    };
    let mut us = parse_ymd(date)? * USECS_PER_DAY;
    if let Some(time) = time.filter(|t| !t.is_empty()) {
        let time = strip_zone(time).ok_or(DateTimeError::Syntax)?;
        let mut hms = time.splitn(3, ':');
        let int = |f: Option<&str>| -> Result<i64, DateTimeError> {
            let f = f.ok_or(DateTimeError::Syntax)?;
            if f.is_empty() || f.len() > 2 || !f.bytes().all(|b| b.is_ascii_digit()) {
                return Err(DateTimeError::Syntax);
            }
            f.parse().map_err(|_| DateTimeError::Syntax)
        };
        let h = int(hms.next())?;
        let m = int(hms.next())?;
        let (s, frac) = match hms.next() {
            None => (0, 0),
            Some(sec) => {
                let (whole, frac) = sec.split_once('.').unwrap_or((sec, ""));
                if !frac.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(DateTimeError::Syntax);
                }
                let frac_us = if frac.is_empty() {
                    0
                } else {
                    let f: f64 = format!("0.{frac}").parse().map_err(|_| DateTimeError::Syntax)?;
                    (f * 1e6).round() as i64
                };
                (int(Some(whole))?, frac_us)
            }
        };
        if !(0..24).contains(&h) || !(0..60).contains(&m) || !(0..60).contains(&s) {
            // 24:00:00 is allowed by PostgreSQL: the next midnight.
            if !(h == 24 && m == 0 && s == 0 && frac == 0) {
                return Err(DateTimeError::FieldOutOfRange);
            }
        }
        us += ((h * 60 + m) * 60 + s) * 1_000_000 + frac;
    }
    Ok(us)
}

/// As [`parse_timestamp_checked`], for `timestamp with time zone`: a
/// trailing numeric offset (`+02`, `-05:30`, `+0530`) is applied, giving
/// the UTC instant; without one (or with `Z`/`UTC`) the time is UTC, the
/// session time zone turnstile runs with.
pub fn parse_timestamptz_checked(text: &str) -> Result<i64, DateTimeError> {
    let local = parse_timestamp_checked(text)?;
    let t = text.trim_end();
    let time_starts = t.find([' ', 'T']).map_or(t.len(), |at| at + 1);
    let Some(at) = t[time_starts..].rfind(['+', '-']).map(|i| time_starts + i) else { return Ok(local) };
    let zone = &t[at + 1..];
    let digits: String = zone.chars().filter(char::is_ascii_digit).collect();
    let (h, m) = match (digits.len(), zone.contains(':')) {
        (1 | 2, false) => (digits.parse::<i64>().map_err(|_| DateTimeError::Syntax)?, 0),
        (3 | 4, _) => {
            let (h, m) = digits.split_at(digits.len() - 2);
            (h.parse::<i64>().map_err(|_| DateTimeError::Syntax)?, m.parse::<i64>().map_err(|_| DateTimeError::Syntax)?)
        }
        _ => return Err(DateTimeError::Syntax),
    };
    if h > 15 || m > 59 {
        return Err(DateTimeError::FieldOutOfRange);
    }
    let offset_us = (h * 60 + m) * 60 * 1_000_000;
    Ok(if t.as_bytes()[at] == b'+' { local - offset_us } else { local + offset_us })
}

/// The time without a trailing zone: `+HH`, `-HH:MM`, `+HHMM`, `Z` or a
/// blank-separated `UTC`/`GMT`; `None` if what follows the time is not a
/// zone.
fn strip_zone(time: &str) -> Option<&str> {
    let t = time.trim_end();
    for suffix in [" UTC", " GMT", "Z", " utc", " gmt", "z"] {
        if let Some(rest) = t.strip_suffix(suffix) {
            return Some(rest.trim_end());
        }
    }
    match t.rfind(['+', '-']) {
        Some(at) => {
            let zone = &t[at + 1..];
            let ok = !zone.is_empty()
                && zone.len() <= 5
                && zone.bytes().all(|b| b.is_ascii_digit() || b == b':')
                && zone.bytes().next().is_some_and(|b| b.is_ascii_digit());
            ok.then(|| t[..at].trim_end())
        }
        None => Some(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_across_eras_and_leap_days() {
        for text in
            ["2000-01-01 00:00:00", "1970-01-01 00:00:00", "2024-02-29 23:59:59.5", "1900-03-01 12:00:00.000001"]
        {
            let us = parse_timestamp(text).unwrap();
            assert_eq!(format_timestamp(us), text.trim_end_matches(".000000"), "{text}");
        }
        assert_eq!(parse_timestamp("2000-01-02"), Some(USECS_PER_DAY));
        for bad in ["2023-02-29", "2000-13-01", "x", "2000-01-01 25:00", "2000-01-01 10:00:00x"] {
            assert_eq!(parse_timestamp(bad), None, "{bad}");
        }
        assert_eq!(parse_timestamp_checked("2023-02-29"), Err(DateTimeError::FieldOutOfRange));
        assert_eq!(parse_timestamp_checked("2023-02-2x"), Err(DateTimeError::Syntax));
        let with_offset = parse_timestamp_checked("2024-01-02 03:04:05.123+02").unwrap();
        assert_eq!(format_timestamp(with_offset), "2024-01-02 03:04:05.123");
        assert_eq!(parse_date("2024-02-29").map(format_date).as_deref(), Ok("2024-02-29"));
        assert_eq!(parse_date("2023-02-29"), Err(DateTimeError::FieldOutOfRange));
        assert_eq!(parse_date("2000-01-01"), Ok(0));
        let utc = parse_timestamptz_checked("2024-01-02 03:04:05+02").unwrap();
        assert_eq!(format_timestamp(utc), "2024-01-02 01:04:05");
        let west = parse_timestamptz_checked("2024-01-02 03:04:05-05:30").unwrap();
        assert_eq!(format_timestamp(west), "2024-01-02 08:34:05");
        assert_eq!(
            parse_timestamptz_checked("2024-01-02 03:04:05").unwrap(),
            parse_timestamp("2024-01-02 03:04:05").unwrap()
        );
        for d in -800_000..800_000i64 {
            if d % 997 == 0 {
                let (y, m, day) = civil_from_days(d);
                assert_eq!(days_from_civil(y, m, day), d);
            }
        }
    }
}
