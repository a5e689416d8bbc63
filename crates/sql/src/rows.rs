//! Result rows as the protocol sends them: each column in its result
//! format, text or binary.
//!
//! [`ResultRows`] keeps every value of a result in two buffers: the text
//! of each text-format value appended to one `String`, the binary form of
//! each binary-format value (its type's `send`) to one byte buffer, and
//! one end offset per value into its column's buffer. A result of any
//! width costs a few allocations (the buffers growing), not one per value,
//! and the backend writes each `DataRow` straight from the buffers. The
//! executor's values are written into it as they are produced
//! ([`ResultRows::push_ref`], from the stored values) or from the typed
//! values ([`ResultRows::push_datums`]): a binary column is encoded from
//! the value by [`send_datum`], never from its text.
//!
//! ```
//! use turnstile_sql::ResultRows;
//! let mut rows = ResultRows::new(2);
//! rows.push_row([Some("1"), None]);
//! rows.push_row([Some("2"), Some("two")]);
//! assert_eq!(rows.len(), 2);
//! assert_eq!(rows.row(1).collect::<Vec<_>>(), [Some(&b"2"[..]), Some(&b"two"[..])]);
//! assert_eq!(rows, vec![vec![Some("1".to_owned()), None], vec![Some("2".to_owned()), Some("two".to_owned())]]);
//! ```

use crate::binary_datum::send_datum;
use crate::error::SqlError;
use crate::value::{write_bytea_hex, Datum, SqlType};
use bytes::{Buf, BufMut, BytesMut};
use std::fmt::Write;
use turnstile_engine::types::ValueRef;

/// Marks a NULL in [`ResultRows::ends`]: the value's end offset with this
/// bit set (its bytes are empty).
const NULL: u32 = 1 << 31;

/// Rows of values (`None` = NULL), `width` values each, each column in its
/// result format.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResultRows {
    width: usize,
    rows: usize,
    /// Every text-format value's text, one after the other.
    text: String,
    /// Every binary-format value's binary form, one after the other.
    binary: BytesMut,
    /// Per column, whether it is in the binary format (empty: none is).
    binary_columns: Vec<bool>,
    /// Per value, where it ends in its column's buffer (with [`NULL`] set
    /// for a NULL).
    ends: Vec<u32>,
}

impl ResultRows {
    /// No rows of `width` text-format columns.
    pub fn new(width: usize) -> ResultRows {
        ResultRows { width, ..ResultRows::default() }
    }

    /// No rows yet, with room for `rows` rows of about `bytes` bytes of
    /// text in all; column `i` is in the binary format if
    /// `binary_columns[i]` (text where it is shorter).
    pub fn with_capacity(width: usize, rows: usize, bytes: usize, binary_columns: Vec<bool>) -> ResultRows {
        let binary_columns = if binary_columns.contains(&true) { binary_columns } else { Vec::new() };
        ResultRows {
            width,
            rows: 0,
            text: String::with_capacity(bytes),
            binary: BytesMut::new(),
            binary_columns,
            ends: Vec::with_capacity(width * rows),
        }
    }

    /// Values per row.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Rows.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Whether column `column` is in the binary format.
    pub fn is_binary(&self, column: usize) -> bool {
        self.binary_columns.get(column).copied().unwrap_or(false)
    }

