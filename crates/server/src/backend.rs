//! One backend: the thread that owns a connection and its `SqlSession`, and
//! runs PostgreSQL's protocol state machine (`postgres.c`'s
//! `PostgresMain` loop) on it.
//!
//! States: startup ([`crate::startup`]) → ready → (simple query | extended
//! query messages | COPY IN sub-loop) → ready … → terminated. After an error
//! in an extended-query message every message up to `Sync` is skipped.
//! Output accumulates in [`Output`] and is written once per `Sync`, simple
//! `Query` or `Flush`.

use crate::encoding::ClientEncoding;
use crate::frame::{FrameError, Reader};
use crate::output::{Output, OUTPUT_FLUSH_BYTES};
use crate::shared::Shared;
use crate::startup::{self, Opening};
use crate::stream::Stream;
use pgwire::messages::copy::{CopyData, CopyDone, CopyInResponse, CopyOutResponse};
use pgwire::messages::data::{NoData, ParameterDescription};
use pgwire::messages::extendedquery::{
    Bind, BindComplete, Close, CloseComplete, Describe, Execute, Parse, ParseComplete, PortalSuspended,
    TARGET_TYPE_BYTE_PORTAL, TARGET_TYPE_BYTE_STATEMENT,
};
use pgwire::messages::response::{CommandComplete, EmptyQueryResponse, ReadyForQuery, TransactionStatus};
use pgwire::messages::startup::{Authentication, BackendKeyData, ParameterStatus, SecretKey};
use pgwire::messages::PgWireFrontendMessage as Msg;
use std::collections::HashMap;
use std::time::Duration;
use turnstile_sql::binary::{self, Counted};
use turnstile_sql::{
    column_formats, CopyIn, Deallocated, Outcome, Param, ResultRows, Severity, SqlError, SqlSession, SqlState,
    Statement, TxStatus,
};
use turnstile_sync::sync::counter::Ordering;

/// A client that has not finished its startup packet by then is dropped
/// (PostgreSQL's `authentication_timeout`).
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// Runs one connection to its end.
pub(crate) fn run(mut stream: Stream, shared: &Shared) {
    let mut reader = Reader::new();
    let mut out = Output::new();
    let _ = stream.set_read_timeout(Some(STARTUP_TIMEOUT));
    let opening = startup::negotiate(&mut reader, &mut stream, &mut out);
    let params = match opening {
        Ok(Opening::Session(p)) => p,
        Ok(Opening::Cancel { pid, secret }) => {
            shared.cancel(pid, secret);
            return;
        }
        Err(e) => {
            if let FrameError::Protocol(msg) = &e {
                if out.is_empty() {
                    out.error(Severity::Fatal, SqlState::PROTOCOL_VIOLATION, msg, None, None, None);
                }
                let _ = out.flush_to(&mut stream, &shared.writes);
            }
            return;
        }
    };
    let _ = stream.set_read_timeout(None);
    let user = params.get("user").cloned().unwrap_or_default();
    let database = params.get("database").filter(|d| !d.is_empty()).cloned().unwrap_or_else(|| user.clone());
    let application_name = params.get("application_name").cloned().unwrap_or_default();
    let connected = SqlSession::connect(&shared.engine, &database, &user, &application_name, stream.client_addr());
    // The startup packet's settings (`TimeZone`, `DateStyle`, …), as
    // PostgreSQL applies them: a bad value ends the connection.
    let connected = connected.and_then(|mut s| {
        let settings: Vec<(&str, &str)> = params.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        s.apply_startup_settings(&settings).map(|()| s)
    });
    let session = match connected {
        Ok(s) => s,
        Err(e) => {
            push_error(&mut out, &e, true);
            let _ = out.flush_to(&mut stream, &shared.writes);
            return;
        }
    };
    reader.set_poll(Duration::from_micros(shared.engine.engine().config().server.poll_us));
    let pid = session.pid();
    let secret: i32 = rand::random();
    // pg_terminate_backend and shutdown wake a session blocked reading its
    // socket by shutting the socket's read side down.
    if let Ok(second) = stream.try_clone() {
        session.cancel_handle().set_waker(move || second.shutdown_read());
    }
    shared.register_cancel(pid, secret, session.cancel_handle());
    let mut backend = Backend {
        stream,
        reader,
        out,
        session,
        shared,
        statements: HashMap::new(),
        portals: HashMap::new(),
        skip_until_sync: false,
        read_timeout: None,
        encoding: ClientEncoding::Utf8,
    };
    backend.set_client_encoding();
    backend.out.push(&Authentication::Ok);
    for (name, value) in backend.session.startup_parameters() {
        backend.out.push(&ParameterStatus::new(name, value));
    }
    backend.out.push(&BackendKeyData::new(pid, SecretKey::I32(secret)));
    backend.ready_for_query();
    if backend.flush().is_ok() {
        backend.main_loop();
    }
    shared.unregister_cancel(pid);
    // Dropping the backend drops the session: an open transaction is rolled
    // back, its locks and the backend slot released.
}

