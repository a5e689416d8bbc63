//! One-dimensional arrays of the basic types (`text[]`, `int4[]`, …):
//! their [`SqlType::Array`] types and OIDs (`pg_type.typarray`), and
//! PostgreSQL's text forms (`array_in`/`array_out`) and binary form
//! (`array_send`).
//!
//! A value is a [`Datum::Array`] of its elements (NULL elements allowed),
//! lower bound 1. The text output quotes an element that is empty, is
//! `NULL` in any case, or holds a blank, `"`, `\`, `,`, `{` or `}`, with
//! `"` and `\` escaped by `\`, as `array_out` does:
//!
//! ```
//! use turnstile_sql::value::{Datum, SqlType};
//! let t = SqlType::array_of(SqlType::Text).unwrap();
//! let v = Datum::parse(r#"{a,"b c",NULL,"NULL",""}"#, t).unwrap();
//! assert_eq!(v.to_text(t).unwrap(), r#"{a,"b c",NULL,"NULL",""}"#);
//! assert_eq!(t.oid(), 1009);
//! ```

use super::datum::Datum;
use super::sql_type::SqlType;
use crate::error::SqlError;
use turnstile_lock::SqlState;

/// Most elements an array literal or constructor builds (PostgreSQL's
/// `MaxArraySize` is about 134 million; turnstile keeps arrays small).
pub const ARRAY_ELEMENTS_MAX: usize = 1 << 20;

/// The element types an array can have.
static ELEMENTS: [SqlType; 17] = [
    SqlType::Bool,
    SqlType::Bytea,
    SqlType::QChar,
    SqlType::Name,
    SqlType::Int2,
    SqlType::Int4,
    SqlType::Text,
    SqlType::Bpchar(0),
    SqlType::Varchar(0),
    SqlType::Int8,
    SqlType::Float4,
    SqlType::Float8,
    SqlType::Oid,
    SqlType::Timestamp,
    SqlType::Date,
    SqlType::TimestampTz,
    SqlType::Numeric(None),
];

impl SqlType {
    /// The array type of elements of `elem` (its modifier dropped:
    /// `varchar(20)[]` is `varchar[]`), `None` for a type without one here.
    pub fn array_of(elem: SqlType) -> Option<SqlType> {
        let base = match elem {
            SqlType::Bpchar(_) => SqlType::Bpchar(0),
            SqlType::Varchar(_) => SqlType::Varchar(0),
            SqlType::Numeric(_) => SqlType::Numeric(None),
            SqlType::Unknown => SqlType::Text,
            t => t,
        };
        ELEMENTS.iter().find(|e| **e == base).map(SqlType::Array)
    }

    /// The element type of an array type.
    pub fn element(self) -> Option<SqlType> {
        match self {
            SqlType::Array(e) => Some(*e),
            _ => None,
        }
    }

    /// The array type with OID `oid`.
    pub(super) fn array_from_oid(oid: u32) -> Option<SqlType> {
        ELEMENTS.iter().find(|e| super::sql_type::array_oid(**e) == oid).map(SqlType::Array)
    }
}

/// `22P02` for malformed array text.
fn malformed(s: &str, detail: &str) -> SqlError {
    let mut e = SqlError::new(SqlState::INVALID_TEXT_REPRESENTATION, format!("malformed array literal: \"{s}\""));
    e.detail = Some(detail.to_owned());
    e
}

/// `array_in` for a one-dimensional array of `elem`: `{a,"b",NULL}`.
pub(super) fn parse_array(s: &str, elem: SqlType) -> Result<Datum, SqlError> {
    let t = s.trim();
    let inner = t
        .strip_prefix('{')
        .and_then(|r| r.strip_suffix('}'))
        .ok_or_else(|| malformed(s, "Array value must start with \"{\" or dimension information."))?;
    let mut out = Vec::new();
    if inner.trim().is_empty() {
        return Ok(Datum::Array(out));
    }
    let mut chars = inner.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut item = String::new();
        let mut quoted = false;
        if chars.next_if_eq(&'"').is_some() {
            quoted = true;
            loop {
                match chars.next() {
                    Some('"') => break,
                    Some('\\') => item.push(chars.next().ok_or_else(|| malformed(s, "Unexpected end of input."))?),
                    Some(c) => item.push(c),
                    None => return Err(malformed(s, "Unexpected end of input.")),
                }
            }
            while chars.next_if(|c| c.is_whitespace()).is_some() {}
        } else {
            while let Some(c) = chars.next_if(|c| *c != ',') {
                match c {
                    '{' | '}' | '"' => return Err(malformed(s, &format!("Unexpected \"{c}\" character."))),
                    '\\' => item.push(chars.next().ok_or_else(|| malformed(s, "Unexpected end of input."))?),
                    c => item.push(c),
                }
            }
            let kept = item.trim_end().len();
            item.truncate(kept);
            if item.is_empty() {
                return Err(malformed(s, "Unexpected \",\" character."));
            }
        }
        if out.len() >= ARRAY_ELEMENTS_MAX {
            return Err(SqlError::new(SqlState::PROGRAM_LIMIT_EXCEEDED, "array size exceeds the maximum allowed"));
        }
        out.push(if !quoted && item.eq_ignore_ascii_case("null") { Datum::Null } else { Datum::parse(&item, elem)? });
        match chars.next() {
            None => break,
            Some(',') => {}
            Some(c) => return Err(malformed(s, &format!("Unexpected \"{c}\" character."))),
        }
    }
    Ok(Datum::Array(out))
}

