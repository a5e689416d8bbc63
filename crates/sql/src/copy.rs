//! `COPY … FROM STDIN` / `TO STDOUT` in PostgreSQL's three formats: text
//! and CSV with their options (`DELIMITER`, `NULL`, `HEADER`, `QUOTE`,
//! `ESCAPE`), and binary (`PGCOPY` signature, header, per-tuple field
//! counts, the `-1` trailer; each field in its type's `send` form, see
//! [`crate::binary`]).

use crate::binary_datum::send_datum;
use crate::error::SqlError;
use crate::value::{Datum, SqlType};
use std::borrow::Cow;
use turnstile_engine::types::{ColumnType, Value};
use turnstile_lock::SqlState;

/// A COPY's data format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyFormat {
    /// Tab-separated lines, backslash escapes, `\N` for NULL.
    Text,
    /// Comma-separated values, quoting with `"`.
    Csv,
    /// PostgreSQL's binary COPY format.
    Binary,
}

/// A COPY's options, checked as PostgreSQL's `ProcessCopyOptions` does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopyOptions {
    /// `FORMAT`.
    pub format: CopyFormat,
    /// `DELIMITER` (one byte).
    pub delimiter: u8,
    /// `NULL`: the string that stands for NULL.
    pub null: String,
    /// `HEADER`: a first line of column names (written; skipped on input).
    pub header: bool,
    /// `QUOTE` (CSV).
    pub quote: u8,
    /// `ESCAPE` (CSV).
    pub escape: u8,
    /// `FREEZE`.
    pub freeze: bool,
}

impl Default for CopyOptions {
    fn default() -> Self {
        CopyOptions {
            format: CopyFormat::Text,
            delimiter: b'\t',
            null: "\\N".into(),
            header: false,
            quote: b'"',
            escape: b'"',
            freeze: false,
        }
    }
}

fn redundant() -> SqlError {
    SqlError::new(SqlState::SYNTAX_ERROR, "conflicting or redundant options")
}

fn bool_option(name: &str, value: Option<&str>) -> Result<bool, SqlError> {
    match value.map(str::to_ascii_lowercase).as_deref() {
        None | Some("on" | "true" | "1") => Ok(true),
        Some("off" | "false" | "0") => Ok(false),
        Some(v) => {
            Err(SqlError::new(SqlState::INVALID_PARAMETER_VALUE, format!("{name} requires a Boolean value: \"{v}\"")))
        }
    }
}

fn one_byte(what: &str, value: Option<&str>) -> Result<u8, SqlError> {
    match value.map(str::as_bytes) {
        Some([b]) if b.is_ascii() => Ok(*b),
        _ => Err(SqlError::new(
            SqlState::FEATURE_NOT_SUPPORTED,
            format!("COPY {what} must be a single one-byte character"),
        )),
    }
}

impl CopyOptions {
    /// The options of a COPY statement, as (lower-case name, value) pairs in
    /// their order; the old syntax's `BINARY` and `CSV` arrive as `format`.
    pub fn from_pairs(pairs: &[(String, Option<String>)]) -> Result<CopyOptions, SqlError> {
        let mut o = CopyOptions::default();
        let (mut format, mut delimiter, mut null, mut header, mut quote, mut escape, mut freeze) =
            (None, None, None, None, None, None, None);
        for (name, value) in pairs {
            let v = value.as_deref();
            let slot_set = match name.as_str() {
                "format" => format
                    .replace(match v.map(str::to_ascii_lowercase).as_deref() {
                        Some("text") => CopyFormat::Text,
                        Some("csv") => CopyFormat::Csv,
                        Some("binary") => CopyFormat::Binary,
                        other => {
                            return Err(SqlError::new(
                                SqlState::INVALID_PARAMETER_VALUE,
                                format!("COPY format \"{}\" not recognized", other.unwrap_or_default()),
                            ))
                        }
                    })
                    .is_some(),
                "delimiter" => delimiter.replace(one_byte("delimiter", v)?).is_some(),
                "null" => null.replace(v.unwrap_or_default().to_owned()).is_some(),
                "header" => header.replace(bool_option("header", v)?).is_some(),
                "quote" => quote.replace(one_byte("quote", v)?).is_some(),
                "escape" => escape.replace(one_byte("escape", v)?).is_some(),
                "freeze" => freeze.replace(bool_option("freeze", v)?).is_some(),
                other => {
                    return Err(SqlError::new(SqlState::SYNTAX_ERROR, format!("option \"{other}\" not recognized")))
                }
            };
            if slot_set {
                return Err(redundant());
            }
        }
        o.format = format.unwrap_or(CopyFormat::Text);
        o.freeze = freeze.unwrap_or(false);
        let binary = o.format == CopyFormat::Binary;
        let csv = o.format == CopyFormat::Csv;
        for (given, what) in
            [(delimiter.is_some(), "DELIMITER"), (null.is_some(), "NULL"), (header.is_some(), "HEADER")]
        {
            if binary && given {
                return Err(SqlError::new(SqlState::SYNTAX_ERROR, format!("cannot specify {what} in BINARY mode")));
            }
        }
        if !csv && quote.is_some() {
            return Err(SqlError::new(SqlState::FEATURE_NOT_SUPPORTED, "COPY quote available only in CSV mode"));
        }
        if !csv && escape.is_some() {
            return Err(SqlError::new(SqlState::FEATURE_NOT_SUPPORTED, "COPY escape available only in CSV mode"));
        }
        if csv {
            o.delimiter = b',';
            o.null = String::new();
        }
        o.delimiter = delimiter.unwrap_or(o.delimiter);
        o.null = null.unwrap_or(o.null);
        o.header = header.unwrap_or(false);
        o.quote = quote.unwrap_or(b'"');
        o.escape = escape.unwrap_or(o.quote);
        if matches!(o.delimiter, b'\n' | b'\r') {
            return Err(SqlError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                "COPY delimiter cannot be newline or carriage return",
            ));
        }
        if o.null.contains(['\n', '\r']) {
            return Err(SqlError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                "COPY null representation cannot use newline or carriage return",
            ));
        }
        if csv && o.delimiter == o.quote {
            return Err(SqlError::new(SqlState::INVALID_PARAMETER_VALUE, "COPY delimiter and quote must be different"));
        }
        if !binary && o.null.as_bytes().contains(&o.delimiter) {
            return Err(SqlError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                "COPY delimiter must not appear in the NULL specification",
            ));
        }
        Ok(o)
    }
}

