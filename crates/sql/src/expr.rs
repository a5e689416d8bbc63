//! Expressions: compiled once from sqlparser's AST against a [`Scope`]
//! (types resolved, parameters typed), evaluated per row.

use crate::error::SqlError;
use crate::sync::atomic::{AtomicBool, Ordering};
use crate::value::{Datum, SqlType};
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

/// The columns of the row an expression is evaluated on.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    /// Columns in row order.
    pub cols: Vec<ScopeCol>,
}

impl Scope {
    /// Resolves `[qual.]name` to a column position.
    pub fn resolve(&self, qual: Option<&str>, name: &str) -> Result<usize, SqlError> {
        let mut found = None;
        for (i, c) in self.cols.iter().enumerate() {
            if c.name == name && qual.is_none_or(|q| q == c.qual) {
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
            Some(q) if !self.cols.iter().any(|c| c.qual == q) => {
                SqlError::new(SqlState::UNDEFINED_TABLE, format!("missing FROM-clause entry for table \"{q}\""))
            }
            Some(q) => SqlError::new(SqlState::UNDEFINED_COLUMN, format!("column {q}.{name} does not exist")),
            None => SqlError::new(SqlState::UNDEFINED_COLUMN, format!("column \"{name}\" does not exist")),
        })
    }
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// Scalar functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    /// `random()`
    Random,
    /// `repeat(text, int)`
    Repeat,
    /// `md5(text)`
    Md5,
    /// `now()`, `CURRENT_TIMESTAMP`
    Now,
    /// `pg_sleep(seconds)`
    PgSleep,
    /// `set_config(name, value, is_local)`
    SetConfig,
    /// `current_setting(name [, missing_ok])`
    CurrentSetting,
    /// `version()`
    Version,
    /// `pg_backend_pid()`
    BackendPid,
    /// `pg_cancel_backend(pid)`
    CancelBackend,
    /// `pg_terminate_backend(pid [, timeout])`
    TerminateBackend,
    /// `pg_relation_size(rel)`: bytes of the relation's main fork.
    RelationSize,
    /// `coalesce(…)`
    Coalesce,
    /// `length(text)`
    Length,
    /// `lower(text)`
    Lower,
    /// `upper(text)`
    Upper,
    /// `abs(x)`
    Abs,
    /// `current_database()`
    CurrentDatabase,
    /// `current_user`, `session_user`
    CurrentUser,
    /// `left(text, n)`
    Left,
    /// `right(text, n)`
    Right,
    /// `substr(text, from [, count])`
    Substr,
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
}

/// One aggregate call of a query.
#[derive(Clone, Debug)]
pub struct AggSpec {
    /// Which aggregate.
    pub kind: AggKind,
    /// Its argument (none for `count(*)`).
    pub arg: Option<Expr>,
    /// `FILTER (WHERE …)`.
    pub filter: Option<Expr>,
    /// `DISTINCT`.
    pub distinct: bool,
    /// Result type.
    pub ty: SqlType,
}

/// A compiled expression.
#[derive(Clone, Debug)]
pub enum Expr {
    /// A column of the row.
    Col(usize),
    /// A constant.
    Const(Datum),
    /// `$n` (0-based here).
    Param(usize),
    /// A binary operation on values of the given operand type.
    Bin(BinOp, Box<Expr>, Box<Expr>),
    /// `AND`.
    And(Box<Expr>, Box<Expr>),
    /// `OR`.
    Or(Box<Expr>, Box<Expr>),
    /// `NOT`.
    Not(Box<Expr>),
    /// Unary minus.
    Neg(Box<Expr>),
    /// `IS [NOT] NULL` (true = IS NOT NULL).
    IsNull(Box<Expr>, bool),
    /// `IS [NOT] TRUE/FALSE`: (expr, value tested, negated).
    IsBool(Box<Expr>, bool, bool),
    /// A cast.
    Cast(Box<Expr>, SqlType),
    /// A function call.
    Func(Func, Vec<Expr>),
    /// The `n`th aggregate's result.
    Agg(usize),
    /// `x [NOT] IN (…)`.
    InList(Box<Expr>, Vec<Expr>, bool),
    /// `CASE [operand] WHEN … THEN … [ELSE …] END`.
    Case(Option<Box<Expr>>, Vec<(Expr, Expr)>, Option<Box<Expr>>),
    /// `x [NOT] LIKE pattern`.
    Like(Box<Expr>, Box<Expr>, bool),
}

/// What evaluation needs besides the row.
pub struct EvalEnv<'a> {
    /// Parameter values.
    pub params: &'a [Datum],
    /// Aggregate results of the current group.
    pub aggs: &'a [Datum],
    /// Session services.
    pub services: &'a mut dyn Services,
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

fn syntax(msg: impl Into<String>) -> SqlError {
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
    let t = text.trim().to_ascii_lowercase();
    let t = t.strip_prefix("pg_catalog.").unwrap_or(&t);
    let (base, arg) = match t.split_once('(') {
        Some((b, rest)) => (b.trim(), rest.trim_end_matches(')').trim().parse::<u32>().ok()),
        None => (t, None),
    };
    Ok(match base {
        "bool" | "boolean" => SqlType::Bool,
        "int2" | "smallint" => SqlType::Int2,
        "int" | "int4" | "integer" | "serial" => SqlType::Int4,
        "int8" | "bigint" | "bigserial" => SqlType::Int8,
        "numeric" | "decimal" => SqlType::Numeric,
        "float8" | "double precision" | "float" | "real" | "float4" => SqlType::Float8,
        "text" => SqlType::Text,
        "char" | "character" | "bpchar" => SqlType::Bpchar(arg.unwrap_or(1)),
        "varchar" | "character varying" => SqlType::Varchar(arg.unwrap_or(0)),
        "name" => SqlType::Name,
        "timestamp" | "timestamp without time zone" => SqlType::Timestamp,
        "timestamptz" | "timestamp with time zone" => SqlType::TimestampTz,
        "oid" | "regclass" => SqlType::Oid,
        "xid" => SqlType::Xid,
        _ => return Err(SqlError::new(SqlState::UNDEFINED_OBJECT, format!("type \"{base}\" does not exist"))),
    })
}

