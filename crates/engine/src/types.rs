//! Column types, values and the row codec.
//!
//! A row is stored as
//!
//! ```text
//! | ncols: u16 LE | null bitmap: ceil(ncols / 8) bytes | column 0 | column 1 | … |
//! ```
//!
//! `ncols` is the relation's column count when the row was written, so rows
//! written before `add_column` read the new columns as NULL (PostgreSQL's
//! `t_natts`). A null column takes no bytes, `bool` 1 byte (0 or 1), `int2`
//! 2 bytes, `int4`, `float4`, `date` and `oid` 4, `int8`, `float8`,
//! `timestamp` and `timestamptz` 8 (little-endian; floats as their IEEE 754
//! bits, dates as days since 2000-01-01, timestamps as microseconds since
//! 2000-01-01 00:00:00, UTC for `timestamptz`), and `text`, `char(n)` (stored
//! blank-padded), `varchar(n)`, `numeric` and `bytea` a 4-byte little-endian
//! length followed by the UTF-8 bytes (the raw bytes for `bytea`).
//! A `numeric` is stored as its PostgreSQL text form (`-12.50`: sign,
//! digits, the point, exactly the display scale's digits after it), which
//! keeps the value and its display scale exactly, at any precision.
//!
//! Values of an `int2` column are [`Value::Int4`] (range-checked on the way
//! in), and those of a `float4` column [`Value::Float`] holding the `f32`
//! widened, so that the integer and float paths each have one value form. Decoding checks every length against the buffer and
//! returns [`CodecError`] instead of panicking, so a corrupted tuple is
//! reported, never trusted.
//!
//! ```
//! use turnstile_engine::types::{decode_row, encode_row, ColumnType, Value};
//! let types = [ColumnType::Int4, ColumnType::Text, ColumnType::Int8];
//! let row = vec![Value::Int4(7), Value::Text("seven".into()), Value::Null];
//! let bytes = encode_row(&types, &row).unwrap();
//! assert_eq!(decode_row(&types, &bytes).unwrap(), row);
//! ```

use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr as _;

/// A column's type.
///
/// Serialised in the catalog as PostgreSQL-like lowercase names (`"int4"`,
/// `"bool"`, `{"char": 10}`, `{"varchar": null}`), so catalogs written
/// before a type was added still read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ColumnType {
    /// 32-bit signed integer (`integer`).
    Int4,
    /// 64-bit signed integer (`bigint`).
    Int8,
    /// Variable-length UTF-8 text.
    Text,
    /// `boolean`.
    Bool,
    /// `timestamp [without time zone]`: microseconds since
    /// 2000-01-01 00:00:00 (PostgreSQL's epoch), stored as 8 bytes.
    Timestamp,
    /// `char(n)` (`bpchar`): text blank-padded to `n` characters.
    Char(u32),
    /// `varchar(n)`: text of at most `n` characters; `None` is `varchar`
    /// without a limit.
    Varchar(Option<u32>),
    /// 16-bit signed integer (`smallint`).
    Int2,
    /// Single-precision float (`real`).
    Float4,
    /// Double-precision float (`double precision`).
    Float8,
    /// `numeric(precision, scale)`, or unconstrained `numeric` (`None`).
    Numeric(Option<(u16, u16)>),
    /// `date`: days since 2000-01-01, stored as 4 bytes.
    Date,
    /// `bytea`: bytes, stored as a 4-byte length and the bytes; values are
    /// [`Value::Bytea`].
    Bytea,
    /// `oid`: a 32-bit unsigned integer, stored as 4 bytes; values are
    /// [`Value::Int8`] in `0..=u32::MAX`.
    Oid,
    /// `timestamp with time zone`: microseconds since 2000-01-01 00:00:00
    /// UTC, stored as 8 bytes like `timestamp`; values are
    /// [`Value::Timestamp`].
    Timestamptz,
}

