//! Reading frontend messages off a socket: framing with named length limits,
//! a layout check, then pgwire's decoder.
//!
//! pgwire's decoders trust the message body (a truncated `Bind` makes them
//! read past its end, and `bytes` panics on that). So this module frames
//! every message itself — type byte, length, exactly that many bytes — and
//! checks the body's layout field by field ([`check_layout`]) before pgwire
//! sees it. A message that fails either check is a protocol violation
//! (`08P01`), never a panic.

use crate::encoding::ClientEncoding;
use crate::stream::Stream;
use bytes::{Buf, BufMut, BytesMut};
use pgwire::messages::{DecodeContext, PgWireFrontendMessage, ProtocolVersion};
use std::io;

/// Longest message accepted for the types that carry user data (`Query`,
/// `Parse`, `Bind`, `CopyData`, `CopyFail`), length word included.
/// PostgreSQL allows 1 GB; a lab server has no statement that long, and a
/// lying length word must not make a backend buffer a gigabyte.
pub const MAX_LARGE_MESSAGE_BYTES: usize = 64 << 20;
/// Longest message accepted for every other type, and for the startup-phase
/// packets (PostgreSQL's `PQ_SMALL_MESSAGE_LIMIT` and `MAX_STARTUP_PACKET_LENGTH`).
pub const MAX_SMALL_MESSAGE_BYTES: usize = 10_000;
/// Bytes asked of the socket per `read` call.
const READ_CHUNK_BYTES: usize = 16 * 1024;

/// Why no message could be read.
#[derive(Debug)]
pub enum FrameError {
    /// The peer closed the connection (cleanly, or in the middle of a message).
    Closed,
    /// The socket failed.
    Io(io::Error),
    /// The bytes are not a frontend message: the connection cannot continue.
    Protocol(String),
    /// A `Query` or `Parse` whose text is not UTF-8 (the message was read
    /// whole, so the connection goes on): PostgreSQL's `22021`.
    Encoding {
        /// The message type (`Q` or `P`).
        tag: u8,
        /// PostgreSQL's message: `invalid byte sequence for encoding "UTF8": 0xff`.
        message: String,
    },
}

impl From<io::Error> for FrameError {
    fn from(e: io::Error) -> Self {
        match e.kind() {
            io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe => {
                FrameError::Closed
            }
            _ => FrameError::Io(e),
        }
    }
}

/// Buffered reader of one connection's frontend messages.
pub struct Reader {
    buf: BytesMut,
    /// What one `read` fills: allocated and zeroed once per connection,
    /// not per message (a 16 kB zeroed array on the stack cost a `memset`
    /// per read).
    chunk: Box<[u8]>,
    ctx: DecodeContext,
    /// How long a read polls before it sleeps ([`Stream::read_polling`]).
    poll: std::time::Duration,
    /// What query strings arrive in (`client_encoding`).
    encoding: ClientEncoding,
}

impl Default for Reader {
    fn default() -> Self {
        Self::new()
    }
}

impl Reader {
    /// An empty reader, in the state after startup (typed messages).
    pub fn new() -> Self {
        let mut ctx = DecodeContext::new(ProtocolVersion::PROTOCOL3_0);
        ctx.awaiting_frontend_ssl = false;
        ctx.awaiting_frontend_startup = false;
        Reader {
            buf: BytesMut::with_capacity(READ_CHUNK_BYTES),
            chunk: vec![0; READ_CHUNK_BYTES].into_boxed_slice(),
            ctx,
            poll: std::time::Duration::ZERO,
            encoding: ClientEncoding::Utf8,
        }
    }

    /// Reads poll the socket for up to `poll` before they sleep
    /// (`server.poll_us`).
    pub fn set_poll(&mut self, poll: std::time::Duration) {
        self.poll = poll;
    }

    /// Reads one startup-phase packet (no type byte): `SSLRequest`,
    /// `GSSENCRequest`, `CancelRequest` or `StartupMessage`. Returns the
    /// whole packet, length word included.
    pub fn read_startup_packet(&mut self, stream: &mut Stream) -> Result<BytesMut, FrameError> {
        self.fill(stream, 4)?;
        let len = (&self.buf[0..4]).get_i32();
        if len < 8 || len as usize > MAX_SMALL_MESSAGE_BYTES {
            return Err(FrameError::Protocol(format!("invalid length of startup packet: {len}")));
        }
        self.fill(stream, len as usize)?;
        Ok(self.buf.split_to(len as usize))
    }

