//! The startup phase of a connection: SSL/GSS negotiation (refused), the
//! `CancelRequest` side channel, the `StartupMessage`, and trust
//! authentication.

use crate::frame::{FrameError, Reader};
use crate::output::Output;
use crate::stream::Stream;
use bytes::{Buf, BytesMut};
use pgwire::messages::startup::{NegotiateProtocolVersion, Startup};
use pgwire::messages::{DecodeContext, Message, ProtocolVersion};
use std::collections::BTreeMap;
use std::io::Write;
use turnstile_sql::{Severity, SqlState};

/// `SSLRequest`'s code in place of a protocol version.
const SSL_REQUEST_CODE: i32 = 80877103;
/// `GSSENCRequest`'s code.
const GSSENC_REQUEST_CODE: i32 = 80877104;
/// `CancelRequest`'s code.
const CANCEL_REQUEST_CODE: i32 = 80877102;
/// The protocol turnstile speaks: 3.0, as PostgreSQL 15.
const PROTOCOL_3_0: i32 = 196608;

/// What the first packets of a connection asked for.
pub enum Opening {
    /// A session: its startup parameters (`user`, `database`, ...).
    Session(BTreeMap<String, String>),
    /// A cancel request for backend `pid` with its secret key.
    Cancel { pid: i32, secret: i32 },
}

/// Reads packets until a `StartupMessage` or a `CancelRequest`, answering
/// `N` to SSL and GSS encryption requests. A FATAL error for the client is
/// already in `out` when this returns `Err(Some(..))`.
pub fn negotiate(reader: &mut Reader, stream: &mut Stream, out: &mut Output) -> Result<Opening, FrameError> {
    let mut refused_ssl = false;
    let mut refused_gss = false;
    loop {
        let mut packet = reader.read_startup_packet(stream)?;
        let code = (&packet[4..8]).get_i32();
        match code {
            SSL_REQUEST_CODE | GSSENC_REQUEST_CODE if packet.len() == 8 => {
                // One of each, as PostgreSQL's ProcessStartupPacket allows.
                let seen = if code == SSL_REQUEST_CODE { &mut refused_ssl } else { &mut refused_gss };
                if *seen {
                    return Err(FrameError::Protocol("repeated encryption request".into()));
                }
                *seen = true;
                stream.write_all(b"N")?;
            }
            CANCEL_REQUEST_CODE if packet.len() == 16 => {
                let mut body = &packet[8..];
                let pid = body.get_i32();
                let secret = body.get_i32();
                return Ok(Opening::Cancel { pid, secret });
            }
            _ => {
                let major = (code >> 16) as u16;
                let minor = (code & 0xffff) as u16;
                if major != 3 {
                    out.error(
                        Severity::Fatal,
                        SqlState::FEATURE_NOT_SUPPORTED,
                        &format!("unsupported frontend protocol {major}.{minor}: server supports 3.0 to 3.0"),
                        None,
                        None,
                        None,
                    );
                    return Err(FrameError::Protocol("unsupported protocol".into()));
                }
                return startup_parameters(&mut packet, minor, out).map(Opening::Session);
            }
        }
    }
}

/// Decodes a `StartupMessage` with pgwire's codec. A minor version above 0 or
/// `_pq_.` options get `NegotiateProtocolVersion`, as PostgreSQL 15 sends.
fn startup_parameters(
    packet: &mut BytesMut,
    minor: u16,
    out: &mut Output,
) -> Result<BTreeMap<String, String>, FrameError> {
    // The parameter list must end with an empty name.
    if packet.len() < 9 || packet[packet.len() - 1] != 0 {
        out.error(
            Severity::Fatal,
            SqlState::PROTOCOL_VIOLATION,
            "invalid startup packet layout: expected terminator as last byte",
            None,
            None,
            None,
        );
        return Err(FrameError::Protocol("bad startup packet".into()));
    }
    let ctx = DecodeContext::new(ProtocolVersion::PROTOCOL3_0);
    let startup = match Startup::decode(packet, &ctx) {
        Ok(Some(s)) => s,
        _ => {
            out.error(Severity::Fatal, SqlState::PROTOCOL_VIOLATION, "invalid startup packet layout", None, None, None);
            return Err(FrameError::Protocol("bad startup packet".into()));
        }
    };
    let mut params = startup.parameters;
    let unsupported: Vec<String> = params.keys().filter(|k| k.starts_with("_pq_.")).cloned().collect();
    if minor > 0 || !unsupported.is_empty() {
        out.push(&NegotiateProtocolVersion::new(PROTOCOL_3_0, unsupported.clone()));
        for k in &unsupported {
            params.remove(k);
        }
    }
    if params.get("replication").is_some_and(|v| v != "false" && v != "off" && v != "0") {
        out.error(
            Severity::Fatal,
            SqlState::FEATURE_NOT_SUPPORTED,
            "turnstile does not support replication connections",
            None,
            None,
            None,
        );
        return Err(FrameError::Protocol("replication".into()));
    }
    if params.get("user").is_none_or(|u| u.is_empty()) {
        out.error(
            Severity::Fatal,
            SqlState::INVALID_AUTHORIZATION_SPECIFICATION,
            "no PostgreSQL user name specified in startup packet",
            None,
            None,
            None,
        );
        return Err(FrameError::Protocol("no user".into()));
    }
    Ok(params)
}
