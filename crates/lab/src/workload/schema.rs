//! Tables, their columns and the rows they hold, and their indexes: the
//! schema and data half of a workload's definition, with its SQL form.
//! (Its engine form is in `engine.rs`.)

/// A column's type, as far as the workloads need one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColType {
    /// `int`.
    Int4,
    /// `text`.
    Text,
    /// `char(n)`, blank-padded.
    Char(u32),
}

impl ColType {
    /// The type's SQL name.
    pub fn sql(self) -> String {
        match self {
            ColType::Int4 => "int".into(),
            ColType::Text => "text".into(),
            ColType::Char(n) => format!("char({n})"),
        }
    }
}

/// How a column's value in row `i` (numbered from 1) follows from `i`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fill {
    /// `i`.
    Row,
    /// `base + (i * mul + add) % modulo`: keys spread deterministically.
    Spread {
        /// Added after the modulo.
        base: i64,
        /// Multiplies `i`.
        mul: i64,
        /// Added before the modulo.
        add: i64,
        /// The modulo (at least 1).
        modulo: i64,
    },
    /// `1 + (i - 1) / per`: pgbench's branch of an account.
    Group {
        /// Rows per group.
        per: i64,
    },
    /// The same number in every row.
    Const(i64),
    /// `md5(i::text)`.
    Md5,
    /// The same text in every row.
    Repeat(String),
}

/// A value as a workload's data holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Datum {
    /// An integer.
    Int(i64),
    /// A text.
    Text(String),
}

impl Fill {
    /// The value in row `i`.
    pub fn value(&self, i: i64) -> Datum {
        match self {
            Fill::Row => Datum::Int(i),
            Fill::Spread { base, mul, add, modulo } => Datum::Int(base + (i * mul + add) % (*modulo).max(1)),
            Fill::Group { per } => Datum::Int(1 + (i - 1) / (*per).max(1)),
            Fill::Const(c) => Datum::Int(*c),
            Fill::Md5 => Datum::Text(md5_hex(&i.to_string())),
            Fill::Repeat(s) => Datum::Text(s.clone()),
        }
    }

    /// The SQL expression of the value, over `generate_series`'s `i`.
    pub fn sql(&self) -> String {
        match self {
            Fill::Row => "i".into(),
            Fill::Spread { base, mul, add, modulo } => format!("{base} + (i * {mul} + {add}) % {modulo}"),
            Fill::Group { per } => format!("1 + (i - 1) / {per}"),
            Fill::Const(c) => c.to_string(),
            Fill::Md5 => "md5(i::text)".into(),
            Fill::Repeat(s) => format!("'{}'", s.replace('\'', "''")),
        }
    }
}

/// PostgreSQL's `md5(text)`: 32 lowercase hex digits.
fn md5_hex(s: &str) -> String {
    use md5::{Digest, Md5};
    format!("{:x}", Md5::digest(s.as_bytes()))
}

/// One column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// Its name.
    pub name: String,
    /// Its type.
    pub ty: ColType,
    /// Whether it is declared `NOT NULL`.
    pub not_null: bool,
    /// Its value in each row.
    pub fill: Fill,
}

impl Column {
    /// A nullable column.
    pub fn new(name: impl Into<String>, ty: ColType, fill: Fill) -> Column {
        Column { name: name.into(), ty, not_null: false, fill }
    }
}

/// A table and the rows it is loaded with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    /// Its name.
    pub name: String,
    /// `CREATE UNLOGGED TABLE` (PostgreSQL only; turnstile has no WAL).
    pub unlogged: bool,
    /// Its columns, in order.
    pub columns: Vec<Column>,
    /// The primary key's column, if any (index `<table>_pkey`).
    pub primary_key: Option<String>,
    /// Range partitions on the first column, as `pgbench --partitions`
    /// makes them (0: not partitioned).
    pub partitions: u32,
    /// Rows loaded, numbered `1..=rows`.
    pub rows: u32,
}

impl Table {
    /// An unpartitioned, logged table without a primary key.
    pub fn new(name: impl Into<String>, columns: Vec<Column>, rows: u32) -> Table {
        Table { name: name.into(), unlogged: false, columns, primary_key: None, partitions: 0, rows }
    }

    /// The primary key's index name, PostgreSQL's `<table>_pkey`.
    pub fn pkey_name(&self) -> String {
        format!("{}_pkey", self.name)
    }

    /// Row `i` (from 1).
    pub fn row(&self, i: i64) -> Vec<Datum> {
        self.columns.iter().map(|c| c.fill.value(i)).collect()
    }

    /// The partitions as pgbench makes them: `(name, from, to)`, keys
    /// `from..to`, each of `ceil(rows / partitions)` keys.
    pub fn partition_bounds(&self) -> Vec<(String, i64, i64)> {
        let p = i64::from(self.partitions);
        if p == 0 {
            return Vec::new();
        }
        let size = (i64::from(self.rows) + p - 1) / p;
        (1..=p).map(|k| (format!("{}_{k}", self.name), (k - 1) * size + 1, k * size + 1)).collect()
    }

    /// `CREATE [UNLOGGED] TABLE name (col type [PRIMARY KEY] [NOT NULL], …);`
    pub fn create_sql(&self) -> String {
        let cols: Vec<String> = self
            .columns
            .iter()
            .map(|c| {
                let mut s = format!("{} {}", c.name, c.ty.sql());
                if self.primary_key.as_deref() == Some(c.name.as_str()) {
                    s.push_str(" PRIMARY KEY");
                } else if c.not_null {
                    s.push_str(" NOT NULL");
                }
                s
            })
            .collect();
        let unlogged = if self.unlogged { "UNLOGGED " } else { "" };
        format!("CREATE {unlogged}TABLE {} ({});\n", self.name, cols.join(", "))
    }

    /// `INSERT INTO name SELECT … FROM generate_series(1, rows) i;`
    pub fn insert_sql(&self) -> String {
        let values: Vec<String> = self.columns.iter().map(|c| c.fill.sql()).collect();
        format!("INSERT INTO {} SELECT {} FROM generate_series(1, {}) i;\n", self.name, values.join(", "), self.rows)
    }
}

/// A secondary single-column B-tree index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Index {
    /// The indexed table.
    pub table: String,
    /// The indexed column.
    pub column: String,
}

impl Index {
    /// `<table>_<column>_idx`, the name PostgreSQL gives an unnamed index.
    pub fn name(&self) -> String {
        format!("{}_{}_idx", self.table, self.column)
    }

    /// `CREATE INDEX ON table (column);`
    pub fn create_sql(&self) -> String {
        format!("CREATE INDEX ON {} ({});\n", self.table, self.column)
    }
}
