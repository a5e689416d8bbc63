//! `bytea`'s text forms: hex (`\x0a1b`, what PostgreSQL prints) and escape
//! (`a\\b\001`), read into the bytes a [`Datum::Bytea`](super::Datum::Bytea)
//! holds, and the hex form printed from them.

/// A `bytea` text input (hex `\x00ff` or escape `a\\b\001`) as bytes;
/// `None` if it is not valid.
pub(crate) fn parse_bytea(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() / 2);
    bytea_from_text(s, &mut out)?;
    Some(out)
}

/// `byteaout` in hex form (`bytea_output = hex`): `\x` and two lower-case
/// hex digits per byte, appended to `out`.
pub fn write_bytea_hex(b: &[u8], out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(2 + 2 * b.len());
    out.push_str("\\x");
    for &byte in b {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
}

/// `bytea`'s text forms: hex (`\x0a1b`) or escape (`a\\b\001`).
pub(crate) fn bytea_from_text(text: &str, out: &mut impl bytes::BufMut) -> Option<()> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_text_forms_read_and_hex_prints() {
        assert_eq!(parse_bytea("\\x00ff0A"), Some(vec![0x00, 0xff, 0x0a]));
        assert_eq!(parse_bytea("a\\\\b\\001"), Some(b"a\\b\x01".to_vec()));
        assert_eq!(parse_bytea("\\x0"), None);
        assert_eq!(parse_bytea("\\9"), None);
        let mut s = String::new();
        write_bytea_hex(&[0xde, 0xad, 0x01], &mut s);
        assert_eq!(s, "\\xdead01");
    }
}
