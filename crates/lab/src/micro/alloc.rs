//! `turnstile micro alloc`: allocator calls per execution of each seed
//! query, in process, under both profiles (Vondra 2024: per-query
//! allocations going to glibc and back are the wall after the lock
//! manager).
//!
//! Each point builds its tables through the engine (the definitions in
//! `crate::workload`), opens a SQL session as `turnstile serve` does, and
//! prepares the workload's query with `$1`, as `pgbench -M prepared` does.
//! After warm-up executions (past the switch to the generic plan) it
//! executes the statement `--executions` times, reading this thread's
//! allocator counts ([`turnstile_sync::alloc_count`], the binary's
//! counting global allocator) before and after: what one execution costs
//! the allocator, from binding the parameter to the result rows in their
//! protocol form. It is a count, not a time, so it is exact and does not
//! depend on the machine's load.
//!
//! The figure must not grow with rows scanned: W2 at 100 dimensions
//! (100 rows each) is within a small constant of W2 at 1 dimension.

use crate::cli::CliError;
use crate::report::{f, Section, Table};
use crate::workload::engine as calls;
use crate::workload::{Dataset, InProcessForm, Index, Key, Lookup, Sizes, Table as Schema, WorkloadId};
use serde::Serialize;
use serde_json::json;
use turnstile_sql::{Outcome, Param, SqlEngine, SqlSession};
use turnstile_sync::alloc_count::{installed, thread_counts};
use turnstile_sync::{Config, Profile};

/// Options of `turnstile micro alloc`.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// `--json`.
    #[command(flatten)]
    pub output: super::Output,
    /// Executions counted per point (after 20 for warm-up).
    #[arg(long, default_value_t = 200)]
    pub executions: u32,
    /// Only these workloads (default: every lookup workload, `W1,W2,W3,W5`).
    #[arg(long, value_delimiter = ',', default_values_t = Args::all())]
    pub workloads: Vec<String>,
}

impl Args {
    /// The short run `turnstile reproduce` uses.
    pub fn reproduce() -> Args {
        Args { output: super::Output::default(), executions: 50, workloads: Args::all() }
    }

    /// Every workload whose clients look a row up.
    fn all() -> Vec<String> {
        WorkloadId::all()
            .iter()
            .filter(|w| matches!(w.definition().in_process, InProcessForm::Lookup { .. }))
            .map(|w| w.name().to_owned())
            .collect()
    }
}

/// One workload point: what to build and what to run.
pub struct Point {
    /// `W1`…
    pub workload: &'static str,
    /// The swept parameter, as `turnstile compare` names it.
    pub params: serde_json::Value,
    tables: Vec<Schema>,
    indexes: Vec<Index>,
    lookup: Lookup,
    /// `$1` of the `i`-th execution.
    param: Box<dyn Fn(u32) -> i64>,
}

/// The points of `workload`, at in-process sizes: its data set at each
/// value of its sweep's `alloc` list (one point without a sweep, reported
/// by its scale).
pub fn points(workload: &str) -> Result<Vec<Point>, CliError> {
    let unknown = || format!("micro alloc: unknown workload {workload:?} ({})", Args::all().join(", "));
    let id = WorkloadId::named(workload).ok_or_else(unknown)?;
    let definition = id.definition();
    let InProcessForm::Lookup { dataset, .. } = definition.in_process else { return Err(unknown().into()) };
    let sizes = Sizes::IN_PROCESS;
    let values: Vec<(u32, serde_json::Value)> = match definition.sweep {
        Some(sweep) => sweep.alloc.iter().map(|&v| (v, json!({ sweep.param.key(): v }))).collect(),
        None => vec![(0, json!({ "scale": sizes.scale }))],
    };
    Ok(values
        .into_iter()
        .map(|(v, params)| {
            let Dataset { tables, indexes, lookup, key } = dataset(v, sizes);
            let param: Box<dyn Fn(u32) -> i64> = match key {
                Key::Random(n) => Box::new(move |i: u32| i64::from((i.wrapping_mul(7919)) % n.max(1)) + 1),
                Key::Fixed(value) => Box::new(move |_| i64::from(value)),
            };
            Point { workload: definition.name, params, tables, indexes, lookup, param }
        })
        .collect())
}

/// One point's figures.
#[derive(Serialize, Debug, Clone)]
pub struct Measured {
    /// `W1`…
    pub workload: &'static str,
    /// The swept parameter.
    pub params: serde_json::Value,
    /// `classic` or `scalable`.
    pub profile: &'static str,
    /// `malloc`/`realloc` calls per execution.
    pub allocs_per_execution: f64,
    /// `free` calls per execution.
    pub frees_per_execution: f64,
    /// Rows each execution returned.
    pub rows: usize,
    /// Executions counted.
    pub executions: u32,
}

