//! `EXPLAIN [ANALYZE]`: the engine's plan as text. The query arrives as
//! the parser made it (`Command::Explain`) and
//! is bound here like any SELECT; nothing is printed and parsed again.

use crate::error::SqlError;
use crate::plan;
use crate::session::SqlSession;
use crate::statement::{text_field, Outcome};
use sqlparser::ast;

impl SqlSession {
    /// `EXPLAIN [ANALYZE] query`: `query` is bound here, from its parsed
    /// form (the planning time counts the binding and the engine's plan).
    pub(crate) fn explain(&mut self, analyze: bool, query: &ast::Query) -> Result<Outcome, SqlError> {
        let started = std::time::Instant::now();
        let plan = plan::compile_select(
            &plan::Catalog { session: &self.es, sequences: &self.ctx.shared.sequences },
            query,
            &mut Vec::new(),
        )?;
        let mut lines: Vec<String> = Vec::new();
        let planning;
        match &plan.source {
            plan::Source::Engine { query, .. } => {
                let e = self.es.explain(query)?;
                planning =
                    self.es.last_planning_time() + started.elapsed().saturating_sub(self.es.last_planning_time());
                lines.extend(e.lines().map(str::to_owned));
            }
            plan::Source::One => {
                planning = started.elapsed();
                lines.push("Result".into());
            }
            plan::Source::Rows(items) => {
                planning = started.elapsed();
                for it in items {
                    lines.push(match &it.producer {
                        plan::Producer::View(v) => format!("Function Scan on {v:?} (system view)"),
                        plan::Producer::Series(..) => "Function Scan on generate_series".into(),
                        plan::Producer::Function(f, _, _) => format!("Function Scan on {}", f.name()),
                        plan::Producer::Query(_) => "Subquery Scan (turnstile-sql)".into(),
                        plan::Producer::SetOp(s) => format!("{} (turnstile-sql)", s.kind.name()),
                        plan::Producer::Recursive(_) => "Recursive Union (turnstile-sql)".into(),
                        plan::Producer::WorkTable(_) => "WorkTable Scan (turnstile-sql)".into(),
                        plan::Producer::Dml(_) => "CTE Scan (data-modifying, turnstile-sql)".into(),
                        plan::Producer::WithDml { .. } => "ModifyTable WITH (turnstile-sql)".into(),
                        plan::Producer::Table { query, .. } => {
                            format!("Seq Scan on {} (nested loop in turnstile-sql)", query.tables()[0])
                        }
                    });
                }
            }
        }
        if plan.residual.is_some() {
            lines.push("  Filter: (residual predicate evaluated by turnstile-sql)".into());
        }
        if plan.grouped {
            lines.insert(0, "Aggregate (turnstile-sql)".into());
        }
        lines.push(format!("Planning Time: {:.3} ms", planning.as_secs_f64() * 1e3));
        if analyze {
            let t = std::time::Instant::now();
            let rows = self.run_select(&plan, &[], true)?;
            lines.push(format!("Rows: {}", rows.len()));
            lines.push(format!("Execution Time: {:.3} ms", t.elapsed().as_secs_f64() * 1e3));
        }

        Ok(Outcome::Rows {
            fields: vec![text_field("QUERY PLAN")].into(),
            rows: lines.into_iter().map(|l| vec![Some(l)]).collect::<Vec<_>>().into(),
            tag: "EXPLAIN".into(),
        })
    }
}