    /// Reads and decodes one typed frontend message.
    pub fn read_message(&mut self, stream: &mut Stream) -> Result<PgWireFrontendMessage, FrameError> {
        self.fill(stream, 5)?;
        let tag = self.buf[0];
        let len = (&self.buf[1..5]).get_i32();
        let limit = match tag {
            b'Q' | b'P' | b'B' | b'd' | b'f' => MAX_LARGE_MESSAGE_BYTES,
            b'D' | b'C' | b'E' | b'S' | b'H' | b'X' | b'c' | b'p' => MAX_SMALL_MESSAGE_BYTES,
            other => return Err(FrameError::Protocol(format!("invalid frontend message type {other}"))),
        };
        if len < 4 || len as usize > limit {
            return Err(FrameError::Protocol(format!(
                "invalid message length {len} for message type \"{}\"",
                tag as char
            )));
        }
        let total = 1 + len as usize;
        self.fill(stream, total)?;
        let mut frame = self.buf.split_to(total);
        check_layout(tag, &frame[5..])
            .map_err(|what| FrameError::Protocol(format!("invalid message format (\"{}\" {what})", tag as char)))?;
        if matches!(tag, b'Q' | b'P') && self.encoding != ClientEncoding::Utf8 {
            frame = to_server_frame(self.encoding, tag, &frame);
        }
        if matches!(tag, b'Q' | b'P') {
            // pgwire would decode invalid UTF-8 lossily; PostgreSQL refuses it.
            // (Only the strings matter; a Parse's trailing type OIDs are not
            // text, so only the two strings before them are checked.)
            let strings_end = if tag == b'Q' {
                frame.len()
            } else {
                let first = frame[5..].iter().position(|&b| b == 0).map_or(frame.len(), |i| 5 + i + 1);
                frame[first..].iter().position(|&b| b == 0).map_or(frame.len(), |i| first + i + 1)
            };
            if let Err(e) = std::str::from_utf8(&frame[5..strings_end]) {
                let at = 5 + e.valid_up_to();
                let bad: Vec<String> = frame[at..(at + e.error_len().unwrap_or(1)).min(strings_end)]
                    .iter()
                    .map(|b| format!("0x{b:02x}"))
                    .collect();
                return Err(FrameError::Encoding {
                    tag,
                    message: format!("invalid byte sequence for encoding \"UTF8\": {}", bad.join(" ")),
                });
            }
        }
        match PgWireFrontendMessage::decode(&mut frame, &self.ctx) {
            Ok(Some(msg)) => Ok(msg),
            Ok(None) => Err(FrameError::Protocol("incomplete message".into())),
            Err(e) => Err(FrameError::Protocol(format!("invalid message: {e}"))),
        }
    }

    /// Sets what query strings arrive in, from the next message on.
    pub(crate) fn set_client_encoding(&mut self, encoding: ClientEncoding) {
        self.encoding = encoding;
    }

    /// Reads from the socket until at least `want` bytes are buffered.
    fn fill(&mut self, stream: &mut Stream, want: usize) -> Result<(), FrameError> {
        while self.buf.len() < want {
            let n = match stream.read_polling(&mut self.chunk, self.poll) {
                Ok(0) => return Err(FrameError::Closed),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            };
            self.buf.extend_from_slice(&self.chunk[..n]);
        }
        Ok(())
    }
}

/// A `Query` or `Parse` frame with its strings (the query; a Parse's
/// statement name and query) converted from `encoding` to UTF-8.
fn to_server_frame(encoding: ClientEncoding, tag: u8, frame: &[u8]) -> BytesMut {
    let body = &frame[5..];
    let strings = if tag == b'Q' { 1 } else { 2 };
    let mut out = BytesMut::with_capacity(frame.len() * 2);
    out.put_u8(tag);
    out.put_i32(0);
    let mut at = 0;
    for _ in 0..strings {
        let end = body[at..].iter().position(|&b| b == 0).map_or(body.len(), |i| at + i);
        out.put_slice(&encoding.to_server(&body[at..end]));
        out.put_u8(0);
        at = (end + 1).min(body.len());
    }
    out.put_slice(&body[at..]);
    let len = (out.len() - 1) as i32;
    out[1..5].copy_from_slice(&len.to_be_bytes());
    out
}

