//! Window functions (PostgreSQL's `WindowAgg`): `row_number()`, `rank()`,
//! `dense_rank()` and the aggregates (`count`, `sum`, `min`, …) called
//! with `OVER (PARTITION BY … ORDER BY …)` in the select list or ORDER BY
//! of an ungrouped query, as pgjdbc's `getColumns` sends
//! (`row_number() OVER (PARTITION BY a.attrelid ORDER BY a.attnum)`).
//!
//! Planning ([`plan_windows`]) happens after FROM is bound, as for
//! subqueries: each distinct call becomes a column appended to the
//! level's scope (hidden from names and `*`) and is recorded in
//! [`Scope::windows`], where the expression compiler finds it by its
//! parsed text and reads that column. Running ([`add_window_columns`])
//! sorts the input rows' indexes by (partition keys, order keys), walks
//! each partition in that order and appends each call's value to every
//! row, leaving the rows in their input order.
//!
//! The frame is PostgreSQL's default: with an ORDER BY, from the
//! partition's start through the current row's last peer (`RANGE
//! BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW`), so an aggregate is a
//! running one and peers share its value; without one, the whole
//! partition. An explicit frame, a named window and window functions in
//! a grouped query are `0A000`; a window call anywhere else (WHERE, a
//! window's own keys) is `42P20`, as in PostgreSQL.
//!
//! ```
//! use turnstile_sql::plan::WindowFunc;
//! assert_eq!(WindowFunc::named("row_number"), Some(WindowFunc::RowNumber));
//! assert_eq!(WindowFunc::named("dense_rank"), Some(WindowFunc::DenseRank));
//! assert_eq!(WindowFunc::named("lower"), None);
//! ```

use super::{compiler, walk};
use crate::error::SqlError;
use crate::expr::{object_name, AggSpec, AggState, EvalEnv, Expr, Scope, ScopeCol};
use crate::value::{compare_key, Datum, SqlType};
use sqlparser::ast;
use std::cmp::Ordering;
use turnstile_lock::SqlState;

/// A ranking function, or an aggregate used as a window function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowFunc {
    /// `row_number()`: the row's position in its partition, from 1.
    RowNumber,
    /// `rank()`: 1 + the rows before the row's first peer.
    Rank,
    /// `dense_rank()`: the number of peer groups up to the row's.
    DenseRank,
    /// An aggregate over the frame.
    Aggregate,
}

impl WindowFunc {
    /// The ranking function `name` (unqualified, lower case).
    pub fn named(name: &str) -> Option<WindowFunc> {
        match name {
            "row_number" => Some(WindowFunc::RowNumber),
            "rank" => Some(WindowFunc::Rank),
            "dense_rank" => Some(WindowFunc::DenseRank),
            _ => None,
        }
    }
}

/// One window function call of a query level.
#[derive(Debug)]
pub struct WindowPlan {
    /// What it computes.
    pub func: WindowFunc,
    /// An aggregate's specification and the expression that reads its
    /// result (as [`Expr::Agg`]`(0)`).
    pub agg: Option<(AggSpec, Expr)>,
    /// `PARTITION BY` keys.
    pub partition: Vec<Expr>,
    /// `ORDER BY` keys: key, descending, NULLs first.
    pub order: Vec<(Expr, bool, bool)>,
}

/// Plans the window calls of `exprs` (the select list and ORDER BY of an
/// ungrouped level): each one's keys and arguments compiled over `scope`,
/// then a column appended to `scope` for its value.
pub(super) fn plan_windows<'e>(
    exprs: impl Iterator<Item = &'e ast::Expr>,
    scope: &mut Scope,
    params: &mut Vec<SqlType>,
) -> Result<Vec<WindowPlan>, SqlError> {
    let mut calls: Vec<&ast::Function> = Vec::new();
    for e in exprs {
        walk::walk(e, &mut |x| match x {
            ast::Expr::Function(f) if f.over.is_some() => {
                if !calls.contains(&f) {
                    calls.push(f);
                }
                false
            }
            _ => true,
        });
    }
    let mut plans = Vec::with_capacity(calls.len());
    let mut added = Vec::with_capacity(calls.len());
    for f in calls {
        let (plan, ty) = plan_one(f, scope, params)?;
        plans.push(plan);
        added.push((f.clone(), ty));
    }
    for (f, ty) in added {
        let col = scope.cols.len();
        scope.cols.push(ScopeCol { qual: String::new(), name: String::new(), ty, table_oid: 0, attnum: 0 });
        scope.hidden.push(col);
        scope.system.push(col);
        scope.windows.push((f, col));
    }
    Ok(plans)
}

