//! The storage manager on real files: layout, segments, extension,
//! truncation, the vfd cache, and fault injection through `FaultyIo`.

mod common;

use common::Scratch;
use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;
use turnstile_storage::fault::{FaultyIo, IoFault, IoOp};
use turnstile_storage::page::{self, PageBuf, PAGE_SIZE};
use turnstile_storage::{FileError, Fork, RelFileId, Smgr, SmgrOptions, StorageError};

fn options(segment_blocks: u32, max_open_files: usize) -> SmgrOptions {
    SmgrOptions { segment_blocks, max_open_files, ..Default::default() }
}

fn filled(byte: u8) -> Box<PageBuf> {
    Box::new([byte; PAGE_SIZE])
}

#[test]
fn data_directory_is_private_and_segments_split_at_the_segment_size() {
    let dir = Scratch::new("layout");
    let smgr = Smgr::open_with(dir.path(), options(4, 100), Arc::new(FaultyIo::new())).unwrap();
    let mode = std::fs::metadata(dir.path()).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "data directory mode {mode:o}");
    let rel = RelFileId::new(5, 16384);
    smgr.create(rel, Fork::Main).unwrap();
    assert_eq!(smgr.extend(rel, Fork::Main, 10).unwrap(), 0);
    assert_eq!(smgr.nblocks(rel, Fork::Main).unwrap(), 10);
    let base = dir.path().join("base/5");
    let len = |name: &str| std::fs::metadata(base.join(name)).unwrap().len() / PAGE_SIZE as u64;
    assert_eq!((len("16384"), len("16384.1"), len("16384.2")), (4, 4, 2));
    for b in 0..10u32 {
        smgr.write(rel, Fork::Main, b, &filled(b as u8)).unwrap();
    }
    let mut back: Box<PageBuf> = Box::new([0; PAGE_SIZE]);
    for b in 0..10u32 {
        smgr.read(rel, Fork::Main, b, &mut back).unwrap();
        assert!(back.iter().all(|&x| x == b as u8), "block {b}");
    }
    assert!(matches!(
        smgr.read(rel, Fork::Main, 10, &mut back),
        Err(StorageError::BlockOutOfRange { nblocks: 10, .. })
    ));
    smgr.sync(rel, Fork::Main).unwrap();
    // A fresh smgr measures the same length from the files.
    let again = Smgr::open_with(dir.path(), options(4, 100), Arc::new(FaultyIo::new())).unwrap();
    assert_eq!(again.nblocks(rel, Fork::Main).unwrap(), 10);
    again.truncate(rel, Fork::Main, 5).unwrap();
    assert_eq!((len("16384"), len("16384.1")), (4, 1));
    assert_eq!(again.nblocks(rel, Fork::Main).unwrap(), 5);
    // Forks are separate file sets.
    again.create(rel, Fork::FreeSpace).unwrap();
    assert_eq!(again.extend(rel, Fork::FreeSpace, 1).unwrap(), 0);
    assert!(base.join("16384_fsm").exists());
    again.remove(rel).unwrap();
    assert!(!base.join("16384").exists() && !base.join("16384.1").exists() && !base.join("16384_fsm").exists());
}

#[test]
fn small_extensions_write_zeros_and_large_ones_fall_back_without_fallocate() {
    let dir = Scratch::new("fallback");
    let io = Arc::new(FaultyIo::new());
    io.disable_fallocate();
    let smgr = Smgr::open_with(dir.path(), options(1000, 10), io.clone()).unwrap();
    let rel = RelFileId::new(1, 1);
    smgr.create(rel, Fork::Main).unwrap();
    assert_eq!(smgr.extend(rel, Fork::Main, 1).unwrap(), 0);
    assert_eq!(smgr.extend(rel, Fork::Main, 64).unwrap(), 1);
    assert_eq!(smgr.nblocks(rel, Fork::Main).unwrap(), 65);
    assert_eq!(io.calls(IoOp::Extend), 2, "each extension is one zero-fill call");
    let mut p: Box<PageBuf> = Box::new([1; PAGE_SIZE]);
    smgr.read(rel, Fork::Main, 64, &mut p).unwrap();
    assert!(page::is_new(&p));
}

/// The rule: after a failed extension the relation claims no
/// block it does not have — here ENOSPC strikes in the second segment of a
/// multi-segment extension, after half of that segment was allocated.
#[test]
fn enospc_mid_extension_leaves_no_phantom_blocks() {
    let dir = Scratch::new("enospc");
    let io = Arc::new(FaultyIo::new());
    let smgr = Smgr::open_with(dir.path(), options(16, 10), io.clone()).unwrap();
    let rel = RelFileId::new(1, 7);
    smgr.create(rel, Fork::Main).unwrap();
    smgr.extend(rel, Fork::Main, 10).unwrap();
    // Extension #2 covers segment 0 (6 blocks) and segment 1 (20 blocks,
    // extension call #3), which fails after allocating half.
    io.inject(IoFault::new(IoOp::Extend, 3, IoFault::ENOSPC).partial());
    let err = smgr.extend(rel, Fork::Main, 26).unwrap_err();
    let StorageError::File(FileError::NoSpace { path, .. }) = &err else { panic!("not ENOSPC: {err:?}") };
    assert!(path.ends_with("base/1/7.1"), "error names {path:?}");
    assert!(err.to_string().contains("7.1") && err.to_string().contains("no space"), "{err}");
    assert_eq!(smgr.nblocks(rel, Fork::Main).unwrap(), 10);
    let seg0 = std::fs::metadata(dir.path().join("base/1/7")).unwrap().len();
    let seg1 = std::fs::metadata(dir.path().join("base/1/7.1")).map(|m| m.len()).unwrap_or(0);
    assert_eq!((seg0, seg1), (10 * PAGE_SIZE as u64, 0), "files keep blocks the relation does not claim");
    let fresh = Smgr::open_with(dir.path(), options(16, 10), Arc::new(FaultyIo::new())).unwrap();
    assert_eq!(fresh.nblocks(rel, Fork::Main).unwrap(), 10, "a restart would find phantom blocks");
    // The next extension continues where the relation really ends.
    assert_eq!(smgr.extend(rel, Fork::Main, 26).unwrap(), 10);
    assert_eq!(smgr.nblocks(rel, Fork::Main).unwrap(), 36);
}

