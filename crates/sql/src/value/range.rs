//! Range checks (`22003`, `numeric_value_out_of_range`) shared by text
//! input, casts and arithmetic: an integer within its type, a float result
//! that overflowed or underflowed, a `real` from a `double precision`.

use super::sql_type::SqlType;
use crate::error::SqlError;
use turnstile_lock::SqlState;

/// `22003` for a float result that overflowed or underflowed.
pub fn float_check(v: f64, inputs_finite: bool, inputs_zero: bool) -> Result<f64, SqlError> {
    if v.is_infinite() && inputs_finite {
        return Err(SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow"));
    }
    if v == 0.0 && !inputs_zero {
        return Err(SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: underflow"));
    }
    Ok(v)
}

/// A `real` from a `double precision` (`22003` when it does not fit).
pub(super) fn to_float4(f: f64) -> Result<f64, SqlError> {
    let n = f as f32;
    if n.is_infinite() && f.is_finite() {
        return Err(SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow"));
    }
    if n == 0.0 && f != 0.0 {
        return Err(SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: underflow"));
    }
    Ok(f64::from(n))
}

/// An integer of type `ty` (`22003` "integer out of range" and its kin
/// when `v` does not fit).
pub fn int_in_range(v: i64, ty: SqlType) -> Result<i64, SqlError> {
    let ok = match ty {
        SqlType::Int2 => i16::try_from(v).is_ok(),
        SqlType::Int4 => i32::try_from(v).is_ok(),
        SqlType::Oid | SqlType::Xid | SqlType::Reg(_) => u32::try_from(v).is_ok() || i32::try_from(v).is_ok(),
        _ => true,
    };
    if ok {
        Ok(v)
    } else {
        Err(out_of_range(ty))
    }
}

/// `22003`: a value does not fit its type.
pub fn out_of_range(ty: SqlType) -> SqlError {
    let what = match ty {
        SqlType::Float4 | SqlType::Float8 => "value".to_owned(),
        SqlType::Oid => "OID".to_owned(),
        SqlType::Date | SqlType::Timestamp | SqlType::TimestampTz => format!("{} value", ty.name()),
        other => other.name().to_owned(),
    };
    SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, format!("{what} out of range"))
}
