//! Instruction counts of the fast path, for `valgrind --tool=callgrind`
//! (which counts instructions exactly even on a noisy machine):
//!
//! ```text
//! cargo build --release -p turnstile-lock --example fastpath_cost
//! valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out \
//!     target/release/examples/fastpath_cost lockfree 100000
//! callgrind_annotate /tmp/cg.out | head -40
//! ```
//!
//! Runs `n` times each: a first acquire + release of one relation
//! (AccessShare, the fast path), a re-acquire + release of a relation
//! already held (the local lock table only), a transaction of one
//! relation lock and `release_all` (and `n / 1000` of 1000 locks), and a
//! `parking_lot::Mutex` lock + unlock — each in its own non-inlined function, so the
//! per-function inclusive counts divided by `n` are the per-operation
//! costs.

use std::hint::black_box;
use turnstile_lock::{Backend, LockManager, LockMode, LockTag, Wait};
use turnstile_sync::{Config, FastPathProtocol, Profile};

#[inline(never)]
fn first_acquire(b: &mut Backend, tag: LockTag, n: u64) {
    for _ in 0..n {
        b.lock(black_box(tag), LockMode::AccessShare, Wait::Block).unwrap();
        b.unlock(black_box(tag), LockMode::AccessShare).unwrap();
    }
}

#[inline(never)]
fn reacquire(b: &mut Backend, tag: LockTag, n: u64) {
    for _ in 0..n {
        b.lock(black_box(tag), LockMode::AccessShare, Wait::Block).unwrap();
        b.unlock(black_box(tag), LockMode::AccessShare).unwrap();
    }
}

#[inline(never)]
fn transaction(b: &mut Backend, relations: u32, n: u64) {
    for _ in 0..n {
        for r in 0..relations {
            b.lock(black_box(LockTag::relation(1, 16384 + r)), LockMode::AccessShare, Wait::Block).unwrap();
        }
        b.release_all();
    }
}

/// One-relation transactions, in a function of their own so callgrind
/// shows them apart from the 1000-relation ones.
#[inline(never)]
fn transaction1(b: &mut Backend, n: u64) {
    transaction(b, 1, n);
}

#[inline(never)]
fn mutex(m: &parking_lot::Mutex<u64>, n: u64) {
    for _ in 0..n {
        *black_box(m).lock() += 1;
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let protocol = match args.next().as_deref() {
        Some("lwlock") => FastPathProtocol::Lwlock,
        Some("lockfree") | None => FastPathProtocol::Lockfree,
        Some(other) => {
            eprintln!("usage: fastpath_cost [lwlock|lockfree] [n]; not {other}");
            std::process::exit(2);
        }
    };
    let n: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let timed = args.next().as_deref() == Some("time");
    let mut config = Config::preset(Profile::Scalable);
    config.lock.fast_path_protocol = protocol;
    let manager = LockManager::new(&config).unwrap();
    let mut b = manager.register().unwrap();
    let tag = LockTag::relation(1, 16384);
    if timed {
        // Best of 30 rounds of each, interleaved (a noisy machine).
        let m = parking_lot::Mutex::new(0);
        let held = LockTag::relation(1, 16385);
        b.lock(held, LockMode::AccessShare, Wait::Block).unwrap();
        let mut best = [f64::INFINITY; 3];
        for _ in 0..30 {
            let t = std::time::Instant::now();
            mutex(&m, n);
            best[0] = best[0].min(t.elapsed().as_nanos() as f64 / n as f64);
            let t = std::time::Instant::now();
            first_acquire(&mut b, tag, n);
            best[1] = best[1].min(t.elapsed().as_nanos() as f64 / n as f64);
            let t = std::time::Instant::now();
            reacquire(&mut b, held, n);
            best[2] = best[2].min(t.elapsed().as_nanos() as f64 / n as f64);
        }
        println!(
            "{protocol}: mutex {:.1} ns, first acquire+release {:.1} ns ({:.2}x), re-acquire+release {:.1} ns ({:.2}x)",
            best[0],
            best[1],
            best[1] / best[0],
            best[2],
            best[2] / best[0]
        );
        return;
    }
    first_acquire(&mut b, tag, n);
    let held = LockTag::relation(1, 16385);
    b.lock(held, LockMode::AccessShare, Wait::Block).unwrap();
    reacquire(&mut b, held, n);
    b.release_all();
    transaction(&mut b, 1000, n / 1000);
    transaction1(&mut b, n);
    mutex(&parking_lot::Mutex::new(0), n);
    println!("{protocol}: {n} of each");
}