/// The numeric result type of an arithmetic operation.
fn arith_type(a: SqlType, b: SqlType) -> SqlType {
    use SqlType::*;
    match (a, b) {
        (Float8, _) | (_, Float8) => Float8,
        (Numeric, _) | (_, Numeric) => Numeric,
        (Int8, _) | (_, Int8) => Int8,
        (Unknown, t) | (t, Unknown) if t.is_integer() => t,
        _ => Int4,
    }
}

impl Compiler<'_> {
    fn param(&mut self, n: usize, hint: Option<SqlType>) -> (Expr, SqlType) {
        if self.params.len() < n {
            self.params.resize(n, SqlType::Unknown);
        }
        let slot = &mut self.params[n - 1];
        if *slot == SqlType::Unknown {
            if let Some(h) = hint.filter(|h| *h != SqlType::Unknown) {
                *slot = match h {
                    SqlType::Bpchar(_) | SqlType::Varchar(_) | SqlType::Name => SqlType::Text,
                    other => other,
                };
            }
        }
        (Expr::Param(n - 1), *slot)
    }

    /// Compiles `e`; `hint` types an untyped literal or parameter.
    pub fn compile(&mut self, e: &ast::Expr, hint: Option<SqlType>) -> Result<(Expr, SqlType), SqlError> {
        use ast::Expr as A;
        Ok(match e {
            A::Identifier(i) => {
                let name = ident_name(i);
                match self.scope.resolve(None, &name) {
                    Ok(c) => (Expr::Col(c), self.scope.cols[c].ty),
                    Err(err) => match name.as_str() {
                        "current_timestamp" | "localtimestamp" => (Expr::Func(Func::Now, vec![]), SqlType::TimestampTz),
                        "current_user" | "session_user" | "user" => {
                            (Expr::Func(Func::CurrentUser, vec![]), SqlType::Name)
                        }
                        _ => return Err(err),
                    },
                }
            }
            A::CompoundIdentifier(parts) => {
                let names: Vec<String> = parts.iter().map(ident_name).collect();
                let (q, n) = match names.as_slice() {
                    [q, n] => (q.as_str(), n.as_str()),
                    [_, q, n] => (q.as_str(), n.as_str()),
                    _ => return Err(SqlError::unsupported(&format!("the column reference {e}"))),
                };
                let c = self.scope.resolve(Some(q), n)?;
                (Expr::Col(c), self.scope.cols[c].ty)
            }
            A::Value(v) => self.literal(&v.value, hint)?,
            A::Nested(inner) => self.compile(inner, hint)?,
            A::BinaryOp { left, op, right } => self.binary(left, op, right)?,
            A::UnaryOp { op, expr } => match op {
                ast::UnaryOperator::Not => (Expr::Not(Box::new(self.boolean(expr)?)), SqlType::Bool),
                ast::UnaryOperator::Minus => {
                    let (x, t) = self.compile(expr, hint)?;
                    match x {
                        Expr::Const(Datum::Int(v)) => (Expr::Const(Datum::Int(-v)), t),
                        Expr::Const(Datum::Float(v)) => (Expr::Const(Datum::Float(-v)), t),
                        x => (Expr::Neg(Box::new(x)), t),
                    }
                }
                ast::UnaryOperator::Plus => self.compile(expr, hint)?,
                _ => return Err(SqlError::unsupported(&format!("the operator {op}"))),
            },
            A::IsNull(x) => (Expr::IsNull(Box::new(self.compile(x, None)?.0), false), SqlType::Bool),
            A::IsNotNull(x) => (Expr::IsNull(Box::new(self.compile(x, None)?.0), true), SqlType::Bool),
            A::IsTrue(x) => (Expr::IsBool(Box::new(self.boolean(x)?), true, false), SqlType::Bool),
            A::IsNotTrue(x) => (Expr::IsBool(Box::new(self.boolean(x)?), true, true), SqlType::Bool),
            A::IsFalse(x) => (Expr::IsBool(Box::new(self.boolean(x)?), false, false), SqlType::Bool),
            A::IsNotFalse(x) => (Expr::IsBool(Box::new(self.boolean(x)?), false, true), SqlType::Bool),
            A::Cast { expr, data_type, .. } => {
                let ty = parse_type_name(&data_type.to_string())?;
                let (x, _) = self.compile(expr, Some(ty))?;
                match x {
                    Expr::Const(d) => (Expr::Const(d.cast(ty)?), ty),
                    x => (Expr::Cast(Box::new(x), ty), ty),
                }
            }
            A::TypedString(ts) => {
                let ty = parse_type_name(&ts.data_type.to_string())?;
                let text = match &ts.value.value {
                    ast::Value::SingleQuotedString(s) => s.clone(),
                    other => other.to_string(),
                };
                (Expr::Const(Datum::parse(&text, ty)?), ty)
            }
            A::In { expr, target: ast::InTarget::List(list), negated, .. } => {
                let (x, t) = self.compile(expr, None)?;
                let items = list.iter().map(|i| self.compile(i, Some(t)).map(|c| c.0)).collect::<Result<_, _>>()?;
                (Expr::InList(Box::new(x), items, *negated), SqlType::Bool)
            }
            A::Between { expr, negated, low, high } => {
                let (x, t) = self.compile(expr, None)?;
                let (lo, _) = self.compile(low, Some(t))?;
                let (hi, _) = self.compile(high, Some(t))?;
                let both = Expr::And(
                    Box::new(Expr::Bin(BinOp::Ge, Box::new(x.clone()), Box::new(lo))),
                    Box::new(Expr::Bin(BinOp::Le, Box::new(x), Box::new(hi))),
                );
                (if *negated { Expr::Not(Box::new(both)) } else { both }, SqlType::Bool)
            }
            A::Like { negated, expr, pattern, escape_char: None, any: false } => {
                let (x, _) = self.compile(expr, Some(SqlType::Text))?;
                let (p, _) = self.compile(pattern, Some(SqlType::Text))?;
                (Expr::Like(Box::new(x), Box::new(p), *negated), SqlType::Bool)
            }
            A::Case { operand, conditions, else_result, .. } => {
                let op = match operand {
                    Some(o) => Some(Box::new(self.compile(o, None)?.0)),
                    None => None,
                };
                let mut ty = SqlType::Unknown;
                let mut whens = Vec::new();
                for w in conditions {
                    let cond =
                        if op.is_some() { self.compile(&w.condition, None)?.0 } else { self.boolean(&w.condition)? };
                    let (r, t) = self.compile(&w.result, hint)?;
                    if ty == SqlType::Unknown {
                        ty = t;
                    }
                    whens.push((cond, r));
                }
                let els = match else_result {
                    Some(e) => Some(Box::new(self.compile(e, Some(ty))?.0)),
                    None => None,
                };
                (Expr::Case(op, whens, els), if ty == SqlType::Unknown { SqlType::Text } else { ty })
            }
            A::Function(f) => self.function(f)?,
            A::Substring { expr, substring_from, substring_for, .. } => {
                let mut args = vec![self.compile(expr, Some(SqlType::Text))?.0];
                let from = match substring_from {
                    Some(f) => self.compile(f, Some(SqlType::Int4))?.0,
                    None => Expr::Const(Datum::Int(1)),
                };
                args.push(from);
                if let Some(n) = substring_for {
                    args.push(self.compile(n, Some(SqlType::Int4))?.0);
                }
                (Expr::Func(Func::Substr, args), SqlType::Text)
            }
            A::Subquery(_) | A::Exists { .. } => {
                return Err(SqlError::unsupported("a subquery"));
            }
            other => return Err(SqlError::unsupported(&format!("the expression {other}"))),
        })
    }

    /// Compiles a boolean condition.
    pub fn boolean(&mut self, e: &ast::Expr) -> Result<Expr, SqlError> {
        let (x, t) = self.compile(e, Some(SqlType::Bool))?;
        match t {
            SqlType::Bool | SqlType::Unknown => Ok(x),
            other => Err(SqlError::new(
                SqlState::DATATYPE_MISMATCH,
                format!("argument of WHERE must be type boolean, not type {}", other.name()),
            )),
        }
    }

    fn literal(&mut self, v: &ast::Value, hint: Option<SqlType>) -> Result<(Expr, SqlType), SqlError> {
        Ok(match v {
            ast::Value::Number(n, _) => {
                if let Ok(i) = n.parse::<i32>() {
                    (Expr::Const(Datum::Int(i.into())), SqlType::Int4)
                } else if let Ok(i) = n.parse::<i64>() {
                    (Expr::Const(Datum::Int(i)), SqlType::Int8)
                } else if let Ok(i) = n.parse::<i128>() {
                    (Expr::Const(Datum::Numeric(i)), SqlType::Numeric)
                } else {
                    let f = n.parse::<f64>().map_err(|_| syntax(format!("invalid number {n}")))?;
                    (Expr::Const(Datum::Float(f)), SqlType::Numeric)
                }
            }
            ast::Value::SingleQuotedString(s)
            | ast::Value::EscapedStringLiteral(s)
            | ast::Value::DollarQuotedString(ast::DollarQuotedString { value: s, .. }) => match hint {
                Some(t) if t != SqlType::Unknown => (Expr::Const(Datum::parse(s, t)?), t),
                _ => (Expr::Const(Datum::Text(s.clone())), SqlType::Unknown),
            },
            ast::Value::Boolean(b) => (Expr::Const(Datum::Bool(*b)), SqlType::Bool),
            ast::Value::Null => (Expr::Const(Datum::Null), hint.unwrap_or(SqlType::Unknown)),
            ast::Value::Placeholder(p) => {
                let n = p
                    .strip_prefix('$')
                    .and_then(|n| n.parse::<usize>().ok())
                    .filter(|n| (1..=65535).contains(n))
                    .ok_or_else(|| syntax(format!("syntax error at or near \"{p}\"")))?;
                self.param(n, hint)
            }
            other => return Err(SqlError::unsupported(&format!("the literal {other}"))),
        })
    }

    fn binary(&mut self, l: &ast::Expr, op: &ast::BinaryOperator, r: &ast::Expr) -> Result<(Expr, SqlType), SqlError> {
        use ast::BinaryOperator as B;
        if matches!(op, B::And | B::Or) {
            let a = Box::new(self.boolean(l)?);
            let b = Box::new(self.boolean(r)?);
            return Ok((if *op == B::And { Expr::And(a, b) } else { Expr::Or(a, b) }, SqlType::Bool));
        }
        let bop = match op {
            B::Plus => BinOp::Add,
            B::Minus => BinOp::Sub,
            B::Multiply => BinOp::Mul,
            B::Divide => BinOp::Div,
            B::Modulo => BinOp::Mod,
            B::StringConcat => BinOp::Concat,
            B::Eq => BinOp::Eq,
            B::NotEq => BinOp::Ne,
            B::Lt => BinOp::Lt,
            B::LtEq => BinOp::Le,
            B::Gt => BinOp::Gt,
            B::GtEq => BinOp::Ge,
            other => return Err(SqlError::unsupported(&format!("the operator {other}"))),
        };
        let concat = bop == BinOp::Concat;
        let (mut a, mut ta) = self.compile(l, concat.then_some(SqlType::Text))?;
        let (b, tb) = self.compile(r, Some(if concat { SqlType::Text } else { ta }))?;
        if ta == SqlType::Unknown && tb != SqlType::Unknown && !concat {
            // Re-type the left side from the right (`$1 = col`, `'5' < col`).
            (a, ta) = self.compile(l, Some(tb))?;
        }
        let ty = match bop {
            BinOp::Concat => SqlType::Text,
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod => {
                if ta == SqlType::Timestamp || ta == SqlType::TimestampTz {
                    return Err(SqlError::unsupported("timestamp arithmetic"));
                }
                let t = arith_type(ta, tb);
                if !(ta.is_integer() || matches!(ta, SqlType::Float8 | SqlType::Numeric | SqlType::Unknown))
                    || !(tb.is_integer() || matches!(tb, SqlType::Float8 | SqlType::Numeric | SqlType::Unknown))
                {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!("operator does not exist: {} {} {}", ta.name(), op, tb.name()),
                    ));
                }
                t
            }
            _ => {
                let comparable = ta == tb
                    || ta == SqlType::Unknown
                    || tb == SqlType::Unknown
                    || (numeric(ta) && numeric(tb))
                    || (ta.is_string() && tb.is_string())
                    || (is_ts(ta) && is_ts(tb));
                if !comparable {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!("operator does not exist: {} {} {}", ta.name(), op, tb.name()),
                    ));
                }
                SqlType::Bool
            }
        };
        Ok((Expr::Bin(bop, Box::new(a), Box::new(b)), ty))
    }

    fn function(&mut self, f: &ast::Function) -> Result<(Expr, SqlType), SqlError> {
        let name = object_name(&f.name)?;
        let (args, distinct, star) = match &f.args {
            ast::FunctionArguments::None => (Vec::new(), false, false),
            ast::FunctionArguments::List(list) => {
                let mut args = Vec::new();
                let mut star = false;
                for a in &list.args {
                    match a {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => args.push(e.clone()),
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard) => star = true,
                        other => return Err(SqlError::unsupported(&format!("the function argument {other}"))),
                    }
                }
                if !list.clauses.is_empty() {
                    return Err(SqlError::unsupported(&format!("{name}(…) with ORDER BY or other clauses")));
                }
                (args, matches!(list.duplicate_treatment, Some(ast::DuplicateTreatment::Distinct)), star)
            }
            ast::FunctionArguments::Subquery(_) => return Err(SqlError::unsupported("a subquery")),
        };
        if f.over.is_some() {
            return Err(SqlError::unsupported("window functions"));
        }
        let agg = match name.as_str() {
            "count" if star => Some(AggKind::CountStar),
            "count" => Some(AggKind::Count),
            "sum" => Some(AggKind::Sum),
            "min" => Some(AggKind::Min),
            "max" => Some(AggKind::Max),
            "avg" => Some(AggKind::Avg),
            _ => None,
        };
        if let Some(kind) = agg {
            return self.aggregate(kind, &name, &args, distinct, f.filter.as_deref());
        }
        if f.filter.is_some() {
            return Err(SqlError::new(
                SqlState::WRONG_OBJECT_TYPE,
                format!("FILTER specified, but {name} is not an aggregate function"),
            ));
        }
        if star {
            return Err(syntax(format!("syntax error at or near \"*\" in {name}(*)")));
        }
        let arity = |n: std::ops::RangeInclusive<usize>| -> Result<(), SqlError> {
            if n.contains(&args.len()) {
                Ok(())
            } else {
                Err(SqlError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!("function {name}({}) does not exist", vec!["unknown"; args.len()].join(", ")),
                ))
            }
        };
        let (func, ty, arg_types): (Func, SqlType, Vec<SqlType>) = match name.as_str() {
            "random" => (Func::Random, SqlType::Float8, vec![]),
            "repeat" => (Func::Repeat, SqlType::Text, vec![SqlType::Text, SqlType::Int4]),
            "md5" => (Func::Md5, SqlType::Text, vec![SqlType::Text]),
            "now" | "current_timestamp" | "statement_timestamp" | "transaction_timestamp" => {
                (Func::Now, SqlType::TimestampTz, vec![])
            }
            "pg_sleep" => (Func::PgSleep, SqlType::Text, vec![SqlType::Float8]),
            "set_config" => (Func::SetConfig, SqlType::Text, vec![SqlType::Text, SqlType::Text, SqlType::Bool]),
            "current_setting" => (Func::CurrentSetting, SqlType::Text, vec![SqlType::Text, SqlType::Bool]),
            "version" => (Func::Version, SqlType::Text, vec![]),
            "pg_backend_pid" => (Func::BackendPid, SqlType::Int4, vec![]),
            "pg_cancel_backend" => (Func::CancelBackend, SqlType::Bool, vec![SqlType::Int4]),
            "pg_terminate_backend" => (Func::TerminateBackend, SqlType::Bool, vec![SqlType::Int4, SqlType::Int8]),
            "pg_relation_size" | "pg_table_size" => (Func::RelationSize, SqlType::Int8, vec![SqlType::Text]),
            "current_database" => (Func::CurrentDatabase, SqlType::Name, vec![]),
            "current_user" | "session_user" => (Func::CurrentUser, SqlType::Name, vec![]),
            "length" | "char_length" => (Func::Length, SqlType::Int4, vec![SqlType::Text]),
            "lower" => (Func::Lower, SqlType::Text, vec![SqlType::Text]),
            "left" => (Func::Left, SqlType::Text, vec![SqlType::Text, SqlType::Int4]),
            "right" => (Func::Right, SqlType::Text, vec![SqlType::Text, SqlType::Int4]),
            "substr" => (Func::Substr, SqlType::Text, vec![SqlType::Text, SqlType::Int4, SqlType::Int4]),
            "upper" => (Func::Upper, SqlType::Text, vec![SqlType::Text]),
            "abs" | "coalesce" => {
                let (fun, at) = if name == "abs" { (Func::Abs, None) } else { (Func::Coalesce, None) };
                if name == "abs" {
                    arity(1..=1)?;
                } else if args.is_empty() {
                    arity(1..=usize::MAX)?;
                }
                let mut out = Vec::new();
                let mut ty = at.unwrap_or(SqlType::Unknown);
                for a in &args {
                    let (x, t) = self.compile(a, (ty != SqlType::Unknown).then_some(ty))?;
                    if ty == SqlType::Unknown {
                        ty = t;
                    }
                    out.push(x);
                }
                return Ok((Expr::Func(fun, out), if ty == SqlType::Unknown { SqlType::Text } else { ty }));
            }
            "generate_series" => {
                return Err(SqlError::unsupported("generate_series() outside FROM"));
            }
            _ => {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!("function {name}({}) does not exist", vec!["unknown"; args.len()].join(", ")),
                ))
            }
        };
        let min = match func {
            Func::SetConfig => 3,
            Func::CurrentSetting | Func::TerminateBackend => 1,
            Func::Substr => 2,
            _ => arg_types.len(),
        };
        arity(min..=arg_types.len())?;
        let mut out = Vec::new();
        for (a, t) in args.iter().zip(&arg_types) {
            let (x, at) = self.compile(a, Some(*t))?;
            out.push(if at == *t || at == SqlType::Unknown { x } else { Expr::Cast(Box::new(x), *t) });
        }
        Ok((Expr::Func(func, out), ty))
    }

    fn aggregate(
        &mut self,
        kind: AggKind,
        name: &str,
        args: &[ast::Expr],
        distinct: bool,
        filter: Option<&ast::Expr>,
    ) -> Result<(Expr, SqlType), SqlError> {
        if self.aggs.is_none() {
            return Err(SqlError::new(
                SqlState::GROUPING_ERROR,
                format!("aggregate functions are not allowed here ({name})"),
            ));
        }
        let nargs = if kind == AggKind::CountStar { 0 } else { 1 };
        if args.len() != nargs {
            return Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("function {name} with {} arguments does not exist", args.len()),
            ));
        }
        // Arguments and filters are evaluated on input rows: no nested aggregates.
        let saved = self.aggs.take();
        let arg = args.first().map(|a| self.compile(a, None)).transpose();
        let filt = filter.map(|f| self.boolean(f)).transpose();
        self.aggs = saved;
        let arg = arg?;
        let filter = filt?;
        let arg_ty = arg.as_ref().map(|a| a.1);
        let ty = match (kind, arg_ty) {
            (AggKind::CountStar | AggKind::Count, _) => SqlType::Int8,
            (AggKind::Sum, Some(SqlType::Int2 | SqlType::Int4)) => SqlType::Int8,
            (AggKind::Sum, Some(SqlType::Int8)) => SqlType::Numeric,
            (AggKind::Sum, Some(SqlType::Float8)) => SqlType::Float8,
            (AggKind::Sum | AggKind::Avg, Some(SqlType::Numeric)) => SqlType::Numeric,
            (AggKind::Avg, Some(SqlType::Float8)) => SqlType::Float8,
            (AggKind::Avg, Some(t)) if t.is_integer() => SqlType::Numeric,
            (AggKind::Min | AggKind::Max, Some(t)) => t,
            (_, t) => {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!("function {name}({}) does not exist", t.map_or("", |t| t.name())),
                ))
            }
        };
        let aggs =
            self.aggs.as_mut().ok_or_else(|| SqlError::new(SqlState::GROUPING_ERROR, "aggregate not allowed"))?;
        aggs.push(AggSpec { kind, arg: arg.map(|a| a.0), filter, distinct, ty });
        Ok((Expr::Agg(aggs.len() - 1), ty))
    }
}

