//! Logged page changes through the buffer pool: the records rebuild every
//! page from its state at the redo point, a page's first change after the
//! redo point is logged whole, and no page reaches its file before the log
//! is durable up to its LSN.

mod common;

use common::{seed, Scratch};
use rand::{rngs::SmallRng, Rng, SeedableRng};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use turnstile_storage::page::{self, PageBuf, PAGE_SIZE};
use turnstile_storage::page_log::{self, ImageKind, RecordKind, RedoLog};
use turnstile_storage::{BufferPool, BufferTag, Fork, PoolOptions, RelFileId, Result, Smgr, SmgrOptions};

use turnstile_sync::LwLockPolicy;

/// A log kept in memory: what the test replays. `flushed` is how far it
/// was asked to be durable.
#[derive(Debug, Default)]
struct MemoryLog {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    records: Vec<(u64, RecordKind, Vec<u8>)>,
    end: u64,
    flushed: u64,
    redo_point: u64,
    full_pages: usize,
    /// Every insertion fails (the log has failed).
    failed: bool,
}

impl RedoLog for MemoryLog {
    fn insert(&self, kind: RecordKind, parts: &[&[u8]], full_pages: usize) -> Result<u64> {
        let mut i = self.inner.lock().unwrap();
        if i.failed {
            return Err(turnstile_storage::wal::WalError::Failed.into());
        }
        let data = parts.concat();
        i.end += 24 + data.len() as u64;
        let end = i.end;
        i.full_pages += full_pages;
        i.records.push((end, kind, data));
        Ok(end)
    }
    fn flush(&self, lsn: u64) -> Result<()> {
        let mut i = self.inner.lock().unwrap();
        assert!(lsn <= i.end, "a flush past the end of the log");
        i.flushed = i.flushed.max(lsn);
        Ok(())
    }
    fn redo_point(&self) -> u64 {
        self.inner.lock().unwrap().redo_point
    }

    fn redo_moved_since(&self, seen: u64) -> bool {
        self.redo_point() != seen
    }
}

fn pool(dir: &Scratch, buffers: usize, rel: RelFileId, blocks: u32) -> BufferPool {
    let smgr = Smgr::open_with(dir.path(), SmgrOptions::default(), Arc::new(turnstile_storage::io::OsIo)).unwrap();
    smgr.create(rel, Fork::Main).unwrap();
    smgr.extend(rel, Fork::Main, blocks).unwrap();
    drop(smgr);
    pool_reopened(dir, buffers)
}

/// A pool of `buffers` on the files already in `dir`.
fn pool_reopened(dir: &Scratch, buffers: usize) -> BufferPool {
    let io = Arc::new(turnstile_storage::io::OsIo);
    let smgr = Smgr::open_with(dir.path(), SmgrOptions::default(), io).unwrap();
    let options = PoolOptions {
        shared_buffers: buffers,
        mapping_partitions: 4,
        policy: LwLockPolicy::Fair,
        lookup_hints: true,
        huge_pages: false,
        prefault: false,
    };
    BufferPool::with_options(options, smgr).unwrap()
}