/// One call's plan and result type.
fn plan_one(f: &ast::Function, scope: &Scope, params: &mut Vec<SqlType>) -> Result<(WindowPlan, SqlType), SqlError> {
    let spec = match &f.over {
        Some(ast::WindowType::WindowSpec(s)) => s,
        _ => return Err(SqlError::unsupported("named windows")),
    };
    if spec.window_name.is_some() {
        return Err(SqlError::unsupported("named windows"));
    }
    if spec.window_frame.is_some() {
        return Err(SqlError::unsupported("a window frame clause"));
    }
    let name = object_name(&f.name)?;
    let mut c = compiler(scope, params, None);
    let partition = spec.partition_by.iter().map(|p| Ok(c.compile(p, None)?.0)).collect::<Result<_, SqlError>>()?;
    let mut order = Vec::with_capacity(spec.order_by.len());
    for o in &spec.order_by {
        let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
        order.push((c.compile(&o.expr, None)?.0, desc, o.options.nulls_first.unwrap_or(desc)));
    }
    let bare = ast::Function { over: None, ..f.clone() };
    let (func, agg, ty) = match WindowFunc::named(&name) {
        Some(func) => {
            if !matches!(&f.args, ast::FunctionArguments::List(l) if l.args.is_empty())
                && !matches!(f.args, ast::FunctionArguments::None)
            {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!("function {name} with arguments does not exist"),
                ));
            }
            (func, None, SqlType::Int8)
        }
        None => {
            let mut aggs = Vec::new();
            let (x, ty) = compiler(scope, params, Some(&mut aggs)).compile(&ast::Expr::Function(bare), None)?;
            match <[AggSpec; 1]>::try_from(aggs) {
                Ok([spec]) => (WindowFunc::Aggregate, Some((spec, x)), ty),
                Err(_) => {
                    return Err(SqlError::new(
                        SqlState::WRONG_OBJECT_TYPE,
                        format!("OVER specified, but {name} is not a window function nor an aggregate function"),
                    ))
                }
            }
        }
    };
    Ok((WindowPlan { func, agg, partition, order }, ty))
}

/// Appends each window call's value to every row (see the module header).
pub(super) fn add_window_columns(
    windows: &[WindowPlan],
    rows: &mut [Vec<Datum>],
    env: &mut EvalEnv<'_>,
) -> Result<(), SqlError> {
    for w in windows {
        let values = w.values(rows, env)?;
        for (row, v) in rows.iter_mut().zip(values) {
            row.push(v);
        }
    }
    Ok(())
}

impl WindowPlan {
    /// This call's value for each row, in row order.
    fn values(&self, rows: &[Vec<Datum>], env: &mut EvalEnv<'_>) -> Result<Vec<Datum>, SqlError> {
        let mut keys = Vec::with_capacity(rows.len());
        for row in rows.iter() {
            let p = self.partition.iter().map(|x| x.eval(row, env)).collect::<Result<Vec<_>, _>>()?;
            let o = self.order.iter().map(|(x, _, _)| x.eval(row, env)).collect::<Result<Vec<_>, _>>()?;
            keys.push((p, o));
        }
        let mut idx: Vec<usize> = (0..rows.len()).collect();
        idx.sort_by(|&a, &b| {
            let (pa, oa) = &keys[a];
            let (pb, ob) = &keys[b];
            let part = pa.iter().zip(pb).map(|(x, y)| compare_key(x, y, false, false)).find(|o| o.is_ne());
            part.unwrap_or_else(|| self.order_cmp(oa, ob))
        });
        let mut out = vec![Datum::Null; rows.len()];
        let mut start = 0;
        while start < idx.len() {
            let first = &keys[idx[start]].0;
            let len = idx[start..].iter().take_while(|&&i| same_keys(&keys[i].0, first)).count();
            self.partition_values(&idx[start..start + len], rows, &keys, &mut out, env)?;
            start += len;
        }
        Ok(out)
    }

    /// Two rows' order keys compared as the window's ORDER BY says.
    fn order_cmp(&self, a: &[Datum], b: &[Datum]) -> Ordering {
        let mut pairs = a.iter().zip(b).zip(&self.order);
        pairs.find_map(|((x, y), k)| Some(compare_key(x, y, k.1, k.2)).filter(|o| o.is_ne())).unwrap_or(Ordering::Equal)
    }

    /// The values of one partition's rows (`part`: their indexes, sorted).
    fn partition_values(
        &self,
        part: &[usize],
        rows: &[Vec<Datum>],
        keys: &[(Vec<Datum>, Vec<Datum>)],
        out: &mut [Datum],
        env: &mut EvalEnv<'_>,
    ) -> Result<(), SqlError> {
        let mut state = self.agg.as_ref().map(|(spec, _)| AggState::new(spec));
        let (mut peer_groups, mut k) = (0i64, 0usize);
        while k < part.len() {
            // The current row's peers: equal order keys (every row when
            // there is no ORDER BY).
            let peers = part[k..].iter().take_while(|&&i| self.order_cmp(&keys[i].1, &keys[part[k]].1).is_eq()).count();
            peer_groups += 1;
            let frame_value = match (&mut state, &self.agg) {
                (Some(state), Some((spec, result))) => {
                    // The frame grows by the current peer group (the whole
                    // partition at once without an ORDER BY).
                    for &i in &part[k..k + peers] {
                        state.add(spec, &rows[i], env)?;
                    }
                    let finished = [state.finish(spec)?];
                    let mut agg_env = EvalEnv {
                        params: env.params,
                        aggs: &finished,
                        services: &mut *env.services,
                        outer: env.outer,
                        session: env.session.as_deref_mut(),
                    };
                    Some(result.eval(&rows[part[k]], &mut agg_env)?)
                }
                _ => None,
            };
            for (j, &i) in part[k..k + peers].iter().enumerate() {
                out[i] = match self.func {
                    WindowFunc::RowNumber => Datum::Int((k + j + 1) as i64),
                    WindowFunc::Rank => Datum::Int((k + 1) as i64),
                    WindowFunc::DenseRank => Datum::Int(peer_groups),
                    WindowFunc::Aggregate => frame_value.clone().unwrap_or(Datum::Null),
                };
            }
            k += peers;
        }
        Ok(())
    }
}

/// Partition keys are equal for grouping when each pair is equal or both
/// are NULL (NULLs form one partition, as in PostgreSQL).
fn same_keys(a: &[Datum], b: &[Datum]) -> bool {
    a.iter().zip(b).all(|(x, y)| compare_key(x, y, false, false).is_eq())
}
