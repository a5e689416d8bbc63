//! Lock-operation sequences against a reference model, driven by
//! proptest in CI; the same target runs under `cargo fuzz` from `fuzz/`
//! (`fuzz/src/lock_model.rs` holds it, for both). proptest prints the
//! failing input, shrunk, and its seed file (`proptest-regressions/`).

#[path = "../../../fuzz/src/lock_model.rs"]
mod lock_model;

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn lock_sequences_match_the_model(data in proptest::collection::vec(any::<u8>(), 0..900)) {
        lock_model::lock_sequence(&data);
    }
}

/// A fixed sequence that fills one backend's fast path past a group, then
/// has another backend take a strong lock on one of those relations (a
/// transfer), then releases: the smallest case of everything the model
/// covers.
#[test]
fn fast_path_overflow_and_transfer_match_the_model() {
    let mut data = vec![0u8]; // classic, fixed 16 slots
    for rel in 0..24u8 {
        data.extend_from_slice(&[0, rel, 0]); // backend 0: AccessShare on rel
    }
    data.extend_from_slice(&[4, 5, 7]); // backend 1: AccessExclusive on rel 5: refused
    data.extend_from_slice(&[4, 25, 6]); // backend 1: Exclusive on a tuple
    data.extend_from_slice(&[3, 0, 0]); // backend 0: release_all
    data.extend_from_slice(&[4, 5, 7]); // backend 1: AccessExclusive on rel 5: granted
    data.extend_from_slice(&[0, 5, 0]); // backend 0: AccessShare on rel 5: refused
    lock_model::lock_sequence(&data);
}
