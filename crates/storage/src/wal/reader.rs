//! [`WalReader`]: reads records in LSN order from a start position and
//! decides where the WAL ends (PostgreSQL's `039_end_of_wal.pl` cases).
//!
//! At position `p` the reader takes the 32-byte header:
//! * no segment file, or a file too short: **end of WAL**;
//! * length 0 (a zeroed tail, or a new segment): **end of WAL**;
//! * a length below 32 or above [`MAX_RECORD_BYTES`], or a stored LSN
//!   other than `p` (garbage, or a stale record of an earlier run):
//!   **end of WAL**;
//! * the payload runs past the data on disk: a truncated record, **end of
//!   WAL**;
//! * a CRC mismatch: if a record that validates fully starts right after
//!   it, the bad one is in the middle of the log: [`WalError::Corrupt`],
//!   naming the segment file and offset; otherwise it is the torn last
//!   record: **end of WAL**.
//!
//! [`WalReader::end_lsn`] is then where [`super::Wal::open`] should start.

use super::lsn::{segment_file_name, Lsn};
use super::record::{align, crc_ok, RecordHeader, HEADER_BYTES, MAX_RECORD_BYTES};
use super::WalError;
use crate::error::{FileError, FileOp};
use crate::io::StorageIo;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Bytes read from a segment at a time.
const CHUNK_BYTES: u64 = 1 << 20;
/// The segment size assumed when no segment file says otherwise.
pub const DEFAULT_SEGMENT_BYTES: u64 = 16 << 20;

/// One record read: start, end (start of the next), header, payload.
pub type ReadRecord = (Lsn, Lsn, RecordHeader, Vec<u8>);

/// A sequential reader of the WAL.
#[derive(Debug)]
pub struct WalReader {
    dir: PathBuf,
    io: Arc<dyn StorageIo>,
    segment_size: u64,
    pos: u64,
    ended: bool,
    file: Option<(u64, Option<File>, u64)>,
    chunk_start: u64,
    chunk: Vec<u8>,
}

impl WalReader {
    /// Reads from `start`; the segment size is taken from the files
    /// (segments are created at full size), else 16 MiB.
    pub fn new(dir: &Path, io: Arc<dyn StorageIo>, start: Lsn) -> Result<WalReader, WalError> {
        let size = segment_size_of(dir, &*io)?;
        Ok(WalReader::with_segment_size(dir, io, start, size))
    }

    /// Reads from `start` in segments of `segment_size` bytes.
    pub fn with_segment_size(dir: &Path, io: Arc<dyn StorageIo>, start: Lsn, segment_size: u64) -> WalReader {
        WalReader {
            dir: dir.to_path_buf(),
            io,
            segment_size,
            pos: start.0,
            ended: false,
            file: None,
            chunk_start: 0,
            chunk: Vec::new(),
        }
    }

    /// The position after the last record read: after `next` returned
    /// `None`, the end of WAL.
    pub fn end_lsn(&self) -> Lsn {
        Lsn(self.pos)
    }

    /// The next record, `None` at the end of WAL.
    #[allow(clippy::should_implement_trait)] // fallible: not an Iterator
    pub fn next(&mut self) -> Result<Option<ReadRecord>, WalError> {
        if self.ended {
            return Ok(None);
        }
        let at = self.pos;
        match self.try_record(at)? {
            Ok((h, payload)) => {
                let end = at + h.aligned_len();
                self.pos = end;
                Ok(Some((Lsn(at), Lsn(end), h, payload)))
            }
            Err(Bad::End) => {
                self.ended = true;
                Ok(None)
            }
            Err(Bad::Crc(h)) => {
                let next = at + h.aligned_len();
                if self.try_record(next)?.is_ok() {
                    return Err(WalError::Corrupt {
                        lsn: Lsn(at),
                        file: segment_file_name(at / self.segment_size, self.segment_size),
                        offset: at % self.segment_size,
                        reason: "incorrect resource manager data checksum",
                        next: Lsn(next),
                    });
                }
                self.ended = true;
                Ok(None)
            }
        }
    }

