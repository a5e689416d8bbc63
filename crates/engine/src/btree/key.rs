//! The order-preserving key encoding: index keys become byte strings whose
//! `memcmp` order is the SQL order of the keys, so every comparison in the
//! tree is a slice comparison.
//!
//! # Encoding of one column value (by the column's type)
//!
//! | value | bytes |
//! |---|---|
//! | non-null `int4` | `0x10`, then `(v as u32) ^ 0x8000_0000` big-endian (4 bytes) |
//! | non-null `int8` | `0x10`, then `(v as u64) ^ 0x8000_0000_0000_0000` big-endian (8 bytes) |
//! | non-null `bool` | `0x10`, then `0` or `1` |
//! | non-null `timestamp`, `timestamptz`, `oid` | as `int8` |
//! | non-null `bytea` | as text, with the bytes for the UTF-8 |
//! | non-null `text`, `char(n)`, `varchar(n)` | `0x10`, then the UTF-8 bytes with each `0x00` written `0x00 0xFF`, then the terminator `0x00 0x00` |
//! | NULL | `0xF0` |
//!
//! Flipping the sign bit makes big-endian two's complement sort as
//! unsigned bytes. The text escape keeps the encoding *prefix-free*: the
//! terminator `0x00 0x00` sorts before any escaped `0x00 0xFF` and before
//! any other byte, so `"a" < "a\0" < "ab"` holds bytewise. NULL's tag
//! sorts after the non-null tag: NULLs last, as PostgreSQL's default.
//!
//! A key is the concatenation of its columns' encodings; because each
//! column's encoding is prefix-free, `memcmp` of two keys is the
//! lexicographic order of their columns, and the encoding of a prefix of
//! the columns is a byte prefix of the full key — which is what makes
//! prefix searches ("all entries whose first column is 7") a byte-prefix
//! match.
//!
//! A leaf entry is `key ‖ tid` (six big-endian bytes, [`Tid::to_bytes`]):
//! the heap TID is the final tie-breaker (PostgreSQL 12+'s "heapkeyspace"),
//! so every entry of the tree is distinct and has exactly one place.
//!
//! ```
//! use turnstile_engine::btree::key::encode_key;
//! use turnstile_engine::types::{ColumnType, Value};
//! let ty = [ColumnType::Int8];
//! let a = encode_key(&ty, &[Value::Int8(-5)]).unwrap();
//! let b = encode_key(&ty, &[Value::Int8(3)]).unwrap();
//! let n = encode_key(&ty, &[Value::Null]).unwrap();
//! assert!(a < b && b < n);
//! ```

use super::error::KeyError;
use crate::tid::Tid;
use crate::types::{ColumnType, Value};

/// Tag byte of a non-null value.
pub const TAG_VALUE: u8 = 0x10;
/// Tag byte of NULL; greater than [`TAG_VALUE`] so NULLs sort last.
pub const TAG_NULL: u8 = 0xF0;
/// Bytes of the TID suffix of a leaf entry.
pub const TID_SIZE: usize = 6;

const _: () = assert!(TAG_VALUE < TAG_NULL, "NULLs must sort after every value");

/// Encodes `key` (one value per leading column of `types`; fewer values
/// make a prefix key) into its order-preserving bytes.
pub fn encode_key(types: &[ColumnType], key: &[Value]) -> Result<Vec<u8>, KeyError> {
    if key.len() > types.len() {
        return Err(KeyError::ColumnCount { expected: types.len(), got: key.len() });
    }
    let mut out = Vec::with_capacity(key.len() * 9);
    for (column, (ty, value)) in types.iter().zip(key).enumerate() {
        let coerced = value.coerce(*ty).ok_or_else(|| KeyError::TypeMismatch {
            column,
            expected: *ty,
            got: value.column_type().map_or("NULL", ColumnType::name),
        })?;
        encode_value(&mut out, &coerced);
    }
    Ok(out)
}