impl Backend<'_> {
    /// Takes `client_encoding` as the session has it (after startup).
    fn set_client_encoding(&mut self) {
        let name = self.session.setting("client_encoding").unwrap_or_default();
        self.encoding = ClientEncoding::named(&name);
        self.reader.set_client_encoding(self.encoding);
    }
}

/// A bound statement with its parameters, and how far `Execute` got.
struct Portal {
    statement: Statement,
    params: Vec<Param>,
    /// Bind's result format codes (none = all text, one = for every
    /// column, else one per column; checked against the columns at Bind).
    /// The session builds the rows in these formats.
    result_formats: Vec<i16>,
    state: PortalState,
}

enum PortalState {
    /// Not executed yet.
    Ready,
    /// Executed with a row limit: rows not sent yet (front = next).
    Suspended { rows: ResultRows },
    /// Run to completion; executing it again returns no rows.
    Done { tag: String },
}

struct Backend<'a> {
    stream: Stream,
    reader: Reader,
    out: Output,
    session: SqlSession,
    shared: &'a Shared,
    /// Prepared statements by name ("" = the unnamed one).
    statements: HashMap<String, Statement>,
    /// Portals by name ("" = the unnamed one).
    portals: HashMap<String, Portal>,
    /// An extended-query message failed: skip messages until `Sync`.
    skip_until_sync: bool,
    /// The socket's read timeout now (`idle_in_transaction_session_timeout`).
    read_timeout: Option<Duration>,
    /// What text values are sent in (`client_encoding`).
    encoding: ClientEncoding,
}

/// An error that ends the connection (socket gone or protocol violated).
struct Disconnect;

impl From<std::io::Error> for Disconnect {
    fn from(_: std::io::Error) -> Self {
        Disconnect
    }
}

type Step = Result<(), Disconnect>;

