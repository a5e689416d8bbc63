//! Running COPY: `COPY … FROM STDIN` fed chunk by chunk, in the text, CSV
//! and binary formats, inserted in batches through the engine. The
//! formats' options and codecs are in `copy.rs`, which the parser uses
//! too; this file is the session's side.

use crate::binary_datum::recv_datum;
use crate::copy::{
    copy_out_lines, field_value, split_csv, split_text, unescape_field, CopyFormat, CopyOptions, BINARY_SIGNATURE,
};
use crate::error::SqlError;
use crate::plan;
use crate::session::SqlSession;
use crate::statement::{CopyIn, Outcome};
use std::borrow::Cow;
use turnstile_engine::types::Value;
use turnstile_lock::SqlState;

fn bad_copy(copy: &CopyIn, what: &str) -> SqlError {
    SqlError::new(SqlState::BAD_COPY_FILE_FORMAT, format!("{what} (COPY {}, line {})", copy.table, copy.progress.lines))
}

/// Rows per engine call while COPY streams in.
pub(crate) const COPY_BATCH: usize = 10_000;

impl SqlSession {
    /// `COPY table [(columns)] FROM STDIN|'file'`: the [`CopyIn`] that the
    /// CopyData messages feed, or (from a file) the whole copy run now.
    pub(crate) fn copy_from(
        &mut self,
        table: &str,
        columns: &[String],
        file: Option<&str>,
        options: &CopyOptions,
    ) -> Result<Outcome, SqlError> {
        let cat = plan::Catalog { session: &self.es, sequences: &self.ctx.shared.sequences };
        let def = cat.table(table)?;
        let targets: Vec<usize> = if columns.is_empty() {
            (0..def.names.len()).collect()
        } else {
            columns
                .iter()
                .map(|c| {
                    def.names.iter().position(|n| n == c).ok_or_else(|| {
                        SqlError::new(
                            SqlState::UNDEFINED_COLUMN,
                            format!("column \"{c}\" of relation \"{table}\" does not exist"),
                        )
                    })
                })
                .collect::<Result<Vec<_>, _>>()?
        };
        // COPY does not evaluate DEFAULT expressions (yet): refuse
        // rather than store NULL where PostgreSQL stores the default.
        if (0..def.names.len()).any(|k| !targets.contains(&k) && def.defaults[k].is_some()) {
            return Err(SqlError::unsupported("COPY FROM that leaves out a column with a DEFAULT"));
        }
        let names = targets.iter().map(|&t| def.names[t].clone()).collect();
        let fk_child = cat.fk_roles(def.oid, &[]).0.then(|| (def.oid, Vec::new()));
        // One transaction for the whole COPY, as PostgreSQL's: its batches
        // commit together, or an error (a late row's, the foreign-key
        // check at the end) takes them all back.
        let own_block = self.tx == crate::session::TxStatus::Idle;
        if own_block {
            self.open_implicit()?;
        }
        let mut copy = CopyIn {
            own_block,
            fk_child,
            table: table.to_owned(),
            types: def.types,
            sql_types: def.sql_types,
            targets,
            partial: Vec::new(),
            batch: Vec::new(),
            count: 0,
            done: false,
            progress: crate::copy::CopyProgress { names, ..Default::default() },
            options: options.clone(),
        };
        match file {
            None => Ok(Outcome::CopyIn(copy)),
            Some(path) => {
                let data = std::fs::read(path).map_err(|e| {
                    SqlError::new(SqlState::UNDEFINED_FILE, format!("could not open file \"{path}\" for reading: {e}"))
                })?;
                if let Err(e) = self.copy_data(&mut copy, &data) {
                    // Takes the rows loaded so far back (`statement_failed`).
                    drop(self.copy_fail(copy, &e.message));
                    return Err(e);
                }
                let tag = self.copy_done(copy)?;
                Ok(Outcome::Command { tag })
            }
        }
    }

