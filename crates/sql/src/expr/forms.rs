//! SQL's own syntax for what are function calls or comparisons inside:
//! `TRIM([BOTH|LEADING|TRAILING] [chars FROM] s)` (`btrim`/`ltrim`/
//! `rtrim`), `POSITION(sub IN s)` (`strpos`) and `a IS [NOT] DISTINCT FROM
//! b` (an equality in which NULL equals NULL).

use super::functions::{BTRIM, LTRIM, RTRIM, STRPOS};
use super::{Compiler, Expr};
use crate::error::SqlError;
use crate::value::{Datum, SqlType};
use sqlparser::ast;

impl Compiler<'_> {
    /// `TRIM(…)`.
    pub(super) fn trim(
        &mut self,
        expr: &ast::Expr,
        trim_where: Option<&ast::TrimWhereField>,
        what: Option<&ast::Expr>,
        characters: Option<&[ast::Expr]>,
    ) -> Result<(Expr, SqlType), SqlError> {
        let def = match trim_where {
            None | Some(ast::TrimWhereField::Both) => &BTRIM,
            Some(ast::TrimWhereField::Leading) => &LTRIM,
            Some(ast::TrimWhereField::Trailing) => &RTRIM,
        };
        let chars = match (what, characters) {
            (Some(w), _) => Some(w),
            (None, Some([c])) => Some(c),
            (None, Some(_)) => return Err(SqlError::unsupported("TRIM with several character arguments")),
            (None, None) => None,
        };
        let (x, tx) = self.compile(expr, Some(SqlType::Text))?;
        let mut args = vec![self.text_operand(x, tx, def.name)?];
        if let Some(c) = chars {
            let (c, tc) = self.compile(c, Some(SqlType::Text))?;
            args.push(self.text_operand(c, tc, def.name)?);
        }
        Compiler::fixed_call(def, args)
    }

    /// `POSITION(sub IN s)`.
    pub(super) fn position(&mut self, sub: &ast::Expr, s: &ast::Expr) -> Result<(Expr, SqlType), SqlError> {
        let (x, tx) = self.compile(s, Some(SqlType::Text))?;
        let (y, ty) = self.compile(sub, Some(SqlType::Text))?;
        let args = vec![self.text_operand(x, tx, "position")?, self.text_operand(y, ty, "position")?];
        Compiler::fixed_call(&STRPOS, args)
    }

    /// `a IS [NOT] DISTINCT FROM b`: `a <> b` where NULL is a value
    /// (never NULL itself).
    pub(super) fn distinct_from(
        &mut self,
        a: &ast::Expr,
        b: &ast::Expr,
        negated: bool,
    ) -> Result<(Expr, SqlType), SqlError> {
        let (ne, _) = self.binary(a, &ast::BinaryOperator::NotEq, b)?;
        let Expr::Bin(_, _, x, y) = &ne else { return Ok((ne, SqlType::Bool)) };
        let (x, y) = (x.as_ref().clone(), y.as_ref().clone());
        // CASE WHEN a IS NULL THEN b IS NOT NULL WHEN b IS NULL THEN true ELSE a <> b END
        let distinct = Expr::Case(
            None,
            vec![
                (Expr::IsNull(Box::new(x), false), Expr::IsNull(Box::new(y.clone()), true)),
                (Expr::IsNull(Box::new(y), false), Expr::Const(Datum::Bool(true))),
            ],
            Some(Box::new(ne)),
        );
        Ok((if negated { Expr::Not(Box::new(distinct)) } else { distinct }, SqlType::Bool))
    }

    /// A string function's operand as text (`42883` unless a string).
    fn text_operand(&mut self, x: Expr, t: SqlType, func: &str) -> Result<Expr, SqlError> {
        if !t.is_string() {
            return Err(super::functions::def::no_such_function(func, std::iter::once(t.name())));
        }
        self.coerce(x, t, SqlType::Text)
    }
}
