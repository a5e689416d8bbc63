//! The SQL text of catalog objects, as PostgreSQL's `ruleutils.c` writes
//! it: index definitions (`pg_get_indexdef`), constraint definitions
//! (`pg_get_constraintdef`), column defaults and partition bounds
//! (`pg_get_expr` of `adbin` and `relpartbound`) and partition keys
//! (`pg_get_partkeydef`). The catalog relations store these texts in their
//! node-tree columns and the functions return them, so both agree.
//!
//! ```
//! use turnstile_engine::catalog::PartitionBound;
//! use turnstile_engine::types::ColumnType;
//! use turnstile_sql::catalog::deparse::{default_expr, partition_bound};
//! assert_eq!(default_expr("'unnamed'", ColumnType::Text, ""), "'unnamed'::text");
//! assert_eq!(default_expr("0", ColumnType::Int8, ""), "0");
//! assert_eq!(default_expr("-7", ColumnType::Int4, ""), "'-7'::integer");
//! assert_eq!(
//!     partition_bound(&PartitionBound::range(None, Some(100))),
//!     "FOR VALUES FROM (MINVALUE) TO ('100')"
//! );
//! ```

use super::types::format_type;
use crate::value::SqlType;
use sqlparser::ast;
use turnstile_engine::catalog::{
    CatalogData, KeyPartDef, PartitionBound, PartitionKey, PartitionStrategy, RelKind, Relation,
};
use turnstile_engine::types::ColumnType;

/// `pg_get_indexdef(index)`: `CREATE [UNIQUE] INDEX name ON [ONLY]
/// [public.]table USING btree (columns)`, the table qualified by `schema`
/// (`public.` when `public` is not on the search path, else empty); with
/// `column > 0`, that key column's name (or expression) only. An
/// expression that is not a function call is parenthesised once more
/// unless `pretty`, as PostgreSQL 15 shows it (`((n * 2))`, pretty
/// `(n * 2)`). `None` if `index` is not an index of `cat`.
pub fn index_def(cat: &CatalogData, index: &Relation, column: usize, schema: &str, pretty: bool) -> Option<String> {
    let def = index.index.as_ref()?;
    let table = cat.relations.get(&def.table)?;
    let part = |p: KeyPartDef<'_>| match p {
        KeyPartDef::Column(c) => quote_ident(&table.column_names(&[c])[0]),
        // Kept as `lower(key)` or `(key || payload)` (`index_expr`).
        KeyPartDef::Expression(e) if !pretty && e.sql.starts_with('(') => format!("({})", e.sql),
        KeyPartDef::Expression(e) => e.sql.clone(),
    };
    if column > 0 {
        return def.key_parts().nth(column - 1).map(part);
    }
    let cols: Vec<String> = def.key_parts().map(part).collect();
    Some(format!(
        "CREATE {}INDEX {} ON {}{schema}{} USING btree ({})",
        if def.unique { "UNIQUE " } else { "" },
        quote_ident(&index.name),
        if index.kind == RelKind::PartitionedIndex { "ONLY " } else { "" },
        quote_ident(&table.name),
        cols.join(", ")
    ))
}

/// `pg_get_constraintdef` of the constraint index `index` implements:
/// `PRIMARY KEY (id)`, `UNIQUE (code)`.
pub fn constraint_def(cat: &CatalogData, index: &Relation) -> Option<String> {
    let def = index.index.as_ref()?;
    let table = cat.relations.get(&def.table)?;
    let cols: Vec<String> = table.column_names(&def.columns).iter().map(|n| quote_ident(n)).collect();
    let kind = if def.primary { "PRIMARY KEY" } else { "UNIQUE" };
    Some(format!("{kind} ({})", cols.join(", ")))
}

