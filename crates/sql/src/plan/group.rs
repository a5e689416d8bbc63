//! GROUP BY and PostgreSQL's grouping rule: the keys (expressions,
//! select-list positions or output aliases), and the check (`42803`) that a
//! grouped query reads columns only through an aggregate, a key, or a table
//! whose primary key is grouped (`check_functional_grouping`).

use super::target::Outputs;
use super::{compiler, Catalog};
use crate::error::SqlError;
use crate::expr::{ident_name, Expr, Scope};
use crate::value::SqlType;
use sqlparser::ast;
use turnstile_lock::SqlState;

/// GROUP BY keys: expressions, select-list positions or output aliases.
pub(super) fn group_by(
    sel: &ast::Select,
    scope: &Scope,
    params: &mut Vec<SqlType>,
    out: &Outputs,
) -> Result<Vec<Expr>, SqlError> {
    let exprs = match &sel.group_by {
        ast::GroupByExpr::Expressions(exprs, mods) => {
            if !mods.is_empty() {
                return Err(SqlError::unsupported("GROUP BY modifiers"));
            }
            exprs
        }
        ast::GroupByExpr::All(_) => return Err(SqlError::unsupported("GROUP BY ALL")),
    };
    let mut keys = Vec::new();
    for g in exprs {
        let target = match g {
            ast::Expr::Value(v) => match &v.value {
                ast::Value::Number(n, _) => {
                    let k: usize =
                        n.parse().map_err(|_| SqlError::new(SqlState::SYNTAX_ERROR, "bad GROUP BY position"))?;
                    out.proj_ast.get(k.wrapping_sub(1)).cloned().flatten().ok_or_else(|| {
                        SqlError::new(
                            SqlState::INVALID_COLUMN_REFERENCE,
                            format!("GROUP BY position {k} is not in select list"),
                        )
                    })?
                }
                _ => g.clone(),
            },
            ast::Expr::Identifier(i) if scope.resolve(None, &ident_name(i)).is_err() => {
                // An output alias.
                let n = ident_name(i);
                out.fields.iter().position(|f| f.name == n).and_then(|k| out.proj_ast[k].clone()).unwrap_or(g.clone())
            }
            _ => g.clone(),
        };
        keys.push(compiler(scope, params, None).compile(&target, None)?.0);
    }
    Ok(keys)
}

/// The tables (by their qualifier in `scope`) whose every primary-key
/// column is a plain GROUP BY key: each of their columns is functionally
/// dependent on the grouping, so PostgreSQL lets a grouped query read any of
/// them (`check_functional_grouping`).
pub(super) fn grouped_by_primary_key(cat: &Catalog<'_>, keys: &[Expr], scope: &Scope) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in &scope.cols {
        if c.table_oid == 0 || out.contains(&c.qual) {
            continue;
        }
        let pk = cat.primary_key(c.table_oid);
        let grouped = |attnum: &i16| {
            keys.iter().any(|k| {
                matches!(k, Expr::Col(j) if scope.cols[*j].qual == c.qual
                    && scope.cols[*j].table_oid == c.table_oid
                    && scope.cols[*j].attnum == *attnum)
            })
        };
        if !pk.is_empty() && pk.iter().all(grouped) {
            out.push(c.qual.clone());
        }
    }
    out
}

/// PostgreSQL's grouping rule (`42803`): in a grouped query, the select
/// list, HAVING and ORDER BY read a column only inside an aggregate, inside
/// an expression that is a GROUP BY key, or of a table whose primary key is
/// grouped (`dependent`, by qualifier).
pub(super) fn check_grouped(x: &Expr, keys: &[Expr], scope: &Scope, dependent: &[String]) -> Result<(), SqlError> {
    if keys.iter().any(|k| k == x) {
        return Ok(());
    }
    let check_grouped = |x: &Expr, keys: &[Expr], scope: &Scope| check_grouped(x, keys, scope, dependent);
    match x {
        Expr::Col(c) if scope.cols[*c].table_oid != 0 && dependent.contains(&scope.cols[*c].qual) => Ok(()),
        Expr::Col(c) => {
            let col = &scope.cols[*c];
            Err(SqlError::new(
                SqlState::GROUPING_ERROR,
                format!(
                    "column \"{}.{}\" must appear in the GROUP BY clause or be used in an aggregate function",
                    col.qual, col.name
                ),
            ))
        }
        Expr::Const(_) | Expr::Param(_) | Expr::Agg(_) | Expr::Outer(_) => Ok(()),
        // A subquery reads the group's row through its captures and operand.
        Expr::SubLink(link) => link.lhs.iter().chain(&link.captures).try_for_each(|a| check_grouped(a, keys, scope)),
        Expr::Bin(_, _, a, b) | Expr::And(a, b) | Expr::Or(a, b) | Expr::Like(a, b, _) => {
            check_grouped(a, keys, scope)?;
            check_grouped(b, keys, scope)
        }
        Expr::Not(a) | Expr::Neg(a, _) | Expr::IsNull(a, _) | Expr::IsBool(a, _, _) | Expr::Cast(a, _, _) => {
            check_grouped(a, keys, scope)
        }
        Expr::Func(_, args) | Expr::Array(args) => args.iter().try_for_each(|a| check_grouped(a, keys, scope)),
        Expr::Regex(m) => {
            check_grouped(&m.x, keys, scope)?;
            check_grouped(&m.pattern, keys, scope)
        }
        Expr::Quantified(_, _, _, a, b, _) => {
            check_grouped(a, keys, scope)?;
            check_grouped(b, keys, scope)
        }
        Expr::InList(a, list, _) => {
            check_grouped(a, keys, scope)?;
            list.iter().try_for_each(|a| check_grouped(a, keys, scope))
        }
        Expr::Case(op, whens, els) => {
            op.iter().try_for_each(|o| check_grouped(o, keys, scope))?;
            for (c, r) in whens {
                check_grouped(c, keys, scope)?;
                check_grouped(r, keys, scope)?;
            }
            els.iter().try_for_each(|e| check_grouped(e, keys, scope))
        }
    }
}
