//! `client_encoding`: the encoding of the text a client sends and reads,
//! when it is not the server's UTF8. Query strings (`Query`, `Parse`) are
//! converted to UTF8 as they are read, and text-format values in `DataRow`s
//! to the client's encoding as they are sent, as PostgreSQL's
//! `pg_client_to_server`/`pg_server_to_client` do. `LATIN1` is ISO 8859-1
//! (each byte is the code point of the same number); `WIN1252` is Windows
//! code page 1252 (through `encoding_rs`). `SQL_ASCII` converts nothing.
//!
//! A character the client's encoding cannot hold is PostgreSQL's `22P05`.

use std::borrow::Cow;
use turnstile_sql::{SqlError, SqlState};

/// A client encoding the server converts to and from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) enum ClientEncoding {
    /// UTF8 or SQL_ASCII: no conversion.
    #[default]
    Utf8,
    /// ISO 8859-1.
    Latin1,
    /// Windows-1252.
    Win1252,
}

impl ClientEncoding {
    /// The encoding `client_encoding`'s value names (as the setting stores
    /// it: `UTF8`, `SQL_ASCII`, `LATIN1`, `WIN1252`).
    pub(crate) fn named(name: &str) -> ClientEncoding {
        match name {
            "LATIN1" => ClientEncoding::Latin1,
            "WIN1252" => ClientEncoding::Win1252,
            _ => ClientEncoding::Utf8,
        }
    }

    fn name(self) -> &'static str {
        match self {
            ClientEncoding::Utf8 => "UTF8",
            ClientEncoding::Latin1 => "LATIN1",
            ClientEncoding::Win1252 => "WIN1252",
        }
    }

    /// Client bytes as UTF-8 (every byte is a character in both
    /// encodings, so this cannot fail).
    pub(crate) fn to_server<'a>(self, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        match self {
            ClientEncoding::Utf8 => Cow::Borrowed(bytes),
            ClientEncoding::Latin1 => Cow::Owned(bytes.iter().map(|&b| char::from(b)).collect::<String>().into_bytes()),
            ClientEncoding::Win1252 => match encoding_rs::WINDOWS_1252.decode_without_bom_handling(bytes).0 {
                Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
                Cow::Owned(s) => Cow::Owned(s.into_bytes()),
            },
        }
    }

    /// UTF-8 text in the client's encoding; `22P05` for a character it
    /// lacks.
    pub(crate) fn to_client<'a>(self, text: &'a [u8]) -> Result<Cow<'a, [u8]>, SqlError> {
        if self == ClientEncoding::Utf8 || text.is_ascii() {
            return Ok(Cow::Borrowed(text));
        }
        let s = String::from_utf8_lossy(text);
        let mut out = Vec::with_capacity(s.len());
        for c in s.chars() {
            let byte = match self {
                ClientEncoding::Latin1 => u8::try_from(u32::from(c)).ok(),
                _ => {
                    let mut buf = [0u8; 4];
                    let (bytes, _, bad) = encoding_rs::WINDOWS_1252.encode(c.encode_utf8(&mut buf));
                    (!bad && bytes.len() == 1).then(|| bytes[0])
                }
            };
            match byte {
                Some(b) => out.push(b),
                None => {
                    let utf8: Vec<String> = c.to_string().bytes().map(|b| format!("0x{b:02x}")).collect();
                    return Err(SqlError::new(
                        SqlState::UNTRANSLATABLE_CHARACTER,
                        format!(
                            "character with byte sequence {} in encoding \"UTF8\" has no equivalent in encoding \"{}\"",
                            utf8.join(" "),
                            self.name()
                        ),
                    ));
                }
            }
        }
        Ok(Cow::Owned(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_and_win1252_round_trip_and_refuse_what_they_lack() {
        assert_eq!(&*ClientEncoding::Latin1.to_server(b"caf\xe9"), "café".as_bytes());
        assert_eq!(&*ClientEncoding::Win1252.to_server(b"\x80"), "€".as_bytes());
        assert_eq!(&*ClientEncoding::Latin1.to_client("café".as_bytes()).unwrap(), b"caf\xe9");
        assert_eq!(&*ClientEncoding::Win1252.to_client("€".as_bytes()).unwrap(), b"\x80");
        let e = ClientEncoding::Latin1.to_client("€".as_bytes()).unwrap_err();
        assert_eq!(e.code, SqlState::UNTRANSLATABLE_CHARACTER);
    }
}
