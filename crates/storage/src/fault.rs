//! Fault injection: a [`StorageIo`] that runs the real calls of [`OsIo`]
//! but makes chosen ones fail, so tests drive ENOSPC, EIO and EMFILE
//! through the real storage-manager and buffer-pool code.
//!
//! ```
//! use std::sync::Arc;
//! use turnstile_storage::fault::{FaultyIo, IoFault, IoOp};
//! let io = Arc::new(FaultyIo::new());
//! // The third extension fails with ENOSPC after allocating half its range.
//! io.inject(IoFault::new(IoOp::Extend, 3, IoFault::ENOSPC).partial());
//! ```

use crate::io::{OsIo, StorageIo};
use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::Mutex;
use turnstile_sync::sync::counter::{AtomicBool, AtomicU64, Ordering};

/// An operation a fault can target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IoOp {
    /// `open`.
    Open,
    /// `pread`.
    Read,
    /// `pwritev` of pages (not the zero-fill of an extension).
    Write,
    /// Growing a file: `fallocate`, or the zero `pwritev` of an extension
    /// (a fallback after `Unsupported` is not counted twice).
    Extend,
    /// `fsync` or `fdatasync`.
    Sync,
}

impl IoOp {
    const COUNT: usize = 5;
    fn index(self) -> usize {
        self as usize
    }
}

/// One planned failure: the `nth` call (1-based) of `op` fails with `errno`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoFault {
    /// The operation.
    pub op: IoOp,
    /// Which call of it, counting from 1 since the [`FaultyIo`] was made.
    pub nth: u64,
    /// The error number returned.
    pub errno: i32,
    /// Whether half of the work is done before failing (a short write or
    /// a partial allocation, as a real full disk produces).
    pub partial: bool,
}

impl IoFault {
    /// `ENOSPC`.
    pub const ENOSPC: i32 = 28;
    /// `EIO`.
    pub const EIO: i32 = 5;
    /// `EMFILE`.
    pub const EMFILE: i32 = 24;

    /// The `nth` call of `op` fails with `errno`, doing nothing.
    pub fn new(op: IoOp, nth: u64, errno: i32) -> IoFault {
        IoFault { op, nth, errno, partial: false }
    }

    /// Does half the work before failing.
    pub fn partial(mut self) -> IoFault {
        self.partial = true;
        self
    }
}

/// [`OsIo`] with planned failures.
#[derive(Debug, Default)]
pub struct FaultyIo {
    inner: OsIo,
    faults: Mutex<Vec<IoFault>>,
    calls: [AtomicU64; IoOp::COUNT],
    no_fallocate: AtomicBool,
}

impl FaultyIo {
    /// No faults planned yet.
    pub fn new() -> FaultyIo {
        FaultyIo::default()
    }

    /// Plans `fault`.
    pub fn inject(&self, fault: IoFault) {
        self.faults.lock().unwrap_or_else(|e| e.into_inner()).push(fault);
    }

    /// Makes `allocate` report `Unsupported`, as on a file system without
    /// `fallocate`, so the zero-write fallback runs.
    pub fn disable_fallocate(&self) {
        self.no_fallocate.store(true, Ordering::Relaxed);
    }

    /// Calls of `op` made so far.
    pub fn calls(&self, op: IoOp) -> u64 {
        self.calls[op.index()].load(Ordering::Relaxed)
    }

    /// Counts a call of `op` and returns the fault planned for it, if any.
    fn check(&self, op: IoOp) -> Option<IoFault> {
        let n = self.calls[op.index()].fetch_add(1, Ordering::Relaxed) + 1;
        let mut faults = self.faults.lock().unwrap_or_else(|e| e.into_inner());
        let at = faults.iter().position(|f| f.op == op && f.nth == n)?;
        Some(faults.swap_remove(at))
    }
}

impl StorageIo for FaultyIo {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.inner.create_dir_all(path)
    }

    fn open(&self, path: &Path, create: bool) -> io::Result<File> {
        if let Some(f) = self.check(IoOp::Open) {
            return Err(io::Error::from_raw_os_error(f.errno));
        }
        self.inner.open(path, create)
    }

    fn file_len(&self, file: &File) -> io::Result<u64> {
        self.inner.file_len(file)
    }

    fn read_at(&self, file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        if let Some(f) = self.check(IoOp::Read) {
            return Err(io::Error::from_raw_os_error(f.errno));
        }
        self.inner.read_at(file, buf, offset)
    }

    fn write_at(&self, file: &File, bufs: &[&[u8]], offset: u64) -> io::Result<()> {
        if let Some(f) = self.check(IoOp::Write) {
            if f.partial && !bufs.is_empty() {
                let half = &bufs[0][..bufs[0].len() / 2];
                self.inner.write_at(file, &[half], offset)?;
            }
            return Err(io::Error::from_raw_os_error(f.errno));
        }
        self.inner.write_at(file, bufs, offset)
    }

    fn allocate(&self, file: &File, offset: u64, len: u64) -> io::Result<()> {
        if self.no_fallocate.load(Ordering::Relaxed) {
            return Err(io::Error::new(io::ErrorKind::Unsupported, "fallocate disabled by the test"));
        }
        if let Some(f) = self.check(IoOp::Extend) {
            if f.partial {
                let half = (len / 2).max(1);
                self.inner.allocate(file, offset, half)?;
            }
            return Err(io::Error::from_raw_os_error(f.errno));
        }
        self.inner.allocate(file, offset, len)
    }

    fn write_zeros(&self, file: &File, offset: u64, len: u64) -> io::Result<()> {
        if let Some(f) = self.check(IoOp::Extend) {
            if f.partial {
                let half = (len / 2).max(1);
                self.inner.write_zeros(file, offset, half)?;
            }
            return Err(io::Error::from_raw_os_error(f.errno));
        }
        self.inner.write_zeros(file, offset, len)
    }

    fn set_len(&self, file: &File, len: u64) -> io::Result<()> {
        self.inner.set_len(file, len)
    }

    fn sync(&self, file: &File) -> io::Result<()> {
        if let Some(f) = self.check(IoOp::Sync) {
            return Err(io::Error::from_raw_os_error(f.errno));
        }
        self.inner.sync(file)
    }

    fn sync_data(&self, file: &File) -> io::Result<()> {
        if let Some(f) = self.check(IoOp::Sync) {
            return Err(io::Error::from_raw_os_error(f.errno));
        }
        self.inner.sync_data(file)
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        self.inner.remove(path)
    }
}
