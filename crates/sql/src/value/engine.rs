//! The bridge between the front end's [`Datum`] and the engine's
//! [`Value`]: [`Datum::to_engine`] when a value is written or pushed down
//! as a filter (with the column's assignment cast), [`Datum::from_engine`]
//! when a row comes back from a scan.

use super::datum::Datum;
use super::range::{out_of_range, to_float4};
use super::sql_type::SqlType;
use super::text::pad_char;
use crate::error::SqlError;
use crate::expr::numeric;
use turnstile_engine::types::{ColumnType, Float, Value};

impl Datum {
    /// The engine value for a column of type `ty` (assignment cast first).
    pub fn to_engine(&self, ty: ColumnType) -> Result<Value, SqlError> {
        Ok(match (self, ty) {
            (Datum::Null, _) => Value::Null,
            (Datum::Int(v), ColumnType::Int4) => {
                Value::Int4(i32::try_from(*v).map_err(|_| out_of_range(SqlType::Int4))?)
            }
            (Datum::Int(v), ColumnType::Int2) => {
                Value::Int4(i16::try_from(*v).map_err(|_| out_of_range(SqlType::Int2))?.into())
            }
            (Datum::Int(v), ColumnType::Int8) => Value::Int8(*v),
            (Datum::Text(s), ColumnType::Text | ColumnType::Varchar(None)) => Value::Text(s.clone()),
            (Datum::Bool(b), ColumnType::Bool) => Value::Bool(*b),
            (Datum::Timestamp(t), ColumnType::Timestamp | ColumnType::Timestamptz) => Value::Timestamp(*t),
            (Datum::Int(v), ColumnType::Oid) => {
                Value::Int8(u32::try_from(*v).map_err(|_| out_of_range(SqlType::Oid))?.into())
            }
            (Datum::Bytea(b), ColumnType::Bytea) => Value::Bytea(b.clone()),
            (Datum::Date(d), ColumnType::Date) => Value::Date(*d),
            (Datum::Float(f), ColumnType::Float8) => Value::Float(Float(*f)),
            (Datum::Float(f), ColumnType::Float4) => Value::Float(Float(to_float4(*f)?)),
            (Datum::Numeric(n), ColumnType::Numeric(None)) => Value::Numeric(numeric::to_string(n)),
            (Datum::Numeric(n), ColumnType::Numeric(Some((p, s)))) => {
                Value::Numeric(numeric::to_string(&numeric::apply_typmod(n, p, s)?))
            }
            (Datum::Text(s), ColumnType::Char(n)) => Value::Text(pad_char(s, n)?),
            (Datum::Text(s), ColumnType::Varchar(Some(n))) => match Datum::parse(s, SqlType::Varchar(n))? {
                Datum::Text(t) => Value::Text(t),
                _ => Value::Text(s.clone()),
            },
            (d, t) => return d.clone().cast(SqlType::of_column(t))?.to_engine(t),
        })
    }

    /// The front-end value of an engine value, taking it.
    pub fn from_engine_owned(v: Value) -> Datum {
        match v {
            Value::Text(s) => Datum::Text(s),
            Value::Bytea(b) => Datum::Bytea(b),
            other => Datum::from_engine(&other),
        }
    }

    /// The front-end value of an engine value.
    pub fn from_engine(v: &Value) -> Datum {
        match v {
            Value::Null => Datum::Null,
            Value::Int4(x) => Datum::Int((*x).into()),
            Value::Int8(x) => Datum::Int(*x),
            Value::Text(s) => Datum::Text(s.clone()),
            Value::Bool(b) => Datum::Bool(*b),
            Value::Timestamp(t) => Datum::Timestamp(*t),
            Value::Float(f) => Datum::Float(f.0),
            Value::Numeric(n) => numeric::parse(n).map_or(Datum::Null, Datum::Numeric),
            Value::Date(d) => Datum::Date(*d),
            Value::Bytea(b) => Datum::Bytea(b.clone()),
        }
    }
}