/// PostgreSQL's type OIDs (`pg_type.oid`) of the engine's types.
pub mod oid {
    /// `bool`.
    pub const BOOL: u32 = 16;
    /// `int8`.
    pub const INT8: u32 = 20;
    /// `int4`.
    pub const INT4: u32 = 23;
    /// `text`.
    pub const TEXT: u32 = 25;
    /// `bpchar` (`char(n)`).
    pub const BPCHAR: u32 = 1042;
    /// `varchar`.
    pub const VARCHAR: u32 = 1043;
    /// `timestamp`.
    pub const TIMESTAMP: u32 = 1114;
    /// `int2`.
    pub const INT2: u32 = 21;
    /// `float4`.
    pub const FLOAT4: u32 = 700;
    /// `float8`.
    pub const FLOAT8: u32 = 701;
    /// `numeric`.
    pub const NUMERIC: u32 = 1700;
    /// `date`.
    pub const DATE: u32 = 1082;
    /// `bytea`.
    pub const BYTEA: u32 = 17;
    /// `oid`.
    pub const OID: u32 = 26;
    /// `timestamptz`.
    pub const TIMESTAMPTZ: u32 = 1184;
}

/// PostgreSQL's `VARHDRSZ`, added to a length in a type modifier.
const VARHDRSZ: i32 = 4;

