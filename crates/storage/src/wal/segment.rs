//! [`SegmentWriter`]: writes ranges of the WAL stream into segment files
//! and syncs them; plus preparing the directory at open and removing old
//! segments. Only one thread writes at a time (the `WALWrite` lock's
//! holder under `classic`, the WAL writer under `scalable`).
//!
//! A new segment is created at its full size (`fallocate`, else zeros)
//! and the directory is synced, so a later `fdatasync` of it need not
//! update metadata and the file survives a crash. A write that finishes a
//! segment syncs it before the next segment is opened, as PostgreSQL's
//! `XLogWrite` does, so one `fdatasync` of the current file covers the
//! whole stream below it.

use super::lsn::{parse_segment_file_name, segment_file_name};
use super::stats::WalCounters;
use super::{Lsn, WalError};
use crate::error::{FileError, FileOp};
use crate::io::StorageIo;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use turnstile_sync::activity::report_wait;
use turnstile_sync::{IoEvent, WaitEvent};

/// The writer's state.
#[derive(Debug)]
pub struct SegmentWriter {
    dir: PathBuf,
    io: Arc<dyn StorageIo>,
    segment_size: u64,
    fsync: bool,
    current: Option<(u64, File)>,
    /// The bytes being written, staged from the ring.
    pub(crate) buf: Vec<u8>,
}

fn file_err(path: &Path, op: FileOp, e: std::io::Error) -> WalError {
    WalError::File(FileError::from_io(path, op, e))
}

impl SegmentWriter {
    /// A writer of segments of `segment_size` bytes in `dir`.
    pub fn new(dir: &Path, io: Arc<dyn StorageIo>, segment_size: u64, fsync: bool) -> SegmentWriter {
        SegmentWriter { dir: dir.to_path_buf(), io, segment_size, fsync, current: None, buf: Vec::new() }
    }

    fn path(&self, segno: u64) -> PathBuf {
        self.dir.join(segment_file_name(segno, self.segment_size))
    }

    /// Opens segment `segno`, creating it at full size if it is missing.
    fn open_segment(&mut self, segno: u64) -> Result<&File, WalError> {
        if self.current.as_ref().is_none_or(|(s, _)| *s != segno) {
            let path = self.path(segno);
            let file = match self.io.open(&path, false) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => self.create_segment(&path)?,
                Err(e) => return Err(file_err(&path, FileOp::Open, e)),
            };
            self.current = Some((segno, file));
        }
        Ok(&self.current.as_ref().expect("just opened").1)
    }

    fn create_segment(&self, path: &Path) -> Result<File, WalError> {
        let file = self.io.open(path, true).map_err(|e| file_err(path, FileOp::Open, e))?;
        match self.io.allocate(&file, 0, self.segment_size) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Unsupported => {
                self.io.write_zeros(&file, 0, self.segment_size).map_err(|e| file_err(path, FileOp::Extend, e))?
            }
            Err(e) => return Err(file_err(path, FileOp::Extend, e)),
        }
        if self.fsync {
            self.io.sync(&file).map_err(|e| file_err(path, FileOp::Sync, e))?;
            sync_dir(&*self.io, &self.dir)?;
        }
        Ok(file)
    }

    /// Writes `self.buf`, which holds the stream from `from`, into the
    /// segments; a finished segment is synced before the next is opened.
    pub fn write_buf(&mut self, from: Lsn, counters: &WalCounters) -> Result<(), WalError> {
        let buf = std::mem::take(&mut self.buf);
        let result = self.write_range(from, &buf, counters);
        self.buf = buf;
        result
    }

    fn write_range(&mut self, from: Lsn, bytes: &[u8], counters: &WalCounters) -> Result<(), WalError> {
        let mut pos = from.0;
        let mut rest = bytes;
        while !rest.is_empty() {
            let segno = pos / self.segment_size;
            let offset = pos % self.segment_size;
            let n = rest.len().min((self.segment_size - offset) as usize);
            let started = Instant::now();
            {
                let _wait = report_wait(WaitEvent::Io(IoEvent::WalWrite));
                let io = Arc::clone(&self.io);
                let file = self.open_segment(segno)?;
                io.write_at(file, &[&rest[..n]], offset).map_err(|e| file_err(&self.path(segno), FileOp::Write, e))?;
            }
            counters.count_write(started);
            pos += n as u64;
            rest = &rest[n..];
            if pos % self.segment_size == 0 {
                self.sync(counters)?;
                self.current = None;
            }
        }
        Ok(())
    }

    /// `fdatasync`s the current segment (nothing when `wal.fsync` is off).
    pub fn sync(&mut self, counters: &WalCounters) -> Result<(), WalError> {
        if !self.fsync {
            return Ok(());
        }
        let Some((segno, file)) = &self.current else { return Ok(()) };
        let started = Instant::now();
        {
            let _wait = report_wait(WaitEvent::Io(IoEvent::WalSync));
            self.io.sync_data(file).map_err(|e| file_err(&self.path(*segno), FileOp::Sync, e))?;
        }
        counters.count_sync(started);
        Ok(())
    }
}

fn sync_dir(io: &dyn StorageIo, dir: &Path) -> Result<(), WalError> {
    let d = File::open(dir).map_err(|e| file_err(dir, FileOp::Open, e))?;
    io.sync(&d).map_err(|e| file_err(dir, FileOp::Sync, e))
}

/// The segment numbers present in `dir`, in order.
pub fn list_segments(dir: &Path, segment_size: u64) -> Result<Vec<u64>, WalError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(file_err(dir, FileOp::Open, e)),
    };
    let mut segs: Vec<u64> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| parse_segment_file_name(e.file_name().to_str()?, segment_size))
        .collect();
    segs.sort_unstable();
    Ok(segs)
}

/// Makes `dir` ready to insert at `end`: segments after `end`'s are
/// removed and `end`'s segment is zeroed from `end` on, so that no byte of
/// an earlier run (a torn record, or records written past a lost one) can
/// be read after the records this run writes.
pub fn prepare_end(dir: &Path, io: &dyn StorageIo, segment_size: u64, end: Lsn, fsync: bool) -> Result<(), WalError> {
    io.create_dir_all(dir).map_err(|e| file_err(dir, FileOp::CreateDir, e))?;
    let end_seg = end.segment(segment_size);
    for segno in list_segments(dir, segment_size)? {
        if segno > end_seg {
            let path = dir.join(segment_file_name(segno, segment_size));
            io.remove(&path).map_err(|e| file_err(&path, FileOp::Remove, e))?;
        }
    }
    let path = dir.join(segment_file_name(end_seg, segment_size));
    let file = match io.open(&path, false) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(file_err(&path, FileOp::Open, e)),
    };
    let offset = end.segment_offset(segment_size);
    io.write_zeros(&file, offset, segment_size - offset).map_err(|e| file_err(&path, FileOp::Write, e))?;
    if fsync {
        io.sync(&file).map_err(|e| file_err(&path, FileOp::Sync, e))?;
    }
    Ok(())
}

/// Removes the segments wholly before `lsn`.
pub fn remove_before(dir: &Path, io: &dyn StorageIo, segment_size: u64, lsn: Lsn) -> Result<(), WalError> {
    for segno in list_segments(dir, segment_size)? {
        if segno < lsn.segment(segment_size) {
            let path = dir.join(segment_file_name(segno, segment_size));
            io.remove(&path).map_err(|e| file_err(&path, FileOp::Remove, e))?;
        }
    }
    Ok(())
}
