//! The buffer pool over real files: hits and misses, dirty write-back,
//! checksums, the all-pinned error, fault injection, and a concurrent
//! pin / evict stress test with an invariant checker. Every test ends (and
//! the stress test's threads are joined) at a quiescent point where the
//! pool's own `check_invariants` runs.

mod common;

use common::{payload, seed, Scratch};
use rand::{rngs::SmallRng, Rng, SeedableRng};
use std::sync::Arc;
use turnstile_storage::fault::{FaultyIo, IoFault, IoOp};
use turnstile_storage::page;
use turnstile_storage::{
    BufferPool, BufferTag, FileError, Fork, PageError, PoolOptions, RelFileId, Ring, Smgr, SmgrOptions, StorageError,
};
use turnstile_sync::LwLockPolicy;

fn pool(smgr: &Arc<Smgr>, buffers: usize, partitions: usize) -> BufferPool {
    let options = PoolOptions {
        shared_buffers: buffers,
        mapping_partitions: partitions,
        policy: LwLockPolicy::Fair,
        lookup_hints: true,
        huge_pages: true,
        // Faulted in at start: the pool works the same.
        prefault: true,
    };
    BufferPool::with_options(options, smgr.clone()).unwrap()
}

fn smgr(dir: &Scratch, io: Arc<FaultyIo>) -> Arc<Smgr> {
    Smgr::open_with(dir.path(), SmgrOptions { segment_blocks: 64, max_open_files: 16, ..Default::default() }, io)
        .unwrap()
}

/// Writes `payload(writer, block)` as the single item of `block`.
fn fill(pool: &BufferPool, tag: BufferTag, writer: u32) {
    let buf = pool.read_buffer(tag).unwrap();
    let mut page = buf.lock_exclusive();
    page::init(&mut page, 0);
    page::add_item(&mut page, &payload(writer, tag.block, 1000)).unwrap();
    page.mark_dirty();
}

fn check(pool: &BufferPool, tag: BufferTag, writer: u32) {
    let buf = pool.read_buffer(tag).unwrap();
    let page = buf.lock_shared();
    assert_eq!(page::item(&page, 0), Some(&payload(writer, tag.block, 1000)[..]), "{tag}");
}

#[test]
fn dirty_victims_are_written_back_and_read_again_intact() {
    let dir = Scratch::new("writeback");
    let smgr = smgr(&dir, Arc::new(FaultyIo::new()));
    let rel = RelFileId::new(1, 1);
    smgr.create(rel, Fork::Main).unwrap();
    smgr.extend(rel, Fork::Main, 100).unwrap();
    let pool = pool(&smgr, 16, 4);
    for b in 0..100 {
        fill(&pool, BufferTag::new(rel, Fork::Main, b), 1);
    }
    pool.check_invariants();
    let s = pool.stats();
    assert_eq!(s.misses, 100);
    assert_eq!(s.evictions, 100 - 16);
    assert_eq!(s.dirty_writebacks, 100 - 16, "{s:?}");
    check(&pool, BufferTag::new(rel, Fork::Main, 99), 1);
    assert_eq!(pool.stats().hits, 1);
    for b in 0..100 {
        check(&pool, BufferTag::new(rel, Fork::Main, b), 1);
    }
    pool.flush_all().unwrap();
    // A new pool reads everything from disk, verifying every checksum.
    let fresh = self::pool(&smgr, 8, 2);
    for b in 0..100 {
        check(&fresh, BufferTag::new(rel, Fork::Main, b), 1);
    }
    assert!(fresh.stats().mapping_acquisitions >= 200, "{:?}", fresh.stats());
    pool.check_invariants();
    fresh.check_invariants();
}