    /// The record at `at`, or why there is none.
    fn try_record(&mut self, at: u64) -> Result<Result<(RecordHeader, Vec<u8>), Bad>, WalError> {
        let Some(head) = self.read(at, HEADER_BYTES as u64)? else { return Ok(Err(Bad::End)) };
        let h = RecordHeader::decode(&head);
        let len = u64::from(h.total_len);
        if len < HEADER_BYTES as u64 || len > MAX_RECORD_BYTES || h.lsn != Lsn(at) {
            return Ok(Err(Bad::End));
        }
        let Some(payload) = self.read(at + HEADER_BYTES as u64, len - HEADER_BYTES as u64)? else {
            return Ok(Err(Bad::End));
        };
        if !crc_ok(&head, &payload) {
            return Ok(Err(Bad::Crc(h)));
        }
        debug_assert_eq!(align(len), h.aligned_len());
        Ok(Ok((h, payload)))
    }

    /// `n` bytes of the stream at `at`, or `None` if the files end first.
    fn read(&mut self, at: u64, n: u64) -> Result<Option<Vec<u8>>, WalError> {
        let mut out = Vec::with_capacity(n as usize);
        let mut pos = at;
        while pos < at + n {
            if !(self.chunk_start..self.chunk_start + self.chunk.len() as u64).contains(&pos)
                && !self.load_chunk(pos)?
            {
                return Ok(None);
            }
            let from = (pos - self.chunk_start) as usize;
            let take = ((at + n - pos) as usize).min(self.chunk.len() - from);
            out.extend_from_slice(&self.chunk[from..from + take]);
            pos += take as u64;
        }
        Ok(Some(out))
    }

    /// Loads the chunk holding `pos`; `false` if no file has it.
    fn load_chunk(&mut self, pos: u64) -> Result<bool, WalError> {
        let segno = pos / self.segment_size;
        if self.file.as_ref().is_none_or(|(s, _, _)| *s != segno) {
            let path = self.dir.join(segment_file_name(segno, self.segment_size));
            let file = match self.io.open(&path, false) {
                Ok(f) => Some(f),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(WalError::File(FileError::from_io(&path, FileOp::Open, e))),
            };
            let len = match &file {
                Some(f) => {
                    self.io.file_len(f).map_err(|e| WalError::File(FileError::from_io(&path, FileOp::Read, e)))?
                }
                None => 0,
            };
            self.file = Some((segno, file, len.min(self.segment_size)));
        }
        let (_, Some(file), len) = self.file.as_ref().expect("just set") else { return Ok(false) };
        let offset = pos % self.segment_size;
        if offset >= *len {
            return Ok(false);
        }
        let want = CHUNK_BYTES.min(len - offset) as usize;
        self.chunk.resize(want, 0);
        let got = self.io.read_at(file, &mut self.chunk, offset).map_err(|e| {
            let path = self.dir.join(segment_file_name(segno, self.segment_size));
            WalError::File(FileError::from_io(&path, FileOp::Read, e))
        })?;
        self.chunk.truncate(got);
        self.chunk_start = pos;
        Ok(got > 0)
    }
}

enum Bad {
    End,
    Crc(RecordHeader),
}

/// The segment size the files in `dir` were made with: the largest
/// segment file's length that is a power of two of at least 1 MiB (they
/// are created at full size), else [`DEFAULT_SEGMENT_BYTES`].
fn segment_size_of(dir: &Path, io: &dyn StorageIo) -> Result<u64, WalError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(DEFAULT_SEGMENT_BYTES),
        Err(e) => return Err(WalError::File(FileError::from_io(dir, FileOp::Open, e))),
    };
    let mut best = None;
    for entry in entries.filter_map(|e| e.ok()) {
        let name = entry.file_name();
        let is_segment = name.len() == 24 && name.to_str().is_some_and(|n| n.bytes().all(|b| b.is_ascii_hexdigit()));
        let Ok(f) = io.open(&entry.path(), false) else { continue };
        let len = io.file_len(&f).unwrap_or(0);
        if is_segment && len.is_power_of_two() && len >= 1 << 20 {
            best = Some(best.unwrap_or(0).max(len));
        }
    }
    Ok(best.unwrap_or(DEFAULT_SEGMENT_BYTES))
}
