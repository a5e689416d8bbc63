//! [`Sequences`]: every sequence of the engine, by database and name, and
//! their files.
//!
//! Each sequence is one file, `<data>/sequences/<database oid>/<name>`:
//! its definition, its owner and its logged state as `key=value` lines,
//! replaced whole (a temporary file renamed over it; DDL also fsyncs), so
//! a crash leaves the old or the new text. The map is read at open and
//! changed only by DDL, under its mutex; `generation` counts those changes,
//! so a session keeps the `Arc<Sequence>` it looked up and looks again
//! only when the generation moved — `nextval` takes no registry lock.
//!
//! Each sequence has an OID (its file's `oid=` line), from
//! [`SEQUENCE_OID_BASE`] upwards, apart from the engine's relation ids and
//! the catalog's derived OIDs (`catalog/oid.rs`); a file written before
//! sequences had one gets the next free OID when it is read.

use super::file::io_error;
use super::options::SeqDef;
use super::state::{Identity, Owner, Sequence};
use crate::error::SqlError;
use crate::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use crate::sync::Mutex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use turnstile_engine::durability::EngineLog;
use turnstile_lock::SqlState;

/// The first sequence OID: above any relation id the engine allocates
/// (from 16384, one per relation) and below the constraint OIDs
/// (`catalog::oid::CONSTRAINT_OID_BASE`).
pub const SEQUENCE_OID_BASE: u32 = 0x3000_0000;

/// Every sequence of the engine.
#[derive(Debug)]
pub struct Sequences {
    /// `<data>/sequences`.
    dir: PathBuf,
    /// `(database oid, name)` → sequence.
    map: Mutex<HashMap<(u32, String), Arc<Sequence>>>,
    /// Bumped by every CREATE, ALTER and DROP.
    generation: AtomicU64,
    /// `txn.sequence_block`: 0 for PostgreSQL's allocation, else the
    /// values a session takes at once without the sequence's lock.
    pub block: u64,
    /// The engine's log, where each sequence's states are logged too.
    wal: Option<Arc<EngineLog>>,
    /// The OID the next sequence created gets.
    next_oid: AtomicU32,
}

/// Sequence `name` of database `db`'s key in the engine's log.
fn wal_key(db: u32, name: &str) -> String {
    format!("{db}/{name}")
}

/// A sequence read back from its file's text; `None` if it is not one.
fn parse_file(name: &str, text: &str, path: PathBuf) -> Option<Sequence> {
    let def = SeqDef::from_text(text)?;
    let field = |k: &str| text.lines().find_map(|l| l.strip_prefix(k).and_then(|r| r.strip_prefix('=')));
    let state: u64 = field("state")?.parse().ok()?;
    let owner = match (field("owner_table"), field("owner_column"), field("identity")) {
        (Some(t), Some(c), Some(i)) => {
            Some(Owner { table: t.to_owned(), column: c.to_owned(), identity: Identity::named(i)? })
        }
        _ => None,
    };
    let oid = field("oid").map_or(Some(0), |o| o.parse().ok())?;
    Some(Sequence::new(name, def, owner, state, Some(path)).with_oid(oid))
}

impl Sequences {
    /// Reads every sequence under `<data_dir>/sequences`, its states not
    /// logged in a WAL (the lab's in-process benchmark).
    pub fn open(data_dir: &Path, block: u64) -> Result<Sequences, SqlError> {
        Sequences::open_with(data_dir, block, None)
    }

