//! Fuzz target: catalog loading. Arbitrary bytes become the body of a
//! catalog file whose header carries the right checksum and length (so
//! the parser behind the checksum is what gets fuzzed), and raw bytes the
//! whole file. Opening must give a catalog or `CatalogError::Corrupted` —
//! never a panic — and a catalog that opens must answer look-ups, open as
//! an engine, and scan its tables with results or typed errors.
//!
//! Shared by `fuzz/fuzz_targets/catalog_load.rs` (cargo fuzz) and
//! `crates/engine/tests/fuzz_props.rs` (proptest, in CI).

use std::path::Path;
use turnstile_engine::catalog::{Catalog, CatalogError, RelKind};
use turnstile_engine::Engine;
use turnstile_sync::{Config, LwLockPolicy};

/// Writes `body` as a catalog with a valid header into a fresh directory
/// and opens it.
pub fn catalog_body(body: &[u8]) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut file = format!("turnstile-catalog 1 {:08x} {}\n", crc32c::crc32c(body), body.len()).into_bytes();
    file.extend_from_slice(body);
    std::fs::write(dir.path().join("catalog"), &file).expect("write the catalog");
    open_and_use(dir.path());
}

/// Writes `bytes` as the whole catalog file and opens it.
pub fn catalog_file(bytes: &[u8]) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join("catalog"), bytes).expect("write the catalog");
    open_and_use(dir.path());
}

fn open_and_use(dir: &Path) {
    let catalog = match Catalog::open(dir, LwLockPolicy::Fair) {
        Ok(c) => c,
        Err(CatalogError::Corrupted { .. }) => return,
        Err(e) => panic!("a damaged catalog must be refused as Corrupted, got {e:?}"),
    };
    let data = catalog.snapshot();
    for rel in data.relations.values() {
        let _ = catalog.relation(rel.db, &rel.name);
        let _ = data.partitions_of(rel.id).count();
        let _ = data.indexes_of(rel.id).count();
    }
    drop(catalog);
    let mut config = Config::default();
    config.buffer.shared_buffers = 16;
    config.buffer.mapping_partitions = 16;
    let Ok(engine) = Engine::open(dir, config) else { return };
    for db in data.databases.values() {
        let Ok(mut session) = engine.session_on(&db.name) else { continue };
        for rel in data.relations.values().filter(|r| r.db == db.id) {
            if matches!(rel.kind, RelKind::Table | RelKind::PartitionedTable) {
                let _ = session.scan_all(&rel.name);
            }
        }
    }
}