    /// `COPY (query)|table TO STDOUT|'file'`: the query run, its rows
    /// formatted as `options` say.
    pub(crate) fn copy_to(
        &mut self,
        query: &str,
        file: Option<&str>,
        options: &CopyOptions,
    ) -> Result<Outcome, SqlError> {
        let st = self.make_statement(query, query, 0, &[], false)?;
        let plan = self.select_plan(&st)?.ok_or_else(|| SqlError::unsupported("COPY of a non-SELECT"))?;
        let rows = self.run_select(&plan, &[], true)?;
        let names: Vec<String> = plan.fields.iter().map(|f| f.name.clone()).collect();
        let lines = copy_out_lines(&names, &plan.out_types, &rows, options)?;
        let tag = format!("COPY {}", rows.len());
        match file {
            None => Ok(Outcome::CopyOut {
                columns: plan.fields.len(),
                lines,
                tag,
                binary: options.format == CopyFormat::Binary,
            }),
            Some(path) => {
                std::fs::write(path, lines.concat()).map_err(|e| {
                    SqlError::new(SqlState::UNDEFINED_FILE, format!("could not open file \"{path}\" for writing: {e}"))
                })?;
                Ok(Outcome::Command { tag })
            }
        }
    }

    /// Feeds a CopyData chunk (lines and tuples may be split anywhere).
    pub fn copy_data(&mut self, copy: &mut CopyIn, data: &[u8]) -> Result<(), SqlError> {
        self.ctx.notices.clear();
        if copy.done {
            return Ok(());
        }
        copy.partial.extend_from_slice(data);
        let buf = std::mem::take(&mut copy.partial);
        let used = if copy.options.format == CopyFormat::Binary {
            self.copy_binary(copy, &buf)?
        } else {
            self.copy_lines(copy, &buf)?
        };
        if !copy.done {
            copy.partial = buf[used..].to_vec();
        }
        Ok(())
    }

    /// Text and CSV: consumes the complete records of `buf`; returns the
    /// bytes used.
    fn copy_lines(&mut self, copy: &mut CopyIn, buf: &[u8]) -> Result<usize, SqlError> {
        let csv = copy.options.format == CopyFormat::Csv;
        let mut start = 0;
        let mut split: Vec<&str> = Vec::new();
        loop {
            // A record ends at a newline outside CSV quotes.
            let end = if csv {
                let mut in_quote = false;
                let mut end = None;
                for (k, &b) in buf[start..].iter().enumerate() {
                    if b == copy.options.quote {
                        in_quote = !in_quote;
                    } else if b == b'\n' && !in_quote {
                        end = Some(start + k);
                        break;
                    }
                }
                end
            } else {
                memchr::memchr(b'\n', &buf[start..]).map(|k| start + k)
            };
            let Some(nl) = end else { return Ok(start) };
            let line = &buf[start..nl];
            start = nl + 1;
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line == b"\\." {
                copy.done = true;
                return Ok(start);
            }
            copy.progress.lines += 1;
            if copy.options.header && !copy.progress.header_done {
                copy.progress.header_done = true;
                continue;
            }
            let text = std::str::from_utf8(line).map_err(|_| {
                SqlError::new(SqlState::CHARACTER_NOT_IN_REPERTOIRE, "invalid byte sequence for encoding \"UTF8\"")
            })?;
            let mut csv_fields = Vec::new();
            let count = if csv {
                csv_fields =
                    split_csv(text, &copy.options).ok_or_else(|| bad_copy(copy, "unterminated CSV quoted field"))?;
                csv_fields.len()
            } else {
                split_text(text, copy.options.delimiter, &mut split);
                split.len()
            };
            if count != copy.targets.len() {
                let what = match copy.progress.names.get(count) {
                    Some(name) if count < copy.targets.len() => format!("missing data for column \"{name}\""),
                    _ => "extra data after last expected column".to_owned(),
                };
                return Err(bad_copy(copy, &what));
            }
            let mut row = vec![Value::Null; copy.types.len()];
            for (i, &t) in copy.targets.iter().enumerate() {
                let field = if csv {
                    csv_fields[i].as_deref().map(Cow::Borrowed)
                } else {
                    unescape_field(split[i], &copy.options.null)
                };
                if let Some(f) = field {
                    row[t] = field_value(f, copy.sql_types[t], copy.types[t])?;
                }
            }
            self.copy_row(copy, row)?;
        }
    }

