//! The binary format (format code 1) straight to and from typed values:
//! where a type's binary form is its [`Datum`]'s representation — `bool`,
//! the integers, `oid`/`xid`, the floats, `bytea`, the string types,
//! `date` and the timestamps — a value is decoded into its `Datum`
//! ([`recv_datum`]) and encoded from it ([`send_datum`]) without passing
//! through its text form. `numeric` and `"char"` still go by way of the
//! text that [`binary::recv`]/[`binary::send`] read and print.
//!
//! COPY's binary format uses both; so do the protocol's binary `Bind`
//! parameters, decoded by [`recv_datum`] ([`Param::binary`]), and binary
//! result columns, written by [`send_datum`] from the executor's values
//! into [`ResultRows`].
//!
//! [`Param::binary`]: crate::Param::binary
//! [`ResultRows`]: crate::ResultRows

use crate::binary;
use crate::error::SqlError;
use crate::value::{Datum, SqlType};
use bytes::{BufMut, BytesMut};
use turnstile_lock::SqlState;

/// Decodes the binary form of value number `index` (0-based) of type `ty`.
pub(crate) fn recv_datum(ty: SqlType, data: &[u8], index: usize) -> Result<Datum, SqlError> {
    Ok(match ty {
        SqlType::Bool => Datum::Bool(fixed::<1>(data, index)?[0] != 0),
        SqlType::Int2 => Datum::Int(i16::from_be_bytes(fixed(data, index)?).into()),
        SqlType::Int4 => Datum::Int(i32::from_be_bytes(fixed(data, index)?).into()),
        SqlType::Int8 => Datum::Int(i64::from_be_bytes(fixed(data, index)?)),
        SqlType::Oid | SqlType::Xid | SqlType::Reg(_) => Datum::Int(u32::from_be_bytes(fixed(data, index)?).into()),
        SqlType::Float4 => Datum::Float(f32::from_be_bytes(fixed(data, index)?).into()),
        SqlType::Float8 => Datum::Float(f64::from_be_bytes(fixed(data, index)?)),
        SqlType::Bytea => Datum::Bytea(data.to_vec()),
        SqlType::Array(e) => crate::value::recv_array(data, *e, index, recv_datum)?,
        // The UTF-8 text is the value.
        SqlType::Text | SqlType::Unknown => Datum::Text(binary::recv(ty.oid(), data, index)?),
        // Length-checked strings (whose text is the value, with the type's length rules),
        // numeric, dates and timestamps (whose range checks live with their
        // text), "char".
        other => Datum::parse(&binary::recv(other.oid(), data, index)?, other)?,
    })
}

/// Appends the binary form of `d`, a non-NULL value of type `ty`.
pub(crate) fn send_datum(ty: SqlType, d: &Datum, out: &mut BytesMut) -> Result<(), SqlError> {
    let int = |v: i64| -> Result<i64, SqlError> { crate::value::int_in_range(v, ty) };
    match (d, ty) {
        (Datum::Bool(b), SqlType::Bool) => out.put_u8(u8::from(*b)),
        (Datum::Int(v), SqlType::Int2) => out.put_i16(int(*v)? as i16),
        (Datum::Int(v), SqlType::Int4) => out.put_i32(int(*v)? as i32),
        (Datum::Int(v), SqlType::Int8) => out.put_i64(*v),
        (Datum::Int(v), SqlType::Oid | SqlType::Xid | SqlType::Reg(_)) => {
            out.put_u32(u32::try_from(*v).map_err(|_| crate::value::out_of_range(ty))?)
        }
        // NaN is sent as the canonical NaN, as its text `NaN` reads back.
        (Datum::Float(f), SqlType::Float4) => out.put_u32(if f.is_nan() { f32::NAN } else { *f as f32 }.to_bits()),
        (Datum::Float(f), SqlType::Float8) => out.put_u64(if f.is_nan() { f64::NAN } else { *f }.to_bits()),
        (Datum::Bytea(b), SqlType::Bytea) => out.put_slice(b),
        (
            Datum::Text(s),
            SqlType::Text | SqlType::Varchar(_) | SqlType::Bpchar(_) | SqlType::Name | SqlType::Unknown,
        ) => out.put_slice(s.as_bytes()),
        (Datum::Date(days), SqlType::Date) => out.put_i32(*days),
        (Datum::Timestamp(us), SqlType::Timestamp | SqlType::TimestampTz) => out.put_i64(*us),
        (Datum::Array(items), SqlType::Array(e)) => crate::value::send_array(items, *e, out, send_datum)?,
        (d, ty) => {
            let text = d.to_text(ty).ok_or_else(|| SqlError::new(SqlState::INTERNAL_ERROR, "NULL sent as a value"))?;
            binary::send(ty.oid(), &text, out)?
        }
    }
    Ok(())
}

/// The `N` bytes of a fixed-width binary value: fewer is PostgreSQL's
/// `08P01` (insufficient data), more its `22P03` (incorrect format).
fn fixed<const N: usize>(data: &[u8], index: usize) -> Result<[u8; N], SqlError> {
    let bytes: [u8; N] = data
        .get(..N)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| SqlError::new(SqlState::PROTOCOL_VIOLATION, "insufficient data left in message"))?;
    if data.len() != N {
        return Err(binary::incorrect_format(index));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each typed conversion gives the bytes and values the text path
    /// (`binary::send`/`recv`, held to PostgreSQL 15's bytes) gives.
    #[test]
    fn typed_and_text_paths_agree() {
        let cases: &[(SqlType, &str)] = &[
            (SqlType::Bool, "t"),
            (SqlType::Int2, "-32768"),
            (SqlType::Int4, "2147483647"),
            (SqlType::Int8, "-9223372036854775808"),
            (SqlType::Oid, "4294967295"),
            (SqlType::Float4, "0.1"),
            (SqlType::Float8, "0.30000000000000004"),
            (SqlType::Float8, "NaN"),
            (SqlType::Float8, "-Infinity"),
            (SqlType::Bytea, "\\x00ff10"),
            (SqlType::Text, "ü"),
            (SqlType::Varchar(0), "abc"),
            (SqlType::Date, "2024-02-29"),
            (SqlType::Timestamp, "2026-11-24 10:35:28.5"),
            (SqlType::TimestampTz, "2026-11-24 10:35:28.5+00"),
            (SqlType::Numeric(None), "-12.50"),
        ];
        for &(ty, text) in cases {
            let d = Datum::parse(text, ty).unwrap();
            let (mut typed, mut via_text) = (BytesMut::new(), BytesMut::new());
            send_datum(ty, &d, &mut typed).unwrap();
            binary::send(ty.oid(), &d.to_text(ty).unwrap(), &mut via_text).unwrap();
            assert_eq!(typed, via_text, "send {ty:?} {text}");
            let back = recv_datum(ty, &typed, 0).unwrap();
            assert_eq!(back.to_text(ty), d.to_text(ty), "recv {ty:?} {text}");
        }
        assert_eq!(recv_datum(SqlType::Int4, &[0, 0], 0).unwrap_err().code, "08P01");
        assert_eq!(recv_datum(SqlType::Int4, &[0, 0, 0, 0, 0], 1).unwrap_err().code, "22P03");
        assert_eq!(recv_datum(SqlType::Bytea, &[1, 2], 0).unwrap(), Datum::Bytea(vec![1, 2]));
    }
}
