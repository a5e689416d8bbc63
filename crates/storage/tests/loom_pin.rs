//! loom model of the buffer pin / eviction handshake: a
//! pinned buffer is never chosen as a victim, and a reader never gets a
//! buffer that was re-tagged under it — looking blocks up through the
//! mapping table alone, and through lookup hints first
//! (`buffer.lookup_hints`, checked under the header lock).
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

fn pool(buffers: usize, lookup_hints: bool) -> Arc<BufferPool> {
    let options = PoolOptions {
        shared_buffers: buffers,
        mapping_partitions: 1,
        policy: LwLockPolicy::Fair,
        lookup_hints,
        huge_pages: false,
        prefault: false,
    };
    Arc::new(BufferPool::with_options(options, std::sync::Arc::new(StampStore)).unwrap())
}

/// Reads `block` and checks that the pinned buffer holds it, `times`
/// times (unpinning in between). `AllBuffersPinned` is an allowed outcome.
fn read_and_check(pool: &BufferPool, block: BlockNumber, times: usize) -> usize {
    let mut ok = 0;
    for _ in 0..times {
        let buf = match pool.read_buffer(BufferTag::new(REL, Fork::Main, block)) {
            Ok(buf) => buf,
            Err(StorageError::AllBuffersPinned { .. }) => continue,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(buf.block(), block);
        let content = buf.lock_shared();
        assert_eq!(page::item(&content, 0), Some(&block.to_le_bytes()[..]), "buffer re-tagged under its pin");
        ok += 1;
    }
    ok
}

/// Models, with lookup hints off and on: a one-buffer pool where another
/// thread reads block 1 once, while this one reads block 0 `times` times.
/// `check` gets how many reads of block 0 and of block 1 succeeded.
fn two_readers(times: usize, check: fn(usize, usize)) {
    for hints in [false, true] {
        loom::model(move || {
            let pool = pool(1, hints);
            let other = {
                let pool = pool.clone();
                thread::spawn(move || read_and_check(&pool, 1, 1))
            };
            let mine = read_and_check(&pool, 0, times);
            check(mine, other.join().unwrap());
        });
    }
}

/// One buffer, two readers of different blocks: whichever pins first
/// keeps the page while pinned; the other either evicts it after the
/// unpin or finds every buffer pinned — never the wrong page.
#[test]
fn a_pinned_buffer_is_never_evicted() {
    two_readers(1, |mine, theirs| {
        assert!(mine + theirs >= 1, "both readers failed: one must have found the buffer free");
    });
}

/// One buffer, a reader that looks block 0 up twice (the second lookup
/// may hit or miss) racing a reader of block 1 that re-tags the buffer
/// whenever it is unpinned: a lookup never returns the re-tagged buffer
/// (`read_and_check` asserts it).
#[test]
fn a_lookup_never_sees_a_retagged_buffer() {
    two_readers(2, |_, _| {});
}
