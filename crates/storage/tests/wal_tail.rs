//! The end of the WAL as PostgreSQL's `039_end_of_wal.pl` decides it — a
//! zeroed tail, a truncated record and garbage after the end end the WAL;
//! a CRC mismatch with a valid record after it is an error naming the
//! segment file and offset — plus restart, segment crossing, removal and
//! the failure of an fsync.

mod common;

use common::Scratch;
use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;
use turnstile_storage::fault::{FaultyIo, IoFault, IoOp};
use turnstile_storage::io::{OsIo, StorageIo};
use turnstile_storage::wal::lsn::segment_file_name;
use turnstile_storage::wal::{Lsn, Wal, WalError, WalReader, WalRecord};
use turnstile_sync::config::{Config, Profile, WalConfig};

const SEG: u64 = 1 << 20;

fn config(profile: Profile) -> WalConfig {
    let mut c = Config::preset(profile).wal;
    c.segment_size = SEG;
    c.buffers = 64 << 10;
    c.fsync = false;
    c
}

fn payload(i: u64, len: usize) -> Vec<u8> {
    (0..len).map(|k| (i as usize * 31 + k) as u8).collect()
}

/// Writes `sizes.len()` records, flushes, shuts down; returns each record's (start, end).
fn write(dir: &Path, profile: Profile, start: Lsn, sizes: &[usize]) -> Vec<(Lsn, Lsn)> {
    let wal = Wal::open(dir, Arc::new(OsIo), &config(profile), start).unwrap();
    let mut out = Vec::new();
    let mut at = start;
    for (i, &n) in sizes.iter().enumerate() {
        let p = payload(i as u64, n);
        let end = wal.insert(&WalRecord { xid: i as u64 + 1, rmgr: 2, info: 3, parts: &[&p] }).unwrap();
        out.push((at, end));
        at = end;
    }
    wal.flush(at).unwrap();
    assert!(wal.flushed_lsn() >= at);
    wal.shutdown();
    out
}

/// Records read: start, end, xid, payload.
type Read = Vec<(Lsn, Lsn, u64, Vec<u8>)>;

fn read_all(dir: &Path, start: Lsn) -> (Result<Read, WalError>, Lsn) {
    let mut r = WalReader::with_segment_size(dir, Arc::new(OsIo), start, SEG);
    let mut v = Vec::new();
    loop {
        match r.next() {
            Ok(Some((s, e, h, p))) => v.push((s, e, h.xid, p)),
            Ok(None) => return (Ok(v), r.end_lsn()),
            Err(e) => return (Err(e), r.end_lsn()),
        }
    }
}

fn poke(dir: &Path, lsn: u64, bytes: &[u8]) {
    let path = dir.join(segment_file_name(lsn / SEG, SEG));
    let f = OpenOptions::new().write(true).open(path).unwrap();
    f.write_all_at(bytes, lsn % SEG).unwrap();
}

fn check_intact(recs: &[(Lsn, Lsn, u64, Vec<u8>)], written: &[(Lsn, Lsn)], sizes: &[usize]) {
    for (i, (s, e, xid, p)) in recs.iter().enumerate() {
        assert_eq!((*s, *e), written[i], "record {i} at the wrong place");
        assert_eq!(*xid, i as u64 + 1);
        assert_eq!(p, &payload(i as u64, sizes[i]), "record {i} garbled");
    }
}

#[test]
fn a_zeroed_tail_is_the_end_of_wal() {
    for profile in Profile::ALL {
        let dir = Scratch::new("wal-zeroed");
        let sizes = [100, 200, 300, 50, 8000, 7, 0, 64];
        let w = write(dir.path(), profile, Lsn::first(SEG), &sizes);
        let (recs, end) = read_all(dir.path(), Lsn::first(SEG));
        check_intact(&recs.unwrap(), &w, &sizes);
        assert_eq!(end, w.last().unwrap().1, "{profile}: the preallocated zeros end the WAL");
        let mut guessed = WalReader::new(dir.path(), Arc::new(OsIo), Lsn::first(SEG)).unwrap();
        let mut n = 0;
        while guessed.next().unwrap().is_some() {
            n += 1;
        }
        assert_eq!(n, sizes.len(), "the segment size is found from the files");
        // Zero the last two records: the WAL ends before them.
        let from = w[6].0 .0;
        poke(dir.path(), from, &vec![0; (w[7].1 .0 - from) as usize]);
        let (recs, end) = read_all(dir.path(), Lsn::first(SEG));
        assert_eq!(recs.unwrap().len(), 6);
        assert_eq!(end, w[6].0);
    }
}

