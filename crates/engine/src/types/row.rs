//! The row codec: a row of [`Value`]s encoded for its relation's column
//! types (the layout is in the parent module's documentation), decoded
//! back, and the errors of both; `bytea`'s hex text form.

use super::*;

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
    /// Text longer than a `char(n)`/`varchar(n)` column allows (SQLSTATE
    /// `22001`).
    #[error("value too long for type {ty} (column {column}: {chars} characters)")]
    TooLongFor {
        /// Column number.
        column: usize,
        /// The column's type.
        ty: ColumnType,
        /// Characters in the value.
        chars: usize,
    },
    /// Text that is not a valid input for a type (SQLSTATE `22P02`).
    #[error("invalid input syntax for type {ty}: \"{input}\"")]
    BadInput {
        /// The type.
        ty: ColumnType,
        /// The input (at most its first 64 characters).
        input: String,
    },
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
            (ColumnType::Bool, Value::Bool(b)) => out.push(u8::from(*b)),
            (ColumnType::Timestamp, Value::Timestamp(t)) => out.extend_from_slice(&t.to_le_bytes()),
            (ColumnType::Text, Value::Text(s)) => put_text(out, s)?,
            (ColumnType::Char(_) | ColumnType::Varchar(_), Value::Text(_)) => match value.cast_to(*ty, i)? {
                Value::Text(s) => put_text(out, &s)?,
                _ => return Err(mismatch()),
            },
            (ColumnType::Numeric(_), Value::Numeric(n)) => put_text(out, n)?,
            (ColumnType::Bytea, Value::Bytea(b)) => put_bytes(out, b)?,
            (
                ColumnType::Int2
                | ColumnType::Float4
                | ColumnType::Float8
                | ColumnType::Date
                | ColumnType::Oid
                | ColumnType::Timestamptz,
                v,
            ) => out.extend_from_slice(&fixed_bytes(*ty, v).ok_or_else(mismatch)?),
            (
                ColumnType::Text
                | ColumnType::Char(_)
                | ColumnType::Varchar(_)
                | ColumnType::Bool
                | ColumnType::Timestamp
                | ColumnType::Numeric(_)
                | ColumnType::Bytea,
                _,
            ) => return Err(mismatch()),
        }
    }
    Ok(())
}

fn put_text(out: &mut Vec<u8>, s: &str) -> Result<(), CodecError> {
    put_bytes(out, s.as_bytes())
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) -> Result<(), CodecError> {
    if b.len() > TEXT_MAX {
        return Err(CodecError::TooLong(b.len()));
    }
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
    Ok(())
}

/// `bytea`'s hex output form (`\x00ff`), PostgreSQL's default
/// `bytea_output`.
pub fn bytea_hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(2 + 2 * b.len());
    s.push_str("\\x");
    for byte in b {
        s.push(char::from(HEX[usize::from(byte >> 4)]));
        s.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    s
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Parses `bytea`'s hex input form (`\x00FF`, whitespace between byte
/// pairs allowed); `None` if `text` is not one.
pub fn parse_bytea_hex(text: &str) -> Option<Vec<u8>> {
    let hex = text.strip_prefix("\\x").or_else(|| text.strip_prefix("\\X"))?;
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(hex.len() / 2);
    let mut chars = hex.bytes().filter(|c| !c.is_ascii_whitespace());
    while let Some(hi) = chars.next() {
        let lo = chars.next()?;
        out.push((digit(hi)? << 4) | digit(lo)?);
    }
    Some(out)
}

/// [`CodecError::Corrupted`], built only on the error path (`#[cold]`: a
/// decode that succeeds never constructs or drops an error value).
#[cold]
pub(crate) fn corrupted(what: &'static str) -> CodecError {
    CodecError::Corrupted(what)
}

fn take<'a>(bytes: &'a [u8], at: &mut usize, n: usize) -> Result<&'a [u8], CodecError> {
    let end = at.checked_add(n).ok_or_else(|| corrupted("length overflow"))?;
    let s = bytes.get(*at..end).ok_or_else(|| corrupted("row shorter than its columns"))?;
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
    decode_row_append(types, bytes, row)
}

/// As [`decode_row`], appending the values to `row` (a join extends the
/// outer row with the inner one's columns).
pub fn decode_row_append(types: &[ColumnType], bytes: &[u8], row: &mut Vec<Value>) -> Result<(), CodecError> {
    row.reserve(types.len());
    decode_row_refs(types, bytes, |v| row.push(v.to_owned_value()))
}