#[test]
fn a_corrupted_page_is_reported_with_relation_fork_block_and_file() {
    let dir = Scratch::new("corrupt");
    let smgr = smgr(&dir, Arc::new(FaultyIo::new()));
    let rel = RelFileId::new(3, 77);
    smgr.create(rel, Fork::Main).unwrap();
    smgr.extend(rel, Fork::Main, 70).unwrap();
    let pool = pool(&smgr, 16, 4);
    for b in [5, 66] {
        fill(&pool, BufferTag::new(rel, Fork::Main, b), 2);
    }
    pool.flush_all().unwrap();
    // Flip one byte of block 66 (segment 1, block 2 in it) on disk.
    let file = dir.path().join("base/3/77.1");
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[2 * page::PAGE_SIZE + 4000] ^= 0x01;
    std::fs::write(&file, bytes).unwrap();
    let fresh = self::pool(&smgr, 16, 4);
    check(&fresh, BufferTag::new(rel, Fork::Main, 5), 2);
    let err = fresh.read_buffer(BufferTag::new(rel, Fork::Main, 66)).unwrap_err();
    match &err {
        StorageError::Page(PageError::ChecksumMismatch { rel: r, fork, block, file, .. }) => {
            assert_eq!((*r, *fork, *block), (rel, Fork::Main, 66));
            assert!(file.ends_with("base/3/77.1"), "{file}");
        }
        other => panic!("expected a checksum error, got {other:?}"),
    }
    let msg = err.to_string();
    assert!(msg.contains("block 66") && msg.contains("base/3/77") && msg.contains("main"), "{msg}");
    // Still an error on retry (the bad page is not cached as valid).
    assert!(fresh.read_buffer(BufferTag::new(rel, Fork::Main, 66)).is_err());
    fresh.check_invariants();
}

#[test]
fn every_buffer_pinned_is_a_clear_error_not_a_hang() {
    let dir = Scratch::new("pinned");
    let smgr = smgr(&dir, Arc::new(FaultyIo::new()));
    let rel = RelFileId::new(1, 2);
    smgr.create(rel, Fork::Main).unwrap();
    smgr.extend(rel, Fork::Main, 10).unwrap();
    let pool = pool(&smgr, 4, 2);
    let pins: Vec<_> = (0..4).map(|b| pool.read_buffer(BufferTag::new(rel, Fork::Main, b)).unwrap()).collect();
    let err = pool.read_buffer(BufferTag::new(rel, Fork::Main, 4)).unwrap_err();
    assert!(matches!(err, StorageError::AllBuffersPinned { shared_buffers: 4 }), "{err:?}");
    assert!(err.to_string().contains("shared_buffers"), "{err}");
    // A pinned block is still readable (a hit), and unpinning frees room.
    assert_eq!(pool.read_buffer(BufferTag::new(rel, Fork::Main, 2)).unwrap().block(), 2);
    drop(pins);
    pool.check_invariants();
    assert_eq!(pool.read_buffer(BufferTag::new(rel, Fork::Main, 4)).unwrap().block(), 4);
    pool.check_invariants();
}

