//! `numeric`: PostgreSQL's exact decimal arithmetic, with its display-scale
//! rules.
//!
//! A value is a [`BigDecimal`] whose scale *is* PostgreSQL's display scale
//! (`dscale`, the number of digits printed after the point, never
//! negative): `1.10` is `(110, 2)`, and printing it gives `1.10`. The
//! `bigdecimal` crate is used because PostgreSQL's `numeric` is
//! arbitrary-precision (up to 131072 digits before the point and 16383
//! after): fixed-width decimals such as `rust_decimal` stop at 28
//! significant digits, which `sum(int8)` over a few rows or a plain
//! `1.0 / 3` with a large dividend already exceeds.
//!
//! The scale of each operation's result, as PostgreSQL's `numeric.c`:
//!
//! * `a + b`, `a - b`, `a % b`: `max(dscale(a), dscale(b))`;
//! * `a * b`: `dscale(a) + dscale(b)`;
//! * `a / b`: `select_div_scale` — at least 16 significant digits
//!   (`NUMERIC_MIN_SIG_DIGITS`), and no less than either input's scale,
//!   the last digit rounded half away from zero;
//! * rounding to a scale (casts to `numeric(p,s)`, to integers) is half
//!   away from zero.
//!
//! ```text
//! 1.0 / 3              = 0.33333333333333333333      (scale 20)
//! CAST(59 AS numeric)/4 = 14.7500000000000000        (scale 16)
//! 1.10 * 2             = 2.20
//! ```

use crate::error::SqlError;
use bigdecimal::num_bigint::{BigInt, Sign};
use bigdecimal::{BigDecimal, RoundingMode, ToPrimitive, Zero};
use std::cmp::Ordering;
use turnstile_lock::SqlState;

/// `NUMERIC_MIN_SIG_DIGITS`: the least significant digits of a quotient.
const MIN_SIG_DIGITS: i64 = 16;
/// `NUMERIC_MAX_DISPLAY_SCALE`.
const MAX_DISPLAY_SCALE: i64 = 1000;
/// `DEC_DIGITS`: decimal digits per base-10000 digit of PostgreSQL's format.
const DEC_DIGITS: i64 = 4;
/// `NUMERIC_MAX_PRECISION`: the largest precision of `numeric(p,s)`.
pub const MAX_PRECISION: u16 = 1000;

/// `22003` "value overflows numeric format" (a value beyond what any
/// numeric holds: more than 131072 digits before the point).
fn overflow() -> SqlError {
    SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "value overflows numeric format")
}

/// `22012`.
pub fn division_by_zero() -> SqlError {
    SqlError::new(SqlState::DIVISION_BY_ZERO, "division by zero")
}

/// The display scale (digits after the point).
pub fn dscale(d: &BigDecimal) -> i64 {
    d.fractional_digit_count().max(0)
}

/// `d` with display scale `scale`, digits beyond it dropped (callers pass
/// a scale no smaller than the value needs, or round first).
fn at_scale(d: BigDecimal, scale: i64) -> BigDecimal {
    if d.fractional_digit_count() == scale {
        d
    } else {
        d.with_scale(scale)
    }
}

/// Rounds to `scale` digits after the point, half away from zero.
pub fn round(d: &BigDecimal, scale: i64) -> BigDecimal {
    d.with_scale_round(scale, RoundingMode::HalfUp)
}

/// Parses PostgreSQL's numeric input (`-12.50`, `1e3`, `.5`); `None` when it
/// is not a number. The display scale is the digits written after the
/// point minus the exponent, at least 0 (`1.5e3` is `1500`).
pub fn parse(s: &str) -> Option<BigDecimal> {
    let t = s.trim();
    let body = t.strip_prefix(['+', '-']).unwrap_or(t);
    let (mant, exp) = match body.find(['e', 'E']) {
        Some(at) => (&body[..at], Some(&body[at + 1..])),
        None => (body, None),
    };
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let digits_ok = |x: &str| x.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !digits_ok(int) || !digits_ok(frac) {
        return None;
    }
    let exp: i64 = match exp {
        Some(e) => {
            let e = e.strip_prefix('+').unwrap_or(e);
            let v: i64 = e.parse().ok()?;
            if v.abs() > 100_000 {
                return None;
            }
            v
        }
        None => 0,
    };
    let mut all = String::with_capacity(int.len() + frac.len() + 1);
    if t.starts_with('-') {
        all.push('-');
    }
    all.push_str(int);
    all.push_str(frac);
    let n: BigInt = all.parse().ok()?;
    let scale = frac.len() as i64 - exp;
    let d = BigDecimal::new(n, scale);
    Some(if scale < 0 { d.with_scale(0) } else { d })
}

