//! Reading stored rows in place: one column of an encoded row, as a
//! [`Key`] that borrows the row's bytes (from the pinned page, or from a
//! copy in the execution's memory context), so the executor can filter and
//! hash rows without decoding them. A row is decoded into owned
//! [`Value`]s only once it is known to be part of the result.
//!
//! The row format is `types`' (`crate::types`): a fixed-size column takes
//! [`ColumnType::fixed_size`] bytes, every other column a 4-byte
//! little-endian length and its bytes. Lengths are checked against the
//! buffer, so a corrupted row is a [`CodecError`], never a panic.
//!
//! ```text
//! key_of(types, row, 2) — skips columns 0 and 1 by their sizes, reads 2
//! ```

use crate::types::{corrupted, CodecError, ColumnType, Value};

/// A join or filter key, compared as the executor compares values: an
/// integer of any width by value, text by its bytes (char(n) as stored,
/// blank-padded, on both sides), floats and numerics by value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Key<'a> {
    /// `int2`, `int4`, `int8` or `oid`.
    Int(i64),
    /// `text`, `char(n)`, `varchar(n)`: the stored bytes (valid UTF-8,
    /// checked when the row was written; equality of bytes is equality of
    /// strings, so they are not checked again on every read).
    Text(&'a [u8]),
    /// `bool`.
    Bool(bool),
    /// `timestamp` or `timestamptz`.
    Timestamp(i64),
    /// `float4` (widened) or `float8`, as bits: every zero is `+0.0` and
    /// every NaN one NaN, as PostgreSQL's float equality has them.
    Float(u64),
    /// `numeric`: its text form without trailing fractional zeros, so
    /// `1.50 = 1.5` as in PostgreSQL.
    Numeric(&'a [u8]),
    /// `date`.
    Date(i32),
    /// `bytea`: the stored bytes.
    Bytes(&'a [u8]),
}

impl<'a> Key<'a> {
    /// The key of an owned value; `None` for NULL, which equals nothing.
    pub(crate) fn of_value(v: &'a Value) -> Option<Key<'a>> {
        Some(match v {
            Value::Null => return None,
            Value::Int4(x) => Key::Int(i64::from(*x)),
            Value::Int8(x) => Key::Int(*x),
            Value::Text(s) => Key::Text(s.as_bytes()),
            Value::Bool(b) => Key::Bool(*b),
            Value::Timestamp(t) => Key::Timestamp(*t),
            Value::Float(f) => float_key(f.0),
            Value::Numeric(n) => Key::Numeric(numeric_key(n.as_bytes())),
            Value::Date(d) => Key::Date(*d),
            Value::Bytea(b) => Key::Bytes(b),
        })
    }
}

fn float_key(x: f64) -> Key<'static> {
    Key::Float(if x == 0.0 {
        0
    } else if x.is_nan() {
        f64::NAN.to_bits()
    } else {
        x.to_bits()
    })
}

/// A numeric's text form with the fraction's trailing zeros (and a bare
/// point) cut, and a negative zero as zero: one form per value.
fn numeric_key(text: &[u8]) -> &[u8] {
    let mut t = text;
    if t.contains(&b'.') {
        while let [rest @ .., b'0'] = t {
            t = rest;
        }
        if let [rest @ .., b'.'] = t {
            t = rest;
        }
    }
    if t == b"-0" {
        b"0"
    } else {
        t
    }
}

fn read<const N: usize>(bytes: &[u8], at: usize) -> Result<[u8; N], CodecError> {
    bytes
        .get(at..at.checked_add(N).ok_or_else(|| corrupted("length overflow"))?)
        .and_then(|s| s.try_into().ok())
        .ok_or_else(|| corrupted("row shorter than its columns"))
}

/// The bytes of column `column` of the row `bytes` stored for `types`
/// (without a varlena's length word); `None` if it is NULL or the row was
/// written before the column was added.
pub(crate) fn column_bytes<'b>(
    types: &[ColumnType],
    bytes: &'b [u8],
    column: usize,
) -> Result<Option<&'b [u8]>, CodecError> {
    let count = read::<2>(bytes, 0)?;
    let stored = usize::from(u16::from_le_bytes(count));
    if stored > types.len() {
        return Err(CodecError::Corrupted("row has more columns than its relation"));
    }
    let bitmap = bytes.get(2..2 + stored.div_ceil(8)).ok_or_else(|| corrupted("row shorter than its null bitmap"))?;
    let null = |i: usize| bitmap[i / 8] & (1 << (i % 8)) != 0;
    if column >= stored || null(column) {
        return Ok(None);
    }
    let mut at = 2 + bitmap.len();
    for (i, ty) in types.iter().enumerate().take(column + 1) {
        if null(i) {
            continue;
        }
        let (start, len) = match ty.fixed_size() {
            Some(n) => (at, n),
            None => (at + 4, u32::from_le_bytes(read::<4>(bytes, at)?) as usize),
        };
        let end = start.checked_add(len).ok_or_else(|| corrupted("length overflow"))?;
        if end > bytes.len() {
            return Err(CodecError::Corrupted("row shorter than its columns"));
        }
        if i == column {
            return Ok(Some(&bytes[start..end]));
        }
        at = end;
    }
    Ok(None)
}

