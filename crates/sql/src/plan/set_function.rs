//! Set-returning functions in FROM besides `generate_series`:
//! `unnest(array)` (one row per element),
//! `pg_partition_ancestors(regclass)` (the relation and the partitioned
//! tables or indexes above it, nearest first), which psql's `\d` joins to
//! `pg_constraint`, and `pg_options_to_table(text[])` (each `name=value`
//! option as the row `(option_name, option_value)`), which pg_dump reads
//! options with.
//!
//! Their arguments may refer to the enclosing query
//! (`array(SELECT … FROM unnest(tc.reloptions) x)`, as psql sends); they
//! are evaluated once per run of the FROM clause. A one-column function's
//! column takes the alias's name (`unnest(a) x` has column `x`), as in
//! PostgreSQL. `WITH ORDINALITY` adds a last column, `ordinality`
//! (`int8`), numbering the rows from 1.
//!
//! ```
//! use turnstile_sql::plan::SetFunction;
//! assert_eq!(SetFunction::named("unnest"), Some(SetFunction::Unnest));
//! assert_eq!(SetFunction::named("pg_partition_ancestors"), Some(SetFunction::PartitionAncestors));
//! assert_eq!(SetFunction::named("generate_series"), None);
//! ```

use crate::catalog::reg::catalog_of;
use crate::error::SqlError;
use crate::expr::EvalEnv;
use crate::value::{Datum, RegKind, SqlType};
use sqlparser::ast;
use turnstile_engine::catalog::{CatalogData, RelKind, Relation};
use turnstile_lock::SqlState;

/// A set-returning function [`from_item`](super::from) reads in FROM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetFunction {
    /// `unnest(anyarray)`: the elements, in order.
    Unnest,
    /// `pg_partition_ancestors(regclass)`: column `relid`.
    PartitionAncestors,
    /// `pg_options_to_table(text[])`: columns `option_name`,
    /// `option_value`.
    OptionsToTable,
}

impl SetFunction {
    /// The function `name` (unqualified, lower case) calls.
    pub fn named(name: &str) -> Option<SetFunction> {
        match name {
            "unnest" => Some(SetFunction::Unnest),
            "pg_partition_ancestors" => Some(SetFunction::PartitionAncestors),
            "pg_options_to_table" => Some(SetFunction::OptionsToTable),
            _ => None,
        }
    }

    /// The function's name.
    pub fn name(self) -> &'static str {
        match self {
            SetFunction::Unnest => "unnest",
            SetFunction::PartitionAncestors => "pg_partition_ancestors",
            SetFunction::OptionsToTable => "pg_options_to_table",
        }
    }

    /// The type hint for the argument (an untyped literal's type).
    pub fn arg_hint(self) -> SqlType {
        match self {
            SetFunction::Unnest | SetFunction::OptionsToTable => SqlType::Array(&SqlType::Text),
            SetFunction::PartitionAncestors => SqlType::Reg(RegKind::Class),
        }
    }

    /// The argument as compiled: an untyped string literal given for a
    /// `regclass` is read as one (`pg_partition_ancestors('16390')`, as
    /// psql sends, or a relation's name).
    pub fn typed_arg(self, arg: ast::Expr) -> Result<ast::Expr, SqlError> {
        let literal = matches!(&arg, ast::Expr::Value(v) if matches!(v.value, ast::Value::SingleQuotedString(_)));
        if self == SetFunction::PartitionAncestors && literal {
            return crate::parse::parse_expr(&format!("{arg}::pg_catalog.regclass"));
        }
        Ok(arg)
    }

    /// The output columns' default names.
    pub fn column_names(self) -> &'static [&'static str] {
        match self {
            SetFunction::Unnest => &["unnest"],
            SetFunction::PartitionAncestors => &["relid"],
            SetFunction::OptionsToTable => &["option_name", "option_value"],
        }
    }

    /// The output columns' types, given the argument's type; `42883` when
    /// the argument does not fit.
    pub fn column_types(self, arg: SqlType) -> Result<Vec<SqlType>, SqlError> {
        let wrong = || {
            SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("function {}({}) does not exist", self.name(), arg.name()),
            )
        };
        match self {
            SetFunction::Unnest => arg.element().map(|e| vec![e]).ok_or_else(wrong),
            SetFunction::PartitionAncestors => {
                let oid_like = arg.is_integer() || matches!(arg, SqlType::Oid | SqlType::Reg(_) | SqlType::Unknown);
                if oid_like {
                    Ok(vec![SqlType::Reg(RegKind::Class)])
                } else {
                    Err(wrong())
                }
            }
            SetFunction::OptionsToTable => match arg.element() {
                Some(SqlType::Text | SqlType::Varchar(_) | SqlType::Name) => Ok(vec![SqlType::Text, SqlType::Text]),
                _ => Err(wrong()),
            },
        }
    }

    /// The rows for the argument's value (none for NULL).
    pub fn rows(self, arg: Datum, env: &mut EvalEnv<'_>) -> Result<Vec<Vec<Datum>>, SqlError> {
        match (self, arg) {
            (_, Datum::Null) => Ok(Vec::new()),
            (SetFunction::Unnest, Datum::Array(items)) => Ok(items.into_iter().map(|d| vec![d]).collect()),
            (SetFunction::OptionsToTable, Datum::Array(items)) => Ok(items
                .into_iter()
                .filter(|d| !d.is_null())
                .map(|d| {
                    let option = d.to_text(SqlType::Text).unwrap_or_default();
                    match option.split_once('=') {
                        Some((name, value)) => vec![Datum::Text(name.into()), Datum::Text(value.into())],
                        None => vec![Datum::Text(option), Datum::Null],
                    }
                })
                .collect()),
            (SetFunction::Unnest | SetFunction::OptionsToTable, d) => Err(SqlError::new(
                SqlState::DATATYPE_MISMATCH,
                format!("unnest of a value that is not an array: {d:?}"),
            )),
            (SetFunction::PartitionAncestors, d) => {
                let id = match d {
                    Datum::Int(v) => u32::try_from(v).unwrap_or(0),
                    _ => 0,
                };
                let (cat, db) = catalog_of(&*env.services)?;
                Ok(ancestors(&cat, db, id).into_iter().map(|a| vec![Datum::Int(a.into())]).collect())
            }
        }
    }
}

/// The relation `id` and its ancestors, nearest first; none unless it is
/// in a partition tree (a partitioned table or index, or a partition).
fn ancestors(cat: &CatalogData, db: u32, id: u32) -> Vec<u32> {
    let parent_of = |r: &Relation| r.parent.or_else(|| r.index.as_ref().and_then(|d| d.parent));
    let Some(rel) = cat.relations.get(&id).filter(|r| r.db == db) else { return Vec::new() };
    let partitioned = matches!(rel.kind, RelKind::PartitionedTable | RelKind::PartitionedIndex);
    if !partitioned && parent_of(rel).is_none() {
        return Vec::new();
    }
    let mut out = vec![rel.id];
    let mut at = rel;
    // A partition tree is acyclic; the bound only guards a broken catalog.
    while let Some(p) = parent_of(at).and_then(|p| cat.relations.get(&p)) {
        if out.len() > cat.relations.len() {
            break;
        }
        out.push(p.id);
        at = p;
    }
    out
}
