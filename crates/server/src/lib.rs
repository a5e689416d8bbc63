//! # turnstile-server: PostgreSQL's frontend/backend protocol in front of turnstile
//!
//! `turnstile serve` listens like PostgreSQL 15 does, so the unmodified
//! `pgbench`, `psql`, `createdb` and `pg_isready` drive turnstile. SQL text
//! goes to [`turnstile_sql`]; this crate owns only connections and the
//! protocol state machine.
//!
//! ## Threads
//!
//! * one **accept thread** per listening socket (each TCP address, and the
//!   unix socket `<socket-dir>/.s.PGSQL.<port>`);
//! * one **backend thread per connection**, as PostgreSQL has one process
//!   per connection. Sockets are blocking; a backend that waits on a
//!   heavyweight lock blocks only its own thread.
//!
//! ## The protocol (v3.0)
//!
//! Message framing and encoding are pgwire's message codec (`pgwire::messages`,
//! pinned); its high-level handlers are not used. [`frame`] frames every
//! message itself and checks its layout before pgwire decodes it, so a
//! malformed message is an `08P01` error, never a panic. The state machine
//! ([`backend`]) is PostgreSQL's `PostgresMain` loop:
//!
//! * startup: `SSLRequest`/`GSSENCRequest` answered `N`; `CancelRequest`;
//!   `StartupMessage` (3.0; a newer minor version or `_pq_.` options get
//!   `NegotiateProtocolVersion`); trust authentication; `ParameterStatus`
//!   from the session; `BackendKeyData`; `ReadyForQuery`;
//! * simple `Query`, several statements per string, the rest skipped after
//!   an error;
//! * extended query: `Parse`/`Bind`/`Describe`/`Execute`/`Close`/`Sync`/
//!   `Flush`, named and unnamed statements and portals, `Execute` with a row
//!   limit → `PortalSuspended`; text and binary format per parameter and
//!   per result column (binary parameters decoded at `Bind` into typed
//!   [`turnstile_sql::Param`]s, result rows built by the session in the
//!   portal's formats, `turnstile_sql::binary`); an error is written at
//!   once, then every message up to `Sync` is skipped;
//! * `COPY … FROM STDIN` / `TO STDOUT` sub-protocols (text, CSV, binary);
//!   `NoticeResponse`; `ErrorResponse` with the `D`, `H`, `P`, `s`, `t`,
//!   `c`, `d`, `n` fields an error carries.
//!
//! **Output is written once per `Sync`, simple `Query`, `Flush` or
//! extended-query error**
//! ([`output`]), as PostgreSQL does (a result over 64 kB is written as it
//! grows). [`Server::socket_writes`] counts the `write` calls; a test holds
//! the count to one per `Sync`.
//!
//! ## Limits
//!
//! | limit | value | beyond it |
//! |---|---|---|
//! | sessions | `lock.max_backends` (`max_connections`) | FATAL `53300` from the SQL layer |
//! | connection threads | 2 × `lock.max_backends` | FATAL `53300` before a thread is started |
//! | startup packet | 10 000 bytes, 60 s | FATAL `08P01` / connection closed |
//! | `Query`/`Parse`/`Bind`/`CopyData` | [`frame::MAX_LARGE_MESSAGE_BYTES`] | FATAL `08P01` |
//! | other messages | [`frame::MAX_SMALL_MESSAGE_BYTES`] | FATAL `08P01` |
//!
//! ## What protects what
//!
//! | data | protected by |
//! |---|---|
//! | a session, its statements and portals | owned by its backend thread |
//! | cancel keys (pid → secret, handle) | a mutex in the shared state |
//! | the second handle on each socket (for shutdown) | a mutex in the shared state |
//! | counters (live connections, writes) | atomics |
//!
//! The two mutexes are never held together, nor across I/O.
//!
//! ## Shutdown
//!
//! [`Server::shutdown`] (SIGINT/SIGTERM in `turnstile serve`, see
//! [`TerminationSignals`]) is PostgreSQL's *fast* shutdown: it stops the
//! accept threads, asks every session to terminate (a running statement or
//! lock wait is canceled; a session blocked reading its socket is woken by
//! the socket's read side being shut down), and each backend says FATAL
//! `57P01` and drops its session, which rolls back an open transaction and
//! releases its locks; then the engine is flushed.
//!
//! ## Ending a session from the inside
//!
//! `pg_terminate_backend` ends a session the same way. With
//! `idle_in_transaction_session_timeout` set, a session inside a
//! transaction block that sends nothing for that long is ended with FATAL
//! `25P03` (the socket's read timeout).

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod backend;
mod encoding;
pub mod frame;
pub mod output;
mod server;
mod shared;
mod signals;
mod startup;
pub mod stream;

pub use server::{Server, ServerError, ServerOptions};
pub use signals::TerminationSignals;
