//! The catalog's contents: databases, relations, columns, partitioning and
//! indexes (PostgreSQL's `pg_database`, `pg_class`, `pg_attribute`,
//! `pg_partitioned_table`, `pg_index`, folded into one structure).

use crate::types::{ColumnType, Value};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// A database id (PostgreSQL's database OID).
pub type DbId = u32;
/// A relation id (PostgreSQL's relation OID, which is also its file number).
pub type RelId = u32;

/// The first id handed out to user objects (PostgreSQL's
/// `FirstNormalObjectId`).
pub const FIRST_USER_ID: u32 = 16384;

/// A database.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Database {
    /// Its id.
    pub id: DbId,
    /// Its name, unique in the cluster.
    pub name: String,
}

/// A table column.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Column {
    /// Its name, unique in the table.
    pub name: String,
    /// Its type.
    pub ty: ColumnType,
    /// Whether NULLs are refused (set for primary-key columns).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub not_null: bool,
    /// Its DEFAULT expression as SQL text (PostgreSQL's `pg_attrdef`), which
    /// the SQL layer parses and evaluates for an INSERT that gives no value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// What a relation is (PostgreSQL's `relkind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RelKind {
    /// An ordinary table with heap storage (`r`), possibly a partition.
    Table,
    /// A partitioned table: no storage of its own (`p`).
    PartitionedTable,
    /// A B-tree index (`i`) on a table with storage.
    Index,
    /// An index on a partitioned table: no storage; each partition has its
    /// own (`I`).
    PartitionedIndex,
}

impl RelKind {
    /// Whether relations of this kind have files of their own.
    pub fn has_storage(self) -> bool {
        matches!(self, RelKind::Table | RelKind::Index)
    }
}

/// How a partitioned table routes rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PartitionStrategy {
    /// By ranges of an integer key.
    Range,
    /// By the hash of the key, modulo the number of partitions.
    Hash,
    /// By lists of key values.
    List,
}

/// The partition key of a partitioned table: one integer column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionKey {
    /// How rows are routed.
    pub strategy: PartitionStrategy,
    /// The key column's number.
    pub column: usize,
}

/// Which rows a partition holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PartitionBound {
    /// Keys in `from..to` (`FOR VALUES FROM (from) TO (to)`); `from ==
    /// MINVALUE` and `to == MAXVALUE` are unbounded.
    Range {
        /// Lowest key, inclusive.
        from: i64,
        /// Highest key, exclusive.
        to: i64,
    },
    /// Keys whose hash modulo `modulus` is `remainder`.
    Hash {
        /// Number of hash partitions.
        modulus: u32,
        /// This partition's remainder.
        remainder: u32,
    },
    /// Keys equal to one of `values` (`FOR VALUES IN (…)`), in the order
    /// written (as `pg_get_expr` shows them), without repeats.
    List {
        /// The keys.
        values: Vec<i64>,
    },
}

impl PartitionBound {
    /// `FROM (MINVALUE)`: a range bound's `from` with no lower limit.
    pub const MINVALUE: i64 = i64::MIN;
    /// `TO (MAXVALUE)`: a range bound's `to` with no upper limit (the
    /// range then includes `i64::MAX` itself).
    pub const MAXVALUE: i64 = i64::MAX;

    /// `FOR VALUES FROM (from) TO (to)`, `None` standing for `MINVALUE`
    /// (in `from`) and `MAXVALUE` (in `to`).
    pub fn range(from: Option<i64>, to: Option<i64>) -> PartitionBound {
        PartitionBound::Range { from: from.unwrap_or(Self::MINVALUE), to: to.unwrap_or(Self::MAXVALUE) }
    }

    /// `FOR VALUES IN (values…)`, repeats dropped.
    pub fn list(values: Vec<i64>) -> PartitionBound {
        let mut kept: Vec<i64> = Vec::with_capacity(values.len());
        for v in values {
            if !kept.contains(&v) {
                kept.push(v);
            }
        }
        PartitionBound::List { values: kept }
    }

    /// Whether a row whose partition key is `key` belongs here.
    pub fn contains(&self, key: &Value) -> bool {
        let Some(k) = key.as_i64() else {
            // PostgreSQL hashes a NULL key to 0: the partition of remainder 0.
            return matches!((self, key), (PartitionBound::Hash { remainder: 0, .. }, Value::Null));
        };
        match *self {
            PartitionBound::Range { from, to } => (from..to).contains(&k) || (to == Self::MAXVALUE && k == to),
            PartitionBound::Hash { modulus, remainder } => hash_partition(k, modulus) == remainder,
            PartitionBound::List { ref values } => values.contains(&k),
        }
    }
}

