//! Column types, values and the row codec.
//!
//! A row is stored as
//!
//! ```text
//! | ncols: u16 LE | null bitmap: ceil(ncols / 8) bytes | column 0 | column 1 | … |
//! ```
//!
//! `ncols` is the relation's column count when the row was written, so rows
//! written before `add_column` read the new columns as NULL (PostgreSQL's
//! `t_natts`). A null column takes no bytes, a null column takes no bytes, `int4` takes 4 bytes and `int8` 8
//! (little-endian), and `text` takes a 4-byte little-endian length followed by
//! its UTF-8 bytes. Decoding checks every length against the buffer and
//! returns [`CodecError`] instead of panicking, so a corrupted tuple is
//! reported, never trusted.
//!
//! ```
//! use turnstile_engine::types::{decode_row, encode_row, ColumnType, Value};
//! let types = [ColumnType::Int4, ColumnType::Text, ColumnType::Int8];
//! let row = vec![Value::Int4(7), Value::Text("seven".into()), Value::Null];
//! let bytes = encode_row(&types, &row).unwrap();
//! assert_eq!(decode_row(&types, &bytes).unwrap(), row);
//! ```

use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::fmt;

/// A column's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ColumnType {
    /// 32-bit signed integer (`integer`).
    Int4,
    /// 64-bit signed integer (`bigint`).
    Int8,
    /// Variable-length UTF-8 text.
    Text,
}

impl ColumnType {
    /// PostgreSQL's name (`int4`, `int8`, `text`).
    pub const fn name(self) -> &'static str {
        match self {
            ColumnType::Int4 => "int4",
            ColumnType::Int8 => "int8",
            ColumnType::Text => "text",
        }
    }

    /// Parses `int4`/`integer`/`int`, `int8`/`bigint`, `text`.
    pub fn parse(name: &str) -> Option<ColumnType> {
        match name.to_ascii_lowercase().as_str() {
            "int4" | "integer" | "int" => Some(ColumnType::Int4),
            "int8" | "bigint" => Some(ColumnType::Int8),
            "text" => Some(ColumnType::Text),
            _ => None,
        }
    }

    /// Bytes of a non-null value, for fixed-size types.
    pub const fn fixed_size(self) -> Option<usize> {
        match self {
            ColumnType::Int4 => Some(4),
            ColumnType::Int8 => Some(8),
            ColumnType::Text => None,
        }
    }
}

impl fmt::Display for ColumnType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One column value.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// An `int4`.
    Int4(i32),
    /// An `int8`.
    Int8(i64),
    /// A `text`.
    Text(String),
}

impl Value {
    /// The value's type, `None` for NULL.
    pub fn column_type(&self) -> Option<ColumnType> {
        match self {
            Value::Null => None,
            Value::Int4(_) => Some(ColumnType::Int4),
            Value::Int8(_) => Some(ColumnType::Int8),
            Value::Text(_) => Some(ColumnType::Text),
        }
    }

    /// The value as an `i64`, for integer types.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int4(v) => Some(i64::from(*v)),
            Value::Int8(v) => Some(*v),
            _ => None,
        }
    }

    /// Whether the value can be stored in a column of type `ty` (NULL fits
    /// everywhere; an `int8` literal fits `int4` if it is in range).
    pub fn coerce(&self, ty: ColumnType) -> Option<Value> {
        match (self, ty) {
            (Value::Null, _) => Some(Value::Null),
            (Value::Int4(v), ColumnType::Int4) => Some(Value::Int4(*v)),
            (Value::Int4(v), ColumnType::Int8) => Some(Value::Int8(i64::from(*v))),
            (Value::Int8(v), ColumnType::Int4) => i32::try_from(*v).ok().map(Value::Int4),
            (Value::Int8(v), ColumnType::Int8) => Some(Value::Int8(*v)),
            (Value::Text(s), ColumnType::Text) => Some(Value::Text(s.clone())),
            _ => None,
        }
    }

    /// SQL ordering within one type: NULL sorts last (as in a PostgreSQL
    /// B-tree by default); integers of different widths compare by value.
    pub fn sql_cmp(&self, other: &Value) -> Ordering {
        match (self, other) {
            (Value::Null, Value::Null) => Ordering::Equal,
            (Value::Null, _) => Ordering::Greater,
            (_, Value::Null) => Ordering::Less,
            (Value::Text(a), Value::Text(b)) => a.cmp(b),
            (a, b) => match (a.as_i64(), b.as_i64()) {
                (Some(x), Some(y)) => x.cmp(&y),
                // Mixed text and integer: order by type so sorting is total.
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => Ordering::Equal,
            },
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("NULL"),
            Value::Int4(v) => write!(f, "{v}"),
            Value::Int8(v) => write!(f, "{v}"),
            Value::Text(s) => write!(f, "'{}'", s.replace('\'', "''")),
        }
    }
}

