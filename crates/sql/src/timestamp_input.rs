//! PostgreSQL's input forms for `timestamp` and `timestamptz` (ISO
//! style): `YYYY-MM-DD[( |T)HH:MM[:SS[.ffffff]]][ ][offset]`, where the
//! offset is `Z`, `UTC`, `±HH`, `±HHMM`, `±HH:MM` or `±HH:MM:SS`, and
//! `epoch`. As in PostgreSQL, `timestamp` ignores an offset (the
//! form node-postgres sends for every JavaScript `Date`), `timestamptz`
//! applies it; without one, a `timestamptz` is in the session's time zone,
//! which is UTC here. Fractions beyond microseconds are rounded.

use crate::value::days_from_civil;

/// Days from 1970-01-01 to 2000-01-01 (PostgreSQL's epoch).
const PG_EPOCH_DAYS: i64 = 10_957;
const USECS_PER_DAY: i64 = 86_400_000_000;

/// µs since 2000-01-01 (UTC for `with_zone`), or `None` if `s` is not a
/// timestamp PostgreSQL would read.
pub(crate) fn parse(s: &str, with_zone: bool) -> Option<i64> {
    let s = s.trim();
    if s.eq_ignore_ascii_case("epoch") {
        return Some(-PG_EPOCH_DAYS * USECS_PER_DAY);
    }
    let (date, rest) = match s.find([' ', 'T', 't']) {
        Some(i) => (&s[..i], s[i + 1..].trim_start()),
        None => (s, ""),
    };
    let mut parts = date.splitn(3, '-');
    let y: i64 = parts.next()?.parse().ok()?;
    let m: i64 = parts.next()?.parse().ok()?;
    let d: i64 = parts.next()?.parse().ok()?;
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    // The clock ends where an offset begins.
    let clock_end = rest.find(['+', '-', 'Z', 'z', 'U', 'u', ' ']).unwrap_or(rest.len());
    let (clock, zone) = (&rest[..clock_end], rest[clock_end..].trim());
    let mut us = 0i64;
    if !clock.is_empty() {
        let mut hms = clock.splitn(3, ':');
        let h: i64 = hms.next()?.parse().ok()?;
        let mi: i64 = hms.next()?.parse().ok()?;
        let sec = hms.next().unwrap_or("0");
        let (whole, frac) = sec.split_once('.').unwrap_or((sec, ""));
        let s: i64 = whole.parse().ok()?;
        if !frac.bytes().all(|b| b.is_ascii_digit())
            || !(0..=24).contains(&h)
            || !(0..60).contains(&mi)
            || !(0..=60).contains(&s)
        {
            return None;
        }
        // Round to microseconds, as PostgreSQL does.
        let mut digits: String = frac.chars().take(7).collect();
        while digits.len() < 7 {
            digits.push('0');
        }
        let tenths_of_us: i64 = digits.parse().ok()?;
        let frac_us = (tenths_of_us + 5) / 10;
        us = (h * 3600 + mi * 60 + s) * 1_000_000 + frac_us;
        if us > USECS_PER_DAY {
            return None;
        }
    }
    let offset_s = if zone.is_empty() { 0 } else { offset_seconds(zone)? };
    let local = (days_from_civil(y, m, d) - PG_EPOCH_DAYS) * USECS_PER_DAY + us;
    Some(if with_zone { local - offset_s * 1_000_000 } else { local })
}

/// Seconds east of UTC of `Z`, `UTC`, `GMT`, `±HH`, `±HHMM`, `±HH:MM`,
/// `±HH:MM:SS`.
fn offset_seconds(zone: &str) -> Option<i64> {
    if ["z", "utc", "gmt"].iter().any(|n| zone.eq_ignore_ascii_case(n)) {
        return Some(0);
    }
    let (sign, body) = match zone.as_bytes().first()? {
        b'+' => (1, &zone[1..]),
        b'-' => (-1, &zone[1..]),
        _ => return None,
    };
    let (h, m, s): (i64, i64, i64) = if body.contains(':') {
        let mut p = body.splitn(3, ':');
        (p.next()?.parse().ok()?, p.next()?.parse().ok()?, p.next().map_or(Some(0), |x| x.parse().ok())?)
    } else {
        match body.len() {
            1 | 2 => (body.parse().ok()?, 0, 0),
            4 => (body[..2].parse().ok()?, body[2..].parse().ok()?, 0),
            _ => return None,
        }
    };
    if h > 15 || m > 59 || s > 59 {
        return None;
    }
    Some(sign * (h * 3600 + m * 60 + s))
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        4 | 6 | 9 | 11 => 30,
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::parse;

    /// µs since 2000-01-01 of a UTC wall-clock time.
    fn at(days: i64, h: i64, m: i64, s: i64, us: i64) -> i64 {
        days * 86_400_000_000 + ((h * 60 + m) * 60 + s) * 1_000_000 + us
    }

    /// Each expectation is what PostgreSQL 15 prints with `TimeZone` UTC.
    #[test]
    fn postgresql_input_forms() {
        // 2024-01-02 is day 8767 since 2000-01-01.
        let day = 8767;
        assert_eq!(parse("2024-01-02T03:04:05.123+00:00", false), Some(at(day, 3, 4, 5, 123_000)));
        assert_eq!(parse("2024-01-02T03:04:05.123-07:00", false), Some(at(day, 3, 4, 5, 123_000)));
        assert_eq!(parse("2024-01-02 03:04:05+05:30", true), Some(at(day - 1, 21, 34, 5, 0)));
        assert_eq!(parse("2024-01-02 03:04:05.5Z", true), Some(at(day, 3, 4, 5, 500_000)));
        assert_eq!(parse("2024-01-02 03:04:05-0800", true), Some(at(day, 11, 4, 5, 0)));
        assert_eq!(parse("2024-01-02 03:04:05 +02", true), Some(at(day, 1, 4, 5, 0)));
        assert_eq!(parse("2024-01-02T03:04:05.123456789", false), Some(at(day, 3, 4, 5, 123_457)));
        assert_eq!(parse("2024-01-02 03:04", false), Some(at(day, 3, 4, 0, 0)));
        assert_eq!(parse("epoch", false), Some(at(-10_957, 0, 0, 0, 0)));
        assert_eq!(parse("2000-01-01", false), Some(0));
        assert_eq!(parse("2023-02-29", false), None);
        assert_eq!(parse("2024-01-02 03:04:05+99", true), None);
        assert_eq!(parse("2024-01-02 25:00", false), None);
    }
}
