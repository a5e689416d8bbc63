//! The virtual file descriptor cache (PostgreSQL's `fd.c` "VFD" layer).
//!
//! Every segment file is named by a [`VfdKey`]; the cache keeps at most
//! `storage.max_open_files` of them open and closes the least recently
//! used one to make room. Vondra 2024 saw this cache thrash past ~1000
//! relations and asked for its hit ratio to be monitored: [`FdStats`].
//!
//! # What protects what
//!
//! | data | protected by |
//! |---|---|
//! | the key → file map and the LRU order | the cache's `LwLock` (tranche `FileCache`, `lwlock.policy`), exclusive for every lookup (a hit moves the entry to the LRU tail) |
//! | hits, misses, opens | the same lock |
//! | closes, descriptors open now | atomics, updated when a [`VfdFile`] is dropped |
//!
//! # Invariants
//!
//! * `entries.len() == lru.len() ≤ max_open`.
//! * `open_now = opens − closes`.
//! * A file evicted while an I/O is using it stays open until that I/O
//!   ends (the `Arc` the I/O holds), so `open_now ≤ max_open + I/Os in
//!   flight`; eviction prefers entries no I/O is using.

use crate::error::{FileError, FileOp};
use crate::io::StorageIo;
use crate::rel::{Fork, RelFileId};
// File I/O is outside every loom model, and these reference counts and
// counters are no handshake: std's types are used directly.
use hashbrown::HashMap;
use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use turnstile_sync::sync::counter::{AtomicU64, Ordering};
use turnstile_sync::{LwLock, LwLockPolicy, Tranche};

/// One segment file: relation, fork, segment number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VfdKey {
    /// The relation.
    pub rel: RelFileId,
    /// The fork.
    pub fork: Fork,
    /// The segment number (0 for the first GiB).
    pub segment: u32,
}

/// Counters of the vfd cache (`fd_stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct FdStats {
    /// Lookups that found the file open.
    pub hits: u64,
    /// Lookups that had to open it.
    pub misses: u64,
    /// `open` calls that succeeded.
    pub opens: u64,
    /// Descriptors closed (evicted or forgotten, once unused).
    pub closes: u64,
    /// Descriptors open now.
    pub open_now: u64,
    /// The cache's limit (`storage.max_open_files`).
    pub max_open: u64,
}

impl FdStats {
    /// `hits / (hits + misses)`, 1.0 before the first lookup.
    pub fn hit_ratio(&self) -> f64 {
        let total = self.hits + self.misses;
        if total == 0 {
            1.0
        } else {
            self.hits as f64 / total as f64
        }
    }
}

/// An open segment file. Dropping the last reference closes it.
#[derive(Debug)]
pub struct VfdFile {
    file: File,
    path: PathBuf,
    counters: Arc<CloseCounters>,
}

impl VfdFile {
    /// The open file.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Its path (for error messages).
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for VfdFile {
    fn drop(&mut self) {
        self.counters.open_now.fetch_sub(1, Ordering::Relaxed);
        self.counters.closes.fetch_add(1, Ordering::Relaxed);
    }
}

#[derive(Debug, Default)]
struct CloseCounters {
    open_now: AtomicU64,
    closes: AtomicU64,
}

#[derive(Debug, Default)]
struct Inner {
    entries: HashMap<VfdKey, (Arc<VfdFile>, u64)>,
    /// Last-use tick → key; the first entry is the least recently used.
    lru: BTreeMap<u64, VfdKey>,
    tick: u64,
    hits: u64,
    misses: u64,
    opens: u64,
}

impl Inner {
    /// Closes (forgets) the least recently used entry, preferring one no
    /// I/O is using; `false` when the cache is empty.
    fn evict_one(&mut self) -> bool {
        // Only the cache clones these `Arc`s, under this lock, so a count
        // of 1 cannot rise concurrently: the entry is idle.
        let idle = self.lru.iter().find(|(_, k)| Arc::strong_count(&self.entries[*k].0) == 1).map(|(&t, _)| t);
        let Some(tick) = idle.or_else(|| self.lru.keys().next().copied()) else {
            return false;
        };
        if let Some(key) = self.lru.remove(&tick) {
            self.entries.remove(&key);
        }
        true
    }
}

/// The cache. See the module documentation.
#[derive(Debug)]
pub struct VfdCache {
    io: Arc<dyn StorageIo>,
    max_open: usize,
    inner: LwLock<Inner>,
    counters: Arc<CloseCounters>,
}

impl VfdCache {
    /// A cache of at most `max_open` descriptors (at least 1) whose lock
    /// follows `policy` (`lwlock.policy`). The lock is only ever taken
    /// exclusive, so no policy has shared lockers to hold back, and under
    /// both a release wakes a waiter to retry rather than handing it the
    /// lock (which formed convoys here when backends outnumbered cores).
    pub fn new(io: Arc<dyn StorageIo>, max_open: usize, policy: LwLockPolicy) -> VfdCache {
        VfdCache {
            io,
            max_open: max_open.max(1),
            inner: LwLock::new(Tranche::FileCache, policy, Inner::default()),
            counters: Arc::new(CloseCounters::default()),
        }
    }

