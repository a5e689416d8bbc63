//! [`SeqSession`]: a session's side of its sequences — the values it took
//! and has not handed out yet (PostgreSQL's `SeqTable` with `CACHE`, or
//! `scalable`'s block), `currval` per sequence and `lastval`.
//!
//! `nextval` hands out the next value of the session's block without
//! touching anything shared; an empty block is refilled by
//! [`Sequence::reserve`]. Values are not transactional: a rolled-back
//! transaction's values are gone, as in PostgreSQL.

use super::registry::Sequences;
use super::state::Sequence;
use crate::error::SqlError;
use std::collections::HashMap;
use std::sync::Arc;
use turnstile_lock::SqlState;

/// How many times `nextval` looks a sequence up again when DDL replaced it
/// during the reservation, before it gives up.
const RELOOKUPS_MAX: usize = 64;

/// One sequence as a session sees it.
#[derive(Debug)]
struct Entry {
    seq: Arc<Sequence>,
    /// The registry generation `seq` was looked up at.
    generation: u64,
    /// Offset of the next value of the block.
    next: u64,
    /// Values left in the block.
    left: u64,
    /// The block's first offset and the state word it was taken from.
    first: u64,
    from: u64,
    /// `currval`: the last value this session handed out.
    last: Option<i64>,
}

/// A session's sequence state.
#[derive(Debug, Default)]
pub struct SeqSession {
    entries: HashMap<(u32, String), Entry>,
    /// The sequence of the last `nextval` (`lastval`).
    last_used: Option<(u32, String)>,
}

/// A sequence's name as `nextval('…')` takes it: folded to lower case
/// unless double-quoted (PostgreSQL reads the text as a `regclass`),
/// without a `public.` schema (every sequence lives in `public`; pg_dump
/// writes `setval('public.t_id_seq', …)`).
pub fn sequence_name(text: &str) -> String {
    let t = text.trim();
    let unqualified = t.get(..7).filter(|p| p.eq_ignore_ascii_case("public.")).map(|_| &t[7..]);
    let t = unqualified.or_else(|| t.strip_prefix("\"public\".")).unwrap_or(t);
    match t.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        Some(q) => q.replace("\"\"", "\""),
        None => t.to_ascii_lowercase(),
    }
}

impl SeqSession {
    /// The session's entry for `name`, looked up again when DDL ran since.
    fn entry(&mut self, seqs: &Sequences, db: u32, name: &str) -> Result<&mut Entry, SqlError> {
        let generation = seqs.generation();
        let key = (db, name.to_owned());
        let stale = self.entries.get(&key).is_none_or(|e| e.generation != generation);
        if stale {
            let seq = seqs.get(db, name)?;
            let last = self.entries.get(&key).filter(|e| Arc::ptr_eq(&e.seq, &seq) || e.seq.name == seq.name);
            let last = last.and_then(|e| e.last);
            self.entries.insert(key.clone(), Entry { seq, generation, next: 0, left: 0, first: 0, from: 0, last });
        }
        Ok(self.entries.get_mut(&key).expect("inserted above"))
    }

    /// `nextval(name)`.
    pub fn nextval(&mut self, seqs: &Sequences, db: u32, name: &str) -> Result<i64, SqlError> {
        for _ in 0..RELOOKUPS_MAX {
            let e = self.entry(seqs, db, name)?;
            if e.left == 0 {
                let want = if seqs.block == 0 { e.seq.def.cache } else { e.seq.def.cache.max(seqs.block as i64) };
                match e.seq.reserve(want as u64, seqs.block == 0)? {
                    Some(b) => (e.next, e.left, e.first, e.from) = (b.first, b.n, b.first, b.from),
                    None => {
                        e.generation = u64::MAX;
                        continue;
                    }
                }
            }
            let v = e.seq.value(e.next);
            e.next += e.seq.def.increment.unsigned_abs();
            e.left -= 1;
            e.last = Some(v);
            self.last_used = Some((db, name.to_owned()));
            return Ok(v);
        }
        Err(SqlError::new(
            SqlState::OBJECT_IN_USE,
            format!("sequence \"{name}\" was changed {RELOOKUPS_MAX} times during one nextval"),
        ))
    }

    /// `currval(name)`.
    pub fn currval(&mut self, seqs: &Sequences, db: u32, name: &str) -> Result<i64, SqlError> {
        self.entry(seqs, db, name)?.last.ok_or_else(|| {
            SqlError::new(
                SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!("currval of sequence \"{name}\" is not yet defined in this session"),
            )
        })
    }

    /// `lastval()`.
    pub fn lastval(&mut self, seqs: &Sequences) -> Result<i64, SqlError> {
        let undefined =
            || SqlError::new(SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE, "lastval is not yet defined in this session");
        let (db, name) = self.last_used.clone().ok_or_else(undefined)?;
        if seqs.find(db, &name).is_none() {
            return Err(undefined());
        }
        self.entry(seqs, db, &name)?.last.ok_or_else(undefined)
    }

    /// `setval(name, v, called)`: the sequence's state, and this session's
    /// block forgotten (`currval` becomes `v` when `called`).
    pub fn setval(&mut self, seqs: &Sequences, db: u32, name: &str, v: i64, called: bool) -> Result<i64, SqlError> {
        let e = self.entry(seqs, db, name)?;
        e.seq.exclusive(|s| s.set_state(v, called))?;
        e.left = 0;
        if called {
            e.last = Some(v);
        }
        Ok(v)
    }

    /// Before DDL changes sequence `name`: this session's unused values go
    /// back to it if no one took values since (so the session's next value
    /// after `ALTER SEQUENCE … INCREMENT` follows its last one, as
    /// PostgreSQL's does), and its block is forgotten.
    pub fn release(&mut self, db: u32, name: &str) {
        if let Some(e) = self.entries.get_mut(&(db, name.to_owned())) {
            if e.left > 0 {
                let step = e.seq.def.increment.unsigned_abs();
                let before = if e.next > e.first { (e.next - step) | super::state::CALLED } else { e.from };
                e.seq.give_back(before, e.next + (e.left - 1) * step);
            }
            e.left = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fold_unless_quoted() {
        assert_eq!(sequence_name(" Vq1 "), "vq1");
        assert_eq!(sequence_name("\"Vq\"\"1\""), "Vq\"1");
        assert_eq!(sequence_name("public.t_id_seq"), "t_id_seq");
        assert_eq!(sequence_name("PUBLIC.\"T\""), "T");
        assert_eq!(sequence_name("\"public\".s"), "s");
        assert_eq!(sequence_name("\"public.s\""), "public.s");
    }
}
