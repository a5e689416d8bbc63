//! [`SqlType`]: a SQL type as the front end tracks it — PostgreSQL's OID,
//! `typlen`, `atttypmod` and names for the protocol and messages, the
//! classes the compiler's rules ask about (integer, number, string), and
//! the engine column type that stores it.

use crate::error::SqlError;
use turnstile_engine::types::ColumnType;

/// A SQL type as the front end tracks it (for RowDescription and casts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SqlType {
    /// `boolean`.
    Bool,
    /// `smallint`.
    Int2,
    /// `integer`.
    Int4,
    /// `bigint`.
    Int8,
    /// `numeric`, with its `(precision, scale)` modifier if it has one.
    Numeric(Option<(u16, u16)>),
    /// `real`.
    Float4,
    /// `double precision`.
    Float8,
    /// `text`.
    Text,
    /// `character(n)`.
    Bpchar(u32),
    /// `character varying(n)`; 0 = unlimited.
    Varchar(u32),
    /// `name`.
    Name,
    /// `date`.
    Date,
    /// `timestamp without time zone`.
    Timestamp,
    /// `timestamp with time zone`.
    TimestampTz,
    /// `bytea`: values are [`Datum::Bytea`](super::Datum::Bytea), the bytes.
    Bytea,
    /// `oid`.
    Oid,
    /// `xid`.
    Xid,
    /// `"char"` (one byte, `relkind`).
    QChar,
    /// An object-identifier alias type (`regclass`, `regtype`, …): an OID
    /// ([`Datum::Int`](super::Datum::Int)) that reads and prints as the
    /// object's name.
    Reg(RegKind),
    /// A literal or parameter whose type is not known yet.
    Unknown,
    /// A one-dimensional array of the element type (one of the basic
    /// types without modifier: see [`SqlType::array_of`]).
    Array(&'static SqlType),
    /// An anonymous composite (`record`) with these named fields, as a
    /// function with OUT parameters returns it; its values are
    /// [`Datum::Array`](super::Datum::Array)s of the fields in order
    /// (`value/record.rs`).
    Record(&'static [(&'static str, SqlType)]),
    /// `json`: its text ([`Datum::Text`](super::Datum::Text)), as
    /// `json_build_object` writes it; there is no `json` input.
    Json,
}

/// What kind of object a [`SqlType::Reg`] value names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegKind {
    /// `regclass`: a relation.
    Class,
    /// `regtype`: a type.
    Type,
    /// `regproc`: a function.
    Proc,
    /// `regnamespace`: a schema.
    Namespace,
    /// `regrole`: a role.
    Role,
}

impl RegKind {
    /// The type's OID.
    pub const fn oid(self) -> u32 {
        match self {
            RegKind::Class => 2205,
            RegKind::Type => 2206,
            RegKind::Proc => 24,
            RegKind::Namespace => 4089,
            RegKind::Role => 4096,
        }
    }

    /// The type's name.
    pub const fn name(self) -> &'static str {
        match self {
            RegKind::Class => "regclass",
            RegKind::Type => "regtype",
            RegKind::Proc => "regproc",
            RegKind::Namespace => "regnamespace",
            RegKind::Role => "regrole",
        }
    }
}

/// Unconstrained `numeric`.
pub const NUMERIC: SqlType = SqlType::Numeric(None);

impl SqlType {
    /// PostgreSQL's type OID.
    pub const fn oid(self) -> u32 {
        match self {
            SqlType::Bool => 16,
            SqlType::Int2 => 21,
            SqlType::Int4 => 23,
            SqlType::Int8 => 20,
            SqlType::Numeric(_) => 1700,
            SqlType::Float4 => 700,
            SqlType::Float8 => 701,
            SqlType::Text | SqlType::Unknown => 25,
            SqlType::Bpchar(_) => 1042,
            SqlType::Varchar(_) => 1043,
            SqlType::Name => 19,
            SqlType::Date => 1082,
            SqlType::Timestamp => 1114,
            SqlType::TimestampTz => 1184,
            SqlType::Oid => 26,
            SqlType::Bytea => 17,
            SqlType::Xid => 28,
            SqlType::QChar => 18,
            SqlType::Array(e) => array_oid(*e),
            SqlType::Reg(k) => k.oid(),
            SqlType::Record(_) => 2249,
            SqlType::Json => 114,
        }
    }

    /// `typlen`.
    pub const fn type_len(self) -> i16 {
        match self {
            SqlType::Bool | SqlType::QChar => 1,
            SqlType::Int2 => 2,
            SqlType::Int4 | SqlType::Oid | SqlType::Xid | SqlType::Float4 | SqlType::Date | SqlType::Reg(_) => 4,
            SqlType::Int8 | SqlType::Float8 | SqlType::Timestamp | SqlType::TimestampTz => 8,
            SqlType::Name => 64,
            _ => -1,
        }
    }