fn numeric(t: SqlType) -> bool {
    t.is_integer() || matches!(t, SqlType::Float8 | SqlType::Numeric)
}

fn is_ts(t: SqlType) -> bool {
    matches!(t, SqlType::Timestamp | SqlType::TimestampTz)
}

fn truth(d: &Datum) -> Option<bool> {
    match d {
        Datum::Bool(b) => Some(*b),
        Datum::Null => None,
        Datum::Text(s) => Datum::parse(s, SqlType::Bool).ok().and_then(|d| truth(&d)),
        Datum::Int(v) => Some(*v != 0),
        _ => None,
    }
}

fn int_overflow() -> SqlError {
    SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "integer out of range")
}

fn arith(op: BinOp, a: Datum, b: Datum) -> Result<Datum, SqlError> {
    let div0 = || SqlError::new(SqlState::DIVISION_BY_ZERO, "division by zero");
    Ok(match (a, b) {
        (Datum::Null, _) | (_, Datum::Null) => Datum::Null,
        (Datum::Int(x), Datum::Int(y)) => Datum::Int(match op {
            BinOp::Add => x.checked_add(y).ok_or_else(int_overflow)?,
            BinOp::Sub => x.checked_sub(y).ok_or_else(int_overflow)?,
            BinOp::Mul => x.checked_mul(y).ok_or_else(int_overflow)?,
            BinOp::Div => x.checked_div(y).ok_or_else(|| if y == 0 { div0() } else { int_overflow() })?,
            _ => x.checked_rem(y).ok_or_else(|| if y == 0 { div0() } else { int_overflow() })?,
        }),
        (a, b) if matches!(a, Datum::Numeric(_)) || matches!(b, Datum::Numeric(_)) => {
            let to = |d: &Datum| match d {
                Datum::Int(v) => Some(i128::from(*v)),
                Datum::Numeric(v) => Some(*v),
                _ => None,
            };
            match (to(&a), to(&b)) {
                (Some(x), Some(y)) => Datum::Numeric(match op {
                    BinOp::Add => x.checked_add(y).ok_or_else(int_overflow)?,
                    BinOp::Sub => x.checked_sub(y).ok_or_else(int_overflow)?,
                    BinOp::Mul => x.checked_mul(y).ok_or_else(int_overflow)?,
                    BinOp::Div => x.checked_div(y).ok_or_else(div0)?,
                    _ => x.checked_rem(y).ok_or_else(div0)?,
                }),
                _ => float_arith(op, &a, &b)?,
            }
        }
        (a, b) => float_arith(op, &a, &b)?,
    })
}

