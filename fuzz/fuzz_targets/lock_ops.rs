#![no_main]
//! Lock-operation sequences against a reference model: see `src/lock_model.rs`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| turnstile_fuzz::lock_model::lock_sequence(data));