impl ColumnType {
    /// PostgreSQL's internal type name (`int4`, `int8`, `text`, `bool`,
    /// `timestamp`, `bpchar`, `varchar`).
    pub const fn name(self) -> &'static str {
        match self {
            ColumnType::Int4 => "int4",
            ColumnType::Int8 => "int8",
            ColumnType::Text => "text",
            ColumnType::Bool => "bool",
            ColumnType::Timestamp => "timestamp",
            ColumnType::Char(_) => "bpchar",
            ColumnType::Varchar(_) => "varchar",
            ColumnType::Int2 => "int2",
            ColumnType::Float4 => "float4",
            ColumnType::Float8 => "float8",
            ColumnType::Numeric(_) => "numeric",
            ColumnType::Date => "date",
            ColumnType::Bytea => "bytea",
            ColumnType::Oid => "oid",
            ColumnType::Timestamptz => "timestamptz",
        }
    }

    /// The type's OID in PostgreSQL (`RowDescription`'s type OID).
    pub const fn type_oid(self) -> u32 {
        match self {
            ColumnType::Int4 => oid::INT4,
            ColumnType::Int8 => oid::INT8,
            ColumnType::Text => oid::TEXT,
            ColumnType::Bool => oid::BOOL,
            ColumnType::Timestamp => oid::TIMESTAMP,
            ColumnType::Char(_) => oid::BPCHAR,
            ColumnType::Varchar(_) => oid::VARCHAR,
            ColumnType::Int2 => oid::INT2,
            ColumnType::Float4 => oid::FLOAT4,
            ColumnType::Float8 => oid::FLOAT8,
            ColumnType::Numeric(_) => oid::NUMERIC,
            ColumnType::Date => oid::DATE,
            ColumnType::Bytea => oid::BYTEA,
            ColumnType::Oid => oid::OID,
            ColumnType::Timestamptz => oid::TIMESTAMPTZ,
        }
    }

    /// `pg_type.typlen`: bytes of a fixed-size value, -1 for varlena.
    pub const fn type_len(self) -> i16 {
        match self.fixed_size() {
            Some(n) => n as i16,
            None => -1,
        }
    }

    /// The type modifier (`atttypmod`): `n + 4` for `char(n)` and
    /// `varchar(n)`, -1 otherwise.
    pub fn type_modifier(self) -> i32 {
        match self {
            ColumnType::Char(n) | ColumnType::Varchar(Some(n)) => i32::try_from(n).map_or(-1, |n| n + VARHDRSZ),
            ColumnType::Numeric(Some((p, s))) => ((i32::from(p) << 16) | i32::from(s)) + VARHDRSZ,
            _ => -1,
        }
    }

    /// The type whose OID is `oid` (with no length limit for `bpchar` and
    /// `varchar`: `char` alone is `char(1)`).
    pub fn from_oid(oid: u32) -> Option<ColumnType> {
        Some(match oid {
            oid::INT4 => ColumnType::Int4,
            oid::INT8 => ColumnType::Int8,
            oid::TEXT => ColumnType::Text,
            oid::BOOL => ColumnType::Bool,
            oid::TIMESTAMP => ColumnType::Timestamp,
            oid::BPCHAR => ColumnType::Char(1),
            oid::VARCHAR => ColumnType::Varchar(None),
            oid::INT2 => ColumnType::Int2,
            oid::FLOAT4 => ColumnType::Float4,
            oid::FLOAT8 => ColumnType::Float8,
            oid::NUMERIC => ColumnType::Numeric(None),
            oid::DATE => ColumnType::Date,
            oid::BYTEA => ColumnType::Bytea,
            oid::OID => ColumnType::Oid,
            oid::TIMESTAMPTZ => ColumnType::Timestamptz,
            _ => return None,
        })
    }

    /// Parses a SQL type name: `int4`/`integer`/`int`, `int8`/`bigint`,
    /// `text`, `bool`/`boolean`, `timestamp` (`without time zone`),
    /// `char(n)`/`character(n)`/`bpchar(n)` (`char` alone is `char(1)`),
    /// `varchar(n)`/`character varying(n)`.
    pub fn parse(name: &str) -> Option<ColumnType> {
        let lower = name.trim().to_ascii_lowercase();
        let (base, len, scale) = match lower.split_once('(') {
            Some((base, rest)) => {
                let args = rest.strip_suffix(')')?;
                let (n, s) = match args.split_once(',') {
                    Some((n, s)) => (n, Some(s.trim().parse::<u16>().ok()?)),
                    None => (args, None),
                };
                let n: u32 = n.trim().parse().ok()?;
                if n == 0 || n > TEXT_MAX as u32 {
                    return None;
                }
                (base.trim().to_owned(), Some(n), s)
            }
            None => (lower, None, None),
        };
        let base = base.split_whitespace().collect::<Vec<_>>().join(" ");
        if base == "numeric" || base == "decimal" {
            return match (len, scale) {
                (None, _) => Some(ColumnType::Numeric(None)),
                (Some(p), s) if p <= 1000 && s.unwrap_or(0) <= 1000 => {
                    Some(ColumnType::Numeric(Some((p as u16, s.unwrap_or(0)))))
                }
                _ => None,
            };
        }
        if scale.is_some() {
            return None;
        }
        let t = match (base.as_str(), len) {
            ("int4" | "integer" | "int", None) => ColumnType::Int4,
            ("int8" | "bigint", None) => ColumnType::Int8,
            ("text", None) => ColumnType::Text,
            ("bool" | "boolean", None) => ColumnType::Bool,
            ("timestamp" | "timestamp without time zone", None) => ColumnType::Timestamp,
            ("char" | "character" | "bpchar", n) => ColumnType::Char(n.unwrap_or(1)),
            ("varchar" | "character varying", n) => ColumnType::Varchar(n),
            ("int2" | "smallint", None) => ColumnType::Int2,
            ("float4" | "real", None) => ColumnType::Float4,
            ("float8" | "double precision" | "float", None) => ColumnType::Float8,
            ("date", None) => ColumnType::Date,
            ("bytea", None) => ColumnType::Bytea,
            ("oid", None) => ColumnType::Oid,
            ("timestamptz" | "timestamp with time zone", None) => ColumnType::Timestamptz,
            _ => return None,
        };
        Some(t)
    }

    /// Bytes of a non-null value, for fixed-size types.
    pub const fn fixed_size(self) -> Option<usize> {
        match self {
            ColumnType::Int2 => Some(2),
            ColumnType::Int4 | ColumnType::Float4 | ColumnType::Date | ColumnType::Oid => Some(4),
            ColumnType::Int8 | ColumnType::Timestamp | ColumnType::Timestamptz | ColumnType::Float8 => Some(8),
            ColumnType::Bool => Some(1),
            ColumnType::Text
            | ColumnType::Char(_)
            | ColumnType::Varchar(_)
            | ColumnType::Numeric(_)
            | ColumnType::Bytea => None,
        }
    }

    /// Whether values of this type are `Value::Text` (text, char, varchar).
    pub const fn is_text(self) -> bool {
        matches!(self, ColumnType::Text | ColumnType::Char(_) | ColumnType::Varchar(_))
    }

    /// Whether this is `int2`, `int4` or `int8`.
    pub const fn is_integer(self) -> bool {
        matches!(self, ColumnType::Int2 | ColumnType::Int4 | ColumnType::Int8)
    }

    /// Whether values of the two types can be compared with `=` (same
    /// type, both integers, both floats, both `numeric`, or both
    /// text-like).
    pub const fn comparable(self, other: ColumnType) -> bool {
        (self.is_integer() && other.is_integer())
            || (self.is_text() && other.is_text())
            || matches!(
                (self, other),
                (ColumnType::Bool, ColumnType::Bool)
                    | (ColumnType::Timestamp, ColumnType::Timestamp)
                    | (ColumnType::Date, ColumnType::Date)
                    | (ColumnType::Bytea, ColumnType::Bytea)
                    | (ColumnType::Oid, ColumnType::Oid)
                    | (ColumnType::Timestamptz, ColumnType::Timestamptz)
                    | (ColumnType::Float4 | ColumnType::Float8, ColumnType::Float4 | ColumnType::Float8)
                    | (ColumnType::Numeric(_), ColumnType::Numeric(_))
            )
    }
}

