//! Sequence options as written: sqlparser's `CREATE SEQUENCE` options
//! turned into [`SeqOption`]s (`OWNED BY table.column` among them), and
//! `ALTER SEQUENCE`, which sqlparser does not read, read here (its options
//! other than `RESTART` as `CREATE SEQUENCE`'s).

use super::options::{SeqOption, SeqType};
use crate::error::SqlError;
use crate::expr::object_name;
use sqlparser::ast;
use turnstile_lock::SqlState;

/// An integer option's value (`INCREMENT BY -2`).
fn int_of(e: &ast::Expr, what: &str) -> Result<i64, SqlError> {
    let text = e.to_string().replace(' ', "");
    text.parse()
        .map_err(|_| SqlError::new(SqlState::SYNTAX_ERROR, format!("{what} must be an integer constant, not {text}")))
}

/// `OWNED BY [schema.]table.column`'s table and column (`42601` for a
/// name of one part, as PostgreSQL's `process_owned_by` answers).
fn owned_by(name: &ast::ObjectName) -> Result<(String, String), SqlError> {
    match name.0.split_last() {
        Some((column, table)) if !table.is_empty() => {
            let column = column.as_ident().map(crate::expr::ident_name).unwrap_or_default();
            Ok((object_name(&ast::ObjectName(table.to_vec()))?, column))
        }
        _ => {
            let mut e = SqlError::new(SqlState::SYNTAX_ERROR, "invalid OWNED BY option");
            e.hint = Some("Specify OWNED BY table.column or OWNED BY NONE.".into());
            Err(e)
        }
    }
}

/// sqlparser's sequence options as [`SeqOption`]s.
pub(crate) fn seq_options(opts: &[ast::SequenceOptions]) -> Result<Vec<SeqOption>, SqlError> {
    use ast::SequenceOptions as O;
    opts.iter()
        .map(|o| {
            Ok(match o {
                O::DataType(t) => SeqOption::Type(SeqType::named(&t.to_string()).ok_or_else(|| {
                    SqlError::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        "sequence type must be smallint, integer, or bigint",
                    )
                })?),
                O::IncrementBy(e, _) => SeqOption::Increment(int_of(e, "INCREMENT")?),
                O::MinValue(e) => SeqOption::Min(e.as_ref().map(|e| int_of(e, "MINVALUE")).transpose()?),
                O::MaxValue(e) => SeqOption::Max(e.as_ref().map(|e| int_of(e, "MAXVALUE")).transpose()?),
                O::StartWith(e, _) => SeqOption::Start(int_of(e, "START")?),
                O::Cache(e) => SeqOption::Cache(int_of(e, "CACHE")?),
                O::Cycle(c) => SeqOption::Cycle(!*c),
                O::OwnedBy(owner) => SeqOption::OwnedBy(owner.as_ref().map(owned_by).transpose()?),
            })
        })
        .collect()
}

/// Reads `ALTER SEQUENCE [IF EXISTS] name option…` (`RESTART [[WITH] n]`
/// among the options; the others as `CREATE SEQUENCE` reads them).
/// Returns the name, `IF EXISTS` and the options.
pub(crate) fn parse_alter(piece: &str) -> Result<(String, bool, Vec<SeqOption>), SqlError> {
    let words: Vec<&str> = piece.split_whitespace().collect();
    let lower: Vec<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
    let mut i = 2;
    let if_exists = lower.get(2..4).is_some_and(|w| w == ["if", "exists"]);
    if if_exists {
        i += 2;
    }
    let name = words.get(i).ok_or_else(|| SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at end of input"))?;
    let mut rest = Vec::new();
    let mut restart = None;
    let mut k = i + 1;
    while k < words.len() {
        if lower[k] == "restart" {
            k += 1;
            if lower.get(k).is_some_and(|w| w == "with") {
                k += 1;
            }
            let value = words.get(k).and_then(|w| w.parse::<i64>().ok());
            if value.is_some() {
                k += 1;
            }
            restart = Some(value);
            continue;
        }
        rest.push(words[k]);
        k += 1;
    }
    let text = format!("CREATE SEQUENCE {name} {}", rest.join(" "));
    let parsed = sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::PostgreSqlDialect {}, &text)
        .map_err(|e| SqlError::new(SqlState::SYNTAX_ERROR, e.to_string()))?;
    let Some(ast::Statement::CreateSequence { name, sequence_options, .. }) = parsed.first() else {
        return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error in ALTER SEQUENCE"));
    };
    let mut options = seq_options(sequence_options)?;
    if let Some(r) = restart {
        options.push(SeqOption::Restart(r));
    }
    Ok((object_name(name)?, if_exists, options))
}
