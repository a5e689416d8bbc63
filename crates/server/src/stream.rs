//! One client connection's socket: TCP or unix-domain, blocking.

use rustix::io::Errno;
use rustix::net::{recv, RecvFlags};
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// A client socket, as the backend thread reads and writes it.
#[derive(Debug)]
pub enum Stream {
    /// A TCP connection (`TCP_NODELAY` set, as PostgreSQL sets it).
    Tcp(TcpStream),
    /// A connection on the unix socket `<socket-dir>/.s.PGSQL.<port>`.
    Unix(UnixStream),
}

impl Stream {
    /// A second handle on the same socket (the server keeps one to shut the
    /// connection down when it stops).
    pub fn try_clone(&self) -> io::Result<Stream> {
        Ok(match self {
            Stream::Tcp(s) => Stream::Tcp(s.try_clone()?),
            Stream::Unix(s) => Stream::Unix(s.try_clone()?),
        })
    }

    /// Shuts both directions down: a backend blocked in `read` wakes with EOF.
    pub fn shutdown(&self) {
        self.shutdown_how(Shutdown::Both);
    }

    /// Shuts the read side down: a backend blocked in `read` wakes with EOF
    /// and can still write its last message (FATAL `57P01`).
    pub fn shutdown_read(&self) {
        self.shutdown_how(Shutdown::Read);
    }

    fn shutdown_how(&self, how: Shutdown) {
        // Ignored: the socket may already be closed by the peer.
        let _ = match self {
            Stream::Tcp(s) => s.shutdown(how),
            Stream::Unix(s) => s.shutdown(how),
        };
    }

    /// Sets the read timeout (`None` = block forever).
    pub fn set_read_timeout(&self, t: Option<std::time::Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(t),
            Stream::Unix(s) => s.set_read_timeout(t),
        }
    }

    /// The client's address as `pg_stat_activity.client_addr` shows it
    /// (`None` for a unix-socket client, as in PostgreSQL).
    pub fn client_addr(&self) -> Option<String> {
        match self {
            Stream::Tcp(s) => s.peer_addr().ok().map(|a| a.ip().to_string()),
            Stream::Unix(_) => None,
        }
    }
}

impl Stream {
    /// Reads what the client sent, as [`Read::read`], but first polls the
    /// socket for up to `poll` (a non-blocking `recv`, yielding the CPU
    /// between tries) before it sleeps in a blocking `read`.
    ///
    /// A backend that has just answered usually gets its client's next
    /// message within tens of microseconds; sleeping costs a wake-up that,
    /// on a virtual machine, is longer than the query (an idle vCPU halts
    /// and needs an interrupt to run again). Polling catches the message
    /// while the thread still runs, and `yield` hands the CPU to any other
    /// runnable thread meanwhile. (A gate that polled only while no more
    /// backends ran than there are CPUs made the 8-client points slower,
    /// not faster: a wake-up costs as much there.) `server.poll_us = 0`
    /// (`classic`) sleeps at once, as PostgreSQL's backend does in its
    /// `WaitEventSetWait`.
    pub fn read_polling(&mut self, buf: &mut [u8], poll: Duration) -> io::Result<usize> {
        if !poll.is_zero() {
            let deadline = Instant::now() + poll;
            loop {
                let got = match &*self {
                    Stream::Tcp(s) => recv(s, &mut *buf, RecvFlags::DONTWAIT),
                    Stream::Unix(s) => recv(s, &mut *buf, RecvFlags::DONTWAIT),
                };
                match got {
                    Ok((n, _)) => return Ok(n),
                    Err(Errno::AGAIN | Errno::INTR) => {}
                    Err(e) => return Err(e.into()),
                }
                if Instant::now() >= deadline {
                    break;
                }
                std::thread::yield_now();
            }
        }
        self.read(buf)
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poll_reads_what_arrives_and_then_sleeps_until_more_does() {
        let (a, mut client) = UnixStream::pair().unwrap();
        let mut stream = Stream::Unix(a);
        let mut buf = [0u8; 8];
        client.write_all(b"x").unwrap();
        assert_eq!(stream.read_polling(&mut buf, Duration::from_millis(20)).unwrap(), 1);
        // Nothing arrives within the poll: the read sleeps, and wakes with
        // what the client sends later, then with EOF.
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            client.write_all(b"yz").unwrap();
        });
        assert_eq!(stream.read_polling(&mut buf, Duration::from_micros(50)).unwrap(), 2);
        assert_eq!(&buf[..2], b"yz");
        writer.join().unwrap();
        assert_eq!(stream.read_polling(&mut buf, Duration::ZERO).unwrap(), 0, "EOF once the client is gone");
    }
}
