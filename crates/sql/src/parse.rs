//! Splitting a query string into statements, the small pre-parser for what
//! sqlparser cannot parse (`VACUUM`, `ANALYZE`, `CHECKPOINT`, `COPY`), and
//! sqlparser (PostgreSQL dialect) for everything else.

use crate::error::SqlError;
pub(crate) use crate::tokens::{strip_comments, tokenize, Tok};
use sqlparser::ast;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use turnstile_engine::txn::RowLockMode;
use turnstile_lock::SqlState;

/// A statement the pre-parser handles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PreStmt {
    /// `VACUUM [FULL] [ANALYZE] [VERBOSE] [table, …]`.
    Vacuum {
        /// `FULL`.
        full: bool,
        /// `ANALYZE`.
        analyze: bool,
        /// Tables (empty = every table).
        tables: Vec<String>,
    },
    /// `ANALYZE [table, …]`.
    Analyze(Vec<String>),
    /// `CHECKPOINT`.
    Checkpoint,
    /// `CREATE DATABASE name WITH options` (what sqlparser does not read:
    /// `ENCODING`, `TEMPLATE`, `LOCALE`, … as `createdb` and dumps send).
    CreateDatabase(crate::create_database::CreateDatabase),
    /// `REINDEX [(options)] {INDEX | TABLE | SCHEMA | DATABASE | SYSTEM}
    /// [CONCURRENTLY] name`.
    Reindex {
        /// What `name` is.
        target: ReindexTarget,
        /// The object (always given in PostgreSQL 15's grammar).
        name: Option<String>,
    },
    /// `COPY table [(cols)] FROM STDIN|'file' [options]`.
    CopyFrom {
        /// Target table.
        table: String,
        /// Target columns (empty = all).
        columns: Vec<String>,
        /// `None` = STDIN, else the server-side file.
        file: Option<String>,
        /// Format and options (`FREEZE` among them).
        options: crate::copy::CopyOptions,
    },
    /// `COPY table|(query) TO STDOUT|'file'`.
    CopyTo {
        /// `SELECT * FROM table` or the query text.
        query: String,
        /// `None` = STDOUT, else the server-side file.
        file: Option<String>,
        /// Format and options.
        options: crate::copy::CopyOptions,
    },
    /// `ALTER INDEX parent ATTACH PARTITION index` (`attach_index.rs`).
    AttachIndex {
        /// The partitioned index.
        parent: String,
        /// The partition's index.
        index: String,
    },
    /// `ALTER TABLE … ADD GENERATED … AS IDENTITY (SEQUENCE NAME s …)`:
    /// the statement as sqlparser reads it without the option, and the
    /// sequence's name (`sequence/column.rs`).
    AlterTableNamingSequence {
        /// The statement without `SEQUENCE NAME`.
        alter: Box<ast::AlterTable>,
        /// The identity sequence's name.
        sequence: String,
    },
    /// `ALTER SEQUENCE [IF EXISTS] name options` (`sequence/ddl.rs`).
    AlterSequence {
        /// The sequence.
        name: String,
        /// `IF EXISTS`.
        if_exists: bool,
        /// Its options, `RESTART` among them.
        options: Vec<crate::sequence::SeqOption>,
    },
}

/// What a `REINDEX` rebuilds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReindexTarget {
    /// One index.
    Index,
    /// A table's indexes.
    Table,
    /// The indexes of every table of a schema.
    Schema,
    /// The indexes of every table of the current database.
    Database,
    /// The system catalogs' indexes.
    System,
}

/// One parsed statement.
#[derive(Clone, Debug)]
pub enum Parsed {
    /// Only whitespace and comments.
    Empty,
    /// Handled by the pre-parser.
    Pre(PreStmt),
    /// Parsed by sqlparser.
    Ast(Box<ast::Statement>),
    /// Parsed by sqlparser after its `FOR NO KEY UPDATE` / `FOR KEY SHARE`
    /// clauses, which sqlparser does not know, were read as `FOR UPDATE` /
    /// `FOR SHARE`: the strength of each locking clause, in order.
    Locking(Box<ast::Statement>, Vec<RowLockMode>),
}

