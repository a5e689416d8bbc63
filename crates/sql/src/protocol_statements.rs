//! The statements a backend prepared through the protocol's `Parse`, as
//! the session's SQL `DEALLOCATE` sees them (`deallocate.rs`): their names,
//! and what `DEALLOCATE` dropped of them since the backend last asked.
//! Invariant, between statements: `names` = the backend's named
//! statements.
//!
//! ```
//! use turnstile_sql::Deallocated;
//! assert_ne!(Deallocated::All, Deallocated::One("s1".into()));
//! ```

use std::collections::HashSet;

/// What `DEALLOCATE` dropped of the protocol-prepared statements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Deallocated {
    /// The statement of this name.
    One(String),
    /// Every named statement.
    All,
}

/// The protocol-prepared statements of one session.
#[derive(Debug, Default)]
pub(crate) struct ProtocolStatements {
    /// The backend's named statements.
    names: HashSet<String>,
    /// Dropped by `DEALLOCATE` since the backend last asked.
    dropped: Vec<Deallocated>,
}

impl ProtocolStatements {
    /// A named statement was prepared (the unnamed one is not named).
    pub(crate) fn parsed(&mut self, name: &str) {
        if !name.is_empty() {
            self.names.insert(name.to_owned());
        }
    }

    /// A statement was closed.
    pub(crate) fn closed(&mut self, name: &str) {
        self.names.remove(name);
    }

    /// `DEALLOCATE name`: whether there was one.
    pub(crate) fn drop_one(&mut self, name: &str) -> bool {
        let had = self.names.remove(name);
        if had {
            self.dropped.push(Deallocated::One(name.to_owned()));
        }
        had
    }

    /// `DEALLOCATE ALL`.
    pub(crate) fn drop_all(&mut self) {
        self.names.clear();
        self.dropped.push(Deallocated::All);
    }

    /// What was dropped since the last call, in order.
    pub(crate) fn take_dropped(&mut self) -> Vec<Deallocated> {
        std::mem::take(&mut self.dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_only_what_was_prepared_and_reports_in_order() {
        let mut p = ProtocolStatements::default();
        p.parsed("a");
        p.parsed("");
        assert!(!p.drop_one(""));
        assert!(p.drop_one("a"));
        assert!(!p.drop_one("a"));
        p.parsed("b");
        p.closed("b");
        assert!(!p.drop_one("b"));
        p.drop_all();
        assert_eq!(p.take_dropped(), [Deallocated::One("a".into()), Deallocated::All]);
        assert!(p.take_dropped().is_empty());
    }
}
