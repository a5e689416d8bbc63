//! `CREATE [UNIQUE] INDEX`: an index's definition in the catalog — its key
//! of columns and expressions (`pg_index.indkey`, `indexprs`) — made on a
//! table or, for a partitioned table, on it and on each partition, and
//! the names PostgreSQL gives the indexes a partition inherits.
//!
//! The catalog keeps an expression as SQL text with its result type; it
//! does not read SQL. The SQL layer registers what compiles it
//! ([`Catalog::set_index_expr_compiler`]), and each relation cache compiles
//! the expressions of the indexes it loads ([`crate::catalog::IndexKey`]).

use super::{allocate, attach, check_name, Catalog, CatalogError, NAME_MAX};
use crate::catalog::index_key::IndexExprCompiler;
use crate::catalog::model::{CatalogData, Column, DbId, IndexDef, IndexExpression, KeyPartDef, RelKind, Relation};
use std::sync::{Arc, OnceLock};

/// Most parts (columns and expressions) of an index key, as PostgreSQL's
/// `INDEX_MAX_KEYS`.
pub const INDEX_MAX_KEYS: usize = 32;

/// One part of the key `CREATE INDEX` asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyPartSpec {
    /// A column, by name.
    Column(String),
    /// An expression over the table's columns.
    Expression(IndexExpression),
}

impl From<&str> for KeyPartSpec {
    fn from(column: &str) -> KeyPartSpec {
        KeyPartSpec::Column(column.to_owned())
    }
}

impl From<&String> for KeyPartSpec {
    fn from(column: &String) -> KeyPartSpec {
        KeyPartSpec::Column(column.clone())
    }
}

/// The registered expression compiler (set once, by the SQL layer).
#[derive(Default)]
pub(super) struct ExprCompilerSlot(OnceLock<Arc<dyn IndexExprCompiler>>);

impl std::fmt::Debug for ExprCompilerSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ExprCompilerSlot").field(&self.0.get().is_some()).finish()
    }
}

impl Catalog {
    /// Registers what compiles index expressions; the first registration
    /// stays (every SQL engine over one catalog registers the same kind).
    pub fn set_index_expr_compiler(&self, compiler: Arc<dyn IndexExprCompiler>) {
        // A second registration is the same compiler again: ignoring it is right.
        let _ = self.index_exprs.0.set(compiler);
    }

    /// The registered expression compiler, if any.
    pub fn index_expr_compiler(&self) -> Option<&dyn IndexExprCompiler> {
        self.index_exprs.0.get().map(|c| c.as_ref())
    }

    /// `CREATE [UNIQUE] INDEX name ON table (columns…)`: [`Catalog::create_index_on`]
    /// with a key of plain columns.
    pub fn create_index(
        &self,
        db: DbId,
        table: &str,
        name: &str,
        columns: &[&str],
        unique: bool,
        primary: bool,
    ) -> Result<Vec<Relation>, CatalogError> {
        let key: Vec<KeyPartSpec> = columns.iter().map(|&c| KeyPartSpec::from(c)).collect();
        self.create_index_on(db, table, name, &key, unique, primary)
    }

