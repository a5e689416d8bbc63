//! The real clients: `psql` for setup and the census, `pgbench` for the
//! points. Every run is a registered child with a time limit, so a hung
//! server fails the command instead of blocking it.

use super::cleanup::{self, Kind};
use super::pgbin::PgClients;
use crate::workload::Mode;
use crate::CliError;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A connection target: server socket and database.
#[derive(Clone, Copy)]
pub struct Conn<'a> {
    /// The client programs (the same for every server).
    pub clients: &'a PgClients,
    /// The server's unix socket directory.
    pub socket_dir: &'a Path,
    /// Its port.
    pub port: u16,
    /// The database.
    pub db: &'a str,
}

impl Conn<'_> {
    /// Adds `-h <socket dir> -p <port> -U postgres` to a client's command.
    pub fn target(&self, cmd: &mut Command) {
        cmd.arg("-h").arg(self.socket_dir).args(["-p", &self.port.to_string(), "-U", "postgres"]);
    }

    /// Runs `sql` through `psql` (unaligned, tuples only, comma-separated,
    /// stopping at the first error); returns its output.
    pub fn psql(&self, sql: &str, limit: Duration) -> Result<String, CliError> {
        let mut cmd = Command::new(self.clients.program("psql"));
        cmd.args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-A", "-t", "-F", ","]);
        self.target(&mut cmd);
        cmd.args(["-d", self.db, "-f", "-"]);
        let out = run(&mut cmd, Some(sql.as_bytes().to_vec()), limit)?;
        if !out.status.success() {
            return Err(format!(
                "psql on {} failed ({}): {}",
                self.db,
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )
            .into());
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// `pgbench -i -q <args> <db>`.
    pub fn pgbench_init(&self, args: &[String], limit: Duration) -> Result<(), CliError> {
        let mut cmd = Command::new(self.clients.program("pgbench"));
        cmd.args(["-i", "-q"]);
        self.target(&mut cmd);
        cmd.args(args).arg(self.db);
        let out = run(&mut cmd, None, limit)?;
        if !out.status.success() {
            return Err(format!("pgbench -i {} failed ({}): {}", args.join(" "), out.status, tail(&out.stderr)).into());
        }
        Ok(())
    }

    /// One pgbench point: `pgbench -n -M <mode> -c <clients> -j
    /// min(clients, 2) -T <seconds> <args> <db>`.
    pub fn pgbench(&self, mode: Mode, clients: usize, seconds: u32, args: &[String]) -> Result<Bench, CliError> {
        let threads = clients.min(2);
        let mut all: Vec<String> = ["-n", "-M", mode.name(), "-c", &clients.to_string(), "-j", &threads.to_string()]
            .map(str::to_owned)
            .to_vec();
        all.extend(["-T".to_owned(), seconds.to_string()]);
        all.extend_from_slice(args);
        let (bench, _) = self.pgbench_with(&all, Duration::from_secs(u64::from(seconds) * 3 + 120))?;
        Ok(bench)
    }

    /// `pgbench <args> <db>` within `limit`: its summary and its whole
    /// standard output (per-script counts follow the summary). An exit
    /// status other than success, an unreadable summary or a failed
    /// transaction is an error.
    pub fn pgbench_with(&self, args: &[String], limit: Duration) -> Result<(Bench, String), CliError> {
        let mut cmd = Command::new(self.clients.program("pgbench"));
        self.target(&mut cmd);
        cmd.args(args).arg(self.db);
        let out = run(&mut cmd, None, limit)?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let bench = Bench::parse(&text);
        match bench {
            Some(b) if out.status.success() && b.failed == 0 => Ok((b, text)),
            _ => Err(format!(
                "pgbench {} on {} failed ({}): {}{}",
                args.join(" "),
                self.db,
                out.status,
                tail(&out.stderr),
                bench.map_or(String::new(), |b| format!(" ({} failed transactions)", b.failed)),
            )
            .into()),
        }
    }
}

/// What one pgbench run reported.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bench {
    /// `tps = … (without initial connection time)`.
    pub tps: f64,
    /// `latency average = … ms`.
    pub latency_ms: f64,
    /// `number of transactions actually processed`.
    pub transactions: u64,
    /// `number of failed transactions` (0 when pgbench does not print it).
    pub failed: u64,
}

