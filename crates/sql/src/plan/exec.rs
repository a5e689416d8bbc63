//! Running a compiled SELECT: the input rows (through the engine, or from
//! views and functions), then filters, grouping, aggregates, ordering and
//! limits.

use super::order::compare_key;
use super::{check_cancel, CacheMode, PlanCache, Producer, Run, SelectPlan, Source, CUSTOM_PLANS};
use crate::error::SqlError;
use crate::expr::{AggState, EvalEnv, Expr};
use crate::rows::ResultRows;
use crate::value::{Datum, SqlType};
use crate::views::{self};
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use turnstile_engine::types::{ColumnType, ValueRef};
use turnstile_lock::SqlState;

impl SelectPlan {
    /// Input rows (after the residual filter).
    pub fn input(&self, run: &mut Run<'_>) -> Result<Vec<Vec<Datum>>, SqlError> {
        let rows = match &self.source {
            Source::One => vec![Vec::new()],
            Source::Engine { query, pushed, cache } => {
                let mut rows = Vec::new();
                engine_rows(run, query, pushed, cache, |r| {
                    rows.push(r.iter().map(|v| Datum::from_engine_owned(v.to_owned_value())).collect())
                })?;
                rows
            }
            Source::Rows(items) => {
                let mut rows: Vec<Vec<Datum>> = vec![Vec::new()];
                for item in items {
                    let produced = match &item.producer {
                        Producer::View(v) => {
                            let session = run.env.session.as_deref_mut().ok_or_else(super::no_session)?;
                            views::rows(*v, session, run.env.services)?
                        }
                        Producer::Table { query, pushed } => {
                            let mut eparams = Vec::with_capacity(pushed.len());
                            for (x, ty) in pushed {
                                eparams.push(x.eval(&[], &mut run.env)?.to_engine(*ty)?);
                            }
                            let out = run.session()?.query(query, &eparams)?;
                            out.into_iter().map(|r| r.into_iter().map(Datum::from_engine_owned).collect()).collect()
                        }
                        Producer::Query(plan) => plan.run_values(&mut run.nested())?,
                        Producer::SetOp(plan) => plan.rows(run)?,
                        Producer::Function(f, arg, ordinality) => {
                            let v = arg.eval(&[], &mut run.env)?;
                            let mut rows = f.rows(v, &mut run.env)?;
                            if *ordinality {
                                rows.iter_mut().zip(1..).for_each(|(r, n)| r.push(Datum::Int(n)));
                            }
                            rows
                        }
                        Producer::Dml(d) => d.rows(run)?,
                        Producer::Recursive(r) => r.rows(run)?,
                        Producer::WorkTable(w) => w.rows(),
                        Producer::WithDml { body, ctes } => super::dml_cte::run_with_dml(body, ctes, run)?,
                        Producer::Series(a, b, step) => {
                            let (start, stop, step) = series_bounds(a, b, step.as_ref(), &mut run.env)?;
                            let mut v = Vec::new();
                            let mut i = start;
                            while (step > 0 && i <= stop) || (step < 0 && i >= stop) {
                                v.push(vec![Datum::Int(i)]);
                                if v.len() % 65536 == 0 {
                                    check_cancel(run.env.services)?;
                                }
                                i = match i.checked_add(step) {
                                    Some(n) => n,
                                    None => break,
                                };
                            }
                            v
                        }
                    };
                    rows = super::nested_loop::join_step(rows, &produced, item, &mut run.env)?;
                }
                rows
            }
        };
        match &self.residual {
            None => Ok(rows),
            Some(r) => {
                let mut out = Vec::with_capacity(rows.len());
                for row in rows {
                    if r.test(&row, &mut run.env)? {
                        out.push(row);
                    }
                }
                Ok(out)
            }
        }
    }

    /// Runs the query into result rows, column `i` in the binary format
    /// if `binary[i]` (else text). A query that only picks columns of the
    /// engine's rows (no residual filter, grouping, `DISTINCT`, ordering or
    /// limits) writes each value straight from the executor's stored rows
    /// into `out`: nothing is allocated per value. Any other query runs as
    /// [`SelectPlan::run`] does, its values formatted (or `send`) after.
    pub fn run_rows(&self, run: &mut Run<'_>, binary: Vec<bool>) -> Result<ResultRows, SqlError> {
        let columns: Option<Vec<usize>> = self
            .outputs
            .iter()
            .map(|o| match o {
                Expr::Col(c) => Some(*c),
                _ => None,
            })
            .collect();
        match (&self.source, columns) {
            (Source::Engine { query, pushed, cache }, Some(columns))
                if self.residual.is_none()
                    && !self.grouped
                    && self.windows.is_empty()
                    && !self.distinct
                    && self.order.is_empty()
                    && self.limit.is_none()
                    && self.offset.is_none()
                    && columns.len() == self.fields.len() =>
            {
                let mut out = ResultRows::with_capacity(columns.len(), 1, 64 * columns.len(), binary);
                let mut failed = None;
                engine_rows(run, query, pushed, cache, |row| {
                    for (&c, &ty) in columns.iter().zip(&self.out_types) {
                        if let Err(e) = out.push_ref(row.get(c).copied().unwrap_or(ValueRef::Null), ty) {
                            failed.get_or_insert(e);
                        }
                    }
                    out.end_row();
                })?;
                failed.map_or(Ok(out), Err)
            }
            _ => {
                let rows = self.run(run)?;
                let mut out = ResultRows::with_capacity(self.fields.len(), rows.len(), 0, binary);
                for r in &rows {
                    out.push_datums(r, &self.out_types)?;
                }
                Ok(out)
            }
        }
    }

