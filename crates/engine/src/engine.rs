//! `Engine`: one data directory's shared state — storage manager, buffer
//! pool, lock manager, catalog and activity slots. Sessions are made by
//! `Engine::session`, which lives with [`Session`](crate::Session) in
//! `session.rs`, so that this module does not depend on the session.

use crate::catalog::Catalog;
use crate::error::Result;
use crate::memory::MemoryStats;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use turnstile_lock::{LockManager, LockRow, LockStats};
use turnstile_storage::io::{OsIo, StorageIo};
use turnstile_storage::page::{self, PageBuf, VerifyFailure, PAGE_SIZE};
use turnstile_storage::vfd::FdStats;
use turnstile_storage::{
    BufferPool, BufferPoolStats, ExtensionStats, Fork, PageError, RelFileId, Smgr, SmgrOptions, StorageError,
};
use turnstile_sync::activity::{ActivityRow, ActivityTable};
use turnstile_sync::sync::Mutex;
use turnstile_sync::Config;

/// The shared state of one open data directory.
#[derive(Debug)]
pub struct Engine {
    dir: PathBuf,
    config: Config,
    smgr: Arc<Smgr>,
    pool: BufferPool,
    locks: Arc<LockManager>,
    catalog: Catalog,
    activity: Arc<ActivityTable>,
    /// Transaction ids and row write locks (`crate::txn`).
    txns: crate::txn::Transactions,
    /// Open sessions per database (`DROP DATABASE` refuses a database in use).
    db_users: Mutex<std::collections::HashMap<crate::catalog::DbId, usize>>,
    /// Extension and memory counters of every session, folded in when a
    /// statement that extended ends (extension) or a session ends (memory).
    totals: Mutex<(ExtensionStats, MemoryStats)>,
    /// Whether the background vacuum was started (`crate::autovacuum`).
    autovacuum: std::sync::Once,
    /// The write-ahead log (`crate::durability`).
    log: Arc<crate::durability::EngineLog>,
    /// Held by the checkpoint running (one at a time).
    checkpointing: std::sync::Mutex<()>,
    /// Key-share row locks kept in backends' own slots (`crate::keyshare`).
    key_shares: crate::keyshare::KeyShares,
}

impl Engine {
    /// Opens (creating if needed, with mode 0700) the data directory `dir`
    /// under `config`. The catalog is read back and verified; a damaged
    /// catalog is refused with an error that says what to do.
    ///
    /// ```
    /// use turnstile_engine::Engine;
    /// use turnstile_sync::Config;
    /// let dir = tempfile::tempdir().unwrap();
    /// let engine = Engine::open(dir.path(), Config::default()).unwrap();
    /// let mut s = engine.session().unwrap();
    /// s.create_table("t", &[("a", turnstile_engine::types::ColumnType::Int4)], None).unwrap();
    /// ```
    pub fn open(dir: impl AsRef<Path>, config: Config) -> Result<Arc<Engine>> {
        Engine::open_with_io(dir, config, Arc::new(OsIo))
    }

    /// [`Engine::open`] with the relation files' I/O going through `io`:
    /// tests and `turnstile stress storage` pass a
    /// [`turnstile_storage::fault::FaultyIo`] to inject ENOSPC and EIO
    /// into the real storage-manager and buffer-pool code. (The catalog
    /// file is written with plain `std::fs`, not through `io`.)
    pub fn open_with_io(dir: impl AsRef<Path>, config: Config, io: Arc<dyn StorageIo>) -> Result<Arc<Engine>> {
        Engine::open_with_ios(dir, config, io.clone(), io)
    }

