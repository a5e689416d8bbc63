//! W2, star join (Vondra 2024): one fact row, looked up by its primary
//! key, joined with each of N dimension tables on the dimension's primary
//! key.

use super::{ColType, Column, Fill, JoinOn, Lookup, Sizes, Table};

/// The most dimensions a variant may have.
pub const MAX_DIMENSIONS: u32 = 200;

/// `dim<k> (id int PRIMARY KEY, val text)`: `dim_rows` rows, `val =
/// md5(id)`.
pub fn dimension(k: u32, sizes: Sizes) -> Table {
    let columns = vec![Column::new("id", ColType::Int4, Fill::Row), Column::new("val", ColType::Text, Fill::Md5)];
    Table { primary_key: Some("id".into()), ..Table::new(format!("dim{k}"), columns, sizes.dim_rows) }
}

/// `fact_n<n> (id int PRIMARY KEY, d1 int, …, dN int)`: `fact_rows` rows
/// whose keys spread deterministically over the dimensions' rows.
pub fn fact(n: u32, sizes: Sizes) -> Table {
    let mut columns = vec![Column::new("id", ColType::Int4, Fill::Row)];
    for g in 1..=i64::from(n) {
        let fill = Fill::Spread { base: 1, mul: 2 * g + 1, add: g, modulo: i64::from(sizes.dim_rows) };
        columns.push(Column::new(format!("d{g}"), ColType::Int4, fill));
    }
    Table { primary_key: Some("id".into()), ..Table::new(format!("fact_n{n}"), columns, sizes.fact_rows) }
}

/// Every table of `n` dimensions: the dimensions, then the fact table.
pub fn tables(n: u32, sizes: Sizes) -> Vec<Table> {
    (1..=n).map(|k| dimension(k, sizes)).chain(std::iter::once(fact(n, sizes))).collect()
}

/// The fact row `id = $1` joined with every dimension.
pub fn lookup(n: u32) -> Lookup {
    let joins = (1..=n)
        .map(|k| JoinOn {
            table: format!("dim{k}"),
            alias: format!("d{k}"),
            outer: format!("d{k}"),
            inner: "id".into(),
            inner_first: true,
        })
        .collect();
    Lookup { alias: Some("f".into()), joins, ..Lookup::new(format!("fact_n{n}"), "id") }
}

/// Through pgbench: every table created and filled, then statistics.
pub fn setup_sql(n: u32, sizes: Sizes) -> String {
    let mut s = String::new();
    for t in tables(n, sizes) {
        s.push_str(&t.create_sql());
        s.push_str(&t.insert_sql());
    }
    s.push_str("VACUUM ANALYZE;\n");
    s
}

/// The pgbench script: a random fact row.
pub fn script(n: u32, sizes: Sizes) -> String {
    format!("\\set id random(1, {})\n{};\n", sizes.fact_rows, lookup(n).sql(":id"))
}
