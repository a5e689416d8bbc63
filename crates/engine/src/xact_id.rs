//! `txid_current()` and `txid_current_if_assigned()`: the 64-bit id of the
//! session's transaction, as PostgreSQL's functions of those names report
//! it.
//!
//! A transaction takes its id at its first write ([`crate::dml`]), so a
//! read-only transaction has none. Asking for the id is a write in this
//! sense, as in PostgreSQL: [`Session::txid_current`] assigns one (and
//! takes its transaction-id lock) when the transaction has none yet.
//! Outside a transaction block the call is its own transaction, which
//! commits at once, as `SELECT txid_current();` does in autocommit mode.
//! [`Session::txid_if_assigned`] never assigns.
//!
//! ```no_run
//! # fn demo(s: &mut turnstile_engine::session::Session) -> turnstile_engine::error::Result<()> {
//! s.begin()?;
//! assert_eq!(s.txid_if_assigned(), None); // nothing written yet
//! let x = s.txid_current()?;
//! assert_eq!(s.txid_if_assigned(), Some(x));
//! s.commit()?;
//! # Ok(()) }
//! ```

use crate::error::Result;
use crate::session::Session;

impl Session {
    /// The open transaction's id, assigned now if it has none
    /// (PostgreSQL's `txid_current()`).
    pub fn txid_current(&mut self) -> Result<u64> {
        self.statement("", |s| s.ensure_xid())
    }

    /// The open transaction's id, or `None` while it has not written
    /// (PostgreSQL's `txid_current_if_assigned()`).
    pub fn txid_if_assigned(&self) -> Option<u64> {
        self.txn.xid
    }
}
