//! `Config`: every knob of turnstile, the `classic` and `scalable` presets,
//! TOML loading and `key=value` overrides.
//!
//! A profile is only a preset: every knob can be flipped alone, so the lab
//! can show what each fix contributes (`--profile scalable --set
//! lock.fast_path_slots=16`). Each knob's doc comment names the write-up
//! that motivates it, by the short names of `docs/sources.md` (Vondra 2024,
//! Freund 2020, Haas 2011, Geier 2022, Postgres Pro 2018).
//!
//! ```
//! use turnstile_sync::config::{Config, Profile};
//! let mut c = Config::preset(Profile::Scalable);
//! c.set("lock.partitions", "128").unwrap();
//! assert_eq!(c.lock.partitions, 128);
//! let err = c.set("lock.partitions", "100").unwrap_err();
//! assert!(err.to_string().contains("lock.partitions"));
//! assert!(err.to_string().contains("power of two"));
//! ```

mod wal;

pub use wal::{WalConfig, WalInsert};

use crate::lwlock::LwLockPolicy;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

/// A named preset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// PostgreSQL's behaviour before the fixes the write-ups propose.
    Classic,
    /// Every fix on (the default).
    Scalable,
}

impl Profile {
    /// Both profiles, classic first.
    pub const ALL: [Profile; 2] = [Profile::Classic, Profile::Scalable];

    /// The profile's name.
    pub const fn name(self) -> &'static str {
        match self {
            Profile::Classic => "classic",
            Profile::Scalable => "scalable",
        }
    }

    /// Parses `classic` or `scalable`.
    pub fn parse(name: &str) -> Result<Profile, ConfigError> {
        match name {
            "classic" => Ok(Profile::Classic),
            "scalable" => Ok(Profile::Scalable),
            other => Err(ConfigError::Invalid {
                key: "profile".into(),
                value: other.into(),
                allowed: "classic or scalable".into(),
            }),
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a relation grows (Freund 2020).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExtendStrategy {
    /// One 8 kB block per extension; victim search, write-back and page
    /// initialisation all under the extension lock.
    Classic,
    /// Victims found and cleaned before the lock, many blocks per extension
    /// sized to the number of waiters, page initialisation after release.
    Bulk,
}

/// How a B-tree insert locks its leaf (Postgres Pro 2018).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeafInsertLock {
    /// Descend with a shared lock on the leaf, then release it and take it
    /// exclusive (PostgreSQL before the fix).
    ShareThenExclusive,
    /// Take the leaf lock exclusive at once.
    Exclusive,
}

/// How a weak relation lock is recorded in its backend's fast-path slots
/// and handed over to a strong locker (Vondra 2024, Haas 2011).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FastPathProtocol {
    /// PostgreSQL's: the weak locker and a strong locker's transfer both
    /// work under the backend's `LockFastPath` LWLock.
    Lwlock,
    /// A handshake of atomics: the weak locker publishes its slot and reads
    /// the strong-lock counter behind a fence; a strong locker claims each
    /// slot with a CAS (`turnstile-lock`'s crate documentation).
    Lockfree,
}

impl FastPathProtocol {
    /// Both protocols, PostgreSQL's first.
    pub const ALL: [FastPathProtocol; 2] = [FastPathProtocol::Lwlock, FastPathProtocol::Lockfree];

    /// The knob's value name.
    pub const fn name(self) -> &'static str {
        match self {
            FastPathProtocol::Lwlock => "lwlock",
            FastPathProtocol::Lockfree => "lockfree",
        }
    }
}