    /// `atttypmod`.
    pub const fn modifier(self) -> i32 {
        match self {
            SqlType::Bpchar(n) | SqlType::Varchar(n) if n > 0 => n as i32 + 4,
            SqlType::Numeric(Some((p, s))) => ((p as i32) << 16 | s as i32) + 4,
            _ => -1,
        }
    }

    /// The type of a parameter with OID `oid` (0 = to be inferred).
    pub fn from_oid(oid: u32) -> Option<SqlType> {
        Some(match oid {
            0 | 705 => SqlType::Unknown,
            16 => SqlType::Bool,
            20 => SqlType::Int8,
            21 => SqlType::Int2,
            23 => SqlType::Int4,
            25 => SqlType::Text,
            19 => SqlType::Name,
            26 => SqlType::Oid,
            17 => SqlType::Bytea,
            700 => SqlType::Float4,
            701 => SqlType::Float8,
            1042 => SqlType::Bpchar(0),
            1043 => SqlType::Varchar(0),
            1082 => SqlType::Date,
            1114 => SqlType::Timestamp,
            1184 => SqlType::TimestampTz,
            1700 => NUMERIC,
            2205 => SqlType::Reg(RegKind::Class),
            2206 => SqlType::Reg(RegKind::Type),
            24 => SqlType::Reg(RegKind::Proc),
            4089 => SqlType::Reg(RegKind::Namespace),
            4096 => SqlType::Reg(RegKind::Role),
            other => return SqlType::array_from_oid(other),
        })
    }

    /// Whether values of the type are integers.
    pub fn is_integer(self) -> bool {
        matches!(self, SqlType::Int2 | SqlType::Int4 | SqlType::Int8 | SqlType::Oid | SqlType::Xid | SqlType::Reg(_))
    }

    /// Whether the type is a number type (integers, `numeric`, floats).
    pub fn is_number(self) -> bool {
        self.is_integer() || matches!(self, SqlType::Numeric(_) | SqlType::Float4 | SqlType::Float8)
    }

    /// Whether the type is `real` or `double precision`.
    pub fn is_float(self) -> bool {
        matches!(self, SqlType::Float4 | SqlType::Float8)
    }

    /// Whether the type is a string type.
    pub fn is_string(self) -> bool {
        matches!(
            self,
            SqlType::Text
                | SqlType::Bpchar(_)
                | SqlType::Varchar(_)
                | SqlType::Name
                | SqlType::QChar
                | SqlType::Unknown
        )
    }

