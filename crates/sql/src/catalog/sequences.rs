//! `pg_sequences`: one row per sequence of the session's database, from
//! the sequence registry ([`crate::sequence::Sequences`]), as PostgreSQL
//! 15's view shows it. `data_type` is the type's name as text (PostgreSQL
//! types it `regtype`, which prints the same); `last_value` is NULL until
//! the first `nextval` (`is_called` false), as `pg_sequence_last_value`
//! answers. Values a session has cached, or a `scalable` block it took,
//! count as handed out, as PostgreSQL's cached values do.
//!
//! `pg_sequence` is the catalog under that view: one row per sequence,
//! keyed by its OID (`seqrelid`, its `pg_class` row), with its type's OID
//! and its definition.
//!
//! A sequence read as a relation (`SELECT last_value, is_called FROM s`,
//! pg_dump's `dumpSequenceData`) has PostgreSQL's one row: `last_value`
//! (the last value handed out, or the next one while `is_called` is
//! false), `log_cnt` (values logged ahead and not yet handed out) and
//! `is_called`.

use super::datum::{boolean, int, oid, text, NULL};
use super::relation::Reader;
use crate::error::SqlError;
use crate::sequence::SeqType;
use crate::value::{Datum, SqlType};
use turnstile_lock::SqlState;
use SqlType::*;

/// `pg_catalog.pg_sequences`'s columns.
pub(super) const SEQUENCES: &[(&str, SqlType)] = &[
    ("schemaname", Name),
    ("sequencename", Name),
    ("sequenceowner", Name),
    ("data_type", Text), /* regtype */
    ("start_value", Int8),
    ("min_value", Int8),
    ("max_value", Int8),
    ("increment_by", Int8),
    ("cycle", Bool),
    ("cache_size", Int8),
    ("last_value", Int8),
];

/// `pg_catalog.pg_sequence`'s columns.
pub(super) const SEQUENCE: &[(&str, SqlType)] = &[
    ("seqrelid", Oid),
    ("seqtypid", Oid),
    ("seqstart", Int8),
    ("seqincrement", Int8),
    ("seqmax", Int8),
    ("seqmin", Int8),
    ("seqcache", Int8),
    ("seqcycle", Bool),
];

/// The columns of a sequence read as a relation.
pub const SEQUENCE_DATA: &[(&str, SqlType)] = &[("last_value", Int8), ("log_cnt", Int8), ("is_called", Bool)];

/// The row of sequence `oid` of database `db` read as a relation (`42P01`
/// if it was dropped since the statement was planned).
pub(crate) fn sequence_data_row(shared: &crate::Shared, db: u32, seq: u32) -> Result<Vec<Datum>, SqlError> {
    let s = shared
        .sequences
        .by_oid(db, seq)
        .ok_or_else(|| SqlError::new(SqlState::UNDEFINED_TABLE, format!("could not open relation with OID {seq}")))?;
    let (last, called) = s.last_value();
    Ok(vec![int(last), int(s.log_cnt()), boolean(called)])
}

/// `pg_sequence`, by OID.
pub(super) fn sequence_rows(r: &Reader<'_>) -> Vec<Vec<Datum>> {
    let mut seqs = r.services.shared().sequences.in_database(r.db);
    seqs.sort_by_key(|s| s.oid);
    let type_oid = |t: SeqType| match t {
        SeqType::Int2 => Int2.oid(),
        SeqType::Int4 => Int4.oid(),
        SeqType::Int8 => Int8.oid(),
    };
    seqs.iter()
        .map(|s| {
            vec![
                oid(s.oid),
                oid(type_oid(s.def.ty)),
                int(s.def.start),
                int(s.def.increment),
                int(s.def.max),
                int(s.def.min),
                int(s.def.cache),
                boolean(s.def.cycle),
            ]
        })
        .collect()
}

/// `pg_sequences`, by sequence name.
pub(super) fn sequences_rows(r: &Reader<'_>) -> Vec<Vec<Datum>> {
    let mut seqs = r.services.shared().sequences.in_database(r.db);
    seqs.sort_by(|a, b| a.name.cmp(&b.name));
    seqs.iter()
        .map(|s| {
            let (last, called) = s.last_value();
            vec![
                text(crate::error::SCHEMA),
                text(s.name.clone()),
                text(r.services.user()),
                text(s.def.ty.name()),
                int(s.def.start),
                int(s.def.min),
                int(s.def.max),
                int(s.def.increment),
                boolean(s.def.cycle),
                int(s.def.cache),
                if called { int(last) } else { NULL },
            ]
        })
        .collect()
}
