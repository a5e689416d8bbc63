//! W3, many indexes (Geier 2022): an empty 60-column table with K
//! single-column indexes, one of them on the scanned `col5`; the query
//! looks up `col5 = 42`, so planning (and, before the prefilter, locking)
//! every index is the cost.

use super::{ColType, Column, Fill, Index, Lookup, Table};

/// The table.
pub const TABLE: &str = "synth_table";
/// Its columns (`col1..col60`), and the most indexes a variant may have.
pub const COLUMNS: u32 = 60;
/// The column the query looks up.
pub const SCANNED: u32 = 5;
/// The value it looks up.
pub const VALUE: i32 = 42;

/// `synth_table (col1 int, …, col60 int)`, empty. It is never analyzed,
/// so PostgreSQL's planner uses its 10-page guess and picks an index scan
/// on `col5`, as in the write-up.
pub fn table() -> Table {
    let columns = (1..=COLUMNS).map(|c| Column::new(format!("col{c}"), ColType::Int4, Fill::Const(0))).collect();
    Table::new(TABLE, columns, 0)
}

/// `k` indexes: `col5` first, so every variant has the one the query can
/// use, then the lowest-numbered others; in column order.
pub fn indexes(k: u32) -> Vec<Index> {
    let mut cols: Vec<u32> =
        std::iter::once(SCANNED).chain((1..=COLUMNS).filter(|&c| c != SCANNED)).take(k as usize).collect();
    cols.sort_unstable();
    cols.into_iter().map(|c| Index { table: TABLE.into(), column: format!("col{c}") }).collect()
}

/// `SELECT * FROM synth_table WHERE col5 = $1`.
pub fn lookup() -> Lookup {
    Lookup::new(TABLE, format!("col{SCANNED}"))
}

/// Through pgbench: the table and its `k` indexes.
pub fn setup_sql(k: u32) -> String {
    let mut s = table().create_sql();
    for i in indexes(k) {
        s.push_str(&i.create_sql());
    }
    s
}

/// The pgbench script: the lookup of [`VALUE`].
pub fn script() -> String {
    format!("{};\n", lookup().sql(&VALUE.to_string()))
}
