//! The storage manager (PostgreSQL's `smgr`/`md.c`): relation forks as
//! segment files under a data directory.
//!
//! # Files
//!
//! Block `b` of fork `f` of relation `r` in database `d` lives in
//! `<data>/base/<d>/<r><suffix(f)>[.<s>]` at byte `(b mod S) × 8192`, with
//! `s = b div S` (no suffix for `s = 0`) and `S` blocks per segment
//! (131072 = 1 GiB by default; a constructor parameter so tests can use
//! tiny segments). The data directory and database directories are
//! created with mode 0700.
//!
//! # What protects what
//!
//! | data | protected by |
//! |---|---|
//! | a fork's cached length `nblocks` | written only under the fork's `extend` mutex, read with `Acquire` |
//! | the bytes of blocks `< nblocks` | the buffer pool (one buffer per block, its content lock); the smgr itself does not lock them |
//! | open descriptors | the [`VfdCache`] |
//! | the per-fork state map | an `LwLock` (tranche `RelCache`), shared for lookups |
//!
//! # Invariants
//!
//! * `nblocks` = the number of blocks the files hold: every segment before
//!   the last is exactly `S` blocks long, and an extension publishes the new
//!   length only after the file system has it. On a failed extension the
//!   files are cut back to their previous length and `nblocks` is
//!   unchanged: the relation claims no block it does not have.
//! * Callers serialise extensions of one fork with the relation-extension
//!   lock; the fork's mutex makes `extend` safe even without it.

use crate::error::{FileError, FileOp, Result, StorageError};
use crate::io::{OsIo, StorageIo};
use crate::page::{PageBuf, PAGE_SIZE};
use crate::rel::{BlockNumber, BufferTag, Fork, RelFileId, MAX_BLOCKS};
use crate::store::PageStore;
use crate::sync::atomic::{AtomicU32, Ordering};
use crate::sync::Mutex;
// Trait objects and shared ownership of the smgr: loom's `Arc` cannot
// hold `dyn`, and no handshake lives in these reference counts.
use crate::vfd::{FdStats, VfdCache, VfdFile, VfdKey};
use hashbrown::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use turnstile_sync::activity::report_wait;
use turnstile_sync::{Config, IoEvent, LwLock, LwLockPolicy, Tranche, WaitEvent};

/// Blocks in a 1 GiB segment (PostgreSQL's `RELSEG_SIZE`).
pub const DEFAULT_SEGMENT_BLOCKS: u32 = (1 << 30) / PAGE_SIZE as u32;

/// Extensions of at least this many blocks use `fallocate`; smaller ones
/// write zero pages. Freund 2020 measured `posix_fallocate` of one 8 kB block
/// *slower* than a `pwrite` of it, and 32 blocks at once 20× faster
/// (PostgreSQL 16's `mdzeroextend` draws the line at 8).
pub const FALLOCATE_MIN_BLOCKS: u32 = 8;

/// How a [`Smgr`] is built.
#[derive(Clone, Debug)]
pub struct SmgrOptions {
    /// Blocks per segment file.
    pub segment_blocks: u32,
    /// Descriptors the vfd cache keeps open (`storage.max_open_files`).
    pub max_open_files: usize,
    /// Admission policy of the storage manager's `LwLock`s, the vfd
    /// cache's and the fork directory's (`lwlock.policy`).
    pub policy: LwLockPolicy,
}

impl SmgrOptions {
    /// 1 GiB segments, `config`'s `storage.max_open_files` and
    /// `lwlock.policy`.
    pub fn from_config(config: &Config) -> SmgrOptions {
        SmgrOptions {
            segment_blocks: DEFAULT_SEGMENT_BLOCKS,
            max_open_files: config.storage.max_open_files as usize,
            policy: config.lwlock.policy,
        }
    }
}

impl Default for SmgrOptions {
    fn default() -> Self {
        SmgrOptions::from_config(&Config::default())
    }
}

/// What the smgr keeps per relation fork.
#[derive(Debug)]
struct ForkState {
    /// The fork's length in blocks (see the invariants).
    nblocks: AtomicU32,
    /// Serialises extension and truncation of the fork.
    extend: Mutex<()>,
}

