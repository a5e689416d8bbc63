//! DDL beyond `session.rs`'s: `TRUNCATE`, `ADD PRIMARY KEY`, the
//! `fillfactor` storage parameter, `CREATE`/`DROP DATABASE`, and the
//! maintenance commands `VACUUM` and `ANALYZE` (in [`crate::vacuum`]).
//!
//! Like every DDL here, none of these is undone by a rollback: inside a
//! transaction block each is named in [`crate::RollbackReport::kept_ddl`].

use crate::catalog::{CatalogError, DbId, ForeignKey, RelEntry, RelId, RelKind, Relation};
use crate::error::{EngineError, InvalidTransactionState, Result};
use crate::heap::HeapScan;
use crate::session::Session;
use crate::types::{decode_row, Value};
use std::sync::Arc;
use turnstile_lock::LockMode;
use turnstile_storage::{Fork, RelFileId};

impl Session {
    /// `TRUNCATE t1, t2, …`: empties each table (every partition of a
    /// partitioned one) and resets its indexes, under `AccessExclusiveLock`
    /// on the tables, partitions and indexes. The relations keep their ids;
    /// their files are cut to zero blocks, their buffers and free-space
    /// map entries dropped, and each index rebuilt empty.
    pub fn truncate(&mut self, tables: &[&str]) -> Result<()> {
        self.statement(&format!("TRUNCATE {}", tables.join(", ")), |s| {
            s.note_ddl(&format!("TRUNCATE {}", tables.join(", ")));
            let mut targets: Vec<RelId> = Vec::new();
            for name in tables {
                let t = s.lock_by_name(name, LockMode::AccessExclusive)?;
                if !matches!(t.rel.kind, RelKind::Table | RelKind::PartitionedTable) {
                    return Err(CatalogError::WrongKind { name: (*name).into(), expected: "a table" }.into());
                }
                for id in s.engine.catalog().dependents(t.rel.id) {
                    s.lock_relation(id, LockMode::AccessExclusive)?;
                    if !targets.contains(&id) {
                        targets.push(id);
                    }
                }
            }
            let catalog = s.engine.catalog().snapshot();
            let rels: Vec<Relation> = targets
                .iter()
                .filter_map(|id| catalog.relations.get(id))
                .filter(|r| r.kind.has_storage())
                .cloned()
                .collect();
            let engine = Arc::clone(&s.engine);
            for r in &rels {
                let file = RelFileId::new(s.db, r.id);
                engine.truncate_relation(file, 0)?;
            }
            // Cached index roots of every backend point into the old files.
            engine.catalog().invalidate()?;
            for ix in rels.iter().filter(|r| r.kind == RelKind::Index) {
                s.build_index(ix)?;
            }
            Ok(())
        })
    }

    /// `ALTER TABLE table ADD PRIMARY KEY (columns…)`: a unique index named
    /// `<table>_pkey` (on a partitioned table, one per partition too), with
    /// the columns made NOT NULL. Refuses existing NULLs (`23502`),
    /// duplicates (`23505`) and a second primary key (`42P16`); on failure
    /// nothing is left behind.
    pub fn add_primary_key(&mut self, table: &str, columns: &[&str]) -> Result<RelId> {
        self.statement(&format!("ALTER TABLE {table} ADD PRIMARY KEY"), |s| {
            s.note_ddl(&format!("ALTER TABLE {table} ADD PRIMARY KEY"));
            let (t, parts) = s.lock_with_partitions(table)?;
            if t.indexes.iter().any(|ix| ix.primary) {
                return Err(CatalogError::InvalidTable(format!(
                    "multiple primary keys for table \"{table}\" are not allowed"
                ))
                .into());
            }
            // Existing NULLs refuse the key, as in PostgreSQL.
            s.refuse_nulls(&t, &parts, columns)?;
            let name = format!("{table}_pkey");
            let made = s.engine.catalog().create_index(s.db, table, &name, columns, true, true)?;
            let built = s
                .create_storage(&made)
                .and_then(|()| made.iter().filter(|r| r.kind.has_storage()).try_for_each(|ix| s.build_index(ix)))
                .and_then(|()| Ok(s.engine.catalog().set_not_null(s.db, table, columns, true)?));
            if let Err(e) = built {
                s.remove_relations(&s.engine.catalog().drop_relation(s.db, &name)?)?;
                return Err(e);
            }
            Ok(made[0].id)
        })
    }

    /// `ALTER TABLE table ALTER COLUMN … SET NOT NULL` (and `CREATE TABLE
    /// … NOT NULL`): under `AccessExclusiveLock` on the table and its
    /// partitions, refuses existing NULLs (`23502`, "contains null
    /// values"); then the columns refuse NULLs (`23502`) on every insert
    /// and update, in the table and its partitions.
    pub fn set_not_null(&mut self, table: &str, columns: &[&str]) -> Result<()> {
        self.statement(&format!("ALTER TABLE {table} SET NOT NULL"), |s| {
            s.note_ddl(&format!("ALTER TABLE {table} SET NOT NULL"));
            let (t, parts) = s.lock_with_partitions(table)?;
            s.refuse_nulls(&t, &parts, columns)?;
            s.engine.catalog().set_not_null(s.db, table, columns, true)?;
            Ok(())
        })
    }