/// Appends the text form: every digit up to the display scale, no exponent.
pub fn write(d: &BigDecimal, out: &mut String) {
    let (n, scale) = d.as_bigint_and_exponent();
    let (n, scale) = if scale < 0 { (n * BigInt::from(10).pow(scale.unsigned_abs() as u32), 0) } else { (n, scale) };
    let digits = n.magnitude().to_string();
    if n.sign() == Sign::Minus {
        out.push('-');
    }
    let scale = scale as usize;
    if scale == 0 {
        out.push_str(&digits);
    } else if digits.len() > scale {
        let (i, f) = digits.split_at(digits.len() - scale);
        out.push_str(i);
        out.push('.');
        out.push_str(f);
    } else {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', scale - digits.len()));
        out.push_str(&digits);
    }
}

/// The text form.
pub fn to_string(d: &BigDecimal) -> String {
    let mut s = String::new();
    write(d, &mut s);
    s
}

/// `a + b` (scale: the larger).
pub fn add(a: &BigDecimal, b: &BigDecimal) -> BigDecimal {
    let s = dscale(a).max(dscale(b));
    at_scale(a + b, s)
}

/// `a - b` (scale: the larger).
pub fn sub(a: &BigDecimal, b: &BigDecimal) -> BigDecimal {
    let s = dscale(a).max(dscale(b));
    at_scale(a - b, s)
}

/// `a * b` (scale: the sum).
pub fn mul(a: &BigDecimal, b: &BigDecimal) -> BigDecimal {
    let s = dscale(a) + dscale(b);
    at_scale(a * b, s)
}

/// PostgreSQL's weight (in base-10000 digits) and first base-10000 digit
/// of a non-zero value; `(0, 0)` for zero.
fn weight_and_first_digit(d: &BigDecimal) -> (i64, u32) {
    if d.is_zero() {
        return (0, 0);
    }
    let (n, scale) = d.as_bigint_and_exponent();
    let digits = n.magnitude().to_string();
    // Decimal exponent of the leading digit: d = 0.d1d2… × 10^(e10 + 1).
    let e10 = digits.len() as i64 - 1 - scale;
    let weight = e10.div_euclid(DEC_DIGITS);
    let lead = (e10.rem_euclid(DEC_DIGITS) + 1) as usize;
    let mut first = 0u32;
    for k in 0..lead {
        first = first * 10 + digits.as_bytes().get(k).map_or(0, |b| u32::from(b - b'0'));
    }
    (weight, first)
}

/// `select_div_scale`: the display scale of `a / b`.
pub fn div_scale(a: &BigDecimal, b: &BigDecimal) -> i64 {
    let (w1, f1) = weight_and_first_digit(a);
    let (w2, f2) = weight_and_first_digit(b);
    let mut qweight = w1 - w2;
    if f1 <= f2 {
        qweight -= 1;
    }
    let rscale = MIN_SIG_DIGITS - qweight * DEC_DIGITS;
    rscale.max(dscale(a)).max(dscale(b)).clamp(0, MAX_DISPLAY_SCALE)
}

/// `round(n / d)`, half away from zero, on integers.
fn div_round(n: &BigInt, d: &BigInt) -> BigInt {
    let q = n / d;
    let r = n - &q * d;
    if (r.magnitude() * 2u32) >= *d.magnitude() {
        let away = if (n.sign() == Sign::Minus) != (d.sign() == Sign::Minus) { -1 } else { 1 };
        q + away
    } else {
        q
    }
}

/// `10^k` as a big integer.
fn pow10(k: i64) -> BigInt {
    BigInt::from(10).pow(k.max(0) as u32)
}

/// `a / b` at `scale` digits after the point, rounded half away from zero.
pub fn div_at(a: &BigDecimal, b: &BigDecimal, scale: i64) -> Result<BigDecimal, SqlError> {
    if b.is_zero() {
        return Err(division_by_zero());
    }
    let (na, sa) = a.as_bigint_and_exponent();
    let (nb, sb) = b.as_bigint_and_exponent();
    // a / b × 10^scale = na × 10^(scale + sb − sa) / nb
    let k = scale + sb - sa;
    if k.abs() > 200_000 {
        return Err(overflow());
    }
    let (n, d) = if k >= 0 { (na * pow10(k), nb) } else { (na, nb * pow10(-k)) };
    Ok(BigDecimal::new(div_round(&n, &d), scale))
}

/// `a / b` with PostgreSQL's result scale.
pub fn div(a: &BigDecimal, b: &BigDecimal) -> Result<BigDecimal, SqlError> {
    if b.is_zero() {
        return Err(division_by_zero());
    }
    div_at(a, b, div_scale(a, b))
}

/// `a % b`: `a − trunc(a / b) × b` (scale: the larger).
pub fn rem(a: &BigDecimal, b: &BigDecimal) -> Result<BigDecimal, SqlError> {
    if b.is_zero() {
        return Err(division_by_zero());
    }
    let s = dscale(a).max(dscale(b));
    let (na, sa) = a.with_scale(s).into_bigint_and_exponent();
    let (nb, _) = b.with_scale(s).into_bigint_and_exponent();
    debug_assert_eq!(sa, s);
    Ok(BigDecimal::new(na % nb, s))
}