/// Builds `point` under `profile` and counts `executions` executions.
pub fn measure(point: &Point, profile: Profile, executions: u32) -> Result<Measured, CliError> {
    let dir = tempfile::tempdir()?;
    let engine = SqlEngine::open(dir.path(), Config::preset(profile))?;
    {
        let e = engine.engine();
        let mut s = e.session()?;
        e.catalog().defer_writes(true)?;
        calls::load(&mut s, &point.tables, &point.indexes)?;
        e.catalog().defer_writes(false)?;
    }
    let mut session = SqlSession::connect(&engine, "postgres", "postgres", "turnstile micro alloc", None)?;
    let stmt = session.prepare(&point.lookup.sql("$1"), &[])?;
    let mut rows = 0;
    // The parameters are formatted before the count starts: a client
    // sends them, the server only reads them.
    let params: Vec<[Param; 1]> = (0..20 + executions).map(|i| [Param::text((point.param)(i).to_string())]).collect();
    let mut run = |session: &mut SqlSession, i: u32| -> Result<(), CliError> {
        let out = session.execute(&stmt, &params[i as usize])?;
        if let Outcome::Rows { rows: r, .. } = out {
            rows = r.len();
        }
        Ok(())
    };
    for i in 0..20 {
        run(&mut session, i)?;
    }
    let before = thread_counts();
    for i in 0..executions {
        run(&mut session, 20 + i)?;
    }
    let calls = thread_counts().since(before);
    let n = f64::from(executions.max(1));
    Ok(Measured {
        workload: point.workload,
        params: point.params.clone(),
        profile: profile.name(),
        allocs_per_execution: calls.allocations as f64 / n,
        frees_per_execution: calls.frees as f64 / n,
        rows,
        executions,
    })
}

/// Runs the benchmark.
pub fn run(args: &Args) -> Result<Section, CliError> {
    if !installed() {
        return Err("micro alloc: the counting allocator is not installed in this binary".into());
    }
    if args.executions == 0 {
        return Err("micro alloc: --executions must be positive".into());
    }
    let mut results = Vec::new();
    for w in &args.workloads {
        for point in points(w)? {
            for profile in [Profile::Classic, Profile::Scalable] {
                results.push(measure(&point, profile, args.executions)?);
            }
        }
    }
    let json = json!({ "bench": "alloc", "results": results });
    Ok(Section { json, text: render(&results) })
}

fn render(rows: &[Measured]) -> String {
    let mut t = Table::new(
        "Allocator calls per execution (Vondra 2024): each seed query prepared, in process, one session",
        &["workload", "params", "profile", "rows", "allocs/exec", "frees/exec"],
    );
    for r in rows {
        t.row(vec![
            r.workload.to_owned(),
            r.params.to_string(),
            r.profile.to_owned(),
            r.rows.to_string(),
            f(r.allocs_per_execution, 1),
            f(r.frees_per_execution, 1),
        ]);
    }
    t.render()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The count does not grow with rows scanned: W2 at 100 dimensions
    /// (100 rows each, ten thousand rows hashed) makes no more allocator
    /// calls per execution than W2 at 1 dimension, within a small constant.
    #[test]
    fn w2_allocations_do_not_grow_with_dimensions() {
        assert!(installed(), "the test binary counts through the crate's global allocator");
        let points = points("W2").unwrap();
        let measured: Vec<_> = [Profile::Classic, Profile::Scalable]
            .into_iter()
            .map(|profile| {
                let one = measure(&points[0], profile, 20).unwrap();
                let hundred = measure(&points[2], profile, 20).unwrap();
                eprintln!(
                    "{profile:?}: {} at 1 dimension, {} at 100",
                    one.allocs_per_execution, hundred.allocs_per_execution
                );
                (profile, one, hundred)
            })
            .collect();
        for (profile, one, hundred) in measured {
            assert_eq!((one.rows, hundred.rows), (1, 1));
            assert!(one.allocs_per_execution > 0.0, "{one:?}");
            assert!(
                hundred.allocs_per_execution <= one.allocs_per_execution + 32.0,
                "{profile:?}: {} allocator calls per execution at 1 dimension, {} at 100",
                one.allocs_per_execution,
                hundred.allocs_per_execution
            );
        }
    }
}
