//! `pg_type`: the built-in types turnstile knows (those it stores and
//! computes, the ones its catalog columns are made of, and their arrays),
//! with PostgreSQL 15's OIDs and properties, and `format_type`, which
//! names a type as SQL writes it (`character varying(20)`,
//! `numeric(10,2)`, `integer[]`).
//!
//! ```
//! use turnstile_sql::catalog::types::format_type;
//! assert_eq!(format_type(1043, 24), "character varying(20)");
//! assert_eq!(format_type(1700, (10 << 16 | 2) + 4), "numeric(10,2)");
//! assert_eq!(format_type(1007, -1), "integer[]");
//! assert_eq!(format_type(123456, -1), "???");
//! ```

use super::datum::{boolean, ch, int, oid, text, ACL_ARRAY, NULL};
use super::oid::{CATALOG_NAMESPACE, DEFAULT_COLLATION, SUPERUSER};
use super::relation::Reader;
use crate::value::{Datum, SqlType};
use SqlType::*;

/// `pg_catalog.pg_type`'s columns.
pub(super) const TYPE: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("typname", Name),
    ("typnamespace", Oid),
    ("typowner", Oid),
    ("typlen", Int2),
    ("typbyval", Bool),
    ("typtype", QChar),
    ("typcategory", QChar),
    ("typispreferred", Bool),
    ("typisdefined", Bool),
    ("typdelim", QChar),
    ("typrelid", Oid),
    ("typsubscript", Text),
    ("typelem", Oid),
    ("typarray", Oid),
    ("typinput", Text),
    ("typoutput", Text),
    ("typreceive", Text),
    ("typsend", Text),
    ("typmodin", Text),
    ("typmodout", Text),
    ("typanalyze", Text),
    ("typalign", QChar),
    ("typstorage", QChar),
    ("typnotnull", Bool),
    ("typbasetype", Oid),
    ("typtypmod", Int4),
    ("typndims", Int4),
    ("typcollation", Oid),
    ("typdefaultbin", Text), /* pg_node_tree */
    ("typdefault", Text),
    ("typacl", ACL_ARRAY), /* _aclitem */
];

/// A built-in base type.
#[derive(Clone, Copy, Debug)]
pub struct BuiltinType {
    /// `oid`.
    pub oid: u32,
    /// `typname`.
    pub name: &'static str,
    /// `typlen`.
    pub len: i16,
    /// `typbyval`.
    pub by_value: bool,
    /// `typtype`: `b` base, `p` pseudo-type.
    pub kind: char,
    /// `typcategory`.
    pub category: char,
    /// `typispreferred`.
    pub preferred: bool,
    /// `typelem` of a vector type (`int2vector`'s `int2`), else 0.
    pub elem: u32,
    /// `typarray`: its array type, 0 for none.
    pub array: u32,
    /// `typalign`.
    pub align: char,
    /// `typstorage`.
    pub storage: char,
    /// Whether values have a collation (`typcollation` is then the
    /// default one, `C` for `name`).
    pub collatable: bool,
    /// Its SQL name, as `format_type` writes it.
    pub sql_name: &'static str,
    /// The default B-tree operator class (`pg_index.indclass`), 0 if none.
    pub btree_opclass: u32,
}

// One argument per column of the table below: a row reads as the
// catalog's row does.
#[allow(clippy::too_many_arguments)]
const fn base(
    oid: u32,
    name: &'static str,
    len: i16,
    by_value: bool,
    category: char,
    array: u32,
    align: char,
    sql_name: &'static str,
    btree_opclass: u32,
) -> BuiltinType {
    BuiltinType {
        oid,
        name,
        len,
        by_value,
        kind: 'b',
        category,
        preferred: false,
        elem: 0,
        array,
        align,
        storage: if len == -1 { 'x' } else { 'p' },
        collatable: false,
        sql_name,
        btree_opclass,
    }
}

const fn preferred(mut t: BuiltinType) -> BuiltinType {
    t.preferred = true;
    t
}

const fn collatable(mut t: BuiltinType) -> BuiltinType {
    t.collatable = true;
    t
}

const fn vector_of(mut t: BuiltinType, elem: u32) -> BuiltinType {
    t.elem = elem;
    t.storage = 'p';
    t
}

