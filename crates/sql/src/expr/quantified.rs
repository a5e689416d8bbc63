//! Arrays in expressions: the `ARRAY[…]` constructor and the quantified
//! comparisons `x op ANY (array)` / `x op ALL (array)` (and their subquery
//! forms, which become a [`SubLink`](super::SubLink)).
//!
//! `ARRAY[…]`'s element type is its elements' common type (an untyped
//! literal alone is `text`); `x op ANY (a)` compares in the common type of
//! `x` and `a`'s elements, with SQL's NULL rules: true when some element
//! satisfies `op`, else NULL when `x` or some element is NULL, else false
//! (`ALL` dually); an empty array makes ANY false and ALL true. The
//! regular-expression operators over an array of patterns are in
//! `regex_any.rs`. An
//! integer or OID compared with a catalog vector column (`x = ANY
//! (partclass)`) compares with its elements, as with an `oidvector`.

use super::subquery::op_symbol;
use super::{common_type, comparison_type, BinOp, Compiler, Expr, SubLinkKind};
use crate::error::SqlError;
use crate::value::SqlType;
use sqlparser::ast;
use turnstile_lock::SqlState;

/// `indeterminate_datatype`.
const INDETERMINATE_DATATYPE: SqlState = SqlState::from_code("42P18");

impl Compiler<'_> {
    /// `ARRAY[x, …]`; `hint` (an array type) types untyped elements.
    pub(super) fn array(&mut self, elems: &[ast::Expr], hint: Option<SqlType>) -> Result<(Expr, SqlType), SqlError> {
        let elem_hint = hint.and_then(SqlType::element);
        let mut items = Vec::with_capacity(elems.len());
        let mut ty = SqlType::Unknown;
        for e in elems {
            let (x, t) = self.compile(e, (ty != SqlType::Unknown).then_some(ty).or(elem_hint))?;
            ty = common_type(ty, t).ok_or_else(|| {
                SqlError::new(
                    SqlState::DATATYPE_MISMATCH,
                    format!("ARRAY types {} and {} cannot be matched", ty.name(), t.name()),
                )
            })?;
            items.push((x, t));
        }
        if items.is_empty() && elem_hint.is_none() {
            return Err(SqlError::new(INDETERMINATE_DATATYPE, "cannot determine type of empty array"));
        }
        let ty = if ty == SqlType::Unknown { elem_hint.unwrap_or(SqlType::Text) } else { ty };
        let arr =
            SqlType::array_of(ty).ok_or_else(|| SqlError::unsupported(&format!("arrays of type {}", ty.name())))?;
        let elem = arr.element().unwrap_or(ty);
        let mut out = Vec::with_capacity(items.len());
        for (x, t) in items {
            out.push(self.coerce(x, t, elem)?);
        }
        let folded: Option<Vec<_>> = out
            .iter()
            .map(|x| match x {
                Expr::Const(d) => Some(d.clone()),
                _ => None,
            })
            .collect();
        Ok((folded.map_or(Expr::Array(out), |v| Expr::Const(crate::value::Datum::Array(v))), arr))
    }

    /// `left op ANY|ALL (right)`: over a subquery's rows, or an array's
    /// elements.
    pub(super) fn quantified(
        &mut self,
        left: &ast::Expr,
        op: &ast::BinaryOperator,
        right: &ast::Expr,
        any: bool,
    ) -> Result<(Expr, SqlType), SqlError> {
        let inner = match right {
            ast::Expr::Nested(x) => x.as_ref(),
            x => x,
        };
        if let (Some(regex), false) = (super::regex_any::regex_operator(op), matches!(inner, ast::Expr::Subquery(_))) {
            return self.regex_quantified(left, right, regex, any);
        }
        let bop = Compiler::binary_op(op)
            .filter(|b| matches!(b, BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge))
            .ok_or_else(|| SqlError::unsupported(&format!("{op} {}", if any { "ANY" } else { "ALL" })))?;
        if let ast::Expr::Subquery(q) = inner {
            let kind = if any { SubLinkKind::Any(bop) } else { SubLinkKind::All(bop) };
            return self.sublink(q, kind, Some(left));
        }
        let (l, tl) = self.compile(left, None)?;
        let hint = if tl == SqlType::Unknown { None } else { SqlType::array_of(tl) };
        let (mut arr, ta) = self.compile(right, hint)?;
        let elem = match ta {
            SqlType::Array(e) => *e,
            // A catalog vector column (`partclass`, `indkey`), kept in its
            // text form as the subscripts read it (`subscript.rs`).
            SqlType::Text if tl.is_integer() || matches!(tl, SqlType::Oid | SqlType::Reg(_)) => {
                arr = Expr::Func(&super::subscript::VECTOR_ELEMENTS, vec![arr]);
                SqlType::Int8
            }
            SqlType::Unknown => tl,
            other => {
                return Err(SqlError::new(
                    SqlState::DATATYPE_MISMATCH,
                    format!("op ANY/ALL (array) requires array on right side, not {}", other.name()),
                ))
            }
        };
        let (l, tl) = if tl == SqlType::Unknown { self.compile(left, Some(elem))? } else { (l, tl) };
        let ty = comparison_type(tl, elem).ok_or_else(|| {
            SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("operator does not exist: {} {} {}", tl.name(), op_symbol(bop), elem.name()),
            )
        })?;
        let l = self.coerce(l, tl, ty)?;
        Ok((Expr::Quantified(bop, ty, elem, Box::new(l), Box::new(arr), any), SqlType::Bool))
    }
}
