//! `ALTER TABLE parent ATTACH PARTITION table FOR VALUES …` and `ALTER
//! INDEX parent ATTACH PARTITION index` in the catalog, as PostgreSQL's
//! `ATExecAttachPartition` and `ATExecAttachPartitionIdx` change it (the
//! session checks the rows first: [`crate::Session::attach_partition`]).
//!
//! A table attached gets the parent as its parent and the bound; for each
//! index of the parent, an index of the table with the same key columns,
//! uniqueness and primary-ness that belongs to no parent index is
//! attached to it, else one is created ([`attach_or_add_index`], which
//! `CREATE INDEX` on a partitioned table uses too) (named as
//! [`super::partition_index_name`] names a partition's). The table must
//! have the parent's columns — same names and types, in the same order
//! (turnstile's partitions share their parent's row layout).

use super::{add_index, check_bound, partition_index_name, Catalog, CatalogError};
use crate::catalog::model::{CatalogData, DbId, IndexDef, PartitionKey, RelKind, Relation};
use crate::catalog::{PartitionBound, RelId};

impl Catalog {
    /// Attaches table `name` to partitioned table `parent` with `bound`.
    /// Returns the partition and the indexes created for it.
    pub fn attach_partition(
        &self,
        db: DbId,
        parent: &str,
        name: &str,
        bound: PartitionBound,
    ) -> Result<(Relation, Vec<Relation>), CatalogError> {
        self.modify(|c| {
            let (p, key) = partitioned_table(c, db, parent)?;
            let t = c.find(db, name).ok_or_else(|| CatalogError::UnknownRelation(name.into()))?.clone();
            if t.kind != RelKind::Table {
                return Err(CatalogError::WrongKind { name: name.to_owned(), expected: "a table" });
            }
            if t.parent.is_some() {
                return Err(CatalogError::Invalid(format!("\"{name}\" is already a partition")));
            }
            // The same names and types in order; a NOT NULL of the parent's
            // the partition must have too (it may have more of its own).
            let fits = t.columns.len() == p.columns.len()
                && t.columns
                    .iter()
                    .zip(&p.columns)
                    .all(|(a, b)| a.name == b.name && a.ty == b.ty && (a.not_null || !b.not_null));
            if !fits {
                return Err(CatalogError::Invalid(format!(
                    "table \"{name}\" must have the same columns as \"{parent}\" (names and types, in order)"
                )));
            }
            check_bound(c, &p, key, bound.clone())?;
            let part = Relation { parent: Some(p.id), bound: Some(bound), ..t };
            c.relations.insert(part.id, part.clone());
            let parent_indexes: Vec<Relation> = c.indexes_of(p.id).cloned().collect();
            let mut created = Vec::new();
            for pi in parent_indexes {
                let Some(def) = pi.index.clone() else { continue };
                let def = IndexDef { table: part.id, parent: Some(pi.id), ..def };
                created.extend(attach_or_add_index(c, &part, def)?);
            }
            Ok((part, created))
        })
    }

    /// Attaches index `name` (of a partition) to partitioned index
    /// `parent` (of the partition's parent). Nothing changes when it is
    /// attached to `parent` already, as in PostgreSQL.
    pub fn attach_index(&self, db: DbId, parent: &str, name: &str) -> Result<(), CatalogError> {
        self.modify(|c| {
            let pi = c.find(db, parent).ok_or_else(|| CatalogError::UnknownRelation(parent.into()))?.clone();
            let ix = c.find(db, name).ok_or_else(|| CatalogError::UnknownRelation(name.into()))?.clone();
            let (Some(pdef), Some(def)) = (pi.index.as_ref(), ix.index.as_ref()) else {
                return Err(CatalogError::WrongKind { name: name.to_owned(), expected: "an index" });
            };
            if pi.kind != RelKind::PartitionedIndex {
                return Err(CatalogError::WrongKind { name: parent.to_owned(), expected: "a partitioned index" });
            }
            if def.parent == Some(pi.id) {
                return Ok(());
            }
            let table = c.relations.get(&def.table).ok_or_else(|| CatalogError::UnknownRelation(name.into()))?;
            let mismatch = |why: &str| {
                CatalogError::Invalid(format!(
                    "cannot attach index \"{name}\" as a partition of index \"{parent}\": {why}"
                ))
            };
            if table.parent != Some(pdef.table) {
                return Err(mismatch("its table is not a partition of the parent index's table"));
            }
            if def.parent.is_some() {
                return Err(mismatch("it is already attached to another index"));
            }
            if !def.same_key(pdef) {
                return Err(mismatch("the index definitions do not match"));
            }
            let taken =
                c.indexes_of(table.id).any(|other| other.index.as_ref().is_some_and(|d| d.parent == Some(pi.id)));
            if taken {
                return Err(mismatch("another index of the partition is attached to it already"));
            }
            set_parent_index(c.relations.get_mut(&ix.id), pi.id);
            Ok(())
        })
    }
}

/// The index `def` describes on partition `part` (its parent index in
/// `def.parent`): an equivalent index of `part` that belongs to no parent
/// index is attached (`None` returned: it exists and is built), else one is
/// created and returned, as PostgreSQL's `DefineIndex` does per partition.
pub(super) fn attach_or_add_index(
    c: &mut CatalogData,
    part: &Relation,
    def: IndexDef,
) -> Result<Option<Relation>, CatalogError> {
    let parent = def.parent.ok_or_else(|| CatalogError::Invalid("a partition's index needs its parent".into()))?;
    let existing = c
        .indexes_of(part.id)
        .find(|ix| ix.index.as_ref().is_some_and(|d| d.parent.is_none() && d.same_key(&def)))
        .map(|ix| ix.id);
    if let Some(id) = existing {
        set_parent_index(c.relations.get_mut(&id), parent);
        return Ok(None);
    }
    let name = partition_index_name(c, part, &def)?;
    add_index(c, part, &name, IndexDef { parent: Some(parent), ..def }).map(Some)
}

/// The partitioned table `name` and its partition key.
pub(super) fn partitioned_table(
    c: &CatalogData,
    db: DbId,
    name: &str,
) -> Result<(Relation, PartitionKey), CatalogError> {
    let p = c.find(db, name).ok_or_else(|| CatalogError::UnknownRelation(name.into()))?.clone();
    let key =
        p.partition_key.ok_or(CatalogError::WrongKind { name: name.to_owned(), expected: "a partitioned table" })?;
    Ok((p, key))
}

fn set_parent_index(index: Option<&mut Relation>, parent: RelId) {
    if let Some(def) = index.and_then(|ix| ix.index.as_mut()) {
        def.parent = Some(parent);
    }
}