impl From<i32> for Value {
    fn from(v: i32) -> Value {
        Value::Int4(v)
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int8(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Text(v.to_owned())
    }
}

impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::Text(v)
    }
}

/// A row that cannot be encoded or decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// The row has a different number of values than the relation has columns.
    #[error("row has {got} values, expected {expected}")]
    Arity {
        /// Columns of the relation.
        expected: usize,
        /// Values given.
        got: usize,
    },
    /// A value does not fit its column's type.
    #[error("column {column}: value {value} does not fit type {ty}")]
    Type {
        /// Column number.
        column: usize,
        /// The value.
        value: String,
        /// The column's type.
        ty: ColumnType,
    },
    /// A stored row is shorter than its own lengths say, or not UTF-8.
    #[error("corrupted row: {0}")]
    Corrupted(&'static str),
    /// A text value is longer than a row can hold.
    #[error("text value of {0} bytes is too long")]
    TooLong(usize),
}

/// Longest text value, in bytes (a row must fit on an 8 kB page).
pub const TEXT_MAX: usize = 4096;

fn bitmap_len(ncols: usize) -> usize {
    ncols.div_ceil(8)
}

/// Bytes before the first column: the column count and the null bitmap.
fn header_len(ncols: usize) -> usize {
    2 + bitmap_len(ncols)
}

/// Most columns a relation may have.
pub const MAX_COLUMNS: usize = 1600;

/// Encodes `row` for columns of `types`, coercing integer widths.
pub fn encode_row(types: &[ColumnType], row: &[Value]) -> Result<Vec<u8>, CodecError> {
    let mut out = Vec::with_capacity(bitmap_len(types.len()) + 8 * types.len());
    encode_row_into(types, row, &mut out)?;
    Ok(out)
}

/// As [`encode_row`], appending to `out` (which is cleared first).
pub fn encode_row_into(types: &[ColumnType], row: &[Value], out: &mut Vec<u8>) -> Result<(), CodecError> {
    if row.len() != types.len() {
        return Err(CodecError::Arity { expected: types.len(), got: row.len() });
    }
    if types.len() > MAX_COLUMNS {
        return Err(CodecError::Arity { expected: MAX_COLUMNS, got: types.len() });
    }
    out.clear();
    out.extend_from_slice(&(types.len() as u16).to_le_bytes());
    out.resize(header_len(types.len()), 0);
    for (i, (ty, value)) in types.iter().zip(row).enumerate() {
        let mismatch = || CodecError::Type { column: i, value: value.to_string(), ty: *ty };
        match (ty, value) {
            (_, Value::Null) => out[2 + i / 8] |= 1 << (i % 8),
            (ColumnType::Int4, v) => {
                let x = v.as_i64().and_then(|x| i32::try_from(x).ok()).ok_or_else(mismatch)?;
                out.extend_from_slice(&x.to_le_bytes());
            }
            (ColumnType::Int8, v) => out.extend_from_slice(&v.as_i64().ok_or_else(mismatch)?.to_le_bytes()),
            (ColumnType::Text, Value::Text(s)) => {
                if s.len() > TEXT_MAX {
                    return Err(CodecError::TooLong(s.len()));
                }
                out.extend_from_slice(&(s.len() as u32).to_le_bytes());
                out.extend_from_slice(s.as_bytes());
            }
            (ColumnType::Text, _) => return Err(mismatch()),
        }
    }
    Ok(())
}