#[test]
fn eio_and_emfile_are_typed_and_name_the_file() {
    let dir = Scratch::new("eio");
    let io = Arc::new(FaultyIo::new());
    let smgr = Smgr::open_with(dir.path(), options(16, 10), io.clone()).unwrap();
    let rel = RelFileId::new(2, 9);
    smgr.create(rel, Fork::Main).unwrap();
    smgr.extend(rel, Fork::Main, 2).unwrap();
    io.inject(IoFault::new(IoOp::Write, io.calls(IoOp::Write) + 1, IoFault::EIO));
    let err = smgr.write(rel, Fork::Main, 1, &filled(1)).unwrap_err();
    assert!(matches!(&err, StorageError::File(FileError::Io { path, .. }) if path.ends_with("base/2/9")), "{err:?}");
    io.inject(IoFault::new(IoOp::Read, io.calls(IoOp::Read) + 1, IoFault::EIO));
    let mut p: Box<PageBuf> = Box::new([0; PAGE_SIZE]);
    let err = smgr.read(rel, Fork::Main, 0, &mut p).unwrap_err();
    assert!(matches!(err, StorageError::File(FileError::Io { .. })), "{err:?}");
    // EMFILE: the cache closes its least recently used file and retries,
    // as PostgreSQL's `BasicOpenFile` does; with nothing left to close the
    // error surfaces, naming the file.
    let small = Smgr::open_with(dir.path(), options(16, 10), io.clone()).unwrap();
    let (a, b, c) = (RelFileId::new(2, 10), RelFileId::new(2, 11), RelFileId::new(2, 12));
    small.create(a, Fork::Main).unwrap();
    let closes = small.fd_stats().closes;
    io.inject(IoFault::new(IoOp::Open, io.calls(IoOp::Open) + 1, IoFault::EMFILE));
    small.create(b, Fork::Main).unwrap();
    assert_eq!(small.fd_stats().closes, closes + 1, "the LRU file was closed to make room");
    let opens = io.calls(IoOp::Open);
    io.inject(IoFault::new(IoOp::Open, opens + 1, IoFault::EMFILE));
    io.inject(IoFault::new(IoOp::Open, opens + 2, IoFault::EMFILE));
    let err = small.create(c, Fork::Main).unwrap_err();
    assert!(
        matches!(&err, StorageError::File(FileError::TooManyOpenFiles { path, .. }) if path.ends_with("base/2/12")),
        "{err:?}"
    );
    assert!(err.to_string().contains("too many open files"), "{err}");
    small.create(c, Fork::Main).unwrap();
}

#[test]
fn vfd_cache_closes_the_least_recently_used_file() {
    let dir = Scratch::new("vfd");
    let smgr = Smgr::open_with(dir.path(), options(4, 2), Arc::new(FaultyIo::new())).unwrap();
    let rels: Vec<RelFileId> = (0..3).map(|r| RelFileId::new(1, 100 + r)).collect();
    let mut p: Box<PageBuf> = Box::new([0; PAGE_SIZE]);
    for &r in &rels {
        smgr.create(r, Fork::Main).unwrap();
        smgr.extend(r, Fork::Main, 1).unwrap();
    }
    let start = smgr.fd_stats();
    assert!(start.open_now <= 2, "{start:?}");
    let read = |r: RelFileId, p: &mut PageBuf| smgr.read(r, Fork::Main, 0, p).unwrap();
    // Cache holds {1, 2} (2 most recent). Touch 1, then 0: 2 is the LRU and goes.
    read(rels[1], &mut p);
    read(rels[0], &mut p);
    let s = smgr.fd_stats();
    assert_eq!((s.hits - start.hits, s.misses - start.misses), (1, 1), "{s:?}");
    read(rels[1], &mut p); // still cached: hit
    read(rels[2], &mut p); // was evicted: miss, evicts 0
    read(rels[0], &mut p); // miss
    let end = smgr.fd_stats();
    assert_eq!((end.hits - start.hits, end.misses - start.misses), (2, 3), "{end:?}");
    assert!(end.open_now <= 2 && end.max_open == 2, "{end:?}");
    assert_eq!(end.opens - end.closes, end.open_now);
    assert!(end.closes >= 3);
    let ratio = end.hit_ratio();
    assert!(ratio > 0.0 && ratio < 1.0);
}
