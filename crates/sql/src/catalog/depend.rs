//! `pg_depend`: the dependencies between the session database's objects,
//! computed from turnstile's catalog and its sequence registry, recorded
//! as PostgreSQL 15 records them when the same objects are created.
//!
//! pg_dump reads `pg_depend` to order what it prints and to find the
//! sequences columns own (`getTables`' join on `deptype IN ('a', 'i')`,
//! `getDependencies`); psql and pgjdbc read it for owned sequences. The
//! rows shown, each `(classid, objid, objsubid) → (refclassid, refobjid,
//! refobjsubid)` with its `deptype`:
//!
//! | object | depends on | deptype | PostgreSQL's source |
//! |---|---|---|---|
//! | table, partitioned table, sequence | its namespace (`public`) | `n` | `heap_create_with_catalog` |
//! | partition | its parent | `a` | `StoreCatalogInheritance1` |
//! | a partitioned table's key column | the table | `i` | `StorePartitionKey` |
//! | sequence owned by a `SERIAL` column | the column | `a` | `process_owned_by` |
//! | identity sequence | its column | `i` | `process_owned_by` (internal) |
//! | column default (`pg_attrdef`) | its column | `a` | `StoreAttrDefault` |
//! | column default | each sequence it names (`nextval('s')`) | `n` | `recordDependencyOnExpr` |
//! | index, not a constraint's | each key column and each column its expressions read (the table too if no key column is plain) | `a` | `index_create` |
//! | index of a PRIMARY KEY / UNIQUE constraint | the constraint | `i` | `index_constraint_create` |
//! | index of a partition | the partitioned index; the partition | `P`; `S` | `index_create` |
//! | PRIMARY KEY / UNIQUE constraint | each key column | `a` | `CreateConstraintEntry` |
//! | constraint of a partition | the parent's constraint; the partition | `P`; `S` | `index_constraint_create` |
//! | foreign key | its columns (`a`); the referenced columns and unique index (`n`) | | `CreateConstraintEntry` |
//!
//! Left out, as pinned in PostgreSQL (no rows there either): built-in
//! types, operator classes, functions, the default collation. Left out
//! because turnstile has no such object: a table's row type (`pg_type`),
//! its TOAST table, a foreign key's internal triggers (`pg_trigger`).
//!
//! ```
//! use turnstile_sql::catalog::{lookup, Schema};
//! let depend = lookup(Schema::Catalog, "pg_depend").unwrap();
//! assert_eq!(depend.columns.last().unwrap().0, "deptype");
//! ```

use super::datum::{ch, int, oid};
use super::fk_constraint::referenced_index;
use super::oid::{attrdef_oid, constraint_oid, PG_CLASS, PG_CONSTRAINT, PUBLIC_NAMESPACE};
use super::relation::Reader;
use crate::sequence::{sequence_name, Identity, Sequence};
use crate::value::{Datum, SqlType};
use std::sync::Arc;
use turnstile_engine::catalog::{IndexDef, RelKind, Relation};
use SqlType::*;

/// `pg_catalog.pg_depend`'s columns.
pub(super) const DEPEND: &[(&str, SqlType)] = &[
    ("classid", Oid),
    ("objid", Oid),
    ("objsubid", Int4),
    ("refclassid", Oid),
    ("refobjid", Oid),
    ("refobjsubid", Int4),
    ("deptype", QChar),
];

/// `pg_namespace`.
const PG_NAMESPACE: u32 = 2615;
/// `pg_attrdef`.
const PG_ATTRDEF: u32 = 2604;

/// One object, as `pg_depend` names it: catalog, OID, sub-object (a
/// column number, or 0 for the whole object).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Object(u32, u32, i64);

/// The rows being built.
#[derive(Default)]
struct Rows(Vec<Vec<Datum>>);

impl Rows {
    fn add(&mut self, from: Object, to: Object, deptype: char) {
        self.0.push(vec![oid(from.0), oid(from.1), int(from.2), oid(to.0), oid(to.1), int(to.2), ch(deptype)]);
    }
}

/// Column `c` (zero-based) of relation `rel`.
fn column(rel: u32, c: usize) -> Object {
    Object(PG_CLASS, rel, c as i64 + 1)
}

/// `pg_depend`: the rows of the module header's table.
pub(super) fn depend_rows(r: &Reader<'_>) -> Vec<Vec<Datum>> {
    let seqs = r.services.shared().sequences.in_database(r.db);
    let mut rows = Rows::default();
    for rel in r.relations() {
        match rel.kind {
            RelKind::Table | RelKind::PartitionedTable => table(rel, &seqs, &mut rows),
            RelKind::Index | RelKind::PartitionedIndex => index(r, rel, &mut rows),
        }
    }
    for s in &seqs {
        sequence(r, s, &mut rows);
    }
    for k in r.cat.foreign_keys.values().filter(|k| k.db == r.db) {
        let Some(id) = constraint_oid(k.id) else { continue };
        let me = Object(PG_CONSTRAINT, id, 0);
        for &c in &k.columns {
            rows.add(me, column(k.table, c), 'a');
        }
        for &c in &k.ref_columns {
            rows.add(me, column(k.ref_table, c), 'n');
        }
        if let Some(ix) = referenced_index(r.cat, k) {
            rows.add(me, Object(PG_CLASS, ix.id, 0), 'n');
        }
    }
    rows.0
}

