//! Result rows in the text format, as the protocol sends them.
//!
//! [`TextRows`] keeps every value of a result in one buffer: the text of
//! each value appended to one `String`, and one end offset per value. A
//! result of any width costs a few allocations (the two buffers growing),
//! not one per value, and the backend writes each `DataRow` straight from
//! the buffer. The executor's values are written into it as they are
//! produced ([`TextRows::push_ref`]), borrowed from the rows the execution
//! read.
//!
//! ```
//! use turnstile_sql::TextRows;
//! let mut rows = TextRows::new(2);
//! rows.push_row([Some("1"), None]);
//! rows.push_row([Some("2"), Some("two")]);
//! assert_eq!(rows.len(), 2);
//! assert_eq!(rows.row(1).collect::<Vec<_>>(), [Some("2"), Some("two")]);
//! assert_eq!(rows, vec![vec![Some("1".to_owned()), None], vec![Some("2".to_owned()), Some("two".to_owned())]]);
//! ```

use crate::value::{write_bytea_hex, Datum, SqlType};
use std::fmt::Write;
use turnstile_engine::types::ValueRef;

/// Marks a NULL in [`TextRows::ends`]: the value's end offset with this
/// bit set (its text is empty).
const NULL: u32 = 1 << 31;

/// Rows of text values (`None` = NULL), `width` values each.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TextRows {
    width: usize,
    rows: usize,
    /// Every value's text, one after the other.
    text: String,
    /// Per value, where its text ends in `text` (with [`NULL`] set for a
    /// NULL).
    ends: Vec<u32>,
}

impl TextRows {
    /// No rows of `width` columns.
    pub fn new(width: usize) -> TextRows {
        TextRows { width, ..TextRows::default() }
    }

    /// No rows yet, with room for `rows` rows of about `bytes` bytes of
    /// text in all.
    pub fn with_capacity(width: usize, rows: usize, bytes: usize) -> TextRows {
        TextRows { width, rows: 0, text: String::with_capacity(bytes), ends: Vec::with_capacity(width * rows) }
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

    /// Row `i`'s values (none if `i` is past the end).
    pub fn row(&self, i: usize) -> impl ExactSizeIterator<Item = Option<&str>> + '_ {
        let first = if i < self.rows { i * self.width } else { self.ends.len() };
        let last = (first + self.width).min(self.ends.len());
        let mut start = self.start_of(first);
        self.ends[first..last].iter().map(move |&end| {
            let (at, null) = ((end & !NULL) as usize, end & NULL != 0);
            let s = &self.text[start..at];
            start = at;
            (!null).then_some(s)
        })
    }

    /// Every row in order.
    pub fn iter(&self) -> impl Iterator<Item = impl ExactSizeIterator<Item = Option<&str>> + '_> + '_ {
        (0..self.rows).map(|i| self.row(i))
    }

    /// The rows as owned vectors (for tests and small results).
    pub fn to_vec(&self) -> Vec<Vec<Option<String>>> {
        self.iter().map(|r| r.map(|v| v.map(str::to_owned)).collect()).collect()
    }

