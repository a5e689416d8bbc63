//! The function registry: every SQL function turnstile has, one
//! [`FuncDef`] each, and the aggregates by name.
//!
//! Adding a function is writing its definition in the file of its family
//! (`text.rs`, `strings.rs`, `math.rs`, `datetime.rs`, `info.rs`, `admin.rs`,
//! `conditional.rs`, `catalog.rs`, `privilege.rs`) and one line in [`FUNCTIONS`]. The compiler finds a
//! call's definition with [`lookup`], once per call site; the tests below
//! check that names are unique, that every name is one of PostgreSQL's, and
//! that fixed signatures fit [`MAX_ARGS`](super::def::MAX_ARGS).

use super::def::FuncDef;
use super::{
    acl, admin, array, catalog, conditional, datetime, info, json, math, privilege, regtype, sequence, strings, text,
    wal,
};
use crate::expr::AggKind;

/// Every function, in no particular order.
pub static FUNCTIONS: &[&FuncDef] = &[
    &acl::ACLDEFAULT,
    &admin::CANCEL_BACKEND,
    &wal::CURRENT_WAL_LSN,
    &wal::CURRENT_WAL_INSERT_LSN,
    &wal::CURRENT_WAL_FLUSH_LSN,
    &admin::CURRENT_SETTING,
    &admin::RELATION_SIZE,
    &admin::SET_CONFIG,
    &admin::TERMINATE_BACKEND,
    &admin::TOTAL_RELATION_SIZE,
    &array::ARRAY_APPEND,
    &array::ARRAY_CAT,
    &array::ARRAY_LENGTH,
    &array::ARRAY_LOWER,
    &array::ARRAY_PREPEND,
    &array::ARRAY_REMOVE,
    &array::ARRAY_TO_STRING,
    &array::ARRAY_UPPER,
    &array::CARDINALITY,
    &catalog::COL_DESCRIPTION,
    &catalog::CURRENT_SCHEMA,
    &catalog::CURRENT_SCHEMAS,
    &catalog::ENCODING_TO_CHAR,
    &catalog::FORMAT_TYPE,
    &catalog::GET_CONSTRAINTDEF,
    &catalog::GET_EXPR,
    &catalog::GET_INDEXDEF,
    &catalog::GET_PARTKEYDEF,
    &catalog::GET_TRIGGERDEF,
    &catalog::GET_USERBYID,
    &catalog::IS_IN_RECOVERY,
    &catalog::OBJ_DESCRIPTION,
    &catalog::RELATION_IS_PUBLISHABLE,
    &catalog::SHOBJ_DESCRIPTION,
    &catalog::STATISTICSOBJDEF_COLUMNS,
    &catalog::TABLE_IS_VISIBLE,
    &catalog::TYPE_IS_VISIBLE,
    &json::JSON_BUILD_OBJECT,
    &sequence::GET_SERIAL_SEQUENCE,
    &regtype::TO_REGCLASS,
    &regtype::TO_REGTYPE,
    &regtype::TO_REGPROC,
    &regtype::TO_REGNAMESPACE,
    &regtype::TO_REGROLE,
    &conditional::COALESCE,
    &conditional::GREATEST,
    &conditional::LEAST,
    &conditional::NULLIF,
    &datetime::CURRENT_DATE,
    &datetime::NOW,
    &datetime::PG_SLEEP,
    &info::BACKEND_PID,
    &info::CURRENT_DATABASE,
    &info::CURRENT_USER,
    &info::VERSION_FN,
    &info::TXID_CURRENT,
    &info::TXID_CURRENT_IF_ASSIGNED,
    &math::ABS,
    &math::POWER,
    &privilege::HAS_ANY_COLUMN,
    &privilege::HAS_COLUMN,
    &privilege::HAS_DATABASE,
    &privilege::HAS_FUNCTION,
    &privilege::HAS_SCHEMA,
    &privilege::HAS_TABLE,
    &math::RANDOM,
    &math::ROUND,
    &sequence::CURRVAL,
    &sequence::LASTVAL,
    &sequence::NEXTVAL,
    &sequence::SETVAL,
    &strings::BTRIM,
    &strings::CONCAT,
    &strings::CONCAT_WS,
    &strings::INITCAP,
    &strings::LPAD,
    &strings::LTRIM,
    &strings::REPLACE,
    &strings::RPAD,
    &strings::RTRIM,
    &strings::SPLIT_PART,
    &strings::STRPOS,
    &text::LEFT,
    &text::LENGTH,
    &text::LOWER,
    &text::MD5,
    &text::QUOTE_IDENT,
    &text::QUOTE_LITERAL,
    &text::REPEAT,
    &text::RIGHT,
    &text::SUBSTR,
    &text::UPPER,
];

/// The function `name` (lower case, unqualified) calls.
pub fn lookup(name: &str) -> Option<&'static FuncDef> {
    // About 60 names, looked up once per call site when a statement is
    // compiled: a scan is cheaper than building an index.
    FUNCTIONS.iter().copied().find(|f| f.is_called(name))
}

/// The aggregate `name` calls (`count(*)` when `star`).
pub fn aggregate(name: &str, star: bool) -> Option<AggKind> {
    Some(match name {
        "count" if star => AggKind::CountStar,
        "count" => AggKind::Count,
        "sum" => AggKind::Sum,
        "min" => AggKind::Min,
        "max" => AggKind::Max,
        "avg" => AggKind::Avg,
        "string_agg" => AggKind::StringAgg,
        "array_agg" => AggKind::ArrayAgg,
        "bool_and" | "every" => AggKind::BoolAnd,
        "bool_or" => AggKind::BoolOr,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::super::def::{Signature, MAX_ARGS};
    use super::*;
    use crate::expr::builtin::is_postgres_function;

    /// Names PostgreSQL's grammar reads as expressions of their own, not
    /// `pg_proc` functions.
    const SQL_FORMS: &[&str] = &["coalesce", "current_date", "current_timestamp", "greatest", "least", "nullif"];

    fn fits_max_args(f: &FuncDef) -> bool {
        match f.signature {
            Signature::Fixed { params, required, .. } => params.len() <= MAX_ARGS && required <= params.len(),
            Signature::Custom(_) => true,
        }
    }

    #[test]
    fn names_are_unique_and_postgresql_s() {
        let mut seen = std::collections::HashSet::new();
        for f in FUNCTIONS {
            for name in std::iter::once(&f.name).chain(f.aliases) {
                assert!(seen.insert(*name), "{name} is registered twice");
                assert!(is_postgres_function(name) || SQL_FORMS.contains(name), "{name} is not a PostgreSQL function");
                assert_eq!(lookup(name), Some(*f), "{name}");
            }
            assert!(fits_max_args(f), "{} takes more than {MAX_ARGS} arguments", f.name);
        }
        assert_eq!(lookup("char_length").map(|f| f.name), Some("length"));
        assert_eq!(lookup("nope"), None);
        assert_eq!(aggregate("count", true), Some(AggKind::CountStar));
        assert_eq!(aggregate("length", false), None);
    }
}