fn take<'a>(bytes: &'a [u8], at: &mut usize, n: usize) -> Result<&'a [u8], CodecError> {
    let end = at.checked_add(n).ok_or(CodecError::Corrupted("length overflow"))?;
    let s = bytes.get(*at..end).ok_or(CodecError::Corrupted("row shorter than its columns"))?;
    *at = end;
    Ok(s)
}

/// Decodes a row stored for columns of `types`. Rows written before a
/// column was added are shorter: missing trailing columns read as NULL.
pub fn decode_row(types: &[ColumnType], bytes: &[u8]) -> Result<Vec<Value>, CodecError> {
    let mut row = Vec::with_capacity(types.len());
    decode_row_into(types, bytes, &mut row)?;
    Ok(row)
}

/// As [`decode_row`], into `row` (cleared first).
pub fn decode_row_into(types: &[ColumnType], bytes: &[u8], row: &mut Vec<Value>) -> Result<(), CodecError> {
    row.clear();
    let stored = stored_columns(types.len(), bytes)?;
    let mut at = header_len(stored);
    for (i, ty) in types.iter().enumerate() {
        if i >= stored || is_null(bytes, i) {
            row.push(Value::Null);
            continue;
        }
        let v = match ty {
            ColumnType::Int4 => Value::Int4(i32::from_le_bytes(take(bytes, &mut at, 4)?.try_into().unwrap_or([0; 4]))),
            ColumnType::Int8 => Value::Int8(i64::from_le_bytes(take(bytes, &mut at, 8)?.try_into().unwrap_or([0; 8]))),
            ColumnType::Text => {
                let len = u32::from_le_bytes(take(bytes, &mut at, 4)?.try_into().unwrap_or([0; 4])) as usize;
                if len > TEXT_MAX {
                    return Err(CodecError::Corrupted("text length out of range"));
                }
                let s = std::str::from_utf8(take(bytes, &mut at, len)?)
                    .map_err(|_| CodecError::Corrupted("text is not UTF-8"))?;
                Value::Text(s.to_owned())
            }
        };
        row.push(v);
    }
    if at != bytes.len() {
        return Err(CodecError::Corrupted("trailing bytes after the last column"));
    }
    Ok(())
}

/// The column count a stored row was written with, checked against the
/// relation's (columns are only ever added) and the buffer's length.
fn stored_columns(ncols: usize, bytes: &[u8]) -> Result<usize, CodecError> {
    let count = bytes.get(..2).ok_or(CodecError::Corrupted("row shorter than its header"))?;
    let stored = u16::from_le_bytes([count[0], count[1]]) as usize;
    if stored > ncols {
        return Err(CodecError::Corrupted("row has more columns than its relation"));
    }
    if bytes.len() < header_len(stored) {
        return Err(CodecError::Corrupted("row shorter than its null bitmap"));
    }
    Ok(stored)
}

fn is_null(bytes: &[u8], column: usize) -> bool {
    bytes[2 + column / 8] & (1 << (column % 8)) != 0
}

