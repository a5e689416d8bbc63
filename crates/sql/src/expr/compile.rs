//! Compiling sqlparser's expressions to [`Expr`]: names resolved against
//! the scope, literals and parameters typed, functions and operators chosen.

use super::functions::{self, def::Call, reg_cast_in, reg_cast_out};
use super::{
    arith_type, ident_name, implicit_cast, is_ts, numeric, parse_type_name, syntax, AggKind, AggSpec, BinOp, Compiler,
    Expr, SubLinkKind,
};
use crate::error::SqlError;
use crate::value::{Datum, SqlType, NUMERIC};
use sqlparser::ast;
use turnstile_lock::SqlState;

impl Compiler<'_> {
    pub(super) fn param(&mut self, n: usize, hint: Option<SqlType>) -> (Expr, SqlType) {
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
        let bool_test =
            |x: Expr, value: bool, negated: bool| (Expr::IsBool(Box::new(x), value, negated), SqlType::Bool);
        Ok(match e {
            A::Identifier(i) => self.identifier(i)?,
            A::CompoundIdentifier(parts) => {
                let names: Vec<String> = parts.iter().map(ident_name).collect();
                let (q, n) = match names.as_slice() {
                    [q, n] => (q.as_str(), n.as_str()),
                    [_, q, n] => (q.as_str(), n.as_str()),
                    _ => return Err(SqlError::unsupported(&format!("the column reference {e}"))),
                };
                match self.scope.resolve(Some(q), n) {
                    Ok(c) => (Expr::Col(c), self.scope.cols[c].ty),
                    Err(err) => self.outer_column(Some(q), n, err)?,
                }
            }
            A::Value(v) => self.literal(&v.value, hint)?,
            A::Nested(inner) => self.compile(inner, hint)?,
            A::BinaryOp { left, op, right } => self.binary(left, op, right)?,
            A::UnaryOp { op, expr } => self.unary(*op, expr, hint)?,
            A::IsNull(x) => (Expr::IsNull(Box::new(self.compile(x, None)?.0), false), SqlType::Bool),
            A::IsNotNull(x) => (Expr::IsNull(Box::new(self.compile(x, None)?.0), true), SqlType::Bool),
            A::IsTrue(x) => bool_test(self.boolean(x)?, true, false),
            A::IsNotTrue(x) => bool_test(self.boolean(x)?, true, true),
            A::IsFalse(x) => bool_test(self.boolean(x)?, false, false),
            A::IsNotFalse(x) => bool_test(self.boolean(x)?, false, true),
            A::Cast { expr, data_type, .. } => self.cast(expr, data_type)?,
            A::TypedString(ts) => {
                let ty = parse_type_name(&ts.data_type.to_string())?;
                let text = match &ts.value.value {
                    ast::Value::SingleQuotedString(s) => s.clone(),
                    other => other.to_string(),
                };
                (Expr::Const(Datum::parse(&text, ty)?), ty)
            }
            A::In { expr, target: ast::InTarget::List(list), negated, .. } => self.in_list(expr, list, *negated)?,
            A::Between { expr, negated, low, high } => {
                let (both, _) = match symmetric_bound(low) {
                    // (x BETWEEN a AND b) OR (x BETWEEN b AND a)
                    Some(low) => {
                        let (one, _) = self.between(expr, low, high)?;
                        let (other, _) = self.between(expr, high, low)?;
                        (Expr::Or(Box::new(one), Box::new(other)), SqlType::Bool)
                    }
                    None => self.between(expr, low, high)?,
                };
                (if *negated { Expr::Not(Box::new(both)) } else { both }, SqlType::Bool)
            }
            A::Like { negated, expr, pattern, escape_char: None, any: false } => {
                self.like(expr, pattern, *negated, false)?
            }
            A::ILike { negated, expr, pattern, escape_char: None, any: false } => {
                self.like(expr, pattern, *negated, true)?
            }
            A::Case { operand, conditions, else_result, .. } => {
                self.case(operand.as_deref(), conditions, else_result.as_deref(), hint)?
            }
            A::Function(f) => self.function(f)?,
            A::Trim { expr, trim_where, trim_what, trim_characters } => {
                self.trim(expr, trim_where.as_ref(), trim_what.as_deref(), trim_characters.as_deref())?
            }
            A::Position { expr, r#in } => self.position(expr, r#in)?,
            A::IsDistinctFrom(a, b) => self.distinct_from(a, b, false)?,
            A::IsNotDistinctFrom(a, b) => self.distinct_from(a, b, true)?,
            A::Collate { expr, collation } => {
                // turnstile compares strings byte by byte (collation C) and
                // maps case by Unicode: the collations with those rules.
                let name = collation.0.last().and_then(|p| p.as_ident()).map(|i| i.value.to_ascii_lowercase());
                match name.as_deref() {
                    Some("default" | "c" | "posix" | "c.utf8" | "c.utf-8" | "ucs_basic") => self.compile(expr, hint)?,
                    _ => return Err(SqlError::unsupported(&format!("the collation {collation}"))),
                }
            }
            A::Array(a) => self.array(&a.elem, hint)?,
            A::CompoundFieldAccess { root, access_chain } => self.subscript(root, access_chain)?,
            A::AnyOp { left, compare_op, right, .. } => self.quantified(left, compare_op, right, true)?,
            A::AllOp { left, compare_op, right } => self.quantified(left, compare_op, right, false)?,
            A::Substring { expr, substring_from, substring_for, .. } => {
                self.substring(expr, substring_from.as_deref(), substring_for.as_deref())?
            }
            A::Subquery(q) => self.sublink(q, SubLinkKind::Scalar, None)?,
            A::Exists { subquery, negated } => {
                let (x, t) = self.sublink(subquery, SubLinkKind::Exists, None)?;
                (if *negated { Expr::Not(Box::new(x)) } else { x }, t)
            }
            A::In { expr, target: ast::InTarget::Subquery(subquery), negated, .. } => {
                let (x, t) = self.sublink(subquery, SubLinkKind::Any(BinOp::Eq), Some(expr))?;
                (if *negated { Expr::Not(Box::new(x)) } else { x }, t)
            }
            other => return Err(SqlError::unsupported(&format!("the expression {other}"))),
        })
    }

    /// A column, or one of the SQL keywords that call a function without
    /// parentheses (`CURRENT_TIMESTAMP`, `CURRENT_USER`) when no column
    /// has the name.
    fn identifier(&mut self, i: &ast::Ident) -> Result<(Expr, SqlType), SqlError> {
        let name = ident_name(i);
        let err = match self.scope.resolve(None, &name) {
            Ok(c) => return Ok((Expr::Col(c), self.scope.cols[c].ty)),
            Err(err) => err,
        };
        let def = match name.as_str() {
            "current_timestamp" | "localtimestamp" => &functions::NOW,
            "current_user" | "session_user" | "user" => &functions::CURRENT_USER,
            _ => return self.outer_column(None, &name, err),
        };
        self.call(&Call { def, name: &name, args: &[] })
    }

    /// `NOT x`, `-x`, `+x`.
    fn unary(
        &mut self,
        op: ast::UnaryOperator,
        expr: &ast::Expr,
        hint: Option<SqlType>,
    ) -> Result<(Expr, SqlType), SqlError> {
        Ok(match op {
            ast::UnaryOperator::Not => (Expr::Not(Box::new(self.boolean(expr)?)), SqlType::Bool),
            ast::UnaryOperator::Minus => {
                // PostgreSQL's grammar folds the minus into a numeric
                // literal before typing it: `-2147483648` is an int4.
                if let ast::Expr::Value(v) = expr {
                    if let ast::Value::Number(n, _) = &v.value {
                        return self.number(&format!("-{n}"));
                    }
                }
                let (x, t) = self.compile(expr, hint)?;
                let t = if t == SqlType::Unknown { NUMERIC } else { t };
                if !t.is_number() {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!("operator does not exist: - {}", t.name()),
                    ));
                }
                (Expr::Neg(Box::new(self.coerce(x, SqlType::Unknown, t)?), t), t)
            }
            ast::UnaryOperator::Plus => self.compile(expr, hint)?,
            _ => return Err(SqlError::unsupported(&format!("the operator {op}"))),
        })
    }

    /// `CAST(x AS t)`, `x::t`.
    fn cast(&mut self, expr: &ast::Expr, data_type: &ast::DataType) -> Result<(Expr, SqlType), SqlError> {
        let ty = parse_type_name(&data_type.to_string())?;
        // A parameter takes the cast's type; a string literal stays
        // `unknown` so that the explicit cast (which may cut it) converts
        // it. A name cast to `regclass` and its kin is read against the
        // catalog, a parameter included.
        let param = matches!(expr, ast::Expr::Value(v) if matches!(v.value, ast::Value::Placeholder(_)))
            || matches!(expr, ast::Expr::Array(_));
        let reg = matches!(ty, SqlType::Reg(_));
        let (x, from) = self.compile(expr, (param && !reg).then_some(ty))?;
        match (from, ty) {
            (f, SqlType::Reg(kind)) if f.is_string() => return Ok((Expr::Func(reg_cast_in(kind), vec![x]), ty)),
            (SqlType::Reg(kind), t) if t.is_string() => return Ok((Expr::Func(reg_cast_out(kind), vec![x]), t)),
            _ => {}
        }
        Ok(match x {
            Expr::Const(d) => (Expr::Const(cast_const(d, from, ty)?), ty),
            x if from == ty => (x, ty),
            x => (Expr::Cast(Box::new(x), from, ty), ty),
        })
    }

    /// `x [NOT] IN (…)`: one comparison type for all, as PostgreSQL
    /// resolves `=` between the value and each item.
    fn in_list(&mut self, expr: &ast::Expr, list: &[ast::Expr], negated: bool) -> Result<(Expr, SqlType), SqlError> {
        let (x, tx) = self.compile(expr, None)?;
        let mut items = Vec::with_capacity(list.len());
        for i in list {
            items.push(self.compile(i, Some(tx))?);
        }
        let mut t = tx;
        for (_, ti) in &items {
            t = comparison_type(t, *ti).ok_or_else(|| {
                SqlError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!("operator does not exist: {} = {}", tx.name(), ti.name()),
                )
            })?;
        }
        let x = self.coerce(x, tx, t)?;
        let mut coerced = Vec::with_capacity(items.len());
        for (i, ti) in items {
            coerced.push(self.coerce(i, ti, t)?);
        }
        Ok((Expr::InList(Box::new(x), coerced, negated), SqlType::Bool))
    }

    /// `x [NOT] LIKE pattern` (`ILIKE` when `fold`: both sides lower-cased
    /// first, with Unicode's case mapping), on strings only.
    fn like(
        &mut self,
        expr: &ast::Expr,
        pattern: &ast::Expr,
        negated: bool,
        fold: bool,
    ) -> Result<(Expr, SqlType), SqlError> {
        let (x, tx) = self.compile(expr, Some(SqlType::Text))?;
        let (p, tp) = self.compile(pattern, Some(SqlType::Text))?;
        if !tx.is_string() || !tp.is_string() {
            return Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("operator does not exist: {} {}~~ {}", tx.name(), if negated { "!" } else { "" }, tp.name()),
            ));
        }
        if fold {
            let lower = |e: Expr| Expr::Func(&functions::LOWER, vec![e]);
            return Ok((Expr::Like(Box::new(lower(x)), Box::new(lower(p)), negated), SqlType::Bool));
        }
        Ok((Expr::Like(Box::new(x), Box::new(p), negated), SqlType::Bool))
    }

    /// `CASE [operand] WHEN … THEN … [ELSE …] END`: the type is the first branch's.
    fn case(
        &mut self,
        operand: Option<&ast::Expr>,
        conditions: &[ast::CaseWhen],
        else_result: Option<&ast::Expr>,
        hint: Option<SqlType>,
    ) -> Result<(Expr, SqlType), SqlError> {
        let op = match operand {
            Some(o) => Some(Box::new(self.compile(o, None)?.0)),
            None => None,
        };
        let mut whens = Vec::new();
        let mut results = Vec::new();
        for w in conditions {
            let cond = if op.is_some() { self.compile(&w.condition, None)?.0 } else { self.boolean(&w.condition)? };
            whens.push(cond);
            results.push(self.compile(&w.result, hint)?);
        }
        let els = else_result.map(|e| self.compile(e, hint)).transpose()?;
        // PostgreSQL's select_common_type: the first non-unknown type,
        // raised along the number chain; unknown alone is text.
        let mut ty = SqlType::Unknown;
        for (_, t) in results.iter().chain(els.iter()) {
            ty = match (ty, *t) {
                (SqlType::Unknown, t) => t,
                (a, SqlType::Unknown) => a,
                (a, b) if a.is_number() && b.is_number() => arith_type(a, b).unwrap_or(a),
                (a, b) if implicit_cast(b, a) => a,
                (a, b) if implicit_cast(a, b) => b,
                (a, b) => {
                    return Err(SqlError::new(
                        SqlState::DATATYPE_MISMATCH,
                        format!("CASE types {} and {} cannot be matched", a.name(), b.name()),
                    ))
                }
            };
        }
        let ty = if ty == SqlType::Unknown { SqlType::Text } else { ty };
        let mut pairs = Vec::with_capacity(whens.len());
        for (cond, (r, t)) in whens.into_iter().zip(results) {
            pairs.push((cond, self.coerce(r, t, ty)?));
        }
        let els = match els {
            Some((e, t)) => Some(Box::new(self.coerce(e, t, ty)?)),
            None => None,
        };
        Ok((Expr::Case(op, pairs, els), ty))
    }

    /// `x >= low AND x <= high`.
    fn between(&mut self, x: &ast::Expr, low: &ast::Expr, high: &ast::Expr) -> Result<(Expr, SqlType), SqlError> {
        let (lo, _) = self.binary(x, &ast::BinaryOperator::GtEq, low)?;
        let (hi, _) = self.binary(x, &ast::BinaryOperator::LtEq, high)?;
        Ok((Expr::And(Box::new(lo), Box::new(hi)), SqlType::Bool))
    }

    /// `SUBSTRING(expr FROM start FOR count)`.
    fn substring(
        &mut self,
        expr: &ast::Expr,
        substring_from: Option<&ast::Expr>,
        substring_for: Option<&ast::Expr>,
    ) -> Result<(Expr, SqlType), SqlError> {
        let (x, tx) = self.compile(expr, Some(SqlType::Text))?;
        let mut args = vec![self.text_arg(x, tx, "substring")?];
        let from = match substring_from {
            Some(f) => self.compile(f, Some(SqlType::Int4))?.0,
            None => Expr::Const(Datum::Int(1)),
        };
        args.push(from);
        if let Some(n) = substring_for {
            args.push(self.compile(n, Some(SqlType::Int4))?.0);
        }
        Compiler::fixed_call(&functions::SUBSTR, args)
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

    /// A numeric literal as PostgreSQL types it: an integer that fits
    /// `int4` is `int4`, then `int8`; anything else (a point, an exponent,
    /// more digits) is `numeric`.
    fn number(&mut self, n: &str) -> Result<(Expr, SqlType), SqlError> {
        if let Ok(i) = n.parse::<i32>() {
            Ok((Expr::Const(Datum::Int(i.into())), SqlType::Int4))
        } else if let Ok(i) = n.parse::<i64>() {
            Ok((Expr::Const(Datum::Int(i)), SqlType::Int8))
        } else {
            let v = super::numeric::parse(n).ok_or_else(|| syntax(format!("syntax error at or near \"{n}\"")))?;
            Ok((Expr::Const(Datum::Numeric(v)), NUMERIC))
        }
    }

    /// `x` (of type `from`) converted to `to`: nothing when the value form
    /// is the same (integers to integers, strings to unconstrained
    /// strings), a folded constant, or an [`Expr::Cast`]. A
    /// `character(n)` loses its trailing blanks on the way to another
    /// string type.
    pub(super) fn coerce(&mut self, x: Expr, from: SqlType, to: SqlType) -> Result<Expr, SqlError> {
        // Widening an integer, or taking a string without blank padding
        // as unconstrained text, leaves the value as it is.
        let same_form = from == to
            || (from.is_integer() && to.is_integer() && implicit_cast(from, to))
            || (matches!(from, SqlType::Text | SqlType::Varchar(_) | SqlType::Name)
                && matches!(to, SqlType::Text | SqlType::Varchar(0) | SqlType::Name))
            || (from == SqlType::Unknown && to == SqlType::Text);
        if same_form {
            return Ok(x);
        }
        Ok(match x {
            Expr::Const(d) => {
                Expr::Const(if from == SqlType::Unknown { d.cast(to)? } else { cast_const(d, from, to)? })
            }
            x => Expr::Cast(Box::new(x), from, to),
        })
    }

    /// A string function's argument: `42883` unless it is a string.
    fn text_arg(&mut self, x: Expr, t: SqlType, func: &str) -> Result<Expr, SqlError> {
        if !t.is_string() {
            return Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("function {func}({}) does not exist", t.name()),
            ));
        }
        self.coerce(x, t, SqlType::Text)
    }

    pub(super) fn literal(&mut self, v: &ast::Value, hint: Option<SqlType>) -> Result<(Expr, SqlType), SqlError> {
        Ok(match v {
            ast::Value::Number(n, _) => self.number(n)?,
            ast::Value::SingleQuotedString(s)
            | ast::Value::EscapedStringLiteral(s)
            | ast::Value::DollarQuotedString(ast::DollarQuotedString { value: s, .. }) => match hint {
                Some(t) if t != SqlType::Unknown => {
                    // An untyped literal takes the type without its modifier
                    // (`varchar`, not `varchar(10)`): a comparison does not
                    // check lengths, an assignment does later.
                    let t = match t {
                        SqlType::Varchar(_) => SqlType::Varchar(0),
                        SqlType::Bpchar(_) => SqlType::Bpchar(0),
                        SqlType::Numeric(_) => NUMERIC,
                        t => t,
                    };
                    (Expr::Const(Datum::parse(s, t)?), t)
                }
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

    pub(super) fn binary_op(op: &ast::BinaryOperator) -> Option<BinOp> {
        use ast::BinaryOperator as B;
        Some(match op {
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
            _ => return None,
        })
    }

    pub(super) fn binary(
        &mut self,
        l: &ast::Expr,
        op: &ast::BinaryOperator,
        r: &ast::Expr,
    ) -> Result<(Expr, SqlType), SqlError> {
        use ast::BinaryOperator as B;
        if matches!(op, B::And | B::Or) {
            let a = Box::new(self.boolean(l)?);
            let b = Box::new(self.boolean(r)?);
            return Ok((if *op == B::And { Expr::And(a, b) } else { Expr::Or(a, b) }, SqlType::Bool));
        }
        match op {
            B::PGRegexMatch => return self.regex_match(l, r, false, false),
            B::PGRegexIMatch => return self.regex_match(l, r, true, false),
            B::PGRegexNotMatch => return self.regex_match(l, r, false, true),
            B::PGRegexNotIMatch => return self.regex_match(l, r, true, true),
            B::PGLikeMatch => return self.like(l, r, false, false),
            B::PGILikeMatch => return self.like(l, r, false, true),
            B::PGNotLikeMatch => return self.like(l, r, true, false),
            B::PGNotILikeMatch => return self.like(l, r, true, true),
            B::PGExp => return self.power(l, r),
            B::PGCustomBinaryOperator(parts) => {
                let op = named_operator(parts)?;
                return self.binary(l, &op, r);
            }
            _ => {}
        }
        if let Some(bit) = super::bitwise::bit_op(op) {
            return self.bitwise(l, bit, op, r);
        }
        let Some(bop) = Compiler::binary_op(op) else {
            return Err(SqlError::unsupported(&format!("the operator {op}")));
        };
        let concat = bop == BinOp::Concat;
        let (mut a, mut ta) = self.compile(l, concat.then_some(SqlType::Text))?;
        let (mut b, tb) = self.compile(r, Some(if concat { SqlType::Text } else { ta }))?;
        if concat && (ta.element().is_some() || tb.element().is_some()) {
            return super::functions::array::concat(self, (a, ta), (b, tb), l, r);
        }
        if ta == SqlType::Unknown && tb != SqlType::Unknown && !concat {
            // Re-type the left side from the right (`$1 = col`, `'5' < col`).
            (a, ta) = self.compile(l, Some(tb))?;
        }
        let no_operator = || {
            SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("operator does not exist: {} {} {}", ta.name(), op, tb.name()),
            )
        };
        let (operand, ty) = match bop {
            BinOp::Concat => {
                // textcat: one side a string, the other anything (as text).
                if !(ta.is_string() || tb.is_string()) {
                    return Err(no_operator());
                }
                a = self.coerce(a, ta, SqlType::Text)?;
                b = self.coerce(b, tb, SqlType::Text)?;
                (SqlType::Text, SqlType::Text)
            }
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod => {
                if is_ts(ta) || is_ts(tb) {
                    // PostgreSQL's operators on these types without interval:
                    // date ± int4 (int2 widened), int4 + date, date - date;
                    // no other mixes them with a number, and none multiplies,
                    // divides or takes a modulus of them.
                    let int4 = |t: SqlType| matches!(t, SqlType::Int2 | SqlType::Int4);
                    let date_arith = (ta == SqlType::Date && (int4(tb) || (bop == BinOp::Sub && tb == SqlType::Date)))
                        || (bop == BinOp::Add && int4(ta) && tb == SqlType::Date);
                    let with_number = ta.is_number() || tb.is_number();
                    if matches!(bop, BinOp::Mul | BinOp::Div | BinOp::Mod) || (with_number && !date_arith) {
                        return Err(no_operator());
                    }
                    return Err(SqlError::unsupported("date and timestamp arithmetic"));
                }
                let t = arith_type(ta, tb).ok_or_else(no_operator)?;
                if bop == BinOp::Mod && t.is_float() {
                    return Err(no_operator());
                }
                a = self.coerce(a, ta, t)?;
                b = self.coerce(b, tb, t)?;
                (t, t)
            }
            _ => {
                let t = comparison_type(ta, tb).ok_or_else(no_operator)?;
                if t.is_number() || t == SqlType::Text {
                    a = self.coerce(a, ta, t)?;
                    b = self.coerce(b, tb, t)?;
                }
                (t, SqlType::Bool)
            }
        };
        Ok((Expr::Bin(bop, operand, Box::new(a), Box::new(b)), ty))
    }

    /// `l ^ r`: `double precision` (PostgreSQL's `float8 ^ float8`, which
    /// integers reach by implicit cast); `numeric ^ numeric` is not here.
    fn power(&mut self, l: &ast::Expr, r: &ast::Expr) -> Result<(Expr, SqlType), SqlError> {
        let (a, ta) = self.compile(l, Some(SqlType::Float8))?;
        let (b, tb) = self.compile(r, Some(SqlType::Float8))?;
        if (matches!(ta, SqlType::Numeric(_)) || matches!(tb, SqlType::Numeric(_))) && !ta.is_float() && !tb.is_float()
        {
            return Err(SqlError::unsupported("numeric ^ numeric"));
        }
        let number = |t: SqlType| t.is_number() || t == SqlType::Unknown;
        if !number(ta) || !number(tb) {
            return Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("operator does not exist: {} ^ {}", ta.name(), tb.name()),
            ));
        }
        let a = self.coerce(a, ta, SqlType::Float8)?;
        let b = self.coerce(b, tb, SqlType::Float8)?;
        Compiler::fixed_call(&functions::POWER, vec![a, b])
    }

    pub(super) fn aggregate(
        &mut self,
        kind: AggKind,
        name: &str,
        args: &[ast::Expr],
        distinct: bool,
        filter: Option<&ast::Expr>,
        order: &[ast::OrderByExpr],
    ) -> Result<(Expr, SqlType), SqlError> {
        if self.aggs.is_none() {
            return Err(SqlError::new(
                SqlState::GROUPING_ERROR,
                format!("aggregate functions are not allowed here ({name})"),
            ));
        }
        let nargs = match kind {
            AggKind::CountStar => 0,
            AggKind::StringAgg => 2,
            _ => 1,
        };
        if args.len() != nargs {
            return Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("function {name} with {} arguments does not exist", args.len()),
            ));
        }
        // Arguments and filters are evaluated on input rows: no nested aggregates.
        let saved = self.aggs.take();
        let text_hint = (kind == AggKind::StringAgg).then_some(SqlType::Text);
        let arg = args.first().map(|a| self.compile(a, text_hint)).transpose();
        let delim = args.get(1).map(|d| self.compile(d, text_hint)).transpose();
        let filt = filter.map(|f| self.boolean(f)).transpose();
        let keys = order.iter().map(|k| self.agg_order_key(k)).collect::<Result<Vec<_>, _>>();
        self.aggs = saved;
        let order = keys?;
        let mut arg = arg?;
        let filter = filt?;
        let delim = match delim? {
            Some((d, t)) if t.is_string() => Some(self.coerce(d, t, SqlType::Text)?),
            Some((_, t)) => {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!("function {name}(unknown, {}) does not exist", t.name()),
                ))
            }
            None => None,
        };
        if kind == AggKind::StringAgg {
            if let Some((a, t)) = arg.take() {
                arg = Some((if t.is_string() { self.coerce(a, t, SqlType::Text)? } else { a }, t));
            }
        }
        let arg_ty = arg.as_ref().map(|a| a.1);
        let ty = match (kind, arg_ty) {
            (AggKind::CountStar | AggKind::Count, _) => SqlType::Int8,
            (AggKind::Sum, Some(SqlType::Int2 | SqlType::Int4)) => SqlType::Int8,
            (AggKind::Sum, Some(SqlType::Int8)) => NUMERIC,
            (AggKind::Sum, Some(t @ (SqlType::Float4 | SqlType::Float8))) => t,
            (AggKind::Sum | AggKind::Avg, Some(SqlType::Numeric(_))) => NUMERIC,
            (AggKind::Avg, Some(SqlType::Float4 | SqlType::Float8)) => SqlType::Float8,
            (AggKind::Avg, Some(SqlType::Int2 | SqlType::Int4 | SqlType::Int8)) => NUMERIC,
            (AggKind::Min | AggKind::Max, Some(SqlType::Unknown)) => SqlType::Text,
            // PostgreSQL has no min/max over boolean (bool_and and bool_or are those).
            (AggKind::Min | AggKind::Max, Some(t)) if t != SqlType::Bool => t,
            (AggKind::StringAgg, Some(t)) if t.is_string() => SqlType::Text,
            (AggKind::BoolAnd | AggKind::BoolOr, Some(SqlType::Bool)) => SqlType::Bool,
            (AggKind::ArrayAgg, Some(SqlType::Unknown)) => SqlType::Array(&SqlType::Text),
            (AggKind::ArrayAgg, Some(t)) if SqlType::array_of(t).is_some() => SqlType::array_of(t).unwrap_or(t),
            (_, t) => {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!("function {name}({}) does not exist", t.map_or("", |t| t.name())),
                ))
            }
        };
        let aggs =
            self.aggs.as_mut().ok_or_else(|| SqlError::new(SqlState::GROUPING_ERROR, "aggregate not allowed"))?;
        aggs.push(AggSpec {
            kind,
            arg: arg.map(|a| a.0),
            delim,
            filter,
            distinct,
            order,
            ty,
            arg_ty: arg_ty.unwrap_or(SqlType::Unknown),
        });
        Ok((Expr::Agg(aggs.len() - 1), ty))
    }

    /// One key of an aggregate's own ORDER BY: the expression (on the
    /// input row), descending, NULLs first (by default, as descending).
    fn agg_order_key(&mut self, key: &ast::OrderByExpr) -> Result<(Expr, bool, bool), SqlError> {
        if key.with_fill.is_some() {
            return Err(SqlError::unsupported("WITH FILL"));
        }
        let desc = matches!(key.options.sort, Some(ast::OrderBySort::Desc));
        let (x, _) = self.compile(&key.expr, None)?;
        Ok((x, desc, key.options.nulls_first.unwrap_or(desc)))
    }
}

