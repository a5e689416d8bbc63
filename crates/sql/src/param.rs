//! [`Param`]: one statement parameter as the session receives it — NULL,
//! text for the parameter type's input function, or an already typed
//! value.
//!
//! The protocol's `Bind` sends each parameter in text or binary format.
//! A text parameter is kept as the client sent it and read by its type's
//! input function when the statement runs ([`typed_params`], `22P02` for
//! bad text), as PostgreSQL reads it. A binary parameter is decoded once,
//! at `Bind`, straight into the [`Datum`] of its type ([`Param::binary`]):
//! no text is printed and read back. Only the types whose binary form is
//! not their `Datum`'s representation (see `binary_datum.rs`) are decoded
//! by way of their text, inside that one function.
//!
//! ```
//! use turnstile_sql::value::Datum;
//! use turnstile_sql::Param;
//! assert_eq!(Param::binary(23, &7i32.to_be_bytes(), 0).unwrap(), Param::Value(Datum::Int(7)));
//! assert_eq!(Param::binary(23, &[0, 7], 0).unwrap_err().code, "08P01");
//! assert_eq!(Param::from(Some("7".to_owned())), Param::Text("7".into()));
//! ```

use crate::binary;
use crate::binary_datum::recv_datum;
use crate::error::SqlError;
use crate::value::{Datum, SqlType};
use turnstile_lock::SqlState;

/// One parameter of a statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Param {
    /// SQL NULL (either format).
    Null,
    /// Text format: read by the parameter type's input function when the
    /// statement runs.
    Text(String),
    /// A value of the parameter's type (a binary-format parameter, decoded
    /// at `Bind`; a value `EXECUTE` computed).
    Value(Datum),
}

impl Param {
    /// Decodes binary-format parameter number `index` (0-based) of type
    /// `oid` into the value of its type, with PostgreSQL's errors: `08P01`
    /// for too few bytes, `22P03` for too many or an invalid form, `42883`
    /// for a type without a binary input function.
    ///
    /// The types whose binary form is their [`Datum`]'s (`bool`, the
    /// integers, `oid`, the floats, `bytea`, `text`) are decoded directly;
    /// `numeric`, `"char"`, `xid`, the length-checked strings, `date` and
    /// the timestamps go through the text [`binary::recv`] prints, read by
    /// the type's input function (their range and length checks live
    /// there) — inside this function only.
    pub fn binary(oid: u32, data: &[u8], index: usize) -> Result<Param, SqlError> {
        match SqlType::from_oid(oid).filter(|_| binary::supported(oid)) {
            Some(ty) => recv_datum(ty, data, index).map(Param::Value),
            // No typed form here: the text of its `recv` (or its 42883).
            None => binary::recv(oid, data, index).map(Param::Text),
        }
    }

    /// A text-format parameter.
    pub fn text(s: impl Into<String>) -> Param {
        Param::Text(s.into())
    }
}

impl From<Option<String>> for Param {
    fn from(p: Option<String>) -> Param {
        p.map_or(Param::Null, Param::Text)
    }
}

/// Parameters as values of the statement's parameter types (`types`
/// empty: every text parameter is `text`). A text parameter is read by its
/// type's input function; a typed one is taken as it is.
pub(crate) fn typed_params(types: &[u32], params: &[Param]) -> Result<Vec<Datum>, SqlError> {
    if !types.is_empty() && params.len() != types.len() {
        return Err(SqlError::new(
            SqlState::PROTOCOL_VIOLATION,
            format!(
                "bind message supplies {} parameters, but prepared statement requires {}",
                params.len(),
                types.len()
            ),
        ));
    }
    params
        .iter()
        .enumerate()
        .map(|(i, p)| match p {
            Param::Null => Ok(Datum::Null),
            Param::Value(d) => Ok(d.clone()),
            Param::Text(s) => {
                let ty = types.get(i).and_then(|t| SqlType::from_oid(*t)).unwrap_or(SqlType::Text);
                Datum::parse(s, ty)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Binary parameters become typed values with PostgreSQL's errors;
    /// types without a typed form keep their text; text is read by type.
    #[test]
    fn binary_and_text_parameters() {
        assert_eq!(Param::binary(20, &(-5i64).to_be_bytes(), 0).unwrap(), Param::Value(Datum::Int(-5)));
        assert_eq!(Param::binary(25, "ü".as_bytes(), 0).unwrap(), Param::Value(Datum::Text("ü".into())));
        assert_eq!(Param::binary(17, &[0, 255], 0).unwrap(), Param::Value(Datum::Bytea(vec![0, 255])));
        assert_eq!(Param::binary(1082, &0i32.to_be_bytes(), 0).unwrap(), Param::Value(Datum::Date(0)));
        assert_eq!(Param::binary(28, &9u32.to_be_bytes(), 0).unwrap(), Param::Text("9".into()));
        assert_eq!(Param::binary(23, &[0; 5], 1).unwrap_err().code, "22P03");
        assert_eq!(Param::binary(16, &[], 0).unwrap_err().code, "08P01");
        assert_eq!(Param::binary(25, &[0xff], 0).unwrap_err().code, "22021");
        assert_eq!(Param::binary(0, &[1], 0).unwrap_err().code, "42883");
        assert_eq!(Param::binary(2950, &[1], 0).unwrap_err().code, "42883");
        let params = [Param::text("12"), Param::Null, Param::Value(Datum::Int(3))];
        assert_eq!(typed_params(&[23, 23, 20], &params).unwrap(), [Datum::Int(12), Datum::Null, Datum::Int(3)]);
        assert_eq!(
            typed_params(&[23, 23, 20], &[Param::text("x"), Param::Null, Param::Null]).unwrap_err().code,
            "22P02"
        );
        assert_eq!(typed_params(&[23], &[]).unwrap_err().code, "08P01");
    }
}