    /// Row `i`'s values, each in its column's format (none if `i` is past
    /// the end).
    pub fn row(&self, i: usize) -> impl ExactSizeIterator<Item = Option<&[u8]>> + '_ {
        let first = if i < self.rows { i * self.width } else { self.ends.len() };
        let last = (first + self.width).min(self.ends.len());
        let mut starts = [self.start_of(first, false), self.start_of(first, true)];
        self.ends[first..last].iter().enumerate().map(move |(column, &end)| {
            let binary = self.is_binary(column);
            let (at, null) = ((end & !NULL) as usize, end & NULL != 0);
            let buf = if binary { &self.binary[..] } else { self.text.as_bytes() };
            let v = &buf[starts[usize::from(binary)]..at];
            starts[usize::from(binary)] = at;
            (!null).then_some(v)
        })
    }

    /// Every row in order.
    pub fn iter(&self) -> impl Iterator<Item = impl ExactSizeIterator<Item = Option<&[u8]>> + '_> + '_ {
        (0..self.rows).map(|i| self.row(i))
    }

    /// The rows as owned vectors of text (for tests and small results of
    /// text-format columns; a binary value is shown as lossy UTF-8).
    pub fn to_vec(&self) -> Vec<Vec<Option<String>>> {
        self.iter().map(|r| r.map(|v| v.map(|b| String::from_utf8_lossy(b).into_owned())).collect()).collect()
    }

    /// Appends a row of `width` text values, into text-format columns.
    pub fn push_row<'v>(&mut self, values: impl IntoIterator<Item = Option<&'v str>>) {
        for v in values {
            match v {
                Some(s) => {
                    self.text.push_str(s);
                    self.end_value(false, false);
                }
                None => self.end_value(true, false),
            }
        }
        self.rows += 1;
    }

    /// Appends a row of values of types `types`: text output in text
    /// columns, the type's `send` in binary ones.
    pub fn push_datums(&mut self, values: &[Datum], types: &[SqlType]) -> Result<(), SqlError> {
        for (i, v) in values.iter().enumerate() {
            let ty = types.get(i).copied().unwrap_or(SqlType::Text);
            if self.is_binary(i) {
                let null = v.is_null();
                if !null {
                    send_datum(ty, v, &mut self.binary)?;
                }
                self.end_value(null, true);
            } else {
                let null = !v.write_text(ty, &mut self.text);
                self.end_value(null, false);
            }
        }
        self.rows += 1;
        Ok(())
    }

    /// Appends one value read from a stored row, as type `ty` in its
    /// column's format; [`ResultRows::end_row`] ends the row. Integers,
    /// strings and `bytea` are written straight into the buffer; other
    /// types go through their [`Datum`], as [`ResultRows::push_datums`]
    /// writes them.
    pub fn push_ref(&mut self, v: ValueRef<'_>, ty: SqlType) -> Result<(), SqlError> {
        let column = self.ends.len() % self.width.max(1);
        if self.is_binary(column) {
            let null = self.send_ref(v, ty)?;
            self.end_value(null, true);
            return Ok(());
        }
        let null = match v {
            ValueRef::Null => true,
            ValueRef::Int4(x) => write!(self.text, "{x}").is_err(),
            ValueRef::Int8(x) => write!(self.text, "{x}").is_err(),
            ValueRef::Text(s) => {
                self.text.push_str(s);
                false
            }
            ValueRef::Bytea(b) => {
                write_bytea_hex(b, &mut self.text);
                false
            }
            other => !Datum::from_engine_owned(other.to_owned_value()).write_text(ty, &mut self.text),
        };
        self.end_value(null, false);
        Ok(())
    }

    /// Writes a stored value's binary form as type `ty`; true for a NULL.
    fn send_ref(&mut self, v: ValueRef<'_>, ty: SqlType) -> Result<bool, SqlError> {
        match (v, ty) {
            (ValueRef::Null, _) => return Ok(true),
            (ValueRef::Int4(x), _) => send_datum(ty, &Datum::Int(x.into()), &mut self.binary)?,
            (ValueRef::Int8(x), _) => send_datum(ty, &Datum::Int(x), &mut self.binary)?,
            (ValueRef::Text(s), SqlType::Text | SqlType::Varchar(_) | SqlType::Bpchar(_) | SqlType::Name) => {
                self.binary.put_slice(s.as_bytes())
            }
            (ValueRef::Bytea(b), SqlType::Bytea) => self.binary.put_slice(b),
            (other, _) => send_datum(ty, &Datum::from_engine_owned(other.to_owned_value()), &mut self.binary)?,
        }
        Ok(false)
    }

    /// Ends a row of values appended by [`ResultRows::push_ref`].
    pub fn end_row(&mut self) {
        self.rows += 1;
    }

    /// Drops the first `n` rows (a portal's rows already sent).
    pub fn drain_front(&mut self, n: usize) {
        let n = n.min(self.rows);
        let cuts = [self.start_of(n * self.width, false), self.start_of(n * self.width, true)];
        self.text.drain(..cuts[0]);
        self.binary.advance(cuts[1]);
        self.ends.drain(..n * self.width);
        for (i, e) in self.ends.iter_mut().enumerate() {
            let binary = self.binary_columns.get(i % self.width).copied().unwrap_or(false);
            let shift = cuts[usize::from(binary)] as u32;
            *e = ((*e & !NULL) - shift) | (*e & NULL);
        }
        self.rows -= n;
    }

    /// Where value number `value` starts in the text (`binary` false) or
    /// binary buffer: where the last value before it in that buffer ends.
    /// Every row has every column, so that value is within one row back.
    fn start_of(&self, value: usize, binary: bool) -> usize {
        if self.binary_columns.is_empty() {
            // All text: the value before it, in the one buffer in use.
            return match value.checked_sub(1).and_then(|p| self.ends.get(p)) {
                Some(&e) if !binary => (e & !NULL) as usize,
                _ => 0,
            };
        }
        (value.saturating_sub(self.width)..value.min(self.ends.len()))
            .rev()
            .find(|&k| self.is_binary(k % self.width) == binary)
            .map_or(0, |k| (self.ends[k] & !NULL) as usize)
    }

    fn end_value(&mut self, null: bool, binary: bool) {
        let end = if binary { self.binary.len() } else { self.text.len() } as u32;
        self.ends.push(if null { end | NULL } else { end });
    }
}