/// `pg_get_constraintdef` of a foreign key: `FOREIGN KEY (author_id)
/// REFERENCES authors(id)`, then `ON UPDATE …` and `ON DELETE …` for
/// actions other than `NO ACTION`, as PostgreSQL prints it.
pub fn foreign_key_def(cat: &CatalogData, key: &turnstile_engine::catalog::ForeignKey, schema: &str) -> Option<String> {
    use turnstile_engine::catalog::FkAction;
    let (table, referenced) = (cat.relations.get(&key.table)?, cat.relations.get(&key.ref_table)?);
    let names = |rel: &Relation, cols: &[usize]| {
        rel.column_names(cols).iter().map(|n| quote_ident(n)).collect::<Vec<_>>().join(", ")
    };
    let mut def = format!(
        "FOREIGN KEY ({}) REFERENCES {schema}{}({})",
        names(table, &key.columns),
        quote_ident(&referenced.name),
        names(referenced, &key.ref_columns)
    );
    for (on, action) in [("UPDATE", key.on_update), ("DELETE", key.on_delete)] {
        let what = match action {
            FkAction::NoAction => continue,
            FkAction::Restrict => "RESTRICT",
            FkAction::Cascade => "CASCADE",
            FkAction::SetNull => "SET NULL",
            FkAction::SetDefault => "SET DEFAULT",
        };
        def.push_str(&format!(" ON {on} {what}"));
    }
    Some(def)
}

/// `pg_get_expr(relpartbound)`: `FOR VALUES FROM ('1') TO (MAXVALUE)`,
/// `FOR VALUES WITH (modulus 4, remainder 0)` or `FOR VALUES IN (1, 3)`.
pub fn partition_bound(bound: &PartitionBound) -> String {
    match *bound {
        PartitionBound::Range { from, to } => {
            let side = |v: i64, inf: i64, word: &str| {
                if v == inf {
                    word.to_owned()
                } else {
                    format!("'{v}'")
                }
            };
            format!(
                "FOR VALUES FROM ({}) TO ({})",
                side(from, PartitionBound::MINVALUE, "MINVALUE"),
                side(to, PartitionBound::MAXVALUE, "MAXVALUE")
            )
        }
        PartitionBound::Hash { modulus, remainder } => {
            format!("FOR VALUES WITH (modulus {modulus}, remainder {remainder})")
        }
        PartitionBound::List { ref values } => {
            let values: Vec<String> = values.iter().map(i64::to_string).collect();
            format!("FOR VALUES IN ({})", values.join(", "))
        }
    }
}

/// `pg_get_partkeydef(table)`: `RANGE (id)`, `HASH (id)`.
pub fn partition_key(table: &Relation, key: &PartitionKey) -> String {
    let strategy = match key.strategy {
        PartitionStrategy::Range => "RANGE",
        PartitionStrategy::Hash => "HASH",
        PartitionStrategy::List => "LIST",
    };
    let col = table.columns.get(key.column).map_or_else(|| format!("#{}", key.column), |c| quote_ident(&c.name));
    format!("{strategy} ({col})")
}

/// `pg_get_expr(adbin)` of a column default stored as SQL text: constants
/// as PostgreSQL shows them after coercion to the column's type (a string
/// or negative number gets the type's cast: `'unnamed'::text`,
/// `'-7'::integer`; `'x'::varchar(9)` becomes `'x'::character varying`),
/// `nextval('s')` with its argument a `regclass` (`nextval('s'::regclass)`,
/// the parameter's type) and the sequence qualified by `schema` (as
/// [`index_def`]: `public.` when `public` is not on the search path, as
/// during a `pg_dump`), other expressions as written.
pub fn default_expr(stored: &str, ty: ColumnType, schema: &str) -> String {
    let Ok(e) = crate::parse::parse_expr(stored) else { return stored.to_owned() };
    let type_name = |t: SqlType| format_type(t.oid(), -1);
    let column = type_name(SqlType::of_column(ty));
    match &e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) => format!("{}::{column}", quote_literal(s)),
            _ => stored.to_owned(),
        },
        ast::Expr::UnaryOp { op: ast::UnaryOperator::Minus, expr } if matches!(**expr, ast::Expr::Value(_)) => {
            format!("'-{expr}'::{column}")
        }
        ast::Expr::Cast { expr, data_type, .. } => {
            match (&**expr, crate::expr::parse_type_name(&data_type.to_string())) {
                (ast::Expr::Value(v), Ok(t)) => match &v.value {
                    ast::Value::SingleQuotedString(s) => format!("{}::{}", quote_literal(s), type_name(t)),
                    _ => stored.to_owned(),
                },
                _ => stored.to_owned(),
            }
        }
        ast::Expr::Function(f) => match sequence_call(f) {
            Some((name, arg)) => format!("{name}({}::regclass)", quote_literal(&qualified(arg, schema))),
            None => stored.to_owned(),
        },
        _ => stored.to_owned(),
    }
}

