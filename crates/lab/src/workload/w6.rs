//! W6, LWLock starvation (Postgres Pro 2018), in process only: readers look
//! rows up through one hot B-tree while writers insert into the same table
//! (the clients are in `run::workloads::starvation`).

use super::{ColType, Column, Fill, Index, Lookup, Table};

/// The table readers and writers share.
pub const TABLE: &str = "w6_hot";
/// Bytes of filler per row, so heap pages fill and the heap extends often.
pub const FILLER_BYTES: usize = 200;

/// `w6_hot (k int, v int, filler text)`: `rows` rows `k = v = 1..=rows`.
pub fn table(rows: u32) -> Table {
    let columns = vec![
        Column::new("k", ColType::Int4, Fill::Row),
        Column::new("v", ColType::Int4, Fill::Row),
        Column::new("filler", ColType::Text, Fill::Repeat("r".repeat(FILLER_BYTES))),
    ];
    Table::new(TABLE, columns, rows)
}

/// The index every lookup goes through.
pub fn indexes() -> Vec<Index> {
    vec![Index { table: TABLE.into(), column: "k".into() }]
}

/// `SELECT v FROM w6_hot WHERE k = $1`.
pub fn lookup() -> Lookup {
    Lookup { select: vec!["v".into()], ..Lookup::new(TABLE, "k") }
}
