//! A FROM item as binding resolved it: a table, a system view,
//! `generate_series`, or a derived table (a subquery in FROM or a common
//! table expression), with the alias it is known by and its column names.

use super::{SelectPlan, SetFunction, TableDef};
use crate::views::View;
use sqlparser::ast;

/// A FROM item resolved.
pub(super) enum FromItem {
    Table {
        name: String,
        alias: String,
        def: TableDef,
    },
    View {
        view: View,
        alias: String,
    },
    Series {
        args: Vec<ast::Expr>,
        alias: String,
        col: String,
    },
    /// A set-returning function of one argument: its columns named by
    /// the alias's column list (`given`), else the one column by the
    /// alias, else by the function; `ordinality` (`WITH ORDINALITY`) adds
    /// the row number as a last column.
    Function {
        func: SetFunction,
        arg: Box<ast::Expr>,
        alias: String,
        given: Vec<String>,
        named: bool,
        ordinality: bool,
    },
    /// A subquery in FROM or a common table expression: its plan, alias
    /// and column names.
    Derived {
        plan: Box<SelectPlan>,
        alias: String,
        cols: Vec<String>,
    },
}

/// The alias an item is known by.
pub(super) fn item_alias(item: &FromItem) -> &str {
    match item {
        FromItem::Table { alias, .. }
        | FromItem::View { alias, .. }
        | FromItem::Series { alias, .. }
        | FromItem::Function { alias, .. }
        | FromItem::Derived { alias, .. } => alias,
    }
}

/// The column names an item brings.
pub(super) fn item_columns(item: &FromItem) -> Vec<String> {
    match item {
        FromItem::Table { def, .. } => def.names.clone(),
        FromItem::View { view, .. } => view.columns().iter().map(|(n, _)| (*n).to_owned()).collect(),
        FromItem::Series { col, .. } => vec![col.clone()],
        FromItem::Function { func, alias, given, named, ordinality, .. } => {
            function_columns(*func, alias, given, *named, *ordinality)
        }
        FromItem::Derived { cols, .. } => cols.clone(),
    }
}

/// The column names of a set-returning function in FROM: those the alias
/// lists, then the function's own; a one-column function's column is
/// named by the alias when the alias lists none (`unnest(a) x`), as in
/// PostgreSQL; `ordinality` last, under `WITH ORDINALITY`.
pub(super) fn function_columns(
    func: SetFunction,
    alias: &str,
    given: &[String],
    named: bool,
    ordinality: bool,
) -> Vec<String> {
    let defaults = func.column_names();
    let mut cols: Vec<String> = if defaults.len() == 1 && given.is_empty() && named {
        vec![alias.to_owned()]
    } else {
        defaults.iter().enumerate().map(|(i, d)| given.get(i).cloned().unwrap_or_else(|| (*d).to_owned())).collect()
    };
    if ordinality {
        cols.push(given.get(defaults.len()).cloned().unwrap_or_else(|| "ordinality".to_owned()));
    }
    cols
}