    /// `ALTER TABLE table ALTER COLUMN column DROP NOT NULL`, on the table
    /// and its partitions. Refused, as PostgreSQL refuses it (`42P16`),
    /// for a primary-key column and for a partition's column that is NOT
    /// NULL in its parent.
    pub fn drop_not_null(&mut self, table: &str, column: &str) -> Result<()> {
        self.statement(&format!("ALTER TABLE {table} DROP NOT NULL"), |s| {
            s.note_ddl(&format!("ALTER TABLE {table} DROP NOT NULL"));
            let t = s.lock_by_name(table, LockMode::AccessExclusive)?;
            let c = t
                .rel
                .column_number(column)
                .ok_or_else(|| CatalogError::UnknownColumn { relation: table.into(), column: column.into() })?;
            if t.indexes.iter().any(|ix| ix.primary && ix.columns.contains(&c)) {
                return Err(CatalogError::InvalidTable(format!("column \"{column}\" is in a primary key")).into());
            }
            let parent = t.rel.parent.map(|p| s.rel_entry(p)).transpose()?;
            if parent.is_some_and(|p| p.rel.columns.iter().any(|x| x.name == column && x.not_null)) {
                return Err(CatalogError::InvalidTable(format!(
                    "column \"{column}\" is marked NOT NULL in parent table"
                ))
                .into());
            }
            s.engine.catalog().set_not_null(s.db, table, &[column], false)?;
            Ok(())
        })
    }

    /// `ALTER TABLE name ALTER column SET DEFAULT text` for each pair (the
    /// SQL layer's `CREATE TABLE … DEFAULT`), or `DROP DEFAULT` where the
    /// text is `None`; on the table and its partitions.
    pub fn set_defaults(&mut self, table: &str, defaults: &[(&str, Option<&str>)]) -> Result<()> {
        self.statement(&format!("ALTER TABLE {table} SET DEFAULT"), |s| {
            s.note_ddl(&format!("ALTER TABLE {table} SET DEFAULT"));
            s.lock_by_name(table, LockMode::AccessExclusive)?;
            s.engine.catalog().set_defaults(s.db, table, defaults)?;
            Ok(())
        })
    }

    /// Takes `AccessExclusiveLock` on `table` and on its partitions (and
    /// theirs); returns the table and every relation depending on it.
    fn lock_with_partitions(&mut self, table: &str) -> Result<(Arc<RelEntry>, Vec<RelId>)> {
        let t = self.lock_by_name(table, LockMode::AccessExclusive)?;
        let parts: Vec<RelId> = self.engine.catalog().dependents(t.rel.id);
        for id in &parts {
            self.lock_relation(*id, LockMode::AccessExclusive)?;
        }
        Ok((t, parts))
    }

    /// Fails with the first NULL among `columns` (of `t`) in a row of the
    /// tables among `parts` (locked by the caller), or with a column `t`
    /// lacks.
    fn refuse_nulls(&mut self, t: &RelEntry, parts: &[RelId], columns: &[&str]) -> Result<()> {
        let mut numbers = Vec::with_capacity(columns.len());
        for col in columns {
            numbers.push(
                t.rel.column_number(col).ok_or_else(|| CatalogError::UnknownColumn {
                    relation: t.rel.name.clone(),
                    column: (*col).into(),
                })?,
            );
        }
        let catalog = self.engine.catalog().snapshot();
        let leaves = parts.iter().filter_map(|id| catalog.relations.get(id)).filter(|r| r.kind == RelKind::Table);
        for leaf in leaves {
            let types = leaf.column_types();
            let scan =
                HeapScan::current(self.engine.pool(), RelFileId::new(self.db, leaf.id), self.engine.txns().snapshots());
            for item in scan? {
                let row = decode_row(&types, &item?.1)?;
                if let Some(&c) = numbers.iter().find(|&&c| matches!(row[c], Value::Null)) {
                    return Err(EngineError::ContainsNulls {
                        table: leaf.name.clone(),
                        column: leaf.columns[c].name.clone(),
                    });
                }
                self.backend.check_cancel()?;
            }
        }
        Ok(())
    }

    /// `ALTER TABLE name SET (fillfactor = n)` / `CREATE TABLE … WITH
    /// (fillfactor = n)`: heap inserts leave `100 - n` percent of each page
    /// free for updates (an empty page always takes a row). `None` resets
    /// to 100. Takes `ShareUpdateExclusiveLock`, as PostgreSQL does for
    /// this option. Partitions do not inherit it (as in PostgreSQL).
    pub fn set_fillfactor(&mut self, table: &str, fillfactor: Option<u8>) -> Result<()> {
        self.statement(&format!("ALTER TABLE {table} SET (fillfactor)"), |s| {
            s.note_ddl(&format!("ALTER TABLE {table} SET (fillfactor)"));
            s.lock_by_name(table, LockMode::ShareUpdateExclusive)?;
            s.engine.catalog().set_fillfactor(s.db, table, fillfactor)?;
            Ok(())
        })
    }