/// The storage manager. Shared by every backend (`Arc<Smgr>`).
#[derive(Debug)]
pub struct Smgr {
    dir: PathBuf,
    io: Arc<dyn StorageIo>,
    vfd: VfdCache,
    segment_blocks: u32,
    forks: LwLock<HashMap<(RelFileId, Fork), Arc<ForkState>>>,
}

impl Smgr {
    /// Opens (creating with mode 0700 if needed) the data directory `dir`
    /// with the operating system's I/O and `config`'s limits.
    pub fn open(dir: impl AsRef<Path>, config: &Config) -> Result<Arc<Smgr>> {
        Smgr::open_with(dir, SmgrOptions::from_config(config), Arc::new(OsIo))
    }

    /// Opens `dir` with explicit options and I/O (tests pass a
    /// [`crate::fault::FaultyIo`]).
    pub fn open_with(dir: impl AsRef<Path>, options: SmgrOptions, io: Arc<dyn StorageIo>) -> Result<Arc<Smgr>> {
        if options.segment_blocks == 0 {
            return Err(StorageError::Config("segment_blocks must be at least 1".into()));
        }
        let dir = dir.as_ref().to_path_buf();
        io.create_dir_all(&dir.join("base")).map_err(|e| FileError::from_io(&dir, FileOp::CreateDir, e))?;
        Ok(Arc::new(Smgr {
            vfd: VfdCache::new(Arc::clone(&io), options.max_open_files, options.policy),
            dir,
            io,
            segment_blocks: options.segment_blocks,
            forks: LwLock::new(Tranche::RelCache, options.policy, HashMap::new()),
        }))
    }

    /// The data directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Blocks per segment file.
    pub fn segment_blocks(&self) -> u32 {
        self.segment_blocks
    }

    /// The path of segment `segment` of `rel`'s `fork`.
    pub fn segment_path(&self, rel: RelFileId, fork: Fork, segment: u32) -> PathBuf {
        let name = if segment == 0 {
            format!("{}{}", rel.rel, fork.file_suffix())
        } else {
            format!("{}{}.{}", rel.rel, fork.file_suffix(), segment)
        };
        self.dir.join("base").join(rel.db.to_string()).join(name)
    }

    /// The path of the segment holding `block`.
    pub fn block_path(&self, rel: RelFileId, fork: Fork, block: BlockNumber) -> PathBuf {
        self.segment_path(rel, fork, block / self.segment_blocks)
    }

    /// The admission policy of the vfd cache's lock (`lwlock.policy`).
    pub fn vfd_policy(&self) -> LwLockPolicy {
        self.vfd.policy()
    }

    /// The vfd cache's counters (`fd_stats`).
    pub fn fd_stats(&self) -> FdStats {
        self.vfd.stats()
    }

    /// Creates `rel`'s `fork` (an empty first segment); existing is fine.
    pub fn create(&self, rel: RelFileId, fork: Fork) -> Result<()> {
        let db_dir = self.dir.join("base").join(rel.db.to_string());
        self.io.create_dir_all(&db_dir).map_err(|e| FileError::from_io(&db_dir, FileOp::CreateDir, e))?;
        self.segment(rel, fork, 0, true)?;
        self.fork_state(rel, fork)?;
        Ok(())
    }

    /// Whether `rel`'s `fork` has a first segment.
    pub fn exists(&self, rel: RelFileId, fork: Fork) -> Result<bool> {
        Ok(self.segment(rel, fork, 0, false)?.is_some())
    }

    /// The fork's length in blocks.
    pub fn nblocks(&self, rel: RelFileId, fork: Fork) -> Result<BlockNumber> {
        Ok(self.fork_state(rel, fork)?.nblocks.load(Ordering::Acquire))
    }

