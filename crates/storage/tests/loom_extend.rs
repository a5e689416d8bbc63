//! loom models of relation extension:
//!
//! * the bulk-extension handshake: the new block is mapped under the
//!   extension lock with its I/O lock held and initialised after the lock
//!   is released, so a concurrent reader of the new block waits for the
//!   initialisation and never sees the victim's old page;
//! * `classic`'s conditional attempt, wait and map recheck: two inserters
//!   never get the same block and the relation grows by exactly their two.
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test --release
//! -p turnstile-storage --test loom_extend --target-dir target/loom`
#![cfg(loom)]

use loom::sync::atomic::{AtomicU32, Ordering};
use loom::sync::{Arc, Mutex, MutexGuard};
use loom::thread;
use turnstile_storage::extend::ExtensionGuard;
use turnstile_storage::page::{self, PageBuf};
use turnstile_storage::{
    BlockNumber, BufferPool, BufferTag, Extender, ExtensionLocker, Fork, PageStore, PoolOptions, RelFileId, Result,
    StorageError,
};
use turnstile_sync::config::ExtendStrategy;
use turnstile_sync::LwLockPolicy;

const REL: RelFileId = RelFileId::new(1, 1);

/// A growing relation whose existing blocks each hold one item: their
/// block number.
#[derive(Debug)]
struct GrowStore {
    nblocks: AtomicU32,
}

impl PageStore for GrowStore {
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
        Ok(self.nblocks.load(Ordering::Acquire))
    }
    fn extend(&self, _rel: RelFileId, _fork: Fork, n: u32) -> Result<BlockNumber> {
        Ok(self.nblocks.fetch_add(n, Ordering::AcqRel))
    }
    fn sync_all(&self) -> Result<()> {
        Ok(())
    }
    fn file_name(&self, tag: BufferTag) -> String {
        tag.to_string()
    }
}

/// A two-buffer pool over `store` (one mapping partition, no lookup
/// hints): the smallest pool where a victim can be another block's buffer.
fn two_buffer_pool(store: std::sync::Arc<GrowStore>) -> BufferPool {
    let options = PoolOptions {
        shared_buffers: 2,
        mapping_partitions: 1,
        policy: LwLockPolicy::Fair,
        lookup_hints: false,
        huge_pages: false,
        prefault: false,
    };
    BufferPool::with_options(options, store).unwrap()
}

/// The extension lock as a loom mutex.
struct Locker(Arc<Mutex<()>>);

/// A held [`Locker`]; nobody is counted as waiting.
struct Held<'a> {
    _guard: MutexGuard<'a, ()>,
}

impl ExtensionGuard for Held<'_> {
    fn waiters(&self) -> usize {
        0
    }
}

impl ExtensionLocker for Locker {
    type Guard<'a> = Held<'a>;

    fn lock_extension(&mut self, _rel: RelFileId) -> Result<Held<'_>> {
        Ok(Held { _guard: self.0.lock().unwrap() })
    }

    fn try_lock_extension(&mut self, _rel: RelFileId) -> Result<Option<Held<'_>>> {
        Ok(self.0.try_lock().ok().map(|g| Held { _guard: g }))
    }

    fn extension_waiters(&mut self, _rel: RelFileId) -> usize {
        0
    }
}

/// A reader of the block being added sees either the relation's own page
/// (it mapped the block first, reading it from the store) or the
/// initialised empty page — never the victim's previous page (block 0's).
#[test]
fn a_reader_of_a_new_block_waits_for_its_initialisation() {
    loom::model(|| {
        let store = std::sync::Arc::new(GrowStore { nblocks: AtomicU32::new(1) });
        let pool = Arc::new(two_buffer_pool(store));
        // Block 0 occupies one buffer, so the extension's victim may be it.
        drop(pool.read_buffer(BufferTag::new(REL, Fork::Main, 0)).unwrap());
        let lock = Arc::new(Mutex::new(()));
        let extender = {
            let (pool, lock) = (pool.clone(), lock.clone());
            thread::spawn(move || {
                let mut ext = Extender::new(&pool, Locker(lock), ExtendStrategy::Bulk, 1);
                match ext.extend(REL) {
                    Ok(buf) => {
                        assert_eq!(buf.block(), 1);
                        let content = buf.lock_shared();
                        assert!(!page::is_new(&content));
                        assert_ne!(
                            page::item(&content, 0),
                            Some(&0u32.to_le_bytes()[..]),
                            "extender got block 0's page"
                        );
                    }
                    Err(StorageError::AllBuffersPinned { .. }) => {}
                    Err(e) => panic!("{e}"),
                }
            })
        };
        match pool.read_buffer(BufferTag::new(REL, Fork::Main, 1)) {
            Ok(buf) => {
                let content = buf.lock_shared();
                let own = page::item(&content, 0) == Some(&1u32.to_le_bytes()[..]);
                let initialised = !page::is_new(&content) && page::item_count(&content) == 0;
                assert!(own || initialised, "reader saw a page that is not block 1's");
            }
            Err(StorageError::BlockOutOfRange { .. } | StorageError::AllBuffersPinned { .. }) => {}
            Err(e) => panic!("{e}"),
        }
        extender.join().unwrap();
    });
}

/// Two `classic` inserters at once on an empty relation: one gets the lock
/// at its conditional attempt, the other waits and rechecks the map (empty:
/// a lone extension records nothing) — each ends with its own block, the
/// relation has exactly two, both initialised.
#[test]
fn classic_inserters_never_share_a_block() {
    loom::model(|| {
        let store = std::sync::Arc::new(GrowStore { nblocks: AtomicU32::new(0) });
        let pool = Arc::new(two_buffer_pool(store.clone()));
        let lock = Arc::new(Mutex::new(()));
        let insert = |pool: Arc<BufferPool>, lock: Arc<Mutex<()>>| {
            let mut ext = Extender::new(&pool, Locker(lock), ExtendStrategy::Classic, 1);
            let buf = ext.get_page(REL, page::MAX_ITEM_SIZE).unwrap();
            let mut content = buf.lock_exclusive();
            assert!(!page::is_new(&content));
            assert_eq!(page::item_count(&content), 0, "block {} handed out twice", buf.block());
            page::add_item(&mut content, &[7; page::MAX_ITEM_SIZE]).unwrap();
            buf.block()
        };
        let other = {
            let (pool, lock) = (pool.clone(), lock.clone());
            thread::spawn(move || insert(pool, lock))
        };
        let mine = insert(pool.clone(), lock);
        let theirs = other.join().unwrap();
        assert_ne!(mine, theirs);
        assert_eq!(store.nblocks.load(Ordering::Acquire), 2);
        assert_eq!(pool.fsm().pages(REL), 0);
    });
}