    /// `CREATE [UNIQUE] INDEX name ON table (key…)`, each part a column or
    /// an expression. On a partitioned table this creates a partitioned
    /// index and, per partition, attaches an equivalent index it has or
    /// creates one (named as PostgreSQL names them:
    /// [`partition_index_name`]). Returns every index created, the one on
    /// `table` first.
    pub fn create_index_on(
        &self,
        db: DbId,
        table: &str,
        name: &str,
        key: &[KeyPartSpec],
        unique: bool,
        primary: bool,
    ) -> Result<Vec<Relation>, CatalogError> {
        check_name(name)?;
        if key.is_empty() || key.len() > INDEX_MAX_KEYS {
            return Err(CatalogError::Invalid(format!("an index needs 1 to {INDEX_MAX_KEYS} key columns")));
        }
        self.modify(|c| {
            let t = c.find(db, table).ok_or_else(|| CatalogError::UnknownRelation(table.into()))?.clone();
            if !matches!(t.kind, RelKind::Table | RelKind::PartitionedTable) {
                return Err(CatalogError::WrongKind { name: table.into(), expected: "a table" });
            }
            let mut def = IndexDef::on_columns(t.id, Vec::with_capacity(key.len()), unique, primary);
            for part in key {
                match part {
                    KeyPartSpec::Column(col) => {
                        let n = t.column_number(col).ok_or_else(|| CatalogError::UnknownColumn {
                            relation: table.into(),
                            column: col.clone(),
                        })?;
                        def.columns.push(n);
                    }
                    KeyPartSpec::Expression(e) => {
                        def.columns.push(IndexDef::EXPRESSION);
                        def.expressions.push(e.clone());
                    }
                }
            }
            if c.find(db, name).is_some() {
                return Err(CatalogError::DuplicateRelation(name.to_owned()));
            }
            let top = add_index(c, &t, name, def.clone())?;
            let mut created = vec![top.clone()];
            let parts: Vec<Relation> = c.partitions_of(t.id).cloned().collect();
            for part in parts {
                let def = IndexDef { table: part.id, parent: Some(top.id), ..def.clone() };
                created.extend(attach::attach_or_add_index(c, &part, def)?);
            }
            Ok(created)
        })
    }
}

/// The name PostgreSQL's `ChooseIndexName` gives the index a partition
/// inherits: `<partition>_pkey` for a primary key, else
/// `<partition>_<key columns>_key` (unique) or `_idx` (an expression
/// named by its column name, `lower`); when that name is taken, a number
/// is appended (`trips_1_pkey1`), as `ChooseRelationName` does. The table
/// part is cut to fit [`NAME_MAX`].
pub(super) fn partition_index_name(c: &CatalogData, part: &Relation, def: &IndexDef) -> Result<String, CatalogError> {
    let (middle, label) = if def.primary {
        (String::new(), "pkey")
    } else {
        let names: Vec<String> = def
            .key_parts()
            .map(|p| match p {
                KeyPartDef::Column(n) => part.column_names(&[n]).remove(0),
                KeyPartDef::Expression(e) => e.name.clone(),
            })
            .collect();
        (names.join("_"), if def.unique { "key" } else { "idx" })
    };
    let base = if middle.is_empty() { part.name.clone() } else { format!("{}_{middle}", part.name) };
    for n in 0..=u32::MAX {
        let suffix = if n == 0 { format!("_{label}") } else { format!("_{label}{n}") };
        let mut head = base.clone();
        while head.len() + suffix.len() > NAME_MAX {
            head.pop();
        }
        let name = format!("{head}{suffix}");
        if c.find(part.db, &name).is_none() {
            return Ok(name);
        }
    }
    Err(CatalogError::DuplicateRelation(base))
}

/// Adds index `name` on `table` with definition `def` (its `table` set
/// to `table`); its columns are the key's: a table column's definition, or
/// an expression's name and type.
pub(super) fn add_index(
    c: &mut CatalogData,
    table: &Relation,
    name: &str,
    def: IndexDef,
) -> Result<Relation, CatalogError> {
    check_name(name)?;
    let columns = def
        .key_parts()
        .map(|p| match p {
            KeyPartDef::Column(n) => table
                .columns
                .get(n)
                .cloned()
                .ok_or_else(|| CatalogError::Invalid(format!("index \"{name}\" names column #{n}"))),
            KeyPartDef::Expression(e) => Ok(Column { name: e.name.clone(), ty: e.ty, not_null: false, default: None }),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let id = allocate(c)?;
    let kind = if table.kind == RelKind::PartitionedTable { RelKind::PartitionedIndex } else { RelKind::Index };
    let rel = Relation {
        id,
        db: table.db,
        name: name.to_owned(),
        kind,
        columns,
        partition_key: None,
        parent: None,
        bound: None,
        index: Some(IndexDef { table: table.id, ..def }),
        fillfactor: None,
        unlogged: table.unlogged,
    };
    c.relations.insert(id, rel.clone());
    Ok(rel)
}
