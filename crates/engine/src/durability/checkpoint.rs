//! Checkpoints ([`crate::Engine::checkpoint`]) and the checkpointer
//! thread that takes them every `wal.checkpoint_timeout_s` or after
//! `wal.max_wal_size` bytes of WAL (see [`super`] for what a checkpoint
//! does and why writers go on meanwhile).
//!
//! A checkpoint ends by handing the allocator's free memory back to the
//! kernel ([`release_free_heap`]). glibc keeps freed memory resident in
//! the arena that freed it: with a backend thread per connection the
//! arenas are many, and each rises to the highest transient peak any of
//! its threads reached (a checkpoint's own batch and scratch pages, a
//! B-tree split's page images). Across a run that looks like resident
//! memory creeping up with the number of transactions, though the heap in
//! use is flat (the soak measures it). Once per checkpoint, off every hot
//! path, `malloc_trim` returns those free pages.

use super::control::Control;
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};
use turnstile_storage::page_log::RedoLog;
use turnstile_storage::wal::Lsn;
use turnstile_storage::StorageError;

/// How often the checkpointer looks at the clock and the WAL's size.
const POLL: Duration = Duration::from_millis(500);

impl Engine {
    /// `CHECKPOINT`: every change logged so far reaches the data files, the
    /// `control` file names the new starting point of recovery, and the
    /// WAL before it is removed. One runs at a time; writers go on.
    pub fn checkpoint(&self) -> Result<()> {
        self.checkpoint_as(false)
    }

    /// The checkpoint of a clean shutdown: as [`Engine::checkpoint`], and
    /// the control file says nothing changed after it (unlogged tables
    /// keep their rows at the next start). Call it when no session runs.
    pub fn close(&self) -> Result<()> {
        self.checkpoint_as(true)
    }

    fn checkpoint_as(&self, clean: bool) -> Result<()> {
        let _one = self.checkpointing().lock().map_err(|_| EngineError::Recovery("checkpoint lock poisoned".into()))?;
        let log = self.log();
        if log.data_unsafe() {
            return Err(StorageError::Wal(turnstile_storage::wal::WalError::Failed).into());
        }
        let redo = log.begin_checkpoint();
        // Sequence states logged before `redo` may be removed below: log
        // them again after it, durably.
        log.relog_sequences()?;
        // A write or fsync of a data file that failed is never retried as
        // if nothing happened (the kernel may have dropped the pages and
        // cleared the error): no checkpoint completes in this process any
        // more, so the redo point stays where the log still has every
        // change since, and the next start replays them.
        if let Err(e) = self.pool().flush_all().and_then(|()| self.smgr().sync_all()) {
            log.set_data_unsafe();
            return Err(e.into());
        }
        let undo_start = log.oldest_start().min(redo);
        Control { redo, undo_start, clean }
            .write(self.dir())
            .map_err(|e| EngineError::Recovery(format!("could not write the control file: {e}")))?;
        log.wal().remove_before(Lsn(undo_start)).map_err(StorageError::from)?;
        release_free_heap();
        Ok(())
    }
}

/// Returns the allocator's free pages to the kernel (glibc's
/// `malloc_trim(0)`: every arena, the middle of each heap too); nothing
/// where the allocator is not glibc's.
pub(crate) fn release_free_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists, under
    // each arena's lock; it takes no pointer from us.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Starts the checkpointer thread of `engine`; it ends with the engine.
pub(crate) fn start(engine: &Arc<Engine>) {
    let weak: Weak<Engine> = Arc::downgrade(engine);
    let spawned = std::thread::Builder::new().name("checkpointer".into()).spawn(move || {
        let mut last = Instant::now();
        loop {
            std::thread::sleep(POLL);
            let Some(engine) = weak.upgrade() else { return };
            let wal = &engine.config().wal;
            let written = engine.log().wal().insert_lsn().0.saturating_sub(engine.log().redo_point());
            let timeout = Duration::from_secs(wal.checkpoint_timeout_s);
            if last.elapsed() >= timeout || written >= wal.max_wal_size {
                if let Err(e) = engine.checkpoint() {
                    crate::error::log_error("checkpointer", &e);
                }
                last = Instant::now();
            }
        }
    });
    if let Err(e) = spawned {
        eprintln!("turnstile: checkpointer: could not start its thread: {e}");
    }
}
