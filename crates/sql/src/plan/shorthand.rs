//! Two query forms read as shorthand for others, rewritten on the syntax
//! tree before binding so that the planner sees only forms it has:
//!
//! * a `VALUES` list as a query (`… UNION ALL VALUES ('16390'::regclass)`,
//!   as psql's `\d` sends) is the `UNION ALL` of one FROM-less SELECT per
//!   row, its columns named `column1`, `column2`, … as PostgreSQL names
//!   them (the rows' column counts must agree: `42601` otherwise);
//! * a FROM-less SELECT whose only target is a set-returning function
//!   (`SELECT pg_partition_ancestors('16390')`, `SELECT unnest(a)`) is
//!   `SELECT * FROM f(…) AS name`, its column named as the target is.
//!
//! The rewritten query is built as SQL text from the parsed pieces
//! (sqlparser prints every expression back as SQL) and parsed again.
//!
//! ```
//! use turnstile_sql::plan::shorthand::values_query;
//! use sqlparser::{dialect::PostgreSqlDialect, parser::Parser};
//! let q = Parser::parse_sql(&PostgreSqlDialect {}, "VALUES (1, 'a'), (2, 'b')").unwrap();
//! let sqlparser::ast::Statement::Query(q) = &q[0] else { panic!() };
//! let sqlparser::ast::SetExpr::Values(v) = q.body.as_ref() else { panic!() };
//! assert_eq!(values_query(v).unwrap().to_string(),
//!            "SELECT 1 AS column1, 'a' AS column2 UNION ALL SELECT 2 AS column1, 'b' AS column2");
//! ```

use super::set_function::SetFunction;
use crate::error::SqlError;
use crate::expr::{ident_name, object_name};
use sqlparser::ast;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use turnstile_lock::SqlState;

/// Most rows a `VALUES` query may list (each becomes a branch of a
/// `UNION ALL`; long lists belong in `INSERT … VALUES`, which does not
/// come here).
pub const VALUES_ROWS_MAX: usize = 1000;

fn reparse(sql: &str) -> Result<ast::Query, SqlError> {
    let mut v = Parser::parse_sql(&PostgreSqlDialect {}, sql)
        .map_err(|e| SqlError::new(SqlState::SYNTAX_ERROR, format!("rewriting a query: {e}")))?;
    match v.pop() {
        Some(ast::Statement::Query(q)) if v.is_empty() => Ok(*q),
        _ => Err(SqlError::new(SqlState::INTERNAL_ERROR, format!("rewriting a query: not one query: {sql}"))),
    }
}

/// `VALUES (…), (…)` as the `UNION ALL` of one SELECT per row.
pub fn values_query(v: &ast::Values) -> Result<ast::Query, SqlError> {
    let width = v.rows.first().map_or(0, |r| r.len());
    if v.rows.is_empty() || width == 0 {
        return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \")\""));
    }
    if v.rows.len() > VALUES_ROWS_MAX {
        return Err(SqlError::unsupported(&format!("a VALUES query of more than {VALUES_ROWS_MAX} rows")));
    }
    let mut branches = Vec::with_capacity(v.rows.len());
    for row in &v.rows {
        if row.len() != width {
            return Err(SqlError::new(SqlState::SYNTAX_ERROR, "VALUES lists must all be the same length"));
        }
        let cols: Vec<String> = row.iter().enumerate().map(|(i, e)| format!("{e} AS column{}", i + 1)).collect();
        branches.push(format!("SELECT {}", cols.join(", ")));
    }
    reparse(&branches.join(" UNION ALL "))
}

/// `SELECT f(…) [AS name]` with no FROM, WHERE, GROUP BY or HAVING, where
/// `f` is a set-returning function: `SELECT * FROM f(…) AS name`.
pub fn set_function_query(sel: &ast::Select) -> Result<Option<ast::Query>, SqlError> {
    let no_clauses = sel.from.is_empty() && sel.selection.is_none() && sel.having.is_none() && sel.distinct.is_none();
    let grouped = !matches!(&sel.group_by, ast::GroupByExpr::Expressions(e, m) if e.is_empty() && m.is_empty());
    let ([item], true, false) = (sel.projection.as_slice(), no_clauses, grouped) else { return Ok(None) };
    let (e, alias) = match item {
        ast::SelectItem::UnnamedExpr(e) => (e, None),
        ast::SelectItem::ExprWithAlias { expr, alias } => (expr, Some(ident_name(alias))),
        _ => return Ok(None),
    };
    let ast::Expr::Function(f) = e else { return Ok(None) };
    let Ok(name) = object_name(&f.name) else { return Ok(None) };
    if SetFunction::named(&name).is_none() && name != "generate_series" {
        return Ok(None);
    }
    let alias = alias.unwrap_or(name).replace('"', "\"\"");
    reparse(&format!("SELECT * FROM {e} AS \"{alias}\"")).map(Some)
}
