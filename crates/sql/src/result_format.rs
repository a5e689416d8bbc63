//! Result formats: which columns of a result a portal sends in the binary
//! format, decided before any row is produced.
//!
//! `Bind` gives the result format codes (none = every column text, one =
//! every column in that format, else one per column). The session builds a
//! query's rows in those formats ([`ResultRows`]), each binary value
//! encoded from its typed value. As PostgreSQL's `printtup` does at its
//! start, a binary column whose type has no `send` function is refused
//! (`42883`) before the statement runs.
//!
//! ```
//! use turnstile_sql::{column_formats, FieldInfo};
//! let field = |type_oid| FieldInfo { name: "c".into(), table_oid: 0, column: 0, type_oid, type_len: 4, type_modifier: -1 };
//! assert_eq!(column_formats(&[1], &[field(23), field(25)]).unwrap(), [1, 1]);
//! assert_eq!(column_formats(&[], &[field(23)]).unwrap(), [0]);
//! assert_eq!(column_formats(&[1], &[field(2278)]).unwrap(), [1]); // void: no bytes
//! assert_eq!(column_formats(&[1], &[field(1186)]).unwrap_err().code, "42883"); // interval
//! ```

use crate::binary::{self, Counted};
use crate::error::SqlError;
use crate::rows::ResultRows;
use crate::statement::{FieldInfo, Outcome};
use crate::value::{Datum, SqlType};
use turnstile_lock::SqlState;

/// The format code of each column of `fields` for the result format codes
/// `codes`: `08P01` for a count that fits neither rule, `22023` for an
/// unknown code, `42883` for a binary column whose type has no binary
/// output function.
pub fn column_formats(codes: &[i16], fields: &[FieldInfo]) -> Result<Vec<i16>, SqlError> {
    let formats = binary::formats(codes, fields.len(), Counted::Columns)?;
    for (f, &code) in fields.iter().zip(&formats) {
        if code == binary::BINARY && !binary::supported(f.type_oid) {
            return Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("no binary output function available for type with OID {}", f.type_oid),
            ));
        }
    }
    Ok(formats)
}

/// Per column of `fields`, whether the codes put it in the binary format
/// (empty when none is): what [`ResultRows::with_capacity`] takes.
pub(crate) fn binary_columns(codes: &[i16], fields: &[FieldInfo]) -> Result<Vec<bool>, SqlError> {
    if codes.is_empty() {
        return Ok(Vec::new());
    }
    Ok(column_formats(codes, fields)?.into_iter().map(|c| c == binary::BINARY).collect())
}

/// A utility statement's result (`SHOW`, `EXPLAIN`, an advisory-lock
/// call), whose rows are built as text, in the result formats `codes`.
/// Its binary columns are re-expressed from that text: the text is the
/// value for `SHOW`'s and `EXPLAIN`'s `text` columns, and the advisory
/// functions' `bool` is read by its input function. Queries' rows are
/// built in their formats from typed values instead.
pub(crate) fn utility_in_formats(outcome: Outcome, codes: &[i16]) -> Result<Outcome, SqlError> {
    let Outcome::Rows { fields, rows, tag } = outcome else { return Ok(outcome) };
    let binary = binary_columns(codes, &fields)?;
    if binary.is_empty() {
        return Ok(Outcome::Rows { fields, rows, tag });
    }
    let types: Vec<SqlType> = fields.iter().map(|f| SqlType::from_oid(f.type_oid).unwrap_or(SqlType::Text)).collect();
    let mut out = ResultRows::with_capacity(fields.len(), rows.len(), 0, binary);
    let mut values = Vec::with_capacity(fields.len());
    for row in rows.iter() {
        values.clear();
        for (v, &ty) in row.zip(&types) {
            values.push(match v {
                None => Datum::Null,
                Some(bytes) => Datum::parse(&String::from_utf8_lossy(bytes), ty)?,
            });
        }
        out.push_datums(&values, &types)?;
    }
    Ok(Outcome::Rows { fields, rows: out, tag })
}
