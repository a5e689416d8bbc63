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
    /// A set-returning function of one argument: its column is named
    /// `col` when the alias names it, else by the function.
    Function {
        func: SetFunction,
        arg: Box<ast::Expr>,
        alias: String,
        col: Option<String>,
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
        FromItem::Function { func, col, .. } => {
            vec![col.clone().unwrap_or_else(|| func.column(func.arg_hint()).map_or("", |c| c.0).to_owned())]
        }
        FromItem::Derived { cols, .. } => cols.clone(),
    }
}
