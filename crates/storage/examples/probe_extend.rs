// Temporary probe (removed before hand-off): CPU time per appended page.
use std::time::{Duration, Instant};
use turnstile_storage::page::{self, MAX_ITEM_SIZE};
use turnstile_storage::*;
use turnstile_sync::config::ExtendStrategy;

fn cpu() -> Duration {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
    Duration::from_nanos(s.split_whitespace().next().unwrap().parse().unwrap())
}
fn rq() -> Duration {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
    Duration::from_nanos(s.split_whitespace().nth(1).unwrap().parse().unwrap())
}

fn main() {
    let strategy = if std::env::args().nth(1).as_deref() == Some("classic") { ExtendStrategy::Classic } else { ExtendStrategy::Bulk };
    let dir = std::env::temp_dir().join(format!("probe-{}", std::process::id()));
    let config = turnstile_sync::Config::default();
    let smgr = Smgr::open(&dir, &config).unwrap();
    let mut config2 = config.clone();
    config2.set("buffer.shared_buffers", "2048").unwrap();
    let pool = BufferPool::new(&config2, smgr.clone()).unwrap();
    let rel = RelFileId::new(1, 1);
    smgr.create(rel, Fork::Main).unwrap();
    let locks = turnstile_lock::LockManager::new(&config).unwrap();
    let mut ext = Extender::new(&pool, locks.register().unwrap(), strategy, 64).with_ring(Ring::bulk_write(2048));
    let item = vec![0x5au8; MAX_ITEM_SIZE];
    let (c0, r0, t0) = (cpu(), rq(), Instant::now());
    let mut pages = 0u64;
    while t0.elapsed() < Duration::from_secs(2) {
        let buf = ext.get_page(rel, MAX_ITEM_SIZE).unwrap();
        let mut p = buf.lock_exclusive();
        page::add_item(&mut p, &item).unwrap();
        p.mark_dirty();
        pages += 1;
    }
    let c = cpu() - c0;
    let r = rq() - r0;
    println!("{strategy:?}: {pages} pages, {:.2} us cpu/page, runqueue {:.2}s, {:.0} MB/s", c.as_secs_f64() * 1e6 / pages as f64, r.as_secs_f64(), pages as f64 * 8192.0 / t0.elapsed().as_secs_f64() / 1e6);
    drop(ext);
    drop(pool);
    let _ = std::fs::remove_dir_all(&dir);
}