    /// The admission policy of the cache's lock.
    pub fn policy(&self) -> LwLockPolicy {
        self.inner.policy()
    }

    /// The open file for `key` at `path`, opening it (and creating it if
    /// `create`) on a miss. A missing file with `create == false` is
    /// `Ok(None)`.
    pub fn get(
        &self,
        key: VfdKey,
        path: impl FnOnce() -> PathBuf,
        create: bool,
    ) -> Result<Option<Arc<VfdFile>>, FileError> {
        let mut inner = self.inner.lock_exclusive();
        inner.tick += 1;
        let tick = inner.tick;
        if let Some((file, last)) = inner.entries.get_mut(&key) {
            let (file, old) = (Arc::clone(file), std::mem::replace(last, tick));
            inner.lru.remove(&old);
            inner.lru.insert(tick, key);
            inner.hits += 1;
            return Ok(Some(file));
        }
        inner.misses += 1;
        while inner.entries.len() >= self.max_open && inner.evict_one() {}
        let path = path();
        let file = loop {
            match self.io.open(&path, create) {
                Ok(f) => break f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && !create => return Ok(None),
                // Out of descriptors: close one of ours and retry, as
                // PostgreSQL's `BasicOpenFile` does.
                Err(e) if FileError::is_emfile(&e) => {
                    if !inner.evict_one() {
                        return Err(FileError::from_io(&path, FileOp::Open, e));
                    }
                }
                Err(e) => return Err(FileError::from_io(&path, FileOp::Open, e)),
            }
        };
        inner.opens += 1;
        self.counters.open_now.fetch_add(1, Ordering::Relaxed);
        let file = Arc::new(VfdFile { file, path, counters: Arc::clone(&self.counters) });
        inner.entries.insert(key, (Arc::clone(&file), tick));
        inner.lru.insert(tick, key);
        debug_assert_eq!(inner.entries.len(), inner.lru.len());
        Ok(Some(file))
    }

    /// Closes the files of `rel`'s `fork` with segment ≥ `from_segment`
    /// (after a truncation or a drop).
    pub fn forget(&self, rel: RelFileId, fork: Fork, from_segment: u32) {
        let mut inner = self.inner.lock_exclusive();
        let doomed: Vec<(VfdKey, u64)> = inner
            .entries
            .iter()
            .filter(|(k, _)| k.rel == rel && k.fork == fork && k.segment >= from_segment)
            .map(|(k, (_, t))| (*k, *t))
            .collect();
        for (key, tick) in doomed {
            inner.entries.remove(&key);
            inner.lru.remove(&tick);
        }
    }

    /// The cache's counters.
    pub fn stats(&self) -> FdStats {
        let inner = self.inner.lock_shared();
        FdStats {
            hits: inner.hits,
            misses: inner.misses,
            opens: inner.opens,
            closes: self.counters.closes.load(Ordering::Relaxed),
            open_now: self.counters.open_now.load(Ordering::Relaxed),
            max_open: self.max_open as u64,
        }
    }

    /// Entries cached now (≤ `max_open`).
    pub fn cached(&self) -> usize {
        self.inner.lock_shared().entries.len()
    }
}
