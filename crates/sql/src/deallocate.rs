//! SQL `DEALLOCATE name` and `DEALLOCATE ALL` over both kinds of prepared
//! statement: those of SQL `PREPARE` (the session's) and those of the
//! protocol's `Parse` message (the server's, kept by the backend beside
//! its portals). PostgreSQL has one namespace for both, so a driver that
//! prepares through the protocol and resets with `DEALLOCATE ALL` (pgx)
//! can prepare the same names again.
//!
//! The backend tells the session which named statements it holds
//! ([`SqlSession::protocol_statement_parsed`] and
//! [`SqlSession::protocol_statement_closed`]); `DEALLOCATE` records what
//! it dropped of them, and the backend drops those after the statement
//! ([`SqlSession::take_deallocated`]); the bookkeeping is
//! [`crate::protocol_statements`].

use crate::error::SqlError;
use crate::protocol_statements::Deallocated;
use crate::session::SqlSession;
use crate::statement::Outcome;
use turnstile_lock::SqlState;

impl SqlSession {
    /// The backend prepared a named statement through `Parse`.
    pub fn protocol_statement_parsed(&mut self, name: &str) {
        self.protocol.parsed(name);
    }

    /// The backend closed a statement (`Close`).
    pub fn protocol_statement_closed(&mut self, name: &str) {
        self.protocol.closed(name);
    }

    /// What `DEALLOCATE` dropped of the backend's statements since the last
    /// call, in order.
    pub fn take_deallocated(&mut self) -> Vec<Deallocated> {
        self.protocol.take_dropped()
    }

    /// `DEALLOCATE [PREPARE] name | ALL`: `26000` for a name that is
    /// prepared neither way.
    pub(crate) fn deallocate(&mut self, name: &str) -> Result<Outcome, SqlError> {
        if name == "all" {
            self.prepared.clear();
            self.protocol.drop_all();
            return Self::command("DEALLOCATE ALL");
        }
        let sql = self.prepared.remove(name).is_some();
        let protocol = self.protocol.drop_one(name);
        if !sql && !protocol {
            return Err(SqlError::new(
                SqlState::INVALID_SQL_STATEMENT_NAME,
                format!("prepared statement \"{name}\" does not exist"),
            ));
        }
        Self::command("DEALLOCATE")
    }
}
