//! The I/O seam: every system call of the storage manager goes through a
//! [`StorageIo`], so tests inject faults into the real code path (the redb
//! pattern) by wrapping [`OsIo`] in a [`crate::fault::FaultyIo`].
//!
//! Files are real `std::fs::File`s in every implementation; only the
//! operations on them are interposed.

use std::fs::{File, OpenOptions};
use std::io::{self, IoSlice};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;

/// The most buffers one `pwritev` call takes (Linux's `IOV_MAX`).
pub const IOV_MAX: usize = 1024;

/// File operations the storage manager needs.
pub trait StorageIo: Send + Sync + std::fmt::Debug + 'static {
    /// Creates `path` and its parents with mode 0700.
    fn create_dir_all(&self, path: &Path) -> io::Result<()>;
    /// Opens `path` for reading and writing, creating it (mode 0600) if
    /// `create`.
    fn open(&self, path: &Path, create: bool) -> io::Result<File>;
    /// The file's length in bytes.
    fn file_len(&self, file: &File) -> io::Result<u64>;
    /// Reads into `buf` at `offset`; returns the bytes read, fewer than
    /// `buf.len()` only at end of file.
    fn read_at(&self, file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize>;
    /// Writes all of `bufs`, back to back, at `offset` (`pwritev`).
    fn write_at(&self, file: &File, bufs: &[&[u8]], offset: u64) -> io::Result<()>;
    /// Allocates `len` bytes at `offset`, growing the file (`fallocate`
    /// mode 0). `Unsupported` when the file system cannot.
    fn allocate(&self, file: &File, offset: u64, len: u64) -> io::Result<()>;
    /// Grows the file by writing `len` bytes of zeros at `offset` with
    /// `pwritev` of zero pages (the fallback of [`StorageIo::allocate`], and
    /// the way small extensions are done).
    fn write_zeros(&self, file: &File, offset: u64, len: u64) -> io::Result<()>;
    /// Sets the file's length.
    fn set_len(&self, file: &File, len: u64) -> io::Result<()>;
    /// Flushes the file's data and metadata (`fsync`).
    fn sync(&self, file: &File) -> io::Result<()>;
    /// Flushes the file's data, and its metadata only where reading the
    /// data needs it (`fdatasync`: the write-ahead log's preallocated
    /// segments). Defaults to [`StorageIo::sync`].
    fn sync_data(&self, file: &File) -> io::Result<()> {
        self.sync(file)
    }
    /// Removes the file.
    fn remove(&self, path: &Path) -> io::Result<()>;
}

/// The operating system's file calls.
#[derive(Debug, Default, Clone, Copy)]
pub struct OsIo;

fn from_errno(e: rustix::io::Errno) -> io::Error {
    io::Error::from_raw_os_error(e.raw_os_error())
}

impl StorageIo for OsIo {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(path)
    }

    fn open(&self, path: &Path, create: bool) -> io::Result<File> {
        OpenOptions::new().read(true).write(true).create(create).mode(0o600).open(path)
    }

    fn file_len(&self, file: &File) -> io::Result<u64> {
        Ok(file.metadata()?.len())
    }

    fn read_at(&self, file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            match rustix::io::pread(file, &mut buf[done..], offset + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(from_errno(e)),
            }
        }
        Ok(done)
    }

    fn write_at(&self, file: &File, bufs: &[&[u8]], offset: u64) -> io::Result<()> {
        let mut offset = offset;
        for chunk in bufs.chunks(IOV_MAX) {
            // Skip the parts a short write already wrote.
            let (mut first, mut skip) = (0usize, 0usize);
            while first < chunk.len() {
                let slices: Vec<IoSlice<'_>> = std::iter::once(IoSlice::new(&chunk[first][skip..]))
                    .chain(chunk[first + 1..].iter().map(|b| IoSlice::new(b)))
                    .collect();
                let n = match rustix::io::pwritev(file, &slices, offset) {
                    Ok(0) => return Err(io::Error::new(io::ErrorKind::WriteZero, "pwritev wrote nothing")),
                    Ok(n) => n,
                    Err(rustix::io::Errno::INTR) => continue,
                    Err(e) => return Err(from_errno(e)),
                };
                offset += n as u64;
                let mut left = n;
                while first < chunk.len() && left >= chunk[first].len() - skip {
                    left -= chunk[first].len() - skip;
                    first += 1;
                    skip = 0;
                }
                skip += left;
            }
        }
        Ok(())
    }

    fn allocate(&self, file: &File, offset: u64, len: u64) -> io::Result<()> {
        loop {
            match rustix::fs::fallocate(file, rustix::fs::FallocateFlags::empty(), offset, len) {
                Ok(()) => return Ok(()),
                Err(rustix::io::Errno::INTR) => continue,
                Err(rustix::io::Errno::OPNOTSUPP | rustix::io::Errno::NOSYS) => {
                    return Err(io::Error::new(io::ErrorKind::Unsupported, "fallocate is not supported here"))
                }
                Err(e) => return Err(from_errno(e)),
            }
        }
    }

    fn write_zeros(&self, file: &File, offset: u64, len: u64) -> io::Result<()> {
        static ZEROS: [u8; 8192] = [0; 8192];
        let mut bufs: Vec<&[u8]> = Vec::with_capacity((len as usize).div_ceil(ZEROS.len()));
        let mut left = len as usize;
        while left > 0 {
            let n = left.min(ZEROS.len());
            bufs.push(&ZEROS[..n]);
            left -= n;
        }
        self.write_at(file, &bufs, offset)
    }

    fn set_len(&self, file: &File, len: u64) -> io::Result<()> {
        file.set_len(len)
    }

    fn sync(&self, file: &File) -> io::Result<()> {
        file.sync_all()
    }

    fn sync_data(&self, file: &File) -> io::Result<()> {
        file.sync_data()
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pwritev_writes_every_slice_in_order() {
        let dir = std::env::temp_dir().join(format!("turnstile-io-{}", std::process::id()));
        OsIo.create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        let f = OsIo.open(&path, true).unwrap();
        let bufs: Vec<Vec<u8>> = (0..3000u32).map(|i| vec![(i % 251) as u8; 3]).collect();
        let refs: Vec<&[u8]> = bufs.iter().map(|b| &b[..]).collect();
        OsIo.write_at(&f, &refs, 10).unwrap();
        let mut back = vec![0u8; 9000];
        assert_eq!(OsIo.read_at(&f, &mut back, 10).unwrap(), 9000);
        assert!(back.chunks(3).enumerate().all(|(i, c)| c == [(i % 251) as u8; 3]));
        assert_eq!(OsIo.read_at(&f, &mut back, 9005).unwrap(), 5);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