/// Checks that `body` (the bytes after the length word) has exactly the
/// layout of a message of type `tag`: every C string terminated, every
/// count backed by its bytes, nothing left over. Returns what is wrong.
pub fn check_layout(tag: u8, body: &[u8]) -> Result<(), &'static str> {
    let mut c = Cursor { rest: body };
    match tag {
        b'Q' | b'f' => c.cstring()?,
        b'P' => {
            c.cstring()?;
            c.cstring()?;
            let n = c.u16()? as usize;
            c.skip(n * 4)?;
        }
        b'B' => {
            c.cstring()?;
            c.cstring()?;
            let formats = c.u16()? as usize;
            c.skip(formats * 2)?;
            let params = c.u16()? as usize;
            for _ in 0..params {
                let len = c.i32()?;
                if len > 0 {
                    c.skip(len as usize)?;
                } else if len < -1 {
                    return Err("has a negative parameter length");
                }
            }
            let results = c.u16()? as usize;
            c.skip(results * 2)?;
        }
        b'D' | b'C' => {
            c.skip(1)?;
            c.cstring()?;
        }
        b'E' => {
            c.cstring()?;
            c.i32()?;
        }
        b'd' | b'p' => c.rest = &[],
        _ => {}
    }
    if c.rest.is_empty() {
        Ok(())
    } else {
        Err("has bytes after its last field")
    }
}

struct Cursor<'a> {
    rest: &'a [u8],
}

impl Cursor<'_> {
    fn skip(&mut self, n: usize) -> Result<(), &'static str> {
        if self.rest.len() < n {
            return Err("ends inside a field");
        }
        self.rest = &self.rest[n..];
        Ok(())
    }
    fn cstring(&mut self) -> Result<(), &'static str> {
        let end = self.rest.iter().position(|&b| b == 0).ok_or("has an unterminated string")?;
        self.rest = &self.rest[end + 1..];
        Ok(())
    }
    fn u16(&mut self) -> Result<u16, &'static str> {
        let mut b = self.rest;
        if b.len() < 2 {
            return Err("ends inside a field");
        }
        let v = b.get_u16();
        self.rest = b;
        Ok(v)
    }
    fn i32(&mut self) -> Result<i32, &'static str> {
        let mut b = self.rest;
        if b.len() < 4 {
            return Err("ends inside a field");
        }
        let v = b.get_i32();
        self.rest = b;
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::check_layout;

    #[test]
    fn layouts_are_checked_exactly() {
        assert!(check_layout(b'Q', b"select 1\0").is_ok());
        assert!(check_layout(b'Q', b"select 1").is_err());
        assert!(check_layout(b'Q', b"a\0b").is_err());
        assert!(check_layout(b'P', b"\0select $1\0\0\x01\0\0\0\x17").is_ok());
        assert!(check_layout(b'P', b"\0select $1\0\0\x02\0\0\0\x17").is_err());
        // Bind: portal, statement, 0 formats, 1 param "42", 0 result formats.
        assert!(check_layout(b'B', b"\0\0\0\0\0\x01\0\0\0\x0242\0\0").is_ok());
        assert!(check_layout(b'B', b"\0\0\0\0\0\x01\0\0\0\x0942\0\0").is_err());
        assert!(check_layout(b'B', b"\0\0\0\0\0\x01\xff\xff\xff\xff\0\0").is_ok());
        assert!(check_layout(b'B', b"\0\0\0\0\0\x01\xff\xff\xff\xf0\0\0").is_err());
        assert!(check_layout(b'E', b"\0\0\0\0\0").is_ok());
        assert!(check_layout(b'E', b"\0\0\0").is_err());
        assert!(check_layout(b'D', b"S\0").is_ok());
        assert!(check_layout(b'D', b"").is_err());
        assert!(check_layout(b'S', b"").is_ok());
        assert!(check_layout(b'S', b"x").is_err());
        assert!(check_layout(b'd', b"anything").is_ok());
    }
}
