//! The catalog: DDL on [`CatalogData`], persisted atomically.
//!
//! # Persistence
//!
//! The catalog lives in `<data dir>/catalog` as one header line
//! `turnstile-catalog 1 <crc32c of body, hex> <body length>` followed by the
//! body as JSON. A change is written to `catalog.tmp`, fsynced, renamed over
//! `catalog`, and the directory is fsynced, so after a crash the file is
//! either the old catalog or the new one. Opening verifies the checksum and
//! refuses a damaged file with [`CatalogError::Corrupted`], which says what
//! to do, rather than guess.
//!
//! # Concurrency
//!
//! Readers take an `Arc` snapshot under a shared `LwLock` (tranche
//! `Catalog`) and then read without any lock. A DDL change holds the lock
//! exclusive while it copies the snapshot, edits the copy, persists it and
//! swaps it in: a failed write leaves the catalog exactly as it was.
//! Heavyweight locks (`AccessExclusive` on the relations a DDL touches) are
//! taken by the session before it calls in here; see `crate::session`.

use super::model::*;
use crate::types::{ColumnType, MAX_COLUMNS};
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use turnstile_sync::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use turnstile_sync::{LwLock, LwLockPolicy, Tranche};

const FILE_NAME: &str = "catalog";
const TEMP_NAME: &str = "catalog.tmp";
const MAGIC: &str = "turnstile-catalog";
const FORMAT: u32 = 1;
/// Longest relation, column or database name, in bytes (`NAMEDATALEN - 1`).
pub const NAME_MAX: usize = 63;

/// A catalog operation that failed; the catalog is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// No database has this name.
    #[error("database \"{0}\" does not exist")]
    UnknownDatabase(String),
    /// No relation has this name in the database.
    #[error("relation \"{0}\" does not exist")]
    UnknownRelation(String),
    /// The relation has no column with this name.
    #[error("column \"{column}\" of relation \"{relation}\" does not exist")]
    UnknownColumn {
        /// The relation.
        relation: String,
        /// The column as given.
        column: String,
    },
    /// A database with this name exists.
    #[error("database \"{0}\" already exists")]
    DuplicateDatabase(String),
    /// A relation with this name exists in the database.
    #[error("relation \"{0}\" already exists")]
    DuplicateRelation(String),
    /// The table has a column with this name.
    #[error("column \"{column}\" of relation \"{relation}\" already exists")]
    DuplicateColumn {
        /// The relation.
        relation: String,
        /// The column.
        column: String,
    },
    /// The table has a constraint with this name.
    #[error("constraint \"{name}\" for relation \"{relation}\" already exists")]
    DuplicateConstraint {
        /// The constraint.
        name: String,
        /// The table.
        relation: String,
    },
    /// The table has no constraint with this name.
    #[error("constraint \"{name}\" of relation \"{relation}\" does not exist")]
    UnknownConstraint {
        /// The constraint as given.
        name: String,
        /// The table.
        relation: String,
    },
    /// A type name the engine does not know.
    #[error("type \"{0}\" does not exist (supported: int4, int8, text, bool, timestamp, char(n), varchar(n))")]
    UnknownType(String),
    /// The relation is not of the kind the operation needs.
    #[error("\"{name}\" is not {expected}")]
    WrongKind {
        /// The relation.
        name: String,
        /// What the operation needs, e.g. "a partitioned table".
        expected: &'static str,
    },
    /// A bad definition: empty or too long names, too many columns, a
    /// partition bound that overlaps a sibling or does not match the
    /// strategy, a partition key that is not an integer column.
    #[error("invalid definition: {0}")]
    Invalid(String),
    /// A change the table's definition does not allow (PostgreSQL's
    /// `42P16`: a primary-key column made nullable, a second primary
    /// key).
    #[error("{0}")]
    InvalidTable(String),
    /// The catalog file is damaged; the engine refuses to open.
    #[error("catalog file {path} is corrupted ({reason}); restore it from a backup or move the data directory aside and start afresh")]
    Corrupted {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// Reading or writing the catalog file failed.
    #[error("cannot {op} catalog file {path}: {message}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// The file.
        path: PathBuf,
        /// The operating system's message (e.g. "No space left on device").
        message: String,
        /// The OS error number, if any.
        errno: Option<i32>,
    },
}

