//! The column defaults `ON DELETE/UPDATE SET DEFAULT` writes: each
//! column's DEFAULT expression (NULL when it has none), evaluated once per
//! action, in the statement's evaluation environment (so a `nextval`
//! default takes a value as an INSERT's would).

use crate::error::SqlError;
use crate::expr::{Compiler, Scope};
use crate::plan::Run;
use crate::value::SqlType;
use turnstile_engine::catalog::Relation;
use turnstile_engine::types::Value;

/// The defaults of `table`'s columns `columns`, as the columns store them.
pub fn column_defaults(run: &mut Run<'_>, table: &Relation, columns: &[usize]) -> Result<Vec<Value>, SqlError> {
    let mut out = Vec::with_capacity(columns.len());
    for &c in columns {
        let col = &table.columns[c];
        let Some(text) = &col.default else {
            out.push(Value::Null);
            continue;
        };
        let ty = SqlType::of_column(col.ty);
        let e = crate::parse::parse_expr(text)?;
        let (x, _) =
            Compiler { scope: &Scope::default(), params: &mut Vec::new(), aggs: None }.compile(&e, Some(ty))?;
        out.push(x.eval(&[], &mut run.env)?.cast(ty)?.to_engine(col.ty)?);
    }
    Ok(out)
}