    /// `CREATE UNLOGGED TABLE`: marks the new, empty table `table` (its
    /// partitions and indexes, now and later) unlogged: its changes are
    /// not written to the WAL, and crash recovery empties it, as in
    /// PostgreSQL.
    pub fn set_unlogged(&mut self, table: &str) -> Result<()> {
        self.statement(&format!("ALTER TABLE {table} SET UNLOGGED"), |s| {
            s.note_ddl(&format!("ALTER TABLE {table} SET UNLOGGED"));
            s.lock_by_name(table, LockMode::AccessExclusive)?;
            for r in s.engine.catalog().set_unlogged(s.db, table)? {
                if r.kind.has_storage() {
                    s.engine.pool().set_unlogged(RelFileId::new(s.db, r.id), true);
                }
            }
            Ok(())
        })
    }

    /// `ALTER TABLE … ADD CONSTRAINT … FOREIGN KEY` (and `REFERENCES` in
    /// `CREATE TABLE`): records `fk` (its id is assigned and returned).
    /// Takes `ShareRowExclusiveLock` on both tables, as PostgreSQL does;
    /// the caller has checked the rows already there under those locks
    /// (see [`Session::lock_relation`]) and that the referenced columns
    /// are a unique key.
    pub fn add_foreign_key(&mut self, fk: ForeignKey) -> Result<u32> {
        self.statement(&format!("ALTER TABLE ADD CONSTRAINT {}", fk.name), |s| {
            s.note_ddl(&format!("ALTER TABLE ADD CONSTRAINT {}", fk.name));
            s.lock_relation(fk.table, LockMode::ShareRowExclusive)?;
            s.lock_relation(fk.ref_table, LockMode::ShareRowExclusive)?;
            Ok(s.engine.catalog().add_foreign_key(fk)?)
        })
    }

    /// `ALTER TABLE table DROP CONSTRAINT name` for a foreign key, under
    /// `AccessExclusiveLock` on the table and `ShareRowExclusiveLock` on
    /// the one it references.
    pub fn drop_foreign_key(&mut self, table: &str, name: &str) -> Result<ForeignKey> {
        self.statement(&format!("ALTER TABLE {table} DROP CONSTRAINT {name}"), |s| {
            s.note_ddl(&format!("ALTER TABLE {table} DROP CONSTRAINT {name}"));
            let t = s.lock_by_name(table, LockMode::AccessExclusive)?;
            let catalog = s.engine.catalog().snapshot();
            if let Some(k) = catalog.foreign_keys_of(t.rel.id).find(|k| k.name == name) {
                s.lock_relation(k.ref_table, LockMode::ShareRowExclusive)?;
            }
            Ok(s.engine.catalog().drop_foreign_key(s.db, table, name)?)
        })
    }

    /// `CREATE DATABASE name`. Not allowed inside a transaction block
    /// (`25001`), as in PostgreSQL.
    pub fn create_database(&mut self, name: &str) -> Result<DbId> {
        if self.in_transaction {
            return Err(InvalidTransactionState::InsideBlock("CREATE DATABASE").into());
        }
        self.statement(&format!("CREATE DATABASE {name}"), |s| Ok(s.engine.catalog().create_database(name)?))
    }

    /// `DROP DATABASE name`: refused for the session's own database and
    /// for one another session is connected to (`55006`), and inside a
    /// transaction block. Its relations' buffers and files are removed.
    pub fn drop_database(&mut self, name: &str) -> Result<()> {
        if self.in_transaction {
            return Err(InvalidTransactionState::InsideBlock("DROP DATABASE").into());
        }
        self.statement(&format!("DROP DATABASE {name}"), |s| {
            let id = s.engine.catalog().database(name)?;
            if id == s.db {
                return Err(EngineError::ObjectInUse("cannot drop the currently open database".into()));
            }
            let users = s.engine.count_db_user(id, 0);
            if users > 0 {
                return Err(EngineError::ObjectInUse(format!(
                    "database \"{name}\" is being accessed by other users ({users} sessions)"
                )));
            }
            let (_, dropped) = s.engine.catalog().drop_database(name)?;
            for rel in dropped.iter().filter(|r| r.kind.has_storage()) {
                let file = RelFileId::new(id, rel.id);
                s.engine.pool().drop_relation_buffers(file, Fork::Main, 0)?;
                s.engine.pool().fsm().truncate(file, 0);
                if s.engine.smgr().exists(file, Fork::Main)? {
                    s.engine.smgr().remove(file)?;
                }
            }
            Ok(())
        })
    }
}
