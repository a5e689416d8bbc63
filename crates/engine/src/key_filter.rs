//! The filters a row-changing statement finds its rows by: `column =
//! value` equalities and, for an `ON CONFLICT` arbiter's probe, the key of
//! one index — columns or expressions over them — equal to given values
//! ([`crate::query::Query::filter_index_key`]).
//!
//! A row matches when every column filter holds and its key in the index
//! equals the values part by part (SQL equality: a NULL matches nothing).
//! Candidates come from the index the filters cover best: the key filter's
//! own index when the relation has it (a partition's copy of the parent's
//! index has the same key), else the index whose leading columns the
//! column filters cover (the longest prefix, unique first), else a
//! sequential scan.

use crate::catalog::{IndexInfo, IndexKey, RelEntry};
use crate::error::Result;
use crate::types::Value;

/// SQL equality of two stored values: a NULL equals nothing.
pub(crate) fn sql_eq(a: &Value, b: &Value) -> bool {
    !matches!(a, Value::Null) && !matches!(b, Value::Null) && a.sql_cmp(b) == std::cmp::Ordering::Equal
}

/// A statement's equality filters.
#[derive(Debug, Default)]
pub(crate) struct Filters {
    /// Column number and value, as the column stores it.
    pub(crate) columns: Vec<(usize, Value)>,
    /// The key of an index and its values, as the index stores them.
    pub(crate) key: Option<(IndexKey, Vec<Value>)>,
}

impl Filters {
    /// The value column `c` must equal, if filtered.
    pub(crate) fn value_of(&self, c: usize) -> Option<&Value> {
        self.columns.iter().find(|(fc, _)| *fc == c).map(|(_, v)| v)
    }

    /// Whether `row` matches every filter (the key filter computes the
    /// row's key, which may fail: an expression's error).
    pub(crate) fn matches(&self, row: &[Value]) -> Result<bool> {
        if !self.columns.iter().all(|(c, v)| row.get(*c).is_some_and(|x| sql_eq(x, v))) {
            return Ok(false);
        }
        match &self.key {
            None => Ok(true),
            Some((key, values)) => {
                let got = key.values(row)?;
                Ok(got.len() == values.len() && got.iter().zip(values).all(|(a, b)| sql_eq(a, b)))
            }
        }
    }

    /// The index of `leaf` to find candidates through and the key (or key
    /// prefix) to search for; `None`: a sequential scan.
    pub(crate) fn index_probe<'l>(&self, leaf: &'l RelEntry) -> Option<(&'l IndexInfo, Vec<Value>)> {
        if let Some((key, values)) = &self.key {
            if let Some(ix) = leaf.indexes.iter().find(|ix| ix.key == *key) {
                return Some((ix, values.clone()));
            }
        }
        let (ix, n) = leaf
            .indexes
            .iter()
            .map(|ix| (ix, ix.columns.iter().take_while(|&&c| self.value_of(c).is_some()).count()))
            .filter(|(_, n)| *n > 0)
            .max_by_key(|(ix, n)| (*n, ix.unique))?;
        Some((ix, ix.columns[..n].iter().filter_map(|&c| self.value_of(c).cloned()).collect()))
    }
}

/// Adds to `filters` the key filter of index `index` of table `target`
/// (its operands read from `params`, brought to the key's types); `true`
/// when no row can match (a NULL or a value too long for the key).
pub(crate) fn key_filter(
    target: &RelEntry,
    index: &str,
    values: &[crate::query::Operand],
    params: &[Value],
    filters: &mut Filters,
) -> Result<bool> {
    let ix = target
        .indexes
        .iter()
        .find(|ix| ix.name == index)
        .ok_or_else(|| crate::catalog::CatalogError::UnknownRelation(index.to_owned()))?;
    if values.len() != ix.key.types().len() {
        return Err(crate::EngineError::NotSupported(format!(
            "a key of {} parts for index \"{index}\" of {} parts",
            values.len(),
            ix.key.types().len()
        )));
    }
    let mut key = Vec::with_capacity(values.len());
    let mut impossible = false;
    for (v, ty) in values.iter().zip(ix.key.types()) {
        let v = crate::query::plan::operand_value(v, Some(params))?.cloned().unwrap_or(Value::Null);
        match v.coerce(*ty) {
            Some(Value::Null) | None => impossible = true,
            Some(v) => key.push(v),
        }
    }
    filters.key = Some((ix.key.clone(), key));
    Ok(impossible)
}