/// Issue §6: a write-back that fails with ENOSPC or EIO returns an error
/// naming the file; every page flushed before it reads back with a valid
/// checksum and its content, and the failed page is still dirty in the
/// pool and written by the next flush.
#[test]
fn failed_writes_name_the_file_and_earlier_pages_survive() {
    for errno in [IoFault::ENOSPC, IoFault::EIO] {
        let dir = Scratch::new("writefault");
        let io = Arc::new(FaultyIo::new());
        let smgr = smgr(&dir, io.clone());
        let rel = RelFileId::new(4, 40);
        smgr.create(rel, Fork::Main).unwrap();
        smgr.extend(rel, Fork::Main, 80).unwrap();
        let pool = pool(&smgr, 64, 8);
        // Every other block, so that each page is a write of its own.
        let blocks: Vec<u32> = (0..40).map(|i| i * 2).collect();
        for &b in &blocks {
            fill(&pool, BufferTag::new(rel, Fork::Main, b), 3);
        }
        // The 25th page write fails, half written.
        io.inject(IoFault::new(IoOp::Write, io.calls(IoOp::Write) + 25, errno).partial());
        let err = pool.flush_all().unwrap_err();
        let expected_name = match (&err, errno) {
            (StorageError::File(FileError::NoSpace { path, .. }), IoFault::ENOSPC) => path.clone(),
            (StorageError::File(FileError::Io { path, .. }), IoFault::EIO) => path.clone(),
            (other, _) => panic!("errno {errno}: unexpected {other:?}"),
        };
        assert!(expected_name.ends_with("base/4/40"), "{expected_name:?}");
        assert!(err.to_string().contains("base/4/40"), "{err}");
        pool.check_invariants();
        // Pages flushed before the failure are on disk, intact.
        let fresh = self::pool(&smgr, 64, 8);
        let mut intact = 0;
        for &b in &blocks {
            match fresh.read_buffer(BufferTag::new(rel, Fork::Main, b)) {
                Ok(buf) => {
                    let page = buf.lock_shared();
                    if page::is_new(&page) {
                        continue; // not flushed yet
                    }
                    assert_eq!(page::item(&page, 0), Some(&payload(3, b, 1000)[..]), "block {b}");
                    intact += 1;
                }
                // Only the page whose write was torn may fail its checksum.
                Err(StorageError::Page(PageError::ChecksumMismatch { block, .. })) => assert_eq!(block, b),
                Err(e) => panic!("block {b}: {e}"),
            }
        }
        assert_eq!(intact, 24, "errno {errno}");
        // The failed page stayed dirty; a retry completes the flush.
        pool.flush_all().unwrap();
        pool.check_invariants();
        let fresh = self::pool(&smgr, 64, 8);
        for &b in &blocks {
            check(&fresh, BufferTag::new(rel, Fork::Main, b), 3);
        }
    }
}

/// A failed run write (consecutive dirty pages in one `pwritev`) leaves
/// every page of the run dirty; the retry writes them all.
#[test]
fn a_failed_write_run_keeps_all_its_pages_dirty() {
    let dir = Scratch::new("runfault");
    let io = Arc::new(FaultyIo::new());
    let smgr = smgr(&dir, io.clone());
    let rel = RelFileId::new(4, 41);
    smgr.create(rel, Fork::Main).unwrap();
    smgr.extend(rel, Fork::Main, 30).unwrap();
    let pool = pool(&smgr, 64, 8);
    for b in 0..30 {
        fill(&pool, BufferTag::new(rel, Fork::Main, b), 4);
    }
    let writes = io.calls(IoOp::Write);
    io.inject(IoFault::new(IoOp::Write, writes + 1, IoFault::EIO).partial());
    assert!(matches!(pool.flush_all(), Err(StorageError::File(FileError::Io { .. }))));
    assert_eq!(io.calls(IoOp::Write), writes + 1, "30 consecutive pages are one pwritev");
    pool.check_invariants();
    pool.flush_all().unwrap();
    pool.check_invariants();
    let fresh = self::pool(&smgr, 64, 8);
    for b in 0..30 {
        check(&fresh, BufferTag::new(rel, Fork::Main, b), 4);
    }
}

#[test]
fn a_ring_keeps_a_bulk_write_inside_its_own_buffers() {
    let dir = Scratch::new("ring");
    let smgr = smgr(&dir, Arc::new(FaultyIo::new()));
    let (hot, bulk) = (RelFileId::new(1, 10), RelFileId::new(1, 11));
    for r in [hot, bulk] {
        smgr.create(r, Fork::Main).unwrap();
        smgr.extend(r, Fork::Main, 200).unwrap();
    }
    let pool = pool(&smgr, 64, 8);
    for b in 0..32 {
        fill(&pool, BufferTag::new(hot, Fork::Main, b), 1);
    }
    let mut ring = Ring::new(8);
    for b in 0..200 {
        let buf = pool.read_buffer_with(BufferTag::new(bulk, Fork::Main, b), Some(&mut ring)).unwrap();
        let mut page = buf.lock_exclusive();
        page::init(&mut page, 0);
        page.mark_dirty();
    }
    let before = pool.stats();
    for b in 0..32 {
        check(&pool, BufferTag::new(hot, Fork::Main, b), 1);
    }
    assert_eq!(pool.stats().hits - before.hits, 32, "the bulk write evicted the hot pages");
    pool.check_invariants();
}