const fn pseudo(mut t: BuiltinType) -> BuiltinType {
    t.kind = 'p';
    t
}

const fn main_storage(mut t: BuiltinType) -> BuiltinType {
    t.storage = 'm';
    t
}

/// The built-in base types, in OID order (their arrays are derived:
/// [`array_of`]).
pub static BUILTIN_TYPES: &[BuiltinType] = &[
    preferred(base(16, "bool", 1, true, 'B', 1000, 'c', "boolean", 424)),
    base(17, "bytea", -1, false, 'U', 1001, 'i', "bytea", 428),
    base(18, "char", 1, true, 'Z', 1002, 'c', "\"char\"", 429),
    collatable(base(19, "name", 64, false, 'S', 1003, 'c', "name", 1986)),
    base(20, "int8", 8, true, 'N', 1016, 'd', "bigint", 3124),
    base(21, "int2", 2, true, 'N', 1005, 's', "smallint", 1979),
    vector_of(base(22, "int2vector", -1, false, 'A', 1006, 'i', "int2vector", 0), 21),
    base(23, "int4", 4, true, 'N', 1007, 'i', "integer", 1978),
    base(24, "regproc", 4, true, 'N', 1008, 'i', "regproc", 0),
    preferred(collatable(base(25, "text", -1, false, 'S', 1009, 'i', "text", 3126))),
    preferred(base(26, "oid", 4, true, 'N', 1028, 'i', "oid", 1981)),
    base(27, "tid", 6, false, 'U', 1010, 's', "tid", 2789),
    base(28, "xid", 4, true, 'U', 1011, 'i', "xid", 0),
    base(29, "cid", 4, true, 'U', 1012, 'i', "cid", 0),
    vector_of(base(30, "oidvector", -1, false, 'A', 1013, 'i', "oidvector", 1991), 26),
    collatable(base(194, "pg_node_tree", -1, false, 'Z', 0, 'i', "pg_node_tree", 0)),
    base(700, "float4", 4, true, 'N', 1021, 'i', "real", 1970),
    preferred(base(701, "float8", 8, true, 'N', 1022, 'd', "double precision", 1971)),
    pseudo(base(705, "unknown", -2, false, 'X', 0, 'c', "unknown", 0)),
    base(1033, "aclitem", 12, false, 'U', 1034, 'i', "aclitem", 0),
    collatable(base(1042, "bpchar", -1, false, 'S', 1014, 'i', "character", 426)),
    collatable(base(1043, "varchar", -1, false, 'S', 1015, 'i', "character varying", 3126)),
    base(1082, "date", 4, true, 'D', 1182, 'i', "date", 3122),
    base(1114, "timestamp", 8, true, 'D', 1115, 'd', "timestamp without time zone", 3128),
    preferred(base(1184, "timestamptz", 8, true, 'D', 1185, 'd', "timestamp with time zone", 3127)),
    main_storage(base(1700, "numeric", -1, false, 'N', 1231, 'i', "numeric", 3125)),
    base(2205, "regclass", 4, true, 'N', 2210, 'i', "regclass", 0),
    base(2206, "regtype", 4, true, 'N', 2211, 'i', "regtype", 0),
    pseudo(base(2249, "record", -1, false, 'P', 2287, 'd', "record", 0)),
    pseudo(base(2278, "void", 4, true, 'P', 0, 'i', "void", 0)),
    base(4089, "regnamespace", 4, true, 'N', 4090, 'i', "regnamespace", 0),
];

/// The base type `oid`.
pub fn builtin(oid: u32) -> Option<&'static BuiltinType> {
    BUILTIN_TYPES.iter().find(|t| t.oid == oid)
}

/// The base type whose array type is `oid`.
pub fn array_of(oid: u32) -> Option<&'static BuiltinType> {
    BUILTIN_TYPES.iter().find(|t| t.array == oid && t.array != 0)
}

/// The type `oid`'s `typname` (`_int4` for an array), if turnstile has it.
pub fn type_name(oid: u32) -> Option<String> {
    builtin(oid).map(|t| t.name.to_owned()).or_else(|| array_of(oid).map(|t| format!("_{}", t.name)))
}

/// The type of a SQL type (its built-in row).
pub fn of(ty: SqlType) -> Option<&'static BuiltinType> {
    builtin(ty.oid())
}

