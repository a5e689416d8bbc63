//! The bitwise operators on integers: `&`, `|`, `#` (xor), `<<` and `>>`
//! (PostgreSQL's `int2and` … `int8shr`), as pgjdbc's `getIndexInfo`
//! sends (`i.indoption[k] & 1::smallint`).
//!
//! `&`, `|` and `#` take two integers of any width and give their common
//! type (`int2 & int4` is `int4`); a shift takes the left operand's type
//! and an `int4` count. A shift wraps within the type's width as
//! PostgreSQL's C operators do on its platforms (the count taken modulo
//! the width), so it never fails; the others cannot leave the range.
//!
//! ```
//! use turnstile_sql::expr::bitwise::{apply, BitOp};
//! assert_eq!(apply(BitOp::And, 6, 3, 16), 2);
//! assert_eq!(apply(BitOp::Xor, 6, 3, 32), 5);
//! assert_eq!(apply(BitOp::Shl, 1, 31, 32), i64::from(i32::MIN));
//! assert_eq!(apply(BitOp::Shr, -8, 1, 64), -4);
//! ```

use super::functions::def::{Call, Eval, FuncDef};
use super::{Compiler, EvalEnv, Expr};
use crate::error::SqlError;
use crate::value::{Datum, SqlType};
use sqlparser::ast;
use turnstile_lock::SqlState;

/// One bitwise operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitOp {
    /// `&`
    And,
    /// `|`
    Or,
    /// `#`
    Xor,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
}

/// `a op b` in an integer type `bits` wide.
pub fn apply(op: BitOp, a: i64, b: i64, bits: u32) -> i64 {
    let wrap = |v: i64| match bits {
        16 => i64::from(v as i16),
        32 => i64::from(v as i32),
        _ => v,
    };
    let count = (b as u32) % bits;
    match op {
        BitOp::And => a & b,
        BitOp::Or => a | b,
        BitOp::Xor => a ^ b,
        BitOp::Shl => wrap(a.wrapping_shl(count)),
        BitOp::Shr => a >> count,
    }
}

/// The evaluation: operator, width and the two operands.
static BITWISE: FuncDef = FuncDef::custom(
    "int8and",
    |_, call: &Call<'_>| Err(call.no_such_arity()),
    Eval::Values(|a, _: &mut EvalEnv<'_>| {
        Ok(match (&a[0], &a[1], &a[2]) {
            (Datum::Int(code), Datum::Int(x), Datum::Int(y)) => {
                let (op, bits) = decode(*code);
                Datum::Int(apply(op, *x, *y, bits))
            }
            _ => Datum::Null,
        })
    }),
);

/// The constant that carries the operator and the width into [`BITWISE`].
fn encode(op: BitOp, bits: u32) -> i64 {
    i64::from(op as u8) << 8 | i64::from(bits)
}

fn decode(code: i64) -> (BitOp, u32) {
    let op = match code >> 8 {
        0 => BitOp::And,
        1 => BitOp::Or,
        2 => BitOp::Xor,
        3 => BitOp::Shl,
        _ => BitOp::Shr,
    };
    (op, (code & 0xff) as u32)
}

/// The operator `op` is, if it is a bitwise one.
pub(super) fn bit_op(op: &ast::BinaryOperator) -> Option<BitOp> {
    use ast::BinaryOperator as B;
    Some(match op {
        B::BitwiseAnd => BitOp::And,
        B::BitwiseOr => BitOp::Or,
        B::PGBitwiseXor => BitOp::Xor,
        B::PGBitwiseShiftLeft => BitOp::Shl,
        B::PGBitwiseShiftRight => BitOp::Shr,
        _ => return None,
    })
}

impl Compiler<'_> {
    /// `l op r` for a bitwise `op` (`42883` unless both are integers).
    pub(super) fn bitwise(
        &mut self,
        l: &ast::Expr,
        op: BitOp,
        shown: &ast::BinaryOperator,
        r: &ast::Expr,
    ) -> Result<(Expr, SqlType), SqlError> {
        let (a, ta) = self.compile(l, Some(SqlType::Int4))?;
        let shift = matches!(op, BitOp::Shl | BitOp::Shr);
        let (b, tb) = self.compile(r, Some(if shift { SqlType::Int4 } else { ta }))?;
        let integer = |t: SqlType| matches!(t, SqlType::Int2 | SqlType::Int4 | SqlType::Int8 | SqlType::Unknown);
        let ty = match (ta, tb) {
            _ if !integer(ta) || !integer(tb) || (shift && tb == SqlType::Int8) => None,
            _ if shift => Some(ta),
            _ => super::common_type(ta, tb),
        };
        let ty = match ty {
            Some(SqlType::Unknown) => SqlType::Int4,
            Some(t) => t,
            None => {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!("operator does not exist: {} {shown} {}", ta.name(), tb.name()),
                ))
            }
        };
        let a = self.coerce(a, ta, ty)?;
        let b = self.coerce(b, tb, if shift { SqlType::Int4 } else { ty })?;
        let bits = match ty {
            SqlType::Int2 => 16,
            SqlType::Int4 => 32,
            _ => 64,
        };
        Ok((Expr::Func(&BITWISE, vec![Expr::Const(Datum::Int(encode(op, bits))), a, b]), ty))
    }
}
