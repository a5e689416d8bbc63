//! Expressions: compiled once from sqlparser's AST against a [`Scope`]
//! (types resolved, parameters typed), evaluated per row.

mod agg_state;
pub mod bitwise;
mod builtin;
mod compile;
mod eval;
pub mod expand_array;
mod forms;
pub mod functions;
pub mod generate_subscripts;
pub mod numeric;
mod quantified;
pub mod regex;
mod regex_any;
mod subquery;
pub mod subscript;

pub use agg_state::AggState;
pub(crate) use compile::comparison_type;
pub(crate) use eval::cast_value as cast_datum;
pub use functions::FuncDef;
pub use subquery::{OuterScope, PlannedSubquery, SubLink, SubLinkKind, SubqueryPlan};

use crate::error::SqlError;
use crate::sync::atomic::AtomicBool;
use crate::value::{Datum, RegKind, SqlType};
use sqlparser::ast;
use turnstile_lock::SqlState;

/// One column visible to an expression.
#[derive(Clone, Debug)]
pub struct ScopeCol {
    /// The table's alias (or name) that qualifies it.
    pub qual: String,
    /// The column name.
    pub name: String,
    /// Its type.
    pub ty: SqlType,
    /// The table's OID (RowDescription), 0 if none.
    pub table_oid: u32,
    /// The attribute number, 0 if none.
    pub attnum: i16,
}

/// The columns of the row an expression is evaluated on, and what a
/// subquery compiled in it needs: the enclosing query's scope (for
/// correlated references) and the subqueries planned for this scope.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    /// Columns in row order.
    pub cols: Vec<ScopeCol>,
    /// The enclosing query level, when this scope is a subquery's:
    /// names not found in `cols` are looked up there (`Expr::Outer`).
    pub outer: Option<std::sync::Arc<OuterScope>>,
    /// The subqueries of this level's expressions, planned before the
    /// expressions are compiled (keyed by their text as parsed).
    pub subqueries: Vec<PlannedSubquery>,
    /// Columns an unqualified name and `*` do not see: the right-hand
    /// column of each `JOIN … USING` / `NATURAL JOIN` pair.
    pub hidden: Vec<usize>,
    /// The columns `*` lists, in order, when a USING or NATURAL join
    /// merged some (the merged ones first); `None`: every column.
    pub star: Option<Vec<usize>>,
    /// System columns (`tableoid` of a catalog table): found by name,
    /// qualified or not, but never listed by `*` or `alias.*`.
    pub system: Vec<usize>,
    /// The window function calls of this level, planned before the
    /// expressions are compiled (keyed by the call as parsed), and the
    /// column holding each one's value (`plan/window.rs`).
    pub windows: Vec<(ast::Function, usize)>,
}

impl Scope {
    /// The columns `*` lists, in order: every column (or the USING
    /// order of [`Scope::star`]) but the system columns.
    pub fn star_columns(&self) -> Vec<usize> {
        let all = match &self.star {
            Some(star) => star.clone(),
            None => (0..self.cols.len()).collect(),
        };
        all.into_iter().filter(|i| !self.system.contains(i)).collect()
    }

    /// Resolves `[qual.]name` to a column position.
    pub fn resolve(&self, qual: Option<&str>, name: &str) -> Result<usize, SqlError> {
        resolve_in(&self.cols, qual, name, if qual.is_none() { &self.hidden } else { &[] })
    }
}