/// PGCOPY's 11-byte signature.
pub const BINARY_SIGNATURE: &[u8; 11] = b"PGCOPY\n\xff\r\n\0";

/// COPY text format: backslash escapes (the delimiter too).
pub(crate) fn copy_escape(s: &str, delimiter: u8, out: &mut Vec<u8>) {
    for b in s.bytes() {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b if b == delimiter => out.extend_from_slice(&[b'\\', b]),
            b => out.push(b),
        }
    }
}

/// A text-format field: `None` when it is the NULL string (compared before
/// de-escaping, as PostgreSQL does).
pub(crate) fn copy_unescape(field: &str, null: &str) -> Option<String> {
    unescape_field(field, null).map(Cow::into_owned)
}

/// As [`copy_unescape`], borrowing the field when it has no backslash (the
/// common case: nothing is copied).
pub(crate) fn unescape_field<'a>(field: &'a str, null: &str) -> Option<Cow<'a, str>> {
    if field == null {
        return None;
    }
    if memchr::memchr(b'\\', field.as_bytes()).is_none() {
        return Some(Cow::Borrowed(field));
    }
    let mut out = String::with_capacity(field.len());
    let mut it = field.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('v') => out.push('\u{b}'),
            Some(o) => out.push(o),
            None => out.push('\\'),
        }
    }
    Some(Cow::Owned(out))
}

/// Splits a text-format line at unescaped delimiters into `fields`
/// (cleared first; reused from line to line).
pub(crate) fn split_text<'a>(line: &'a str, delimiter: u8, fields: &mut Vec<&'a str>) {
    fields.clear();
    let b = line.as_bytes();
    let (mut start, mut i) = (0, 0);
    while let Some(k) = memchr::memchr2(b'\\', delimiter, &b[i..]) {
        let at = i + k;
        if b[at] == b'\\' {
            i = at + 2; // the escaped byte is never a delimiter
            if i >= b.len() {
                break;
            }
            continue;
        }
        fields.push(&line[start..at]);
        start = at + 1;
        i = at + 1;
    }
    fields.push(&line[start.min(line.len())..]);
}

/// A field's text as its column's value: a `text` column takes the text as
/// it is (one copy, into the row); other types parse it.
pub(crate) fn field_value(text: Cow<'_, str>, sql: SqlType, ty: ColumnType) -> Result<Value, SqlError> {
    match (sql, ty) {
        (SqlType::Text, ColumnType::Text) => Ok(Value::Text(text.into_owned())),
        _ => Datum::parse(&text, sql)?.to_engine(ty),
    }
}