impl fmt::Display for FastPathProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a statement's snapshot is taken (`turnstile-engine`'s `mvcc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SnapshotProtocol {
    /// PostgreSQL 15's `GetSnapshotData`: `ProcArrayLock` in shared mode
    /// and a scan of every connected backend's running transaction id; the
    /// cost grows with the number of connections.
    Procarray,
    /// A commit sequence number: a snapshot is one atomic read of the
    /// last commit's number, whatever the number of connections.
    Csn,
}

impl SnapshotProtocol {
    /// The knob's value name.
    pub const fn name(self) -> &'static str {
        match self {
            SnapshotProtocol::Procarray => "procarray",
            SnapshotProtocol::Csn => "csn",
        }
    }
}

impl fmt::Display for SnapshotProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Transactions and snapshots (`turnstile-engine`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TxnConfig {
    /// How a snapshot is taken: `procarray` (PostgreSQL 15) or `csn`.
    pub snapshot: SnapshotProtocol,
    /// Milliseconds between two passes of the background vacuum (0: off).
    pub autovacuum_naptime_ms: u64,
    /// Rows deleted or moved away since a table's last VACUUM past which
    /// the background vacuum visits it (PostgreSQL's
    /// `autovacuum_vacuum_threshold`, 50)…
    pub autovacuum_vacuum_threshold: u64,
    /// …plus this fraction of its live rows
    /// (`autovacuum_vacuum_scale_factor`, 0.2).
    pub autovacuum_vacuum_scale_factor: f64,
    /// Bytes a transaction's undo log may hold; the write that crosses the
    /// limit fails its statement with `54000` (256 MiB).
    pub undo_limit_bytes: u64,
    /// Bytes of older row versions the version store may hold; past it an
    /// `UPDATE` writes a new tuple version instead of updating in place
    /// (16 MiB).
    pub version_store_limit_bytes: u64,
    /// The first transaction id of a fresh data directory (a test knob:
    /// start near 2^32 to run through it; 3, PostgreSQL's
    /// `FirstNormalTransactionId`). Ignored once the directory has ids.
    pub start_xid: u64,
    /// Rows (or pages, for VACUUM's heap scan) a long engine loop handles
    /// between two checks for a cancel (PostgreSQL's
    /// `CHECK_FOR_INTERRUPTS` sites; 1024).
    pub interrupt_check_rows: u64,
    /// Values of a sequence a session takes at once without the
    /// sequence's lock (at least its `CACHE`); 0 is PostgreSQL 15's
    /// allocation: the lock around the sequence's state on every `nextval`
    /// that finds no cached value.
    pub sequence_block: u64,
    /// Whether a `FOR KEY SHARE` row lock (a foreign key's check of the
    /// referenced row) is first recorded in the backend's own slots, and
    /// moved to the shared row-lock table only when a conflicting
    /// `FOR UPDATE` asks for the row (PostgreSQL's fast-path protocol for
    /// weak relation locks, applied to key-share row locks); `false` is
    /// PostgreSQL 15's way, every locker in the shared table.
    #[serde(default)]
    pub key_share_fast_path: bool,
}

// `scale_factor` is a float; `validate` refuses NaN (and everything
// outside 0..=100), so equality is reflexive on every valid
// configuration.
impl Eq for TxnConfig {}

/// The executor (`turnstile-engine`'s `query::exec`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecutorConfig {
    /// Rows a hash join's table is sized for before it grows (the build
    /// side's estimate; the planner keeps no statistics). 128.
    pub hash_rows_estimate: u32,
}

/// The heavyweight lock manager (`turnstile-lock`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockConfig {
    /// Partitions of the shared lock table, each behind its own `LwLock`
    /// (PostgreSQL's `NUM_LOCK_PARTITIONS`). Vondra 2024: 16 → 64.
    pub partitions: u32,
    /// Fast-path relation-lock slots per backend at start, in groups of 16.
    /// Vondra 2024, Haas 2011: PostgreSQL had 16 (one group); the patch 1024
    /// (64 groups × 16).
    pub fast_path_slots: u32,
    /// Upper bound to which a backend's fast path may grow when a group
    /// overflows (beyond PostgreSQL, whose slot count is fixed at start).
    /// Equal to `fast_path_slots` means fixed. Vondra 2024.
    pub fast_path_slots_max: u32,
    /// How weak lockers and strong lockers meet in the fast-path slots.
    /// `lwlock` is PostgreSQL's; `lockfree` costs the weak locker one fence
    /// instead of an LWLock round trip (turnstile's own, for the
    /// fast path of Vondra 2024 and Haas 2011).
    pub fast_path_protocol: FastPathProtocol,
    /// Strong-lock counters that tell weak lockers a strong lock may exist
    /// (`FAST_PATH_STRONG_LOCK_HASH_PARTITIONS`). Haas 2011: 1024.
    pub strong_lock_counters: u32,
    /// Capacity of the shared lock table, in locks (PostgreSQL sizes it as
    /// `max_locks_per_transaction × max_connections`). Vondra 2024.
    pub max_locks: u32,
    /// Backends that may be registered at once (`max_connections`).
    pub max_backends: u32,
    /// How long a lock wait lasts before the deadlock check runs
    /// (`deadlock_timeout`), in milliseconds.
    pub deadlock_timeout_ms: u64,
    /// Longest lock wait before `LockError::Timeout` (`lock_timeout`), in
    /// milliseconds; 0 waits forever.
    pub lock_timeout_ms: u64,
}

/// Lightweight locks (`turnstile-sync`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LwLockConfig {
    /// Whether shared lockers may pass a queued exclusive waiter, and
    /// whether a release hands the lock over or wakes waiters to retry.
    /// Postgres Pro 2018: `barging` (PostgreSQL 15) starved exclusive lockers
    /// of `BufferMapping`; `fair` is the article's patch (shared lockers queue
    /// behind a queued exclusive one; woken waiters retry, as PostgreSQL's
    /// do). Every
    /// `LwLock` follows it, the free-space map's and the vfd cache's
    /// included.
    pub policy: LwLockPolicy,
}

/// The buffer pool (`turnstile-storage`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferConfig {
    /// Partitions of the buffer mapping table (`NUM_BUFFER_PARTITIONS`).
    /// Postgres Pro 2018: 128 → 512.
    pub mapping_partitions: u32,
    /// Buffers in the pool (`shared_buffers`, in 8 kB pages).
    pub shared_buffers: u32,
    /// Look a block up first through a table of recent buffer hints: pin
    /// the hinted buffer and keep the pin if it holds the block (PostgreSQL
    /// 14's `ReadRecentBuffer`, applied to every read), so a hit takes no
    /// mapping-partition lock. Postgres Pro 2018: the hot root page's partition
    /// lock is what readers pile up on and what a writer must wait behind.
    pub lookup_hints: bool,
    /// Back the pool's pages with transparent huge pages (`MADV_HUGEPAGE`
    /// on one 2 MB-aligned mapping; PostgreSQL's `huge_pages`). PostgreSQL
    /// 15's default `try` asks for hugetlbfs pages, which a machine without
    /// reserved huge pages lacks, and falls back to 4 kB pages; `classic`
    /// keeps 4 kB pages. A query that touches one page of each of many
    /// indexes misses the TLB on almost every page with 4 kB pages.
    pub huge_pages: bool,
    /// Fault every buffer's memory in when the pool is created, instead of
    /// as each buffer is first used (PostgreSQL's way, the default): the
    /// server is then at its full size from the start, and `turnstile soak`
    /// sees growth that is not the pool filling.
    #[serde(default)]
    pub prefault: bool,
}

/// The storage manager (`turnstile-storage`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StorageConfig {
    /// Relation extension strategy. Freund 2020.
    pub extend: ExtendStrategy,
    /// Most blocks one bulk extension adds. Freund 2020 (chunks of 32–128 × 8 kB).
    pub extend_max_blocks: u32,
    /// File descriptors the vfd cache keeps open (`max_files_per_process`).
    /// Vondra 2024: thrashing past ~1000 relations; watch the hit ratio.
    pub max_open_files: u32,
}

/// B-tree indexes (`turnstile-engine`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BtreeConfig {
    /// How an insert locks its leaf. Postgres Pro 2018.
    pub leaf_insert_lock: LeafInsertLock,
    /// Before a leaf's binary search, compare the probe with the last entry
    /// of a rightmost leaf and the first entry of a leftmost one: a probe
    /// outside the index's key range (most partitions of a partitioned
    /// join) touches one entry instead of ~9. turnstile's own. Vondra 2024.
    pub edge_precheck: bool,
}

/// The planner (`turnstile-engine`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlannerConfig {
    /// Discard indexes that cannot serve the query from the relation
    /// cache's column sets before opening and locking them. Geier 2022.
    pub index_prefilter: bool,
}

/// Per-query memory (`turnstile-engine`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryConfig {
    /// Keep blocks released at query end in a per-backend cache by size
    /// class instead of returning them to the allocator. Vondra 2024.
    pub block_cache: bool,
    /// Allocate an index scan's position array (PostgreSQL's ~27 kB
    /// `BTScanOpaqueData`) when the scan finds its first entry, not when
    /// it begins: a probe that finds nothing — most partitions of a
    /// partitioned join — allocates and touches nothing. Vondra 2024.
    pub lazy_scan_state: bool,
}

/// The wire-protocol server (`turnstile-server`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// Microseconds a backend polls its socket for the client's next
    /// message (yielding the CPU between tries) before it sleeps in
    /// `read`; `0` sleeps at once, as PostgreSQL's backend does. A
    /// sleeping thread's wake-up costs more than a short query on a
    /// virtual machine.
    pub poll_us: u64,
}

/// Every knob of turnstile. `Default` is the `scalable` preset.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The heavyweight lock manager.
    pub lock: LockConfig,
    /// Lightweight locks.
    pub lwlock: LwLockConfig,
    /// The buffer pool.
    pub buffer: BufferConfig,
    /// The storage manager.
    pub storage: StorageConfig,
    /// B-tree indexes.
    pub btree: BtreeConfig,
    /// The planner.
    pub planner: PlannerConfig,
    /// The executor.
    pub executor: ExecutorConfig,
    /// Per-query memory.
    pub memory: MemoryConfig,
    /// Transactions and snapshots.
    pub txn: TxnConfig,
    /// The wire-protocol server.
    pub server: ServerConfig,
    /// The write-ahead log.
    #[serde(default)]
    pub wal: WalConfig,
}

impl Default for Config {
    fn default() -> Self {
        Config::preset(Profile::Scalable)
    }
}

/// A knob: its dotted key and what it accepts.
#[derive(Clone, Copy, Debug)]
pub struct Knob {
    /// Dotted key, e.g. `lock.partitions`.
    pub key: &'static str,
    /// The values it accepts, in words.
    pub allowed: &'static str,
}

/// Every knob, in documentation order.
pub const KNOBS: &[Knob] = &[
    Knob { key: "lock.partitions", allowed: "a power of two from 1 to 1024" },
    Knob { key: "lock.fast_path_slots", allowed: "16 × a power of two, from 16 to 65536" },
    Knob { key: "lock.fast_path_slots_max", allowed: "16 × a power of two, from lock.fast_path_slots to 65536" },
    Knob { key: "lock.fast_path_protocol", allowed: "lwlock or lockfree" },
    Knob { key: "lock.strong_lock_counters", allowed: "a power of two from 1 to 65536" },
    Knob { key: "lock.max_locks", allowed: "an integer from 1 to 16777216" },
    Knob { key: "lock.max_backends", allowed: "an integer from 1 to 4096" },
    Knob { key: "lock.deadlock_timeout_ms", allowed: "an integer from 1 to 3600000" },
    Knob { key: "lock.lock_timeout_ms", allowed: "0 (wait forever) or an integer up to 3600000" },
    Knob { key: "lwlock.policy", allowed: "fair or barging" },
    Knob { key: "buffer.mapping_partitions", allowed: "a power of two from 1 to 4096, at most buffer.shared_buffers" },
    Knob { key: "buffer.shared_buffers", allowed: "an integer from 16 to 4194304 (8 kB buffers)" },
    Knob { key: "buffer.lookup_hints", allowed: "true or false" },
    Knob { key: "buffer.huge_pages", allowed: "true or false" },
    Knob { key: "buffer.prefault", allowed: "true or false" },
    Knob { key: "storage.extend", allowed: "classic or bulk" },
    Knob { key: "storage.extend_max_blocks", allowed: "an integer from 1 to 1024" },
    Knob { key: "storage.max_open_files", allowed: "an integer from 1 to 1000000" },
    Knob { key: "btree.leaf_insert_lock", allowed: "share_then_exclusive or exclusive" },
    Knob { key: "btree.edge_precheck", allowed: "true or false" },
    Knob { key: "planner.index_prefilter", allowed: "true or false" },
    Knob { key: "memory.block_cache", allowed: "true or false" },
    Knob { key: "memory.lazy_scan_state", allowed: "true or false" },
    Knob { key: "txn.snapshot", allowed: "procarray or csn" },
    Knob { key: "txn.autovacuum_naptime_ms", allowed: "0 (off) or an integer up to 3600000" },
    Knob { key: "txn.autovacuum_vacuum_threshold", allowed: "an integer from 0 to 2147483647" },
    Knob { key: "txn.autovacuum_vacuum_scale_factor", allowed: "a number from 0 to 100, e.g. 0.2" },
    Knob { key: "txn.undo_limit_bytes", allowed: "an integer from 1 to 1099511627776" },
    Knob { key: "txn.version_store_limit_bytes", allowed: "an integer from 0 to 1099511627776" },
    Knob { key: "txn.start_xid", allowed: "an integer from 3 to 4611686018427387903" },
    Knob { key: "txn.interrupt_check_rows", allowed: "an integer from 1 to 1048576" },
    Knob { key: "txn.sequence_block", allowed: "0 (PostgreSQL's allocation) or an integer up to 1048576" },
    Knob { key: "txn.key_share_fast_path", allowed: "true or false" },
    Knob { key: "executor.hash_rows_estimate", allowed: "an integer from 1 to 16777216" },
    Knob { key: "server.poll_us", allowed: "0 (sleep at once) or an integer up to 10000" },
    Knob { key: "wal.insert", allowed: "classic or scalable" },
    Knob { key: "wal.insert_locks", allowed: "an integer from 1 to 128" },
    Knob { key: "wal.buffers", allowed: "a power of two from 65536 to 1073741824 (bytes)" },
    Knob { key: "wal.fsync", allowed: "true or false" },
    Knob { key: "wal.synchronous_commit", allowed: "true or false" },
    Knob { key: "wal.writer_delay_ms", allowed: "an integer from 1 to 10000" },
    Knob { key: "wal.commit_delay_us", allowed: "0 (off) or an integer up to 100000" },
    Knob { key: "wal.commit_siblings", allowed: "an integer from 0 to 1000" },
    Knob { key: "wal.group_wait_us", allowed: "0 (never) or an integer up to 100000" },
    Knob { key: "wal.segment_size", allowed: "a power of two from 1048576 to 1073741824 (bytes)" },
    Knob { key: "wal.init_zero", allowed: "true or false" },
    Knob { key: "wal.max_wal_size", allowed: "bytes, at least 2 × wal.segment_size" },
    Knob { key: "wal.checkpoint_timeout_s", allowed: "an integer from 1 to 86400" },
];

/// A configuration that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// No knob has this key.
    #[error("unknown configuration key `{key}`; known keys: {known}")]
    UnknownKey {
        /// The key as given.
        key: String,
        /// Every known key, comma-separated.
        known: String,
    },
    /// The value is not one the knob accepts.
    #[error("invalid value `{value}` for `{key}`: expected {allowed}")]
    Invalid {
        /// The knob.
        key: String,
        /// The value as given.
        value: String,
        /// What the knob accepts.
        allowed: String,
    },
    /// An override was not written `key=value`.
    #[error("malformed override `{0}`: expected key=value, e.g. lock.partitions=64")]
    Malformed(String),
    /// The TOML text could not be parsed.
    #[error("cannot parse configuration TOML: {0}")]
    Toml(String),
    /// The configuration file could not be read.
    #[error("cannot read configuration file {path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The operating system's message.
        message: String,
    },
}

fn allowed_for(key: &str) -> &'static str {
    KNOBS.iter().find(|k| k.key == key).map_or("a valid value", |k| k.allowed)
}

fn known_keys() -> String {
    KNOBS.iter().map(|k| k.key).collect::<Vec<_>>().join(", ")
}

impl Config {
    /// The preset of `profile` (the table in `docs/architecture.md`).
    pub fn preset(profile: Profile) -> Config {
        let classic = profile == Profile::Classic;
        Config {
            lock: LockConfig {
                partitions: if classic { 16 } else { 64 },
                fast_path_slots: if classic { 16 } else { 1024 },
                fast_path_slots_max: if classic { 16 } else { 16384 },
                fast_path_protocol: if classic { FastPathProtocol::Lwlock } else { FastPathProtocol::Lockfree },
                strong_lock_counters: 1024,
                max_locks: 64 * 1024,
                max_backends: 256,
                deadlock_timeout_ms: 1000,
                lock_timeout_ms: 0,
            },
            lwlock: LwLockConfig { policy: if classic { LwLockPolicy::Barging } else { LwLockPolicy::Fair } },
            buffer: BufferConfig {
                mapping_partitions: if classic { 128 } else { 512 },
                shared_buffers: 16384,
                lookup_hints: !classic,
                huge_pages: !classic,
                prefault: false,
            },
            storage: StorageConfig {
                extend: if classic { ExtendStrategy::Classic } else { ExtendStrategy::Bulk },
                extend_max_blocks: 64,
                max_open_files: 1000,
            },
            btree: BtreeConfig {
                leaf_insert_lock: if classic { LeafInsertLock::ShareThenExclusive } else { LeafInsertLock::Exclusive },
                edge_precheck: !classic,
            },
            planner: PlannerConfig { index_prefilter: !classic },
            memory: MemoryConfig { block_cache: !classic, lazy_scan_state: !classic },
            txn: TxnConfig {
                snapshot: if classic { SnapshotProtocol::Procarray } else { SnapshotProtocol::Csn },
                autovacuum_naptime_ms: 1000,
                autovacuum_vacuum_threshold: 50,
                autovacuum_vacuum_scale_factor: 0.2,
                undo_limit_bytes: 256 << 20,
                version_store_limit_bytes: 16 << 20,
                start_xid: 3,
                interrupt_check_rows: 1024,
                sequence_block: if classic { 0 } else { 1024 },
                key_share_fast_path: !classic,
            },
            executor: ExecutorConfig { hash_rows_estimate: 128 },
            server: ServerConfig { poll_us: if classic { 0 } else { 50 } },
            wal: WalConfig::preset(profile),
        }
    }

    /// Parses TOML: an optional top-level `profile = "classic"|"scalable"`
    /// picks the preset (default `scalable`), then every other key
    /// overrides one knob, e.g. `[lock] partitions = 32`.
    pub fn from_toml_str(text: &str) -> Result<Config, ConfigError> {
        Config::from_toml_str_over(Profile::Scalable, text)
    }

    /// As [`Config::from_toml_str`], but starting from `base` when the text
    /// names no profile.
    pub fn from_toml_str_over(base: Profile, text: &str) -> Result<Config, ConfigError> {
        let mut table: toml::Table = text.parse().map_err(|e: toml::de::Error| ConfigError::Toml(e.to_string()))?;
        let profile = match table.remove("profile") {
            None => base,
            Some(toml::Value::String(name)) => Profile::parse(&name)?,
            Some(other) => return Err(Profile::parse(&other.to_string()).unwrap_err()),
        };
        let mut config = Config::preset(profile);
        let mut leaves = Vec::new();
        flatten("", &toml::Value::Table(table), &mut leaves);
        for (key, value) in leaves {
            config.set_value(&key, value)?;
        }
        config.validate()?;
        Ok(config)
    }

    /// Reads and parses a TOML file (see [`Config::from_toml_str_over`]).
    pub fn from_toml_file(base: Profile, path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError::Io { path: path.display().to_string(), message: e.to_string() })?;
        Config::from_toml_str_over(base, &text)
    }

    /// The configuration as TOML text (every knob, for `turnstile config`).
    pub fn to_toml_string(&self) -> String {
        toml::to_string(self).unwrap_or_else(|e| format!("# cannot render configuration: {e}\n"))
    }

    /// Applies one `key=value` override, e.g. `lock.partitions=64`.
    pub fn apply_override(&mut self, assignment: &str) -> Result<(), ConfigError> {
        let (key, value) = assignment.split_once('=').ok_or_else(|| ConfigError::Malformed(assignment.to_owned()))?;
        self.set(key.trim(), value.trim())
    }

    /// Sets knob `key` from its textual `value` and validates the result;
    /// on error the configuration is left unchanged.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let parsed = format!("v = {value}")
            .parse::<toml::Table>()
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(value.to_owned()));
        let mut candidate = self.clone();
        candidate.set_value(key, parsed)?;
        candidate.validate()?;
        *self = candidate;
        Ok(())
    }

    fn set_value(&mut self, key: &str, value: toml::Value) -> Result<(), ConfigError> {
        let invalid = |value: &toml::Value| ConfigError::Invalid {
            key: key.to_owned(),
            value: match value {
                toml::Value::String(s) => s.clone(),
                other => other.to_string(),
            },
            allowed: allowed_for(key).to_owned(),
        };
        let Some((section, field)) = key.split_once('.') else {
            return Err(ConfigError::UnknownKey { key: key.to_owned(), known: known_keys() });
        };
        if !KNOBS.iter().any(|k| k.key == key) {
            return Err(ConfigError::UnknownKey { key: key.to_owned(), known: known_keys() });
        }
        let mut tree = toml::Value::try_from(&*self).map_err(|e| ConfigError::Toml(e.to_string()))?;
        let slot = tree
            .get_mut(section)
            .and_then(|s| s.get_mut(field))
            .ok_or_else(|| ConfigError::UnknownKey { key: key.to_owned(), known: known_keys() })?;
        // Integers arrive as TOML integers; enum names and booleans may come
        // as strings from the command line.
        let value = match (&*slot, value) {
            (toml::Value::Boolean(_), toml::Value::String(s)) if s == "on" || s == "off" => {
                toml::Value::Boolean(s == "on")
            }
            (toml::Value::Float(_), toml::Value::Integer(i)) => toml::Value::Float(i as f64),
            (_, v) => v,
        };
        if std::mem::discriminant(&*slot) != std::mem::discriminant(&value) {
            return Err(invalid(&value));
        }
        *slot = value.clone();
        *self = tree.try_into().map_err(|_| invalid(&value))?;
        Ok(())
    }

    /// Checks every cross-knob and range rule; the error names the key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        fn check(ok: bool, key: &str, value: impl fmt::Display) -> Result<(), ConfigError> {
            if ok {
                Ok(())
            } else {
                Err(ConfigError::Invalid {
                    key: key.to_owned(),
                    value: value.to_string(),
                    allowed: allowed_for(key).to_owned(),
                })
            }
        }
        let pow2_in = |v: u32, lo: u32, hi: u32| v.is_power_of_two() && (lo..=hi).contains(&v);
        let slots_ok = |v: u32| v % 16 == 0 && pow2_in(v / 16, 1, 4096);
        let l = &self.lock;
        check(pow2_in(l.partitions, 1, 1024), "lock.partitions", l.partitions)?;
        check(slots_ok(l.fast_path_slots), "lock.fast_path_slots", l.fast_path_slots)?;
        check(
            slots_ok(l.fast_path_slots_max) && l.fast_path_slots_max >= l.fast_path_slots,
            "lock.fast_path_slots_max",
            l.fast_path_slots_max,
        )?;
        check(pow2_in(l.strong_lock_counters, 1, 65536), "lock.strong_lock_counters", l.strong_lock_counters)?;
        check((1..=1 << 24).contains(&l.max_locks), "lock.max_locks", l.max_locks)?;
        check((1..=4096).contains(&l.max_backends), "lock.max_backends", l.max_backends)?;
        check((1..=3_600_000).contains(&l.deadlock_timeout_ms), "lock.deadlock_timeout_ms", l.deadlock_timeout_ms)?;
        check(l.lock_timeout_ms <= 3_600_000, "lock.lock_timeout_ms", l.lock_timeout_ms)?;
        let b = &self.buffer;
        check((16..=1 << 22).contains(&b.shared_buffers), "buffer.shared_buffers", b.shared_buffers)?;
        check(
            pow2_in(b.mapping_partitions, 1, 4096) && b.mapping_partitions <= b.shared_buffers,
            "buffer.mapping_partitions",
            b.mapping_partitions,
        )?;
        let s = &self.storage;
        check((1..=1024).contains(&s.extend_max_blocks), "storage.extend_max_blocks", s.extend_max_blocks)?;
        check((1..=1_000_000).contains(&s.max_open_files), "storage.max_open_files", s.max_open_files)?;
        let t = &self.txn;
        check(t.autovacuum_naptime_ms <= 3_600_000, "txn.autovacuum_naptime_ms", t.autovacuum_naptime_ms)?;
        check(
            t.autovacuum_vacuum_threshold <= i32::MAX as u64,
            "txn.autovacuum_vacuum_threshold",
            t.autovacuum_vacuum_threshold,
        )?;
        check(
            (0.0..=100.0).contains(&t.autovacuum_vacuum_scale_factor),
            "txn.autovacuum_vacuum_scale_factor",
            t.autovacuum_vacuum_scale_factor,
        )?;
        check((1..=1 << 40).contains(&t.undo_limit_bytes), "txn.undo_limit_bytes", t.undo_limit_bytes)?;
        check(t.version_store_limit_bytes <= 1 << 40, "txn.version_store_limit_bytes", t.version_store_limit_bytes)?;
        check((3..=1 << 62).contains(&t.start_xid), "txn.start_xid", t.start_xid)?;
        check((1..=1 << 20).contains(&t.interrupt_check_rows), "txn.interrupt_check_rows", t.interrupt_check_rows)?;
        check(t.sequence_block <= 1 << 20, "txn.sequence_block", t.sequence_block)?;
        let e = &self.executor;
        check((1..=1 << 24).contains(&e.hash_rows_estimate), "executor.hash_rows_estimate", e.hash_rows_estimate)?;
        check(self.server.poll_us <= 10_000, "server.poll_us", self.server.poll_us)?;
        self.wal.validate(|ok, key, value| check(ok, key, value))
    }

    /// The profile this configuration equals, if it is an unmodified preset.
    pub fn profile(&self) -> Option<Profile> {
        Profile::ALL.into_iter().find(|&p| *self == Config::preset(p))
    }
}

fn flatten(prefix: &str, value: &toml::Value, out: &mut Vec<(String, toml::Value)>) {
    match value {
        toml::Value::Table(t) => {
            for (k, v) in t {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten(&key, v, out);
            }
        }
        other => out.push((prefix.to_owned(), other.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_match_the_design_table() {
        let c = Config::preset(Profile::Classic);
        assert_eq!((c.lock.partitions, c.lock.fast_path_slots, c.lock.fast_path_slots_max), (16, 16, 16));
        assert_eq!(c.lwlock.policy, LwLockPolicy::Barging);
        assert_eq!(c.lock.fast_path_protocol, FastPathProtocol::Lwlock);
        assert_eq!(c.buffer.mapping_partitions, 128);
        assert_eq!(c.storage.extend, ExtendStrategy::Classic);
        assert_eq!(c.btree.leaf_insert_lock, LeafInsertLock::ShareThenExclusive);
        assert!(
            !c.btree.edge_precheck
                && !c.planner.index_prefilter
                && !c.memory.block_cache
                && !c.memory.lazy_scan_state
                && !c.buffer.lookup_hints
                && !c.buffer.huge_pages
        );
        let s = Config::default();
        assert_eq!((s.lock.partitions, s.lock.fast_path_slots, s.lock.fast_path_slots_max), (64, 1024, 16384));
        assert_eq!(s.lwlock.policy, LwLockPolicy::Fair);
        assert_eq!(s.lock.fast_path_protocol, FastPathProtocol::Lockfree);
        assert_eq!(s.buffer.mapping_partitions, 512);
        assert_eq!(s.storage.extend, ExtendStrategy::Bulk);
        assert_eq!(s.btree.leaf_insert_lock, LeafInsertLock::Exclusive);
        assert!(
            s.btree.edge_precheck
                && s.planner.index_prefilter
                && s.memory.block_cache
                && s.memory.lazy_scan_state
                && s.buffer.lookup_hints
                && s.buffer.huge_pages
        );
        assert_eq!((c.server.poll_us, s.server.poll_us), (0, 50));
        assert_eq!(s.lock.strong_lock_counters, 1024);
        assert_eq!(c.storage.max_open_files, s.storage.max_open_files);
        c.validate().unwrap();
        s.validate().unwrap();
        assert_eq!(s.profile(), Some(Profile::Scalable));
    }

    #[test]
    fn every_knob_is_settable_and_listed() {
        let c = Config::default();
        let tree = toml::Value::try_from(&c).unwrap();
        let mut leaves = Vec::new();
        flatten("", &tree, &mut leaves);
        let keys: Vec<_> = leaves.iter().map(|(k, _)| k.as_str()).collect();
        let listed: Vec<_> = KNOBS.iter().map(|k| k.key).collect();
        let (mut a, mut b) = (keys.clone(), listed.clone());
        a.sort();
        b.sort();
        assert_eq!(a, b, "KNOBS and Config disagree");
        for (key, value) in leaves {
            let mut c2 = c.clone();
            let text = match &value {
                toml::Value::String(s) => s.clone(),
                v => v.to_string(),
            };
            c2.set(&key, &text).unwrap_or_else(|e| panic!("{key}: {e}"));
            assert_eq!(c2, c);
        }
    }

    #[test]
    fn the_limits_are_knobs_with_postgresqls_defaults_in_both_profiles() {
        for p in Profile::ALL {
            let c = Config::preset(p);
            assert_eq!((c.txn.autovacuum_vacuum_threshold, c.txn.autovacuum_vacuum_scale_factor), (50, 0.2));
            assert_eq!((c.txn.undo_limit_bytes, c.txn.interrupt_check_rows), (256 << 20, 1024));
            assert_eq!(c.executor.hash_rows_estimate, 128);
        }
        let mut c = Config::default();
        c.set("txn.autovacuum_vacuum_scale_factor", "0.5").unwrap();
        c.set("txn.autovacuum_vacuum_scale_factor", "1").unwrap();
        assert_eq!(c.txn.autovacuum_vacuum_scale_factor, 1.0, "an integer is taken for a fraction");
        for bad in ["-0.1", "nan", "101"] {
            let err = c.set("txn.autovacuum_vacuum_scale_factor", bad).unwrap_err();
            assert!(err.to_string().contains("autovacuum_vacuum_scale_factor"), "{bad}: {err}");
        }
        assert!(c.set("txn.undo_limit_bytes", "0").is_err());
        c.set("txn.undo_limit_bytes", "1").unwrap();
        assert!(c.set("txn.start_xid", "2").is_err(), "below FirstNormalTransactionId");
        c.set("txn.start_xid", "4294966296").unwrap();
        assert!(c.set("txn.version_store_limit_bytes", "-1").is_err());
        assert!(c.set("txn.interrupt_check_rows", "0").is_err());
        assert!(c.set("executor.hash_rows_estimate", "0").is_err());
        let toml = c.to_toml_string();
        for key in [
            "undo_limit_bytes",
            "version_store_limit_bytes",
            "start_xid",
            "autovacuum_vacuum_threshold",
            "hash_rows_estimate",
            "interrupt_check_rows",
        ] {
            assert!(toml.contains(key), "`turnstile config` does not show {key}:\n{toml}");
        }
        assert_eq!(Config::from_toml_str(&toml).unwrap(), c, "the TOML reads back");
    }

    #[test]
    fn overrides_flip_single_knobs() {
        let mut c = Config::default();
        c.apply_override("lwlock.policy=barging").unwrap();
        c.apply_override("planner.index_prefilter = off").unwrap();
        c.apply_override("btree.leaf_insert_lock=share_then_exclusive").unwrap();
        c.apply_override("lock.fast_path_slots=16").unwrap();
        c.apply_override("lock.fast_path_protocol=lwlock").unwrap();
        assert_eq!(c.lock.fast_path_protocol, FastPathProtocol::Lwlock);
        assert!(c.set("lock.fast_path_protocol", "spinlock").unwrap_err().to_string().contains("lwlock or lockfree"));
        assert_eq!(c.lwlock.policy, LwLockPolicy::Barging);
        assert!(!c.planner.index_prefilter);
        assert_eq!(c.btree.leaf_insert_lock, LeafInsertLock::ShareThenExclusive);
        assert_eq!(c.lock.fast_path_slots, 16);
        assert_eq!(c.profile(), None);
    }

    #[test]
    fn bad_values_name_the_key_and_the_allowed_values_and_change_nothing() {
        let mut c = Config::default();
        let cases = [
            ("lock.partitions", "48", "power of two"),
            ("lock.partitions", "0", "power of two"),
            ("lock.fast_path_slots", "0", "16 ×"),
            ("lock.fast_path_slots", "40", "16 ×"),
            ("lock.fast_path_slots_max", "512", "from lock.fast_path_slots"),
            ("lwlock.policy", "handoff", "fair or barging"),
            ("storage.extend", "7", "classic or bulk"),
            ("planner.index_prefilter", "maybe", "true or false"),
            ("buffer.mapping_partitions", "-4", "power of two"),
            ("lock.max_backends", "0", "from 1"),
        ];
        for (key, value, allowed) in cases {
            let err = c.set(key, value).unwrap_err();
            let msg = err.to_string();
            assert!(msg.contains(key) && msg.contains(allowed), "{key}={value}: {msg}");
            assert_eq!(c, Config::default(), "{key}={value} changed the config");
        }
        let err = c.set("lock.partition", "64").unwrap_err();
        assert!(matches!(err, ConfigError::UnknownKey { .. }));
        assert!(err.to_string().contains("lock.partitions"), "{err}");
        assert!(matches!(c.apply_override("lock.partitions"), Err(ConfigError::Malformed(_))));
    }

    #[test]
    fn toml_starts_from_a_profile_and_rejects_unknown_keys() {
        let c = Config::from_toml_str("profile = \"classic\"\n[lock]\npartitions = 32\n").unwrap();
        assert_eq!(c.lock.partitions, 32);
        assert_eq!(c.lock.fast_path_slots, 16);
        assert_eq!(Config::from_toml_str(&Config::default().to_toml_string()).unwrap(), Config::default());
        let err = Config::from_toml_str("[lock]\nslots = 3\n").unwrap_err();
        assert!(err.to_string().contains("lock.slots"), "{err}");
        let err = Config::from_toml_str("profile = \"fast\"").unwrap_err();
        assert!(err.to_string().contains("classic or scalable"), "{err}");
        assert!(matches!(Config::from_toml_str("[lock"), Err(ConfigError::Toml(_))));
    }
}
