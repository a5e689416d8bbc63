//! Simulated power loss: a [`StorageIo`] that runs the real calls of
//! [`OsIo`] and remembers, for every file, what its last `fsync` made
//! durable, so that a test can cut the power at any moment and leave on
//! disk only what a real machine would keep.
//!
//! # The model
//!
//! * A write, an extension, or a truncation of a file is kept in the
//!   file's **undo list** (the bytes it replaced, and the length before)
//!   until the next [`StorageIo::sync`]/[`StorageIo::sync_data`] of that
//!   file makes it durable and clears the list.
//! * [`PowerLossIo::cut_power`] stops the world: from then on every call
//!   that changes a file, or syncs one, fails with `EIO`, as the calls of a
//!   machine without power never return.
//! * Once the process that used the files is gone (its engine dropped: a
//!   machine without power runs nothing), [`PowerLossIo::lose_unsynced`]
//!   takes back, file by file, every change since the file's last sync
//!   (newest first) and sets the file's length back, so each file holds
//!   exactly its last synced state.
//! * With `tear`, the last page written before the cut is **torn**: its
//!   first half keeps the new bytes, the rest the old ones (a disk writes a
//!   page in sectors, and the power can fail between them).
//! * Directory entries (creating and removing files) are taken as durable
//!   at once; a created file that was never synced is left empty.
//!
//! What the engine must survive is then what PostgreSQL survives: the WAL
//! up to its last `fdatasync`, data files as of their last `fsync`, and a
//! torn page that a full-page image in the WAL repairs.
//!
//! ```
//! use std::sync::Arc;
//! use turnstile_storage::io::StorageIo;
//! use turnstile_storage::power_loss::PowerLossIo;
//! let dir = std::env::temp_dir().join(format!("tt-power-doc-{}", std::process::id()));
//! let io = PowerLossIo::new();
//! io.create_dir_all(&dir).unwrap();
//! let f = io.open(&dir.join("f"), true).unwrap();
//! io.write_at(&f, &[b"durable"], 0).unwrap();
//! io.sync(&f).unwrap();
//! io.write_at(&f, &[b"LOST!!!"], 0).unwrap();
//! io.cut_power();
//! io.lose_unsynced(false);
//! assert_eq!(std::fs::read(dir.join("f")).unwrap(), b"durable");
//! assert!(io.write_at(&f, &[b"x"], 0).is_err(), "no power: nothing is written");
//! std::fs::remove_dir_all(&dir).unwrap();
//! ```

use crate::io::{OsIo, StorageIo};
use std::collections::hash_map::{Entry, HashMap};
use std::fs::File;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::{PoisonError, RwLock};

/// The bytes a torn page keeps of its new contents.
pub const TORN_BYTES: usize = 4096;

/// One file's changes since its last sync.
#[derive(Debug)]
struct FileLog {
    /// A handle of our own (the storage manager may close its one).
    file: File,
    /// The length the last sync made durable.
    synced_len: u64,
    /// `(offset, bytes replaced)`, oldest first.
    undo: Vec<(u64, Vec<u8>)>,
}

#[derive(Debug, Default)]
struct State {
    cut: bool,
    files: HashMap<(u64, u64), FileLog>,
    /// The newest page written: file, offset and its new first bytes.
    last_page: Option<((u64, u64), u64, Vec<u8>)>,
}

/// [`OsIo`] that can lose what was not synced; see the module docs.
#[derive(Debug, Default)]
pub struct PowerLossIo {
    inner: OsIo,
    state: RwLock<State>,
}

fn key(file: &File) -> io::Result<(u64, u64)> {
    let m = file.metadata()?;
    Ok((m.dev(), m.ino()))
}

fn no_power() -> io::Error {
    io::Error::from_raw_os_error(5) // EIO
}

impl PowerLossIo {
    /// Power on, nothing written yet.
    pub fn new() -> PowerLossIo {
        PowerLossIo::default()
    }

    /// Whether [`PowerLossIo::cut_power`] has run.
    pub fn is_cut(&self) -> bool {
        self.state.read().unwrap_or_else(PoisonError::into_inner).cut
    }

    /// Runs `change` on `file` after keeping what it replaces in
    /// `[offset, offset + len)`, or fails with `EIO` once the power is cut.
    fn changing(&self, file: &File, offset: u64, len: u64, change: impl FnOnce() -> io::Result<()>) -> io::Result<()> {
        let mut st = self.state.write().unwrap_or_else(PoisonError::into_inner);
        if st.cut {
            return Err(no_power());
        }
        let k = key(file)?;
        let cur_len = self.inner.file_len(file)?;
        let log = match st.files.entry(k) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(FileLog { file: file.try_clone()?, synced_len: cur_len, undo: Vec::new() }),
        };
        let keep = cur_len.saturating_sub(offset).min(len);
        if keep > 0 {
            let mut old = vec![0u8; keep as usize];
            let n = self.inner.read_at(file, &mut old, offset)?;
            old.truncate(n);
            log.undo.push((offset, old));
        }
        change()
    }

    /// Cuts the power: every later change or sync fails with `EIO`.
    pub fn cut_power(&self) {
        self.state.write().unwrap_or_else(PoisonError::into_inner).cut = true;
    }

    /// After [`PowerLossIo::cut_power`], and once nothing uses the files
    /// any more: every file goes back to what its last sync made durable
    /// (the last page written torn in two if `tear`). Does nothing before
    /// the cut; a second call finds nothing left to take back.
    pub fn lose_unsynced(&self, tear: bool) {
        let mut st = self.state.write().unwrap_or_else(PoisonError::into_inner);
        if !st.cut {
            return;
        }
        let torn = if tear { st.last_page.take() } else { None };
        for (k, log) in st.files.drain() {
            for (offset, old) in log.undo.iter().rev() {
                let _ = self.inner.write_at(&log.file, &[old], *offset);
            }
            let _ = self.inner.set_len(&log.file, log.synced_len);
            if let Some((tk, offset, new)) = &torn {
                if *tk == k && offset + (new.len() as u64) <= log.synced_len {
                    let _ = self.inner.write_at(&log.file, &[new], *offset);
                }
            }
        }
    }
}

