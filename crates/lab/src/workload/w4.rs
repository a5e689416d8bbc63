//! W4, relation extension (Freund 2020): clients load rows into one
//! unindexed table, so it grows all the time. Through pgbench each
//! transaction is one server-side `COPY` of a rows file; in process, one
//! `insert_many` of the same rows.

use super::{ColType, Column, Fill, Table};

/// The table.
pub const TABLE: &str = "copy_unlogged";
/// The rows file, under compare's scripts directory.
pub const ROWS_FILE: &str = "w4_rows.txt";

/// `copy_unlogged (data text NOT NULL)`, unlogged in PostgreSQL, empty.
pub fn table() -> Table {
    let mut data = Column::new("data", ColType::Text, Fill::Repeat(String::new()));
    data.not_null = true;
    Table { unlogged: true, ..Table::new(TABLE, vec![data], 0) }
}

/// Through pgbench: the table.
pub fn setup_sql() -> String {
    table().create_sql()
}

/// The pgbench script: one server-side `COPY` of the rows file
/// (`-D rows_file='…'`).
pub fn script() -> String {
    format!("COPY {TABLE} FROM :rows_file;\n")
}

/// The rows one transaction loads: `rows` texts of 95 bytes, as the
/// write-up's `repeat(random()::text, 5)`, from a fixed seed.
pub fn rows(rows: u32) -> Vec<String> {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    (0..rows)
        .map(|_| {
            // xorshift64*: a fixed, dependency-free sequence.
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            let r = x.wrapping_mul(0x2545_f491_4f6c_dd1d) % 10u64.pow(17);
            format!("0.{r:017}").repeat(5)
        })
        .collect()
}

/// The rows file: [`rows`], one per line.
pub fn rows_file(n: u32) -> String {
    let mut out = String::with_capacity(n as usize * 96);
    for r in rows(n) {
        out.push_str(&r);
        out.push('\n');
    }
    out
}