/// Resolves `[qual.]name` among `cols` but those at `skip`: its position, `42702` when two
/// columns match, `42P01`/`42703` when none does.
pub(crate) fn resolve_in(cols: &[ScopeCol], qual: Option<&str>, name: &str, skip: &[usize]) -> Result<usize, SqlError> {
    let mut found = None;
    for (i, c) in cols.iter().enumerate() {
        if c.name == name && qual.is_none_or(|q| q == c.qual) && !skip.contains(&i) {
            if found.is_some() {
                return Err(SqlError::new(
                    SqlState::AMBIGUOUS_COLUMN,
                    format!("column reference \"{name}\" is ambiguous"),
                ));
            }
            found = Some(i);
        }
    }
    found.ok_or_else(|| match qual {
        Some(q) if !cols.iter().any(|c| c.qual == q) => {
            SqlError::new(SqlState::UNDEFINED_TABLE, format!("missing FROM-clause entry for table \"{q}\""))
        }
        Some(q) => SqlError::new(SqlState::UNDEFINED_COLUMN, format!("column {q}.{name} does not exist")),
        None => SqlError::new(SqlState::UNDEFINED_COLUMN, format!("column \"{name}\" does not exist")),
    })
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Mod,
    /// `||`
    Concat,
    /// `=`
    Eq,
    /// `<>`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

/// Aggregate functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggKind {
    /// `count(*)`
    CountStar,
    /// `count(x)`
    Count,
    /// `sum(x)`
    Sum,
    /// `min(x)`
    Min,
    /// `max(x)`
    Max,
    /// `avg(x)`
    Avg,
    /// `string_agg(x, delimiter)`: the non-NULL values' text, each after
    /// the first preceded by its row's delimiter.
    StringAgg,
    /// `array_agg(x)`: every value, NULLs included, as an array.
    ArrayAgg,
    /// `bool_and(x)` (`every`): true when every non-NULL value is.
    BoolAnd,
    /// `bool_or(x)`: true when some non-NULL value is.
    BoolOr,
}

/// One aggregate call of a query.
#[derive(Clone, Debug)]
pub struct AggSpec {
    /// Which aggregate.
    pub kind: AggKind,
    /// Its argument (none for `count(*)`).
    pub arg: Option<Expr>,
    /// `string_agg`'s delimiter.
    pub delim: Option<Expr>,
    /// `FILTER (WHERE …)`.
    pub filter: Option<Expr>,
    /// `DISTINCT`.
    pub distinct: bool,
    /// Its own ORDER BY: key, descending, NULLs first.
    pub order: Vec<(Expr, bool, bool)>,
    /// Result type.
    pub ty: SqlType,
    /// The argument's type (`count(*)`: [`SqlType::Unknown`]).
    pub arg_ty: SqlType,
}

/// A compiled expression. Types are resolved by the compiler: both
/// operands of a [`Expr::Bin`] have been brought to one type (PostgreSQL's
/// implicit casts made explicit as [`Expr::Cast`]s), so evaluation only
/// checks ranges.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A column of the row.
    Col(usize),
    /// A constant.
    Const(Datum),
    /// `$n` (0-based here).
    Param(usize),
    /// A binary operation on operands of the given type (for arithmetic
    /// also the result's type, whose range is checked: `22003`).
    Bin(BinOp, SqlType, Box<Expr>, Box<Expr>),
    /// `AND`.
    And(Box<Expr>, Box<Expr>),
    /// `OR`.
    Or(Box<Expr>, Box<Expr>),
    /// `NOT`.
    Not(Box<Expr>),
    /// Unary minus of a value of the given type.
    Neg(Box<Expr>, SqlType),
    /// `IS [NOT] NULL` (true = IS NOT NULL).
    IsNull(Box<Expr>, bool),
    /// `IS [NOT] TRUE/FALSE`: (expr, value tested, negated).
    IsBool(Box<Expr>, bool, bool),
    /// A cast from the first type to the second (explicit casts cut
    /// strings to a `char(n)`/`varchar(n)` length; a `character(n)` loses
    /// its trailing blanks when cast to another string type).
    Cast(Box<Expr>, SqlType, SqlType),
    /// A call of a registered function, its arguments resolved against
    /// the definition's signature.
    Func(&'static FuncDef, Vec<Expr>),
    /// The `n`th aggregate's result.
    Agg(usize),
    /// `x [NOT] IN (…)`.
    InList(Box<Expr>, Vec<Expr>, bool),
    /// `CASE [operand] WHEN … THEN … [ELSE …] END`.
    Case(Option<Box<Expr>>, Vec<(Expr, Expr)>, Option<Box<Expr>>),
    /// `x [NOT] LIKE pattern`.
    Like(Box<Expr>, Box<Expr>, bool),
    /// The `n`th value captured from the enclosing query's row (a
    /// correlated subquery's outer reference, PostgreSQL's `PARAM_EXEC`).
    Outer(usize),
    /// A subquery in an expression: `EXISTS`, scalar, `IN`/`ANY`/`ALL`.
    SubLink(Box<SubLink>),
    /// `ARRAY[x, …]`: the elements, each of the array's element type.
    Array(Vec<Expr>),
    /// `x op ANY|ALL (array)`: the comparison, its operand type, the
    /// array's element type, `x`, the array, and true for ANY.
    Quantified(BinOp, SqlType, SqlType, Box<Expr>, Box<Expr>, bool),
    /// `x ~ pattern` and its three siblings.
    Regex(Box<regex::RegexMatch>),
}