#[test]
fn records_rebuild_every_page_and_no_page_is_written_before_its_wal() {
    let seed = seed("page_log");
    let mut rng = SmallRng::seed_from_u64(seed);
    let dir = Scratch::new("page-log");
    // A pool smaller than the pages used: pages are evicted (written back)
    // while the test runs, each after its WAL.
    let rel = RelFileId::new(1, 16384);
    let blocks = 40u32;
    let pool = pool(&dir, 16, rel, blocks);
    let log = Arc::new(MemoryLog::default());
    pool.set_redo_log(log.clone()).unwrap();
    assert!(pool.set_redo_log(log.clone()).is_err(), "one log per pool");
    let mut model: HashMap<u32, Box<PageBuf>> = HashMap::new();
    for step in 0..2000 {
        if step == 1000 {
            // A checkpoint: every page's next change is logged whole.
            let end = log.inner.lock().unwrap().end;
            log.inner.lock().unwrap().redo_point = end;
        }
        let block = rng.random_range(0..blocks);
        let tag = BufferTag::new(rel, Fork::Main, block);
        let buf = pool.read_buffer(tag).unwrap();
        let a = pool.read_buffer(BufferTag::new(rel, Fork::Main, (block + 1) % blocks));
        let mut g = buf.lock_exclusive();
        g.begin_change();
        if page::is_new(&g) {
            page::init(&mut g, 0);
        }
        let item = vec![rng.random::<u8>(); rng.random_range(1..300)];
        if page::add_item(&mut g, &item).is_none() {
            page::init(&mut g, 0);
        }
        let kind = RecordKind { xid: step, rmgr: 1, info: 0 };
        let lsn = pool.log_change(kind, &mut [&mut g], b"data").unwrap();
        assert_eq!(page::lsn(&g), lsn);
        let mut copy: Box<PageBuf> = Box::new([0; PAGE_SIZE]);
        copy.copy_from_slice(&g[..]);
        model.insert(block, copy);
        drop(g);
        drop(a);
    }
    pool.flush_all().unwrap();
    let inner = log.inner.lock().unwrap();
    let max_lsn = model.values().map(|p| page::lsn(p)).max().unwrap();
    assert!(inner.flushed >= max_lsn, "pages were written with their WAL not durable");
    assert!(inner.full_pages >= 2 * model.len(), "first changes and first changes after the checkpoint are whole");
    // Redo from nothing: every page rebuilt from the records alone.
    let mut redone: HashMap<u32, Box<PageBuf>> = HashMap::new();
    for (end, _, data) in &inner.records {
        let (pages, rest) = page_log::decode(data).unwrap();
        assert_eq!(rest, b"data");
        for img in pages {
            let p = redone.entry(img.tag.block).or_insert_with(|| Box::new([0; PAGE_SIZE]));
            if img.kind == ImageKind::Delta {
                assert!(page::lsn(p) > 0, "a delta for a page with no earlier image");
            }
            page_log::redo_page(p, &img, *end).unwrap();
        }
    }
    for (b, p) in &model {
        assert!(redone[b][4..] == p[4..], "block {b} differs after redo (seed {seed})");
    }
}

/// A change whose record cannot be inserted (the log has failed, say on a
/// full WAL disk) is put back when its guard drops, whether it was to be
/// logged as a delta or whole: the page holds nothing the log lacks, so no
/// write-back can take an unlogged change (an uncommitted row, which
/// recovery would not know to take back) to the file.
#[test]
fn a_change_whose_record_fails_is_put_back_when_its_guard_drops() {
    let dir = Scratch::new("page-log-failed");
    let rel = RelFileId::new(1, 16384);
    let tag = BufferTag::new(rel, Fork::Main, 0);
    let pool = pool(&dir, 16, rel, 1);
    let log = Arc::new(MemoryLog::default());
    pool.set_redo_log(log.clone()).unwrap();
    let kind = RecordKind { xid: 1, rmgr: 1, info: 0 };
    let buf = pool.read_buffer(tag).unwrap();
    let mut g = buf.lock_exclusive();
    g.begin_change();
    page::init(&mut g, 0);
    page::add_item(&mut g, b"logged").unwrap();
    pool.log_change(kind, &mut [&mut g], b"").unwrap();
    let logged: Vec<u8> = g.to_vec();
    drop(g);
    // First as a delta (the page changed since the redo point), then as a
    // whole page (a checkpoint's redo point passed it).
    let end = log.inner.lock().unwrap().end;
    for redo_point in [0, end] {
        {
            let mut i = log.inner.lock().unwrap();
            i.redo_point = redo_point;
            i.failed = true;
        }
        let mut g = buf.lock_exclusive();
        g.begin_change();
        page::add_item(&mut g, b"never logged").unwrap();
        assert!(pool.log_change(kind, &mut [&mut g], b"").is_err());
        drop(g);
        assert!(buf.lock_shared()[..] == logged[..], "redo point {redo_point}: the unlogged change stayed in the page");
    }
    log.inner.lock().unwrap().failed = false;
    drop(buf);
    pool.flush_all().unwrap();
    drop(pool);
    let pool = pool_reopened(&dir, 16);
    let buf = pool.read_buffer(tag).unwrap();
    let p = buf.lock_shared();
    assert_eq!(
        (page::item_count(&p), page::item(&p, 0)),
        (1, Some(&b"logged"[..])),
        "the file holds only the logged change"
    );
}