fn io_error(op: &'static str, path: &Path, e: std::io::Error) -> CatalogError {
    CatalogError::Io { op, path: path.to_owned(), message: e.to_string(), errno: e.raw_os_error() }
}

/// The system catalog of one data directory.
#[derive(Debug)]
pub struct Catalog {
    dir: PathBuf,
    data: LwLock<Arc<CatalogData>>,
    /// `data.generation`, published after each swap so relation caches can
    /// check for invalidation with one atomic load.
    generation: AtomicU64,
    /// While set, DDL changes are not written until [`Catalog::sync`].
    deferred: AtomicBool,
    /// Generation last written to disk.
    written: AtomicU64,
    /// What compiles index expressions (the SQL layer's), set once.
    index_exprs: index::ExprCompilerSlot,
}

impl Catalog {
    /// Opens the catalog in `dir`, creating a fresh one (with the database
    /// `postgres`) if there is none.
    pub fn open(dir: &Path, policy: LwLockPolicy) -> Result<Catalog, CatalogError> {
        let path = dir.join(FILE_NAME);
        let data = match fs::read(&path) {
            Ok(bytes) => decode(&path, &bytes)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let data = CatalogData::bootstrap();
                write_atomically(dir, &data)?;
                data
            }
            Err(e) => return Err(io_error("read", &path, e)),
        };
        let generation = AtomicU64::new(data.generation);
        let written = AtomicU64::new(data.generation);
        Ok(Catalog {
            dir: dir.to_owned(),
            data: LwLock::new(Tranche::Catalog, policy, Arc::new(data)),
            generation,
            deferred: AtomicBool::new(false),
            written,
            index_exprs: index::ExprCompilerSlot::default(),
        })
    }

    /// The current contents, readable without holding any lock.
    pub fn snapshot(&self) -> Arc<CatalogData> {
        Arc::clone(&self.data.lock_shared())
    }

    /// The current generation (bumped by every DDL).
    pub fn generation(&self) -> u64 {
        self.data.lock_shared().generation
    }

    /// The generation as last published, without taking the catalog lock
    /// (what a relation cache checks before every look-up).
    pub fn published_generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The id of database `name`.
    pub fn database(&self, name: &str) -> Result<DbId, CatalogError> {
        let data = self.snapshot();
        data.databases
            .values()
            .find(|d| d.name == name)
            .map(|d| d.id)
            .ok_or_else(|| CatalogError::UnknownDatabase(name.to_owned()))
    }

    /// The relation `name` of database `db`.
    pub fn relation(&self, db: DbId, name: &str) -> Result<Relation, CatalogError> {
        self.snapshot().find(db, name).cloned().ok_or_else(|| CatalogError::UnknownRelation(name.to_owned()))
    }

    /// Applies `change` to a copy of the catalog, persists it, and swaps it
    /// in; on any error nothing changes. Returns what `change` returned.
    fn modify<R>(&self, change: impl FnOnce(&mut CatalogData) -> Result<R, CatalogError>) -> Result<R, CatalogError> {
        let mut guard = self.data.lock_exclusive();
        let mut copy = CatalogData::clone(&guard);
        let out = change(&mut copy)?;
        copy.generation += 1;
        copy.reindex();
        if !self.deferred.load(Ordering::Relaxed) {
            write_atomically(&self.dir, &copy)?;
            self.written.store(copy.generation, Ordering::Relaxed);
        }
        self.generation.store(copy.generation, Ordering::Release);
        *guard = Arc::new(copy);
        Ok(out)
    }

    /// Bulk DDL: while `on`, changes are applied in memory and written only
    /// by [`Catalog::sync`] (or when deferral is turned off). A loader
    /// creating a thousand partitions saves a thousand fsyncs; a crash
    /// before the sync loses the deferred DDL (the relations' files remain
    /// as orphans, as after an aborted `CREATE TABLE` in PostgreSQL).
    pub fn defer_writes(&self, on: bool) -> Result<(), CatalogError> {
        self.deferred.store(on, Ordering::Relaxed);
        if on {
            Ok(())
        } else {
            self.sync()
        }
    }

    /// Writes the catalog if it changed since it was last written.
    pub fn sync(&self) -> Result<(), CatalogError> {
        let guard = self.data.lock_exclusive();
        if self.written.load(Ordering::Relaxed) != guard.generation {
            write_atomically(&self.dir, &guard)?;
            self.written.store(guard.generation, Ordering::Relaxed);
        }
        Ok(())
    }

    /// `CREATE DATABASE name`.
    pub fn create_database(&self, name: &str) -> Result<DbId, CatalogError> {
        check_name(name)?;
        self.modify(|c| {
            if c.databases.values().any(|d| d.name == name) {
                return Err(CatalogError::DuplicateDatabase(name.to_owned()));
            }
            let id = allocate(c)?;
            c.databases.insert(id, Database { id, name: name.to_owned() });
            Ok(id)
        })
    }

    /// `CREATE TABLE name (columns…) [PARTITION BY strategy (column)]`.
    pub fn create_table(
        &self,
        db: DbId,
        name: &str,
        columns: &[(&str, ColumnType)],
        partition_by: Option<(PartitionStrategy, &str)>,
    ) -> Result<Relation, CatalogError> {
        check_name(name)?;
        if columns.is_empty() || columns.len() > MAX_COLUMNS {
            return Err(CatalogError::Invalid(format!("a table needs 1 to {MAX_COLUMNS} columns")));
        }
        let mut cols: Vec<Column> = Vec::with_capacity(columns.len());
        for (col, ty) in columns {
            check_name(col)?;
            if cols.iter().any(|c| c.name == *col) {
                return Err(CatalogError::DuplicateColumn { relation: name.into(), column: (*col).into() });
            }
            cols.push(Column { name: (*col).to_owned(), ty: *ty, not_null: false, default: None });
        }
        let partition_key = match partition_by {
            None => None,
            Some((strategy, key)) => {
                let column = cols
                    .iter()
                    .position(|c| c.name == key)
                    .ok_or_else(|| CatalogError::UnknownColumn { relation: name.into(), column: key.into() })?;
                if !cols[column].ty.is_integer() {
                    return Err(CatalogError::Invalid(format!("partition key \"{key}\" must be an integer column")));
                }
                Some(PartitionKey { strategy, column })
            }
        };
        self.modify(|c| {
            check_db(c, db)?;
            if c.find(db, name).is_some() {
                return Err(CatalogError::DuplicateRelation(name.to_owned()));
            }
            let id = allocate(c)?;
            let kind = if partition_key.is_some() { RelKind::PartitionedTable } else { RelKind::Table };
            let rel = Relation {
                id,
                db,
                name: name.to_owned(),
                kind,
                columns: cols,
                partition_key,
                parent: None,
                bound: None,
                index: None,
                fillfactor: None,
                unlogged: false,
            };
            c.relations.insert(id, rel.clone());
            Ok(rel)
        })
    }

    /// `CREATE TABLE name PARTITION OF parent FOR VALUES …`. The partition
    /// gets the parent's columns and one index per index of the parent.
    /// Returns the partition and its new indexes.
    pub fn create_partition(
        &self,
        db: DbId,
        parent: &str,
        name: &str,
        bound: PartitionBound,
    ) -> Result<(Relation, Vec<Relation>), CatalogError> {
        check_name(name)?;
        self.modify(|c| {
            let (p, key) = attach::partitioned_table(c, db, parent)?;
            if c.find(db, name).is_some() {
                return Err(CatalogError::DuplicateRelation(name.to_owned()));
            }
            check_bound(c, &p, key, bound.clone())?;
            let id = allocate(c)?;
            let part = Relation {
                id,
                db,
                name: name.to_owned(),
                kind: RelKind::Table,
                columns: p.columns.clone(),
                partition_key: None,
                parent: Some(p.id),
                bound: Some(bound),
                index: None,
                fillfactor: None,
                unlogged: p.unlogged,
            };
            c.relations.insert(id, part.clone());
            let parent_indexes: Vec<Relation> = c.indexes_of(p.id).cloned().collect();
            let mut created = Vec::new();
            for pi in parent_indexes {
                let Some(def) = pi.index.clone() else { continue };
                let index_name = partition_index_name(c, &part, &def)?;
                created.push(add_index(
                    c,
                    &part,
                    &index_name,
                    IndexDef { table: part.id, parent: Some(pi.id), ..def },
                )?);
            }
            Ok((part, created))
        })
    }

    /// `ALTER TABLE table ADD COLUMN column ty` (on a partitioned table, on
    /// every partition too). Existing rows read the column as NULL.
    pub fn add_column(&self, db: DbId, table: &str, column: &str, ty: ColumnType) -> Result<Relation, CatalogError> {
        check_name(column)?;
        self.modify(|c| {
            let t = c.find(db, table).ok_or_else(|| CatalogError::UnknownRelation(table.into()))?.clone();
            if !matches!(t.kind, RelKind::Table | RelKind::PartitionedTable) {
                return Err(CatalogError::WrongKind { name: table.into(), expected: "a table" });
            }
            if t.column_number(column).is_some() {
                return Err(CatalogError::DuplicateColumn { relation: table.into(), column: column.into() });
            }
            if t.columns.len() >= MAX_COLUMNS {
                return Err(CatalogError::Invalid(format!("tables can have at most {MAX_COLUMNS} columns")));
            }
            let mut targets = vec![t.id];
            targets.extend(c.partitions_of(t.id).map(|p| p.id));
            for id in targets {
                if let Some(r) = c.relations.get_mut(&id) {
                    r.columns.push(Column { name: column.to_owned(), ty, not_null: false, default: None });
                }
            }
            c.relations.get(&t.id).cloned().ok_or_else(|| CatalogError::UnknownRelation(table.into()))
        })
    }

    /// `DROP TABLE` / `DROP INDEX name`, with everything that depends on it
    /// (partitions, indexes). Returns every dropped relation.
    pub fn drop_relation(&self, db: DbId, name: &str) -> Result<Vec<Relation>, CatalogError> {
        self.modify(|c| {
            let r = c.find(db, name).ok_or_else(|| CatalogError::UnknownRelation(name.into()))?.clone();
            if r.index.as_ref().is_some_and(|i| i.parent.is_some()) {
                return Err(CatalogError::Invalid(format!(
                    "cannot drop index \"{name}\" because it belongs to a partitioned index; drop that instead"
                )));
            }
            let victims = dependents(c, r.id);
            // The foreign keys of the dropped tables, on either side (the
            // session refused or cascaded the referencing ones first).
            c.foreign_keys.retain(|_, k| !victims.contains(&k.table) && !victims.contains(&k.ref_table));
            let mut dropped = Vec::with_capacity(victims.len());
            for id in victims {
                if let Some(rel) = c.relations.remove(&id) {
                    dropped.push(rel);
                }
            }
            Ok(dropped)
        })
    }

    /// Every database, by id.
    pub fn databases(&self) -> Vec<Database> {
        self.snapshot().databases.values().cloned().collect()
    }

    /// `DROP DATABASE name`: removes the database and its relations from
    /// the catalog; returns its id and the relations (whose files the
    /// caller removes). The database `postgres` cannot be dropped.
    pub fn drop_database(&self, name: &str) -> Result<(DbId, Vec<Relation>), CatalogError> {
        self.modify(|c| {
            let id = c
                .databases
                .values()
                .find(|d| d.name == name)
                .map(|d| d.id)
                .ok_or_else(|| CatalogError::UnknownDatabase(name.to_owned()))?;
            if name == "postgres" {
                return Err(CatalogError::Invalid("the database \"postgres\" cannot be dropped".into()));
            }
            c.databases.remove(&id);
            let ids: Vec<RelId> = c.relations.values().filter(|r| r.db == id).map(|r| r.id).collect();
            let dropped = ids.iter().filter_map(|rid| c.relations.remove(rid)).collect();
            Ok((id, dropped))
        })
    }

    /// Sets the NOT NULL flag of `columns` of `table` and of its
    /// partitions (`ADD PRIMARY KEY`, `ALTER COLUMN … SET NOT NULL`), or
    /// clears it (`DROP NOT NULL`).
    pub fn set_not_null(&self, db: DbId, table: &str, columns: &[&str], not_null: bool) -> Result<(), CatalogError> {
        self.alter_columns(db, table, columns, |_, col| col.not_null = not_null)
    }

    /// `ALTER TABLE name ALTER column SET DEFAULT text` for each pair
    /// (`None`: `DROP DEFAULT`), on the table and its partitions.
    pub fn set_defaults(&self, db: DbId, table: &str, defaults: &[(&str, Option<&str>)]) -> Result<(), CatalogError> {
        let columns: Vec<&str> = defaults.iter().map(|(c, _)| *c).collect();
        self.alter_columns(db, table, &columns, |i, col| col.default = defaults[i].1.map(str::to_owned))
    }

    /// Applies `change(i, column)` to the column named `columns[i]` of
    /// `table` and of each of its partitions; refuses a column `table`
    /// lacks.
    fn alter_columns(
        &self,
        db: DbId,
        table: &str,
        columns: &[&str],
        change: impl Fn(usize, &mut Column),
    ) -> Result<(), CatalogError> {
        self.modify(|c| {
            let t = c.find(db, table).ok_or_else(|| CatalogError::UnknownRelation(table.into()))?.clone();
            let mut targets = vec![t.id];
            targets.extend(dependents(c, t.id).into_iter().filter(|id| {
                c.relations.get(id).is_some_and(|r| matches!(r.kind, RelKind::Table | RelKind::PartitionedTable))
            }));
            for col in columns {
                if t.column_number(col).is_none() {
                    return Err(CatalogError::UnknownColumn { relation: table.into(), column: (*col).into() });
                }
            }
            for id in targets {
                if let Some(r) = c.relations.get_mut(&id) {
                    for (i, name) in columns.iter().enumerate() {
                        if let Some(col) = r.columns.iter_mut().find(|x| x.name == *name) {
                            change(i, col);
                        }
                    }
                }
            }
            Ok(())
        })
    }

    /// `ALTER TABLE name SET (fillfactor = n)` (10..=100; `None` resets).
    pub fn set_fillfactor(&self, db: DbId, name: &str, fillfactor: Option<u8>) -> Result<(), CatalogError> {
        if fillfactor.is_some_and(|f| !(10..=100).contains(&f)) {
            return Err(CatalogError::Invalid(format!(
                "value {} out of bounds for option \"fillfactor\" (10 to 100)",
                fillfactor.unwrap_or(0)
            )));
        }
        self.modify(|c| {
            let id = c.find(db, name).ok_or_else(|| CatalogError::UnknownRelation(name.into()))?.id;
            let r = c.relations.get_mut(&id).ok_or_else(|| CatalogError::UnknownRelation(name.into()))?;
            if !matches!(r.kind, RelKind::Table | RelKind::PartitionedTable) {
                return Err(CatalogError::WrongKind { name: name.into(), expected: "a table" });
            }
            r.fillfactor = fillfactor;
            Ok(())
        })
    }

    /// `CREATE UNLOGGED TABLE`: marks table `name`, its partitions and
    /// their indexes unlogged; returns every relation marked.
    pub fn set_unlogged(&self, db: DbId, name: &str) -> Result<Vec<Relation>, CatalogError> {
        self.modify(|c| {
            let id = c.find(db, name).ok_or_else(|| CatalogError::UnknownRelation(name.into()))?.id;
            let mut marked = Vec::new();
            let mut todo = vec![id];
            while let Some(t) = todo.pop() {
                let ids: Vec<RelId> = c
                    .relations
                    .values()
                    .filter(|r| r.id == t || r.parent == Some(t) || r.index.as_ref().is_some_and(|d| d.table == t))
                    .map(|r| r.id)
                    .collect();
                for i in ids {
                    let r = c.relations.get_mut(&i).ok_or_else(|| CatalogError::UnknownRelation(name.into()))?;
                    if !r.unlogged {
                        r.unlogged = true;
                        marked.push(r.clone());
                        if r.index.is_none() && i != t {
                            todo.push(i);
                        }
                    }
                }
            }
            Ok(marked)
        })
    }

    /// Bumps the generation without another change: relation caches (and
    /// their cached index roots) are rebuilt (after `TRUNCATE` rewrote
    /// relations' files).
    pub fn invalidate(&self) -> Result<(), CatalogError> {
        self.modify(|_| Ok(()))
    }

    /// The relation `id` and everything that would be dropped with it, in
    /// the order a DDL should lock them (the relation first).
    pub fn dependents(&self, id: RelId) -> Vec<RelId> {
        dependents(&self.snapshot(), id)
    }
}

