//! `JOIN … USING (c, …)` and `NATURAL JOIN`, as PostgreSQL's
//! `transformFromClauseItem` reads them: each named column must appear
//! exactly once among the columns joined so far (`42702` when twice,
//! `42703` when never) and once in the new item; the join condition is
//! the equality of each pair; the pair is one merged output column.
//!
//! Merging is two facts about the scope (see [`Scope::hidden`] and
//! [`Scope::star`]): the right-hand column of each pair is hidden from
//! unqualified names and from `*` (so `c` is not ambiguous and `SELECT *`
//! shows it once), and `*` lists the merged columns first, then the other
//! columns of the joined items in order. Qualified names (`u.c`, `u.*`)
//! still see every column. For inner and left joins the merged column is
//! the left one's value, as PostgreSQL's `COALESCE(l.c, r.c)` is there.
//!
//! [`Scope::hidden`]: crate::expr::Scope::hidden
//! [`Scope::star`]: crate::expr::Scope::star

use super::item::{item_alias, item_columns, FromItem};
use crate::error::SqlError;
use crate::expr::{ident_name, Scope};
use sqlparser::ast;
use turnstile_lock::SqlState;

/// One merged column pair: the FROM list element it belongs to, the
/// aliases of its left and right items, the column name.
#[derive(Debug)]
pub(super) struct Merge {
    group: usize,
    left: String,
    right: String,
    col: String,
}

/// What USING and NATURAL joins of one FROM list merged, and which item
/// aliases each FROM list element holds.
#[derive(Debug, Default)]
pub(super) struct Merges {
    merges: Vec<Merge>,
    groups: Vec<Vec<String>>,
}

impl Merges {
    /// Starts FROM list element `group`, whose first item is `alias`.
    pub(super) fn start_group(&mut self, alias: &str) {
        self.groups.push(vec![alias.to_owned()]);
    }

    /// The join condition of `right` joined to the element's items so far
    /// (`left`) by `constraint` (USING or NATURAL), recording the merged
    /// pairs; `None` for a NATURAL join without common columns.
    pub(super) fn condition(
        &mut self,
        left: &[&FromItem],
        right: &FromItem,
        constraint: &ast::JoinConstraint,
    ) -> Result<Option<ast::Expr>, SqlError> {
        let right_cols = item_columns(right);
        let names: Vec<String> = match constraint {
            ast::JoinConstraint::Using(names) => {
                let mut out = Vec::with_capacity(names.len());
                for n in names {
                    let name = n.0.last().and_then(|p| p.as_ident()).map(ident_name).unwrap_or_default();
                    if out.contains(&name) {
                        return Err(SqlError::new(
                            SqlState::DUPLICATE_COLUMN,
                            format!("column name \"{name}\" appears more than once in USING clause"),
                        ));
                    }
                    out.push(name);
                }
                out
            }
            // NATURAL: the left side's columns the right side also has, in left order.
            _ => {
                let mut out: Vec<String> = Vec::new();
                for item in left {
                    for c in item_columns(item) {
                        if right_cols.contains(&c) && !out.contains(&c) {
                            out.push(c);
                        }
                    }
                }
                out
            }
        };
        let group = self.groups.len().saturating_sub(1);
        let right_alias = item_alias(right).to_owned();
        let mut cond: Option<ast::Expr> = None;
        for name in names {
            // A column already merged into an earlier one counts once.
            let merged_away =
                |alias: &str| self.merges.iter().any(|m| m.group == group && m.right == alias && m.col == name);
            let holders: Vec<&str> = left
                .iter()
                .filter(|i| item_columns(i).contains(&name) && !merged_away(item_alias(i)))
                .map(|i| item_alias(i))
                .collect();
            let left_alias = match holders.as_slice() {
                [one] => (*one).to_owned(),
                [] => {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_COLUMN,
                        format!("column \"{name}\" specified in USING clause does not exist in left table"),
                    ))
                }
                _ => {
                    return Err(SqlError::new(
                        SqlState::AMBIGUOUS_COLUMN,
                        format!("common column name \"{name}\" appears more than once in left table"),
                    ))
                }
            };
            if !right_cols.contains(&name) {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_COLUMN,
                    format!("column \"{name}\" specified in USING clause does not exist in right table"),
                ));
            }
            let col = |alias: &str| {
                ast::Expr::CompoundIdentifier(vec![
                    ast::Ident::with_quote('"', alias),
                    ast::Ident::with_quote('"', &name),
                ])
            };
            let eq = ast::Expr::BinaryOp {
                left: Box::new(col(&left_alias)),
                op: ast::BinaryOperator::Eq,
                right: Box::new(col(&right_alias)),
            };
            cond = Some(match cond {
                None => eq,
                Some(c) => ast::Expr::BinaryOp { left: Box::new(c), op: ast::BinaryOperator::And, right: Box::new(eq) },
            });
            self.merges.push(Merge { group, left: left_alias, right: right_alias.clone(), col: name });
        }
        if let Some(g) = self.groups.last_mut() {
            g.push(right_alias);
        }
        Ok(cond)
    }

    /// Adds an item joined by ON or CROSS JOIN to the current element.
    pub(super) fn add(&mut self, alias: &str) {
        if let Some(g) = self.groups.last_mut() {
            g.push(alias.to_owned());
        }
    }

    /// Marks the merged columns in `scope` (bound from the same FROM list).
    pub(super) fn apply(&self, scope: &mut Scope) -> Result<(), SqlError> {
        if self.merges.is_empty() {
            return Ok(());
        }
        let pos = |alias: &str, col: &str| {
            scope.cols.iter().position(|c| c.qual == alias && c.name == col).ok_or_else(|| {
                SqlError::new(SqlState::INTERNAL_ERROR, format!("merged column {alias}.{col} is not in the scope"))
            })
        };
        let mut hidden = Vec::new();
        let mut first: Vec<Vec<usize>> = vec![Vec::new(); self.groups.len()];
        for m in &self.merges {
            hidden.push(pos(&m.right, &m.col)?);
            let l = pos(&m.left, &m.col)?;
            // A column merged again by a later join is still listed once.
            if !hidden.contains(&l) && !first[m.group].contains(&l) {
                first[m.group].push(l);
            }
        }
        let mut star = Vec::with_capacity(scope.cols.len());
        for (g, aliases) in self.groups.iter().enumerate() {
            star.extend(first[g].iter().copied());
            for (i, c) in scope.cols.iter().enumerate() {
                if aliases.contains(&c.qual) && !hidden.contains(&i) && !first[g].contains(&i) {
                    star.push(i);
                }
            }
        }
        scope.hidden = hidden;
        scope.star = Some(star);
        Ok(())
    }
}
