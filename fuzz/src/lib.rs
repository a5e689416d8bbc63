//! The fuzz targets' bodies, shared with the proptest suites in the main
//! workspace (`crates/lock/tests/model.rs`, `crates/engine/tests/fuzz_props.rs`
//! include these files by path), so CI and `cargo fuzz` run the same code.

pub mod catalog;
pub mod lock_model;
pub mod page;