/// `id`, its partitions and the indexes of each (recursively), `id` first.
fn dependents(c: &CatalogData, id: RelId) -> Vec<RelId> {
    let mut out = vec![id];
    let mut i = 0;
    while i < out.len() {
        let cur = out[i];
        out.extend(c.partitions_of(cur).map(|p| p.id));
        out.extend(c.indexes_of(cur).map(|x| x.id));
        if c.relations.get(&cur).is_some_and(|r| r.kind == RelKind::PartitionedIndex) {
            // The partitions' indexes that belong to a partitioned index.
            let children: Vec<RelId> = c
                .relations
                .values()
                .filter(|x| x.index.as_ref().is_some_and(|d| d.parent == Some(cur)))
                .map(|x| x.id)
                .collect();
            out.extend(children);
        }
        i += 1;
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|id| seen.insert(*id));
    out
}

pub(super) fn allocate(c: &mut CatalogData) -> Result<u32, CatalogError> {
    let id = c.next_id;
    c.next_id = id.checked_add(1).ok_or_else(|| CatalogError::Invalid("object ids exhausted".into()))?;
    Ok(id)
}

fn check_db(c: &CatalogData, db: DbId) -> Result<(), CatalogError> {
    if c.databases.contains_key(&db) {
        Ok(())
    } else {
        Err(CatalogError::UnknownDatabase(format!("with id {db}")))
    }
}

