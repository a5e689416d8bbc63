//! The relation-extension lock: a heavyweight lock of `turnstile-lock`
//! (tag [`LockTag::relation_extend`], mode `Exclusive`), as in PostgreSQL,
//! where `LockRelationForExtension` goes through the regular lock manager
//! — Freund 2020 argues for keeping it there and fixing what is done *under*
//! it instead.
//!
//! A backend's [`Backend`] is the locker ([`ExtensionLocker`] is
//! implemented for it, and for `&mut Backend` so a session keeps
//! ownership). The conditional attempt `classic` extension starts with
//! (`ConditionalLockRelationForExtension`) is a [`Wait::NoWait`] request.
//! The waiter count that sizes extensions is
//! [`LockManager::waiters`](turnstile_lock::LockManager::waiters)
//! (PostgreSQL's `RelationExtensionLockWaiterCount`), asked through the
//! locker before the lock or through the held guard ([`ExtensionGuard`]).
//!
//! ```
//! use turnstile_lock::LockManager;
//! use turnstile_storage::extend::ExtensionGuard;
//! use turnstile_storage::{ExtensionLocker, RelFileId};
//! let manager = LockManager::new(&turnstile_sync::Config::default()).unwrap();
//! let mut holder = manager.register().unwrap();
//! let mut other = manager.register().unwrap();
//! let rel = RelFileId::new(1, 16384);
//! let guard = holder.lock_extension(rel).unwrap();
//! assert_eq!(guard.waiters(), 0);
//! assert!(other.try_lock_extension(rel).unwrap().is_none(), "held: no wait, no lock");
//! drop(guard);
//! assert!(other.try_lock_extension(rel).unwrap().is_some());
//! assert_eq!(holder.extension_waiters(rel), 0);
//! ```

use crate::error::{Result, StorageError};
use crate::extend::{ExtensionGuard, ExtensionLocker};
use crate::rel::RelFileId;
use turnstile_lock::{Backend, LockError, LockMode, LockTag, ScopedLock, Wait};

/// The heavyweight lock tag of `rel`'s extension lock.
pub fn extension_tag(rel: RelFileId) -> LockTag {
    LockTag::relation_extend(rel.db, rel.rel)
}

impl ExtensionLocker for Backend {
    type Guard<'a> = ScopedLock<'a>;

    fn lock_extension(&mut self, rel: RelFileId) -> Result<ScopedLock<'_>> {
        self.lock_scoped(extension_tag(rel), LockMode::Exclusive, Wait::Block)
            .map_err(|e| StorageError::ExtensionLock { rel, source: Box::new(e) })
    }

    fn try_lock_extension(&mut self, rel: RelFileId) -> Result<Option<ScopedLock<'_>>> {
        match self.lock_scoped(extension_tag(rel), LockMode::Exclusive, Wait::NoWait) {
            Ok(guard) => Ok(Some(guard)),
            Err(LockError::NotAvailable { .. }) => Ok(None),
            Err(e) => Err(StorageError::ExtensionLock { rel, source: Box::new(e) }),
        }
    }

    fn extension_waiters(&mut self, rel: RelFileId) -> usize {
        self.waiters(&extension_tag(rel))
    }
}

impl ExtensionGuard for ScopedLock<'_> {
    fn waiters(&self) -> usize {
        ScopedLock::waiters(self)
    }
}

impl<T: ExtensionLocker + ?Sized> ExtensionLocker for &mut T {
    type Guard<'a>
        = T::Guard<'a>
    where
        Self: 'a;

    fn lock_extension(&mut self, rel: RelFileId) -> Result<T::Guard<'_>> {
        (**self).lock_extension(rel)
    }

    fn try_lock_extension(&mut self, rel: RelFileId) -> Result<Option<T::Guard<'_>>> {
        (**self).try_lock_extension(rel)
    }

    fn extension_waiters(&mut self, rel: RelFileId) -> usize {
        (**self).extension_waiters(rel)
    }
}