/// The hash partition (`0..modulus`) of integer key `key`, as PostgreSQL
/// routes it, so that a dump moves between the two with every row in the
/// same partition: the key's extended hash (`hashint8extended`, which
/// hashes an `int2` or `int4` alike, with the seed `HASH_PARTITION_SEED`)
/// combined into a row hash of 0 (`hash_combine64`), modulo `modulus`.
///
/// ```
/// use turnstile_engine::catalog::hash_partition;
/// // PostgreSQL 15, FOR VALUES WITH (MODULUS 4, REMAINDER r): 1 goes to 0, 2 to 2.
/// assert_eq!((hash_partition(1, 4), hash_partition(2, 4)), (0, 2));
/// ```
pub fn hash_partition(key: i64, modulus: u32) -> u32 {
    const HASH_PARTITION_SEED: u64 = 0x7A5B_2236_7996_DCFD;
    // hashint8extended: fold the high half in, so a key that fits 32 bits
    // hashes as an int4 does.
    let (lo, hi) = (key as u32, (key >> 32) as u32);
    let folded = lo ^ if key >= 0 { hi } else { !hi };
    let hash = hash_uint32_extended(folded, HASH_PARTITION_SEED);
    // hash_combine64(0, hash).
    let row = hash.wrapping_add(0x49a0_f4dd_15e5_a8e3);
    (row % u64::from(modulus.max(1))) as u32
}

/// PostgreSQL's `hash_uint32_extended` (Bob Jenkins' lookup3 mix and
/// final steps on one word, seeded).
fn hash_uint32_extended(k: u32, seed: u64) -> u64 {
    let init = 0x9e37_79b9u32.wrapping_add(4).wrapping_add(3_923_095);
    let mut w = [init; 3];
    if seed != 0 {
        w[0] = w[0].wrapping_add((seed >> 32) as u32);
        w[1] = w[1].wrapping_add(seed as u32);
        // mix(a, b, c): x -= y; x ^= rot(y, r); y += z.
        for (x, y, z, r) in [(0, 2, 1, 4), (1, 0, 2, 6), (2, 1, 0, 8), (0, 2, 1, 16), (1, 0, 2, 19), (2, 1, 0, 4)] {
            w[x] = w[x].wrapping_sub(w[y]) ^ w[y].rotate_left(r);
            w[y] = w[y].wrapping_add(w[z]);
        }
    }
    w[0] = w[0].wrapping_add(k);
    // final(a, b, c): x ^= y; x -= rot(y, r).
    for (x, y, r) in [(2, 1, 14), (0, 2, 11), (1, 0, 25), (2, 1, 16), (0, 2, 4), (1, 0, 14), (2, 1, 24)] {
        w[x] = (w[x] ^ w[y]).wrapping_sub(w[y].rotate_left(r));
    }
    let [_, b, c] = w;
    (u64::from(b) << 32) | u64::from(c)
}

/// The definition of an index.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexDef {
    /// The indexed table.
    pub table: RelId,
    /// Column numbers of the key, in key order (`indkey`); a position
    /// holding [`IndexDef::EXPRESSION`] takes the next of `expressions`
    /// (as `indkey`'s 0 takes the next of `indexprs`).
    pub columns: Vec<usize>,
    /// The key's expressions, in key order (`indexprs`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expressions: Vec<IndexExpression>,
    /// Whether keys are unique.
    pub unique: bool,
    /// Whether it is the table's primary key.
    pub primary: bool,
    /// For an index on a partition: the partitioned index it belongs to.
    pub parent: Option<RelId>,
}

impl IndexDef {
    /// The entry of [`IndexDef::columns`] of a key position computed by an
    /// expression.
    pub const EXPRESSION: usize = usize::MAX;

    /// A key of plain columns.
    pub fn on_columns(table: RelId, columns: Vec<usize>, unique: bool, primary: bool) -> IndexDef {
        IndexDef { table, columns, expressions: Vec::new(), unique, primary, parent: None }
    }

    /// The key's parts in key order: each a column of `table` or an
    /// expression.
    pub fn key_parts(&self) -> impl Iterator<Item = KeyPartDef<'_>> + '_ {
        let mut exprs = self.expressions.iter();
        self.columns.iter().map(move |&c| match c {
            IndexDef::EXPRESSION => exprs.next().map_or(KeyPartDef::Column(c), KeyPartDef::Expression),
            c => KeyPartDef::Column(c),
        })
    }

    /// The key's parts as PostgreSQL names them in messages and in
    /// `pg_get_indexdef`: a column's name, an expression's SQL text.
    pub fn key_names(&self, table: &Relation) -> Vec<String> {
        self.key_parts()
            .map(|p| match p {
                KeyPartDef::Column(c) => table.column_names(&[c]).remove(0),
                KeyPartDef::Expression(e) => e.sql.clone(),
            })
            .collect()
    }

    /// Whether two definitions key the same values (the same columns and
    /// expressions, uniqueness alike), whatever their tables and names.
    pub fn same_key(&self, other: &IndexDef) -> bool {
        self.columns == other.columns
            && self.unique == other.unique
            && self.primary == other.primary
            && self.expressions.iter().map(|e| &e.sql).eq(other.expressions.iter().map(|e| &e.sql))
    }
}

