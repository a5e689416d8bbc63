#![no_main]
//! Catalog loading: the first byte picks raw file or checksummed body; see `src/catalog.rs`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Some((&mode, rest)) = data.split_first() {
        if mode & 1 == 0 {
            turnstile_fuzz::catalog::catalog_body(rest);
        } else {
            turnstile_fuzz::catalog::catalog_file(rest);
        }
    }
});
