//! `REINDEX`: `INDEX` and `TABLE` rebuild through the engine
//! ([`turnstile_engine::Session::reindex`]); `SCHEMA public` and
//! `DATABASE` (the current one, as PostgreSQL requires) rebuild every
//! table's indexes, one table at a time; `SYSTEM` has nothing to rebuild
//! (the system catalogs are computed, [`crate::catalog`]).

use crate::error::SqlError;
use crate::parse::ReindexTarget;
use crate::session::{SqlSession, TxStatus};
use crate::statement::Outcome;
use turnstile_lock::SqlState;

impl SqlSession {
    pub(crate) fn reindex(&mut self, target: ReindexTarget, name: Option<&str>) -> Result<Outcome, SqlError> {
        let whole = matches!(target, ReindexTarget::Schema | ReindexTarget::Database | ReindexTarget::System);
        if whole && self.tx != TxStatus::Idle {
            return Err(SqlError::new(
                SqlState::ACTIVE_SQL_TRANSACTION,
                "REINDEX SCHEMA, DATABASE and SYSTEM cannot run inside a transaction block",
            ));
        }
        match (target, name) {
            (ReindexTarget::Index | ReindexTarget::Table, Some(n)) => {
                if !crate::catalog::is_system_name(n) {
                    self.es.reindex(n)?;
                }
            }
            (ReindexTarget::Schema, Some("public")) => self.reindex_all()?,
            (ReindexTarget::Schema, Some(n)) if crate::catalog::schema::namespace_oid(n).is_some() => {}
            (ReindexTarget::Schema, Some(n)) => {
                return Err(SqlError::new(SqlState::INVALID_SCHEMA_NAME, format!("schema \"{n}\" does not exist")))
            }
            (ReindexTarget::Database | ReindexTarget::System, n) => {
                let current = crate::expr::Services::database(&self.ctx).to_owned();
                if n.is_some_and(|n| n != current) {
                    return Err(SqlError::new(
                        SqlState::FEATURE_NOT_SUPPORTED,
                        "can only reindex the currently open database",
                    ));
                }
                if target == ReindexTarget::Database {
                    self.reindex_all()?;
                }
            }
            (_, None) => return Err(SqlError::new(SqlState::SYNTAX_ERROR, "REINDEX needs a name")),
        }
        Self::command("REINDEX")
    }

    /// Every top-level table of the database (a partitioned table covers
    /// its partitions).
    fn reindex_all(&mut self) -> Result<(), SqlError> {
        let db = self.es.database();
        let cat = self.es.engine().catalog().snapshot();
        let tables: Vec<String> = cat
            .relations
            .values()
            .filter(|r| r.db == db && r.index.is_none() && r.parent.is_none())
            .map(|r| r.name.clone())
            .collect();
        for t in tables {
            self.es.reindex(&t)?;
        }
        Ok(())
    }
}
