//! The backend's output buffer: messages are encoded with pgwire's codec into
//! one buffer, and the buffer goes to the socket once per `Sync`, simple
//! `Query` or `Flush` (or when a long result fills it), as PostgreSQL's
//! `pq_putmessage` / `pq_flush` do.

use crate::stream::Stream;
use bytes::{BufMut, BytesMut};
use pgwire::messages::data::{DataRow, FieldDescription, RowDescription, FORMAT_CODE_TEXT};
use pgwire::messages::response::{ErrorResponse, NoticeResponse};
use pgwire::messages::Message;
use std::io::{self, Write};
use turnstile_sql::{Severity, SqlState};
use turnstile_sync::sync::counter::{AtomicU64, Ordering};

/// Output larger than this is written out before the result is complete
/// (PostgreSQL's send buffer is 8 kB; a larger one keeps a typical result in
/// one write).
pub const OUTPUT_FLUSH_BYTES: usize = 64 * 1024;

/// A backend's pending output.
pub struct Output {
    buf: BytesMut,
    row: BytesMut,
}

impl Default for Output {
    fn default() -> Self {
        Self::new()
    }
}

impl Output {
    /// An empty buffer.
    pub fn new() -> Self {
        Output { buf: BytesMut::with_capacity(8 * 1024), row: BytesMut::new() }
    }

    /// Appends one message. Encoding fails only for a message longer than
    /// the protocol allows; that becomes an error message in its place.
    pub fn push<M: Message>(&mut self, msg: &M) {
        let mark = self.buf.len();
        if let Err(e) = msg.encode(&mut self.buf) {
            self.buf.truncate(mark);
            self.error(
                Severity::Error,
                SqlState::PROGRAM_LIMIT_EXCEEDED,
                &format!("message too long for the protocol: {e}"),
                None,
                None,
                None,
            );
        }
    }

    /// Appends an `ErrorResponse` (severity `ERROR` or `FATAL`).
    pub fn error(
        &mut self,
        severity: Severity,
        code: SqlState,
        message: &str,
        detail: Option<&str>,
        hint: Option<&str>,
        position: Option<u32>,
    ) {
        let mut fields = vec![
            (b'S', severity.name().to_owned()),
            (b'V', severity.name().to_owned()),
            (b'C', code.to_string()),
            (b'M', message.to_owned()),
        ];
        if let Some(d) = detail {
            fields.push((b'D', d.to_owned()));
        }
        if let Some(h) = hint {
            fields.push((b'H', h.to_owned()));
        }
        if let Some(p) = position {
            fields.push((b'P', p.to_string()));
        }
        let _ = ErrorResponse::new(fields).encode(&mut self.buf);
    }

    /// Appends `e` as an `ErrorResponse` with `severity`, with every field
    /// PostgreSQL would set: `S`, `V`, `C`, `M`, then `D`, `H`, `P`, `s`,
    /// `t`, `c`, `d`, `n` where the error has them.
    pub fn sql_error(&mut self, severity: Severity, e: &turnstile_sql::SqlError) {
        let mut fields = vec![
            (b'S', severity.name().to_owned()),
            (b'V', severity.name().to_owned()),
            (b'C', e.code.to_string()),
            (b'M', e.message.clone()),
        ];
        let none = turnstile_sql::ErrorObject::default();
        let o = e.object.as_deref().unwrap_or(&none);
        let optional = [
            (b'D', e.detail.clone()),
            (b'H', e.hint.clone()),
            (b'P', e.position.map(|p| p.to_string())),
            (b's', o.schema.clone()),
            (b't', o.table.clone()),
            (b'c', o.column.clone()),
            (b'd', o.datatype.clone()),
            (b'n', o.constraint.clone()),
        ];
        fields.extend(optional.into_iter().filter_map(|(k, v)| v.map(|v| (k, v))));
        let _ = ErrorResponse::new(fields).encode(&mut self.buf);
    }

    /// Appends a `NoticeResponse`.
    pub fn notice(&mut self, severity: Severity, code: SqlState, message: &str) {
        let fields = vec![
            (b'S', severity.name().to_owned()),
            (b'V', severity.name().to_owned()),
            (b'C', code.to_string()),
            (b'M', message.to_owned()),
        ];
        let _ = NoticeResponse::new(fields).encode(&mut self.buf);
    }

    /// Appends a `RowDescription` of text-format columns.
    pub fn row_description(&mut self, fields: &[turnstile_sql::FieldInfo]) {
        self.row_description_formats(fields, &[]);
    }

    /// Appends a `RowDescription` whose column `i` is in format
    /// `formats[i]` (text where `formats` is shorter).
    pub fn row_description_formats(&mut self, fields: &[turnstile_sql::FieldInfo], formats: &[i16]) {
        let fields = fields
            .iter()
            .enumerate()
            .map(|(i, f)| {
                FieldDescription::new(
                    f.name.clone(),
                    f.table_oid as i32,
                    f.column,
                    f.type_oid,
                    f.type_len,
                    f.type_modifier,
                    formats.get(i).copied().unwrap_or(FORMAT_CODE_TEXT),
                )
            })
            .collect();
        self.push(&RowDescription::new(fields));
    }

    /// Appends one `DataRow` of values, each already in its column's
    /// format (`None` = NULL).
    pub fn data_row<'v>(&mut self, values: impl ExactSizeIterator<Item = Option<&'v [u8]>>) {
        self.row.clear();
        let count = values.len() as i16;
        for v in values {
            match v {
                Some(s) => {
                    self.row.put_i32(s.len() as i32);
                    self.row.put_slice(s);
                }
                None => self.row.put_i32(-1),
            }
        }
        let msg = DataRow::new(self.row.split(), count);
        self.push(&msg);
    }

    /// Bytes pending.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Writes everything pending to the socket (one `write` call unless the
    /// kernel takes less), counting the calls in `writes`.
    pub fn flush_to(&mut self, stream: &mut Stream, writes: &AtomicU64) -> io::Result<()> {
        let mut off = 0;
        while off < self.buf.len() {
            writes.fetch_add(1, Ordering::Relaxed);
            match stream.write(&self.buf[off..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => off += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.buf.clear();
                    return Err(e);
                }
            }
        }
        self.buf.clear();
        Ok(())
    }
}
