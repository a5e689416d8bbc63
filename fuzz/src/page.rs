//! Fuzz target: page decoding. Arbitrary bytes become an 8 kB page read
//! from an arbitrary block; verification, header decoding, line pointers
//! and the row codec must answer with a value or a typed error, never a
//! panic, and the checksum must catch every single-bit change.
//!
//! Shared by `fuzz/fuzz_targets/page_decode.rs` (cargo fuzz) and
//! `crates/engine/tests/fuzz_props.rs` (proptest, in CI).

use turnstile_engine::types::{decode_row, ColumnType};
use turnstile_storage::page::{self, PageBuf, VerifyFailure, PAGE_SIZE};

/// Most line pointers and rows looked at per page.
const ITEMS_MAX: usize = 512;

/// Runs the target on `data`: byte 0..4 the block number, 4 the column
/// types of the rows, 5 which bit to flip, the rest the page.
pub fn page_decoding(data: &[u8]) {
    let block = u32::from_le_bytes([0, 1, 2, 3].map(|i| data.get(i).copied().unwrap_or(0)));
    let types_byte = data.get(4).copied().unwrap_or(0);
    let flip = data.get(5).copied().unwrap_or(0) as usize;
    let mut p: Box<PageBuf> = Box::new([0; PAGE_SIZE]);
    let body = data.get(6..).unwrap_or(&[]);
    let n = body.len().min(PAGE_SIZE);
    p[..n].copy_from_slice(&body[..n]);

    // As read from disk: any verdict, no panic.
    let _ = page::verify(&p, block);
    let _ = page::header(&p);
    let _ = page::is_new(&p);
    decode_items(&p, types_byte);

    // Stamped with its checksum, the page passes the checksum test (the
    // header test may still refuse it), and its items decode or fail
    // with typed errors.
    page::set_checksum(&mut p, block);
    match page::verify(&p, block) {
        Ok(()) => decode_items(&p, types_byte),
        Err(VerifyFailure::Header(_)) => {}
        Err(e @ VerifyFailure::Checksum { .. }) => panic!("a freshly stamped page failed its checksum: {e:?}"),
    }
    // One flipped bit anywhere: verification must fail, unless the page
    // became all zeros (a new page, which is valid unstamped).
    let verdict_before = page::verify(&p, block);
    let bit = (flip * 7919 + n) % (PAGE_SIZE * 8);
    p[bit / 8] ^= 1 << (bit % 8);
    if !page::is_new(&p) && verdict_before.is_ok() {
        assert!(page::verify(&p, block).is_err(), "bit {bit} flipped in a verified page went unnoticed");
    }
    // The same page at another block number fails its checksum.
    p[bit / 8] ^= 1 << (bit % 8);
    if !page::is_new(&p) && verdict_before.is_ok() {
        assert!(
            matches!(page::verify(&p, block.wrapping_add(1)), Err(VerifyFailure::Checksum { .. })),
            "a page moved to another block verified"
        );
    }
}

/// Reads every line pointer the header claims (bounded) and decodes each
/// item as a row of types chosen by `types_byte`.
fn decode_items(p: &PageBuf, types_byte: u8) {
    let all = [ColumnType::Int4, ColumnType::Int8, ColumnType::Text];
    let types: Vec<ColumnType> = (0..(types_byte % 6) as usize).map(|i| all[(types_byte as usize >> i) % 3]).collect();
    let _ = page::free_space(p);
    let count = page::item_count(p);
    for slot in 0..count.min(ITEMS_MAX) {
        if let Some(item) = page::item(p, slot) {
            assert!(item.len() <= PAGE_SIZE);
            let _ = decode_row(&types, item);
        }
    }
}
