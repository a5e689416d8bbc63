//! Sequence states in the WAL (PostgreSQL's `xl_seq_rec`): the SQL
//! layer's sequences are kept outside the engine's pages, but the state a
//! sequence has logged ahead of the values it hands out is written here,
//! so that no value is handed out twice after a crash, even one that lost
//! the sequence's file.
//!
//! - [`EngineLog::log_sequence`] inserts a [`records::RMGR_SEQ`] record of
//!   the state and flushes the log up to it before returning: the caller
//!   hands out no value beyond a state that is not durable. (PostgreSQL
//!   flushes `nextval`'s record with the commit that used it; flushing
//!   at once is as safe, and costs one flush per logged-ahead window: 32
//!   values under `classic`, 32 blocks under `scalable`.)
//! - Each checkpoint logs the newest state of every sequence again after
//!   its redo point ([`EngineLog::relog_sequences`]), so removing the log
//!   before it loses none.
//! - Recovery keeps the last state logged for each key
//!   ([`EngineLog::recovered_sequences`]); the SQL layer resumes each
//!   sequence from it.
//!
//! A key is the SQL layer's name for a sequence (`"<db>/<name>"`);
//! [`EngineLog::forget_sequence`] stops re-logging a dropped one.

use super::records;
use super::EngineLog;
use crate::mvcc::Xid;
use std::collections::HashMap;
use std::sync::Mutex;
use turnstile_storage::wal::WalRecord;
use turnstile_storage::StorageError;

/// The sequence states the log knows.
#[derive(Debug, Default)]
pub(crate) struct SequenceStates {
    /// Each key's newest state (re-logged at each checkpoint).
    latest: Mutex<HashMap<String, u64>>,
    /// What recovery found.
    recovered: HashMap<String, u64>,
}

impl SequenceStates {
    /// The states recovery found in the log.
    pub(crate) fn recovered(recovered: HashMap<String, u64>) -> SequenceStates {
        SequenceStates { latest: Mutex::new(recovered.clone()), recovered }
    }

    fn latest(&self) -> std::sync::MutexGuard<'_, HashMap<String, u64>> {
        self.latest.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl EngineLog {
    /// Logs sequence `key`'s state `state` and returns once it is durable.
    pub fn log_sequence(&self, key: &str, state: u64) -> Result<(), StorageError> {
        let end = self.insert_sequence(key, state)?;
        self.wal().flush(end).map_err(StorageError::from)?;
        self.sequences.latest().insert(key.to_owned(), state);
        Ok(())
    }

    /// Stops re-logging sequence `key` (dropped).
    pub fn forget_sequence(&self, key: &str) {
        self.sequences.latest().remove(key);
    }

    /// The last state logged for each sequence, as recovery found them.
    pub fn recovered_sequences(&self) -> &HashMap<String, u64> {
        &self.sequences.recovered
    }

    /// Logs every sequence's newest state again and flushes them (a
    /// checkpoint, after its redo point, before the log ahead of it goes).
    pub(crate) fn relog_sequences(&self) -> Result<(), StorageError> {
        let states: Vec<(String, u64)> = self.sequences.latest().iter().map(|(k, v)| (k.clone(), *v)).collect();
        let mut end = None;
        for (key, state) in states {
            end = Some(self.insert_sequence(&key, state)?);
        }
        match end {
            Some(end) => self.wal().flush(end).map_err(StorageError::from),
            None => Ok(()),
        }
    }

    fn insert_sequence(&self, key: &str, state: u64) -> Result<turnstile_storage::wal::Lsn, StorageError> {
        let data = records::encode_seq_log(key, state);
        let parts: [&[u8]; 1] = [&data];
        let rec = WalRecord { xid: 0 as Xid, rmgr: records::RMGR_SEQ, info: records::SeqOp::Log as u8, parts: &parts };
        self.wal().insert(&rec).map_err(StorageError::from)
    }
}
