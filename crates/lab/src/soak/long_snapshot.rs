//! The long `REPEATABLE READ` session: one psql that opens a transaction,
//! takes its snapshot with a read, and keeps both for the whole run, so the
//! server can drop no row version made after it began.
//!
//! psql reads its script from a pipe that stays open: the session sends
//! `BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM
//! pgbench_accounts;`, waits for the count (the snapshot is taken once it
//! is answered), and at the end `COMMIT;` and closes the pipe. psql runs
//! with `ON_ERROR_STOP`, so a session the server ended or failed exits, and
//! [`LongSnapshot::check`] after every chunk or [`LongSnapshot::commit`]
//! at the end fails the run.

use crate::compare::cleanup::{self, Kind, Registered};
use crate::compare::client::Conn;
use crate::CliError;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long the session may take to begin, and to commit at the end.
const ANSWER_LIMIT: Duration = Duration::from_secs(120);

/// What the session sends first.
const OPEN: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ;\nSELECT count(*) FROM pgbench_accounts;\n";

/// The open session.
pub struct LongSnapshot {
    process: Registered,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Option<JoinHandle<String>>,
    /// What `SELECT count(*) FROM pgbench_accounts` answered in it.
    pub accounts: u64,
}

impl LongSnapshot {
    /// Opens the session on `conn` and waits until its snapshot is taken.
    pub fn open(conn: &Conn<'_>) -> Result<LongSnapshot, CliError> {
        let mut cmd = Command::new(conn.clients.program("psql"));
        cmd.args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"]);
        conn.target(&mut cmd);
        cmd.args(["-d", conn.db, "-f", "-"]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut process = cleanup::spawn(&mut cmd, Kind::Client)?;
        let child = process.child();
        let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let (Some(mut stdin), Some(stdout), Some(mut stderr)) = (stdin, stdout, stderr) else {
            return Err("psql for the long REPEATABLE READ session has no pipes".into());
        };
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        stdin.write_all(OPEN.as_bytes()).map_err(|e| format!("the long REPEATABLE READ session: {e}"))?;
        stdin.flush()?;
        let mut session = LongSnapshot { process, stdin: Some(stdin), lines, stderr: Some(stderr), accounts: 0 };
        let answer = match session.lines.recv_timeout(ANSWER_LIMIT) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => {
                return Err(format!("the long REPEATABLE READ session had no answer within {ANSWER_LIMIT:?}").into())
            }
            Err(RecvTimeoutError::Disconnected) => return Err(session.died("at its start")),
        };
        session.accounts = answer.trim().parse().map_err(|_| {
            format!("the long REPEATABLE READ session answered {answer:?} to SELECT count(*) FROM pgbench_accounts")
        })?;
        Ok(session)
    }

    /// Fails when the session has ended.
    pub fn check(&mut self) -> Result<(), CliError> {
        match self.process.child().try_wait()? {
            None => Ok(()),
            Some(_) => Err(self.died("during the run")),
        }
    }

    /// Commits the transaction and ends the session; an error if it had
    /// died or the commit failed.
    pub fn commit(mut self) -> Result<(), CliError> {
        self.check()?;
        let mut stdin = self.stdin.take().ok_or("the long REPEATABLE READ session was already closed")?;
        stdin.write_all(b"COMMIT;\n").map_err(|e| format!("the long REPEATABLE READ session: COMMIT: {e}"))?;
        // End of input: psql runs what it has and exits.
        drop(stdin);
        let deadline = std::time::Instant::now() + ANSWER_LIMIT;
        loop {
            if let Some(status) = self.process.child().try_wait()? {
                if status.success() {
                    return Ok(());
                }
                return Err(self.died("at COMMIT"));
            }
            if std::time::Instant::now() > deadline {
                return Err(format!("the long REPEATABLE READ session did not commit within {ANSWER_LIMIT:?}").into());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The error for a session that ended: its exit status and stderr.
    fn died(&mut self, when: &str) -> CliError {
        let status = self.process.stop(Duration::from_secs(5)).map_or_else(|e| e.to_string(), |s| s.to_string());
        let stderr = self.stderr.take().and_then(|h| h.join().ok()).unwrap_or_default();
        let stderr = stderr.lines().filter(|l| !l.trim().is_empty()).collect::<Vec<_>>().join(" | ");
        format!("the long REPEATABLE READ session died {when} (psql {status}): {stderr}").into()
    }
}
