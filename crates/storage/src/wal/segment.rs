//! [`SegmentWriter`]: writes ranges of the WAL stream into segment files
//! and syncs them; plus preparing the directory at open and removing old
//! segments. Only one thread writes at a time (the `WALWrite` lock's
//! holder under `classic`, the WAL writer under `scalable`).
//!
//! A new segment is created at its full size, filled with written zeros
//! (`wal.init_zero`, PostgreSQL's `wal_init_zero`), and the directory is
//! synced, so the file survives a crash and a later `fdatasync` of WAL
//! writes flushes their data only. `fallocate` would be cheaper to create
//! but leaves unwritten extents on ext4 and XFS: the first write into each
//! block converts one, a metadata change that the commit's `fdatasync`
//! then has to journal. A write that finishes a
//! segment syncs it before the next segment is opened, as PostgreSQL's
//! `XLogWrite` does, so one `fdatasync` of the current file covers the
//! whole stream below it.

use super::lsn::{parse_segment_file_name, segment_file_name};
use super::ring::Ring;
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
    /// Fill a new segment with written zeros (`wal.init_zero`).
    init_zero: bool,
    current: Option<(u64, File)>,
    /// The bytes being written, staged from the ring: at most
    /// [`WRITE_CHUNK_BYTES`].
    buf: Vec<u8>,
}

/// The most bytes staged from the ring per `write`. A longer range is
/// written in pieces of this size, so the staging buffer stays this small
/// however far behind the writer falls. Staging a whole range would grow
/// it towards the ring's size (`wal.buffers`) as the largest backlog so
/// far ratchets up: resident memory that creeps up for hours, which the
/// soak measures. A multiple of 8, as the ring's words are.
pub const WRITE_CHUNK_BYTES: u64 = 256 * 1024;

fn file_err(path: &Path, op: FileOp, e: std::io::Error) -> WalError {
    WalError::File(FileError::from_io(path, op, e))
}

impl SegmentWriter {
    /// A writer of segments of `segment_size` bytes in `dir`; a new
    /// segment is filled with written zeros when `init_zero` (PostgreSQL's
    /// `wal_init_zero`), else `fallocate`d.
    pub fn new(dir: &Path, io: Arc<dyn StorageIo>, segment_size: u64, fsync: bool, init_zero: bool) -> SegmentWriter {
        SegmentWriter { dir: dir.to_path_buf(), io, segment_size, fsync, init_zero, current: None, buf: Vec::new() }
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
        let allocated = if self.init_zero {
            Err(std::io::ErrorKind::Unsupported.into())
        } else {
            self.io.allocate(&file, 0, self.segment_size)
        };
        match allocated {
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

    /// Writes the stream's bytes `from..to`, which the ring holds (every
    /// inserter of the range has finished), into the segments: staged in
    /// pieces of at most [`WRITE_CHUNK_BYTES`].
    pub fn write_from_ring(&mut self, ring: &Ring, from: u64, to: u64, counters: &WalCounters) -> Result<(), WalError> {
        let mut buf = std::mem::take(&mut self.buf);
        let mut at = from;
        let mut result = Ok(());
        while at < to && result.is_ok() {
            let end = to.min(at + WRITE_CHUNK_BYTES);
            buf.clear();
            ring.load(at, end, &mut buf);
            result = self.write_range(Lsn(at), &buf, counters);
            at = end;
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::OsIo;

    #[test]
    fn a_range_longer_than_a_chunk_is_written_whole_through_a_small_buffer() {
        let dir = std::env::temp_dir().join(format!("turnstile-segment-chunks-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let segment_size = 4 * WRITE_CHUNK_BYTES;
        let ring_bytes = 8 * WRITE_CHUNK_BYTES;
        let ring = Ring::new(ring_bytes);
        // 2.5 chunks of distinct words from an offset that straddles a segment.
        let from = segment_size - WRITE_CHUNK_BYTES / 2;
        let to = from + 5 * WRITE_CHUNK_BYTES / 2;
        let bytes: Vec<u8> = (from / 8..to / 8).flat_map(|w| w.to_le_bytes()).collect();
        ring.store(from, &bytes);
        let mut w = SegmentWriter::new(&dir, Arc::new(OsIo), segment_size, false, true);
        w.write_from_ring(&ring, from, to, &WalCounters::default()).unwrap();
        assert!(w.buf.capacity() as u64 <= 2 * WRITE_CHUNK_BYTES, "staging grew to {}", w.buf.capacity());
        let read = |segno: u64| std::fs::read(dir.join(segment_file_name(segno, segment_size))).unwrap();
        let (first, second) = (read(0), read(1));
        let mut got = first[(from % segment_size) as usize..].to_vec();
        got.extend_from_slice(&second[..(to - segment_size) as usize]);
        assert_eq!(got, bytes);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