/// What evaluation needs besides the row.
pub struct EvalEnv<'a> {
    /// Parameter values.
    pub params: &'a [Datum],
    /// Aggregate results of the current group.
    pub aggs: &'a [Datum],
    /// Session services.
    pub services: &'a mut dyn Services,
    /// The values a correlated subquery captured from the enclosing row
    /// ([`Expr::Outer`]); empty at the top level.
    pub outer: &'a [Datum],
    /// The engine session, for subqueries; `None` where the session is
    /// busy (inside an engine callback) or not at hand.
    pub session: Option<&'a mut turnstile_engine::Session>,
}

/// Session-level state functions read or change.
pub trait Services {
    /// `pg_backend_pid()`.
    fn pid(&self) -> i32;
    /// The statement's start (`now()`).
    fn statement_timestamp(&self) -> i64;
    /// A uniform random number in [0, 1).
    fn random(&mut self) -> f64;
    /// `current_setting(name)`.
    fn setting(&self, name: &str) -> Result<Option<String>, SqlError>;
    /// `set_config(name, value, is_local)`: `is_local` lasts until the
    /// transaction block ends (`SET LOCAL`).
    fn set_setting(&mut self, name: &str, value: &str, local: bool) -> Result<String, SqlError>;
    /// `pg_cancel_backend(pid)` (`terminate` false) and
    /// `pg_terminate_backend(pid, timeout)`: `false` with a warning when
    /// `pid` is not a backend; with a timeout, `false` with a warning when
    /// the backend has not ended within it.
    fn signal_backend(&mut self, pid: i32, terminate: bool, timeout_ms: i64) -> Result<bool, SqlError>;
    /// The cancel flag checked by long loops and `pg_sleep`.
    fn cancel_flag(&self) -> &AtomicBool;
    /// The session's database name.
    fn database(&self) -> &str;
    /// `pg_relation_size(name)`: bytes in the relation's main fork (0 for
    /// a relation without storage, as for a partitioned table); `42P01`
    /// for an unknown relation.
    fn relation_size(&self, name: &str) -> Result<i64, SqlError>;
    /// The session's user name.
    fn user(&self) -> &str;
    /// What every session shares (views read it).
    fn shared(&self) -> &crate::Shared;
    /// Every setting's name and value, as `SHOW` prints it (`pg_settings`).
    fn settings(&self) -> Vec<(String, String)>;
    /// The engine's sequences, this session's side of them, and the
    /// session's database (`nextval` and the other sequence functions).
    fn sequences(&mut self) -> (&crate::sequence::Sequences, &mut crate::sequence::SeqSession, u32);
    /// Every SQL function (the registry: `pg_proc`, `regproc`).
    fn functions(&self) -> &'static [&'static FuncDef];
}

/// Compile-time context.
pub struct Compiler<'a> {
    /// The row's columns.
    pub scope: &'a Scope,
    /// Types of `$n` parameters (grown and inferred while compiling).
    pub params: &'a mut Vec<SqlType>,
    /// Where aggregates go, if they are allowed here.
    pub aggs: Option<&'a mut Vec<AggSpec>>,
}

pub(super) fn syntax(msg: impl Into<String>) -> SqlError {
    SqlError::new(SqlState::SYNTAX_ERROR, msg)
}

/// The lowercase (unquoted) or exact (quoted) name of an identifier.
pub fn ident_name(i: &ast::Ident) -> String {
    if i.quote_style.is_some() {
        i.value.clone()
    } else {
        i.value.to_ascii_lowercase()
    }
}

/// The last part of an object name, lowercased unless quoted; `pg_catalog.`
/// and `public.` prefixes are accepted.
pub fn object_name(n: &ast::ObjectName) -> Result<String, SqlError> {
    let parts: Vec<String> = n.0.iter().filter_map(|p| p.as_ident().map(ident_name)).collect();
    match parts.as_slice() {
        [one] => Ok(one.clone()),
        [schema, one] if schema == "pg_catalog" || schema == "public" => Ok(one.clone()),
        _ => Err(SqlError::new(SqlState::INVALID_SCHEMA_NAME, format!("schema of \"{n}\" does not exist"))),
    }
}