/// Splits `sql` at top-level semicolons: `(byte offset, text)` of each
/// non-empty statement.
pub fn split(sql: &str) -> Vec<(usize, &str)> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    let mut depth = 0i32;
    while i < b.len() {
        match b[i] {
            b'\'' | b'"' => {
                let q = b[i];
                i += 1;
                while i < b.len() {
                    if b[i] == q {
                        if i + 1 < b.len() && b[i + 1] == q {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            b'$' => {
                // $tag$ … $tag$ (not $1).
                let tag_end = b[i + 1..].iter().position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'));
                if let Some(n) = tag_end {
                    let end = i + 1 + n;
                    if b.get(end) == Some(&b'$') && !b[i + 1..end].first().is_some_and(u8::is_ascii_digit) {
                        let tag = &sql[i..=end];
                        if let Some(close) = sql[end + 1..].find(tag) {
                            i = end + 1 + close + tag.len() - 1;
                        } else {
                            i = b.len();
                        }
                    }
                }
            }
            b'(' => depth += 1,
            b')' => depth -= 1,
            b';' => {
                push_piece(sql, start, i, &mut out);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    let _ = depth;
    push_piece(sql, start, b.len().max(start), &mut out);
    out
}

fn push_piece<'a>(sql: &'a str, start: usize, end: usize, out: &mut Vec<(usize, &'a str)>) {
    let end = end.min(sql.len());
    if start >= end {
        return;
    }
    let piece = &sql[start..end];
    if !strip_comments(piece).trim().is_empty() {
        out.push((start, piece));
    }
}

fn name_of(t: &Tok) -> Option<String> {
    match t {
        Tok::Word(w) => Some(w.strip_prefix("public.").unwrap_or(w).to_owned()),
        Tok::Quoted(q) => Some(q.clone()),
        _ => None,
    }
}

fn syntax_near(t: Option<&Tok>) -> SqlError {
    let near = match t {
        None => "end of input".to_owned(),
        Some(Tok::Word(w) | Tok::Quoted(w)) => format!("\"{w}\""),
        Some(Tok::Str(s)) => format!("\"'{s}'\""),
        Some(Tok::Punct(p)) => format!("\"{p}\""),
    };
    if t.is_none() {
        SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at end of input")
    } else {
        SqlError::new(SqlState::SYNTAX_ERROR, format!("syntax error at or near {near}"))
    }
}

/// Comma-separated table names.
fn name_list(toks: &[Tok]) -> Result<Vec<String>, SqlError> {
    let mut out = Vec::new();
    let mut expect_name = true;
    for t in toks {
        match (expect_name, t) {
            (true, t) => {
                out.push(name_of(t).ok_or_else(|| syntax_near(Some(t)))?);
                expect_name = false;
            }
            (false, Tok::Punct(',')) => expect_name = true,
            (false, t) => return Err(syntax_near(Some(t))),
        }
    }
    if expect_name && !out.is_empty() {
        return Err(syntax_near(None));
    }
    Ok(out)
}

fn first_word(s: &str) -> String {
    strip_comments(s)
        .trim_start()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect::<String>()
        .to_ascii_lowercase()
}

/// The second word of `s`, lower case.
fn second_word(s: &str) -> String {
    strip_comments(s).split_whitespace().nth(1).unwrap_or("").to_ascii_lowercase()
}

/// Whether `words` occur one after another among the statement's words
/// (outside strings, quoted names and comments).
fn has_words(s: &str, words: &[&str]) -> bool {
    let Ok(toks) = tokenize(&strip_comments(s)) else { return false };
    toks.windows(words.len()).any(|w| w.iter().zip(words).all(|(t, want)| matches!(t, Tok::Word(x) if x == want)))
}

/// Parses one statement (`offset` = its byte position in the whole string,
/// for error positions).
pub fn parse_one(sql: &str, piece: &str, offset: usize) -> Result<Parsed, SqlError> {
    let word = first_word(piece);
    match word.as_str() {
        // A statement may open with a parenthesis (`(SELECT …) UNION …`).
        "" if strip_comments(piece).trim().is_empty() => return Ok(Parsed::Empty),
        // PostgreSQL's `TABLE name` (short for `SELECT * FROM name`), which
        // sqlparser does not read.
        "table" => return Err(SqlError::unsupported("the TABLE command")),
        "create" if crate::create_database::has_options(piece) => {
            return crate::create_database::parse(piece).map(|c| Parsed::Pre(PreStmt::CreateDatabase(c)));
        }
        "vacuum" | "analyze" | "analyse" | "checkpoint" | "copy" | "reindex" => {
            return preparse(&word, piece).map(Parsed::Pre).map_err(|mut e| {
                if e.code == SqlState::SYNTAX_ERROR && e.position.is_none() {
                    e.position = Some(char_pos(sql, offset + piece.len() - piece.trim_start().len()));
                }
                e
            })
        }
        // Valid PostgreSQL that sqlparser does not read (pg_dump sends it
        // for a partitioned index).
        "alter" if second_word(piece) == "index" && has_words(piece, &["attach", "partition"]) => {
            if let Some((parent, index)) = crate::attach_index::parse(piece)? {
                return Ok(Parsed::Pre(PreStmt::AttachIndex { parent, index }));
            }
        }
        "alter" if second_word(piece) == "table" && has_words(piece, &["sequence", "name"]) => {
            if let Some((text, sequence)) = crate::sequence::syntax::split_sequence_name(piece)? {
                let parsed = Parser::parse_sql(&PostgreSqlDialect {}, &text)
                    .map_err(|e| parser_error(sql, piece, offset, &e.to_string()))?;
                if let [ast::Statement::AlterTable(alter)] = parsed.as_slice() {
                    let alter = Box::new(alter.clone());
                    return Ok(Parsed::Pre(PreStmt::AlterTableNamingSequence { alter, sequence }));
                }
            }
        }
        "alter" if second_word(piece) == "sequence" => {
            let (name, if_exists, options) = crate::sequence::syntax::parse_alter(piece.trim())?;
            return Ok(Parsed::Pre(PreStmt::AlterSequence { name, if_exists, options }));
        }
        _ => {}
    }
    let dialect = PostgreSqlDialect {};
    let symmetric = crate::between::rewrite(piece);
    let source = symmetric.as_deref().unwrap_or(piece);
    let quantified = crate::operator_any::rewrite(source);
    let source = quantified.as_deref().unwrap_or(source);
    let inferred = crate::conflict_target::rewrite(source);
    let source = inferred.as_deref().unwrap_or(source);
    let (text, modes) = key_lock_clauses(source);
    match Parser::parse_sql(&dialect, text.as_deref().unwrap_or(source)) {
        Ok(mut v) => match v.len() {
            0 => Ok(Parsed::Empty),
            1 if text.is_some() => Ok(Parsed::Locking(Box::new(v.remove(0)), modes)),
            1 => Ok(Parsed::Ast(Box::new(v.remove(0)))),
            _ => {
                Err(SqlError::new(SqlState::SYNTAX_ERROR, "cannot insert multiple commands into a prepared statement"))
            }
        },
        Err(e) => Err(parser_error(sql, piece, offset, &e.to_string())),
    }
}

/// Finds the locking clauses of `piece` when one of them is
/// `FOR NO KEY UPDATE` or `FOR KEY SHARE`: the text with `NO KEY` / `KEY`
/// blanked out (same length, so error positions stay right) and the
/// strength of every `FOR …` clause in order; `(None, [])` otherwise. Works
/// on sqlparser's tokens, so words inside literals and comments are left
/// alone.
fn key_lock_clauses(piece: &str) -> (Option<String>, Vec<RowLockMode>) {
    use sqlparser::tokenizer::{Token, Tokenizer};
    if !piece.to_ascii_lowercase().contains("key") {
        return (None, Vec::new());
    }
    let dialect = PostgreSqlDialect {};
    let Ok(tokens) = Tokenizer::new(&dialect, piece).tokenize_with_location() else { return (None, Vec::new()) };
    let words: Vec<(String, &sqlparser::tokenizer::Span)> = tokens
        .iter()
        .filter_map(|t| match &t.token {
            Token::Whitespace(_) => None,
            Token::Word(w) if w.quote_style.is_none() => Some((w.value.to_ascii_lowercase(), &t.span)),
            other => Some((format!("\u{0}{other}"), &t.span)),
        })
        .collect();
    let line_starts: Vec<usize> = std::iter::once(0).chain(piece.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let byte_of = |l: &sqlparser::tokenizer::Location| -> Option<usize> {
        let start = *line_starts.get((l.line as usize).checked_sub(1)?)?;
        let col = (l.column as usize).checked_sub(1)?;
        piece[start..].char_indices().nth(col).map(|(i, _)| start + i)
    };
    let mut blank = Vec::new();
    let mut modes = Vec::new();
    for (i, (w, _)) in words.iter().enumerate() {
        if w != "for" {
            continue;
        }
        let next = |k: usize| words.get(i + k).map(|(w, _)| w.as_str());
        match (next(1), next(2), next(3)) {
            (Some("no"), Some("key"), Some("update")) => {
                modes.push(RowLockMode::NoKeyUpdate);
                blank.extend([words[i + 1].1, words[i + 2].1]);
            }
            (Some("key"), Some("share"), _) => {
                modes.push(RowLockMode::KeyShare);
                blank.push(words[i + 1].1);
            }
            (Some("update"), _, _) => modes.push(RowLockMode::Update),
            (Some("share"), _, _) => modes.push(RowLockMode::Share),
            _ => {}
        }
    }
    if blank.is_empty() {
        return (None, Vec::new());
    }
    let mut text = piece.as_bytes().to_vec();
    for span in blank {
        let (Some(a), Some(b)) = (byte_of(&span.start), byte_of(&span.end)) else { return (None, Vec::new()) };
        // `end` is the position just past the word.
        text[a..b].fill(b' ');
    }
    match String::from_utf8(text) {
        Ok(t) => (Some(t), modes),
        Err(_) => (None, Vec::new()),
    }
}

/// Turns sqlparser's message ("… at Line: l, Column: c") into 42601 with a
/// 1-based character position in the whole query string.
fn parser_error(sql: &str, piece: &str, offset: usize, msg: &str) -> SqlError {
    let msg = msg.trim_start_matches("sql parser error: ");
    let (text, loc) = match msg.rfind(" at Line: ") {
        Some(at) => (&msg[..at], Some(&msg[at + 10..])),
        None => (msg, None),
    };
    let mut position = None;
    if let Some(loc) = loc {
        let mut it = loc.split(", Column: ");
        let line = it.next().and_then(|l| l.trim().parse::<usize>().ok());
        let col = it.next().and_then(|c| c.trim().parse::<usize>().ok());
        if let (Some(line), Some(col)) = (line, col) {
            // Byte offset of that line/column inside `piece`.
            let mut byte = 0;
            for (i, l) in piece.split_inclusive('\n').enumerate() {
                if i + 1 == line {
                    byte += l.char_indices().nth(col.saturating_sub(1)).map_or(l.len(), |(b, _)| b);
                    break;
                }
                byte += l.len();
            }
            position = Some(char_pos(sql, offset + byte.min(piece.len())));
        }
    }
    let near = text.rsplit_once("found: ").map(|(_, f)| f.trim().to_owned());
    let message = match near.as_deref() {
        Some("EOF") | None => "syntax error at end of input".to_owned(),
        Some(n) => format!("syntax error at or near \"{n}\""),
    };
    let mut e = SqlError::new(SqlState::SYNTAX_ERROR, message);
    e.detail = Some(text.to_owned());
    e.position = position.or_else(|| Some(char_pos(sql, offset + piece.len())));
    e
}

/// 1-based character position of byte `byte` in `sql`.
pub fn char_pos(sql: &str, byte: usize) -> u32 {
    let byte = byte.min(sql.len());
    let mut b = byte;
    while !sql.is_char_boundary(b) {
        b -= 1;
    }
    sql[..b].chars().count() as u32 + 1
}

/// For `COPY (query) …`: the query's text and what follows it.
fn copy_query(text: &str) -> Option<(String, String)> {
    let t = text.trim_start();
    let after = t.get(4..)?.trim_start();
    if !t[..4].eq_ignore_ascii_case("copy") || !after.starts_with('(') {
        return None;
    }
    let b = after.as_bytes();
    let mut depth = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\'' | b'"' => {
                let q = b[i];
                i += 1;
                while i < b.len() && b[i] != q {
                    i += 1;
                }
            }
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some((after[1..i].to_owned(), after[i + 1..].to_owned()));
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn preparse(word: &str, piece: &str) -> Result<PreStmt, SqlError> {
    let mut text = strip_comments(piece);
    let mut inner_query = None;
    if word == "copy" {
        if let Some((q, rest)) = copy_query(&text) {
            inner_query = Some(q);
            text = format!("copy (q) {rest}");
        }
    }
    let toks = tokenize(&text)?;
    let rest = &toks[1..];
    match word {
        "checkpoint" => {
            if let Some(t) = rest.first() {
                return Err(syntax_near(Some(t)));
            }
            Ok(PreStmt::Checkpoint)
        }
        "reindex" => preparse_reindex(rest),
        "analyze" | "analyse" => {
            let rest: Vec<Tok> = rest.iter().filter(|t| **t != Tok::Word("verbose".into())).cloned().collect();
            Ok(PreStmt::Analyze(name_list(&rest)?))
        }
        "vacuum" => {
            let (mut full, mut analyze) = (false, false);
            let mut i = 0;
            if rest.first() == Some(&Tok::Punct('(')) {
                i = 1;
                loop {
                    match rest.get(i) {
                        Some(Tok::Punct(')')) => {
                            i += 1;
                            break;
                        }
                        Some(Tok::Punct(',')) => i += 1,
                        Some(Tok::Word(w)) => {
                            match w.as_str() {
                                "full" => full = true,
                                "analyze" | "analyse" => analyze = true,
                                "verbose" | "freeze" | "skip_locked" | "true" | "on" | "1" => {}
                                "false" | "off" | "0" => {}
                                other => {
                                    return Err(SqlError::new(
                                        SqlState::SYNTAX_ERROR,
                                        format!("unrecognized VACUUM option \"{other}\""),
                                    ))
                                }
                            }
                            i += 1;
                        }
                        t => return Err(syntax_near(t)),
                    }
                }
            } else {
                while let Some(Tok::Word(w)) = rest.get(i) {
                    match w.as_str() {
                        "full" => full = true,
                        "analyze" | "analyse" => analyze = true,
                        "verbose" | "freeze" => {}
                        _ => break,
                    }
                    i += 1;
                }
            }
            Ok(PreStmt::Vacuum { full, analyze, tables: name_list(&rest[i..])? })
        }
        _ => match (preparse_copy(rest)?, inner_query) {
            (PreStmt::CopyTo { file, options, .. }, Some(query)) => Ok(PreStmt::CopyTo { query, file, options }),
            (other, _) => Ok(other),
        },
    }
}

fn preparse_reindex(rest: &[Tok]) -> Result<PreStmt, SqlError> {
    let mut i = 0;
    if rest.first() == Some(&Tok::Punct('(')) {
        // Options (`VERBOSE`, `CONCURRENTLY`, `TABLESPACE x`) change nothing
        // turnstile does.
        i = rest.iter().position(|t| *t == Tok::Punct(')')).ok_or_else(|| syntax_near(None))? + 1;
    }
    let target = match rest.get(i) {
        Some(Tok::Word(w)) => match w.as_str() {
            "index" => ReindexTarget::Index,
            "table" => ReindexTarget::Table,
            "schema" => ReindexTarget::Schema,
            "database" => ReindexTarget::Database,
            "system" => ReindexTarget::System,
            _ => return Err(syntax_near(rest.get(i))),
        },
        t => return Err(syntax_near(t)),
    };
    i += 1;
    if rest.get(i) == Some(&Tok::Word("concurrently".into())) {
        i += 1;
    }
    let name = rest.get(i).map(|t| name_of(t).ok_or_else(|| syntax_near(Some(t)))).transpose()?;
    if let Some(t) = rest.get(i + 1) {
        return Err(syntax_near(Some(t)));
    }
    // PostgreSQL 15 requires the name for every kind.
    if name.is_none() {
        return Err(syntax_near(None));
    }
    Ok(PreStmt::Reindex { target, name })
}

fn preparse_copy(rest: &[Tok]) -> Result<PreStmt, SqlError> {
    let (source, mut i) = copy_source(rest)?;
    let dir = rest.get(i).cloned();
    i += 1;
    let target = match rest.get(i) {
        Some(Tok::Word(w)) if w == "stdin" || w == "stdout" => None,
        Some(Tok::Str(f)) => Some(f.clone()),
        Some(Tok::Word(w)) if w == "program" => return Err(SqlError::unsupported("COPY … PROGRAM")),
        t => return Err(syntax_near(t)),
    };
    i += 1;
    let options = crate::copy::CopyOptions::from_pairs(&copy_option_pairs(&rest[i..])?)?;
    match (dir, source) {
        (Some(Tok::Word(d)), CopySource::Table(table, columns)) if d == "from" => {
            if matches!(rest.get(i - 1), Some(Tok::Word(w)) if w == "stdout") {
                return Err(syntax_near(rest.get(i - 1)));
            }
            Ok(PreStmt::CopyFrom { table, columns, file: target, options })
        }
        (Some(Tok::Word(d)), source) if d == "to" => {
            let query = match source {
                CopySource::Table(table, cols) if cols.is_empty() => format!("SELECT * FROM \"{table}\""),
                CopySource::Table(table, cols) => format!(
                    "SELECT {} FROM \"{table}\"",
                    cols.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(", ")
                ),
                CopySource::Query(q) => q,
            };
            Ok(PreStmt::CopyTo { query, file: target, options })
        }
        (Some(Tok::Word(d)), CopySource::Query(_)) if d == "from" => {
            Err(SqlError::new(SqlState::SYNTAX_ERROR, "COPY (query) FROM is not valid"))
        }
        (t, _) => Err(syntax_near(t.as_ref())),
    }
}

/// What COPY reads or writes: a table with its column list, or (COPY TO
/// only) a query's text.
enum CopySource {
    Table(String, Vec<String>),
    Query(String),
}

/// COPY's source (`table [(cols)]` or `(query)`) and the index of the
/// token after it.
fn copy_source(rest: &[Tok]) -> Result<(CopySource, usize), SqlError> {
    match rest.first() {
        Some(Tok::Punct('(')) => {
            // COPY (query) TO …: find the matching parenthesis in tokens,
            // then rebuild the query text from the original tokens.
            let mut depth = 0;
            let mut end = None;
            for (k, t) in rest.iter().enumerate() {
                match t {
                    Tok::Punct('(') => depth += 1,
                    Tok::Punct(')') => {
                        depth -= 1;
                        if depth == 0 {
                            end = Some(k);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let end = end.ok_or_else(|| syntax_near(None))?;
            Ok((CopySource::Query(untokenize(&rest[1..end])), end + 1))
        }
        Some(t) => {
            let table = name_of(t).ok_or_else(|| syntax_near(Some(t)))?;
            let mut i = 1;
            let mut cols = Vec::new();
            if rest.get(i) == Some(&Tok::Punct('(')) {
                let close = rest[i..].iter().position(|t| *t == Tok::Punct(')')).ok_or_else(|| syntax_near(None))?;
                cols = name_list(&rest[i + 1..i + close])?;
                i += close + 1;
            }
            Ok((CopySource::Table(table, cols), i))
        }
        None => Err(syntax_near(None)),
    }
}

/// COPY's options as (name, value) pairs: `[WITH] ( opt [value], … )` or
/// the old syntax's words (`BINARY`, `DELIMITER [AS] 'x'`, `NULL [AS] 'x'`,
/// `CSV HEADER` …).
fn copy_option_pairs(opts: &[Tok]) -> Result<Vec<(String, Option<String>)>, SqlError> {
    let mut pairs: Vec<(String, Option<String>)> = Vec::new();
    let mut opts = opts;
    if opts.first() == Some(&Tok::Word("with".into())) {
        opts = &opts[1..];
    }
    let paren = opts.first() == Some(&Tok::Punct('('));
    let mut k = usize::from(paren);
    while k < opts.len() {
        match &opts[k] {
            Tok::Punct(')') if paren => {
                k += 1;
                if let Some(t) = opts.get(k) {
                    return Err(syntax_near(Some(t)));
                }
                break;
            }
            Tok::Punct(',') => k += 1,
            Tok::Word(w) => {
                if !paren && opts.get(k + 1) == Some(&Tok::Word("as".into())) {
                    k += 1;
                }
                let value = match (opts.get(k + 1), opts.get(k + 2)) {
                    (Some(Tok::Word(v)), _) if paren && v != "e" => {
                        k += 1;
                        Some(v.clone())
                    }
                    // E'…': backslash escapes.
                    (Some(Tok::Word(e)), Some(Tok::Str(v))) if e == "e" => {
                        k += 2;
                        Some(crate::copy::copy_unescape(v, "").unwrap_or_default())
                    }
                    (Some(Tok::Str(v)), _) => {
                        k += 1;
                        Some(v.clone())
                    }
                    _ => None,
                };
                k += 1;
                match (w.as_str(), paren) {
                    ("binary" | "csv", false) => pairs.push(("format".into(), Some(w.clone()))),
                    ("oids", _) => return Err(SqlError::unsupported("COPY WITH OIDS")),
                    ("force" | "force_quote" | "force_not_null" | "force_null" | "encoding", _) => {
                        return Err(SqlError::unsupported(&format!("the COPY option {w}")))
                    }
                    _ => pairs.push((w.clone(), value)),
                }
            }
            t => return Err(syntax_near(Some(t))),
        }
    }
    Ok(pairs)
}

fn untokenize(toks: &[Tok]) -> String {
    let mut s = String::new();
    for t in toks {
        if !s.is_empty() {
            s.push(' ');
        }
        match t {
            Tok::Word(w) => s.push_str(w),
            Tok::Quoted(q) => {
                s.push('"');
                s.push_str(&q.replace('"', "\"\""));
                s.push('"');
            }
            Tok::Str(v) => {
                s.push('\'');
                s.push_str(&v.replace('\'', "''"));
                s.push('\'');
            }
            Tok::Punct(p) => s.push(*p),
        }
    }
    s
}

/// Parses one SQL expression (a column's stored DEFAULT).
pub fn parse_expr(text: &str) -> Result<ast::Expr, SqlError> {
    let dialect = PostgreSqlDialect {};
    Parser::new(&dialect)
        .try_with_sql(text)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| parser_error(text, text, 0, &e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_top_level_semicolons_only() {
        let v = split("select 1; select 'a;b'; -- c;\n select $$x;y$$;;");
        assert_eq!(v.len(), 3);
        assert_eq!(v[1].1.trim(), "select 'a;b'");
        assert!(split("  -- only a comment\n").is_empty());
    }

    #[test]
    fn preparses_what_sqlparser_cannot() {
        assert_eq!(
            preparse("vacuum", "VACUUM FULL ANALYZE pgbench_accounts").unwrap(),
            PreStmt::Vacuum { full: true, analyze: true, tables: vec!["pgbench_accounts".into()] }
        );
        assert_eq!(
            preparse("copy", "copy pgbench_branches from stdin with (freeze on)").unwrap(),
            PreStmt::CopyFrom {
                table: "pgbench_branches".into(),
                columns: vec![],
                file: None,
                options: crate::copy::CopyOptions { freeze: true, ..Default::default() }
            }
        );
        assert!(matches!(
            preparse("copy", "COPY (SELECT repeat(random()::text, 5) FROM generate_series(1, 3)) TO '/tmp/x'").unwrap(),
            PreStmt::CopyTo { file: Some(_), .. }
        ));
        assert_eq!(preparse("checkpoint", "checkpoint x").unwrap_err().code, "42601");
        assert_eq!(
            preparse("reindex", "REINDEX (VERBOSE) TABLE CONCURRENTLY public.t").unwrap(),
            PreStmt::Reindex { target: ReindexTarget::Table, name: Some("t".into()) }
        );
        assert_eq!(
            preparse("reindex", "reindex database postgres").unwrap(),
            PreStmt::Reindex { target: ReindexTarget::Database, name: Some("postgres".into()) }
        );
        assert_eq!(preparse("reindex", "REINDEX SYSTEM").unwrap_err().code, "42601");
        assert_eq!(preparse("reindex", "REINDEX TABLE").unwrap_err().code, "42601");
    }

    #[test]
    fn syntax_errors_carry_their_position() {
        let sql = "select 1; selec 2";
        let (off, piece) = split(sql)[1];
        let e = parse_one(sql, piece, off).unwrap_err();
        assert_eq!(e.code, "42601");
        assert_eq!(e.position, Some(11));
    }

    #[test]
    fn valid_statements_sqlparser_cannot_read_are_read_here_not_syntax_errors() {
        let sql = "ALTER INDEX public.trips_pkey ATTACH PARTITION public.trips_1_pkey";
        assert!(matches!(
            parse_one(sql, sql, 0),
            Ok(Parsed::Pre(PreStmt::AttachIndex { ref parent, ref index })) if parent == "trips_pkey" && index == "trips_1_pkey"
        ));
        let sql = "ALTER INDEX i RENAME TO \"attach partition\"";
        assert_ne!(parse_one(sql, sql, 0).err().map(|e| e.code == "0A000"), Some(true));
    }

    #[test]
    fn key_lock_clauses_are_read_past_sqlparser() {
        let sql = "SELECT 'for key share' FROM t\n  FOR NO KEY UPDATE NOWAIT";
        let (text, modes) = key_lock_clauses(sql);
        assert_eq!(text.as_deref(), Some("SELECT 'for key share' FROM t\n  FOR        UPDATE NOWAIT"));
        assert_eq!(modes, vec![RowLockMode::NoKeyUpdate]);
        let (text, modes) = key_lock_clauses("select * from t for key share skip locked");
        assert_eq!(text.as_deref(), Some("select * from t for     share skip locked"));
        assert_eq!(modes, vec![RowLockMode::KeyShare]);
        assert_eq!(key_lock_clauses("SELECT key FROM t FOR UPDATE"), (None, vec![]));
        assert!(matches!(parse_one(sql, sql, 0), Ok(Parsed::Locking(_, m)) if m == vec![RowLockMode::NoKeyUpdate]));
    }
}
