//! Adding and dropping foreign keys in the catalog (the definitions are in
//! [`crate::catalog::ForeignKey`]); like every catalog change, under the
//! catalog's exclusive lock, persisted before it is swapped in.

use super::{allocate, check_name, Catalog, CatalogError};
use crate::catalog::model::{CatalogData, DbId, RelId, RelKind};
use crate::catalog::{ForeignKey, MAX_FK_COLUMNS};

impl Catalog {
    /// Adds `fk` (its `id` is assigned here and returned). Refuses a name
    /// another constraint of the table has (`42710`), column lists of
    /// different or bad lengths, and tables that are not tables.
    pub fn add_foreign_key(&self, mut fk: ForeignKey) -> Result<u32, CatalogError> {
        self.modify(|c| {
            check_name(&fk.name)?;
            let table = table_name(c, fk.table)?;
            table_name(c, fk.ref_table)?;
            if fk.columns.is_empty() || fk.columns.len() != fk.ref_columns.len() || fk.columns.len() > MAX_FK_COLUMNS {
                return Err(CatalogError::Invalid(format!(
                    "a foreign key needs 1 to {MAX_FK_COLUMNS} columns on each side, as many on both"
                )));
            }
            if constraint_named(c, fk.db, fk.table, &fk.name) {
                return Err(CatalogError::DuplicateConstraint { name: fk.name.clone(), relation: table });
            }
            fk.id = allocate(c)?;
            let id = fk.id;
            c.foreign_keys.insert(id, fk);
            Ok(id)
        })
    }

    /// Drops the foreign key `name` of `table`; `42704` if it has none.
    pub fn drop_foreign_key(&self, db: DbId, table: &str, name: &str) -> Result<ForeignKey, CatalogError> {
        self.modify(|c| {
            let t = c.find(db, table).ok_or_else(|| CatalogError::UnknownRelation(table.into()))?.id;
            let id = c
                .foreign_keys
                .values()
                .find(|k| k.table == t && k.name == name)
                .map(|k| k.id)
                .ok_or_else(|| CatalogError::UnknownConstraint { name: name.into(), relation: table.into() })?;
            c.foreign_keys.remove(&id).ok_or_else(|| CatalogError::Invalid("foreign key vanished".into()))
        })
    }

    /// Whether the table `table` has a constraint (a foreign key, or a
    /// primary key or unique constraint, which are named after their
    /// index) called `name`.
    pub fn has_constraint(&self, db: DbId, table: RelId, name: &str) -> bool {
        constraint_named(&self.snapshot(), db, table, name)
    }
}

fn table_name(c: &CatalogData, id: RelId) -> Result<String, CatalogError> {
    let r = c.relations.get(&id).ok_or_else(|| CatalogError::UnknownRelation(format!("with id {id}")))?;
    if !matches!(r.kind, RelKind::Table | RelKind::PartitionedTable) {
        return Err(CatalogError::WrongKind { name: r.name.clone(), expected: "a table" });
    }
    Ok(r.name.clone())
}

fn constraint_named(c: &CatalogData, db: DbId, table: RelId, name: &str) -> bool {
    c.foreign_keys.values().any(|k| k.db == db && k.table == table && k.name == name)
        || c.indexes_of(table).any(|ix| ix.name == name && ix.index.as_ref().is_some_and(|d| d.unique))
}