/// Splits one CSV record (without its line end) into fields; `None` = NULL
/// (an unquoted field equal to the NULL string).
pub(crate) fn split_csv(record: &str, o: &CopyOptions) -> Option<Vec<Option<String>>> {
    let b = record.as_bytes();
    let mut fields = Vec::new();
    let mut i = 0;
    loop {
        let mut value = Vec::new();
        let mut quoted = false;
        let start = i;
        while i < b.len() && b[i] != o.delimiter {
            if b[i] == o.quote {
                quoted = true;
                i += 1;
                loop {
                    let c = *b.get(i)?;
                    if c == o.escape
                        && b.get(i + 1).is_some_and(|&n| n == o.quote || n == o.escape)
                        && (o.escape != o.quote || b[i + 1] == o.quote)
                    {
                        value.push(b[i + 1]);
                        i += 2;
                    } else if c == o.quote {
                        i += 1;
                        break;
                    } else {
                        value.push(c);
                        i += 1;
                    }
                }
            } else {
                value.push(b[i]);
                i += 1;
            }
        }
        let raw = &record[start..i];
        let text = String::from_utf8(value).ok()?;
        fields.push(if !quoted && raw == o.null { None } else { Some(text) });
        if i >= b.len() {
            return Some(fields);
        }
        i += 1;
    }
}

/// Appends a CSV field, quoted where PostgreSQL quotes it.
fn csv_field(s: &str, o: &CopyOptions, out: &mut Vec<u8>) {
    let needs_quote =
        s == o.null || s.bytes().any(|b| b == o.delimiter || b == o.quote || b == b'\n' || b == b'\r') || s == "\\.";
    if !needs_quote {
        out.extend_from_slice(s.as_bytes());
        return;
    }
    out.push(o.quote);
    for b in s.bytes() {
        if b == o.quote || b == o.escape {
            out.push(o.escape);
        }
        out.push(b);
    }
    out.push(o.quote);
}

/// The CopyData payloads of a COPY TO, as PostgreSQL splits them: the
/// header line (text/CSV `HEADER`), one per row, and for binary the file
/// header in front of the first row and the trailer alone.
pub(crate) fn copy_out_lines(
    names: &[String],
    types: &[SqlType],
    rows: &[Vec<Datum>],
    o: &CopyOptions,
) -> Result<Vec<Vec<u8>>, SqlError> {
    let mut lines = Vec::with_capacity(rows.len() + 2);
    match o.format {
        CopyFormat::Binary => {
            // The file header goes out in the first message with the first
            // tuple (or the trailer), as PostgreSQL sends it; psycopg's
            // parser expects it there.
            let mut head = BINARY_SIGNATURE.to_vec();
            head.extend_from_slice(&0i32.to_be_bytes());
            head.extend_from_slice(&0i32.to_be_bytes());
            let mut head = Some(head);
            for r in rows {
                let mut line = head.take().unwrap_or_default();
                line.extend_from_slice(&(r.len() as i16).to_be_bytes());
                for (d, t) in r.iter().zip(types) {
                    if d.is_null() {
                        line.extend_from_slice(&(-1i32).to_be_bytes());
                    } else {
                        let mut field = bytes::BytesMut::new();
                        send_datum(*t, d, &mut field)?;
                        line.extend_from_slice(&(field.len() as i32).to_be_bytes());
                        line.extend_from_slice(&field);
                    }
                }
                lines.push(line);
            }
            let mut trailer = head.take().unwrap_or_default();
            trailer.extend_from_slice(&(-1i16).to_be_bytes());
            lines.push(trailer);
        }
        CopyFormat::Text | CopyFormat::Csv => {
            let csv = o.format == CopyFormat::Csv;
            let field = |s: &str, line: &mut Vec<u8>| {
                if csv {
                    csv_field(s, o, line)
                } else {
                    copy_escape(s, o.delimiter, line)
                }
            };
            if o.header {
                let mut line = Vec::new();
                for (i, n) in names.iter().enumerate() {
                    if i > 0 {
                        line.push(o.delimiter);
                    }
                    field(n, &mut line);
                }
                line.push(b'\n');
                lines.push(line);
            }
            for r in rows {
                let mut line = Vec::new();
                for (i, (d, t)) in r.iter().zip(types).enumerate() {
                    if i > 0 {
                        line.push(o.delimiter);
                    }
                    match d.to_text(*t) {
                        None => line.extend_from_slice(o.null.as_bytes()),
                        Some(s) => field(&s, &mut line),
                    }
                }
                line.push(b'\n');
                lines.push(line);
            }
        }
    }
    Ok(lines)
}

/// How far a COPY FROM has read its input's framing.
#[derive(Clone, Debug, Default)]
pub struct CopyProgress {
    /// The header line (text/CSV `HEADER`) or the binary file header has
    /// been read.
    pub(crate) header_done: bool,
    /// Lines (tuples) read so far, the header line included.
    pub(crate) lines: u64,
    /// The target columns' names, for messages.
    pub(crate) names: Vec<String>,
}
