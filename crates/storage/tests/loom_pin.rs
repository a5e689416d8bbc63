//! loom model of the buffer pin / eviction handshake (issue 4 §7): a
//! pinned buffer is never chosen as a victim, and a reader never gets a
//! buffer that was re-tagged under it.
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test --release
//! -p turnstile-storage --test loom_pin --target-dir target/loom`
#![cfg(loom)]

use loom::sync::Arc;
use loom::thread;
use turnstile_storage::page::{self, PageBuf};
use turnstile_storage::{
    BlockNumber, BufferPool, BufferTag, Fork, PageStore, PoolOptions, RelFileId, Result, StorageError,
};
use turnstile_sync::LwLockPolicy;

const REL: RelFileId = RelFileId::new(1, 1);

/// Every block's page holds one item: its own block number.
#[derive(Debug)]
struct StampStore;

impl PageStore for StampStore {
    fn read_page(&self, tag: BufferTag, p: &mut PageBuf) -> Result<()> {
        page::init(p, 0);
        page::add_item(p, &tag.block.to_le_bytes()).unwrap();
        page::set_checksum(p, tag.block);
        Ok(())
    }
    fn write_pages(&self, _first: BufferTag, _pages: &[&PageBuf]) -> Result<()> {
        Ok(())
    }
    fn nblocks(&self, _rel: RelFileId, _fork: Fork) -> Result<BlockNumber> {
        Ok(4)
    }
    fn extend(&self, _rel: RelFileId, _fork: Fork, _n: u32) -> Result<BlockNumber> {
        Ok(4)
    }
    fn sync_all(&self) -> Result<()> {
        Ok(())
    }
    fn file_name(&self, tag: BufferTag) -> String {
        tag.to_string()
    }
}

fn pool(buffers: usize) -> Arc<BufferPool> {
    let options = PoolOptions { shared_buffers: buffers, mapping_partitions: 1, policy: LwLockPolicy::Fair };
    Arc::new(BufferPool::with_options(options, std::sync::Arc::new(StampStore)).unwrap())
}

/// Reads `block` and checks, twice with a scheduling point between, that
/// the pinned buffer holds it. `AllBuffersPinned` is an allowed outcome.
fn read_and_check(pool: &BufferPool, block: BlockNumber) -> bool {
    let buf = match pool.read_buffer(BufferTag::new(REL, Fork::Main, block)) {
        Ok(buf) => buf,
        Err(StorageError::AllBuffersPinned { .. }) => return false,
        Err(e) => panic!("{e}"),
    };
    for _ in 0..2 {
        assert_eq!(buf.block(), block);
        let content = buf.lock_shared();
        assert_eq!(page::item(&content, 0), Some(&block.to_le_bytes()[..]), "buffer re-tagged under its pin");
        drop(content);
        thread::yield_now();
    }
    true
}

/// One buffer, two readers of different blocks: whichever pins first
/// keeps the page; the other either evicts it after the unpin or finds
/// every buffer pinned — never the wrong page.
#[test]
fn a_pinned_buffer_is_never_evicted() {
    loom::model(|| {
        let pool = pool(1);
        let other = {
            let pool = pool.clone();
            thread::spawn(move || read_and_check(&pool, 1))
        };
        let mine = read_and_check(&pool, 0);
        let theirs = other.join().unwrap();
        assert!(mine || theirs, "both readers failed: one must have found the buffer free");
    });
}

/// Two buffers, two readers of the same block racing a reader of another:
/// the block is mapped once (both get the same buffer) and nobody sees a
/// page of another block.
#[test]
fn a_lookup_never_sees_a_retagged_buffer() {
    loom::model(|| {
        let pool = pool(2);
        let same = {
            let pool = pool.clone();
            thread::spawn(move || read_and_check(&pool, 2))
        };
        let other = {
            let pool = pool.clone();
            thread::spawn(move || read_and_check(&pool, 3))
        };
        read_and_check(&pool, 2);
        same.join().unwrap();
        other.join().unwrap();
    });
}