    /// The fork's length measured from its last segment's size (one
    /// `fstat`, PostgreSQL's `mdnblocks`); equals [`Smgr::nblocks`] while
    /// the invariants hold.
    pub fn nblocks_from_files(&self, rel: RelFileId, fork: Fork) -> Result<BlockNumber> {
        let cached = self.nblocks(rel, fork)?;
        let seg = cached / self.segment_blocks;
        let Some(file) = self.segment(rel, fork, seg, false)? else {
            return Ok(seg * self.segment_blocks);
        };
        let len = self.io.file_len(file.file()).map_err(|e| FileError::from_io(file.path(), FileOp::Open, e))?;
        let measured = seg * self.segment_blocks + (len / PAGE_SIZE as u64).min(u64::from(self.segment_blocks)) as u32;
        debug_assert_eq!(measured, cached, "{rel} {fork}: files and nblocks disagree");
        Ok(measured)
    }

    /// Reads block `block` into `page` (raw bytes: verification is the
    /// caller's, see [`crate::page::verify`]).
    pub fn read(&self, rel: RelFileId, fork: Fork, block: BlockNumber, page: &mut PageBuf) -> Result<()> {
        let nblocks = self.nblocks(rel, fork)?;
        if block >= nblocks {
            return Err(StorageError::BlockOutOfRange { rel, fork, block, nblocks });
        }
        let (seg, offset) = self.locate(block);
        let file = self.existing_segment(rel, fork, seg)?;
        let _wait = report_wait(WaitEvent::Io(IoEvent::DataFileRead));
        let n =
            self.io.read_at(file.file(), page, offset).map_err(|e| FileError::from_io(file.path(), FileOp::Read, e))?;
        if n != PAGE_SIZE {
            return Err(
                FileError::ShortRead { path: file.path().to_path_buf(), block, read: n, wanted: PAGE_SIZE }.into()
            );
        }
        Ok(())
    }

    /// Writes `page` over block `block`, which must exist.
    pub fn write(&self, rel: RelFileId, fork: Fork, block: BlockNumber, page: &PageBuf) -> Result<()> {
        self.write_run(rel, fork, block, &[page])
    }

    /// Writes `pages` over the consecutive existing blocks starting at
    /// `first` with as few `pwritev` calls as the segments allow.
    pub fn write_run(&self, rel: RelFileId, fork: Fork, first: BlockNumber, pages: &[&PageBuf]) -> Result<()> {
        let nblocks = self.nblocks(rel, fork)?;
        let end = u64::from(first) + pages.len() as u64;
        if end > u64::from(nblocks) {
            return Err(StorageError::BlockOutOfRange { rel, fork, block: (end - 1) as u32, nblocks });
        }
        let _wait = report_wait(WaitEvent::Io(IoEvent::DataFileWrite));
        let mut done = 0usize;
        while done < pages.len() {
            let block = first + done as u32;
            let (seg, offset) = self.locate(block);
            let in_seg = ((self.segment_blocks - block % self.segment_blocks) as usize).min(pages.len() - done);
            let file = self.existing_segment(rel, fork, seg)?;
            let bufs: Vec<&[u8]> = pages[done..done + in_seg].iter().map(|p| &p[..]).collect();
            self.io
                .write_at(file.file(), &bufs, offset)
                .map_err(|e| FileError::from_io(file.path(), FileOp::Write, e))?;
            done += in_seg;
        }
        Ok(())
    }

    /// Grows `rel`'s `fork` by `n` zero blocks and returns the first new
    /// block number. Uses `fallocate` for `n ≥ FALLOCATE_MIN_BLOCKS`,
    /// falling back to `pwritev` of zero pages where it is unsupported.
    /// On failure the fork is cut back to its old length and keeps it.
    pub fn extend(&self, rel: RelFileId, fork: Fork, n: u32) -> Result<BlockNumber> {
        let state = self.fork_state(rel, fork)?;
        let _serial = state.extend.lock().unwrap_or_else(|e| e.into_inner());
        let old = state.nblocks.load(Ordering::Acquire);
        if n == 0 {
            return Ok(old);
        }
        let new = u64::from(old) + u64::from(n);
        if new > u64::from(MAX_BLOCKS) {
            return Err(StorageError::RelationTooLarge { rel, fork, max: u64::from(MAX_BLOCKS) });
        }
        let new = new as u32;
        let _wait = report_wait(WaitEvent::Io(IoEvent::DataFileExtend));
        let mut block = old;
        let mut touched: Vec<(Arc<VfdFile>, u64)> = Vec::new();
        while block < new {
            let (seg, offset) = self.locate(block);
            let count = (self.segment_blocks - block % self.segment_blocks).min(new - block);
            let result = self.segment(rel, fork, seg, true).and_then(|file| {
                let file = file.expect("created on demand");
                touched.push((Arc::clone(&file), offset));
                self.grow(&file, offset, count)
            });
            if let Err(e) = result {
                self.undo_extension(&touched);
                return Err(e);
            }
            block += count;
        }
        state.nblocks.store(new, Ordering::Release);
        Ok(old)
    }