/// Byte offset and size of fixed-size column `column` inside an encoded
/// row, if it is not NULL — for in-place updates that keep the row's size.
pub fn fixed_column_span(
    types: &[ColumnType],
    bytes: &[u8],
    column: usize,
) -> Result<Option<(usize, usize)>, CodecError> {
    let ty = *types.get(column).ok_or(CodecError::Arity { expected: types.len(), got: column + 1 })?;
    let size = ty.fixed_size().ok_or(CodecError::Type { column, value: "text".into(), ty })?;
    let stored = stored_columns(types.len(), bytes)?;
    if column >= stored || is_null(bytes, column) {
        return Ok(None);
    }
    let mut at = header_len(stored);
    for (i, t) in types.iter().enumerate().take(column) {
        if is_null(bytes, i) {
            continue;
        }
        match t.fixed_size() {
            Some(n) => at += n,
            None => {
                let len = u32::from_le_bytes(take(bytes, &mut at.clone(), 4)?.try_into().unwrap_or([0; 4])) as usize;
                at += 4 + len;
            }
        }
    }
    if at + size > bytes.len() {
        return Err(CodecError::Corrupted("row shorter than its columns"));
    }
    Ok(Some((at, size)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [ColumnType; 3] = [ColumnType::Int4, ColumnType::Int8, ColumnType::Text];

    #[test]
    fn every_type_round_trips_with_and_without_nulls() {
        let rows = [
            vec![Value::Int4(i32::MIN), Value::Int8(i64::MAX), Value::Text(String::new())],
            vec![Value::Null, Value::Int8(-1), Value::Text("héllo, wörld".into())],
            vec![Value::Int4(0), Value::Null, Value::Null],
            vec![Value::Null, Value::Null, Value::Null],
        ];
        for row in rows {
            let bytes = encode_row(&ALL, &row).unwrap();
            assert_eq!(decode_row(&ALL, &bytes).unwrap(), row);
        }
        let wide: Vec<ColumnType> = (0..60).map(|_| ColumnType::Int4).collect();
        let row: Vec<Value> = (0..60).map(|i| if i % 7 == 0 { Value::Null } else { Value::Int4(i) }).collect();
        assert_eq!(decode_row(&wide, &encode_row(&wide, &row).unwrap()).unwrap(), row);
    }

    #[test]
    fn bad_rows_are_typed_errors() {
        assert!(matches!(encode_row(&ALL, &[Value::Int4(1)]), Err(CodecError::Arity { .. })));
        assert!(matches!(
            encode_row(&ALL, &[Value::Text("x".into()), Value::Null, Value::Null]),
            Err(CodecError::Type { column: 0, .. })
        ));
        assert!(matches!(encode_row(&[ColumnType::Int4], &[Value::Int8(1 << 40)]), Err(CodecError::Type { .. })));
        let good = encode_row(&ALL, &[Value::Int4(1), Value::Int8(2), Value::Text("abc".into())]).unwrap();
        for cut in 0..good.len() {
            assert!(decode_row(&ALL, &good[..cut]).is_err(), "truncated at {cut} decoded");
        }
        let mut long = good.clone();
        long.push(0);
        assert!(decode_row(&ALL, &long).is_err());
        let mut bad_len = good;
        let text_len_at = 2 + 1 + 4 + 8;
        bad_len[text_len_at..text_len_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(decode_row(&ALL, &bad_len), Err(CodecError::Corrupted(_))));
    }

    #[test]
    fn rows_written_before_add_column_read_the_new_column_as_null() {
        let old = encode_row(&ALL[..2], &[Value::Int4(1), Value::Int8(2)]).unwrap();
        assert_eq!(decode_row(&ALL, &old).unwrap(), vec![Value::Int4(1), Value::Int8(2), Value::Null]);
        let new = encode_row(&ALL, &[Value::Int4(1), Value::Int8(2), Value::Null]).unwrap();
        assert!(decode_row(&ALL[..2], &new).is_err(), "a row wider than its relation decoded");
    }

    #[test]
    fn fixed_column_span_finds_the_bytes_to_update_in_place() {
        let types = [ColumnType::Int4, ColumnType::Text, ColumnType::Int8];
        let row = vec![Value::Int4(5), Value::Text("filler".into()), Value::Int8(9)];
        let mut bytes = encode_row(&types, &row).unwrap();
        let (at, size) = fixed_column_span(&types, &bytes, 2).unwrap().unwrap();
        bytes[at..at + size].copy_from_slice(&42i64.to_le_bytes());
        assert_eq!(decode_row(&types, &bytes).unwrap()[2], Value::Int8(42));
        let nulls = encode_row(&types, &[Value::Null, Value::Null, Value::Int8(1)]).unwrap();
        assert_eq!(fixed_column_span(&types, &nulls, 0).unwrap(), None);
        assert!(fixed_column_span(&types, &nulls, 1).is_err());
    }

    #[test]
    fn sql_ordering_puts_null_last_and_compares_widths_by_value() {
        assert_eq!(Value::Int4(3).sql_cmp(&Value::Int8(3)), Ordering::Equal);
        assert_eq!(Value::Int4(3).sql_cmp(&Value::Null), Ordering::Less);
        assert_eq!(Value::Text("a".into()).sql_cmp(&Value::Text("b".into())), Ordering::Less);
    }
}
