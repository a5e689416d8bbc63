//! Ring strategies for bulk operations (PostgreSQL's
//! `BufferAccessStrategy`): a backend doing a bulk write reuses a small
//! ring of its own buffers instead of sweeping the whole pool, so a COPY
//! does not evict everyone else's pages — and so its victims are its own
//! dirty pages, which it must write back (Freund 2020's "FlushBuffer").
//!
//! A ring is private to one backend (`&mut`). Its slots remember buffers
//! this backend used; a slot's buffer is reused only if it is unpinned and
//! its usage count is at most 1 (nobody else found it useful), otherwise
//! the clock sweep supplies a new one that takes the slot.

use super::desc::{refcount, usage_count, BufferDesc, BufferId, HeaderGuard};
use turnstile_sync::CachePadded;

/// PostgreSQL's bulk-write ring: 16 MB.
pub const BULK_WRITE_RING_BYTES: usize = 16 << 20;

/// A backend's ring of buffers.
#[derive(Debug, Clone)]
pub struct Ring {
    slots: Vec<Option<BufferId>>,
    current: usize,
}

impl Ring {
    /// A ring of `buffers` slots (at least 1).
    pub fn new(buffers: usize) -> Ring {
        Ring { slots: vec![None; buffers.max(1)], current: 0 }
    }

    /// The bulk-write ring for a pool of `shared_buffers`: 16 MB, at most
    /// an eighth of the pool (PostgreSQL's rule).
    pub fn bulk_write(shared_buffers: usize) -> Ring {
        Ring::new((BULK_WRITE_RING_BYTES / crate::page::PAGE_SIZE).min(shared_buffers / 8))
    }

    /// Slots in the ring.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether the ring has no slots (never: at least 1).
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Advances to the next slot and returns its buffer, header locked, if
    /// it can be reused.
    pub(crate) fn next<'a>(&mut self, descs: &'a [CachePadded<BufferDesc>]) -> Option<(BufferId, HeaderGuard<'a>)> {
        self.current = (self.current + 1) % self.slots.len();
        let id = self.slots[self.current]?;
        let h = descs[id as usize].lock_header_if_unpinned()?;
        if refcount(h.state) == 0 && usage_count(h.state) <= 1 {
            Some((id, h))
        } else {
            None
        }
    }

    /// Puts `id` in the current slot (after the sweep supplied it).
    pub(crate) fn put(&mut self, id: BufferId) {
        self.slots[self.current] = Some(id);
    }
}