    /// Grows one segment by `count` blocks at byte `offset`.
    fn grow(&self, file: &VfdFile, offset: u64, count: u32) -> Result<()> {
        let len = u64::from(count) * PAGE_SIZE as u64;
        let err = |e| StorageError::from(FileError::from_io(file.path(), FileOp::Extend, e));
        if count >= FALLOCATE_MIN_BLOCKS {
            match self.io.allocate(file.file(), offset, len) {
                Ok(()) => return Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::Unsupported => {}
                Err(e) => return Err(err(e)),
            }
        }
        self.io.write_zeros(file.file(), offset, len).map_err(err)
    }

    /// Cuts every segment touched by a failed extension back to where the
    /// extension started in it. Best effort: if this fails too, the extra
    /// bytes are zeros past `nblocks`, which nothing reads and the next
    /// extension overwrites.
    fn undo_extension(&self, touched: &[(Arc<VfdFile>, u64)]) {
        for (file, offset) in touched {
            let _ = self.io.set_len(file.file(), *offset);
        }
    }

    /// Cuts `rel`'s `fork` to `nblocks` blocks (the buffer pool must have
    /// dropped its buffers past that first).
    pub fn truncate(&self, rel: RelFileId, fork: Fork, nblocks: BlockNumber) -> Result<()> {
        let state = self.fork_state(rel, fork)?;
        let _serial = state.extend.lock().unwrap_or_else(|e| e.into_inner());
        let old = state.nblocks.load(Ordering::Acquire);
        if nblocks >= old {
            return Ok(());
        }
        let _wait = report_wait(WaitEvent::Io(IoEvent::DataFileTruncate));
        // Publish the shorter length first: nobody may use the cut blocks.
        state.nblocks.store(nblocks, Ordering::Release);
        let last_seg = (old - 1) / self.segment_blocks;
        let keep_seg = nblocks / self.segment_blocks;
        for seg in (keep_seg..=last_seg).rev() {
            let Some(file) = self.segment(rel, fork, seg, false)? else { continue };
            let len = if seg == keep_seg { u64::from(nblocks % self.segment_blocks) * PAGE_SIZE as u64 } else { 0 };
            self.io.set_len(file.file(), len).map_err(|e| FileError::from_io(file.path(), FileOp::Truncate, e))?;
        }
        Ok(())
    }

    /// `fsync`s every segment of `rel`'s `fork`.
    pub fn sync(&self, rel: RelFileId, fork: Fork) -> Result<()> {
        let nblocks = self.nblocks(rel, fork)?;
        let _wait = report_wait(WaitEvent::Io(IoEvent::DataFileSync));
        for seg in 0..=nblocks.saturating_sub(1) / self.segment_blocks {
            if let Some(file) = self.segment(rel, fork, seg, false)? {
                self.io.sync(file.file()).map_err(|e| FileError::from_io(file.path(), FileOp::Sync, e))?;
            }
        }
        Ok(())
    }

    /// `fsync`s every fork this smgr has touched.
    pub fn sync_all(&self) -> Result<()> {
        let forks: Vec<(RelFileId, Fork)> = self.forks.lock_shared().keys().copied().collect();
        for (rel, fork) in forks {
            self.sync(rel, fork)?;
        }
        Ok(())
    }