fn float_arith(op: BinOp, a: &Datum, b: &Datum) -> Result<Datum, SqlError> {
    let bad = || SqlError::new(SqlState::UNDEFINED_FUNCTION, "operator does not exist for these operand types");
    let x = a.as_f64().ok_or_else(bad)?;
    let y = b.as_f64().ok_or_else(bad)?;
    Ok(Datum::Float(match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x * y,
        BinOp::Div if y == 0.0 => return Err(SqlError::new(SqlState::DIVISION_BY_ZERO, "division by zero")),
        BinOp::Div => x / y,
        _ => x % y,
    }))
}

fn like(s: &str, p: &str) -> bool {
    let s: Vec<char> = s.chars().collect();
    let p: Vec<char> = p.chars().collect();
    // Iterative wildcard match with backtracking on the last `%`.
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while i < s.len() {
        if j < p.len() && p[j] == '\\' && j + 1 < p.len() && p[j + 1] == s[i] {
            i += 1;
            j += 2;
        } else if j < p.len() && (p[j] == '_' || (p[j] == s[i] && p[j] != '%')) {
            i += 1;
            j += 1;
        } else if j < p.len() && p[j] == '%' {
            star = Some((j, i));
            j += 1;
        } else if let Some((sj, si)) = star {
            j = sj + 1;
            i = si + 1;
            star = Some((sj, si + 1));
        } else {
            return false;
        }
    }
    p[j..].iter().all(|c| *c == '%')
}

