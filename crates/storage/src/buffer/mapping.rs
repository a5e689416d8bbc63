//! The buffer mapping table: block tag → buffer, split into
//! `buffer.mapping_partitions` partitions, each a hash map behind its own
//! `LwLock` (tranche `BufferMapping`, PostgreSQL's `BufMappingLock`s).
//!
//! The tag's [`BufferTag::hash_code`] picks the partition. Lookups take it
//! shared; inserting or removing an entry takes it exclusive. A backend
//! holds at most one partition lock at a time (the victim's old entry is
//! removed before the new one is inserted, as in PostgreSQL 16), so there
//! is no partition lock order to respect. Seed 004 raised the partition
//! count from 128 to 512 to spread exactly these locks.

use super::desc::BufferId;
use crate::rel::BufferTag;
use hashbrown::HashMap;
use turnstile_sync::{CachePadded, LwLock, LwLockPolicy, Tranche};

/// One partition's entries.
pub(crate) type Partition = HashMap<BufferTag, BufferId>;

/// The partitioned table.
#[derive(Debug)]
pub(crate) struct BufferMapping {
    partitions: Box<[CachePadded<LwLock<Partition>>]>,
}

impl BufferMapping {
    /// `partitions` partitions sized for `buffers` entries in all.
    pub(crate) fn new(partitions: usize, buffers: usize, policy: LwLockPolicy) -> BufferMapping {
        let partitions = partitions.max(1);
        let per = (buffers / partitions + 1) * 2;
        BufferMapping {
            partitions: (0..partitions)
                .map(|_| CachePadded::new(LwLock::new(Tranche::BufferMapping, policy, HashMap::with_capacity(per))))
                .collect(),
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
