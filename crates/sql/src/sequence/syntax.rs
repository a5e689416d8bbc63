//! Sequence options as written: sqlparser's `CREATE SEQUENCE` options
//! turned into [`SeqOption`]s (`OWNED BY table.column` among them), and
//! `ALTER SEQUENCE`, which sqlparser does not read, read here (its options
//! other than `RESTART` as `CREATE SEQUENCE`'s); and the `SEQUENCE NAME`
//! option of `ALTER TABLE … ADD GENERATED … AS IDENTITY (…)`, which
//! sqlparser does not read either, taken out of the text (blanked, so
//! error positions stay) before sqlparser reads the rest.

use super::options::{SeqOption, SeqType};
use crate::error::SqlError;
use crate::expr::object_name;
use crate::rewrite_tokens::{bare_word, significant_tokens, Offsets};
use sqlparser::ast;
use sqlparser::tokenizer::Token;
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

/// The `SEQUENCE NAME name` option of an `ALTER TABLE … ADD GENERATED …
/// AS IDENTITY (…)` text: the text with the option blanked out, and the
/// sequence's name (`public.` dropped, folded unless quoted); `None`
/// without one.
pub(crate) fn split_sequence_name(piece: &str) -> Result<Option<(String, String)>, SqlError> {
    let Some(tokens) = significant_tokens(piece) else { return Ok(None) };
    let words: Vec<Option<String>> = tokens.iter().map(|t| bare_word(&t.token)).collect();
    let Some(at) =
        words.windows(2).position(|w| w[0].as_deref() == Some("sequence") && w[1].as_deref() == Some("name"))
    else {
        return Ok(None);
    };
    let mut parts = Vec::new();
    let mut k = at + 2;
    while let Some(Token::Word(w)) = tokens.get(k).map(|t| &t.token) {
        parts.push(if w.quote_style.is_some() { w.value.clone() } else { w.value.to_ascii_lowercase() });
        k += 1;
        if !matches!(tokens.get(k).map(|t| &t.token), Some(Token::Period)) {
            break;
        }
        k += 1;
    }
    let name = match parts.as_slice() {
        [name] => name.clone(),
        [schema, name] if schema == "public" => name.clone(),
        [] => return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \"NAME\"")),
        _ => {
            return Err(SqlError::new(
                SqlState::INVALID_SCHEMA_NAME,
                format!("schema of sequence \"{}\" does not exist", parts.join(".")),
            ))
        }
    };
    let offsets = Offsets::new(piece);
    let (Some(start), Some(end)) = (offsets.of(&tokens[at].span.start), offsets.of(&tokens[k - 1].span.end)) else {
        return Ok(None);
    };
    let mut text = piece.to_owned();
    text.replace_range(start..end, &" ".repeat(end - start));
    Ok(Some((text, name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sequence_name_option_is_taken_out_of_the_text() {
        let sql = "ALTER TABLE public.t ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (\n    SEQUENCE NAME public.t_id_seq\n    START WITH 1\n)";
        let (text, name) = split_sequence_name(sql).unwrap().unwrap();
        assert_eq!(name, "t_id_seq");
        assert_eq!(text.len(), sql.len());
        assert!(!text.contains("SEQUENCE") && text.contains("START WITH 1"), "{text}");
        let (_, quoted) =
            split_sequence_name("ALTER TABLE t ALTER c ADD GENERATED BY DEFAULT AS IDENTITY (SEQUENCE NAME \"S q\")")
                .unwrap()
                .unwrap();
        assert_eq!(quoted, "S q");
        assert!(split_sequence_name("ALTER TABLE t ADD COLUMN name text").unwrap().is_none());
        let e = split_sequence_name("ALTER TABLE t ALTER c ADD GENERATED ALWAYS AS IDENTITY (SEQUENCE NAME x.s)")
            .unwrap_err();
        assert_eq!(e.code, SqlState::INVALID_SCHEMA_NAME);
    }
}
