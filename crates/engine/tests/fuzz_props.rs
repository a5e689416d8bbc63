//! Page decoding and catalog loading on arbitrary input, driven by
//! proptest in CI; the same targets run under `cargo fuzz` from `fuzz/`
//! (`fuzz/src/page.rs`, `fuzz/src/catalog.rs` hold them, for both).
//! Catalog bodies are mutations of a real catalog (so most of them parse
//! a long way) as well as arbitrary bytes.

#[path = "../../../fuzz/src/catalog.rs"]
mod catalog;
#[path = "../../../fuzz/src/page.rs"]
mod page;

use proptest::prelude::*;
use std::sync::OnceLock;
use turnstile_engine::catalog::{PartitionBound, PartitionStrategy};
use turnstile_engine::types::ColumnType::{Int4, Int8, Text};
use turnstile_engine::types::Value;
use turnstile_engine::Engine;
use turnstile_sync::Config;

/// The body of a real catalog: a database, a table with two indexes, a
/// partitioned table with two partitions.
fn real_catalog_body() -> &'static [u8] {
    static BODY: OnceLock<Vec<u8>> = OnceLock::new();
    BODY.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(dir.path(), Config::default()).unwrap();
        let mut s = engine.session().unwrap();
        s.create_table("t", &[("a", Int4), ("b", Int8), ("c", Text)], None).unwrap();
        s.create_index("t", "t_pkey", &["a"], true).unwrap();
        s.create_index("t", "t_bc", &["b", "c"], false).unwrap();
        s.insert("t", &[Value::Int4(1), Value::Int8(2), Value::Text("x".into())]).unwrap();
        s.create_table("p", &[("k", Int4)], Some((PartitionStrategy::Range, "k"))).unwrap();
        s.create_partition("p", "p0", PartitionBound::Range { from: 0, to: 10 }).unwrap();
        s.create_partition("p", "p1", PartitionBound::Range { from: 10, to: 20 }).unwrap();
        engine.catalog().create_database("other").unwrap();
        engine.flush().unwrap();
        let file = std::fs::read(dir.path().join("catalog")).unwrap();
        let newline = file.iter().position(|&b| b == b'\n').unwrap();
        file[newline + 1..].to_vec()
    })
}

/// A mutation of a byte string: overwrite, insert or delete at a position.
fn mutate(body: &[u8], edits: &[(u16, u8, u8)]) -> Vec<u8> {
    let mut out = body.to_vec();
    for &(at, kind, byte) in edits {
        let at = usize::from(at) % (out.len() + 1);
        match kind % 3 {
            0 if at < out.len() => out[at] = byte,
            1 => out.insert(at, byte),
            _ if at < out.len() => {
                out.remove(at);
            }
            _ => {}
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_pages_decode_or_fail_typed(data in proptest::collection::vec(any::<u8>(), 0..9000)) {
        page::page_decoding(&data);
    }

    #[test]
    fn pages_with_sane_headers_decode_or_fail_typed(
        block in any::<u32>(),
        types in any::<u8>(),
        flip in any::<u8>(),
        lower in 16u16..400,
        upper in 400u16..8192,
        pointers in proptest::collection::vec(any::<u8>(), 0..400),
        tail in proptest::collection::vec(any::<u8>(), 0..200),
    ) {
        // A header the verifier accepts, line pointers and items arbitrary:
        // what a bug in the page code (not the disk) could produce.
        let mut data = block.to_le_bytes().to_vec();
        data.extend_from_slice(&[types, flip]);
        let mut p = vec![0u8; 8192];
        p[4..6].copy_from_slice(&turnstile_storage::page::PAGE_VERSION.to_le_bytes());
        p[8..10].copy_from_slice(&lower.to_le_bytes());
        p[10..12].copy_from_slice(&upper.to_le_bytes());
        p[12..14].copy_from_slice(&8192u16.to_le_bytes());
        let n = pointers.len().min(usize::from(lower) - 16);
        p[16..16 + n].copy_from_slice(&pointers[..n]);
        let at = usize::from(upper).min(8192 - tail.len());
        p[at..at + tail.len()].copy_from_slice(&tail);
        data.extend_from_slice(&p);
        page::page_decoding(&data);
    }

    #[test]
    fn mutated_catalogs_open_or_are_refused(edits in proptest::collection::vec((any::<u16>(), any::<u8>(), any::<u8>()), 1..6)) {
        catalog::catalog_body(&mutate(real_catalog_body(), &edits));
    }

    #[test]
    fn arbitrary_catalog_files_open_or_are_refused(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        catalog::catalog_file(&bytes);
        catalog::catalog_body(&bytes);
    }
}

#[test]
fn the_real_catalog_opens_through_the_target() {
    catalog::catalog_body(real_catalog_body());
}