    /// PostgreSQL's name of the type (for messages).
    pub fn name(self) -> &'static str {
        match self {
            SqlType::Bool => "boolean",
            SqlType::Int2 => "smallint",
            SqlType::Int4 => "integer",
            SqlType::Int8 => "bigint",
            SqlType::Numeric(_) => "numeric",
            SqlType::Float4 => "real",
            SqlType::Float8 => "double precision",
            SqlType::Text => "text",
            SqlType::Bpchar(_) => "character",
            SqlType::Varchar(_) => "character varying",
            SqlType::Name => "name",
            SqlType::Date => "date",
            SqlType::Timestamp => "timestamp without time zone",
            SqlType::TimestampTz => "timestamp with time zone",
            SqlType::Oid => "oid",
            SqlType::Bytea => "bytea",
            SqlType::Xid => "xid",
            SqlType::QChar => "\"char\"",
            SqlType::Reg(k) => k.name(),
            SqlType::Unknown => "unknown",
            SqlType::Record(_) => "record",
            SqlType::Json => "json",
            SqlType::Array(e) => match e {
                SqlType::Bool => "boolean[]",
                SqlType::Bytea => "bytea[]",
                SqlType::QChar => "\"char\"[]",
                SqlType::Name => "name[]",
                SqlType::Int2 => "smallint[]",
                SqlType::Int4 => "integer[]",
                SqlType::Bpchar(_) => "character[]",
                SqlType::Varchar(_) => "character varying[]",
                SqlType::Int8 => "bigint[]",
                SqlType::Float4 => "real[]",
                SqlType::Float8 => "double precision[]",
                SqlType::Oid => "oid[]",
                SqlType::Timestamp => "timestamp without time zone[]",
                SqlType::Date => "date[]",
                SqlType::TimestampTz => "timestamp with time zone[]",
                SqlType::Numeric(_) => "numeric[]",
                _ => "text[]",
            },
        }
    }

    /// PostgreSQL's internal type name (`pg_type.typname`): what a cast's
    /// result column is called (`SELECT 1::integer` is `int4`).
    pub fn internal_name(self) -> &'static str {
        match self {
            SqlType::Bool => "bool",
            SqlType::Int2 => "int2",
            SqlType::Int4 => "int4",
            SqlType::Int8 => "int8",
            SqlType::Numeric(_) => "numeric",
            SqlType::Float4 => "float4",
            SqlType::Float8 => "float8",
            SqlType::Text => "text",
            SqlType::Bpchar(_) => "bpchar",
            SqlType::Varchar(_) => "varchar",
            SqlType::Name => "name",
            SqlType::Date => "date",
            SqlType::Timestamp => "timestamp",
            SqlType::TimestampTz => "timestamptz",
            SqlType::Oid => "oid",
            SqlType::Bytea => "bytea",
            SqlType::Xid => "xid",
            SqlType::QChar => "char",
            SqlType::Reg(k) => k.name(),
            SqlType::Unknown => "unknown",
            SqlType::Record(_) => "record",
            SqlType::Json => "json",
            SqlType::Array(e) => match e {
                SqlType::Bool => "_bool",
                SqlType::Bytea => "_bytea",
                SqlType::QChar => "_char",
                SqlType::Name => "_name",
                SqlType::Int2 => "_int2",
                SqlType::Int4 => "_int4",
                SqlType::Bpchar(_) => "_bpchar",
                SqlType::Varchar(_) => "_varchar",
                SqlType::Int8 => "_int8",
                SqlType::Float4 => "_float4",
                SqlType::Float8 => "_float8",
                SqlType::Oid => "_oid",
                SqlType::Timestamp => "_timestamp",
                SqlType::Date => "_date",
                SqlType::TimestampTz => "_timestamptz",
                SqlType::Numeric(_) => "_numeric",
                _ => "_text",
            },
        }
    }

    /// The front-end type of an engine column.
    pub fn of_column(ty: ColumnType) -> SqlType {
        match ty {
            ColumnType::Int2 => SqlType::Int2,
            ColumnType::Int4 => SqlType::Int4,
            ColumnType::Int8 => SqlType::Int8,
            ColumnType::Float4 => SqlType::Float4,
            ColumnType::Float8 => SqlType::Float8,
            ColumnType::Numeric(m) => SqlType::Numeric(m),
            ColumnType::Text => SqlType::Text,
            ColumnType::Bool => SqlType::Bool,
            ColumnType::Date => SqlType::Date,
            ColumnType::Timestamp => SqlType::Timestamp,
            ColumnType::Timestamptz => SqlType::TimestampTz,
            ColumnType::Oid => SqlType::Oid,
            ColumnType::Bytea => SqlType::Bytea,
            ColumnType::Char(n) => SqlType::Bpchar(n),
            ColumnType::Varchar(n) => SqlType::Varchar(n.unwrap_or(0)),
        }
    }

    /// The engine column type that stores values of this type.
    pub fn to_column(self) -> Result<ColumnType, SqlError> {
        match self {
            SqlType::Int2 => Ok(ColumnType::Int2),
            SqlType::Int4 => Ok(ColumnType::Int4),
            SqlType::Int8 => Ok(ColumnType::Int8),
            SqlType::Float4 => Ok(ColumnType::Float4),
            SqlType::Float8 => Ok(ColumnType::Float8),
            SqlType::Numeric(m) => Ok(ColumnType::Numeric(m)),
            SqlType::Text => Ok(ColumnType::Text),
            SqlType::Varchar(n) => Ok(ColumnType::Varchar((n > 0).then_some(n))),
            SqlType::Bpchar(n) => Ok(ColumnType::Char(n.max(1))),
            SqlType::Bool => Ok(ColumnType::Bool),
            SqlType::Date => Ok(ColumnType::Date),
            SqlType::Timestamp => Ok(ColumnType::Timestamp),
            SqlType::TimestampTz => Ok(ColumnType::Timestamptz),
            SqlType::Oid => Ok(ColumnType::Oid),
            SqlType::Bytea => Ok(ColumnType::Bytea),
            other => Err(SqlError::unsupported(&format!("a table column of type {}", other.name()))),
        }
    }
}

/// The OID of the array type of `elem` (`pg_type.typarray`; 0 if none).
pub(super) const fn array_oid(elem: SqlType) -> u32 {
    match elem {
        SqlType::Bool => 1000,
        SqlType::Bytea => 1001,
        SqlType::QChar => 1002,
        SqlType::Name => 1003,
        SqlType::Int2 => 1005,
        SqlType::Int4 => 1007,
        SqlType::Text => 1009,
        SqlType::Bpchar(_) => 1014,
        SqlType::Varchar(_) => 1015,
        SqlType::Int8 => 1016,
        SqlType::Float4 => 1021,
        SqlType::Float8 => 1022,
        SqlType::Oid => 1028,
        SqlType::Timestamp => 1115,
        SqlType::Date => 1182,
        SqlType::TimestampTz => 1185,
        SqlType::Numeric(_) => 1231,
        _ => 0,
    }
}