    /// Reads every sequence under `<data_dir>/sequences`; with `wal`, each
    /// resumes from the last state the engine's log recovered for it when
    /// there is one (a file write the crash lost), and logs its states
    /// there from now on.
    pub fn open_with(data_dir: &Path, block: u64, wal: Option<Arc<EngineLog>>) -> Result<Sequences, SqlError> {
        let dir = data_dir.join("sequences");
        std::fs::create_dir_all(&dir).map_err(|e| io_error("create the directory of", &dir, e))?;
        let mut loaded = Vec::new();
        let dbs = std::fs::read_dir(&dir).map_err(|e| io_error("read", &dir, e))?;
        for db in dbs.flatten() {
            let Some(oid) = db.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
            for f in std::fs::read_dir(db.path()).map_err(|e| io_error("read", &db.path(), e))?.flatten() {
                let path = f.path();
                let Some(name) = f.file_name().to_str().map(str::to_owned) else { continue };
                if path.extension().is_some_and(|e| e == "tmp") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).map_err(|e| io_error("read", &path, e))?;
                let seq = parse_file(&name, &text, path.clone()).ok_or_else(|| {
                    SqlError::new(SqlState::DATA_CORRUPTED, format!("sequence file \"{}\" is corrupt", path.display()))
                })?;
                let seq = seq.logged(wal.as_ref().map(|l| (Arc::clone(l), wal_key(oid, &name))));
                if let Some(&word) = wal.as_ref().and_then(|l| l.recovered_sequences().get(&wal_key(oid, &name))) {
                    seq.resume_at(word)?;
                }
                loaded.push(((oid, name), seq));
            }
        }
        // Files without an OID get the next free ones, in name order.
        loaded.sort_by(|a, b| a.0.cmp(&b.0));
        let mut next = loaded.iter().map(|(_, s)| s.oid + 1).max().unwrap_or(0).max(SEQUENCE_OID_BASE);
        let mut map = HashMap::with_capacity(loaded.len());
        for (key, seq) in loaded {
            let seq = if seq.oid == 0 {
                next += 1;
                seq.with_oid(next - 1)
            } else {
                seq
            };
            map.insert(key, Arc::new(seq));
        }
        let next_oid = AtomicU32::new(next);
        Ok(Sequences { dir, map: Mutex::new(map), generation: AtomicU64::new(0), block, wal, next_oid })
    }

    /// Where sequence `name` of `db` logs its states.
    fn logged_as(&self, db: u32, name: &str) -> Option<(Arc<EngineLog>, String)> {
        self.wal.as_ref().map(|l| (Arc::clone(l), wal_key(db, name)))
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<(u32, String), Arc<Sequence>>> {
        self.map.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The generation: it moves at every CREATE, ALTER and DROP.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Sequence `name` of database `db`, `42P01` if there is none.
    pub fn get(&self, db: u32, name: &str) -> Result<Arc<Sequence>, SqlError> {
        self.find(db, name)
            .ok_or_else(|| SqlError::new(SqlState::UNDEFINED_TABLE, format!("relation \"{name}\" does not exist")))
    }

    /// Sequence `name` of database `db`, if there is one.
    pub fn find(&self, db: u32, name: &str) -> Option<Arc<Sequence>> {
        self.map().get(&(db, name.to_owned())).cloned()
    }

    /// The sequence of database `db` whose OID is `oid`, if there is one.
    pub fn by_oid(&self, db: u32, oid: u32) -> Option<Arc<Sequence>> {
        self.map().iter().find(|((d, _), s)| *d == db && s.oid == oid).map(|(_, s)| Arc::clone(s))
    }

    /// Every sequence of database `db` (`pg_sequences`), in no order.
    pub fn in_database(&self, db: u32) -> Vec<Arc<Sequence>> {
        self.map().iter().filter(|((d, _), _)| *d == db).map(|(_, s)| Arc::clone(s)).collect()
    }

    /// The sequences that belong to a column of `table` (`SERIAL`, identity).
    pub fn owned_by(&self, db: u32, table: &str) -> Vec<Arc<Sequence>> {
        self.map()
            .iter()
            .filter(|((d, _), s)| *d == db && s.owner.as_ref().is_some_and(|o| o.table == table))
            .map(|(_, s)| Arc::clone(s))
            .collect()
    }

    /// Creates sequence `name` (`42P07` if it exists), at its start.
    pub fn create(&self, db: u32, name: &str, def: SeqDef, owner: Option<Owner>) -> Result<Arc<Sequence>, SqlError> {
        let mut map = self.map();
        if map.contains_key(&(db, name.to_owned())) {
            return Err(SqlError::new(SqlState::DUPLICATE_TABLE, format!("relation \"{name}\" already exists")));
        }
        let dir = self.dir.join(db.to_string());
        std::fs::create_dir_all(&dir).map_err(|e| io_error("create the directory of", &dir, e))?;
        let word = Sequence::word_for(&def, def.start, false).unwrap_or(0);
        let oid = self.next_oid.fetch_add(1, Ordering::SeqCst);
        let seq = Sequence::new(name, def, owner, word, Some(dir.join(name))).with_oid(oid);
        let seq = Arc::new(seq.logged(self.logged_as(db, name)));
        seq.persist()?;
        map.insert((db, name.to_owned()), Arc::clone(&seq));
        self.generation.fetch_add(1, Ordering::SeqCst);
        Ok(seq)
    }

    /// Replaces `old` (sequence `name` of `db`) by `def` and `owner`, its
    /// state carried over or restarted at `restart` (`ALTER SEQUENCE`).
    pub fn replace(
        &self,
        db: u32,
        old: &Sequence,
        def: SeqDef,
        restart: Option<i64>,
        owner: Option<Owner>,
    ) -> Result<(), SqlError> {
        let mut map = self.map();
        let new = old.exclusive(|o| {
            let (last, called) = o.close();
            let (v, called) = restart.map_or((last, called), |r| (r, false));
            let word = Sequence::word_for(&def, v, called).ok_or_else(|| {
                let (what, bound) =
                    if v < def.min { ("less than MINVALUE", def.min) } else { ("greater than MAXVALUE", def.max) };
                SqlError::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    format!("RESTART value ({v}) cannot be {what} ({bound})"),
                )
            });
            let word = match word {
                Ok(w) => w,
                Err(e) => {
                    o.reopen();
                    return Err(e);
                }
            };
            let new = Sequence::new(&o.name, def, owner, word, o.file_path()).with_oid(o.oid);
            let new = Arc::new(new.logged(self.logged_as(db, &o.name)));
            if let Err(e) = new.persist() {
                o.reopen();
                return Err(e);
            }
            Ok(new)
        })?;
        map.insert((db, old.name.clone()), new);
        self.generation.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    /// Drops sequence `name` of `db` (`42P01` if there is none).
    pub fn drop_sequence(&self, db: u32, name: &str) -> Result<(), SqlError> {
        let mut map = self.map();
        let seq = map
            .remove(&(db, name.to_owned()))
            .ok_or_else(|| SqlError::new(SqlState::UNDEFINED_TABLE, format!("sequence \"{name}\" does not exist")))?;
        seq.exclusive(|s| {
            s.close();
            Ok(())
        })?;
        if let Some(path) = seq.file_path() {
            std::fs::remove_file(&path).map_err(|e| io_error("remove", &path, e))?;
        }
        if let Some(log) = &self.wal {
            log.forget_sequence(&wal_key(db, name));
        }
        self.generation.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}
