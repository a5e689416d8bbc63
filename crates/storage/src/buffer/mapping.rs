//! The buffer mapping table: block tag → buffer, split into
//! `buffer.mapping_partitions` partitions, each a hash map behind its own
//! `LwLock` (tranche `BufferMapping`, PostgreSQL's `BufMappingLock`s).
//!
//! The tag's [`BufferTag::hash_code`] picks the partition. Lookups take it
//! shared; inserting or removing an entry takes it exclusive. A backend
//! holds at most one partition lock at a time (the victim's old entry is
//! removed before the new one is inserted, as in PostgreSQL 16), so there
//! is no partition lock order to respect. Postgres Pro 2018 raised the partition
//! count from 128 to 512 to spread exactly these locks.
//!
//! With `buffer.lookup_hints`, a table of hints sits in front: slot
//! `hash(tag) mod n` remembers the buffer the tag was last found or mapped
//! in. A hint is only a guess — a lookup pins the buffer it names and keeps
//! the pin only if the buffer holds the tag (`read.rs`) — so it is read and
//! written with relaxed atomics and may be stale or overwritten by another
//! tag's.

use super::desc::BufferId;
use crate::rel::BufferTag;
use crate::sync::atomic::{AtomicU32, Ordering};
use hashbrown::HashMap;
use turnstile_sync::{CachePadded, LwLock, LwLockPolicy, Tranche};

/// One partition's entries.
pub(crate) type Partition = HashMap<BufferTag, BufferId>;

/// The partitioned table.
#[derive(Debug)]
pub(crate) struct BufferMapping {
    partitions: Box<[CachePadded<LwLock<Partition>>]>,
    /// The lookup hints (`buffer.lookup_hints`), a power of two of them;
    /// empty when off. [`NO_HINT`] in an unused slot.
    hints: Box<[AtomicU32]>,
}

/// A hint slot that names no buffer.
const NO_HINT: BufferId = BufferId::MAX;

impl BufferMapping {
    /// `partitions` partitions sized for `buffers` entries in all.
    /// With `hints`, a hint table of twice `buffers` slots (rounded up to
    /// a power of two), so a hot block rarely shares its slot.
    pub(crate) fn new(partitions: usize, buffers: usize, policy: LwLockPolicy, hints: bool) -> BufferMapping {
        let partitions = partitions.max(1);
        let per = (buffers / partitions + 1) * 2;
        let slots = if hints { (buffers.max(1) * 2).next_power_of_two() } else { 0 };
        BufferMapping {
            partitions: (0..partitions)
                .map(|_| CachePadded::new(LwLock::new(Tranche::BufferMapping, policy, HashMap::with_capacity(per))))
                .collect(),
            hints: (0..slots).map(|_| AtomicU32::new(NO_HINT)).collect(),
        }
    }

    /// The hint slot of `tag`, if hints are on.
    #[inline]
    fn hint_slot(&self, tag: &BufferTag) -> Option<&AtomicU32> {
        if self.hints.is_empty() {
            return None;
        }
        // The high bits: the partition is chosen by the low ones.
        let h = tag.hash_code();
        Some(&self.hints[((h >> 32) ^ h) as usize & (self.hints.len() - 1)])
    }

    /// The buffer `tag` was last seen in, if hints are on and the slot
    /// names one (a guess: the caller checks it).
    #[inline]
    pub(crate) fn hint(&self, tag: &BufferTag) -> Option<BufferId> {
        // Relaxed: the hint is checked after the pin, whose `Acquire` CAS
        // orders everything that matters.
        self.hint_slot(tag).map(|s| s.load(Ordering::Relaxed)).filter(|&id| id != NO_HINT)
    }

    /// Remembers that `tag` is in buffer `id` (no write if it already says
    /// so: hot blocks' slots stay shared in every cache).
    #[inline]
    pub(crate) fn remember(&self, tag: &BufferTag, id: BufferId) {
        if let Some(slot) = self.hint_slot(tag) {
            if slot.load(Ordering::Relaxed) != id {
                slot.store(id, Ordering::Relaxed);
            }
        }
    }

    /// The partition lock responsible for `tag`.
    #[inline]
    pub(crate) fn partition(&self, tag: &BufferTag) -> &LwLock<Partition> {
        &self.partitions[(tag.hash_code() % self.partitions.len() as u64) as usize]
    }

    /// Every partition lock, in order (for the invariant check).
    pub(crate) fn partitions(&self) -> impl Iterator<Item = &LwLock<Partition>> {
        self.partitions.iter().map(|p| &**p)
    }

    /// Number of partitions.
    pub(crate) fn len(&self) -> usize {
        self.partitions.len()
    }
}
