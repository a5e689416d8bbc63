//! Writing every dirty buffer back (a checkpoint without a WAL), and
//! discarding a relation's buffers before a drop or a truncation.

use super::desc::{refcount, BufferDesc, BufferId, DIRTY, IO_ERROR, REFCOUNT_ONE, TAG_VALID, USAGE_MASK, VALID};
use super::guard::PinGuard;
use super::pool::BufferPool;
use super::victim::Checksums;
use crate::error::{Result, StorageError};
use crate::page::PageBuf;
use crate::rel::{BlockNumber, BufferTag, Fork, RelFileId};

impl BufferPool {
    /// Writes every dirty buffer back, then makes the store durable
    /// (`fsync`): a checkpoint without a WAL. Dirty buffers are taken in
    /// batches, sorted by block and written in runs (one `pwritev` per run
    /// of consecutive blocks), as PostgreSQL's checkpointer sorts its
    /// writes; a buffer whose content lock is busy is written alone
    /// afterwards, waiting for the lock while holding no other.
    pub fn flush_all(&self) -> Result<()> {
        const BATCH: usize = 1024;
        let mut next = 0;
        while next < self.descs.len() {
            let mut pinned = Vec::new();
            while next < self.descs.len() && pinned.len() < BATCH {
                let desc: &BufferDesc = &self.descs[next];
                next += 1;
                if desc.load() & (VALID | DIRTY) != (VALID | DIRTY) {
                    continue;
                }
                let mut h = desc.lock_header();
                if h.state & (VALID | DIRTY) != (VALID | DIRTY) {
                    continue;
                }
                h.state += REFCOUNT_ONE;
                drop(h);
                pinned.push(PinGuard(desc));
            }
            let mut locked = Vec::with_capacity(pinned.len());
            let mut busy = Vec::new();
            for pin in &pinned {
                match pin.0.content.try_lock_shared() {
                    Some(content) => locked.push((pin.0.tag(), pin.0, content)),
                    None => busy.push(pin.0),
                }
            }
            locked.sort_by_key(|(tag, _, _)| *tag);
            let items: Vec<(&BufferDesc, &PageBuf)> = locked.iter().map(|(_, d, c)| (*d, &***c)).collect();
            self.write_back_runs(&items, Checksums::Copy)?;
            drop(items);
            drop(locked);
            for desc in busy {
                let content = desc.content.lock_shared();
                self.write_back(desc, &content)?;
            }
            drop(pinned);
        }
        self.store.sync_all()
    }

    /// Discards every buffer of `rel`'s `fork` holding block `from` or a
    /// later one, dirty or not (before a truncation or a drop). Fails if
    /// one of them is pinned.
    pub fn drop_relation_buffers(&self, rel: RelFileId, fork: Fork, from: BlockNumber) -> Result<()> {
        let matches = |tag: &BufferTag| tag.rel == rel && tag.fork == fork && tag.block >= from;
        for (id, desc) in self.descs.iter().enumerate() {
            let tag = {
                let h = desc.lock_header();
                if h.state & TAG_VALID == 0 {
                    continue;
                }
                desc.tag()
            };
            if !matches(&tag) {
                continue;
            }
            let mut map = self.lock_mapping_exclusive(&tag);
            let mut h = desc.lock_header();
            if h.state & TAG_VALID == 0 || desc.tag() != tag {
                continue;
            }
            if refcount(h.state) != 0 {
                return Err(StorageError::BufferPinned { tag: tag.to_string() });
            }
            h.state &= !(TAG_VALID | VALID | DIRTY | IO_ERROR | USAGE_MASK);
            drop(h);
            map.remove(&tag);
            drop(map);
            self.clock.free(id as BufferId);
        }
        Ok(())
    }

    /// Truncates `rel`'s `fork` to `nblocks` blocks: drops the buffers of
    /// the cut blocks (failing if one is pinned), forgets them in the
    /// free-space map, then cuts the files. The caller holds a lock that
    /// keeps everyone else off the relation (AccessExclusive).
    pub fn truncate_relation(
        &self,
        smgr: &crate::Smgr,
        rel: RelFileId,
        fork: Fork,
        nblocks: BlockNumber,
    ) -> Result<()> {
        self.drop_relation_buffers(rel, fork, nblocks)?;
        if fork == Fork::Main {
            self.fsm.truncate(rel, nblocks);
        }
        smgr.truncate(rel, fork, nblocks)
    }
}