    /// [`Engine::open_with_io`] with the relation files' I/O through `io`
    /// and the write-ahead log's through `wal_io` (`turnstile stress
    /// storage` injects faults into the data files alone).
    pub fn open_with_ios(
        dir: impl AsRef<Path>,
        config: Config,
        io: Arc<dyn StorageIo>,
        wal_io: Arc<dyn StorageIo>,
    ) -> Result<Arc<Engine>> {
        config.validate()?;
        let dir = dir.as_ref().to_path_buf();
        let smgr = Smgr::open_with(&dir, SmgrOptions::from_config(&config), io)?;
        check_format(&dir).map_err(|e| crate::error::EngineError::XidLimit(e.to_string()))?;
        let pool = BufferPool::new(&config, smgr.clone())?;
        let locks = LockManager::new(&config)?;
        let catalog = Catalog::open(&dir, config.lwlock.policy)?;
        let (log, redone) = crate::durability::open_log(&dir, wal_io, &config, &pool, &smgr, &catalog)?;
        let activity = ActivityTable::new(config.lock.max_backends as usize);
        let totals = Mutex::new((ExtensionStats::default(), MemoryStats::default()));
        let snapshots = crate::mvcc::Snapshots::open(
            config.txn.snapshot,
            config.lwlock.policy,
            config.lock.max_backends as usize,
            &dir.join("xid_limit"),
            config.txn.start_xid,
        )
        .map_err(|e| crate::error::EngineError::XidLimit(e.to_string()))?;
        let txns = crate::txn::Transactions::new(snapshots, config.txn.version_store_limit_bytes);
        let db_users = Mutex::new(std::collections::HashMap::new());
        let autovacuum = std::sync::Once::new();
        let key_shares =
            crate::keyshare::KeyShares::new(config.lock.max_backends as usize, config.txn.key_share_fast_path);
        let checkpointing = std::sync::Mutex::new(());
        let engine = Arc::new(Engine {
            dir,
            config,
            smgr,
            pool,
            locks,
            catalog,
            activity,
            txns,
            db_users,
            totals,
            autovacuum,
            key_shares,
            log,
            checkpointing,
        });
        crate::durability::finish_recovery(&engine, redone)?;
        Ok(engine)
    }

    /// A checkpoint ([`Engine::checkpoint`]): what a clean shutdown calls.
    /// Every committed transaction survives a crash without it (see
    /// docs/reliability.md).
    pub fn flush(&self) -> Result<()> {
        self.checkpoint()
    }

    /// The write-ahead log.
    pub fn log(&self) -> &Arc<crate::durability::EngineLog> {
        &self.log
    }

    pub(crate) fn checkpointing(&self) -> &std::sync::Mutex<()> {
        &self.checkpointing
    }

    /// Reads every block of every relation with storage straight from its
    /// files, bypassing the buffer pool, and verifies each page's checksum
    /// and header (PostgreSQL's `pg_checksums --check`). Returns the pages
    /// checked; the first bad page is a [`turnstile_storage::PageError`]
    /// naming the relation, file and block. Dirty buffers are not seen:
    /// call [`Engine::flush`] first to check what a crash would leave.
    pub fn verify_pages(&self) -> Result<u64> {
        let catalog = self.catalog.snapshot();
        let mut page: Box<PageBuf> = Box::new([0; PAGE_SIZE]);
        let mut pages = 0;
        for rel in catalog.relations.values().filter(|r| r.kind.has_storage()) {
            let file = RelFileId::new(rel.db, rel.id);
            if !self.smgr.exists(file, Fork::Main)? {
                continue;
            }
            for block in 0..self.smgr.nblocks_from_files(file, Fork::Main)? {
                self.smgr.read(file, Fork::Main, block, &mut page)?;
                page::verify(&page, block).map_err(|failure| {
                    let name = self.smgr.block_path(file, Fork::Main, block).display().to_string();
                    StorageError::Page(match failure {
                        VerifyFailure::Checksum { stored, computed } => PageError::ChecksumMismatch {
                            rel: file,
                            fork: Fork::Main,
                            block,
                            file: name,
                            stored,
                            computed,
                        },
                        VerifyFailure::Header(reason) => {
                            PageError::BadHeader { rel: file, fork: Fork::Main, block, file: name, reason }
                        }
                    })
                })?;
                pages += 1;
            }
        }
        Ok(pages)
    }

    /// Checks the shared invariants of the layers below — the buffer
    /// pool's ([`BufferPool::check_invariants`]: no pin left, mapping table
    /// and descriptors agree) and the lock manager's
    /// ([`LockManager::check_invariants`]) — and panics on a violation.
    /// Call it at a quiescent point: no session is running a statement
    /// (idle sessions may exist; their transactions' locks are fine).
    pub fn check_invariants(&self) {
        self.pool.check_invariants();
        self.locks.check_invariants();
    }

    /// The data directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The configuration the engine runs with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The storage manager.
    pub fn smgr(&self) -> &Arc<Smgr> {
        &self.smgr
    }

    /// The buffer pool.
    pub fn pool(&self) -> &BufferPool {
        &self.pool
    }

    /// The heavyweight lock manager.
    pub fn locks(&self) -> &Arc<LockManager> {
        &self.locks
    }

    /// The catalog.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Starts the background vacuum once.
    pub(crate) fn autovacuum_once(&self) -> &std::sync::Once {
        &self.autovacuum
    }

    /// Transaction ids, snapshots, row versions and row write locks.
    pub fn txns(&self) -> &crate::txn::Transactions {
        &self.txns
    }