/// Appends one (already coerced) value.
fn encode_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.push(TAG_NULL),
        Value::Int4(v) => {
            out.push(TAG_VALUE);
            out.extend_from_slice(&((*v as u32) ^ 0x8000_0000).to_be_bytes());
        }
        Value::Bool(b) => {
            out.push(TAG_VALUE);
            out.push(u8::from(*b));
        }
        Value::Int8(v) | Value::Timestamp(v) => {
            out.push(TAG_VALUE);
            out.extend_from_slice(&((*v as u64) ^ 0x8000_0000_0000_0000).to_be_bytes());
        }
        Value::Date(v) => {
            out.push(TAG_VALUE);
            out.extend_from_slice(&((*v as u32) ^ 0x8000_0000).to_be_bytes());
        }
        Value::Float(f) => {
            // IEEE 754 bits made order-preserving: negative values flipped
            // whole, positive ones with the sign bit set; -0 as 0, one NaN.
            let v = if f.0 == 0.0 {
                0.0
            } else if f.0.is_nan() {
                f64::NAN
            } else {
                f.0
            };
            let bits = v.to_bits();
            let key = if bits >> 63 == 1 { !bits } else { bits | (1 << 63) };
            out.push(TAG_VALUE);
            out.extend_from_slice(&key.to_be_bytes());
        }
        Value::Numeric(n) => {
            // Equal numerics (`1.0`, `1.00`) must give equal keys: the
            // value without trailing fraction zeros, as text. Equality
            // look-ups and uniqueness need no more; the order of these
            // keys is not numeric order.
            let t = if n.contains('.') { n.trim_end_matches('0').trim_end_matches('.') } else { n.as_str() };
            let t = if t == "-0" { "0" } else { t };
            encode_value(out, &Value::Text(t.to_owned()));
        }
        Value::Text(s) => escaped(out, s.as_bytes()),
        Value::Bytea(b) => escaped(out, b),
    }
}

/// The non-null tag, `bytes` with each `0x00` written `0x00 0xFF`, then
/// the terminator `0x00 0x00` (text and `bytea`).
fn escaped(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(TAG_VALUE);
    for &b in bytes {
        out.push(b);
        if b == 0 {
            out.push(0xFF);
        }
    }
    out.extend_from_slice(&[0, 0]);
}

/// A leaf entry: `key ‖ tid`.
pub fn leaf_entry(key: &[u8], tid: Tid) -> Vec<u8> {
    let mut e = Vec::with_capacity(key.len() + TID_SIZE);
    e.extend_from_slice(key);
    e.extend_from_slice(&tid.to_bytes());
    e
}

/// Splits a leaf entry into its key bytes and TID; `None` if it is too
/// short to hold a TID.
pub fn split_entry(entry: &[u8]) -> Option<(&[u8], Tid)> {
    let at = entry.len().checked_sub(TID_SIZE)?;
    let (key, tid) = entry.split_at(at);
    let tid: [u8; TID_SIZE] = tid.try_into().ok()?;
    Some((key, Tid::from_bytes(tid)))
}

/// Whether `key` contains a NULL column (such keys never conflict in a
/// unique index: NULLs are distinct, as in PostgreSQL by default).
pub fn has_null(key: &[Value]) -> bool {
    key.iter().any(|v| matches!(v, Value::Null))
}