/// Version string of `version()` and `server_version`.
pub const VERSION: &str = "PostgreSQL 15.0 (turnstile) on x86_64-pc-linux-gnu, compiled by rustc, 64-bit";

impl Expr {
    /// Evaluates on `row`.
    pub fn eval(&self, row: &[Datum], env: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
        Ok(match self {
            Expr::Col(c) => row.get(*c).cloned().unwrap_or(Datum::Null),
            Expr::Const(d) => d.clone(),
            Expr::Param(n) => env.params.get(*n).cloned().ok_or_else(|| {
                SqlError::new(SqlState::PROTOCOL_VIOLATION, format!("there is no parameter ${}", n + 1))
            })?,
            Expr::Bin(op, a, b) => {
                let x = a.eval(row, env)?;
                let y = b.eval(row, env)?;
                match op {
                    BinOp::Concat => match (&x, &y) {
                        (Datum::Null, _) | (_, Datum::Null) => Datum::Null,
                        _ => {
                            let mut s = x.to_text(SqlType::Text).unwrap_or_default();
                            y.write_text(SqlType::Text, &mut s);
                            Datum::Text(s)
                        }
                    },
                    BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod => {
                        let x = if let Datum::Text(s) = &x { Datum::parse(s, SqlType::Numeric)? } else { x };
                        let y = if let Datum::Text(s) = &y { Datum::parse(s, SqlType::Numeric)? } else { y };
                        arith(*op, x, y)?
                    }
                    _ => {
                        if x.is_null() || y.is_null() {
                            Datum::Null
                        } else {
                            let (x, y) = unify(x, y)?;
                            let o = x.cmp_sql(&y);
                            Datum::Bool(match op {
                                BinOp::Eq => o.is_eq(),
                                BinOp::Ne => o.is_ne(),
                                BinOp::Lt => o.is_lt(),
                                BinOp::Le => o.is_le(),
                                BinOp::Gt => o.is_gt(),
                                _ => o.is_ge(),
                            })
                        }
                    }
                }
            }
            Expr::And(a, b) => match truth(&a.eval(row, env)?) {
                Some(false) => Datum::Bool(false),
                l => match (l, truth(&b.eval(row, env)?)) {
                    (_, Some(false)) => Datum::Bool(false),
                    (Some(true), Some(true)) => Datum::Bool(true),
                    _ => Datum::Null,
                },
            },
            Expr::Or(a, b) => match truth(&a.eval(row, env)?) {
                Some(true) => Datum::Bool(true),
                l => match (l, truth(&b.eval(row, env)?)) {
                    (_, Some(true)) => Datum::Bool(true),
                    (Some(false), Some(false)) => Datum::Bool(false),
                    _ => Datum::Null,
                },
            },
            Expr::Not(a) => truth(&a.eval(row, env)?).map_or(Datum::Null, |b| Datum::Bool(!b)),
            Expr::Neg(a) => match a.eval(row, env)? {
                Datum::Int(v) => Datum::Int(v.checked_neg().ok_or_else(int_overflow)?),
                Datum::Numeric(v) => Datum::Numeric(-v),
                Datum::Float(f) => Datum::Float(-f),
                Datum::Null => Datum::Null,
                other => arith(
                    BinOp::Sub,
                    Datum::Int(0),
                    Datum::parse(&other.to_text(SqlType::Text).unwrap_or_default(), SqlType::Numeric)?,
                )?,
            },
            Expr::IsNull(a, not) => Datum::Bool(a.eval(row, env)?.is_null() != *not),
            Expr::IsBool(a, want, not) => Datum::Bool((truth(&a.eval(row, env)?) == Some(*want)) != *not),
            Expr::Cast(a, ty) => a.eval(row, env)?.cast(*ty)?,
            Expr::Agg(i) => env.aggs.get(*i).cloned().unwrap_or(Datum::Null),
            Expr::InList(x, list, negated) => {
                let v = x.eval(row, env)?;
                if v.is_null() {
                    Datum::Null
                } else {
                    let mut found = false;
                    let mut saw_null = false;
                    for item in list {
                        let w = item.eval(row, env)?;
                        if w.is_null() {
                            saw_null = true;
                        } else {
                            let (a, b) = unify(v.clone(), w)?;
                            if a.cmp_sql(&b).is_eq() {
                                found = true;
                                break;
                            }
                        }
                    }
                    if found {
                        Datum::Bool(!negated)
                    } else if saw_null {
                        Datum::Null
                    } else {
                        Datum::Bool(*negated)
                    }
                }
            }
            Expr::Case(op, whens, els) => {
                let base = op.as_ref().map(|o| o.eval(row, env)).transpose()?;
                for (cond, result) in whens {
                    let c = cond.eval(row, env)?;
                    let hit = match &base {
                        Some(b) => {
                            !b.is_null() && !c.is_null() && {
                                let (x, y) = unify(b.clone(), c)?;
                                x.cmp_sql(&y).is_eq()
                            }
                        }
                        None => truth(&c) == Some(true),
                    };
                    if hit {
                        return result.eval(row, env);
                    }
                }
                match els {
                    Some(e) => e.eval(row, env)?,
                    None => Datum::Null,
                }
            }
            Expr::Like(x, p, negated) => match (x.eval(row, env)?, p.eval(row, env)?) {
                (Datum::Null, _) | (_, Datum::Null) => Datum::Null,
                (a, b) => Datum::Bool(
                    like(&a.to_text(SqlType::Text).unwrap_or_default(), &b.to_text(SqlType::Text).unwrap_or_default())
                        != *negated,
                ),
            },
            Expr::Func(f, args) => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(a.eval(row, env)?);
                }
                call(*f, vals, env)?
            }
        })
    }

    /// Evaluates a condition: true only for SQL true.
    pub fn test(&self, row: &[Datum], env: &mut EvalEnv<'_>) -> Result<bool, SqlError> {
        Ok(truth(&self.eval(row, env)?) == Some(true))
    }

    /// Whether the expression reads no column and no aggregate (a constant
    /// or parameter expression, evaluable before the scan).
    pub fn is_row_independent(&self) -> bool {
        match self {
            Expr::Col(_) | Expr::Agg(_) => false,
            Expr::Const(_) | Expr::Param(_) => true,
            Expr::Func(f, args) => {
                !matches!(f, Func::Random | Func::PgSleep | Func::SetConfig)
                    && args.iter().all(Expr::is_row_independent)
            }
            Expr::Bin(_, a, b) | Expr::And(a, b) | Expr::Or(a, b) | Expr::Like(a, b, _) => {
                a.is_row_independent() && b.is_row_independent()
            }
            Expr::Not(a) | Expr::Neg(a) | Expr::IsNull(a, _) | Expr::IsBool(a, _, _) | Expr::Cast(a, _) => {
                a.is_row_independent()
            }
            Expr::InList(a, l, _) => a.is_row_independent() && l.iter().all(Expr::is_row_independent),
            Expr::Case(..) => false,
        }
    }
}