/// A table's rows: on its namespace or parent, and its column defaults'.
fn table(rel: &Relation, seqs: &[Arc<Sequence>], rows: &mut Rows) {
    let me = Object(PG_CLASS, rel.id, 0);
    rows.add(me, Object(PG_NAMESPACE, PUBLIC_NAMESPACE, 0), 'n');
    if let Some(parent) = rel.parent {
        rows.add(me, Object(PG_CLASS, parent, 0), 'a');
    }
    if let Some(key) = rel.partition_key {
        rows.add(column(rel.id, key.column), me, 'i');
    }
    let identity = |column: &str| {
        let mut owners = seqs.iter().filter_map(|s| s.owner.as_ref());
        owners.any(|o| o.table == rel.name && o.column == column && o.identity != Identity::Serial)
    };
    for (i, c) in rel.columns.iter().enumerate() {
        let Some(default) = &c.default else { continue };
        if identity(&c.name) {
            continue; // an identity column has no pg_attrdef row
        }
        let Some(id) = attrdef_oid(rel.id, i as u32 + 1) else { continue };
        let me = Object(PG_ATTRDEF, id, 0);
        rows.add(me, column(rel.id, i), 'a');
        for name in named_sequences(default) {
            if let Some(s) = seqs.iter().find(|s| s.name == name) {
                rows.add(me, Object(PG_CLASS, s.oid, 0), 'n');
            }
        }
    }
}

/// The sequences a default's text names in `nextval('…')` calls (PostgreSQL
/// records each `regclass` constant of the expression).
fn named_sequences(default: &str) -> Vec<String> {
    let Some(tokens) = crate::rewrite_tokens::significant_tokens(default) else { return Vec::new() };
    use sqlparser::tokenizer::Token;
    tokens
        .windows(3)
        .filter_map(|w| match (&w[0].token, &w[1].token, &w[2].token) {
            (t, Token::LParen, Token::SingleQuotedString(s))
                if crate::rewrite_tokens::bare_word(t).is_some_and(|f| matches!(f.as_str(), "nextval" | "currval")) =>
            {
                Some(sequence_name(s))
            }
            _ => None,
        })
        .collect()
}

/// An index's rows: on its constraint or its columns (those its
/// expressions read too), and on its partitioned index.
fn index(r: &Reader<'_>, rel: &Relation, rows: &mut Rows) {
    let Some(def) = &rel.index else { return };
    let me = Object(PG_CLASS, rel.id, 0);
    let constraint = is_constraint(def).then(|| constraint_oid(rel.id)).flatten();
    match constraint {
        Some(con) => {
            rows.add(me, Object(PG_CONSTRAINT, con, 0), 'i');
            let con_me = Object(PG_CONSTRAINT, con, 0);
            for &c in &def.columns {
                rows.add(con_me, column(def.table, c), 'a');
            }
            if let Some(parent) = def.parent.and_then(constraint_oid) {
                rows.add(con_me, Object(PG_CONSTRAINT, parent, 0), 'P');
                rows.add(con_me, Object(PG_CLASS, def.table, 0), 'S');
            }
        }
        None => {
            let mut cols: Vec<usize> = def.columns.iter().copied().filter(|&c| c != IndexDef::EXPRESSION).collect();
            if cols.is_empty() {
                rows.add(me, Object(PG_CLASS, def.table, 0), 'a');
            }
            if let Some(table) = r.relation(def.table) {
                cols.extend(def.expressions.iter().flat_map(|e| columns_read(&e.sql, table)));
            }
            cols.sort_unstable();
            cols.dedup();
            for c in cols {
                rows.add(me, column(def.table, c), 'a');
            }
        }
    }
    if let Some(parent) = def.parent {
        rows.add(me, Object(PG_CLASS, parent, 0), 'P');
        rows.add(me, Object(PG_CLASS, def.table, 0), 'S');
    }
}

/// The columns of `table` (zero-based) an index expression's text reads:
/// its names that are not called as functions.
fn columns_read(sql: &str, table: &Relation) -> Vec<usize> {
    use sqlparser::tokenizer::Token;
    let Some(tokens) = crate::rewrite_tokens::significant_tokens(sql) else { return Vec::new() };
    let mut cols = Vec::new();
    for (k, t) in tokens.iter().enumerate() {
        let Token::Word(w) = &t.token else { continue };
        if matches!(tokens.get(k + 1).map(|n| &n.token), Some(Token::LParen)) {
            continue;
        }
        let name = if w.quote_style.is_some() { w.value.clone() } else { w.value.to_ascii_lowercase() };
        cols.extend(table.column_number(&name));
    }
    cols
}

/// Whether an index implements a PRIMARY KEY or UNIQUE constraint (as
/// `pg_constraint` shows it: `constraint::constraint_indexes`).
fn is_constraint(def: &IndexDef) -> bool {
    (def.unique || def.primary) && def.expressions.is_empty()
}

/// A sequence's rows: on its namespace, and on the column that owns it.
fn sequence(r: &Reader<'_>, s: &Sequence, rows: &mut Rows) {
    let me = Object(PG_CLASS, s.oid, 0);
    rows.add(me, Object(PG_NAMESPACE, PUBLIC_NAMESPACE, 0), 'n');
    let Some(owner) = &s.owner else { return };
    let Some(table) = r.cat.find(r.db, &owner.table) else { return };
    let Some(c) = table.columns.iter().position(|c| c.name == owner.column) else { return };
    let deptype = if owner.identity == Identity::Serial { 'a' } else { 'i' };
    rows.add(me, column(table.id, c), deptype);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_default_names_the_sequences_of_its_nextval_calls() {
        assert_eq!(named_sequences("nextval('t_id_seq')"), ["t_id_seq"]);
        assert_eq!(named_sequences("nextval('public.\"S\"'::regclass) + 1"), ["S"]);
        assert!(named_sequences("'nextval(x)'").is_empty());
        assert!(named_sequences("42").is_empty());
    }
}