    /// Removes every file of `rel` (all forks, all segments).
    pub fn remove(&self, rel: RelFileId) -> Result<()> {
        for fork in Fork::ALL {
            let last = self.nblocks(rel, fork)?.saturating_sub(1) / self.segment_blocks;
            self.vfd.forget(rel, fork, 0);
            self.forks.lock_exclusive().remove(&(rel, fork));
            for seg in 0..=last + 1 {
                let path = self.segment_path(rel, fork, seg);
                match self.io.remove(&path) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(FileError::from_io(&path, FileOp::Remove, e).into()),
                }
            }
        }
        Ok(())
    }

    /// `(segment, byte offset)` of `block`.
    fn locate(&self, block: BlockNumber) -> (u32, u64) {
        (block / self.segment_blocks, u64::from(block % self.segment_blocks) * PAGE_SIZE as u64)
    }

    fn segment(&self, rel: RelFileId, fork: Fork, segment: u32, create: bool) -> Result<Option<Arc<VfdFile>>> {
        let key = VfdKey { rel, fork, segment };
        Ok(self.vfd.get(key, || self.segment_path(rel, fork, segment), create)?)
    }

    /// A segment that must exist because `nblocks` says so.
    fn existing_segment(&self, rel: RelFileId, fork: Fork, segment: u32) -> Result<Arc<VfdFile>> {
        self.segment(rel, fork, segment, false)?.ok_or_else(|| {
            let path = self.segment_path(rel, fork, segment);
            FileError::from_io(&path, FileOp::Open, std::io::Error::from(std::io::ErrorKind::NotFound)).into()
        })
    }

    /// The fork's state, measuring its length from the files on first use.
    fn fork_state(&self, rel: RelFileId, fork: Fork) -> Result<Arc<ForkState>> {
        if let Some(s) = self.forks.lock_shared().get(&(rel, fork)) {
            return Ok(Arc::clone(s));
        }
        let nblocks = self.measure(rel, fork)?;
        let mut forks = self.forks.lock_exclusive();
        let state = forks
            .entry((rel, fork))
            .or_insert_with(|| Arc::new(ForkState { nblocks: AtomicU32::new(nblocks), extend: Mutex::new(()) }));
        Ok(Arc::clone(state))
    }

    /// Counts the blocks in the fork's files: full segments, then the
    /// first short one (a trailing partial block is not a block).
    fn measure(&self, rel: RelFileId, fork: Fork) -> Result<BlockNumber> {
        let mut total: u64 = 0;
        for seg in 0.. {
            let Some(file) = self.segment(rel, fork, seg, false)? else { break };
            let len = self.io.file_len(file.file()).map_err(|e| FileError::from_io(file.path(), FileOp::Open, e))?;
            let blocks = (len / PAGE_SIZE as u64).min(u64::from(self.segment_blocks));
            total += blocks;
            if blocks < u64::from(self.segment_blocks) {
                break;
            }
        }
        Ok(total.min(u64::from(MAX_BLOCKS)) as BlockNumber)
    }
}

impl PageStore for Smgr {
    fn read_page(&self, tag: BufferTag, page: &mut PageBuf) -> Result<()> {
        self.read(tag.rel, tag.fork, tag.block, page)
    }

    fn write_pages(&self, first: BufferTag, pages: &[&PageBuf]) -> Result<()> {
        self.write_run(first.rel, first.fork, first.block, pages)
    }

    fn nblocks(&self, rel: RelFileId, fork: Fork) -> Result<BlockNumber> {
        Smgr::nblocks(self, rel, fork)
    }

    fn nblocks_from_files(&self, rel: RelFileId, fork: Fork) -> Result<BlockNumber> {
        Smgr::nblocks_from_files(self, rel, fork)
    }

    fn extend(&self, rel: RelFileId, fork: Fork, n: u32) -> Result<BlockNumber> {
        Smgr::extend(self, rel, fork, n)
    }

    fn sync_all(&self) -> Result<()> {
        Smgr::sync_all(self)
    }

    fn file_name(&self, tag: BufferTag) -> String {
        self.block_path(tag.rel, tag.fork, tag.block).display().to_string()
    }
}