/// Brings a text value to the other side's type for comparison.
fn unify(a: Datum, b: Datum) -> Result<(Datum, Datum), SqlError> {
    Ok(match (&a, &b) {
        (Datum::Text(s), Datum::Int(_)) => (Datum::parse(s, SqlType::Int8)?, b),
        (Datum::Int(_), Datum::Text(s)) => {
            let t = Datum::parse(s, SqlType::Int8)?;
            (a, t)
        }
        (Datum::Text(s), Datum::Bool(_)) => (Datum::parse(s, SqlType::Bool)?, b),
        (Datum::Bool(_), Datum::Text(s)) => {
            let t = Datum::parse(s, SqlType::Bool)?;
            (a, t)
        }
        (Datum::Text(s), Datum::Timestamp(_)) => (Datum::parse(s, SqlType::Timestamp)?, b),
        (Datum::Timestamp(_), Datum::Text(s)) => {
            let t = Datum::parse(s, SqlType::Timestamp)?;
            (a, t)
        }
        (Datum::Text(s), Datum::Float(_)) => (Datum::parse(s, SqlType::Float8)?, b),
        (Datum::Float(_), Datum::Text(s)) => {
            let t = Datum::parse(s, SqlType::Float8)?;
            (a, t)
        }
        _ => (a, b),
    })
}