impl StorageIo for PowerLossIo {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.inner.create_dir_all(path)
    }

    fn open(&self, path: &Path, create: bool) -> io::Result<File> {
        if create && self.is_cut() {
            return Err(no_power());
        }
        self.inner.open(path, create)
    }

    fn file_len(&self, file: &File) -> io::Result<u64> {
        self.inner.file_len(file)
    }

    fn read_at(&self, file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        self.inner.read_at(file, buf, offset)
    }

    fn write_at(&self, file: &File, bufs: &[&[u8]], offset: u64) -> io::Result<()> {
        let len: u64 = bufs.iter().map(|b| b.len() as u64).sum();
        self.changing(file, offset, len, || self.inner.write_at(file, bufs, offset))?;
        // The newest page written, for a tear at the cut (whole pages only).
        let last = bufs.last().filter(|b| b.len() > TORN_BYTES);
        if let (Some(b), Ok(k)) = (last, key(file)) {
            let at = offset + len - b.len() as u64;
            let mut st = self.state.write().unwrap_or_else(PoisonError::into_inner);
            st.last_page = Some((k, at, b[..TORN_BYTES].to_vec()));
        }
        Ok(())
    }

    fn allocate(&self, file: &File, offset: u64, len: u64) -> io::Result<()> {
        self.changing(file, offset, len, || self.inner.allocate(file, offset, len))
    }

    fn write_zeros(&self, file: &File, offset: u64, len: u64) -> io::Result<()> {
        self.changing(file, offset, len, || self.inner.write_zeros(file, offset, len))
    }

    fn set_len(&self, file: &File, len: u64) -> io::Result<()> {
        self.changing(file, len, u64::MAX - len, || self.inner.set_len(file, len))
    }

    fn sync(&self, file: &File) -> io::Result<()> {
        self.synced(file, || self.inner.sync(file))
    }

    fn sync_data(&self, file: &File) -> io::Result<()> {
        self.synced(file, || self.inner.sync_data(file))
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        if self.is_cut() {
            return Err(no_power());
        }
        self.inner.remove(path)
    }
}

impl PowerLossIo {
    /// Runs the sync `call`; on success the file's changes are durable.
    fn synced(&self, file: &File, call: impl FnOnce() -> io::Result<()>) -> io::Result<()> {
        let mut st = self.state.write().unwrap_or_else(PoisonError::into_inner);
        if st.cut {
            return Err(no_power());
        }
        call()?;
        let k = key(file)?;
        if let Some(log) = st.files.get_mut(&k) {
            log.undo.clear();
            log.synced_len = self.inner.file_len(file)?;
        }
        if st.last_page.as_ref().is_some_and(|(tk, _, _)| *tk == k) {
            st.last_page = None;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("tt-power-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn unsynced_writes_and_extensions_are_lost_synced_ones_kept() {
        let d = dir("lost");
        let io = PowerLossIo::new();
        let f = io.open(&d.join("a"), true).unwrap();
        io.write_zeros(&f, 0, 8192).unwrap();
        io.write_at(&f, &[&[1u8; 8192]], 0).unwrap();
        io.sync(&f).unwrap();
        io.write_at(&f, &[&[2u8; 8192]], 0).unwrap();
        io.write_zeros(&f, 8192, 8192).unwrap();
        io.write_at(&f, &[&[3u8; 8192]], 8192).unwrap();
        let g = io.open(&d.join("b"), true).unwrap();
        io.write_at(&g, &[b"never synced"], 0).unwrap();
        io.cut_power();
        io.lose_unsynced(false);
        assert_eq!(std::fs::read(d.join("a")).unwrap(), vec![1u8; 8192]);
        assert_eq!(std::fs::read(d.join("b")).unwrap(), b"");
        assert!(io.sync(&f).is_err() && io.write_zeros(&f, 0, 1).is_err() && io.set_len(&f, 0).is_err());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn an_unsynced_truncation_is_taken_back() {
        let d = dir("trunc");
        let io = PowerLossIo::new();
        let f = io.open(&d.join("a"), true).unwrap();
        io.write_at(&f, &[&[7u8; 100]], 0).unwrap();
        io.sync_data(&f).unwrap();
        io.set_len(&f, 10).unwrap();
        io.cut_power();
        io.lose_unsynced(false);
        assert_eq!(std::fs::read(d.join("a")).unwrap(), vec![7u8; 100]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn the_last_page_is_torn_in_two() {
        let d = dir("torn");
        let io = PowerLossIo::new();
        let f = io.open(&d.join("a"), true).unwrap();
        io.write_at(&f, &[&[1u8; 8192], &[1u8; 8192]], 0).unwrap();
        io.sync(&f).unwrap();
        io.write_at(&f, &[&[2u8; 8192]], 8192).unwrap();
        io.cut_power();
        io.lose_unsynced(true);
        let got = std::fs::read(d.join("a")).unwrap();
        assert_eq!(&got[..8192], &[1u8; 8192][..]);
        assert_eq!(&got[8192..8192 + TORN_BYTES], &[2u8; TORN_BYTES][..], "the first half is new");
        assert_eq!(&got[8192 + TORN_BYTES..], &[1u8; 8192 - TORN_BYTES][..], "the rest is old");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
