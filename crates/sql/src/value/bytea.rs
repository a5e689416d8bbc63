//! `bytea`'s text forms: hex (`\x0a1b`, what PostgreSQL prints) and escape
//! (`a\\b\001`), read into bytes.

/// A `bytea` text input (hex `\x00ff` or escape `a\\b\001`) in the
/// hex form; `None` if it is not valid.
pub(crate) fn bytea_hex_text(s: &str) -> Option<String> {
    let mut out = bytes::BytesMut::new();
    bytea_from_text(s, &mut out)?;
    Some(turnstile_engine::types::bytea_hex(&out))
}

/// `bytea`'s text forms: hex (`\x0a1b`) or escape (`a\\b\001`).
pub(crate) fn bytea_from_text(text: &str, out: &mut bytes::BytesMut) -> Option<()> {
    use bytes::BufMut as _;
    if let Some(hex) = text.strip_prefix("\\x") {
        let h = hex.as_bytes();
        if h.len() % 2 != 0 {
            return None;
        }
        for pair in h.chunks(2) {
            out.put_u8(u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?);
        }
        return Some(());
    }
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.put_u8(b[i]);
            i += 1;
        } else if b.get(i + 1) == Some(&b'\\') {
            out.put_u8(b'\\');
            i += 2;
        } else {
            let oct = std::str::from_utf8(b.get(i + 1..i + 4)?).ok()?;
            out.put_u8(u8::from_str_radix(oct, 8).ok()?);
            i += 4;
        }
    }
    Some(())
}
