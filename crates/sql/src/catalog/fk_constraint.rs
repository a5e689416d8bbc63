//! `pg_constraint`'s foreign-key rows (`contype = 'f'`), one per key the
//! engine's catalog keeps ([`turnstile_engine::catalog::ForeignKey`]): the
//! referencing table and columns (`conrelid`, `conkey`), the referenced
//! ones (`confrelid`, `confkey`), the unique index that backs the
//! referenced columns (`conindid`), the actions (`confupdtype`,
//! `confdeltype`) and `MATCH SIMPLE` (`confmatchtype = 's'`). The key's
//! id comes from the space relations use, so its OID is mapped as an
//! index's constraint OID is. The operator arrays (`conpfeqop`, …) are
//! NULL: turnstile has no `pg_operator`.

use super::constraint::{constraint_rows, int2_array};
use super::datum::{boolean, ch, int, oid, text, NULL};
use super::oid::{constraint_oid, PUBLIC_NAMESPACE};
use super::relation::Reader;
use crate::value::Datum;
use turnstile_engine::catalog::{CatalogData, ForeignKey, Relation};

/// The unique index on a foreign key's referenced columns (`conindid`).
pub(super) fn referenced_index<'a>(cat: &'a CatalogData, k: &ForeignKey) -> Option<&'a Relation> {
    cat.indexes_of(k.ref_table).find(|ix| {
        ix.index.as_ref().is_some_and(|d| {
            d.unique && d.columns.len() == k.ref_columns.len() && d.columns.iter().all(|c| k.ref_columns.contains(c))
        })
    })
}

/// `pg_constraint`: the primary key and unique constraints
/// ([`constraint_rows`]), then the foreign keys in key id order.
pub(super) fn all_constraint_rows(r: &Reader<'_>) -> Vec<Vec<Datum>> {
    let mut rows = constraint_rows(r);
    for k in r.cat.foreign_keys.values().filter(|k| k.db == r.db) {
        let Some(id) = constraint_oid(k.id) else { continue };
        let index = referenced_index(r.cat, k);
        rows.push(vec![
            oid(id),
            text(k.name.clone()),
            oid(PUBLIC_NAMESPACE),
            ch('f'),
            boolean(false),
            boolean(false),
            boolean(true),
            oid(k.table),
            oid(0),
            oid(index.map_or(0, |ix| ix.id)),
            oid(0),
            oid(k.ref_table),
            ch(k.on_update.code()),
            ch(k.on_delete.code()),
            ch('s'),
            boolean(true),
            int(0),
            boolean(true),
            int2_array(&k.columns),
            int2_array(&k.ref_columns),
            NULL,
            NULL,
            NULL,
            NULL,
            NULL,
            NULL,
        ]);
    }
    rows
}