/// The first bound of `BETWEEN SYMMETRIC`, which [`crate::between`]
/// marks with a call of its marker.
fn symmetric_bound(low: &ast::Expr) -> Option<&ast::Expr> {
    let ast::Expr::Function(f) = low else { return None };
    let [ast::ObjectNamePart::Identifier(name)] = f.name.0.as_slice() else { return None };
    if name.quote_style.is_some() || name.value != crate::between::SYMMETRIC_MARK {
        return None;
    }
    match &f.args {
        ast::FunctionArguments::List(l) => match l.args.as_slice() {
            [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e))] => Some(e),
            _ => None,
        },
        _ => None,
    }
}

/// The operator `OPERATOR(schema.op)` names (`pg_catalog` or no schema):
/// `42883` for an operator PostgreSQL does not have.
fn named_operator(parts: &[String]) -> Result<ast::BinaryOperator, SqlError> {
    use ast::BinaryOperator as B;
    let (schema, name) = match parts {
        [name] => (None, name.as_str()),
        [schema, name] => (Some(schema.as_str()), name.as_str()),
        _ => {
            return Err(SqlError::new(SqlState::SYNTAX_ERROR, format!("improper qualified name: {}", parts.join("."))))
        }
    };
    if schema.is_some_and(|s| !s.eq_ignore_ascii_case("pg_catalog")) {
        return Err(SqlError::new(
            SqlState::INVALID_SCHEMA_NAME,
            format!("schema \"{}\" does not exist", schema.unwrap_or_default()),
        ));
    }
    Ok(match name {
        "=" => B::Eq,
        "<>" | "!=" => B::NotEq,
        "<" => B::Lt,
        "<=" => B::LtEq,
        ">" => B::Gt,
        ">=" => B::GtEq,
        "+" => B::Plus,
        "-" => B::Minus,
        "*" => B::Multiply,
        "/" => B::Divide,
        "%" => B::Modulo,
        "^" => B::PGExp,
        "||" => B::StringConcat,
        "~" => B::PGRegexMatch,
        "~*" => B::PGRegexIMatch,
        "!~" => B::PGRegexNotMatch,
        "!~*" => B::PGRegexNotIMatch,
        "~~" => B::PGLikeMatch,
        "~~*" => B::PGILikeMatch,
        "!~~" => B::PGNotLikeMatch,
        "!~~*" => B::PGNotILikeMatch,
        other => return Err(SqlError::new(SqlState::UNDEFINED_FUNCTION, format!("operator does not exist: {other}"))),
    })
}