/// A relation's name as text (`s`, `"S"`) behind `schema` (`public.`),
/// unless it names its schema already.
fn qualified(name: &str, schema: &str) -> String {
    let mut quoted = false;
    let has_schema = name.chars().any(|c| {
        quoted ^= c == '"';
        c == '.' && !quoted
    });
    if has_schema {
        name.to_owned()
    } else {
        format!("{schema}{name}")
    }
}

/// `nextval('s')`: the function's name and the sequence's text.
fn sequence_call(f: &ast::Function) -> Option<(String, &str)> {
    let name = crate::expr::object_name(&f.name).ok().filter(|n| n == "nextval")?;
    let ast::FunctionArguments::List(l) = &f.args else { return None };
    let [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(ast::Expr::Value(v)))] = l.args.as_slice() else {
        return None;
    };
    match &v.value {
        ast::Value::SingleQuotedString(s) => Some((name, s.as_str())),
        _ => None,
    }
}

/// PostgreSQL 15's keywords other than the unreserved ones
/// (`quoted_keywords.txt` says how it was made): `#` lines first, then the
/// words in byte order.
const QUOTED_KEYWORDS: &str = include_str!("quoted_keywords.txt");

/// Whether `word` is a keyword `quote_ident` quotes (`user`, `select`).
fn is_quoted_keyword(word: &str) -> bool {
    let words: Vec<&str> = QUOTED_KEYWORDS.lines().filter(|l| !l.starts_with('#')).collect();
    words.binary_search(&word).is_ok()
}

/// `quote_ident`, as PostgreSQL's `quote_identifier`: the name,
/// double-quoted unless it is a plain lower-case identifier that is not a
/// keyword needing quotes.
///
/// ```
/// use turnstile_sql::catalog::deparse::quote_ident;
/// assert_eq!(quote_ident("things_pkey"), "things_pkey");
/// assert_eq!(quote_ident("user"), "\"user\"");
/// assert_eq!(quote_ident("Ab"), "\"Ab\"");
/// ```
pub fn quote_ident(name: &str) -> String {
    let plain = name.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain && !is_quoted_keyword(name) {
        name.to_owned()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// A string literal (`'it''s'`).
pub fn quote_literal(s: &str) -> String {
    if s.contains('\\') {
        format!("E'{}'", s.replace('\\', "\\\\").replace('\'', "''"))
    } else {
        format!("'{}'", s.replace('\'', "''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_read_as_postgresql_prints_them() {
        assert_eq!(default_expr("9.99", ColumnType::Numeric(Some((10, 2))), ""), "9.99");
        assert_eq!(default_expr("true", ColumnType::Bool, ""), "true");
        assert_eq!(default_expr("'x'", ColumnType::Varchar(Some(9)), ""), "'x'::character varying");
        assert_eq!(default_expr("'unnamed'::text", ColumnType::Text, ""), "'unnamed'::text");
        assert_eq!(default_expr("now()", ColumnType::Timestamptz, ""), "now()");
        // A sequence is qualified when `public` is off the search path
        // (pg_dump's `search_path` is empty), so the dump loads into
        // PostgreSQL.
        assert_eq!(default_expr("nextval('a_id_seq')", ColumnType::Int4, ""), "nextval('a_id_seq'::regclass)");
        assert_eq!(
            default_expr("nextval('a_id_seq')", ColumnType::Int4, "public."),
            "nextval('public.a_id_seq'::regclass)"
        );
        assert_eq!(default_expr("nextval('\"S\"')", ColumnType::Int4, "public."), "nextval('public.\"S\"'::regclass)");
        assert_eq!(
            default_expr("nextval('\"a.b\"')", ColumnType::Int4, "public."),
            "nextval('public.\"a.b\"'::regclass)"
        );
        assert_eq!(default_expr("nextval('x.s')", ColumnType::Int4, "public."), "nextval('x.s'::regclass)");
        assert_eq!(quote_ident("Mixed"), "\"Mixed\"");
        assert_eq!(quote_literal("it's"), "'it''s'");
    }
}