/// Many threads read, modify and re-read random blocks of a relation much
/// larger than the pool, so pins race evictions constantly. Invariant
/// checked inside every pin: the buffer holds the block asked for (the
/// page's item names it) and its counter only grows.
#[test]
fn concurrent_pin_and_evict_stress() {
    let seed = seed("concurrent_pin_and_evict_stress");
    let dir = Scratch::new("stress");
    let smgr = smgr(&dir, Arc::new(FaultyIo::new()));
    let rel = RelFileId::new(9, 9);
    const BLOCKS: u32 = 200;
    smgr.create(rel, Fork::Main).unwrap();
    smgr.extend(rel, Fork::Main, BLOCKS).unwrap();
    let pool = pool(&smgr, 24, 4);
    for b in 0..BLOCKS {
        let buf = pool.read_buffer(BufferTag::new(rel, Fork::Main, b)).unwrap();
        let mut page = buf.lock_exclusive();
        page::init(&mut page, 0);
        page::add_item(&mut page, &[b.to_le_bytes(), 0u32.to_le_bytes()].concat()).unwrap();
        page.mark_dirty();
    }
    let threads = 6;
    let ops = 3000;
    let increments: Vec<Vec<u32>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let pool = &pool;
                s.spawn(move || {
                    let mut rng = SmallRng::seed_from_u64(seed ^ (t as u64) << 32);
                    let mut mine = vec![0u32; BLOCKS as usize];
                    let mut held = Vec::new();
                    for _ in 0..ops {
                        let b = rng.random_range(0..BLOCKS);
                        let buf = match pool.read_buffer(BufferTag::new(rel, Fork::Main, b)) {
                            Ok(buf) => buf,
                            Err(StorageError::AllBuffersPinned { .. }) => {
                                held.clear();
                                continue;
                            }
                            Err(e) => panic!("seed {seed}: {e}"),
                        };
                        assert_eq!(buf.block(), b);
                        if rng.random_bool(0.5) {
                            let mut page = buf.lock_exclusive();
                            let item = page::item(&page, 0).unwrap();
                            assert_eq!(&item[..4], &b.to_le_bytes(), "seed {seed}: buffer holds the wrong block");
                            let n = u32::from_le_bytes(item[4..8].try_into().unwrap()) + 1;
                            let lp = page::HEADER_SIZE;
                            let off = u16::from_le_bytes([page[lp], page[lp + 1]]) as usize;
                            page[off + 4..off + 8].copy_from_slice(&n.to_le_bytes());
                            page.mark_dirty();
                            mine[b as usize] += 1;
                        } else {
                            let page = buf.lock_shared();
                            assert_eq!(&page::item(&page, 0).unwrap()[..4], &b.to_le_bytes(), "seed {seed}");
                        }
                        // Keep a few pins for a while so victims must skip them.
                        if rng.random_bool(0.1) {
                            held.push(buf);
                            if held.len() > 2 {
                                drop(held.remove(0));
                            }
                        }
                    }
                    mine
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    pool.check_invariants();
    pool.flush_all().unwrap();
    pool.check_invariants();
    let fresh = self::pool(&smgr, 16, 4);
    for b in 0..BLOCKS {
        let want: u32 = increments.iter().map(|m| m[b as usize]).sum();
        let buf = fresh.read_buffer(BufferTag::new(rel, Fork::Main, b)).unwrap();
        let page = buf.lock_shared();
        let item = page::item(&page, 0).unwrap();
        assert_eq!(u32::from_le_bytes(item[4..8].try_into().unwrap()), want, "seed {seed}: lost update on block {b}");
    }
    fresh.check_invariants();
    let s = pool.stats();
    assert!(s.evictions > 1000 && s.dirty_writebacks > 0, "{s:?}");
    assert!(s.hint_hits > 0 && s.hint_hits < s.hits, "hits found through hints, and stale hints: {s:?}");
}

/// A block read again is found through its lookup hint (counted as a hint
/// hit, which returns before the mapping table); a hint left stale by an
/// eviction (its buffer now holds another block) is noticed once the
/// buffer is pinned, and the lookup goes through the mapping table to the
/// right block (`check` fails on a wrong page).
#[test]
fn lookup_hints_hit_without_the_mapping_and_stale_ones_fall_through() {
    let dir = Scratch::new("hints");
    let smgr = smgr(&dir, Arc::new(FaultyIo::new()));
    let rel = RelFileId::new(9, 10);
    smgr.create(rel, Fork::Main).unwrap();
    smgr.extend(rel, Fork::Main, 8).unwrap();
    let pool = pool(&smgr, 2, 1);
    let tag = |b| BufferTag::new(rel, Fork::Main, b);
    for b in 0..8 {
        fill(&pool, tag(b), 1);
    }
    // Blocks 6 and 7 are in the two buffers now; 7 is hinted.
    let before = pool.stats();
    check(&pool, tag(7), 1);
    let after = pool.stats();
    // (The mapping tranche's counters are process-wide, shared with the
    // other tests of this binary: a hint hit returns before the mapping.)
    assert_eq!(after.hint_hits - before.hint_hits, 1, "{after:?}");
    // Evict both: block 7's hint now names a buffer holding block 0 or 1.
    check(&pool, tag(0), 1);
    check(&pool, tag(1), 1);
    let before = pool.stats();
    check(&pool, tag(7), 1);
    let after = pool.stats();
    assert_eq!((after.hint_hits - before.hint_hits, after.misses - before.misses), (0, 1), "{after:?}");
    pool.check_invariants();
}

#[test]
fn truncation_drops_buffers_and_refuses_pinned_ones() {
    let dir = Scratch::new("truncate");
    let smgr = smgr(&dir, Arc::new(FaultyIo::new()));
    let rel = RelFileId::new(6, 60);
    smgr.create(rel, Fork::Main).unwrap();
    smgr.extend(rel, Fork::Main, 20).unwrap();
    let pool = pool(&smgr, 32, 4);
    for b in 0..20 {
        fill(&pool, BufferTag::new(rel, Fork::Main, b), 6);
    }
    pool.fsm().record_many(rel, 0..20, 500);
    let pinned = pool.read_buffer(BufferTag::new(rel, Fork::Main, 15)).unwrap();
    let err = pool.truncate_relation(&smgr, rel, Fork::Main, 10).unwrap_err();
    assert!(matches!(err, StorageError::BufferPinned { .. }), "{err:?}");
    drop(pinned);
    pool.check_invariants();
    pool.truncate_relation(&smgr, rel, Fork::Main, 10).unwrap();
    pool.check_invariants();
    assert_eq!(smgr.nblocks(rel, Fork::Main).unwrap(), 10);
    assert_eq!(pool.fsm().pages(rel), 10);
    assert!(matches!(
        pool.read_buffer(BufferTag::new(rel, Fork::Main, 12)),
        Err(StorageError::BlockOutOfRange { nblocks: 10, .. })
    ));
    // The dropped dirty pages are not written back over the cut file.
    pool.flush_all().unwrap();
    assert_eq!(std::fs::metadata(dir.path().join("base/6/60")).unwrap().len(), 10 * page::PAGE_SIZE as u64);
    // Re-extending gives zero pages, not the dropped contents.
    smgr.extend(rel, Fork::Main, 10).unwrap();
    let buf = pool.read_buffer(BufferTag::new(rel, Fork::Main, 12)).unwrap();
    assert!(page::is_new(&buf.lock_shared()));
    drop(buf);
    check(&pool, BufferTag::new(rel, Fork::Main, 9), 6);
    pool.check_invariants();
}
