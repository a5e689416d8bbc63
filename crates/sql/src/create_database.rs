//! `CREATE DATABASE name [WITH] option …`, the form `createdb` and
//! pg_dump send (`ENCODING 'UTF8' TEMPLATE template0`), which sqlparser
//! does not read. A turnstile database is always UTF8 with the `C`
//! locale, and always starts empty, as a copy of `template0` does; the
//! options are checked against that: what PostgreSQL would accept and
//! turnstile can honour is accepted, other valid values are `0A000`,
//! invalid ones PostgreSQL's error.
//!
//! ```
//! # use turnstile_sql::parse::{parse_one, Parsed, PreStmt};
//! let sql = "CREATE DATABASE u ENCODING 'UTF8' TEMPLATE template0";
//! let Ok(Parsed::Pre(PreStmt::CreateDatabase(c))) = parse_one(sql, sql, 0) else { panic!() };
//! assert_eq!(c.name, "u");
//! ```

use crate::error::SqlError;
use crate::tokens::{strip_comments, tokenize, Tok};
use turnstile_lock::SqlState;

/// A `CREATE DATABASE` with options, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreateDatabase {
    /// The new database's name.
    pub name: String,
    /// `TEMPLATE name`, when it is not `template0`/`template1`: checked
    /// against the catalog when the statement runs.
    pub template: Option<String>,
}

/// Whether `piece` is a `CREATE DATABASE name` followed by options.
pub(crate) fn has_options(piece: &str) -> bool {
    let Ok(toks) = tokenize(piece) else { return false };
    matches!(toks.as_slice(), [Tok::Word(c), Tok::Word(d), _, _, ..] if c == "create" && d == "database")
}

fn syntax(near: Option<&Tok>) -> SqlError {
    let at = match near {
        Some(Tok::Word(w) | Tok::Quoted(w)) => w.clone(),
        Some(Tok::Str(s)) => format!("'{s}'"),
        Some(Tok::Punct(p)) => p.to_string(),
        None => return SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at end of input"),
    };
    SqlError::new(SqlState::SYNTAX_ERROR, format!("syntax error at or near \"{at}\""))
}

fn value_text(t: &Tok) -> String {
    match t {
        Tok::Word(w) | Tok::Quoted(w) | Tok::Str(w) => w.clone(),
        Tok::Punct(p) => p.to_string(),
    }
}

/// `TEMPLATE name` of a database other than `template0`/`template1`:
/// `0A000` for an existing one (turnstile does not copy databases),
/// `3D000` for none.
pub(crate) fn check_template(name: &str, exists: bool) -> Result<(), SqlError> {
    if exists {
        Err(unsupported(format!("TEMPLATE {name} (a new database starts empty, as from template0)")))
    } else {
        Err(SqlError::new(SqlState::INVALID_CATALOG_NAME, format!("template database \"{name}\" does not exist")))
    }
}

/// Parses and checks the statement.
pub(crate) fn parse(piece: &str) -> Result<CreateDatabase, SqlError> {
    let toks = tokenize(strip_comments(piece).trim())?;
    let name = match toks.get(2) {
        Some(Tok::Word(w) | Tok::Quoted(w)) => w.clone(),
        t => return Err(syntax(t)),
    };
    let mut template = None;
    let mut i = 3;
    if toks.get(i) == Some(&Tok::Word("with".into())) {
        i += 1;
    }
    while let Some(t) = toks.get(i) {
        let Tok::Word(option) = t else { return Err(syntax(Some(t))) };
        i += 1;
        if option == "connection" {
            if toks.get(i) != Some(&Tok::Word("limit".into())) {
                return Err(syntax(toks.get(i)));
            }
            i += 1;
        }
        if toks.get(i) == Some(&Tok::Punct('=')) {
            i += 1;
        }
        let value = toks.get(i).ok_or_else(|| syntax(None))?;
        i += 1;
        if matches!(value, Tok::Punct('-')) {
            // A negative CONNECTION LIMIT.
            i += 1;
        }
        let value = value_text(value);
        if option == "template" && !matches!(value.as_str(), "template0" | "template1" | "default" | "DEFAULT") {
            template = Some(value.clone());
        }
        check_option(option, &value)?;
    }
    Ok(CreateDatabase { name, template })
}

fn unsupported(what: String) -> SqlError {
    SqlError::unsupported(&what)
}

/// One option's value against what turnstile databases are.
fn check_option(option: &str, value: &str) -> Result<(), SqlError> {
    let v = value.to_ascii_lowercase();
    match option {
        "encoding" => match v.replace(['-', '_'], "").as_str() {
            "utf8" | "unicode" | "6" | "default" => Ok(()),
            "sqlascii" | "latin1" | "win1252" | "latin9" | "euckr" | "eucjp" | "sjis" => {
                Err(unsupported(format!("a database in encoding {value} (turnstile databases are UTF8)")))
            }
            _ => Err(SqlError::new(SqlState::UNDEFINED_OBJECT, format!("{value} is not a valid encoding name"))),
        },
        // Checked against the catalog when the statement runs.
        "template" => Ok(()),
        "locale" | "lc_collate" | "lc_ctype" => match value {
            "C" | "POSIX" | "c" | "posix" | "DEFAULT" | "default" => Ok(()),
            _ => Err(unsupported(format!("the locale {value} (turnstile databases use C)"))),
        },
        "locale_provider" if v == "libc" => Ok(()),
        "locale_provider" => Err(unsupported(format!("LOCALE_PROVIDER {value}"))),
        "owner" if matches!(value, "postgres" | "DEFAULT" | "default") => Ok(()),
        "owner" => Err(SqlError::new(SqlState::UNDEFINED_OBJECT, format!("role \"{value}\" does not exist"))),
        "tablespace" if matches!(v.as_str(), "pg_default" | "default") => Ok(()),
        "tablespace" => {
            Err(SqlError::new(SqlState::UNDEFINED_OBJECT, format!("tablespace \"{value}\" does not exist")))
        }
        "strategy" | "allow_connections" | "connection" | "is_template" | "oid" | "collation_version"
        | "icu_locale" => Ok(()),
        other => Err(SqlError::new(SqlState::SYNTAX_ERROR, format!("option \"{other}\" not recognized"))),
    }
}