/// A value of a stored row, borrowed from the row's bytes (on the pinned
/// page, or in the execution's memory context): what the executor hands
/// out instead of an owned [`Value`], so reading a text column allocates
/// nothing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ValueRef<'a> {
    /// SQL NULL.
    Null,
    /// An `int4` (or a widened `int2`).
    Int4(i32),
    /// An `int8` (or a widened `oid`).
    Int8(i64),
    /// A `text`, `char(n)` (blank-padded) or `varchar(n)`.
    Text(&'a str),
    /// A `bool`.
    Bool(bool),
    /// A `timestamp` or `timestamptz`.
    Timestamp(i64),
    /// A `float4` (widened) or `float8`.
    Float(Float),
    /// A `numeric`, as its stored text form.
    Numeric(&'a str),
    /// A `date`.
    Date(i32),
    /// A `bytea`.
    Bytea(&'a [u8]),
}

impl ValueRef<'_> {
    /// The owned value (text and `bytea` are copied).
    pub fn to_owned_value(self) -> Value {
        match self {
            ValueRef::Null => Value::Null,
            ValueRef::Int4(v) => Value::Int4(v),
            ValueRef::Int8(v) => Value::Int8(v),
            ValueRef::Text(s) => Value::Text(s.to_owned()),
            ValueRef::Bool(b) => Value::Bool(b),
            ValueRef::Timestamp(t) => Value::Timestamp(t),
            ValueRef::Float(f) => Value::Float(f),
            ValueRef::Numeric(s) => Value::Numeric(s.to_owned()),
            ValueRef::Date(d) => Value::Date(d),
            ValueRef::Bytea(b) => Value::Bytea(b.to_vec()),
        }
    }
}

/// Decodes the row `bytes` stored for `types`, calling `each` with every
/// column's value in order, borrowed from `bytes`. Rows written before a
/// column was added are shorter: missing trailing columns read as NULL.
pub fn decode_row_refs<'b>(
    types: &[ColumnType],
    bytes: &'b [u8],
    mut each: impl FnMut(ValueRef<'b>),
) -> Result<(), CodecError> {
    let stored = stored_columns(types.len(), bytes)?;
    let mut at = header_len(stored);
    for (i, ty) in types.iter().enumerate() {
        if i >= stored || is_null(bytes, i) {
            each(ValueRef::Null);
            continue;
        }
        let v = match ty {
            ColumnType::Int4 => ValueRef::Int4(i32::from_le_bytes(fixed(bytes, &mut at)?)),
            ColumnType::Int8 => ValueRef::Int8(i64::from_le_bytes(fixed(bytes, &mut at)?)),
            ColumnType::Bool => match take(bytes, &mut at, 1)?[0] {
                0 => ValueRef::Bool(false),
                1 => ValueRef::Bool(true),
                _ => return Err(corrupted("bool is neither 0 nor 1")),
            },
            ColumnType::Timestamp | ColumnType::Timestamptz => {
                ValueRef::Timestamp(i64::from_le_bytes(fixed(bytes, &mut at)?))
            }
            ColumnType::Oid => ValueRef::Int8(u32::from_le_bytes(fixed(bytes, &mut at)?).into()),
            ColumnType::Bytea => {
                let len = u32::from_le_bytes(fixed(bytes, &mut at)?) as usize;
                if len > TEXT_MAX {
                    return Err(corrupted("bytea length out of range"));
                }
                ValueRef::Bytea(take(bytes, &mut at, len)?)
            }
            ColumnType::Text | ColumnType::Char(_) | ColumnType::Varchar(_) | ColumnType::Numeric(_) => {
                let len = u32::from_le_bytes(fixed(bytes, &mut at)?) as usize;
                if len > TEXT_MAX {
                    return Err(corrupted("text length out of range"));
                }
                let s = std::str::from_utf8(take(bytes, &mut at, len)?).map_err(|_| corrupted("text is not UTF-8"))?;
                if matches!(ty, ColumnType::Numeric(_)) {
                    ValueRef::Numeric(s)
                } else {
                    ValueRef::Text(s)
                }
            }
            ColumnType::Int2 => ValueRef::Int4(i16::from_le_bytes(fixed(bytes, &mut at)?).into()),
            ColumnType::Float4 => {
                ValueRef::Float(Float(f64::from(f32::from_bits(u32::from_le_bytes(fixed(bytes, &mut at)?)))))
            }
            ColumnType::Float8 => ValueRef::Float(Float(f64::from_bits(u64::from_le_bytes(fixed(bytes, &mut at)?)))),
            ColumnType::Date => ValueRef::Date(i32::from_le_bytes(fixed(bytes, &mut at)?)),
        };
        each(v);
    }
    if at != bytes.len() {
        return Err(corrupted("trailing bytes after the last column"));
    }
    Ok(())
}

/// The next `N` bytes of a row, as an array for `from_le_bytes`.
fn fixed<const N: usize>(bytes: &[u8], at: &mut usize) -> Result<[u8; N], CodecError> {
    take(bytes, at, N)?.try_into().map_err(|_| corrupted("row shorter than its columns"))
}

/// The column count a stored row was written with, checked against the
/// relation's (columns are only ever added) and the buffer's length.
fn stored_columns(ncols: usize, bytes: &[u8]) -> Result<usize, CodecError> {
    let count = bytes.get(..2).ok_or_else(|| corrupted("row shorter than its header"))?;
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
    let ty = *types.get(column).ok_or_else(|| CodecError::Arity { expected: types.len(), got: column + 1 })?;
    let size = ty.fixed_size().ok_or_else(|| CodecError::Type { column, value: "text".into(), ty })?;
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
    fn bytea_oid_and_timestamptz_round_trip() {
        let types = [ColumnType::Bytea, ColumnType::Oid, ColumnType::Timestamptz, ColumnType::Bytea];
        let row = vec![
            Value::Bytea(vec![0, 1, b'\\', 0xff]),
            Value::Int8(u32::MAX.into()),
            Value::Timestamp(-1),
            Value::Bytea(Vec::new()),
        ];
        let bytes = encode_row(&types, &row).unwrap();
        assert_eq!(decode_row(&types, &bytes).unwrap(), row);
        assert!(encode_row(&types[1..2], &[Value::Int8(-1)]).is_err(), "a negative oid was stored");
        assert!(encode_row(&types[1..2], &[Value::Int8(1 << 32)]).is_err(), "an oid above 2^32 - 1 was stored");
        assert_eq!(ColumnType::parse("timestamp with time zone"), Some(ColumnType::Timestamptz));
        assert_eq!(ColumnType::Oid.type_len(), 4);
        assert_eq!(Value::Bytea(vec![0, 0xab]).to_pg_text().as_deref(), Some("\\x00ab"));
        assert_eq!(parse_bytea_hex("\\x00AB"), Some(vec![0, 0xab]));
        assert_eq!(parse_bytea_hex("\\x0"), None);
        let json = serde_json::to_string(&types).unwrap();
        assert_eq!(json, r#"["bytea","oid","timestamptz","bytea"]"#);
        assert_eq!(serde_json::from_str::<Vec<ColumnType>>(&json).unwrap(), types);
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
    fn new_types_round_trip_and_report_pg_metadata() {
        let types = [
            ColumnType::Bool,
            ColumnType::Timestamp,
            ColumnType::Char(5),
            ColumnType::Varchar(Some(3)),
            ColumnType::Varchar(None),
        ];
        let row = vec![
            Value::Bool(true),
            Value::Timestamp(-1),
            Value::Text("ab".into()),
            Value::Text("xyz  ".into()),
            Value::Text("long text".into()),
        ];
        let bytes = encode_row(&types, &row).unwrap();
        let back = decode_row(&types, &bytes).unwrap();
        assert_eq!(back[2], Value::Text("ab   ".into()), "char(n) is stored blank-padded");
        assert_eq!(back[3], Value::Text("xyz".into()), "blanks beyond varchar(n) are cut");
        assert_eq!(back[0], Value::Bool(true));
        assert_eq!(back[1], Value::Timestamp(-1));
        let too_long = encode_row(&types[3..4], &[Value::Text("abcd".into())]).unwrap_err();
        assert!(matches!(too_long, CodecError::TooLongFor { .. }), "{too_long}");
        assert!(encode_row(&types[..1], &[Value::Int4(1)]).is_err());
        let oids: Vec<u32> = [
            ColumnType::Bool,
            ColumnType::Int8,
            ColumnType::Int4,
            ColumnType::Text,
            ColumnType::Char(1),
            ColumnType::Varchar(None),
            ColumnType::Timestamp,
        ]
        .iter()
        .map(|t| t.type_oid())
        .collect();
        assert_eq!(oids, [16, 20, 23, 25, 1042, 1043, 1114]);
        assert_eq!(ColumnType::Char(10).type_modifier(), 14);
        assert_eq!(ColumnType::Int4.type_modifier(), -1);
        assert_eq!(ColumnType::Timestamp.type_len(), 8);
        assert_eq!(ColumnType::parse("character varying(20)"), Some(ColumnType::Varchar(Some(20))));
        assert_eq!(ColumnType::parse("CHAR"), Some(ColumnType::Char(1)));
        assert_eq!(ColumnType::parse("boolean"), Some(ColumnType::Bool));
        assert_eq!(ColumnType::parse("char(0)"), None);
        assert_eq!(Value::parse_pg_text("on", ColumnType::Bool).unwrap(), Value::Bool(true));
        assert!(matches!(Value::parse_pg_text("12x", ColumnType::Int4), Err(CodecError::BadInput { .. })));
        assert_eq!(Value::Bool(false).to_pg_text().as_deref(), Some("f"));
        assert_eq!(Value::Timestamp(0).to_pg_text().as_deref(), Some("2000-01-01 00:00:00"));
        // The catalog's JSON names: old ones unchanged, new ones readable.
        assert_eq!(serde_json::to_string(&ColumnType::Int4).unwrap(), "\"int4\"");
        let back: Vec<ColumnType> = serde_json::from_str(&serde_json::to_string(&types).unwrap()).unwrap();
        assert_eq!(back, types);
    }

    #[test]
    fn int2_float_numeric_and_date_columns_round_trip() {
        let types = [
            ColumnType::Int2,
            ColumnType::Float4,
            ColumnType::Float8,
            ColumnType::Numeric(Some((10, 2))),
            ColumnType::Date,
            ColumnType::Numeric(None),
        ];
        let row = vec![
            Value::Int4(-32768),
            Value::Float(Float(1.5)),
            Value::Float(Float(0.1)),
            Value::Numeric("-12.50".into()),
            Value::Date(-1),
            Value::Numeric("123456789012345678901234567890.000000000000000000001".into()),
        ];
        let bytes = encode_row(&types, &row).unwrap();
        assert_eq!(bytes.len(), 2 + 1 + 2 + 4 + 8 + (4 + 6) + 4 + (4 + 52));
        assert_eq!(decode_row(&types, &bytes).unwrap(), row);
        assert!(encode_row(&types[..1], &[Value::Int4(40_000)]).is_err(), "int2 range is checked");
        assert_eq!(ColumnType::parse("numeric(12, 2)"), Some(ColumnType::Numeric(Some((12, 2)))));
        assert_eq!(ColumnType::parse("numeric"), Some(ColumnType::Numeric(None)));
        assert_eq!(ColumnType::parse("numeric(2,3)"), Some(ColumnType::Numeric(Some((2, 3)))));
        assert_eq!(ColumnType::parse("numeric(2,1001)"), None);
        assert_eq!(ColumnType::parse("double precision"), Some(ColumnType::Float8));
        assert_eq!(ColumnType::Numeric(Some((12, 2))).type_modifier(), (12 << 16 | 2) + 4);
        assert_eq!(ColumnType::Int2.type_len(), 2);
        let json = serde_json::to_string(&types).unwrap();
        assert_eq!(serde_json::from_str::<Vec<ColumnType>>(&json).unwrap(), types);
        assert_eq!(Value::Numeric("1.0".into()).sql_cmp(&Value::Numeric("1.00".into())), Ordering::Equal);
        assert_eq!(Value::Numeric("9".into()).sql_cmp(&Value::Numeric("10".into())), Ordering::Less);
        assert_eq!(Value::Float(Float(f64::NAN)).sql_cmp(&Value::Float(Float(1e308))), Ordering::Greater);
        let (at, size) = fixed_column_span(&types, &bytes, 4).unwrap().unwrap();
        assert_eq!((at, size), (2 + 1 + 2 + 4 + 8 + 10, 4));
    }

    #[test]
    fn sql_ordering_puts_null_last_and_compares_widths_by_value() {
        assert_eq!(Value::Int4(3).sql_cmp(&Value::Int8(3)), Ordering::Equal);
        assert_eq!(Value::Int4(3).sql_cmp(&Value::Null), Ordering::Less);
        assert_eq!(Value::Text("a".into()).sql_cmp(&Value::Text("b".into())), Ordering::Less);
    }
}
