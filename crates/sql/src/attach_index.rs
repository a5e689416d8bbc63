//! `ALTER INDEX parent ATTACH PARTITION index`, which sqlparser does not
//! read and pg_dump writes for each index of a partition: read here, run
//! by the engine ([`turnstile_engine::Session::attach_index`]).
//!
//! ```
//! use turnstile_sql::attach_index::parse;
//! let (parent, index) = parse("ALTER INDEX public.trips_pkey ATTACH PARTITION public.trips_1_pkey;").unwrap().unwrap();
//! assert_eq!((parent.as_str(), index.as_str()), ("trips_pkey", "trips_1_pkey"));
//! assert!(parse("ALTER INDEX i RENAME TO j").unwrap().is_none());
//! ```

use crate::error::SqlError;
use crate::tokens::{strip_comments, tokenize, Tok};
use turnstile_lock::SqlState;

/// The parent and the index of `ALTER INDEX parent ATTACH PARTITION
/// index`; `None` for another `ALTER INDEX`; `42601` for a malformed one,
/// `3F000` for a schema other than `public` or `pg_catalog`.
pub fn parse(sql: &str) -> Result<Option<(String, String)>, SqlError> {
    let toks = tokenize(&strip_comments(sql))?;
    let word = |t: Option<&Tok>, w: &str| matches!(t, Some(Tok::Word(x)) if x == w);
    if !word(toks.first(), "alter") || !word(toks.get(1), "index") {
        return Ok(None);
    }
    let mut at = 2;
    let parent = name(&toks, &mut at)?;
    if !word(toks.get(at), "attach") || !word(toks.get(at + 1), "partition") {
        return Ok(None);
    }
    at += 2;
    let index = name(&toks, &mut at)?;
    if toks.get(at) == Some(&Tok::Punct(';')) {
        at += 1;
    }
    if at != toks.len() {
        return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at end of ALTER INDEX … ATTACH PARTITION"));
    }
    Ok(Some((parent, index)))
}

/// A possibly schema-qualified name at `toks[*at]`, moving `at` past it.
fn name(toks: &[Tok], at: &mut usize) -> Result<String, SqlError> {
    let mut parts = Vec::new();
    loop {
        match toks.get(*at) {
            Some(Tok::Word(w)) => parts.extend(w.split('.').map(str::to_owned)),
            Some(Tok::Quoted(w)) => parts.push(w.clone()),
            _ => return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error in ALTER INDEX: a name expected")),
        }
        *at += 1;
        if toks.get(*at) != Some(&Tok::Punct('.')) {
            break;
        }
        *at += 1;
    }
    match parts.as_slice() {
        [one] => Ok(one.clone()),
        [schema, one] if schema == "public" || schema == "pg_catalog" => Ok(one.clone()),
        _ => Err(SqlError::new(
            SqlState::INVALID_SCHEMA_NAME,
            format!("schema of \"{}\" does not exist", parts.join(".")),
        )),
    }
}