impl fmt::Display for ColumnType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ColumnType::Char(n) => write!(f, "char({n})"),
            ColumnType::Varchar(Some(n)) => write!(f, "varchar({n})"),
            ColumnType::Numeric(Some((p, s))) => write!(f, "numeric({p},{s})"),
            other => f.write_str(other.name()),
        }
    }
}

/// A `float4`/`float8` value, compared and hashed by its bits (so that a
/// [`Value`] stays `Eq` and `Hash`; SQL's float comparison is
/// [`Value::sql_cmp`]).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Float(pub f64);

impl PartialEq for Float {
    fn eq(&self, other: &Float) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for Float {}

impl std::hash::Hash for Float {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.0.to_bits().hash(h);
    }
}

/// One column value.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// An `int4`.
    Int4(i32),
    /// An `int8`.
    Int8(i64),
    /// A `text`, `char(n)` (blank-padded) or `varchar(n)`.
    Text(String),
    /// A `bool`.
    Bool(bool),
    /// A `timestamp`: microseconds since 2000-01-01 00:00:00.
    Timestamp(i64),
    /// A `float4` (widened) or `float8`.
    Float(Float),
    /// A `numeric`, as its PostgreSQL text form (the digits after the point
    /// are the display scale): `-12.50`.
    Numeric(String),
    /// A `date`: days since 2000-01-01.
    Date(i32),
    /// A `bytea`.
    Bytea(Vec<u8>),
}