fn text_arg(d: &Datum) -> String {
    d.to_text(SqlType::Text).unwrap_or_default()
}

fn call(f: Func, args: Vec<Datum>, env: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    let strict = !matches!(f, Func::Coalesce | Func::SetConfig | Func::CurrentSetting);
    if strict && args.iter().any(Datum::is_null) {
        return Ok(Datum::Null);
    }
    Ok(match f {
        Func::Random => Datum::Float(env.services.random()),
        Func::Repeat => {
            let s = text_arg(&args[0]);
            let n = match &args[1] {
                Datum::Int(n) => *n,
                other => text_arg(other)
                    .parse::<i64>()
                    .map_err(|_| SqlError::new(SqlState::INVALID_TEXT_REPRESENTATION, "bad repeat count"))?,
            };
            let n = n.max(0) as usize;
            if s.len().saturating_mul(n) > (1 << 28) {
                return Err(SqlError::new(SqlState::PROGRAM_LIMIT_EXCEEDED, "requested length too large"));
            }
            Datum::Text(s.repeat(n))
        }
        Func::Md5 => {
            use md5::Digest;
            Datum::Text(format!("{:x}", md5::Md5::digest(text_arg(&args[0]).as_bytes())))
        }
        Func::Now => Datum::Timestamp(env.services.statement_timestamp()),
        Func::PgSleep => {
            let secs = args[0].as_f64().unwrap_or(0.0).max(0.0);
            let end = std::time::Instant::now() + std::time::Duration::from_secs_f64(secs.min(1e6));
            loop {
                if env.services.cancel_flag().swap(false, Ordering::AcqRel) {
                    return Err(SqlError::new(SqlState::QUERY_CANCELED, "canceling statement due to user request"));
                }
                let now = std::time::Instant::now();
                if now >= end {
                    break;
                }
                std::thread::sleep((end - now).min(std::time::Duration::from_millis(10)));
            }
            Datum::Text(String::new())
        }
        Func::SetConfig => {
            if args[0].is_null() {
                return Err(SqlError::new(SqlState::NULL_VALUE_NOT_ALLOWED, "SET requires parameter name"));
            }
            let local = matches!(args.get(2), Some(Datum::Bool(true)));
            let v = env.services.set_setting(&text_arg(&args[0]), &text_arg(&args[1]), local)?;
            Datum::Text(v)
        }
        Func::CurrentSetting => {
            let missing_ok = matches!(args.get(1), Some(Datum::Bool(true)));
            match env.services.setting(&text_arg(&args[0]))? {
                Some(v) => Datum::Text(v),
                None if missing_ok => Datum::Null,
                None => {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("unrecognized configuration parameter \"{}\"", text_arg(&args[0])),
                    ))
                }
            }
        }
        Func::Version => Datum::Text(VERSION.to_owned()),
        Func::BackendPid => Datum::Int(env.services.pid().into()),
        Func::CancelBackend | Func::TerminateBackend => {
            let int = |d: Option<&Datum>| match d {
                Some(Datum::Int(v)) => Some(*v),
                _ => None,
            };
            match int(args.first()) {
                // PostgreSQL's functions are strict: NULL in, NULL out.
                None => Datum::Null,
                Some(pid) => {
                    let pid = i32::try_from(pid)
                        .map_err(|_| SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "integer out of range"))?;
                    let terminate = f == Func::TerminateBackend;
                    let timeout = if terminate { int(args.get(1)).unwrap_or(0) } else { 0 };
                    Datum::Bool(env.services.signal_backend(pid, terminate, timeout)?)
                }
            }
        }
        Func::RelationSize if args[0].is_null() => Datum::Null,
        Func::RelationSize => Datum::Int(env.services.relation_size(&text_arg(&args[0]))?),
        Func::CurrentDatabase => Datum::Text(env.services.database().to_owned()),
        Func::CurrentUser => Datum::Text(env.services.user().to_owned()),
        Func::Coalesce => args.into_iter().find(|d| !d.is_null()).unwrap_or(Datum::Null),
        Func::Length => Datum::Int(text_arg(&args[0]).trim_end_matches(' ').chars().count() as i64),
        Func::Lower => Datum::Text(text_arg(&args[0]).to_lowercase()),
        Func::Left | Func::Right | Func::Substr => {
            let chars: Vec<char> = text_arg(&args[0]).chars().collect();
            let int = |d: &Datum| match d {
                Datum::Int(v) => Ok(*v),
                other => text_arg(other)
                    .trim()
                    .parse::<i64>()
                    .map_err(|_| SqlError::new(SqlState::INVALID_TEXT_REPRESENTATION, "bad integer")),
            };
            let len = chars.len() as i64;
            let n = int(&args[1])?;
            let (from, to) = match f {
                Func::Left => (0, if n >= 0 { n.min(len) } else { (len + n).max(0) }),
                Func::Right => (if n >= 0 { (len - n).max(0) } else { (-n).min(len) }, len),
                _ => {
                    let start = n - 1;
                    let end = match args.get(2) {
                        Some(c) => {
                            let c = int(c)?;
                            if c < 0 {
                                return Err(SqlError::new(
                                    SqlState::SUBSTRING_ERROR,
                                    "negative substring length not allowed",
                                ));
                            }
                            start.saturating_add(c)
                        }
                        None => len,
                    };
                    (start.clamp(0, len), end.clamp(0, len))
                }
            };
            Datum::Text(chars[from as usize..to.max(from) as usize].iter().collect())
        }
        Func::Upper => Datum::Text(text_arg(&args[0]).to_uppercase()),
        Func::Abs => match &args[0] {
            Datum::Int(v) => Datum::Int(v.checked_abs().ok_or_else(int_overflow)?),
            Datum::Numeric(v) => Datum::Numeric(v.abs()),
            Datum::Float(f) => Datum::Float(f.abs()),
            other => Datum::Float(Datum::parse(&text_arg(other), SqlType::Float8)?.as_f64().unwrap_or(0.0).abs()),
        },
    })
}