/// Parses a type name as PostgreSQL writes it.
pub fn parse_type_name(text: &str) -> Result<SqlType, SqlError> {
    let t = fold_type_name(text.trim());
    let t = t.strip_prefix("pg_catalog.").unwrap_or(&t);
    // `text[]`, `int4[3]`, `_text`: the array of the element type.
    let elem = match t.strip_suffix(']').and_then(|r| r.rsplit_once('[')) {
        Some((base, dim)) if dim.chars().all(|c| c.is_ascii_digit()) => Some(parse_type_name(base)?),
        _ => match t.strip_prefix('_') {
            Some(base) if !base.is_empty() && base != "_" => parse_type_name(base).ok(),
            _ => None,
        },
    };
    if let Some(e) = elem {
        return SqlType::array_of(e).ok_or_else(|| SqlError::unsupported(&format!("arrays of type {}", e.name())));
    }
    let (base, arg, arg2) = match t.split_once('(') {
        Some((b, rest)) => {
            let inner = rest.trim_end_matches(')');
            let (n, s) = inner.split_once(',').map_or((inner, None), |(n, s)| (n, Some(s.trim())));
            let n = n.trim().parse::<u32>().map_err(|_| syntax(format!("syntax error at or near \"{inner}\"")))?;
            let s = s.map(|s| s.parse::<u32>().map_err(|_| syntax(format!("syntax error at or near \"{s}\""))));
            (b.trim(), Some(n), s.transpose()?)
        }
        None => (t, None, None),
    };
    let invalid_mod = |msg: String| Err(SqlError::new(SqlState::INVALID_PARAMETER_VALUE, msg));
    if arg2.is_some() && !matches!(base, "numeric" | "decimal") {
        return Err(syntax(format!("type modifier is not allowed for type \"{base}\"")));
    }
    Ok(match base {
        "bool" | "boolean" => SqlType::Bool,
        "int2" | "smallint" => SqlType::Int2,
        "int" | "int4" | "integer" | "serial" => SqlType::Int4,
        "int8" | "bigint" | "bigserial" => SqlType::Int8,
        "numeric" | "decimal" => match arg {
            None => SqlType::Numeric(None),
            Some(p) if p == 0 || p > u32::from(numeric::MAX_PRECISION) => {
                return invalid_mod(format!("NUMERIC precision {p} must be between 1 and 1000"))
            }
            Some(p) => {
                // PostgreSQL 15 allows a scale beyond the precision.
                let sc = arg2.unwrap_or(0);
                if sc > 1000 {
                    return invalid_mod(format!("NUMERIC scale {sc} must be between -1000 and 1000"));
                }
                SqlType::Numeric(Some((p as u16, sc as u16)))
            }
        },
        "float8" | "double precision" => SqlType::Float8,
        "float4" | "real" => SqlType::Float4,
        "float" => match arg {
            Some(p) if p <= 24 => SqlType::Float4,
            _ => SqlType::Float8,
        },
        "date" => SqlType::Date,
        "text" => SqlType::Text,
        "char" | "character" | "bpchar" if arg == Some(0) => {
            return invalid_mod("length for type char must be at least 1".into())
        }
        "varchar" | "character varying" if arg == Some(0) => {
            return invalid_mod("length for type varchar must be at least 1".into())
        }
        "char" | "character" => SqlType::Bpchar(arg.unwrap_or(1)),
        "bpchar" => SqlType::Bpchar(arg.unwrap_or(0)),
        "varchar" | "character varying" => SqlType::Varchar(arg.unwrap_or(0)),
        "name" => SqlType::Name,
        "timestamp" | "timestamp without time zone" => SqlType::Timestamp,
        "timestamptz" | "timestamp with time zone" => SqlType::TimestampTz,
        "oid" => SqlType::Oid,
        "regclass" => SqlType::Reg(RegKind::Class),
        "regtype" => SqlType::Reg(RegKind::Type),
        "regproc" => SqlType::Reg(RegKind::Proc),
        "regnamespace" => SqlType::Reg(RegKind::Namespace),
        "regrole" => SqlType::Reg(RegKind::Role),
        "xid" => SqlType::Xid,
        "bytea" => SqlType::Bytea,
        _ if builtin::is_postgres_type(base) => return Err(SqlError::unsupported(&format!("type {base}"))),
        _ => return Err(SqlError::new(SqlState::UNDEFINED_OBJECT, format!("type \"{base}\" does not exist"))),
    })
}