pub(super) fn check_name(name: &str) -> Result<(), CatalogError> {
    if name.is_empty() || name.len() > NAME_MAX {
        return Err(CatalogError::Invalid(format!("name \"{name}\" must be 1 to {NAME_MAX} bytes")));
    }
    if name.chars().any(|ch| ch.is_control() || ch == '/' || ch == '"') {
        return Err(CatalogError::Invalid(format!("name \"{}\" contains a forbidden character", name.escape_debug())));
    }
    Ok(())
}

fn check_bound(
    c: &CatalogData,
    parent: &Relation,
    key: PartitionKey,
    bound: PartitionBound,
) -> Result<(), CatalogError> {
    let siblings = c.partitions_of(parent.id).filter_map(|p| p.bound.clone().map(|b| (p.name.clone(), b)));
    match (key.strategy, bound) {
        (PartitionStrategy::Range, PartitionBound::Range { from, to }) => {
            if from >= to {
                return Err(CatalogError::Invalid(format!("empty range bound: FROM ({from}) TO ({to})")));
            }
            for (name, b) in siblings {
                if let PartitionBound::Range { from: f2, to: t2 } = b {
                    if from < t2 && f2 < to {
                        return Err(CatalogError::Invalid(format!("partition would overlap partition \"{name}\"")));
                    }
                }
            }
            Ok(())
        }
        (PartitionStrategy::Hash, PartitionBound::Hash { modulus, remainder }) => {
            if modulus == 0 || remainder >= modulus {
                return Err(CatalogError::Invalid(format!("bad hash bound: MODULUS {modulus}, REMAINDER {remainder}")));
            }
            for (name, b) in siblings {
                if let PartitionBound::Hash { modulus: m2, remainder: r2 } = b {
                    if m2 != modulus {
                        return Err(CatalogError::Invalid(format!(
                            "every hash partition of \"{}\" must use modulus {m2}",
                            parent.name
                        )));
                    }
                    if r2 == remainder {
                        return Err(CatalogError::Invalid(format!("partition would overlap partition \"{name}\"")));
                    }
                }
            }
            Ok(())
        }
        (PartitionStrategy::List, PartitionBound::List { values }) => {
            if values.is_empty() {
                return Err(CatalogError::Invalid("a list partition needs at least one value".into()));
            }
            for (name, b) in siblings {
                if let PartitionBound::List { values: v2 } = b {
                    if values.iter().any(|v| v2.contains(v)) {
                        return Err(CatalogError::Invalid(format!("partition would overlap partition \"{name}\"")));
                    }
                }
            }
            Ok(())
        }
        _ => Err(CatalogError::Invalid(format!("bound does not match the partition strategy of \"{}\"", parent.name))),
    }
}