impl Value {
    /// The value, borrowed (as the executor hands out stored values).
    pub fn as_value_ref(&self) -> ValueRef<'_> {
        match self {
            Value::Null => ValueRef::Null,
            Value::Int4(v) => ValueRef::Int4(*v),
            Value::Int8(v) => ValueRef::Int8(*v),
            Value::Text(s) => ValueRef::Text(s),
            Value::Bool(b) => ValueRef::Bool(*b),
            Value::Timestamp(t) => ValueRef::Timestamp(*t),
            Value::Float(f) => ValueRef::Float(*f),
            Value::Numeric(s) => ValueRef::Numeric(s),
            Value::Date(d) => ValueRef::Date(*d),
            Value::Bytea(b) => ValueRef::Bytea(b),
        }
    }

    /// The value's type, `None` for NULL (text-like values say `Text`).
    pub fn column_type(&self) -> Option<ColumnType> {
        match self {
            Value::Null => None,
            Value::Int4(_) => Some(ColumnType::Int4),
            Value::Int8(_) => Some(ColumnType::Int8),
            Value::Text(_) => Some(ColumnType::Text),
            Value::Bool(_) => Some(ColumnType::Bool),
            Value::Timestamp(_) => Some(ColumnType::Timestamp),
            Value::Float(_) => Some(ColumnType::Float8),
            Value::Numeric(_) => Some(ColumnType::Numeric(None)),
            Value::Date(_) => Some(ColumnType::Date),
            Value::Bytea(_) => Some(ColumnType::Bytea),
        }
    }

    /// The value as an `i64`, for integer types.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int4(v) => Some(i64::from(*v)),
            Value::Int8(v) => Some(*v),
            _ => None,
        }
    }

    /// The value as stored in a column of type `ty`, `None` if it does not
    /// fit (NULL fits everywhere; an `int8` fits `int4` if in range; text
    /// is blank-padded for `char(n)`; see [`Value::cast_to`] for why it
    /// does not fit).
    pub fn coerce(&self, ty: ColumnType) -> Option<Value> {
        self.cast_to(ty, 0).ok()
    }

    /// As [`Value::coerce`], with the reason as a [`CodecError`] naming
    /// `column`: a wrong type, an integer out of range, or text longer
    /// than `char(n)`/`varchar(n)` allows (trailing blanks beyond the
    /// limit are cut, as in PostgreSQL).
    pub fn cast_to(&self, ty: ColumnType, column: usize) -> Result<Value, CodecError> {
        let mismatch = || CodecError::Type { column, value: self.to_string(), ty };
        match (self, ty) {
            (Value::Null, _) => Ok(Value::Null),
            (Value::Int4(v), ColumnType::Int4) => Ok(Value::Int4(*v)),
            (Value::Int4(v), ColumnType::Int8) => Ok(Value::Int8(i64::from(*v))),
            (Value::Int8(v), ColumnType::Int4) => i32::try_from(*v).map(Value::Int4).map_err(|_| mismatch()),
            (Value::Int8(v), ColumnType::Int8) => Ok(Value::Int8(*v)),
            (Value::Int4(_) | Value::Int8(_), ColumnType::Int2) => {
                let v = self.as_i64().unwrap_or(0);
                i16::try_from(v).map(|v| Value::Int4(v.into())).map_err(|_| mismatch())
            }
            (Value::Float(f), ColumnType::Float8) => Ok(Value::Float(*f)),
            (Value::Float(f), ColumnType::Float4) => {
                let narrow = f.0 as f32;
                if narrow.is_infinite() && f.0.is_finite() {
                    return Err(mismatch());
                }
                Ok(Value::Float(Float(f64::from(narrow))))
            }
            (Value::Numeric(n), ColumnType::Numeric(_)) => Ok(Value::Numeric(n.clone())),
            (Value::Date(d), ColumnType::Date) => Ok(Value::Date(*d)),
            (Value::Text(s), ColumnType::Text) => Ok(Value::Text(s.clone())),
            (Value::Text(s), ColumnType::Char(n)) => {
                let s = fit_length(s, n, ty, column)?;
                let len = s.chars().count();
                let mut padded = s.to_owned();
                padded.extend(std::iter::repeat_n(' ', (n as usize).saturating_sub(len)));
                Ok(Value::Text(padded))
            }
            (Value::Text(s), ColumnType::Varchar(None)) => Ok(Value::Text(s.clone())),
            (Value::Text(s), ColumnType::Varchar(Some(n))) => Ok(Value::Text(fit_length(s, n, ty, column)?.to_owned())),
            (Value::Bool(b), ColumnType::Bool) => Ok(Value::Bool(*b)),
            (Value::Timestamp(t), ColumnType::Timestamp | ColumnType::Timestamptz) => Ok(Value::Timestamp(*t)),
            (Value::Bytea(b), ColumnType::Bytea) => Ok(Value::Bytea(b.clone())),
            (Value::Int4(_) | Value::Int8(_), ColumnType::Oid) => {
                let v = self.as_i64().unwrap_or(-1);
                u32::try_from(v).map(|v| Value::Int8(v.into())).map_err(|_| mismatch())
            }
            _ => Err(mismatch()),
        }
    }

    /// The value in PostgreSQL's text output format (`t`/`f` for bool,
    /// `2000-01-01 00:00:00` for timestamp); `None` for NULL.
    pub fn to_pg_text(&self) -> Option<String> {
        match self {
            Value::Null => None,
            Value::Int4(v) => Some(v.to_string()),
            Value::Int8(v) => Some(v.to_string()),
            Value::Text(s) => Some(s.clone()),
            Value::Bool(b) => Some(if *b { "t" } else { "f" }.to_owned()),
            Value::Timestamp(t) => Some(crate::datetime::format_timestamp(*t)),
            Value::Float(f) => Some(f.0.to_string()),
            Value::Numeric(n) => Some(n.clone()),
            Value::Date(d) => Some(crate::datetime::format_date(*d)),
            Value::Bytea(b) => Some(bytea_hex(b)),
        }
    }

    /// Parses PostgreSQL's text input format for type `ty` (`22P02` in
    /// SQL terms when it fails): integers, `t`/`true`/`yes`/`on`/`1` and
    /// their negatives, `YYYY-MM-DD[ HH:MM:SS[.ffffff]]`, and text
    /// (checked against `char(n)`/`varchar(n)`).
    pub fn parse_pg_text(text: &str, ty: ColumnType) -> Result<Value, CodecError> {
        let bad = || CodecError::BadInput { ty, input: text.chars().take(64).collect() };
        match ty {
            ColumnType::Int4 => text.trim().parse::<i32>().map(Value::Int4).map_err(|_| bad()),
            ColumnType::Int8 => text.trim().parse::<i64>().map(Value::Int8).map_err(|_| bad()),
            ColumnType::Bool => match text.trim().to_ascii_lowercase().as_str() {
                "t" | "true" | "y" | "yes" | "on" | "1" => Ok(Value::Bool(true)),
                "f" | "false" | "n" | "no" | "off" | "0" => Ok(Value::Bool(false)),
                _ => Err(bad()),
            },
            ColumnType::Timestamp => crate::datetime::parse_timestamp(text).map(Value::Timestamp).ok_or_else(bad),
            ColumnType::Text | ColumnType::Char(_) | ColumnType::Varchar(_) => {
                Value::Text(text.to_owned()).cast_to(ty, 0)
            }
            ColumnType::Int2 => text.trim().parse::<i16>().map(|v| Value::Int4(v.into())).map_err(|_| bad()),
            ColumnType::Float4 | ColumnType::Float8 => {
                text.trim().parse::<f64>().map(|f| Value::Float(Float(f))).map_err(|_| bad())?.cast_to(ty, 0)
            }
            ColumnType::Numeric(_) => match bigdecimal::BigDecimal::from_str(text.trim()) {
                Ok(_) => Ok(Value::Numeric(text.trim().to_owned())),
                Err(_) => Err(bad()),
            },
            ColumnType::Date => crate::datetime::parse_date(text).map(Value::Date).map_err(|_| bad()),
            ColumnType::Oid => text.trim().parse::<u32>().map(|v| Value::Int8(v.into())).map_err(|_| bad()),
            ColumnType::Timestamptz => crate::datetime::parse_timestamp(text).map(Value::Timestamp).ok_or_else(bad),
            ColumnType::Bytea => parse_bytea_hex(text).map(Value::Bytea).ok_or_else(bad),
        }
    }

    /// Rank of the value's type in the total order of [`Value::sql_cmp`].
    fn type_rank(&self) -> u8 {
        match self {
            Value::Null => 9,
            Value::Int4(_) | Value::Int8(_) => 0,
            Value::Text(_) => 1,
            Value::Bool(_) => 2,
            Value::Timestamp(_) => 3,
            Value::Float(_) => 4,
            Value::Numeric(_) => 5,
            Value::Date(_) => 6,
            Value::Bytea(_) => 7,
        }
    }

    /// SQL ordering within one type: NULL sorts last (as in a PostgreSQL
    /// B-tree by default); integers of different widths compare by value;
    /// values of different types order by type so sorting is total.
    pub fn sql_cmp(&self, other: &Value) -> Ordering {
        match (self, other) {
            (Value::Text(a), Value::Text(b)) => a.cmp(b),
            (Value::Bool(a), Value::Bool(b)) => a.cmp(b),
            (Value::Timestamp(a), Value::Timestamp(b)) => a.cmp(b),
            (Value::Float(a), Value::Float(b)) => float_cmp(a.0, b.0),
            (Value::Date(a), Value::Date(b)) => a.cmp(b),
            (Value::Bytea(a), Value::Bytea(b)) => a.cmp(b),
            (Value::Numeric(a), Value::Numeric(b)) => {
                match (bigdecimal::BigDecimal::from_str(a), bigdecimal::BigDecimal::from_str(b)) {
                    (Ok(x), Ok(y)) => x.cmp(&y),
                    _ => a.cmp(b),
                }
            }
            (a, b) => match (a.as_i64(), b.as_i64()) {
                (Some(x), Some(y)) => x.cmp(&y),
                _ => a.type_rank().cmp(&b.type_rank()),
            },
        }
    }
}

