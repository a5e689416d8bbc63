//! The write-ahead log's knobs (`turnstile-storage`'s `wal` module), their
//! presets and their range rules: the `[wal]` section of [`super::Config`].

use super::{ConfigError, Profile};
use serde::{Deserialize, Serialize};
use std::fmt;

/// How a record gets into the WAL (issue 34: PostgreSQL 15 against
/// InnoDB 8.0 / Aether).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WalInsert {
    /// PostgreSQL 15: space reserved under one spinlock (`insertpos_lck`),
    /// the copy under one of `wal.insert_locks` `WALInsert` LWLocks, a
    /// flush under `WALWriteLock` taken with `LWLockAcquireOrWait`.
    Classic,
    /// No shared lock per record: reservation by one atomic `fetch_add`,
    /// a lock-free copy, the written prefix tracked by a link buffer
    /// (InnoDB 8.0), and a WAL writer thread that batches `fdatasync`s and
    /// wakes the committers each one covers (Aether's flush pipelining).
    Scalable,
}

impl WalInsert {
    /// The knob's value name.
    pub const fn name(self) -> &'static str {
        match self {
            WalInsert::Classic => "classic",
            WalInsert::Scalable => "scalable",
        }
    }
}

impl fmt::Display for WalInsert {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The write-ahead log (`turnstile-storage`'s `wal`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WalConfig {
    /// How records are inserted and flushed: `classic` or `scalable`.
    pub insert: WalInsert,
    /// `WALInsert` locks under `classic` (`NUM_XLOGINSERT_LOCKS`, 8).
    pub insert_locks: u32,
    /// Bytes of the in-memory WAL ring (`wal_buffers`; 16 MiB). A record
    /// may be at most half of it.
    pub buffers: u64,
    /// `fdatasync` the WAL when it is flushed (`fsync`; off only for tests:
    /// a crash of the machine may then lose or corrupt anything).
    pub fsync: bool,
    /// A commit waits until its commit record is durable
    /// (`synchronous_commit`); off returns at once and the WAL writer
    /// flushes within `wal.writer_delay_ms`.
    pub synchronous_commit: bool,
    /// Milliseconds between the WAL writer's background flushes
    /// (`wal_writer_delay`, 200).
    pub writer_delay_ms: u64,
    /// Microseconds a `classic` flusher sleeps before its flush when at
    /// least `wal.commit_siblings` other transactions write (`commit_delay`, 0).
    pub commit_delay_us: u64,
    /// Other active writers needed for `wal.commit_delay_us` to apply
    /// (`commit_siblings`, 5).
    pub commit_siblings: u32,
    /// Microseconds the `scalable` WAL writer may hold a commit's flush
    /// back to gather a second commit: about one recent `fdatasync`'s
    /// time, at most this, only while other transactions write and recent
    /// waits paid (0 = never; `classic` never does: it has `commit_delay`).
    #[serde(default = "group_wait_default")]
    pub group_wait_us: u64,
    /// Bytes of one WAL segment file (`wal_segment_size`, 16 MiB).
    pub segment_size: u64,
    /// A new segment is filled with written zeros (`wal_init_zero`, on), so
    /// that a later `fdatasync` of WAL writes flushes data only; off:
    /// `fallocate`, whose unwritten extents each first write converts (a
    /// metadata change every sync then pays).
    #[serde(default = "init_zero_default")]
    pub init_zero: bool,
    /// WAL bytes since the last checkpoint's redo point that start a
    /// checkpoint (`max_wal_size`, 1 GiB).
    pub max_wal_size: u64,
    /// Seconds between periodic checkpoints (`checkpoint_timeout`, 300).
    pub checkpoint_timeout_s: u64,
}

fn group_wait_default() -> u64 {
    1000
}

fn init_zero_default() -> bool {
    true
}

impl Default for WalConfig {
    fn default() -> Self {
        WalConfig::preset(Profile::Scalable)
    }
}

impl WalConfig {
    /// The preset of `profile`: only `insert` differs (`group_wait_us`
    /// applies to `scalable` insertion only).
    pub fn preset(profile: Profile) -> WalConfig {
        WalConfig {
            insert: if profile == Profile::Classic { WalInsert::Classic } else { WalInsert::Scalable },
            insert_locks: 8,
            buffers: 16 << 20,
            fsync: true,
            synchronous_commit: true,
            writer_delay_ms: 200,
            commit_delay_us: 0,
            commit_siblings: 5,
            group_wait_us: group_wait_default(),
            segment_size: 16 << 20,
            init_zero: init_zero_default(),
            max_wal_size: 1 << 30,
            checkpoint_timeout_s: 300,
        }
    }

    /// Checks every range rule; `check` builds the error naming the key.
    pub(super) fn validate(
        &self,
        check: impl Fn(bool, &str, &dyn fmt::Display) -> Result<(), ConfigError>,
    ) -> Result<(), ConfigError> {
        let pow2_in = |v: u64, lo: u64, hi: u64| v.is_power_of_two() && (lo..=hi).contains(&v);
        check((1..=128).contains(&self.insert_locks), "wal.insert_locks", &self.insert_locks)?;
        check(pow2_in(self.buffers, 64 << 10, 1 << 30), "wal.buffers", &self.buffers)?;
        check((1..=10_000).contains(&self.writer_delay_ms), "wal.writer_delay_ms", &self.writer_delay_ms)?;
        check(self.commit_delay_us <= 100_000, "wal.commit_delay_us", &self.commit_delay_us)?;
        check(self.commit_siblings <= 1000, "wal.commit_siblings", &self.commit_siblings)?;
        check(self.group_wait_us <= 100_000, "wal.group_wait_us", &self.group_wait_us)?;
        check(pow2_in(self.segment_size, 1 << 20, 1 << 30), "wal.segment_size", &self.segment_size)?;
        check(self.max_wal_size >= 2 * self.segment_size, "wal.max_wal_size", &self.max_wal_size)?;
        check((1..=86_400).contains(&self.checkpoint_timeout_s), "wal.checkpoint_timeout_s", &self.checkpoint_timeout_s)
    }
}
