//! `COPY … FROM STDIN` / `TO STDOUT` in text format.

use crate::error::SqlError;
use crate::plan;
use crate::session::SqlSession;
use crate::statement::CopyIn;
use crate::value::Datum;
use turnstile_engine::types::Value;
use turnstile_lock::SqlState;

/// COPY text format: `\N` is NULL, backslash escapes.
pub(crate) fn copy_escape(s: &str, out: &mut Vec<u8>) {
    for b in s.bytes() {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b => out.push(b),
        }
    }
}

pub(crate) fn copy_unescape(field: &str) -> Option<String> {
    if field == "\\N" {
        return None;
    }
    if !field.contains('\\') {
        return Some(field.to_owned());
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
    Some(out)
}

/// Rows per engine call while COPY streams in.
pub(crate) const COPY_BATCH: usize = 10_000;

impl SqlSession {
    /// Feeds a CopyData chunk (lines may be split anywhere).
    pub fn copy_data(&mut self, copy: &mut CopyIn, data: &[u8]) -> Result<(), SqlError> {
        self.ctx.notices.clear();
        if copy.done {
            return Ok(());
        }
        copy.partial.extend_from_slice(data);
        let mut start = 0;
        let buf = std::mem::take(&mut copy.partial);
        while let Some(nl) = buf[start..].iter().position(|b| *b == b'\n') {
            let line = &buf[start..start + nl];
            start += nl + 1;
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line == b"\\." {
                copy.done = true;
                break;
            }
            let text = std::str::from_utf8(line).map_err(|_| {
                SqlError::new(SqlState::CHARACTER_NOT_IN_REPERTOIRE, "invalid byte sequence for encoding \"UTF8\"")
            })?;
            let fields: Vec<&str> = text.split('\t').collect();
            if fields.len() != copy.targets.len() {
                let what = if fields.len() < copy.targets.len() {
                    "missing data for column"
                } else {
                    "extra data after last expected column"
                };
                return Err(SqlError::new(
                    SqlState::BAD_COPY_FILE_FORMAT,
                    format!("{what} (COPY {}, line {})", copy.table, copy.count + copy.batch.len() as u64 + 1),
                ));
            }
            let mut row = vec![Value::Null; copy.types.len()];
            for (f, &t) in fields.iter().zip(&copy.targets) {
                if let Some(s) = copy_unescape(f) {
                    row[t] = Datum::parse(&s, copy.sql_types[t])?.to_engine(copy.types[t])?;
                }
            }
            copy.batch.push(row);
            if copy.batch.len() >= COPY_BATCH {
                self.flush_copy(copy)?;
            }
        }
        if !copy.done {
            copy.partial = buf[start..].to_vec();
        }
        Ok(())
    }

    pub(crate) fn flush_copy(&mut self, copy: &mut CopyIn) -> Result<(), SqlError> {
        plan::check_cancel(&self.ctx)?;
        let rows = std::mem::take(&mut copy.batch);
        if rows.is_empty() {
            return Ok(());
        }
        let n = self.es.insert_many(&copy.table, rows).map_err(|e| self.describe_constraint(SqlError::from_engine(e)));
        let n = n?;
        copy.count += n;
        Ok(())
    }

    /// Ends a COPY FROM STDIN (CopyDone): the tag `COPY n`.
    pub fn copy_done(&mut self, mut copy: CopyIn) -> Result<String, SqlError> {
        self.ctx.notices.clear();
        if !copy.partial.is_empty() && !copy.done {
            let mut rest = std::mem::take(&mut copy.partial);
            rest.push(b'\n');
            self.copy_data(&mut copy, &rest)?;
        }
        let done = self.flush_copy(&mut copy);
        if done.is_err() {
            self.statement_failed();
        }
        done.map(|()| format!("COPY {}", copy.count))
    }

    /// Aborts a COPY FROM STDIN (CopyFail).
    pub fn copy_fail(&mut self, copy: CopyIn, message: &str) -> SqlError {
        let _ = copy;
        self.statement_failed();
        SqlError::new(SqlState::QUERY_CANCELED, format!("COPY from stdin failed: {message}"))
    }
}