    /// The key-share fast path's slots (`crate::keyshare`).
    pub fn key_shares(&self) -> &crate::keyshare::KeyShares {
        &self.key_shares
    }

    /// Counts a session on `db` in (`+1`) or out (`-1`); returns the count
    /// after the change.
    pub(crate) fn count_db_user(&self, db: crate::catalog::DbId, delta: isize) -> usize {
        let mut users = self.db_users.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let n = users.entry(db).or_default();
        *n = n.saturating_add_signed(delta);
        *n
    }

    /// The databases (`pg_database`).
    pub fn databases(&self) -> Vec<crate::catalog::Database> {
        self.catalog.databases()
    }

    /// The activity slots (read them at any time: `activity()`).
    pub fn activity_table(&self) -> &Arc<ActivityTable> {
        &self.activity
    }

    /// The `activity` view (`pg_stat_activity`), read without locks.
    pub fn activity(&self) -> Vec<ActivityRow> {
        self.activity.snapshot()
    }

    /// The `locks` view (`pg_locks`): every granted and awaited lock.
    pub fn locks_view(&self) -> Vec<LockRow> {
        self.locks.locks()
    }

    /// The `lock_stats` view: fast-path and shared-table acquisitions,
    /// overflows, partition-lock acquisitions and waits, transfers,
    /// deadlocks, timeouts, waits per lock type.
    pub fn lock_stats(&self) -> LockStats {
        self.locks.stats()
    }

    /// The snapshot counters: snapshots taken, `ProcArray`/`XidGen`
    /// acquisitions (0 under `csn`), xids assigned, commits.
    pub fn snapshot_stats(&self) -> crate::mvcc::SnapshotStats {
        self.txns.snapshots().stats()
    }

    /// The `buffer_stats` view: hits, misses, evictions, write-backs,
    /// mapping-partition acquisitions and waits.
    pub fn buffer_stats(&self) -> BufferPoolStats {
        self.pool.stats()
    }

    /// The `fd_stats` view: the vfd cache's hits, misses, opens, closes and
    /// hit ratio (Vondra 2024 asks for exactly this to be monitored).
    pub fn fd_stats(&self) -> FdStats {
        self.smgr.fd_stats()
    }

    /// The `extension_stats` view, summed over every statement that
    /// extended a relation: lock wait, lock held, file system and buffer
    /// search time (Freund 2020's breakdown).
    pub fn extension_stats(&self) -> ExtensionStats {
        self.totals.lock().map(|t| t.0).unwrap_or_default()
    }

    /// The `memory_stats` view, summed over every session that has ended
    /// (a live session reports its own with `Session::memory_stats`).
    pub fn memory_stats(&self) -> MemoryStats {
        self.totals.lock().map(|t| t.1).unwrap_or_default()
    }

    pub(crate) fn add_extension_stats(&self, s: &ExtensionStats) {
        if let Ok(mut t) = self.totals.lock() {
            t.0.add(s);
        }
    }

    pub(crate) fn add_memory_stats(&self, s: &MemoryStats) {
        if let Ok(mut t) = self.totals.lock() {
            t.1.add(s);
        }
    }
}

/// The on-disk format this engine writes, in the data directory's `format`
/// file: heap tuples with 64-bit transaction ids ([`crate::heap::tuple`])
/// on pages whose 24-byte header carries an LSN
/// ([`turnstile_storage::page`]), and rows of hash-partitioned tables in
/// the partitions PostgreSQL routes them to
/// ([`crate::catalog::hash_partition`]; format 3 routed them by a hash of
/// its own).
const FORMAT: &str = "turnstile data format 4: 64-bit transaction ids, page LSNs, PostgreSQL's hash partitioning";

/// Refuses a data directory written by an engine whose tuples carried
/// 32-bit transaction ids (it has an id limit file but no `format`), and
/// marks a new one.
fn check_format(dir: &Path) -> std::io::Result<()> {
    let path = dir.join("format");
    match std::fs::read_to_string(&path) {
        Ok(text) if text.trim() == FORMAT => Ok(()),
        Ok(text) => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{}: unknown data format {:?} (this engine writes {FORMAT:?})", path.display(), text.trim()),
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if dir.join("xid_limit").exists() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "{} was written by an earlier turnstile, whose tuples carry 32-bit transaction ids; \
                         re-create it (or load a dump of it)",
                        dir.display()
                    ),
                ));
            }
            std::fs::create_dir_all(dir)?;
            std::fs::write(&path, format!("{FORMAT}\n"))
        }
        Err(e) => Err(e),
    }
}
