//! Shared helpers of the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use turnstile_sync::sync::counter::{AtomicU32, Ordering};

/// A directory under the system temp dir, removed on drop.
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "turnstile-storage-{name}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        Scratch(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The seed of a randomized test: `TURNSTILE_SEED` or the clock, printed
/// so a failure can be replayed.
pub fn seed(test: &str) -> u64 {
    let seed = std::env::var("TURNSTILE_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
    });
    println!("{test}: seed {seed} (replay with TURNSTILE_SEED={seed})");
    seed
}

/// A page payload that names its writer and block: `(writer, block)`
/// repeated, so a page in the wrong place or torn is detected.
pub fn payload(writer: u32, block: u32, len: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(len);
    let word = [writer.to_le_bytes(), block.to_le_bytes()].concat();
    while v.len() < len {
        v.extend_from_slice(&word[..(len - v.len()).min(8)]);
    }
    v
}

/// Reads every block each writer was handed, `(writer, blocks)`, through
/// a fresh pool over `store` (so from the files, after a flush) and checks
/// that its first item is the writer's [`payload`] of `item_len` bytes.
pub fn assert_payloads_on_disk<'a>(
    store: std::sync::Arc<dyn turnstile_storage::PageStore>,
    rel: turnstile_storage::RelFileId,
    item_len: usize,
    handed: impl IntoIterator<Item = (u32, &'a [u32])>,
    what: &str,
) {
    use turnstile_storage::{page, BufferPool, BufferTag, Fork, PoolOptions};
    let options = PoolOptions {
        shared_buffers: 32,
        mapping_partitions: 4,
        policy: turnstile_sync::LwLockPolicy::Fair,
        lookup_hints: true,
        huge_pages: false,
        prefault: false,
    };
    let fresh = BufferPool::with_options(options, store).unwrap();
    for (writer, blocks) in handed {
        for &b in blocks {
            let buf = fresh.read_buffer(BufferTag::new(rel, Fork::Main, b)).unwrap();
            let content = buf.lock_shared();
            assert_eq!(page::item(&content, 0), Some(&payload(writer, b, item_len)[..]), "{what}: block {b}");
        }
    }
}
