//! Victim selection: the free list of never-used (or invalidated) buffers,
//! then the clock sweep (PostgreSQL's `freelist.c`).
//!
//! The clock hand is one shared counter advanced by `fetch_add`; each
//! buffer it passes loses one unit of usage count unless pinned, and the
//! first unpinned buffer with usage count 0 is the victim, returned with
//! its header locked. The sweep is bounded as in PostgreSQL: a counter
//! starts at the pool size, is reset whenever a usage count drops, and
//! falls by one for every pinned buffer; reaching 0 means every buffer is
//! pinned, an error ([`crate::StorageError::AllBuffersPinned`]), not a hang.

use super::desc::{refcount, usage_count, BufferDesc, BufferId, HeaderGuard, LOCKED, USAGE_ONE};
use crate::error::{Result, StorageError};
use crate::sync::atomic::{AtomicU64, Ordering};
use crate::sync::Mutex;
use turnstile_sync::CachePadded;

/// The shared victim-selection state.
#[derive(Debug)]
pub(crate) struct Clock {
    /// Next buffer the hand looks at, modulo the pool size.
    hand: CachePadded<AtomicU64>,
    /// Buffers holding no page, handed out before the sweep runs.
    free: Mutex<Vec<BufferId>>,
}

impl Clock {
    pub(crate) fn new(buffers: usize) -> Clock {
        Clock { hand: CachePadded::new(AtomicU64::new(0)), free: Mutex::new((0..buffers as BufferId).rev().collect()) }
    }

    /// Returns an unused buffer to the free list.
    pub(crate) fn free(&self, id: BufferId) {
        self.free.lock().unwrap_or_else(|e| e.into_inner()).push(id);
    }

    /// A victim: an unpinned buffer with usage count 0, header locked.
    pub(crate) fn victim<'a>(&self, descs: &'a [CachePadded<BufferDesc>]) -> Result<(BufferId, HeaderGuard<'a>)> {
        loop {
            let Some(id) = self.free.lock().unwrap_or_else(|e| e.into_inner()).pop() else { break };
            // A freed buffer may have been picked up by the sweep since.
            if let Some(h) = descs[id as usize].lock_header_if_unpinned() {
                return Ok((id, h));
            }
        }
        let n = descs.len() as u64;
        let mut tries = n;
        loop {
            let id = (self.hand.fetch_add(1, Ordering::Relaxed) % n) as BufferId;
            let desc = &descs[id as usize];
            let state = desc.state.load(Ordering::Relaxed);
            if refcount(state) == 0 && state & LOCKED == 0 {
                if usage_count(state) > 0 {
                    // Lose the race quietly: someone else touched it.
                    let _ = desc.state.compare_exchange(state, state - USAGE_ONE, Ordering::Relaxed, Ordering::Relaxed);
                    tries = n;
                    continue;
                }
                if let Some(h) = desc.lock_header_if_unpinned() {
                    if usage_count(h.state) == 0 {
                        return Ok((id, h));
                    }
                    continue;
                }
            }
            tries -= 1;
            if tries == 0 {
                return Err(StorageError::AllBuffersPinned { shared_buffers: descs.len() });
            }
        }
    }
}