    /// Runs the query: output rows (visible columns only), typed values.
    pub fn run(&self, run: &mut Run<'_>) -> Result<Vec<Vec<Datum>>, SqlError> {
        let mut out = self.run_values(run)?;
        // `regclass` and its kin leave as names (their output function).
        crate::catalog::reg::render_rows(&mut out, &self.out_types, &*run.env.services)?;
        Ok(out)
    }

    /// The rows as values, for a query nested in another (a subquery, a
    /// set operation's branch): a `regclass` stays an OID there, compared
    /// and joined as one.
    pub fn run_values(&self, run: &mut Run<'_>) -> Result<Vec<Vec<Datum>>, SqlError> {
        let mut input = self.input(run)?;
        super::window::add_window_columns(&self.windows, &mut input, &mut run.env)?;
        let mut out = if self.grouped { self.aggregate(&input, run)? } else { self.project(input, run)? };
        if self.distinct {
            let mut seen = HashSet::new();
            out.retain(|r| seen.insert(r[..self.fields.len()].to_vec()));
        }
        if !self.order.is_empty() {
            out.sort_by(|a, b| self.compare(a, b));
        }
        let offset = match &self.offset {
            Some(o) => count_arg(o, &mut run.env, "OFFSET")?,
            None => 0,
        };
        let limit = match &self.limit {
            Some(l) => Some(count_arg(l, &mut run.env, "LIMIT")?),
            None => None,
        };
        if offset > 0 || limit.is_some() {
            out = out.into_iter().skip(offset).take(limit.unwrap_or(usize::MAX)).collect();
        }
        let visible = self.fields.len();
        if self.outputs.len() > visible {
            for r in &mut out {
                r.truncate(visible);
            }
        }
        Ok(out)
    }

    /// A grouped query's rows: the input grouped by the GROUP BY keys (in
    /// first-seen order), each group's aggregates computed, HAVING applied,
    /// and the outputs evaluated over a representative row of the group.
    /// With no GROUP BY, one group even when the input is empty.
    fn aggregate(&self, input: &[Vec<Datum>], run: &mut Run<'_>) -> Result<Vec<Vec<Datum>>, SqlError> {
        let mut groups: Vec<(Vec<Datum>, Vec<AggState>)> = Vec::new();
        let mut index: HashMap<Vec<Datum>, usize> = HashMap::new();
        let mut reps: Vec<Vec<Datum>> = Vec::new();
        for row in input {
            let mut key = Vec::with_capacity(self.group_by.len());
            for g in &self.group_by {
                key.push(g.eval(row, &mut run.env)?);
            }
            let gi = match index.get(&key) {
                Some(&i) => i,
                None => {
                    groups.push((key.clone(), self.aggs.iter().map(AggState::new).collect()));
                    reps.push(row.clone());
                    index.insert(key, groups.len() - 1);
                    groups.len() - 1
                }
            };
            for (state, spec) in groups[gi].1.iter_mut().zip(&self.aggs) {
                state.add(spec, row, &mut run.env)?;
            }
        }
        if groups.is_empty() && self.group_by.is_empty() {
            groups.push((Vec::new(), self.aggs.iter().map(AggState::new).collect()));
            reps.push(vec![Datum::Null; self.scope.cols.len()]);
        }
        let mut out = Vec::with_capacity(groups.len());
        for ((_, states), rep) in groups.iter().zip(&reps) {
            let results =
                states.iter().zip(&self.aggs).map(|(s, spec)| s.finish(spec)).collect::<Result<Vec<_>, _>>()?;
            let mut env = EvalEnv {
                params: run.env.params,
                aggs: &results,
                services: &mut *run.env.services,
                outer: run.env.outer,
                session: run.env.session.as_deref_mut(),
            };
            if let Some(h) = &self.having {
                if !h.test(rep, &mut env)? {
                    continue;
                }
            }
            let mut row = Vec::with_capacity(self.outputs.len());
            for o in &self.outputs {
                row.push(o.eval(rep, &mut env)?);
            }
            out.push(row);
        }
        Ok(out)
    }

