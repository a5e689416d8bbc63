//! The listener: TCP and unix sockets, one accept thread per socket, one
//! backend thread per connection, the cancel-key registry, shutdown.

use crate::backend;
use crate::output::Output;
use crate::shared::{lock, Shared};
use crate::stream::Stream;
use std::collections::HashMap;
use std::io::{self, ErrorKind};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use turnstile_sql::SqlEngine;
use turnstile_sql::{Severity, SqlState};
use turnstile_sync::sync::counter::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use turnstile_sync::sync::{Arc, Mutex};

/// Stack of a backend thread: the SQL parser recurses.
const BACKEND_STACK_BYTES: usize = 8 << 20;
/// How long `shutdown` waits for backends to finish before flushing anyway.
const SHUTDOWN_WAIT_MAX: Duration = Duration::from_secs(10);

/// Where and how the server listens.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Comma-separated host names or addresses (`*` = every IPv4 address,
    /// empty = no TCP), as PostgreSQL's `listen_addresses`.
    pub listen: String,
    /// TCP port, also the number in the unix socket's name. 0 picks a free
    /// port (tests), which then names the unix socket.
    pub port: u16,
    /// Directory of the unix socket `.s.PGSQL.<port>`; `None` = no unix socket.
    pub socket_dir: Option<PathBuf>,
}

/// Errors of starting or stopping the server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// A socket could not be created.
    #[error("could not listen on {what}: {source}")]
    Listen {
        /// The address or socket path.
        what: String,
        /// The OS error.
        source: io::Error,
    },
    /// Nothing to listen on.
    #[error("no TCP address and no socket directory: nothing to listen on")]
    NothingToListenOn,
    /// The engine could not be flushed at shutdown.
    #[error("flushing the engine at shutdown failed: {0}")]
    Flush(String),
}

/// A running server. Dropping it stops it as [`Server::shutdown`] does.
pub struct Server {
    shared: Arc<Shared>,
    accept_threads: Vec<JoinHandle<()>>,
    tcp_addrs: Vec<SocketAddr>,
    socket_path: Option<PathBuf>,
    stopped: bool,
}

impl Server {
    /// Binds the sockets and starts accepting connections.
    pub fn start(engine: SqlEngine, options: &ServerOptions) -> Result<Server, ServerError> {
        let max_backends = engine.engine().config().lock.max_backends as usize;

        let shared = Arc::new(Shared {
            engine,
            cancel_keys: Mutex::new(HashMap::new()),
            sockets: Mutex::new(HashMap::new()),
            next_connection: AtomicU64::new(1),
            live: AtomicUsize::new(0),
            live_max: 2 * max_backends,
            writes: AtomicU64::new(0),
            stopping: AtomicBool::new(false),
        });
        let mut tcp = Vec::new();
        let mut port = options.port;
        for host in options.listen.split(',').map(str::trim).filter(|h| !h.is_empty()) {
            let host = if host == "*" { "0.0.0.0" } else { host };
            let what = format!("{host}:{port}");
            let addrs =
                (host, port).to_socket_addrs().map_err(|source| ServerError::Listen { what: what.clone(), source })?;
            for addr in addrs {
                let l =
                    TcpListener::bind(addr).map_err(|source| ServerError::Listen { what: addr.to_string(), source })?;
                let local = l.local_addr().map_err(|source| ServerError::Listen { what: what.clone(), source })?;
                port = local.port();
                tcp.push((l, local));
            }
        }
        let mut unix = None;
        if let Some(dir) = &options.socket_dir {
            if port == 0 {
                return Err(ServerError::Listen {
                    what: dir.display().to_string(),
                    source: io::Error::new(ErrorKind::InvalidInput, "a unix socket needs a port number (--port)"),
                });
            }
            let path = dir.join(format!(".s.PGSQL.{port}"));
            unix = Some((bind_unix(&path)?, path));
        }
        if tcp.is_empty() && unix.is_none() {
            return Err(ServerError::NothingToListenOn);
        }
        let mut server = Server {
            shared: shared.clone(),
            accept_threads: Vec::new(),
            tcp_addrs: tcp.iter().map(|(_, a)| *a).collect(),
            socket_path: unix.as_ref().map(|(_, p)| p.clone()),
            stopped: false,
        };
        for (listener, addr) in tcp {
            let shared = shared.clone();
            let t = std::thread::Builder::new()
                .name(format!("accept {addr}"))
                .spawn(move || accept_loop(&shared, || listener.accept().map(|(s, _)| tcp_stream(s))))
                .map_err(|source| ServerError::Listen { what: addr.to_string(), source })?;
            server.accept_threads.push(t);
        }
        if let Some((listener, path)) = unix {
            let shared = shared.clone();
            let t = std::thread::Builder::new()
                .name("accept unix".into())
                .spawn(move || accept_loop(&shared, || listener.accept().map(|(s, _)| Stream::Unix(s))))
                .map_err(|source| ServerError::Listen { what: path.display().to_string(), source })?;
            server.accept_threads.push(t);
        }
        Ok(server)
    }

    /// The TCP addresses listened on.
    pub fn tcp_addresses(&self) -> &[SocketAddr] {
        &self.tcp_addrs
    }

    /// The unix socket's path, if any.
    pub fn socket_path(&self) -> Option<&Path> {
        self.socket_path.as_deref()
    }

    /// The port (of the first TCP address, else the unix socket's).
    pub fn port(&self) -> Option<u16> {
        self.tcp_addrs.first().map(|a| a.port()).or_else(|| {
            let name = self.socket_path.as_ref()?.file_name()?.to_str()?;
            name.strip_prefix(".s.PGSQL.")?.parse().ok()
        })
    }