    /// Appends a row of `width` values.
    pub fn push_row<'v>(&mut self, values: impl IntoIterator<Item = Option<&'v str>>) {
        for v in values {
            match v {
                Some(s) => {
                    self.text.push_str(s);
                    self.end_value(false);
                }
                None => self.end_value(true),
            }
        }
        self.rows += 1;
    }

    /// Appends a row of values of types `types`, in their text output.
    pub fn push_datums(&mut self, values: &[Datum], types: &[SqlType]) {
        for (i, v) in values.iter().enumerate() {
            let ty = types.get(i).copied().unwrap_or(SqlType::Text);
            let null = !v.write_text(ty, &mut self.text);
            self.end_value(null);
        }
        self.rows += 1;
    }

    /// Appends one value read from a stored row, in the text output of
    /// `ty`; [`TextRows::end_row`] ends the row. Integers, text and
    /// `bytea` are written straight into the buffer; other types go through
    /// their [`Datum`], as [`TextRows::push_datums`] writes them.
    pub fn push_ref(&mut self, v: ValueRef<'_>, ty: SqlType) {
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
        self.end_value(null);
    }

    /// Ends a row of values appended by [`TextRows::push_ref`].
    pub fn end_row(&mut self) {
        self.rows += 1;
    }

    /// Drops the first `n` rows (a portal's rows already sent).
    pub fn drain_front(&mut self, n: usize) {
        let n = n.min(self.rows);
        let cut = self.start_of(n * self.width);
        self.text.drain(..cut);
        self.ends.drain(..n * self.width);
        let shift = cut as u32;
        for e in &mut self.ends {
            *e = ((*e & !NULL) - shift) | (*e & NULL);
        }
        self.rows -= n;
    }

    fn start_of(&self, value: usize) -> usize {
        match value.checked_sub(1).and_then(|p| self.ends.get(p)) {
            Some(&e) => (e & !NULL) as usize,
            None => 0,
        }
    }

    fn end_value(&mut self, null: bool) {
        let end = self.text.len() as u32;
        self.ends.push(if null { end | NULL } else { end });
    }
}

impl From<Vec<Vec<Option<String>>>> for TextRows {
    fn from(rows: Vec<Vec<Option<String>>>) -> TextRows {
        let mut out = TextRows::new(rows.first().map_or(0, Vec::len));
        for r in &rows {
            out.push_row(r.iter().map(Option::as_deref));
        }
        out
    }
}

impl PartialEq<Vec<Vec<Option<String>>>> for TextRows {
    fn eq(&self, other: &Vec<Vec<Option<String>>>) -> bool {
        self.rows == other.len()
            && self.iter().zip(other).all(|(a, b)| a.len() == b.len() && a.zip(b).all(|(x, y)| x == y.as_deref()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_keep_values_nulls_and_empty_text_apart() {
        let mut rows = TextRows::new(3);
        rows.push_row([Some(""), None, Some("x")]);
        rows.push_ref(ValueRef::Int4(-7), SqlType::Int4);
        rows.push_ref(ValueRef::Null, SqlType::Text);
        rows.push_ref(ValueRef::Text("ü"), SqlType::Text);
        rows.end_row();
        assert_eq!(
            rows.to_vec(),
            vec![vec![Some(String::new()), None, Some("x".into())], vec![Some("-7".into()), None, Some("ü".into())]]
        );
        assert_eq!(rows.row(5).count(), 0);
    }

    #[test]
    fn draining_the_front_keeps_the_rest() {
        let mut rows = TextRows::from(vec![
            vec![Some("a".to_owned()), None],
            vec![Some("bb".to_owned()), Some("c".to_owned())],
            vec![None, Some("ddd".to_owned())],
        ]);
        rows.drain_front(1);
        assert_eq!(rows, vec![vec![Some("bb".to_owned()), Some("c".to_owned())], vec![None, Some("ddd".to_owned())]]);
        rows.drain_front(5);
        assert!(rows.is_empty());
    }

    #[test]
    fn zero_width_rows_are_counted() {
        let mut rows = TextRows::new(0);
        rows.push_row([]);
        rows.push_row([]);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows.to_vec(), vec![Vec::<Option<String>>::new(); 2]);
    }

    #[test]
    fn values_from_stored_rows_print_as_their_datums() {
        let mut rows = TextRows::new(4);
        rows.push_ref(ValueRef::Bool(true), SqlType::Bool);
        rows.push_ref(ValueRef::Numeric("1.50"), SqlType::Numeric(None));
        rows.push_ref(ValueRef::Bytea(&[0xde, 0xad]), SqlType::Bytea);
        rows.push_ref(ValueRef::Int8(i64::MIN), SqlType::Int8);
        rows.end_row();
        assert_eq!(
            rows.row(0).collect::<Vec<_>>(),
            [Some("t"), Some("1.50"), Some("\\xdead"), Some("-9223372036854775808")]
        );
    }
}