impl From<Vec<Vec<Option<String>>>> for ResultRows {
    fn from(rows: Vec<Vec<Option<String>>>) -> ResultRows {
        let mut out = ResultRows::new(rows.first().map_or(0, Vec::len));
        for r in &rows {
            out.push_row(r.iter().map(Option::as_deref));
        }
        out
    }
}

impl PartialEq<Vec<Vec<Option<String>>>> for ResultRows {
    fn eq(&self, other: &Vec<Vec<Option<String>>>) -> bool {
        self.rows == other.len()
            && self
                .iter()
                .zip(other)
                .all(|(a, b)| a.len() == b.len() && a.zip(b).all(|(x, y)| x == y.as_deref().map(str::as_bytes)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_keep_values_nulls_and_empty_text_apart() {
        let mut rows = ResultRows::new(3);
        rows.push_row([Some(""), None, Some("x")]);
        rows.push_ref(ValueRef::Int4(-7), SqlType::Int4).unwrap();
        rows.push_ref(ValueRef::Null, SqlType::Text).unwrap();
        rows.push_ref(ValueRef::Text("ü"), SqlType::Text).unwrap();
        rows.end_row();
        assert_eq!(
            rows.to_vec(),
            vec![vec![Some(String::new()), None, Some("x".into())], vec![Some("-7".into()), None, Some("ü".into())]]
        );
        assert_eq!(rows.row(5).count(), 0);
    }

    #[test]
    fn draining_the_front_keeps_the_rest() {
        let mut rows = ResultRows::from(vec![
            vec![Some("a".to_owned()), None],
            vec![Some("bb".to_owned()), Some("c".to_owned())],
            vec![None, Some("ddd".to_owned())],
        ]);
        rows.drain_front(1);
        assert_eq!(rows, vec![vec![Some("bb".to_owned()), Some("c".to_owned())], vec![None, Some("ddd".to_owned())]]);
        rows.drain_front(5);
        assert!(rows.is_empty());
    }

    /// Binary columns hold each value's `send` form, written from the
    /// stored or typed value; text columns beside them keep their text,
    /// and draining the front keeps both buffers' offsets right.
    #[test]
    fn binary_columns_hold_send_forms_beside_text() {
        let mut rows = ResultRows::with_capacity(3, 3, 0, vec![false, true, true]);
        rows.push_ref(ValueRef::Int4(7), SqlType::Int4).unwrap();
        rows.push_ref(ValueRef::Int8(-2), SqlType::Int8).unwrap();
        rows.push_ref(ValueRef::Text("ü"), SqlType::Text).unwrap();
        rows.end_row();
        rows.push_datums(
            &[Datum::Text("x".into()), Datum::Null, Datum::Date(1)],
            &[SqlType::Text, SqlType::Int4, SqlType::Date],
        )
        .unwrap();
        rows.push_datums(
            &[Datum::Null, Datum::Int(3), Datum::Bytea(vec![0, 1])],
            &[SqlType::Text, SqlType::Int2, SqlType::Bytea],
        )
        .unwrap();
        let want: [[Option<&[u8]>; 3]; 3] = [
            [Some(b"7"), Some(&(-2i64).to_be_bytes()), Some("ü".as_bytes())],
            [Some(b"x"), None, Some(&1i32.to_be_bytes())],
            [None, Some(&3i16.to_be_bytes()), Some(&[0, 1])],
        ];
        for (i, w) in want.iter().enumerate() {
            assert_eq!(rows.row(i).collect::<Vec<_>>(), w, "row {i}");
        }
        assert!(!rows.is_binary(0) && rows.is_binary(2));
        rows.drain_front(2);
        assert_eq!(rows.row(0).collect::<Vec<_>>(), want[2]);
        let mut small = ResultRows::with_capacity(1, 1, 0, vec![true]);
        assert_eq!(small.push_datums(&[Datum::Int(70_000)], &[SqlType::Int2]).unwrap_err().code, "22003");
    }

    #[test]
    fn zero_width_rows_are_counted() {
        let mut rows = ResultRows::new(0);
        rows.push_row([]);
        rows.push_row([]);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows.to_vec(), vec![Vec::<Option<String>>::new(); 2]);
    }

    #[test]
    fn values_from_stored_rows_print_as_their_datums() {
        let mut rows = ResultRows::new(4);
        rows.push_ref(ValueRef::Bool(true), SqlType::Bool).unwrap();
        rows.push_ref(ValueRef::Numeric("1.50"), SqlType::Numeric(None)).unwrap();
        rows.push_ref(ValueRef::Bytea(&[0xde, 0xad]), SqlType::Bytea).unwrap();
        rows.push_ref(ValueRef::Int8(i64::MIN), SqlType::Int8).unwrap();
        rows.end_row();
        assert_eq!(
            rows.to_vec(),
            [[Some("t"), Some("1.50"), Some("\\xdead"), Some("-9223372036854775808")].map(|v| v.map(str::to_owned))]
        );
    }
}