/// `format_type(oid, typmod)`: the SQL name with its modifier
/// (`character varying(20)`, `numeric(10,2)`, `character(84)`), arrays
/// with `[]`; `???` for an unknown OID, as PostgreSQL prints.
pub fn format_type(oid: u32, typmod: i32) -> String {
    if let Some(elem) = array_of(oid) {
        return format!("{}[]", format_type(elem.oid, typmod));
    }
    let Some(t) = builtin(oid) else { return "???".into() };
    match (oid, typmod) {
        (1042 | 1043, m) if m >= 4 => format!("{}({})", t.sql_name, m - 4),
        (1700, m) if m >= 4 => format!("numeric({},{})", ((m - 4) >> 16) & 0xffff, (m - 4) & 0xffff),
        (1114 | 1184, m) if m >= 0 => {
            let (head, tail) = t.sql_name.split_at(9);
            format!("{head}({m}){tail}")
        }
        _ => t.sql_name.to_owned(),
    }
}

/// The input function's name (`int4in`, `date_in`, `array_in`).
fn input_name(t: &BuiltinType, array: bool) -> String {
    if array {
        return "array_in".into();
    }
    match t.name {
        "date" | "timestamp" | "timestamptz" | "numeric" | "record" | "void" | "pg_node_tree" => {
            format!("{}_in", t.name)
        }
        n => format!("{n}in"),
    }
}

fn type_row(t: &BuiltinType, array: bool) -> Vec<Datum> {
    let (id, name, len, by_value, category, elem, arr, align, storage) = if array {
        let align = if t.align == 'd' { 'd' } else { 'i' };
        (t.array, format!("_{}", t.name), -1, false, 'A', t.oid, 0, align, 'x')
    } else {
        (t.oid, t.name.to_owned(), t.len, t.by_value, t.category, t.elem, t.array, t.align, t.storage)
    };
    let input = input_name(t, array);
    let stem = input.strip_suffix("in").unwrap_or(&input).to_owned();
    let collation = match (t.collatable, t.oid) {
        (false, _) => 0,
        (true, 19) => super::oid::C_COLLATION,
        (true, _) => DEFAULT_COLLATION,
    };
    vec![
        oid(id),
        text(name),
        oid(CATALOG_NAMESPACE),
        oid(SUPERUSER),
        int(len.into()),
        boolean(by_value),
        ch(if array { 'b' } else { t.kind }),
        ch(category),
        boolean(t.preferred && !array),
        boolean(true),
        ch(','),
        oid(0),
        text(if array { "array_subscript_handler" } else { "-" }),
        oid(elem),
        oid(arr),
        text(input.clone()),
        text(format!("{stem}out")),
        text(format!("{stem}recv")),
        text(format!("{stem}send")),
        text("-"),
        text("-"),
        text(if array { "array_typanalyze" } else { "-" }),
        ch(align),
        ch(storage),
        boolean(false),
        oid(0),
        int(-1),
        int(0),
        oid(collation),
        NULL,
        NULL,
        NULL,
    ]
}

/// `pg_type`: every built-in type and its array.
pub(super) fn type_rows(_: &Reader<'_>) -> Vec<Vec<Datum>> {
    let mut rows: Vec<Vec<Datum>> = BUILTIN_TYPES.iter().map(|t| type_row(t, false)).collect();
    rows.extend(BUILTIN_TYPES.iter().filter(|t| t.array != 0).map(|t| type_row(t, true)));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sql_type_is_a_builtin_type() {
        for ty in [Bool, Int2, Int4, Int8, NUMERIC_T, Float4, Float8, Text, Bpchar(1), Varchar(0), Name, Date]
            .into_iter()
            .chain([Timestamp, TimestampTz, Bytea, Oid, Xid, QChar])
        {
            let t = of(ty).unwrap_or_else(|| panic!("{ty:?} has no pg_type row"));
            assert_eq!(t.sql_name, ty.name(), "{ty:?}");
        }
        assert_eq!(format_type(1042, 88), "character(84)");
        assert_eq!(format_type(1184, -1), "timestamp with time zone");
        assert_eq!(type_name(1009).as_deref(), Some("_text"));
    }

    const NUMERIC_T: SqlType = Numeric(None);
}