/// A constant cast from `from` to `to` at compile time, as
/// [`Expr::Cast`] does at run time.
pub(super) fn cast_const(d: Datum, from: SqlType, to: SqlType) -> Result<Datum, SqlError> {
    super::eval::cast_value(d, from, to)
}

/// The type two values are compared in (`=`, `<`, `IN`): the same type,
/// the known one against an `unknown` literal, the higher number type,
/// text for strings (a `character(n)` loses its trailing blanks, with
/// anything), a timestamp against a date; `None` when PostgreSQL has no
/// such operator.
pub(crate) fn comparison_type(ta: SqlType, tb: SqlType) -> Option<SqlType> {
    let t = if ta == tb {
        ta
    } else if ta == SqlType::Unknown {
        tb
    } else if tb == SqlType::Unknown {
        ta
    } else if numeric(ta) && numeric(tb) {
        arith_type(ta, tb)?
    } else if ta.is_string() && tb.is_string() {
        SqlType::Text
    } else if is_ts(ta) && is_ts(tb) {
        if ta == SqlType::Date {
            tb
        } else {
            ta
        }
    } else {
        return None;
    };
    let padded = |t: SqlType| matches!(t, SqlType::Bpchar(_));
    Some(if padded(t) || padded(ta) || padded(tb) { SqlType::Text } else { t })
}
