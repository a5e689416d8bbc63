//! The relation-extension lock over `turnstile-lock` (filled in once the
//! lock manager's API exists), and a process-local stand-in for tests.

use crate::error::Result;
use crate::extend::ExtensionLocker;
use crate::rel::RelFileId;
use crate::sync::{Arc, Condvar, Mutex};
use hashbrown::HashMap;

/// A process-local extension lock table (a mutex and condition variable
/// per relation, with a waiter count).
#[derive(Debug, Default)]
pub struct LocalExtensionLocks {
    table: Mutex<HashMap<RelFileId, (bool, usize)>>,
    cv: Condvar,
}

impl LocalExtensionLocks {
    /// An empty table.
    pub fn new() -> Arc<LocalExtensionLocks> {
        Arc::new(LocalExtensionLocks::default())
    }
}

/// Held extension lock of [`LocalExtensionLocks`].
#[derive(Debug)]
pub struct LocalGuard<'a> {
    locks: &'a LocalExtensionLocks,
    rel: RelFileId,
}

impl Drop for LocalGuard<'_> {
    fn drop(&mut self) {
        let mut t = self.locks.table.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = t.get_mut(&self.rel) {
            e.0 = false;
        }
        drop(t);
        self.locks.cv.notify_all();
    }
}

impl ExtensionLocker for Arc<LocalExtensionLocks> {
    type Guard<'a> = LocalGuard<'a>;

    fn lock_extension(&mut self, rel: RelFileId) -> Result<LocalGuard<'_>> {
        let mut t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        let mut waiting = false;
        loop {
            let e = t.entry(rel).or_insert((false, 0));
            if !e.0 {
                e.0 = true;
                if waiting {
                    e.1 -= 1;
                }
                return Ok(LocalGuard { locks: self, rel });
            }
            if !waiting {
                e.1 += 1;
                waiting = true;
            }
            t = self.cv.wait(t).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn extension_waiters(&mut self, rel: RelFileId) -> usize {
        self.table.lock().unwrap_or_else(|e| e.into_inner()).get(&rel).map_or(0, |e| e.1)
    }
}