#[test]
fn a_truncated_record_is_the_end_of_wal() {
    for profile in Profile::ALL {
        let dir = Scratch::new("wal-truncated");
        // The last record crosses into the second segment.
        let sizes = vec![30_000; 35];
        let w = write(dir.path(), profile, Lsn::first(SEG), &sizes);
        let last = *w.last().unwrap();
        assert!(last.0.segment(SEG) < last.1.segment(SEG), "the last record spans two segments");
        // The second segment is lost: the record is cut short.
        std::fs::remove_file(dir.path().join(segment_file_name(last.1.segment(SEG), SEG))).unwrap();
        let (recs, end) = read_all(dir.path(), Lsn::first(SEG));
        check_intact(&recs.unwrap(), &w, &sizes);
        assert_eq!(end, last.0, "{profile}: the truncated record ends the WAL");
        // A file cut in the middle of a record's header.
        let path = dir.path().join(segment_file_name(1, SEG));
        let f = OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(w[10].0 .0 % SEG + 20).unwrap();
        let (recs, end) = read_all(dir.path(), Lsn::first(SEG));
        assert_eq!((recs.unwrap().len(), end), (10, w[10].0));
    }
}

#[test]
fn garbage_after_the_end_is_the_end_of_wal() {
    for profile in Profile::ALL {
        let dir = Scratch::new("wal-garbage");
        let sizes = [100, 100, 100];
        let w = write(dir.path(), profile, Lsn::first(SEG), &sizes);
        let end = w[2].1;
        let garbage: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        poke(dir.path(), end.0, &garbage);
        let (recs, read_end) = read_all(dir.path(), Lsn::first(SEG));
        check_intact(&recs.unwrap(), &w, &sizes);
        assert_eq!(read_end, end);
        // A plausible header with the wrong position (a stale record).
        let mut stale = vec![0u8; 64];
        stale[0..4].copy_from_slice(&48u32.to_le_bytes());
        stale[16..24].copy_from_slice(&(end.0 - 4096).to_le_bytes());
        poke(dir.path(), end.0, &stale);
        let (recs, read_end) = read_all(dir.path(), Lsn::first(SEG));
        assert_eq!((recs.unwrap().len(), read_end), (3, end), "{profile}");
    }
}

#[test]
fn a_crc_mismatch_in_the_middle_is_an_error_naming_file_and_offset() {
    for profile in Profile::ALL {
        let dir = Scratch::new("wal-crc");
        let sizes = [100; 10];
        let w = write(dir.path(), profile, Lsn::first(SEG), &sizes);
        let bad = w[4].0 .0 + 40;
        poke(dir.path(), bad, &[0xff]);
        let (recs, at) = read_all(dir.path(), Lsn::first(SEG));
        let err = recs.unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, WalError::Corrupt { .. }), "{profile}: {text}");
        assert_eq!(at, w[4].0, "reading stopped at the bad record");
        let file = segment_file_name(1, SEG);
        assert!(text.contains(&file), "{text}");
        assert!(text.contains(&format!("offset {}", w[4].0 .0 % SEG)), "{text}");
        assert_eq!(err.sqlstate(), "XX001");
        // The same damage to the last record is a torn tail: the end.
        let dir = Scratch::new("wal-crc-last");
        let w = write(dir.path(), profile, Lsn::first(SEG), &sizes);
        poke(dir.path(), w[9].0 .0 + 40, &[0xff]);
        let (recs, end) = read_all(dir.path(), Lsn::first(SEG));
        assert_eq!((recs.unwrap().len(), end), (9, w[9].0));
    }
}

#[test]
fn a_restart_continues_at_the_end_and_hides_the_old_tail() {
    for profile in Profile::ALL {
        let dir = Scratch::new("wal-restart");
        let sizes = [500; 8];
        let w = write(dir.path(), profile, Lsn::first(SEG), &sizes);
        // Tear the last record; recovery finds the end before it.
        poke(dir.path(), w[7].0 .0 + 100, &[1, 2, 3]);
        let (recs, end) = read_all(dir.path(), Lsn::first(SEG));
        assert_eq!((recs.unwrap().len(), end), (7, w[7].0));
        // The new run writes short records where the torn one was.
        let w2 = write(dir.path(), profile, end, &[10, 10]);
        let (recs, end2) = read_all(dir.path(), Lsn::first(SEG));
        let recs = recs.unwrap();
        assert_eq!(recs.len(), 9, "{profile}: nothing of the torn record is read after the new ones");
        assert_eq!((recs[7].0, end2), (w2[0].0, w2[1].1));
    }
}