/// Decodes full key bytes back into values; `None` if the bytes are not
/// a valid encoding for `types` (a corrupt entry).
pub fn decode_key(types: &[ColumnType], mut bytes: &[u8]) -> Option<Vec<Value>> {
    let mut out = Vec::with_capacity(types.len());
    for ty in types {
        let (&tag, rest) = bytes.split_first()?;
        bytes = rest;
        if tag == TAG_NULL {
            out.push(Value::Null);
            continue;
        }
        if tag != TAG_VALUE {
            return None;
        }
        match ty {
            ColumnType::Int4 | ColumnType::Int2 | ColumnType::Date => {
                let (v, rest) = bytes.split_first_chunk::<4>()?;
                let v = (u32::from_be_bytes(*v) ^ 0x8000_0000) as i32;
                out.push(if *ty == ColumnType::Date { Value::Date(v) } else { Value::Int4(v) });
                bytes = rest;
            }
            ColumnType::Float4 | ColumnType::Float8 => {
                let (v, rest) = bytes.split_first_chunk::<8>()?;
                let key = u64::from_be_bytes(*v);
                let bits = if key >> 63 == 1 { key & !(1 << 63) } else { !key };
                out.push(Value::Float(crate::types::Float(f64::from_bits(bits))));
                bytes = rest;
            }
            ColumnType::Int8 | ColumnType::Oid | ColumnType::Timestamp | ColumnType::Timestamptz => {
                let (v, rest) = bytes.split_first_chunk::<8>()?;
                let v = (u64::from_be_bytes(*v) ^ 0x8000_0000_0000_0000) as i64;
                out.push(if matches!(ty, ColumnType::Int8 | ColumnType::Oid) {
                    Value::Int8(v)
                } else {
                    Value::Timestamp(v)
                });
                bytes = rest;
            }
            ColumnType::Bool => {
                let (&b, rest) = bytes.split_first()?;
                out.push(Value::Bool(match b {
                    0 => false,
                    1 => true,
                    _ => return None,
                }));
                bytes = rest;
            }
            ColumnType::Text
            | ColumnType::Char(_)
            | ColumnType::Varchar(_)
            | ColumnType::Numeric(_)
            | ColumnType::Bytea => {
                let mut s = Vec::new();
                loop {
                    let (&b, rest) = bytes.split_first()?;
                    bytes = rest;
                    if b != 0 {
                        s.push(b);
                        continue;
                    }
                    let (&next, rest) = bytes.split_first()?;
                    bytes = rest;
                    match next {
                        0x00 => break,
                        0xFF => s.push(0),
                        _ => return None,
                    }
                }
                if *ty == ColumnType::Bytea {
                    out.push(Value::Bytea(s));
                    continue;
                }
                let s = String::from_utf8(s).ok()?;
                out.push(if matches!(ty, ColumnType::Numeric(_)) { Value::Numeric(s) } else { Value::Text(s) });
            }
        }
    }
    bytes.is_empty().then_some(out)
}