    /// Socket `write` calls made by all backends so far.
    pub fn socket_writes(&self) -> u64 {
        self.shared.writes.load(Ordering::Relaxed)
    }

    /// Connection threads alive now.
    pub fn live_connections(&self) -> usize {
        self.shared.live.load(Ordering::Relaxed)
    }

    /// Stops accepting, terminates every session (each backend rolls back
    /// its open transaction and releases its locks as it ends), waits for
    /// the backends, removes the unix socket and flushes the engine.
    pub fn shutdown(mut self) -> Result<(), ServerError> {
        self.stop()
    }

    fn stop(&mut self) -> Result<(), ServerError> {
        if self.stopped {
            return Ok(());
        }
        self.stopped = true;
        self.shared.stopping.store(true, Ordering::SeqCst);
        // Wake each accept thread with a connection of our own.
        for addr in &self.tcp_addrs {
            let mut a = *addr;
            if a.ip().is_unspecified() {
                a.set_ip(if a.is_ipv4() { [127, 0, 0, 1].into() } else { std::net::Ipv6Addr::LOCALHOST.into() });
            }
            let _ = TcpStream::connect_timeout(&a, Duration::from_secs(1));
        }
        if let Some(p) = &self.socket_path {
            let _ = UnixStream::connect(p);
        }
        for t in self.accept_threads.drain(..) {
            let _ = t.join();
        }
        // PostgreSQL's fast shutdown: every session is told (FATAL 57P01)
        // and ends, rolling back its open transaction; a running statement
        // or lock wait is canceled, a session blocked reading its socket is
        // woken by the socket's read side being shut down (so it can still
        // write the FATAL). A connection still in startup reads EOF.
        for (_, h) in lock(&self.shared.cancel_keys).values() {
            h.terminate();
        }
        for s in lock(&self.shared.sockets).values() {
            s.shutdown_read();
        }
        let deadline = Instant::now() + SHUTDOWN_WAIT_MAX;
        while self.shared.live.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            // Polled: backends end on their own once told.
            std::thread::sleep(Duration::from_millis(10));
        }
        // Whatever is left (a client that stopped reading) is cut off.
        for s in lock(&self.shared.sockets).values() {
            s.shutdown();
        }
        if let Some(p) = &self.socket_path {
            let _ = std::fs::remove_file(p);
        }
        self.shared.engine.close().map_err(|e| ServerError::Flush(e.message.clone()))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

fn tcp_stream(s: TcpStream) -> Stream {
    let _ = s.set_nodelay(true);
    Stream::Tcp(s)
}

/// Binds `<dir>/.s.PGSQL.<port>`, replacing a stale socket file nobody
/// listens on; a live one means another server owns the port.
fn bind_unix(path: &Path) -> Result<UnixListener, ServerError> {
    let err = |source| ServerError::Listen { what: path.display().to_string(), source };
    if path.exists() {
        if UnixStream::connect(path).is_ok() {
            return Err(err(io::Error::new(ErrorKind::AddrInUse, "another server is listening on this socket")));
        }
        std::fs::remove_file(path).map_err(err)?;
    }
    UnixListener::bind(path).map_err(err)
}

/// Accepts until the server stops; each connection gets its own thread.
fn accept_loop(shared: &Arc<Shared>, accept: impl Fn() -> io::Result<Stream>) {
    loop {
        let stream = match accept() {
            Ok(s) => s,
            Err(e) if shared.stopping.load(Ordering::SeqCst) => {
                let _ = e;
                return;
            }
            Err(e) => {
                // EMFILE and friends: the connection is lost, the server goes on.
                eprintln!("turnstile serve: accept failed: {e}");
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
        };
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        if shared.live.fetch_add(1, Ordering::SeqCst) >= shared.live_max {
            shared.live.fetch_sub(1, Ordering::SeqCst);
            refuse_too_many(stream, &shared.writes);
            continue;
        }
        let id = shared.next_connection.fetch_add(1, Ordering::Relaxed);
        if let Ok(clone) = stream.try_clone() {
            lock(&shared.sockets).insert(id, clone);
        }
        let s2 = shared.clone();
        let spawned =
            std::thread::Builder::new().name("backend".into()).stack_size(BACKEND_STACK_BYTES).spawn(move || {
                let _guard = ConnectionGuard { shared: &s2, id };
                backend::run(stream, &s2);
            });
        if let Err(e) = spawned {
            eprintln!("turnstile serve: could not start a backend thread: {e}");
            lock(&shared.sockets).remove(&id);
            shared.live.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Ends a connection's bookkeeping when its thread ends, however it ends.
struct ConnectionGuard<'a> {
    shared: &'a Shared,
    id: u64,
}

impl Drop for ConnectionGuard<'_> {
    fn drop(&mut self) {
        lock(&self.shared.sockets).remove(&self.id);
        self.shared.live.fetch_sub(1, Ordering::SeqCst);
    }
}

/// More connections than `2 × max_connections` at once: FATAL 53300 without
/// reading the startup packet (the postmaster's answer when it has no free
/// child slot).
fn refuse_too_many(mut stream: Stream, writes: &AtomicU64) {
    let mut out = Output::new();
    out.error(Severity::Fatal, SqlState::TOO_MANY_CONNECTIONS, "sorry, too many clients already", None, None, None);
    let _ = out.flush_to(&mut stream, writes);
}