impl Backend<'_> {
    fn main_loop(&mut self) {
        loop {
            if self.terminating() {
                return self.fatal(SqlState::ADMIN_SHUTDOWN, "terminating connection due to administrator command");
            }
            let idle_timeout = self.session.idle_in_transaction_timeout();
            if idle_timeout != self.read_timeout && self.stream.set_read_timeout(idle_timeout).is_ok() {
                self.read_timeout = idle_timeout;
            }
            let msg = match self.reader.read_message(&mut self.stream) {
                Ok(m) => m,
                Err(FrameError::Protocol(m)) => return self.fatal(SqlState::PROTOCOL_VIOLATION, &m),
                Err(FrameError::Encoding { tag, message }) => {
                    let e = SqlError::new(SqlState::CHARACTER_NOT_IN_REPERTOIRE, message);
                    let step = if self.skip_until_sync {
                        Ok(())
                    } else if tag == b'Q' {
                        self.session.statement_failed();
                        push_error(&mut self.out, &e, false);
                        self.ready_for_query();
                        self.flush()
                    } else {
                        self.extended(|_| Err(Failure::Sql(e)))
                    };
                    if step.is_err() {
                        return;
                    }
                    continue;
                }
                Err(_) if self.terminating() => {
                    return self.fatal(SqlState::ADMIN_SHUTDOWN, "terminating connection due to administrator command");
                }
                Err(FrameError::Io(e))
                    if idle_timeout.is_some()
                        && matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) =>
                {
                    return self.fatal(
                        SqlState::IDLE_IN_TRANSACTION_SESSION_TIMEOUT,
                        "terminating connection due to idle-in-transaction timeout",
                    );
                }
                Err(_) => return,
            };
            if self.skip_until_sync && !matches!(msg, Msg::Sync(_) | Msg::Terminate(_)) {
                continue;
            }
            let step = match msg {
                Msg::Query(q) => self.simple_query(&q.query),
                Msg::Parse(m) => self.extended(|b| b.parse(m)),
                Msg::Bind(m) => self.extended(|b| b.bind(m)),
                Msg::Describe(m) => self.extended(|b| b.describe(m)),
                Msg::Execute(m) => self.extended(|b| b.execute(m)),
                Msg::Close(m) => self.extended(|b| b.close(m)),
                Msg::Sync(_) => self.sync(),
                Msg::Flush(_) => self.flush(),
                Msg::Terminate(_) => return,
                // Left over from a COPY that failed: ignored, as the protocol says.
                Msg::CopyData(_) | Msg::CopyDone(_) | Msg::CopyFail(_) => Ok(()),
                other => {
                    self.out.error(
                        Severity::Fatal,
                        SqlState::PROTOCOL_VIOLATION,
                        &format!("unexpected message {}", message_name(&other)),
                        None,
                        None,
                        None,
                    );
                    let _ = self.flush();
                    return;
                }
            };
            if step.is_err() {
                return;
            }
            if self.out.len() > OUTPUT_FLUSH_BYTES && self.flush().is_err() {
                return;
            }
        }
    }

    /// Whether the session must end: `pg_terminate_backend` or shutdown.
    fn terminating(&self) -> bool {
        self.shared.stopping.load(Ordering::SeqCst) || self.session.terminate_requested()
    }

    /// Sends a FATAL error and ends the session (its drop rolls back).
    fn fatal(&mut self, code: SqlState, message: &str) {
        self.out.error(Severity::Fatal, code, message, None, None, None);
        let _ = self.flush();
    }

    fn flush(&mut self) -> Step {
        self.out.flush_to(&mut self.stream, &self.shared.writes)?;
        Ok(())
    }

    fn ready_for_query(&mut self) {
        for (name, value) in self.session.set_parameter_changes() {
            if name == "client_encoding" {
                self.encoding = ClientEncoding::named(&value);
                self.reader.set_client_encoding(self.encoding);
            }
            self.out.push(&ParameterStatus::new(name, value));
        }
        let status = match self.session.transaction_status() {
            TxStatus::Idle => TransactionStatus::Idle,
            TxStatus::InBlock => TransactionStatus::Transaction,
            TxStatus::Failed => TransactionStatus::Error,
        };
        if matches!(status, TransactionStatus::Idle) {
            // Portals live until the end of their transaction.
            self.portals.clear();
        }
        self.out.push(&ReadyForQuery::new(status));
    }

    /// Sends the session's notices, and drops the statements a SQL
    /// `DEALLOCATE` dropped (it runs through the session, which names them).
    fn notices(&mut self) {
        for n in self.session.take_notices() {
            self.out.notice(n.severity, n.code, &n.message);
        }
        for d in self.session.take_deallocated() {
            match d {
                Deallocated::One(name) => {
                    self.statements.remove(&name);
                }
                Deallocated::All => self.statements.retain(|name, _| name.is_empty()),
            }
        }
    }

    /// Runs an extended-query message; an error is reported and starts the
    /// skip to `Sync`.
    fn extended(&mut self, f: impl FnOnce(&mut Self) -> Result<(), Failure>) -> Step {
        match f(self) {
            Ok(()) => Ok(()),
            Err(Failure::Sql(e)) => {
                self.session.statement_failed();
                self.notices();
                push_error(&mut self.out, &e, false);
                self.skip_until_sync = true;
                // Sent at once, as PostgreSQL's error reporting flushes: a
                // client that sent Parse/Describe/Flush (asyncpg) waits for
                // it, and the Flush itself is among the skipped messages.
                let sent = self.flush();
                if e.severity == Severity::Fatal {
                    return Err(Disconnect);
                }
                sent
            }
            Err(Failure::Disconnect) => Err(Disconnect),
        }
    }

    fn sync(&mut self) -> Step {
        self.skip_until_sync = false;
        if let Err(e) = self.session.end_implicit() {
            self.notices();
            push_error(&mut self.out, &e, false);
        }
        self.ready_for_query();
        self.flush()
    }

    // ---- simple query ----

    fn simple_query(&mut self, sql: &str) -> Step {
        // A Query message ends an implicit block left open by extended-query
        // messages without their Sync.
        if let Err(e) = self.session.end_implicit() {
            self.notices();
            push_error(&mut self.out, &e, false);
        }
        let result = self.simple_query_statements(sql);
        match result {
            Ok(()) => {}
            Err(Failure::Sql(e)) => {
                self.session.statement_failed();
                self.notices();
                push_error(&mut self.out, &e, false);
                if e.severity == Severity::Fatal {
                    let _ = self.flush();
                    return Err(Disconnect);
                }
            }
            Err(Failure::Disconnect) => return Err(Disconnect),
        }
        // A simple query drops the unnamed portal and statement's portal.
        self.portals.remove("");
        self.ready_for_query();
        self.flush()
    }

    fn simple_query_statements(&mut self, sql: &str) -> Result<(), Failure> {
        let statements = self.session.parse_batch(sql)?;
        self.notices();
        if statements.is_empty() {
            self.out.push(&EmptyQueryResponse::new());
            return Ok(());
        }
        for stmt in &statements {
            let outcome = self.session.execute(stmt, &[]);
            self.notices();
            match outcome? {
                Outcome::Rows { fields, rows, tag } => {
                    self.out.row_description(&fields);
                    self.send_rows(&rows, rows.len())?;
                    self.out.push(&CommandComplete::new(tag));
                }
                other => self.finish_outcome(other)?,
            }
        }
        Ok(())
    }

    /// Sends the first `n` of `rows` (each column already in its result
    /// format), writing out early when the buffer grows large.
    fn send_rows(&mut self, rows: &ResultRows, n: usize) -> Result<(), Failure> {
        for row in rows.iter().take(n) {
            if self.encoding != ClientEncoding::Utf8 {
                // Text-format values go out in the client's encoding.
                let mut values = Vec::with_capacity(row.len());
                for (i, v) in row.enumerate() {
                    values.push(match v {
                        Some(b) if !rows.is_binary(i) => Some(self.encoding.to_client(b).map_err(Failure::Sql)?),
                        other => other.map(std::borrow::Cow::Borrowed),
                    });
                }
                self.out.data_row(values.iter().map(|v| v.as_deref()));
            } else {
                self.out.data_row(row);
            }
            if self.out.len() > OUTPUT_FLUSH_BYTES {
                self.flush().map_err(|_| Failure::Disconnect)?;
            }
        }
        Ok(())
    }

    /// Reports an outcome other than rows (or after them): command tags,
    /// empty queries, and the COPY sub-protocols.
    fn finish_outcome(&mut self, outcome: Outcome) -> Result<(), Failure> {
        match outcome {
            Outcome::Command { tag } => self.out.push(&CommandComplete::new(tag)),
            Outcome::Empty => self.out.push(&EmptyQueryResponse::new()),
            Outcome::Rows { rows, tag, .. } => {
                self.send_rows(&rows, rows.len())?;
                self.out.push(&CommandComplete::new(tag));
            }
            Outcome::CopyOut { columns, lines, tag, binary } => {
                let format = i16::from(binary);
                self.out.push(&CopyOutResponse::new(format as i8, columns as i16, vec![format; columns]));
                for line in lines {
                    self.out.push(&CopyData::new(line.into()));
                    if self.out.len() > OUTPUT_FLUSH_BYTES {
                        self.flush().map_err(|_| Failure::Disconnect)?;
                    }
                }
                self.out.push(&CopyDone::new());
                self.out.push(&CommandComplete::new(tag));
            }
            Outcome::CopyIn(copy) => self.copy_in(copy)?,
        }
        Ok(())
    }

    /// COPY FROM STDIN: `CopyInResponse`, then `CopyData`… until `CopyDone`
    /// or `CopyFail`. `Flush` and `Sync` are ignored meanwhile, as in
    /// PostgreSQL; any other message fails the COPY.
    fn copy_in(&mut self, mut copy: CopyIn) -> Result<(), Failure> {
        let columns = copy.columns();
        let format = i16::from(copy.binary());
        self.out.push(&CopyInResponse::new(format as i8, columns as i16, vec![format; columns]));
        self.flush().map_err(|_| Failure::Disconnect)?;
        loop {
            let msg = match self.reader.read_message(&mut self.stream) {
                Ok(m) => m,
                Err(FrameError::Protocol(m)) => {
                    let e = self.session.copy_fail(copy, &m);
                    self.out.error(Severity::Fatal, SqlState::PROTOCOL_VIOLATION, &m, None, None, None);
                    let _ = e;
                    let _ = self.flush();
                    return Err(Failure::Disconnect);
                }
                Err(_) => {
                    let _ = self.session.copy_fail(copy, "connection lost");
                    return Err(Failure::Disconnect);
                }
            };
            match msg {
                Msg::CopyData(d) => {
                    if let Err(e) = self.session.copy_data(&mut copy, &d.data) {
                        // The rest of the client's data is ignored by the main loop.
                        let _ = self.session.copy_fail(copy, &e.message);
                        return Err(Failure::Sql(e));
                    }
                }
                Msg::CopyDone(_) => {
                    let tag = self.session.copy_done(copy)?;
                    self.notices();
                    self.out.push(&CommandComplete::new(tag));
                    return Ok(());
                }
                Msg::CopyFail(f) => return Err(Failure::Sql(self.session.copy_fail(copy, &f.message))),
                Msg::Flush(_) | Msg::Sync(_) => {}
                other => {
                    let what = format!("unexpected message type {} during COPY from stdin", message_name(&other));
                    let mut e = self.session.copy_fail(copy, &what);
                    e.code = SqlState::PROTOCOL_VIOLATION;
                    e.message = what;
                    return Err(Failure::Sql(e));
                }
            }
        }
    }

    // ---- extended query ----

    fn parse(&mut self, m: Parse) -> Result<(), Failure> {
        let name = m.name.unwrap_or_default();
        if !name.is_empty() && self.statements.contains_key(&name) {
            return Err(sql_error(
                SqlState::DUPLICATE_PREPARED_STATEMENT,
                format!("prepared statement \"{name}\" already exists"),
            ));
        }
        let stmt = self.session.prepare(&m.query, &m.type_oids);
        self.notices();
        let stmt = stmt?;
        self.session.protocol_statement_parsed(&name);
        self.statements.insert(name, stmt);
        self.out.push(&ParseComplete::new());
        Ok(())
    }

    fn bind(&mut self, m: Bind) -> Result<(), Failure> {
        let portal_name = m.portal_name.unwrap_or_default();
        let stmt_name = m.statement_name.unwrap_or_default();
        let statement = self.statements.get(&stmt_name).cloned().ok_or_else(|| no_statement(&stmt_name))?;
        let types = statement.param_types();
        let wanted = types.len();
        let param_formats = binary::formats(&m.parameter_format_codes, m.parameters.len(), Counted::Parameters)?;
        if m.parameters.len() != wanted {
            return Err(sql_error(
                SqlState::PROTOCOL_VIOLATION,
                format!(
                    "bind message supplies {} parameters, but prepared statement \"{stmt_name}\" requires {wanted}",
                    m.parameters.len()
                ),
            ));
        }
        // The result formats are checked against the columns now, as
        // PostgreSQL's PortalSetResultFormat does.
        binary::formats(&m.result_column_format_codes, statement.fields().map_or(0, <[_]>::len), Counted::Columns)?;
        let mut params = Vec::with_capacity(m.parameters.len());
        for (i, p) in m.parameters.into_iter().enumerate() {
            params.push(match p {
                None => Param::Null,
                // Decoded once, into a value of the parameter's type.
                Some(bytes) if param_formats[i] == binary::BINARY => Param::binary(types[i], &bytes, i)?,
                Some(bytes) => Param::Text(String::from_utf8(bytes.to_vec()).map_err(|_| {
                    sql_error(
                        SqlState::CHARACTER_NOT_IN_REPERTOIRE,
                        "invalid byte sequence for encoding \"UTF8\"".into(),
                    )
                })?),
            });
        }
        if !portal_name.is_empty() && self.portals.contains_key(&portal_name) {
            return Err(sql_error(SqlState::DUPLICATE_CURSOR, format!("cursor \"{portal_name}\" already exists")));
        }
        self.portals.insert(
            portal_name,
            Portal { statement, params, result_formats: m.result_column_format_codes, state: PortalState::Ready },
        );
        self.out.push(&BindComplete::new());
        Ok(())
    }

    fn describe(&mut self, m: Describe) -> Result<(), Failure> {
        let name = m.name.unwrap_or_default();
        match m.target_type {
            TARGET_TYPE_BYTE_STATEMENT => {
                let s = self.statements.get(&name).ok_or_else(|| no_statement(&name))?;
                self.out.push(&ParameterDescription::new(s.param_types().to_vec()));
                match s.fields() {
                    Some(fields) => self.out.row_description(fields),
                    None => self.out.push(&NoData::new()),
                }
            }
            TARGET_TYPE_BYTE_PORTAL => {
                let p = self.portals.get(&name).ok_or_else(|| no_portal(&name))?;
                match p.statement.fields() {
                    Some(fields) => {
                        let formats = column_formats(&p.result_formats, fields)?;
                        self.out.row_description_formats(fields, &formats);
                    }
                    None => self.out.push(&NoData::new()),
                }
            }
            other => {
                return Err(sql_error(
                    SqlState::PROTOCOL_VIOLATION,
                    format!("invalid DESCRIBE message subtype {other}"),
                ));
            }
        }
        Ok(())
    }

    fn execute(&mut self, m: Execute) -> Result<(), Failure> {
        let name = m.name.unwrap_or_default();
        let max_rows = if m.max_rows > 0 { m.max_rows as usize } else { usize::MAX };
        let mut portal = self.portals.remove(&name).ok_or_else(|| no_portal(&name))?;
        let result = self.run_portal(&mut portal, max_rows);
        // The portal survives its errors until the transaction ends, as in PostgreSQL.
        self.portals.insert(name, portal);
        result
    }

    fn run_portal(&mut self, portal: &mut Portal, max_rows: usize) -> Result<(), Failure> {
        if matches!(portal.state, PortalState::Ready) {
            self.session.begin_implicit(&portal.statement)?;
            let outcome = self.session.execute_in(&portal.statement, &portal.params, &portal.result_formats);
            self.notices();
            match outcome? {
                Outcome::Rows { rows, tag, .. } => {
                    if rows.len() <= max_rows {
                        self.send_rows(&rows, rows.len())?;
                        self.out.push(&CommandComplete::new(tag));
                        portal.state = PortalState::Done { tag: "SELECT 0".into() };
                        return Ok(());
                    }
                    portal.state = PortalState::Suspended { rows };
                }
                other => {
                    let tag = match &other {
                        Outcome::Command { tag } => tag.clone(),
                        Outcome::CopyOut { tag, .. } => tag.clone(),
                        _ => String::new(),
                    };
                    self.finish_outcome(other)?;
                    portal.state = PortalState::Done { tag };
                    return Ok(());
                }
            }
        }
        match &mut portal.state {
            PortalState::Suspended { rows } => {
                let n = max_rows.min(rows.len());
                self.send_rows(rows, n)?;
                rows.drain_front(n);
                if rows.is_empty() {
                    self.out.push(&CommandComplete::new(format!("SELECT {n}")));
                    portal.state = PortalState::Done { tag: "SELECT 0".into() };
                } else {
                    self.out.push(&PortalSuspended::new());
                }
            }
            PortalState::Done { tag } => {
                if tag.is_empty() {
                    self.out.push(&EmptyQueryResponse::new());
                } else {
                    self.out.push(&CommandComplete::new(tag.clone()));
                }
            }
            PortalState::Ready => unreachable!("a ready portal was executed above"),
        }
        Ok(())
    }

    fn close(&mut self, m: Close) -> Result<(), Failure> {
        let name = m.name.unwrap_or_default();
        match m.target_type {
            TARGET_TYPE_BYTE_STATEMENT => {
                self.statements.remove(&name);
                self.session.protocol_statement_closed(&name);
            }
            TARGET_TYPE_BYTE_PORTAL => {
                self.portals.remove(&name);
            }
            other => {
                return Err(sql_error(SqlState::PROTOCOL_VIOLATION, format!("invalid CLOSE message subtype {other}")))
            }
        }
        self.out.push(&CloseComplete::new());
        Ok(())
    }
}