/// PostgreSQL's float order: NaN is equal to itself and above every
/// other value, `-0 = 0` (the engine's key order and the SQL layer's
/// comparisons both use it).
pub fn float_cmp(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

/// The bytes of a fixed-size value as a column of type `ty` stores them
/// (little-endian), for in-place updates; `None` if `value` is not a
/// non-null value of a fixed-size type that fits `ty`.
pub fn fixed_bytes(ty: ColumnType, value: &Value) -> Option<Vec<u8>> {
    Some(match (ty, value.coerce(ty)?) {
        (ColumnType::Int2, Value::Int4(v)) => i16::try_from(v).ok()?.to_le_bytes().to_vec(),
        (ColumnType::Int4, Value::Int4(v)) => v.to_le_bytes().to_vec(),
        (ColumnType::Int8, Value::Int8(v)) | (ColumnType::Timestamp, Value::Timestamp(v)) => v.to_le_bytes().to_vec(),
        (ColumnType::Bool, Value::Bool(b)) => vec![u8::from(b)],
        (ColumnType::Float4, Value::Float(f)) => (f.0 as f32).to_bits().to_le_bytes().to_vec(),
        (ColumnType::Float8, Value::Float(f)) => f.0.to_bits().to_le_bytes().to_vec(),
        (ColumnType::Date, Value::Date(d)) => d.to_le_bytes().to_vec(),
        (ColumnType::Timestamptz, Value::Timestamp(v)) => v.to_le_bytes().to_vec(),
        (ColumnType::Oid, Value::Int8(v)) => u32::try_from(v).ok()?.to_le_bytes().to_vec(),
        _ => return None,
    })
}

/// `s` if it has at most `n` characters, or if what is beyond `n` is all
/// blanks (then cut); otherwise [`CodecError::TooLongFor`].
fn fit_length(s: &str, n: u32, ty: ColumnType, column: usize) -> Result<&str, CodecError> {
    let n = n as usize;
    match s.char_indices().nth(n) {
        None => Ok(s),
        Some((at, _)) if s[at..].chars().all(|c| c == ' ') => Ok(&s[..at]),
        Some(_) => Err(CodecError::TooLongFor { column, ty, chars: s.chars().count() }),
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("NULL"),
            Value::Int4(v) => write!(f, "{v}"),
            Value::Int8(v) => write!(f, "{v}"),
            Value::Text(s) => write!(f, "'{}'", s.replace('\'', "''")),
            Value::Bool(b) => f.write_str(if *b { "true" } else { "false" }),
            Value::Timestamp(t) => write!(f, "'{}'", crate::datetime::format_timestamp(*t)),
            Value::Float(x) => write!(f, "{}", x.0),
            Value::Numeric(n) => f.write_str(n),
            Value::Date(d) => write!(f, "'{}'", crate::datetime::format_date(*d)),
            Value::Bytea(b) => write!(f, "'{}'", bytea_hex(b)),
        }
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Value {
        Value::Bool(v)
    }
}

impl From<i32> for Value {
    fn from(v: i32) -> Value {
        Value::Int4(v)
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int8(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Text(v.to_owned())
    }
}

impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::Text(v)
    }
}

mod row;
pub(crate) use row::corrupted;
pub use row::{
    bytea_hex, decode_row, decode_row_append, decode_row_into, decode_row_refs, encode_row, encode_row_into,
    fixed_column_span, parse_bytea_hex, CodecError, ValueRef, MAX_COLUMNS, TEXT_MAX,
};