    /// An ungrouped query's rows: the outputs evaluated over each input
    /// row. `SELECT *` keeps the input rows as they are.
    fn project(&self, input: Vec<Vec<Datum>>, run: &mut Run<'_>) -> Result<Vec<Vec<Datum>>, SqlError> {
        let identity = self.outputs.len() == self.scope.cols.len()
            && self.outputs.iter().enumerate().all(|(i, o)| matches!(o, Expr::Col(c) if *c == i));
        if identity {
            return Ok(input);
        }
        let mut out = Vec::with_capacity(input.len());
        if super::select_srf::has_unnest(&self.outputs) {
            for row in &input {
                out.extend(super::select_srf::expand(&self.outputs, row, &mut run.env)?);
            }
            return Ok(out);
        }
        for row in &input {
            let mut o = Vec::with_capacity(self.outputs.len());
            for x in &self.outputs {
                o.push(x.eval(row, &mut run.env)?);
            }
            out.push(o);
        }
        Ok(out)
    }

    /// ORDER BY's order of two output rows: key by key, each ascending or
    /// descending, NULLs first or last as the key says.
    fn compare(&self, a: &[Datum], b: &[Datum]) -> std::cmp::Ordering {
        use std::cmp::Ordering;
        for &(i, desc, nulls_first) in &self.order {
            let o = compare_key(&a[i], &b[i], desc, nulls_first);
            if o.is_ne() {
                return o;
            }
        }
        Ordering::Equal
    }
}

/// Runs the engine query of a [`Source::Engine`], calling `emit` with each
/// row (every column of every table): through the cached generic plan
/// once the plan cache chooses it, with values borrowed from the
/// execution's memory; through a custom plan otherwise.
fn engine_rows(
    run: &mut Run<'_>,
    query: &turnstile_engine::query::Query,
    pushed: &[(Expr, ColumnType)],
    cache: &Mutex<PlanCache>,
    mut emit: impl FnMut(&[ValueRef<'_>]),
) -> Result<(), SqlError> {
    let mut eparams = Vec::with_capacity(pushed.len());
    for (x, ty) in pushed {
        eparams.push(x.eval(&[], &mut run.env)?.to_engine(*ty)?);
    }
    let mut cache = cache.lock().map_err(|_| SqlError::new(SqlState::INTERNAL_ERROR, "plan cache poisoned"))?;
    cache.runs = cache.runs.saturating_add(1);
    let generic = !run.one_shot
        && match run.cache_mode {
            CacheMode::ForceGeneric => true,
            CacheMode::ForceCustom => false,
            CacheMode::Auto => cache.runs > CUSTOM_PLANS,
        };
    if !generic {
        drop(cache);
        let rows = run.session()?.query(query, &eparams)?;
        let mut refs = Vec::new();
        for r in &rows {
            refs.clear();
            refs.extend(r.iter().map(turnstile_engine::types::Value::as_value_ref));
            emit(&refs);
        }
        return Ok(());
    }
    if cache.prepared.is_none() {
        cache.prepared = Some(run.session()?.prepare(query)?);
    }
    if let Some(p) = cache.prepared.as_mut() {
        run.session()?.execute_each(p, &eparams, emit)?;
    }
    Ok(())
}

/// A `LIMIT`/`OFFSET` count (NULL: no limit, nothing skipped); negative is
/// PostgreSQL's `2201W` (LIMIT) or `2201X` (OFFSET).
pub(crate) fn count_arg(e: &Expr, env: &mut EvalEnv<'_>, what: &str) -> Result<usize, SqlError> {
    match e.eval(&[], env)? {
        // NULL is no LIMIT and no OFFSET alike: all rows, none skipped.
        Datum::Null => Ok(if what == "OFFSET" { 0 } else { usize::MAX }),
        d => match d.cast(SqlType::Int8)? {
            Datum::Int(n) if n >= 0 => Ok(n as usize),
            _ => {
                // PostgreSQL's two conditions: 2201W for LIMIT, 2201X for OFFSET.
                let state = if what == "OFFSET" {
                    SqlState::INVALID_ROW_COUNT_IN_RESULT_OFFSET_CLAUSE
                } else {
                    SqlState::INVALID_ROW_COUNT_IN_LIMIT_CLAUSE
                };
                Err(SqlError::new(state, format!("{what} must not be negative")))
            }
        },
    }
}

pub(super) fn series_bounds(
    a: &Expr,
    b: &Expr,
    step: Option<&Expr>,
    env: &mut EvalEnv<'_>,
) -> Result<(i64, i64, i64), SqlError> {
    let int = |d: Datum| -> Result<i64, SqlError> {
        match d.cast(SqlType::Int8)? {
            Datum::Int(v) => Ok(v),
            _ => Err(SqlError::new(SqlState::NULL_VALUE_NOT_ALLOWED, "generate_series argument is NULL")),
        }
    };
    let start = int(a.eval(&[], env)?)?;
    let stop = int(b.eval(&[], env)?)?;
    let step = match step {
        Some(s) => int(s.eval(&[], env)?)?,
        None => 1,
    };
    if step == 0 {
        return Err(SqlError::new(SqlState::INVALID_PARAMETER_VALUE, "step size cannot equal zero"));
    }
    Ok((start, stop, step))
}