/// Renders a key the way PostgreSQL's error detail does: `(7, 'x')`.
pub fn display_key(key: &[Value]) -> String {
    let parts: Vec<String> = key.iter().map(|v| v.to_string()).collect();
    format!("({})", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    use std::cmp::Ordering;

    fn cmp_keys(a: &[Value], b: &[Value]) -> Ordering {
        a.iter().zip(b).map(|(x, y)| x.sql_cmp(y)).find(|o| o.is_ne()).unwrap_or(Ordering::Equal)
    }

    fn random_value(rng: &mut SmallRng, ty: ColumnType) -> Value {
        if rng.random_ratio(1, 10) {
            return Value::Null;
        }
        match ty {
            ColumnType::Int4 => Value::Int4(match rng.random_range(0..4) {
                0 => i32::MIN,
                1 => i32::MAX,
                _ => rng.random_range(-5..5),
            }),
            ColumnType::Int8 => Value::Int8(match rng.random_range(0..4) {
                0 => i64::MIN,
                1 => i64::MAX,
                _ => rng.random_range(-5..5),
            }),
            ColumnType::Bool => Value::Bool(rng.random()),
            ColumnType::Timestamp | ColumnType::Timestamptz => Value::Timestamp(rng.random_range(-5..5) * 1_000_000),
            ColumnType::Oid => Value::Int8([0, 1, 7, i64::from(u32::MAX)][rng.random_range(0..4)]),
            ColumnType::Bytea => {
                let n = rng.random_range(0..4);
                Value::Bytea((0..n).map(|_| [0u8, 1, 0x7f, 0xff][rng.random_range(0..4)]).collect())
            }
            ColumnType::Int2 => Value::Int4(rng.random_range(-5..5)),
            ColumnType::Date => Value::Date(rng.random_range(-5..5)),
            ColumnType::Float4 | ColumnType::Float8 => Value::Float(crate::types::Float(
                [f64::NEG_INFINITY, -1.5, -1e-300, 0.0, 2.0, 1e300, f64::INFINITY, f64::NAN][rng.random_range(0..8)],
            )),
            ColumnType::Numeric(_) => Value::Numeric(format!("{}.5", rng.random_range(-5..5))),
            ColumnType::Text | ColumnType::Char(_) | ColumnType::Varchar(_) => {
                let alphabet = ['\0', 'a', 'b', '\u{ff}', 'é'];
                let n = rng.random_range(0..4);
                Value::Text((0..n).map(|_| alphabet[rng.random_range(0..alphabet.len())]).collect())
            }
        }
    }

    #[test]
    fn memcmp_order_is_sql_order_and_decoding_round_trips() {
        let types = [
            ColumnType::Text,
            ColumnType::Int4,
            ColumnType::Bytea,
            ColumnType::Bool,
            ColumnType::Timestamp,
            ColumnType::Oid,
            ColumnType::Timestamptz,
            ColumnType::Int8,
        ];
        let mut rng = SmallRng::seed_from_u64(0x5eed);
        let keys: Vec<Vec<Value>> =
            (0..2000).map(|_| types.iter().map(|&t| random_value(&mut rng, t)).collect()).collect();
        let enc: Vec<Vec<u8>> = keys.iter().map(|k| encode_key(&types, k).unwrap()).collect();
        for (k, e) in keys.iter().zip(&enc) {
            assert_eq!(decode_key(&types, e).as_ref(), Some(k));
        }
        for i in 0..keys.len() - 1 {
            for j in [i + 1, (i * 7919) % keys.len()] {
                assert_eq!(enc[i].cmp(&enc[j]), cmp_keys(&keys[i], &keys[j]), "{:?} vs {:?}", keys[i], keys[j]);
            }
        }
    }

    #[test]
    fn int2_float8_and_date_keys_keep_sql_order() {
        let types = [ColumnType::Float8, ColumnType::Int2, ColumnType::Date];
        let mut rng = SmallRng::seed_from_u64(0xf10a7);
        let keys: Vec<Vec<Value>> =
            (0..2000).map(|_| types.iter().map(|&t| random_value(&mut rng, t)).collect()).collect();
        let enc: Vec<Vec<u8>> = keys.iter().map(|k| encode_key(&types, k).unwrap()).collect();
        for (k, e) in keys.iter().zip(&enc) {
            assert_eq!(decode_key(&types, e).as_ref(), Some(k));
        }
        for i in 0..keys.len() - 1 {
            let j = i + 1;
            assert_eq!(enc[i].cmp(&enc[j]), cmp_keys(&keys[i], &keys[j]), "{:?} vs {:?}", keys[i], keys[j]);
        }
        let num = [ColumnType::Numeric(None)];
        let a = encode_key(&num, &[Value::Numeric("1.50".into())]).unwrap();
        assert_eq!(a, encode_key(&num, &[Value::Numeric("1.5".into())]).unwrap(), "equal numerics, equal keys");
        assert_ne!(a, encode_key(&num, &[Value::Numeric("15".into())]).unwrap());
    }

    #[test]
    fn a_prefix_key_is_a_byte_prefix_and_entries_sort_by_tid_last() {
        let types = [ColumnType::Int4, ColumnType::Text];
        let full = encode_key(&types, &[Value::Int4(3), Value::Text("x".into())]).unwrap();
        let prefix = encode_key(&types, &[Value::Int4(3)]).unwrap();
        assert!(full.starts_with(&prefix));
        let a = leaf_entry(&full, Tid::new(1, 9));
        let b = leaf_entry(&full, Tid::new(2, 0));
        assert!(a < b && prefix < a);
        assert_eq!(split_entry(&b), Some((&full[..], Tid::new(2, 0))));
    }

    #[test]
    fn int4_values_coerce_into_int8_columns_and_bad_types_are_errors() {
        let types = [ColumnType::Int8];
        assert_eq!(encode_key(&types, &[Value::Int4(5)]).unwrap(), encode_key(&types, &[Value::Int8(5)]).unwrap());
        assert!(matches!(
            encode_key(&types, &[Value::Text("5".into())]),
            Err(KeyError::TypeMismatch { column: 0, .. })
        ));
        assert!(matches!(
            encode_key(&types, &[Value::Int8(1), Value::Int8(2)]),
            Err(KeyError::ColumnCount { expected: 1, got: 2 })
        ));
        assert_eq!(decode_key(&types, &[TAG_VALUE, 1, 2]), None, "truncated bytes decode to nothing");
    }
}