/// `22003` "numeric field overflow" for a value that does not fit
/// `numeric(precision, scale)`.
fn field_overflow(precision: u16, scale: u16) -> SqlError {
    let before = i64::from(precision) - i64::from(scale);
    let bound = if before == 0 { "1".to_owned() } else { format!("10^{before}") };
    let mut e = SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "numeric field overflow");
    e.detail = Some(format!(
        "A field with precision {precision}, scale {scale} must round to an absolute value less than {bound}."
    ));
    e
}

/// The value as a `numeric(precision, scale)` column holds it: rounded to
/// `scale` digits (half away from zero), `22003` if the digits before the
/// point then exceed `precision − scale`.
pub fn apply_typmod(d: &BigDecimal, precision: u16, scale: u16) -> Result<BigDecimal, SqlError> {
    let r = round(d, i64::from(scale));
    // 10^(precision − scale); below 1 when the scale exceeds the precision
    // (`numeric(3,4)` holds values below 0.001 in magnitude).
    let limit = BigDecimal::new(BigInt::from(1), i64::from(scale) - i64::from(precision));
    if r.abs() >= limit {
        return Err(field_overflow(precision, scale));
    }
    Ok(r)
}

/// Rounded to an integer (half away from zero); `None` beyond `i64`.
pub fn to_i64_rounded(d: &BigDecimal) -> Option<i64> {
    round(d, 0).to_i64()
}

/// The nearest `f64` (numeric → float8).
pub fn to_f64(d: &BigDecimal) -> f64 {
    to_string(d).parse().unwrap_or(f64::NAN)
}

/// The numeric of a float, as PostgreSQL's `float8_numeric`: 15 significant
/// digits (`DBL_DIG`), trailing zeros dropped. NaN and infinities are not
/// supported here (`0A000`).
pub fn from_f64(f: f64, digits: usize) -> Result<BigDecimal, SqlError> {
    if !f.is_finite() {
        return Err(SqlError::unsupported("NaN and infinity in numeric"));
    }
    let text = format!("{:.*e}", digits.saturating_sub(1), f);
    let d = parse(&text).ok_or_else(overflow)?;
    // %g drops trailing zeros of the fraction.
    let n = d.normalized();
    Ok(if n.fractional_digit_count() < 0 { n.with_scale(0) } else { n })
}

/// An integer as a numeric of scale 0.
pub fn from_i128(v: i128) -> BigDecimal {
    BigDecimal::new(BigInt::from(v), 0)
}

/// Numeric comparison (scale does not matter: `1.0 = 1.00`).
pub fn cmp(a: &BigDecimal, b: &BigDecimal) -> Ordering {
    a.cmp(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> BigDecimal {
        parse(s).unwrap()
    }

    #[test]
    fn display_scale_follows_postgresql() {
        assert_eq!(to_string(&add(&n("0.1"), &n("0.2"))), "0.3");
        assert_eq!(to_string(&div(&n("1.0"), &n("3")).unwrap()), "0.33333333333333333333");
        assert_eq!(to_string(&div(&n("59"), &n("4")).unwrap()), "14.7500000000000000");
        assert_eq!(to_string(&div(&n("5"), &n("3")).unwrap()), "1.6666666666666667");
        assert_eq!(to_string(&mul(&n("1.10"), &n("2"))), "2.20");
        assert_eq!(to_string(&add(&n("1.5"), &n("1.25"))), "2.75");
        assert_eq!(to_string(&div(&n("10"), &n("4")).unwrap()), "2.5000000000000000");
        assert_eq!(to_string(&div(&n("123456789"), &n("7")).unwrap()), "17636684.142857142857");
        assert_eq!(to_string(&rem(&n("-7.5"), &n("2")).unwrap()), "-1.5");
        assert_eq!(to_string(&n("1.5e3")), "1500");
        assert_eq!(to_string(&n("1.23e-5")), "0.0000123");
        assert_eq!(to_string(&n("-0.05")), "-0.05");
        assert!(div(&n("1"), &n("0.0")).is_err());
    }

    #[test]
    fn typmod_rounds_half_away_from_zero_and_overflows() {
        assert_eq!(to_string(&apply_typmod(&n("2.675"), 10, 2).unwrap()), "2.68");
        assert_eq!(to_string(&apply_typmod(&n("-2.5"), 10, 0).unwrap()), "-3");
        assert_eq!(to_string(&apply_typmod(&n("12345.678"), 12, 2).unwrap()), "12345.68");
        assert_eq!(apply_typmod(&n("123456.789"), 5, 2).unwrap_err().code, "22003");
        assert_eq!(apply_typmod(&n("999.995"), 5, 2).unwrap_err().code, "22003");
        assert_eq!(to_string(&apply_typmod(&n("0.00005"), 3, 4).unwrap()), "0.0001");
        assert_eq!(apply_typmod(&n("0.1"), 3, 4).unwrap_err().code, "22003");
        assert_eq!(to_i64_rounded(&n("2.5")), Some(3));
        assert_eq!(to_i64_rounded(&n("-2.5")), Some(-3));
        assert_eq!(to_string(&from_f64(0.1, 15).unwrap()), "0.1");
        assert_eq!(to_string(&from_f64(1e20, 15).unwrap()), "100000000000000000000");
    }
}