    /// Binary: consumes the header and the complete tuples of `buf`;
    /// returns the bytes used.
    fn copy_binary(&mut self, copy: &mut CopyIn, buf: &[u8]) -> Result<usize, SqlError> {
        let mut pos = 0;
        if !copy.progress.header_done {
            if buf.len() < BINARY_SIGNATURE.len() + 8 {
                return Ok(0);
            }
            if &buf[..BINARY_SIGNATURE.len()] != BINARY_SIGNATURE {
                return Err(SqlError::new(SqlState::BAD_COPY_FILE_FORMAT, "COPY file signature not recognized"));
            }
            let flags = i32::from_be_bytes(buf[11..15].try_into().expect("4 bytes"));
            if flags & (1 << 16) != 0 {
                return Err(SqlError::new(SqlState::BAD_COPY_FILE_FORMAT, "invalid COPY file header (WITH OIDS)"));
            }
            if flags & !0xFFFF & !(1 << 16) != 0 {
                return Err(SqlError::new(
                    SqlState::BAD_COPY_FILE_FORMAT,
                    "unrecognized critical flags in COPY file header",
                ));
            }
            let ext = i32::from_be_bytes(buf[15..19].try_into().expect("4 bytes"));
            if ext < 0 {
                return Err(SqlError::new(SqlState::BAD_COPY_FILE_FORMAT, "invalid COPY file header (missing length)"));
            }
            if buf.len() < 19 + ext as usize {
                return Ok(0);
            }
            pos = 19 + ext as usize;
            copy.progress.header_done = true;
        }
        loop {
            // One tuple: int16 field count, then (int32 length, bytes) each.
            let Some(count) = buf.get(pos..pos + 2) else { return Ok(pos) };
            let count = i16::from_be_bytes([count[0], count[1]]);
            copy.progress.lines += 1;
            if count == -1 {
                copy.done = true;
                return Ok(pos + 2);
            }
            if count as usize != copy.targets.len() || count < 0 {
                return Err(bad_copy(copy, &format!("row field count is {count}, expected {}", copy.targets.len())));
            }
            let mut p = pos + 2;
            let mut fields = Vec::with_capacity(count as usize);
            for _ in 0..count {
                let Some(len) = buf.get(p..p + 4) else { return Ok(pos) };
                let len = i32::from_be_bytes(len.try_into().expect("4 bytes"));
                p += 4;
                if len < -1 {
                    return Err(bad_copy(copy, "invalid field size"));
                }
                if len == -1 {
                    fields.push(None);
                    continue;
                }
                let Some(bytes) = buf.get(p..p + len as usize) else { return Ok(pos) };
                fields.push(Some(bytes));
                p += len as usize;
            }
            pos = p;
            let mut row = vec![Value::Null; copy.types.len()];
            for (i, (f, &t)) in fields.iter().zip(&copy.targets).enumerate() {
                if let Some(bytes) = f {
                    let ty = copy.sql_types[t];
                    let d = recv_datum(ty, bytes, i).map_err(|mut e| {
                        if e.code == SqlState::PROTOCOL_VIOLATION {
                            e = bad_copy(copy, "insufficient data left in message");
                        }
                        e
                    })?;
                    row[t] = d.to_engine(copy.types[t])?;
                }
            }
            self.copy_row(copy, row)?;
        }
    }

    fn copy_row(&mut self, copy: &mut CopyIn, row: Vec<Value>) -> Result<(), SqlError> {
        copy.batch.push(row);
        if copy.batch.len() >= COPY_BATCH {
            self.flush_copy(copy)?;
        }
        Ok(())
    }

    pub(crate) fn flush_copy(&mut self, copy: &mut CopyIn) -> Result<(), SqlError> {
        plan::check_cancel(&self.ctx)?;
        let rows = std::mem::take(&mut copy.batch);
        if rows.is_empty() {
            return Ok(());
        }
        if let Some((_, loaded)) = &mut copy.fk_child {
            loaded.extend(rows.iter().cloned());
        }
        let n = self.es.insert_many(&copy.table, rows).map_err(SqlError::from);
        let n = n?;
        copy.count += n;
        Ok(())
    }

    /// Ends a COPY FROM STDIN (CopyDone): the tag `COPY n`.
    pub fn copy_done(&mut self, mut copy: CopyIn) -> Result<String, SqlError> {
        self.ctx.notices.clear();
        if !copy.partial.is_empty() && !copy.done {
            let mut rest = std::mem::take(&mut copy.partial);
            if copy.options.format == CopyFormat::Binary {
                return Err(bad_copy(&copy, "unexpected EOF in COPY data"));
            }
            rest.push(b'\n');
            self.copy_data(&mut copy, &rest)?;
        }
        let mut done = self.flush_copy(&mut copy);
        if let (Ok(()), Some((id, inserted))) = (&done, copy.fk_child.take()) {
            let written = crate::fk::Written { inserted, ..Default::default() };
            done = crate::fk::after_statement(&mut self.run(&[], true), id, &written);
        }
        if done.is_err() {
            self.statement_failed();
        } else if copy.own_block {
            done = self.end_implicit();
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
