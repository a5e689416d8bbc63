//! Running the advisory-lock functions (`pg_advisory_lock` and its
//! family) on the engine's advisory tags. Recognising a call is in
//! `advisory.rs`, which the statement classifier uses too; this file is
//! the session's side.

use crate::advisory::{compile_args, no_such_function, Call, Op};
use crate::error::{Severity, SqlError};
use crate::expr::EvalEnv;
use crate::result_format::{binary_columns, utility_in_formats};
use crate::session::SqlSession;
use crate::statement::{FieldInfo, Outcome};
use crate::value::{Datum, SqlType};
use sqlparser::ast;
use turnstile_engine::advisory::AdvisoryKey;
use turnstile_lock::SqlState;

/// The result column of `call`.
pub(crate) fn result_field(call: &Call) -> FieldInfo {
    let (type_oid, type_len) = if call.returns_void() { (2278, 4) } else { (SqlType::Bool.oid(), 1) };
    FieldInfo { name: call.column.clone(), table_oid: 0, column: 0, type_oid, type_len, type_modifier: -1 }
}

impl SqlSession {
    /// Runs one advisory-lock call, its result in the result formats
    /// `formats` (a binary column its type cannot send is refused, `42883`,
    /// before the call runs).
    pub(crate) fn run_advisory(
        &mut self,
        call: &Call,
        args: &[ast::Expr],
        values: &[Datum],
        formats: &[i16],
    ) -> Result<Outcome, SqlError> {
        binary_columns(formats, &[result_field(call)])?;
        utility_in_formats(self.advisory_call(call, args, values)?, formats)
    }

    /// Runs one advisory-lock call, its result in text.
    fn advisory_call(&mut self, call: &Call, args: &[ast::Expr], values: &[Datum]) -> Result<Outcome, SqlError> {
        let mut ptypes = values.iter().map(|_| SqlType::Unknown).collect();
        let exprs = compile_args(args, &mut ptypes)?;
        let mut keys = Vec::with_capacity(exprs.len());
        for x in &exprs {
            let d = x.eval(
                &[],
                &mut EvalEnv { params: values, aggs: &[], services: &mut self.ctx, outer: &[], session: None },
            )?;
            keys.push(match d {
                Datum::Int(v) => v,
                // A NULL key: the function is strict, its result NULL.
                _ => return Ok(self.advisory_row(call, None)),
            });
        }
        let key = match keys.as_slice() {
            [] => None,
            [k] => Some(AdvisoryKey::Int8(*k)),
            [a, b] => Some(AdvisoryKey::Int4Pair(*a as i32, *b as i32)),
            _ => return Err(no_such_function(call, keys.len())),
        };
        let out = match (call.op, key) {
            (Op::UnlockAll, _) => {
                self.es.advisory_unlock_all()?;
                None
            }
            (Op::Lock { level, wait }, Some(k)) => {
                let got = self.es.advisory_lock(k, call.shared, level, wait)?;
                (!wait).then_some(got)
            }
            (Op::Unlock, Some(k)) => {
                let released = self.es.advisory_unlock(k, call.shared)?;
                if !released {
                    let mode = if call.shared { "ShareLock" } else { "ExclusiveLock" };
                    self.notice(Severity::Warning, SqlState::WARNING, format!("you don't own a lock of type {mode}"));
                }
                Some(released)
            }
            (Op::Lock { .. } | Op::Unlock, None) => return Err(no_such_function(call, 0)),
        };
        Ok(self.advisory_row(call, Some(out)))
    }

    /// The one-row result: `out` is `None` for a `void` result, `Some(b)`
    /// for a boolean; an outer `None` is a NULL (a NULL key).
    fn advisory_row(&self, call: &Call, out: Option<Option<bool>>) -> Outcome {
        let value = match out {
            None => None,
            Some(None) => Some(String::new()),
            Some(Some(b)) => Some(if b { "t" } else { "f" }.to_owned()),
        };
        Outcome::Rows {
            fields: vec![result_field(call)].into(),
            rows: vec![vec![value]].into(),
            tag: "SELECT 1".into(),
        }
    }
}