/// A running aggregate.
#[derive(Clone, Debug)]
pub struct AggState {
    count: i64,
    acc: Datum,
    seen: Option<std::collections::HashSet<Datum>>,
}

impl AggState {
    /// A fresh state for `spec`.
    pub fn new(spec: &AggSpec) -> AggState {
        AggState { count: 0, acc: Datum::Null, seen: spec.distinct.then(Default::default) }
    }

    /// Folds one input row in.
    pub fn add(&mut self, spec: &AggSpec, row: &[Datum], env: &mut EvalEnv<'_>) -> Result<(), SqlError> {
        if let Some(f) = &spec.filter {
            if !f.test(row, env)? {
                return Ok(());
            }
        }
        let v = match &spec.arg {
            None => {
                self.count += 1;
                return Ok(());
            }
            Some(a) => a.eval(row, env)?,
        };
        if v.is_null() {
            return Ok(());
        }
        if let Some(seen) = &mut self.seen {
            if !seen.insert(v.clone()) {
                return Ok(());
            }
        }
        self.count += 1;
        self.acc = match (spec.kind, std::mem::replace(&mut self.acc, Datum::Null)) {
            (AggKind::Count | AggKind::CountStar, _) => Datum::Null,
            (AggKind::Sum | AggKind::Avg, Datum::Null) => match v {
                Datum::Int(x) => Datum::Numeric(x.into()),
                Datum::Text(s) => Datum::parse(&s, SqlType::Numeric)?,
                other => other,
            },
            (AggKind::Sum | AggKind::Avg, acc) => arith(BinOp::Add, acc, v)?,
            (AggKind::Min, Datum::Null) | (AggKind::Max, Datum::Null) => v,
            (AggKind::Min, acc) => {
                if v.cmp_sql(&acc).is_lt() {
                    v
                } else {
                    acc
                }
            }
            (AggKind::Max, acc) => {
                if v.cmp_sql(&acc).is_gt() {
                    v
                } else {
                    acc
                }
            }
        };
        Ok(())
    }

    /// The aggregate's value.
    pub fn finish(&self, spec: &AggSpec) -> Result<Datum, SqlError> {
        Ok(match spec.kind {
            AggKind::CountStar | AggKind::Count => Datum::Int(self.count),
            AggKind::Min | AggKind::Max => self.acc.clone(),
            AggKind::Sum => match (&self.acc, spec.ty) {
                (Datum::Numeric(v), SqlType::Int8) => Datum::Int(i64::try_from(*v).map_err(|_| int_overflow())?),
                (acc, _) => acc.clone(),
            },
            AggKind::Avg => match &self.acc {
                Datum::Null => Datum::Null,
                acc => {
                    let total = acc.as_f64().unwrap_or(0.0);
                    let avg = total / self.count as f64;
                    if spec.ty == SqlType::Numeric {
                        // numeric avg: print with PostgreSQL's default scale (16+).
                        Datum::Text(format!("{avg:.16}"))
                    } else {
                        Datum::Float(avg)
                    }
                }
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::like;

    #[test]
    fn like_matches_wildcards() {
        assert!(like("pgbench_accounts", "pgbench%"));
        assert!(like("abc", "a_c"));
        assert!(!like("abc", "a_"));
        assert!(like("", "%"));
        assert!(like("a%c", "a\\%c"));
    }
}
