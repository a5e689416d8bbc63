//! The engine form of a workload's definition (`crate::workload`): its
//! tables created and filled, its indexes built, its lookup as a typed
//! `Query` — the calls `turnstile run` measures, generated from the same
//! definition that `turnstile compare` writes as SQL.

use crate::cli::CliError;
use crate::workload::{ColType, Datum, Index, Lookup, Table};
use turnstile_engine::catalog::{PartitionBound, PartitionStrategy};
use turnstile_engine::query::{Col, Operand, Query};
use turnstile_engine::types::{ColumnType, Value};
use turnstile_engine::Session;

/// The engine's type for a column type.
pub fn column_type(ty: ColType) -> ColumnType {
    match ty {
        ColType::Int4 => ColumnType::Int4,
        ColType::Text => ColumnType::Text,
        ColType::Char(n) => ColumnType::Char(n),
    }
}

/// The engine's value for a datum of a column of type `ty` (`char(n)`
/// blank-padded to `n`).
pub fn value(d: Datum, ty: ColType) -> Value {
    match (d, ty) {
        (Datum::Int(i), _) => Value::Int4(i as i32),
        (Datum::Text(s), ColType::Char(n)) => Value::Text(format!("{s:<width$}", width = n as usize)),
        (Datum::Text(s), _) => Value::Text(s),
    }
}

/// Row `i` of `table`, as the engine takes it.
pub fn row(table: &Table, i: i64) -> Vec<Value> {
    table.row(i).into_iter().zip(&table.columns).map(|(d, c)| value(d, c.ty)).collect()
}

/// Creates `tables` (with their partitions), fills each with its rows,
/// then builds each primary key and every index of `indexes`, as
/// `pgbench -i` and the setup SQL do (data first, then indexes).
pub fn load(s: &mut Session, tables: &[Table], indexes: &[Index]) -> Result<(), CliError> {
    for t in tables {
        let cols: Vec<(&str, ColumnType)> = t.columns.iter().map(|c| (c.name.as_str(), column_type(c.ty))).collect();
        if t.partitions == 0 {
            s.create_table(&t.name, &cols, None)?;
        } else {
            s.create_table(&t.name, &cols, Some((PartitionStrategy::Range, t.columns[0].name.as_str())))?;
            for (name, from, to) in t.partition_bounds() {
                s.create_partition(&t.name, &name, PartitionBound::Range { from, to })?;
            }
        }
        if t.unlogged {
            s.set_unlogged(&t.name)?;
        }
        s.insert_many(&t.name, (1..=i64::from(t.rows)).map(|i| row(t, i)))?;
        if let Some(pk) = &t.primary_key {
            s.create_index(&t.name, &t.pkey_name(), &[pk.as_str()], true)?;
        }
    }
    for i in indexes {
        s.create_index(&i.table, &i.name(), &[i.column.as_str()], false)?;
    }
    Ok(())
}

/// The lookup as the engine's `Query`, comparing with `param`.
pub fn query(l: &Lookup, param: impl Into<Operand>) -> Query {
    let col = |c: &str| if l.joins.is_empty() { Col::from(c) } else { Col::of(l.from.as_str(), c) };
    let mut q = Query::from(l.from.as_str());
    for j in &l.joins {
        q = q.join(j.table.as_str(), Col::of(l.from.as_str(), j.outer.as_str()), j.inner.as_str());
    }
    q = q.filter(col(&l.filter), param);
    if !l.select.is_empty() {
        q = q.select(l.select.iter().map(|c| col(c)));
    }
    q
}
