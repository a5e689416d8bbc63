#![no_main]
//! Page decoding: see `src/page.rs`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| turnstile_fuzz::page::page_decoding(data));