/// One expression of an index key (an element of `pg_index.indexprs`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexExpression {
    /// Its SQL text as `pg_get_indexdef` shows it (`lower(key)`), which the
    /// SQL layer compiles against the table's columns
    /// ([`super::IndexExprCompiler`]).
    pub sql: String,
    /// The index column's name (`pg_attribute.attname`: the function's
    /// name, else `expr`).
    pub name: String,
    /// Its result type.
    pub ty: ColumnType,
}

/// One part of an index key, as defined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyPartDef<'a> {
    /// A column of the table.
    Column(usize),
    /// An expression over the table's columns.
    Expression(&'a IndexExpression),
}

/// A relation: table, partitioned table, or index.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Relation {
    /// Its id (and file number).
    pub id: RelId,
    /// Its database.
    pub db: DbId,
    /// Its name, unique in the database.
    pub name: String,
    /// What it is.
    pub kind: RelKind,
    /// Columns (tables); for an index, the indexed columns' definitions.
    pub columns: Vec<Column>,
    /// For a partitioned table: its key.
    pub partition_key: Option<PartitionKey>,
    /// For a partition: its parent.
    pub parent: Option<RelId>,
    /// For a partition: its bound.
    pub bound: Option<PartitionBound>,
    /// For an index: its definition.
    pub index: Option<IndexDef>,
    /// The `fillfactor` storage parameter of a table (10..=100; `None` is
    /// PostgreSQL's default, 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fillfactor: Option<u8>,
    /// `UNLOGGED`: its changes are not written to the WAL, and crash
    /// recovery empties it (an index of an unlogged table is unlogged).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unlogged: bool,
}

impl Relation {
    /// The column types, in column order.
    pub fn column_types(&self) -> Vec<ColumnType> {
        self.columns.iter().map(|c| c.ty).collect()
    }

    /// The names of the columns numbered `numbers` (an index's key
    /// columns), in that order.
    pub fn column_names(&self, numbers: &[usize]) -> Vec<String> {
        numbers.iter().map(|&c| self.columns.get(c).map_or_else(|| format!("#{c}"), |col| col.name.clone())).collect()
    }

    /// The number of the column called `name`.
    pub fn column_number(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }
}

/// Everything the catalog holds; what is persisted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogData {
    /// The next id to hand out (databases and relations share the space).
    pub next_id: u32,
    /// Bumped by every DDL; caches built at an older generation are stale.
    pub generation: u64,
    /// Databases by id.
    pub databases: BTreeMap<DbId, Database>,
    /// Relations by id.
    pub relations: BTreeMap<RelId, Relation>,
    /// Foreign keys by id (see [`super::ForeignKey`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub foreign_keys: BTreeMap<u32, super::ForeignKey>,
    /// Derived look-up maps, rebuilt by [`CatalogData::reindex`] after
    /// every change and after loading; never persisted.
    #[serde(skip)]
    maps: Maps,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Maps {
    by_name: HashMap<(DbId, String), RelId>,
    partitions: HashMap<RelId, Vec<RelId>>,
    indexes: HashMap<RelId, Vec<RelId>>,
}

impl CatalogData {
    /// A fresh catalog with the database `postgres`.
    pub fn bootstrap() -> CatalogData {
        let mut databases = BTreeMap::new();
        databases.insert(5, Database { id: 5, name: "postgres".into() });
        CatalogData {
            next_id: FIRST_USER_ID,
            generation: 1,
            databases,
            relations: BTreeMap::new(),
            foreign_keys: BTreeMap::new(),
            maps: Maps::default(),
        }
    }

    /// Rebuilds the derived look-up maps from `relations`.
    pub fn reindex(&mut self) {
        let mut maps = Maps::default();
        for r in self.relations.values() {
            maps.by_name.insert((r.db, r.name.clone()), r.id);
            match (&r.index, r.parent) {
                (Some(def), _) => maps.indexes.entry(def.table).or_default().push(r.id),
                (None, Some(parent)) => maps.partitions.entry(parent).or_default().push(r.id),
                (None, None) => {}
            }
        }
        self.maps = maps;
    }

    /// The relation `name` of database `db`.
    pub fn find(&self, db: DbId, name: &str) -> Option<&Relation> {
        self.maps.by_name.get(&(db, name.to_owned())).and_then(|id| self.relations.get(id))
    }

    /// The partitions of `parent`, in id (creation) order.
    pub fn partitions_of(&self, parent: RelId) -> impl Iterator<Item = &Relation> {
        self.ids(&self.maps.partitions, parent)
    }

    /// The indexes of table `table`, in id order.
    pub fn indexes_of(&self, table: RelId) -> impl Iterator<Item = &Relation> {
        self.ids(&self.maps.indexes, table)
    }

    fn ids<'a>(&'a self, map: &'a HashMap<RelId, Vec<RelId>>, key: RelId) -> impl Iterator<Item = &'a Relation> {
        map.get(&key).into_iter().flatten().filter_map(|id| self.relations.get(id))
    }
}