/// The [`Key`] of column `column` of the stored row `bytes`; `None` for
/// NULL.
pub(crate) fn key_of<'b>(types: &[ColumnType], bytes: &'b [u8], column: usize) -> Result<Option<Key<'b>>, CodecError> {
    let ty = types.get(column).copied().ok_or_else(|| CodecError::Arity { expected: types.len(), got: column + 1 })?;
    let Some(b) = column_bytes(types, bytes, column)? else {
        return Ok(None);
    };
    let fixed = |n: usize| -> Result<[u8; 8], CodecError> {
        let mut w = [0u8; 8];
        w[..n].copy_from_slice(b.get(..n).ok_or_else(|| corrupted("row shorter than its columns"))?);
        Ok(w)
    };
    Ok(Some(match ty {
        ColumnType::Int4 => Key::Int(i64::from(i32::from_le_bytes(read::<4>(b, 0)?))),
        ColumnType::Int8 => Key::Int(i64::from_le_bytes(fixed(8)?)),
        ColumnType::Oid => Key::Int(i64::from(u32::from_le_bytes(read::<4>(b, 0)?))),
        ColumnType::Bytea => Key::Bytes(b),
        ColumnType::Timestamp | ColumnType::Timestamptz => Key::Timestamp(i64::from_le_bytes(fixed(8)?)),
        ColumnType::Bool => match b.first() {
            Some(0) => Key::Bool(false),
            Some(1) => Key::Bool(true),
            _ => return Err(CodecError::Corrupted("bool is neither 0 nor 1")),
        },
        ColumnType::Text | ColumnType::Char(_) | ColumnType::Varchar(_) => Key::Text(b),
        ColumnType::Int2 => Key::Int(i64::from(i16::from_le_bytes(read::<2>(b, 0)?))),
        ColumnType::Float4 => float_key(f64::from(f32::from_le_bytes(read::<4>(b, 0)?))),
        ColumnType::Float8 => float_key(f64::from_le_bytes(fixed(8)?)),
        ColumnType::Numeric(_) => Key::Numeric(numeric_key(b)),
        ColumnType::Date => Key::Date(i32::from_le_bytes(read::<4>(b, 0)?)),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::encode_row;

    #[test]
    fn every_column_reads_in_place_as_decoding_would() {
        let types = [ColumnType::Int4, ColumnType::Text, ColumnType::Int8, ColumnType::Bool, ColumnType::Char(3)];
        let rows = [
            vec![Value::Int4(-7), Value::Text("héllo".into()), Value::Int8(1 << 40), Value::Bool(true), "ab ".into()],
            vec![Value::Null, Value::Null, Value::Int8(-1), Value::Null, Value::Text("xyz".into())],
        ];
        for row in rows {
            let bytes = encode_row(&types, &row).unwrap();
            for (c, v) in row.iter().enumerate() {
                assert_eq!(key_of(&types, &bytes, c).unwrap(), Key::of_value(v), "column {c} of {row:?}");
            }
        }
    }

    #[test]
    fn numerics_and_floats_are_keyed_by_value() {
        assert_eq!(Key::of_value(&Value::Numeric("1.50".into())), Key::of_value(&Value::Numeric("1.5".into())));
        assert_eq!(Key::of_value(&Value::Numeric("2.000".into())), Key::of_value(&Value::Numeric("2".into())));
        assert_eq!(Key::of_value(&Value::Numeric("-0.00".into())), Key::of_value(&Value::Numeric("0".into())));
        assert_ne!(Key::of_value(&Value::Numeric("10".into())), Key::of_value(&Value::Numeric("1".into())));
        let f = |x: f64| float_key(x);
        assert_eq!(f(0.0), f(-0.0));
        assert_eq!(f(f64::NAN), f(-f64::NAN));
        assert_ne!(f(1.0), f(2.0));
        let types = [ColumnType::Float4, ColumnType::Numeric(None), ColumnType::Int2, ColumnType::Date];
        let row = vec![
            Value::Float(crate::types::Float(0.5)),
            Value::Numeric("3.10".into()),
            Value::Int4(-3),
            Value::Date(42),
        ];
        let bytes = encode_row(&types, &row).unwrap();
        for (c, v) in row.iter().enumerate() {
            assert_eq!(key_of(&types, &bytes, c).unwrap(), Key::of_value(v), "column {c}");
        }
    }

    #[test]
    fn a_truncated_row_is_an_error_not_a_panic() {
        let types = [ColumnType::Int4, ColumnType::Text];
        let bytes = encode_row(&types, &[Value::Int4(1), Value::Text("abcdef".into())]).unwrap();
        for cut in 0..bytes.len() {
            assert!(key_of(&types, &bytes[..cut], 1).is_err(), "cut at {cut}");
        }
        // A row written before column 1 existed reads it as NULL.
        let old = encode_row(&types[..1], &[Value::Int4(1)]).unwrap();
        assert_eq!(key_of(&types, &old, 1).unwrap(), None);
    }
}