fn decode(path: &Path, bytes: &[u8]) -> Result<CatalogData, CatalogError> {
    let corrupted = |reason: String| CatalogError::Corrupted { path: path.to_owned(), reason };
    let newline = bytes.iter().position(|&b| b == b'\n').ok_or_else(|| corrupted("no header line".into()))?;
    let header = std::str::from_utf8(&bytes[..newline]).map_err(|_| corrupted("header is not text".into()))?;
    let fields: Vec<&str> = header.split(' ').collect();
    let [magic, format, crc, len] = fields[..] else {
        return Err(corrupted(format!("malformed header {header:?}")));
    };
    if magic != MAGIC {
        return Err(corrupted(format!("not a turnstile catalog (header {header:?})")));
    }
    if format != FORMAT.to_string() {
        return Err(corrupted(format!("unsupported format {format}, this build reads {FORMAT}")));
    }
    let body = &bytes[newline + 1..];
    let len: usize = len.parse().map_err(|_| corrupted(format!("bad length {len:?}")))?;
    if body.len() != len {
        return Err(corrupted(format!("body is {} bytes, header says {len}", body.len())));
    }
    let crc = u32::from_str_radix(crc, 16).map_err(|_| corrupted(format!("bad checksum field {crc:?}")))?;
    let actual = crc32c::crc32c(body);
    if actual != crc {
        return Err(corrupted(format!("checksum {actual:08x}, header says {crc:08x}")));
    }
    let mut data: CatalogData =
        serde_json::from_slice(body).map_err(|e| corrupted(format!("body does not parse: {e}")))?;
    data.reindex();
    Ok(data)
}

fn write_atomically(dir: &Path, data: &CatalogData) -> Result<(), CatalogError> {
    let body = serde_json::to_vec(data).map_err(|e| CatalogError::Invalid(format!("cannot serialise catalog: {e}")))?;
    let header = format!("{MAGIC} {FORMAT} {:08x} {}\n", crc32c::crc32c(&body), body.len());
    let tmp = dir.join(TEMP_NAME);
    let path = dir.join(FILE_NAME);
    let write = || -> std::io::Result<()> {
        let mut f = File::create(&tmp)?;
        f.write_all(header.as_bytes())?;
        f.write_all(&body)?;
        f.sync_all()
    };
    if let Err(e) = write() {
        let _ = fs::remove_file(&tmp);
        return Err(io_error("write", &tmp, e));
    }
    fs::rename(&tmp, &path).map_err(|e| io_error("rename", &path, e))?;
    File::open(dir).and_then(|d| d.sync_all()).map_err(|e| io_error("sync directory of", &path, e))
}

mod attach;
mod foreign_key;
mod index;
use index::{add_index, partition_index_name};
pub use index::{KeyPartSpec, INDEX_MAX_KEYS};
#[cfg(test)]
mod tests;