/// A type name with its unquoted parts folded to lower case and its quoted
/// identifiers unquoted, case kept (`"pg_catalog"."int8"` is
/// `pg_catalog.int8`, as asyncpg writes it).
fn fold_type_name(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                out.push('"');
            }
            ('"', _) => quoted = !quoted,
            (c, true) => out.push(c),
            (c, false) => out.push(c.to_ascii_lowercase()),
        }
    }
    out
}

/// The type two values of a set operation's column or an array's
/// elements are brought to (PostgreSQL's `select_common_type`):
/// the same type, the known one over `unknown`, the higher number type,
/// `text` for two string types, a timestamp over a date.
pub(crate) fn common_type(a: SqlType, b: SqlType) -> Option<SqlType> {
    Some(match (a, b) {
        _ if a == b => a,
        (SqlType::Unknown, t) | (t, SqlType::Unknown) => t,
        _ if a.is_number() && b.is_number() => arith_type(a, b)?,
        _ if a.is_string() && b.is_string() => SqlType::Text,
        (SqlType::Date, t @ (SqlType::Timestamp | SqlType::TimestampTz))
        | (t @ (SqlType::Timestamp | SqlType::TimestampTz), SqlType::Date) => t,
        (SqlType::Timestamp, SqlType::TimestampTz) | (SqlType::TimestampTz, SqlType::Timestamp) => SqlType::TimestampTz,
        _ => return None,
    })
}

/// The rank of a number type in PostgreSQL's implicit-cast chain
/// `int2 → int4 → int8 → numeric → float4 → float8`.
fn number_rank(t: SqlType) -> Option<u8> {
    Some(match t {
        SqlType::Int2 => 0,
        SqlType::Int4 => 1,
        SqlType::Int8 | SqlType::Oid | SqlType::Xid | SqlType::Reg(_) => 2,
        SqlType::Numeric(_) => 3,
        SqlType::Float4 => 4,
        SqlType::Float8 => 5,
        _ => return None,
    })
}

/// Whether PostgreSQL casts `from` to `to` implicitly (`pg_cast`'s
/// `castcontext = 'i'`, for the types turnstile has): up the number chain,
/// among string types, `date → timestamp → timestamptz`, and from
/// `unknown` to anything.
pub fn implicit_cast(from: SqlType, to: SqlType) -> bool {
    if from == to || from == SqlType::Unknown {
        return true;
    }
    match (number_rank(from), number_rank(to)) {
        (Some(a), Some(b)) => return a <= b,
        (None, None) => {}
        _ => return false,
    }
    (from.is_string() && to.is_string())
        || matches!(
            (from, to),
            (SqlType::Date, SqlType::Timestamp | SqlType::TimestampTz) | (SqlType::Timestamp, SqlType::TimestampTz)
        )
        || std::mem::discriminant(&from) == std::mem::discriminant(&to)
}

/// The type both operands of an arithmetic operator are brought to (and
/// the result's): the higher of the two in the number chain, except that
/// `real` with anything but `real` is computed in `double precision`, as
/// PostgreSQL's operator resolution picks the preferred type. `None` when
/// one side is not a number.
pub(crate) fn arith_type(a: SqlType, b: SqlType) -> Option<SqlType> {
    let (a, b) = match (a, b) {
        (SqlType::Unknown, SqlType::Unknown) => return None,
        (SqlType::Unknown, t) | (t, SqlType::Unknown) => (t, t),
        other => other,
    };
    let (ra, rb) = (number_rank(a)?, number_rank(b)?);
    Some(match (a, b) {
        (SqlType::Float4, SqlType::Float4) => SqlType::Float4,
        _ if ra.max(rb) >= 4 => SqlType::Float8,
        _ if ra.max(rb) == 3 => SqlType::Numeric(None),
        (SqlType::Oid | SqlType::Xid | SqlType::Reg(_), _) | (_, SqlType::Oid | SqlType::Xid | SqlType::Reg(_)) => {
            SqlType::Int8
        }
        _ => {
            if ra >= rb {
                a
            } else {
                b
            }
        }
    })
}

pub(super) fn numeric(t: SqlType) -> bool {
    t.is_number()
}

pub(super) fn is_ts(t: SqlType) -> bool {
    matches!(t, SqlType::Timestamp | SqlType::TimestampTz | SqlType::Date)
}
