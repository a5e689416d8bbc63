//! PostgreSQL's built-in functions and types that turnstile does not
//! implement, so that a query using one is answered `0A000`
//! (feature_not_supported) rather than `42883`/`42704` (does not exist): the
//! name is real, turnstile just lacks it.

/// PostgreSQL 15's function and aggregate names (`pg_functions.txt` says how
/// it was made): `#` lines first, then the names in byte order.
const FUNCTIONS: &str = include_str!("pg_functions.txt");

/// PostgreSQL 15's built-in type names (`pg_type`, base, range, multirange and
/// enum types of `pg_catalog`) and the SQL-standard spellings of them, other
/// than those turnstile has.
const TYPES: &[&str] = &[
    "aclitem",
    "bit",
    "bit varying",
    "box",
    "cid",
    "cidr",
    "circle",
    "datemultirange",
    "daterange",
    "gtsvector",
    "inet",
    "int2vector",
    "int4multirange",
    "int4range",
    "int8multirange",
    "int8range",
    "interval",
    "json",
    "jsonb",
    "jsonpath",
    "line",
    "lseg",
    "macaddr",
    "macaddr8",
    "money",
    "nummultirange",
    "numrange",
    "oidvector",
    "path",
    "point",
    "polygon",
    "refcursor",
    "regcollation",
    "regconfig",
    "regdictionary",
    "regnamespace",
    "regoper",
    "regoperator",
    "regproc",
    "regprocedure",
    "regrole",
    "regtype",
    "tid",
    "time",
    "time with time zone",
    "time without time zone",
    "timetz",
    "tsmultirange",
    "tsquery",
    "tsrange",
    "tstzmultirange",
    "tstzrange",
    "tsvector",
    "txid_snapshot",
    "uuid",
    "varbit",
    "xid8",
    "xml",
];

/// What PostgreSQL's grammar reads as an expression of its own, not a call
/// of a `pg_proc` function, though it is written like one.
const FUNCTION_LIKE: &[&str] = &["greatest", "least", "nullif", "xmlconcat", "xmlelement", "xmlforest"];

/// Whether `name` (lower case, unqualified) is one of PostgreSQL's functions.
pub(super) fn is_postgres_function(name: &str) -> bool {
    if FUNCTION_LIKE.contains(&name) {
        return true;
    }
    let mut names = FUNCTIONS.lines().skip_while(|l| l.starts_with('#'));
    // The list is small enough (about 2,200 names) that a scan per unknown
    // name, which only an erroring query pays, beats keeping an index.
    names.any(|n| n == name)
}

/// Whether `name` (lower case) is one of PostgreSQL's types.
pub(super) fn is_postgres_type(name: &str) -> bool {
    TYPES.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_names_are_known_and_made_up_ones_are_not() {
        assert!(is_postgres_function("replace"));
        assert!(is_postgres_function("string_agg"));
        assert!(is_postgres_function("nullif"));
        assert!(!is_postgres_function("no_such_function"));
        assert!(!is_postgres_function(
            "# SELECT DISTINCT proname FROM pg_proc WHERE pronamespace = 'pg_catalog'::regnamespace"
        ));
        assert!(is_postgres_type("json"));
        assert!(!is_postgres_type("no_such_type"));
    }
}