#[test]
fn segments_before_a_redo_point_are_removed() {
    let dir = Scratch::new("wal-remove");
    let cfg = config(Profile::Scalable);
    let wal = Wal::open(dir.path(), Arc::new(OsIo), &cfg, Lsn::first(SEG)).unwrap();
    let p = vec![7u8; 20_000];
    let mut end = Lsn::first(SEG);
    for _ in 0..200 {
        end = wal.insert(&WalRecord { xid: 1, rmgr: 1, info: 1, parts: &[&p] }).unwrap();
    }
    wal.flush(end).unwrap();
    let names = || {
        let mut v: Vec<String> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        v.sort();
        v
    };
    assert_eq!(names().len() as u64, end.segment(SEG));
    wal.remove_before(end).unwrap();
    assert_eq!(names(), vec![segment_file_name(end.segment(SEG), SEG)]);
    wal.shutdown();
}

#[test]
fn a_failed_fsync_fails_the_log_for_good() {
    for profile in Profile::ALL {
        let dir = Scratch::new("wal-fsync-fail");
        let io = Arc::new(FaultyIo::new());
        // Creating the first segment syncs it and the directory; the third
        // sync is the first flush's fdatasync.
        io.inject(IoFault::new(IoOp::Sync, 3, IoFault::EIO));
        let mut cfg = config(profile);
        cfg.fsync = true;
        let wal = Wal::open(dir.path(), io.clone() as Arc<dyn StorageIo>, &cfg, Lsn::first(SEG)).unwrap();
        let end = wal.insert(&WalRecord { xid: 1, rmgr: 1, info: 1, parts: &[b"x"] }).unwrap();
        let err = wal.flush(end).unwrap_err();
        assert!(matches!(err, WalError::File(_) | WalError::Failed), "{profile}: {err}");
        assert!(wal.is_failed());
        let again = wal.insert(&WalRecord { xid: 1, rmgr: 1, info: 1, parts: &[b"y"] }).unwrap_err();
        assert!(matches!(again, WalError::Failed), "{profile}: {again}");
        assert!(matches!(wal.flush(end).unwrap_err(), WalError::Failed));
        assert_eq!(io.calls(IoOp::Sync), 3, "{profile}: the failed fsync is not retried");
        wal.shutdown();
    }
}

#[test]
fn asynchronous_commit_is_flushed_within_the_writer_delay() {
    for profile in Profile::ALL {
        let dir = Scratch::new("wal-async");
        let mut cfg = config(profile);
        cfg.synchronous_commit = false;
        cfg.writer_delay_ms = 20;
        let wal = Wal::open(dir.path(), Arc::new(OsIo), &cfg, Lsn::first(SEG)).unwrap();
        let end = wal.insert(&WalRecord { xid: 1, rmgr: 1, info: 1, parts: &[b"commit"] }).unwrap();
        wal.commit_flush(end).unwrap();
        let t = std::time::Instant::now();
        while wal.flushed_lsn() < end {
            assert!(t.elapsed() < std::time::Duration::from_secs(5), "{profile}: never flushed in the background");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        wal.shutdown();
    }
}

#[test]
fn classic_takes_two_shared_locks_per_record_and_scalable_none() {
    for (profile, per_record) in [(Profile::Classic, 2), (Profile::Scalable, 0)] {
        let dir = Scratch::new("wal-acq");
        let wal = Wal::open(dir.path(), Arc::new(OsIo), &config(profile), Lsn::first(SEG)).unwrap();
        for _ in 0..100 {
            wal.insert(&WalRecord { xid: 1, rmgr: 1, info: 1, parts: &[&[0u8; 100]] }).unwrap();
        }
        let s = wal.stats();
        assert_eq!((s.wal_records, s.wal_bytes), (100, 100 * 136));
        assert_eq!(s.shared_acquisitions, 100 * per_record, "{profile}");
        let fpi = wal.insert_fpi(&WalRecord { xid: 1, rmgr: 1, info: 1, parts: &[&[0u8; 8192]] }).unwrap();
        wal.flush(fpi).unwrap();
        assert_eq!(wal.stats().wal_fpi, 1);
        let too_big = vec![0u8; 40 << 10];
        let err = wal.insert(&WalRecord { xid: 1, rmgr: 1, info: 1, parts: &[&too_big] }).unwrap_err();
        assert!(matches!(err, WalError::RecordTooLarge { .. }), "{err}");
        wal.shutdown();
    }
}