/// `array_out`: `{…}` of the elements' text, quoted where needed.
pub(super) fn write_array(items: &[Datum], elem: SqlType, out: &mut String) {
    out.push('{');
    let mut text = String::new();
    for (i, d) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        text.clear();
        if !d.write_text(elem, &mut text) {
            out.push_str("NULL");
            continue;
        }
        let quote = text.is_empty()
            || text.eq_ignore_ascii_case("null")
            || text.chars().any(|c| matches!(c, '"' | '\\' | ',' | '{' | '}') || c.is_ascii_whitespace());
        if !quote {
            out.push_str(&text);
            continue;
        }
        super::record::push_quoted(out, &text, false);
    }
    out.push('}');
}

/// `array_recv`: the binary form [`send_array`] writes, each element
/// decoded by `recv` (its value number `index` for messages). One
/// dimension (or none: empty); another element type is `42804`, more
/// dimensions `0A000`, truncated or trailing bytes `22P03`.
pub(crate) fn recv_array(
    data: &[u8],
    elem: SqlType,
    index: usize,
    recv: impl Fn(SqlType, &[u8], usize) -> Result<Datum, SqlError>,
) -> Result<Datum, SqlError> {
    let bad = || crate::binary::incorrect_format(index);
    let mut at = 0usize;
    let word = |at: &mut usize| -> Result<i32, SqlError> {
        let b: [u8; 4] = data.get(*at..*at + 4).and_then(|b| b.try_into().ok()).ok_or_else(bad)?;
        *at += 4;
        Ok(i32::from_be_bytes(b))
    };
    let (ndim, _flags, oid) = (word(&mut at)?, word(&mut at)?, word(&mut at)? as u32);
    if oid != elem.oid() {
        return Err(SqlError::new(
            SqlState::DATATYPE_MISMATCH,
            format!("binary data has array element type {oid} instead of expected {}", elem.oid()),
        ));
    }
    let len = match ndim {
        0 => 0,
        1 => {
            let (len, _lower) = (word(&mut at)?, word(&mut at)?);
            usize::try_from(len).map_err(|_| bad())?
        }
        _ => return Err(SqlError::unsupported("multidimensional arrays")),
    };
    if len > ARRAY_ELEMENTS_MAX {
        return Err(SqlError::new(
            SqlState::PROGRAM_LIMIT_EXCEEDED,
            format!("array size exceeds the maximum allowed ({ARRAY_ELEMENTS_MAX})"),
        ));
    }
    let mut items = Vec::with_capacity(len);
    for _ in 0..len {
        let n = word(&mut at)?;
        if n < 0 {
            items.push(Datum::Null);
            continue;
        }
        let end = at.checked_add(n as usize).filter(|e| *e <= data.len()).ok_or_else(bad)?;
        items.push(recv(elem, &data[at..end], index)?);
        at = end;
    }
    if at != data.len() {
        return Err(bad());
    }
    Ok(Datum::Array(items))
}

/// `array_send`: dimensions, NULL flag, element OID, then each element's
/// length and binary form (`-1` for NULL).
pub(crate) fn send_array(
    items: &[Datum],
    elem: SqlType,
    out: &mut bytes::BytesMut,
    send: impl Fn(SqlType, &Datum, &mut bytes::BytesMut) -> Result<(), SqlError>,
) -> Result<(), SqlError> {
    use bytes::BufMut;
    if items.is_empty() {
        out.put_i32(0);
        out.put_i32(0);
        out.put_u32(elem.oid());
        return Ok(());
    }
    out.put_i32(1);
    out.put_i32(i32::from(items.iter().any(Datum::is_null)));
    out.put_u32(elem.oid());
    out.put_i32(i32::try_from(items.len()).unwrap_or(i32::MAX));
    out.put_i32(1);
    let mut buf = bytes::BytesMut::new();
    for d in items {
        if d.is_null() {
            out.put_i32(-1);
            continue;
        }
        buf.clear();
        send(elem, d, &mut buf)?;
        out.put_i32(i32::try_from(buf.len()).unwrap_or(i32::MAX));
        out.put_slice(&buf);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_text_round_trips_as_postgresql_prints_it() {
        let int4 = SqlType::array_of(SqlType::Int4).unwrap();
        let text = SqlType::array_of(SqlType::Varchar(20)).unwrap();
        assert_eq!(text.oid(), 1015);
        for (ty, input, output) in [
            (int4, "{1, 2 ,3}", "{1,2,3}"),
            (int4, "{}", "{}"),
            (int4, "{1,NULL}", "{1,NULL}"),
            (text, r#"{"a\"b","c\\d",e f}"#, r#"{"a\"b","c\\d","e f"}"#),
            (text, r#"{x,"",null,"{"}"#, r#"{x,"",NULL,"{"}"#),
        ] {
            let d = Datum::parse(input, ty).unwrap();
            assert_eq!(d.to_text(ty).unwrap(), output, "{input}");
        }
        for bad in ["1,2", "{1,,2}", "{1", "{a\"b}"] {
            assert_eq!(Datum::parse(bad, text).unwrap_err().code, "22P02", "{bad}");
        }
        assert_eq!(Datum::parse("{x}", int4).unwrap_err().code, "22P02");
    }
}
