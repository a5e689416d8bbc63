//! `SELECT … FOR UPDATE | FOR NO KEY UPDATE | FOR SHARE | FOR KEY SHARE
//! [OF table] [NOWAIT | SKIP LOCKED]`: a compiled SELECT over one table,
//! run through the engine's `Session::select_locking` (PostgreSQL's
//! `LockRows` node under `Limit`).
//!
//! The engine finds the rows the snapshot sees; this layer drops those
//! the residual `WHERE` rejects and orders the rest (`ORDER BY`), the
//! engine locks them in that order until `OFFSET + LIMIT` rows are locked
//! — so `SKIP LOCKED … LIMIT 1` returns the first row nobody holds, as in
//! PostgreSQL — re-checking here (`recheck`) a row that changed while it
//! waited (`READ COMMITTED`'s EvalPlanQual). The output expressions are
//! then computed on the locked rows' newest versions.

use crate::error::SqlError;
use crate::expr::EvalEnv;
use crate::plan::{Run, SelectPlan, Source};
use crate::value::Datum;
use std::cmp::Ordering;
use turnstile_engine::dml::LockingFilter;
use turnstile_engine::txn::RowLocking;
use turnstile_engine::types::Value;
use turnstile_engine::EngineError;
use turnstile_lock::SqlState;

/// The residual filter and sort of a plan, as the engine calls them.
struct Filter<'p, 'e, 'x> {
    plan: &'p SelectPlan,
    env: &'e mut EvalEnv<'x>,
    /// The first SQL error a callback met (the engine sees a stand-in).
    failure: Option<SqlError>,
}

impl Filter<'_, '_, '_> {
    fn keep(&mut self, e: SqlError) -> EngineError {
        self.failure.get_or_insert(e);
        EngineError::CallbackFailed
    }

    fn passes(&mut self, row: &[Datum]) -> Result<bool, SqlError> {
        match &self.plan.residual {
            Some(r) => r.test(row, self.env),
            None => Ok(true),
        }
    }

    /// The sort keys of `row` (the outputs `ORDER BY` refers to).
    fn keys(&mut self, row: &[Datum]) -> Result<Vec<Datum>, SqlError> {
        let mut keys = Vec::with_capacity(self.plan.order.len());
        for &(i, _, _) in &self.plan.order {
            keys.push(self.plan.outputs[i].eval(row, self.env)?);
        }
        Ok(keys)
    }
}

fn datums(row: &[Value]) -> Vec<Datum> {
    row.iter().map(Datum::from_engine).collect()
}

impl LockingFilter for Filter<'_, '_, '_> {
    fn order(&mut self, rows: &[Vec<Value>]) -> turnstile_engine::Result<Vec<usize>> {
        let mut kept: Vec<(usize, Vec<Datum>)> = Vec::with_capacity(rows.len());
        for (i, row) in rows.iter().enumerate() {
            let row = datums(row);
            let r = self.passes(&row).and_then(|ok| if ok { self.keys(&row).map(Some) } else { Ok(None) });
            match r {
                Ok(Some(keys)) => kept.push((i, keys)),
                Ok(None) => {}
                Err(e) => return Err(self.keep(e)),
            }
        }
        let order = &self.plan.order;
        kept.sort_by(|(_, a), (_, b)| compare(a, b, order));
        Ok(kept.into_iter().map(|(i, _)| i).collect())
    }

    fn recheck(&mut self, row: &[Value]) -> turnstile_engine::Result<bool> {
        let row = datums(row);
        self.passes(&row).map_err(|e| self.keep(e))
    }
}

/// `ORDER BY`'s comparison of two rows' sort keys (`NULLS FIRST|LAST`,
/// `DESC`), as the plain SELECT's.
fn compare(a: &[Datum], b: &[Datum], order: &[(usize, bool, bool)]) -> Ordering {
    for (k, &(_, desc, nulls_first)) in order.iter().enumerate() {
        let o = crate::plan::compare_key(&a[k], &b[k], desc, nulls_first);
        if o.is_ne() {
            return o;
        }
    }
    Ordering::Equal
}

/// Runs `plan` with its rows locked as `locking` says: the output rows.
pub(crate) fn run(plan: &SelectPlan, run: &mut Run<'_>, locking: RowLocking) -> Result<Vec<Vec<Datum>>, SqlError> {
    let clause = locking.mode.clause();
    let not_with =
        |what: &str| SqlError::new(SqlState::FEATURE_NOT_SUPPORTED, format!("{clause} is not allowed with {what}"));
    if plan.distinct {
        return Err(not_with("DISTINCT clause"));
    }
    if !plan.group_by.is_empty() {
        return Err(not_with("GROUP BY clause"));
    }
    if plan.grouped {
        return Err(not_with("aggregate functions"));
    }
    let (query, pushed) = match &plan.source {
        Source::Engine { query, pushed, .. } if query.joins().is_empty() => (query, pushed),
        Source::Engine { .. } => return Err(SqlError::unsupported(&format!("{clause} on a join"))),
        _ => return Err(SqlError::unsupported(&format!("{clause} on a query without a table"))),
    };
    let mut eparams = Vec::with_capacity(pushed.len());
    for (x, ty) in pushed {
        eparams.push(x.eval(&[], &mut run.env)?.to_engine(*ty)?);
    }
    let offset = match &plan.offset {
        Some(o) => crate::plan::count_arg(o, &mut run.env, "OFFSET")?,
        None => 0,
    };
    let limit = match &plan.limit {
        Some(l) => Some(crate::plan::count_arg(l, &mut run.env, "LIMIT")?),
        None => None,
    };
    let wanted = limit.map(|l| l.saturating_add(offset));
    let session = run.env.session.take().ok_or_else(crate::plan::no_session)?;
    let mut filter = Filter { plan, env: &mut run.env, failure: None };
    let locked = session.select_locking(query, &eparams, locking, wanted, &mut filter);
    let failure = filter.failure.take();
    run.env.session = Some(session);
    let locked = match (locked, failure) {
        (_, Some(e)) => return Err(e),
        (r, None) => r?,
    };
    let visible = plan.fields.len();
    let mut out = Vec::with_capacity(locked.len());
    for row in locked.iter().skip(offset) {
        let row = datums(row);
        let mut o = Vec::with_capacity(visible);
        for x in &plan.outputs[..visible] {
            o.push(x.eval(&row, &mut run.env)?);
        }
        out.push(o);
    }
    Ok(out)
}