/// Why a message could not be completed.
enum Failure {
    /// An SQL-level error: reported, and the connection goes on (unless FATAL).
    Sql(SqlError),
    /// The connection is gone.
    Disconnect,
}

impl From<SqlError> for Failure {
    fn from(e: SqlError) -> Self {
        Failure::Sql(e)
    }
}

fn sql_error(code: SqlState, message: String) -> Failure {
    Failure::Sql(SqlError::new(code, message))
}

fn no_statement(name: &str) -> Failure {
    if name.is_empty() {
        sql_error(SqlState::INVALID_SQL_STATEMENT_NAME, "unnamed prepared statement does not exist".into())
    } else {
        sql_error(SqlState::INVALID_SQL_STATEMENT_NAME, format!("prepared statement \"{name}\" does not exist"))
    }
}

fn no_portal(name: &str) -> Failure {
    sql_error(SqlState::INVALID_CURSOR_NAME, format!("portal \"{name}\" does not exist"))
}

/// Appends `e` as an `ErrorResponse` (FATAL when `fatal` or when the error
/// says so).
fn push_error(out: &mut Output, e: &SqlError, fatal: bool) {
    let severity = if fatal { Severity::Fatal } else { e.severity };
    out.sql_error(severity, e);
}

fn message_name(m: &Msg) -> &'static str {
    match m {
        Msg::SslNegotiation(_) => "SSLRequest",
        Msg::Startup(_) => "StartupMessage",
        Msg::CancelRequest(_) => "CancelRequest",
        Msg::PasswordMessageFamily(_) => "PasswordMessage",
        Msg::Query(_) => "Query",
        Msg::Parse(_) => "Parse",
        Msg::Close(_) => "Close",
        Msg::Bind(_) => "Bind",
        Msg::Describe(_) => "Describe",
        Msg::Execute(_) => "Execute",
        Msg::PortalSuspended(_) => "PortalSuspended",
        Msg::Flush(_) => "Flush",
        Msg::Sync(_) => "Sync",
        Msg::Terminate(_) => "Terminate",
        Msg::CopyData(_) => "CopyData",
        Msg::CopyFail(_) => "CopyFail",
        Msg::CopyDone(_) => "CopyDone",
    }
}
