//! Stress: threads insert records of random sizes and flush at random,
//! under both profiles, with a ring small enough to fill and segments
//! small enough to cross. Afterwards a reader sees every record in LSN
//! order, each intact and inserted exactly once, and every record whose
//! flush returned is there; then the end of WAL. Prints its seed.

mod common;

use common::{seed, Scratch};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use turnstile_storage::io::OsIo;
use turnstile_storage::wal::{Lsn, Wal, WalReader, WalRecord};
use turnstile_sync::config::{Config, Profile};

const SEG: u64 = 1 << 20;
const THREADS: u64 = 8;
const RECORDS: u64 = 600;
const FILLERS: u64 = 10;

/// The payload of record `n` of thread `t`: `(t, n)` then bytes derived from both.
fn payload(t: u64, n: u64, len: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(16 + len);
    v.extend_from_slice(&t.to_le_bytes());
    v.extend_from_slice(&n.to_le_bytes());
    v.extend((0..len).map(|k| (t as usize * 7 + n as usize * 13 + k) as u8));
    v
}

fn run(profile: Profile, seed: u64) {
    let dir = Scratch::new("wal-stress");
    let mut cfg = Config::preset(profile).wal;
    cfg.segment_size = SEG;
    cfg.buffers = 64 << 10;
    cfg.fsync = false;
    let start = Lsn::first(SEG);
    let wal = Arc::new(Wal::open(dir.path(), Arc::new(OsIo), &cfg, start).unwrap());
    // (thread, n) → (end, len, flushed)
    let inserted = Arc::new(Mutex::new(HashMap::new()));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (wal, inserted) = (Arc::clone(&wal), Arc::clone(&inserted));
            std::thread::spawn(move || {
                let mut rng = SmallRng::seed_from_u64(seed ^ (t << 40));
                for n in 0..RECORDS {
                    let len =
                        if rng.random_ratio(1, 50) { rng.random_range(4000..20_000) } else { rng.random_range(0..300) };
                    let p = payload(t, n, len);
                    let (a, b) = p.split_at(p.len() / 2);
                    let end = wal.insert(&WalRecord { xid: t + 1, rmgr: 1, info: n as u8, parts: &[a, b] }).unwrap();
                    let flushed = rng.random_ratio(1, 8);
                    if flushed {
                        wal.flush(end).unwrap();
                        assert!(wal.flushed_lsn() >= end, "seed {seed}: flush returned before the LSN was flushed");
                    }
                    inserted.lock().unwrap().insert((t, n), (end, len, flushed));
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    // Records no flush writes out: the ring must fill.
    for n in 0..FILLERS {
        let p = payload(THREADS, n, 20_000);
        let end = wal.insert(&WalRecord { xid: THREADS + 1, rmgr: 1, info: n as u8, parts: &[&p] }).unwrap();
        inserted.lock().unwrap().insert((THREADS, n), (end, 20_000, false));
    }
    let last = wal.insert_lsn();
    wal.shutdown();
    let inserted = inserted.lock().unwrap();
    let mut reader = WalReader::with_segment_size(dir.path(), Arc::new(OsIo), start, SEG);
    let (mut prev, mut seen) = (start, 0usize);
    let mut found = std::collections::HashSet::new();
    while let Some((s, e, h, p)) = reader.next().unwrap_or_else(|err| panic!("seed {seed} {profile}: {err}")) {
        assert_eq!(s, prev, "seed {seed} {profile}: records are contiguous in LSN order");
        let t = u64::from_le_bytes(p[0..8].try_into().unwrap());
        let n = u64::from_le_bytes(p[8..16].try_into().unwrap());
        let &(end, len, _) =
            inserted.get(&(t, n)).unwrap_or_else(|| panic!("seed {seed} {profile}: a record nobody inserted"));
        assert_eq!(e, end, "seed {seed} {profile}: record ({t}, {n}) at the wrong place");
        assert_eq!((h.xid, h.info), (t + 1, n as u8));
        assert_eq!(p, payload(t, n, len), "seed {seed} {profile}: record ({t}, {n}) garbled");
        assert!(found.insert((t, n)), "seed {seed} {profile}: record ({t}, {n}) read twice");
        prev = e;
        seen += 1;
    }
    assert_eq!(reader.end_lsn(), last, "seed {seed} {profile}: the WAL ends where insertion ended");
    for (&(t, n), &(_, _, flushed)) in inserted.iter() {
        assert!(!flushed || found.contains(&(t, n)), "seed {seed} {profile}: flushed record ({t}, {n}) lost");
    }
    assert_eq!(seen as u64, THREADS * RECORDS + FILLERS, "seed {seed} {profile}: shutdown flushed everything");
    let s = wal.stats();
    assert_eq!(s.wal_records, THREADS * RECORDS + FILLERS);
    assert!(s.wal_buffers_full > 0, "seed {seed} {profile}: the 64 kB ring never filled");
}

#[test]
fn concurrent_inserts_and_flushes_read_back_intact_in_order() {
    let seed = seed("wal_stress");
    for profile in Profile::ALL {
        run(profile, seed);
    }
}