impl Bench {
    /// Reads pgbench's summary.
    pub fn parse(text: &str) -> Option<Bench> {
        let after = |prefix: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(prefix))
                .and_then(|r| r.split_whitespace().next().map(str::to_owned))
        };
        let tps = text
            .lines()
            .find(|l| l.starts_with("tps = ") && l.contains("without initial connection time"))
            .and_then(|l| l["tps = ".len()..].split_whitespace().next())
            .and_then(|v| v.parse().ok())?;
        Some(Bench {
            tps,
            latency_ms: after("latency average = ").and_then(|v| v.parse().ok()).unwrap_or(f64::NAN),
            transactions: after("number of transactions actually processed: ")
                .and_then(|v| v.split('/').next().and_then(|n| n.parse().ok()))
                .unwrap_or(0),
            failed: after("number of failed transactions: ").and_then(|v| v.parse().ok()).unwrap_or(0),
        })
    }
}

fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(6)..].join(" | ")
}

/// Runs `cmd` as a registered client, feeding `input` on stdin, within
/// `limit` (then it is killed and the run fails).
pub fn run(cmd: &mut Command, input: Option<Vec<u8>>, limit: Duration) -> Result<Output, CliError> {
    cmd.stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let name = cmd.get_program().to_string_lossy().into_owned();
    let mut child = cleanup::spawn(cmd, Kind::Client)?;
    let writer = match (input, child.child().stdin.take()) {
        (Some(bytes), Some(mut stdin)) => Some(std::thread::spawn(move || {
            // A client that exits early closes the pipe: its exit status says why.
            let _ = stdin.write_all(&bytes);
        })),
        _ => None,
    };
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut buf);
            }
            buf
        })
    };
    let stdout = drain(child.child().stdout.take().map(|s| Box::new(s) as Box<dyn Read + Send>));
    let stderr = drain(child.child().stderr.take().map(|s| Box::new(s) as Box<dyn Read + Send>));
    let started = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.child().try_wait()? {
            break status;
        }
        if started.elapsed() > limit {
            timed_out = true;
            break child.stop(Duration::from_secs(1))?;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    drop(child);
    if let Some(w) = writer {
        let _ = w.join();
    }
    let out = Output {
        status,
        stdout: stdout.join().map_err(|_| "stdout reader panicked")?,
        stderr: stderr.join().map_err(|_| "stderr reader panicked")?,
    };
    if timed_out {
        return Err(format!("{name} did not finish within {limit:?}: killed ({})", tail(&out.stderr)).into());
    }
    Ok(out)
}

/// Runs `cmd` to the end; an error carries its stderr. Returns stdout.
pub fn run_to_end(cmd: &mut Command, _dir: &Path, what: &str, limit: Duration) -> Result<String, CliError> {
    let out = run(cmd, None, limit)?;
    if !out.status.success() {
        return Err(format!("{what} failed ({}): {}", out.status, tail(&out.stderr)).into());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs `cmd`; whether it exited with success.
pub fn run_status(cmd: &mut Command, limit: Duration) -> Result<bool, CliError> {
    Ok(run(cmd, None, limit)?.status.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgbench_15_summary_is_read() {
        let text = "transaction type: w1.sql\nscaling factor: 1\nquery mode: prepared\nnumber of clients: 8\n\
number of threads: 2\nmaximum number of tries: 1\nduration: 5 s\n\
number of transactions actually processed: 23141\nnumber of failed transactions: 0 (0.000%)\n\
latency average = 1.728 ms\ninitial connection time = 12.449 ms\ntps = 4628.951187 (without initial connection time)\n";
        let b = Bench::parse(text).unwrap();
        assert_eq!(b, Bench { tps: 4628.951187, latency_ms: 1.728, transactions: 23141, failed: 0 });
        assert!(Bench::parse("pgbench: error: connection refused").is_none());
    }
}
