//! Where a split gets its new page: [`PageAllocator`], implemented by the
//! storage crate's per-backend [`Extender`] (free-space map first, then
//! relation extension under the relation-extension lock), so B-tree
//! growth goes through the same extension path — and the same lock — as
//! heap growth.

use turnstile_storage::page::MAX_ITEM_SIZE;
use turnstile_storage::{Extender, ExtensionLocker, PinnedBuffer, RelFileId};

/// Hands out empty pages of a relation, pinned. One per backend (not
/// shared): an insert borrows it mutably for the duration of the call.
pub trait PageAllocator<'p> {
    /// A pinned page of `rel`'s main fork that no one else uses: new (all
    /// zeros) or freshly initialised without items. The caller locks it
    /// exclusive and formats it.
    fn allocate(&mut self, rel: RelFileId) -> turnstile_storage::Result<PinnedBuffer<'p>>;
}

impl<'p, L: ExtensionLocker> PageAllocator<'p> for Extender<'p, L> {
    fn allocate(&mut self, rel: RelFileId) -> turnstile_storage::Result<PinnedBuffer<'p>> {
        // Asking for a whole empty page's worth of space: only spare pages
        // of a bulk extension qualify (B-tree pages are never recorded in
        // the free-space map), and a claim removes the page from the map,
        // so no two splits get the same page.
        self.get_page(rel, MAX_ITEM_SIZE)
    }
}
