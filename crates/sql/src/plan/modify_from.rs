//! `UPDATE … FROM` and `DELETE … USING`: the other tables of a
//! data-modifying statement, as PostgreSQL joins them to the target.
//!
//! The FROM (USING) list is bound as a SELECT's FROM list is
//! (`from.rs`: tables, joins, subqueries, functions), and its rows are
//! read once, before the target is scanned, with the statement's
//! snapshot. Expressions (WHERE, SET, RETURNING) see the target's columns
//! followed by the list's. A target row is changed when some FROM row
//! satisfies the WHERE clause with it, with the first such row's values
//! (PostgreSQL leaves it unspecified which one when several match); a
//! target row without a match is left alone. Nothing is pushed down to
//! the engine: the target is scanned whole.
//!
//! Limit: the FROM rows are held in memory for the statement (as a hash
//! join's inner side would be), and each target row is tested against
//! them in a nested loop.

use super::from::{bind_from, from_list};
use super::predicate::and_all;
use super::target::field;
use super::{compiler, Catalog, QueryCx, SelectPlan};
use crate::error::SqlError;
use crate::expr::{Expr, Scope};
use crate::value::SqlType;
use sqlparser::ast;
use turnstile_lock::SqlState;

/// The FROM (USING) list of an UPDATE (DELETE).
#[derive(Debug)]
pub struct FromRows {
    /// Every column of the list's items, in scope order.
    pub plan: Box<SelectPlan>,
    /// The target's width: the FROM columns follow it in a joined row.
    pub target_width: usize,
}

/// Binds the list `from` and appends its columns to `scope` (the target's
/// columns, which must come first). `42712` when an item has the target's
/// name or alias.
pub(super) fn compile_from(
    cat: &Catalog<'_>,
    from: &[ast::TableWithJoins],
    scope: &mut Scope,
    params: &mut Vec<SqlType>,
) -> Result<FromRows, SqlError> {
    let cx = QueryCx::default();
    let (items, merges) = from_list(cat, from, params, &cx)?;
    let mut fs = Scope::default();
    let (source, residual) = bind_from(items, &mut fs, Vec::new(), params)?;
    merges.apply(&mut fs)?;
    let mut c = compiler(&fs, params, None);
    let residual = and_all(residual.iter().map(|p| c.boolean(p)).collect::<Result<Vec<_>, _>>()?);
    let target_width = scope.cols.len();
    if let Some(clash) = fs.cols.iter().find(|c| scope.cols.first().is_some_and(|t| t.qual == c.qual)) {
        return Err(SqlError::new(
            SqlState::DUPLICATE_ALIAS,
            format!("table name \"{}\" specified more than once", clash.qual),
        ));
    }
    scope.cols.extend(fs.cols.iter().cloned());
    scope.hidden.extend(fs.hidden.iter().map(|h| h + target_width));
    scope.system.extend(fs.system.iter().map(|h| h + target_width));
    let plan = SelectPlan {
        source,
        residual,
        aggs: Vec::new(),
        group_by: Vec::new(),
        grouped: false,
        windows: Vec::new(),
        having: None,
        outputs: (0..fs.cols.len()).map(Expr::Col).collect(),
        out_types: fs.cols.iter().map(|c| c.ty).collect(),
        fields: fs.cols.iter().map(|c| field(&c.name, c.ty)).collect::<Vec<_>>().into(),
        scope: fs,
        order: Vec::new(),
        distinct: false,
        limit: None,
        offset: None,
    };
    Ok(FromRows { plan: Box::new(plan), target_width })
}
