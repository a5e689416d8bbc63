//! Subscripts: `a[i]` of an array (lower bound 1) and of the vector
//! columns of the system catalogs (`indkey[0]`, `prattrs[s]`), which keep
//! PostgreSQL's text form (`1 2`, [`crate::catalog::datum`]) and, as
//! `int2vector`/`oidvector` do, count from 0. A subscript outside the
//! value, or a NULL one, gives NULL, as in PostgreSQL; slices (`a[1:2]`)
//! are not here.
//!
//! A `name` is subscriptable too, as in PostgreSQL (a fixed array of
//! [`NAME_BYTES`] bytes from 0): `typname[0]` is its first byte as a
//! `"char"` — empty past the name's end, NULL outside the 64 bytes.
//!
//! ```
//! use turnstile_sql::expr::subscript::element;
//! use turnstile_sql::value::Datum;
//! let a = Datum::Array(vec![Datum::Int(7), Datum::Int(8)]);
//! assert_eq!(element(&a, 2), Datum::Int(8));
//! assert_eq!(element(&a, 3), Datum::Null);
//! assert_eq!(element(&Datum::Text("3 1".into()), 0), Datum::Int(3));
//! ```

use super::functions::def::{Call, Eval, FuncDef};
use super::{Compiler, EvalEnv, Expr};
use crate::error::SqlError;
use crate::value::{Datum, SqlType};
use sqlparser::ast;

/// The element at `index` of an array (from 1) or of a vector's text
/// (from 0); NULL outside it.
pub fn element(value: &Datum, index: i64) -> Datum {
    match value {
        Datum::Array(items) => usize::try_from(index - 1).ok().and_then(|i| items.get(i)).cloned(),
        Datum::Text(vector) => usize::try_from(index)
            .ok()
            .and_then(|i| vector.split_ascii_whitespace().nth(i))
            .and_then(|s| s.parse::<i64>().ok())
            .map(Datum::Int),
        _ => None,
    }
    .unwrap_or(Datum::Null)
}

/// A catalog vector's elements (its text form `1 2` read as integers)
/// as an array, for `x = ANY (vector)`, called through [`Expr::Func`].
pub static VECTOR_ELEMENTS: FuncDef = FuncDef::custom(
    "vector_elements",
    |_, call: &Call<'_>| Err(call.no_such_arity()),
    Eval::Values(|a, _| {
        Ok(match &a[0] {
            Datum::Text(v) => {
                Datum::Array(v.split_ascii_whitespace().map(|s| s.parse().map_or(Datum::Null, Datum::Int)).collect())
            }
            _ => Datum::Null,
        })
    }),
);

/// The bytes of a `name` (PostgreSQL's `NAMEDATALEN`).
pub const NAME_BYTES: i64 = 64;

/// Byte `index` of a `name` as a `"char"` (PostgreSQL's text form: a
/// byte beyond ASCII is `\ooo`); empty past the name's end, NULL outside
/// its [`NAME_BYTES`].
pub fn name_byte(name: &str, index: i64) -> Datum {
    if !(0..NAME_BYTES).contains(&index) {
        return Datum::Null;
    }
    Datum::Text(match name.as_bytes().get(index as usize) {
        None => String::new(),
        Some(b) if b.is_ascii() => char::from(*b).to_string(),
        Some(b) => format!("\\{b:03o}"),
    })
}

/// A `name`'s subscript, called through [`Expr::Func`] as [`SUBSCRIPT`].
pub static NAME_SUBSCRIPT: FuncDef =
    FuncDef::custom("name_subscript", |_, call: &Call<'_>| Err(call.no_such_arity()), Eval::Values(name_at));

fn name_at(a: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    Ok(match (&a[0], &a[1]) {
        (Datum::Text(name), Datum::Int(i)) => name_byte(name, *i),
        _ => Datum::Null,
    })
}

/// The subscript operation, called through [`Expr::Func`] (it is not a
/// function SQL can name: PostgreSQL's `array_subscript_handler` is its
/// subscripting support routine).
pub static SUBSCRIPT: FuncDef =
    FuncDef::custom("array_subscript_handler", |_, call: &Call<'_>| Err(call.no_such_arity()), Eval::Values(at));

fn at(a: &[Datum], _: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    Ok(match &a[1] {
        Datum::Int(i) => element(&a[0], *i),
        _ => Datum::Null,
    })
}

impl Compiler<'_> {
    /// `root[i][j]…` and `(root).field`: each subscript or field
    /// selection applied in turn. A leading `.name` after a bare name
    /// continues the column reference (`c.conkey[1]`).
    pub(super) fn subscript(
        &mut self,
        root: &ast::Expr,
        chain: &[ast::AccessExpr],
    ) -> Result<(Expr, SqlType), SqlError> {
        let mut parts: Vec<ast::Ident> = match root {
            ast::Expr::Identifier(i) => vec![i.clone()],
            ast::Expr::CompoundIdentifier(p) => p.clone(),
            _ => Vec::new(),
        };
        let mut rest = chain;
        while let (false, Some((ast::AccessExpr::Dot(ast::Expr::Identifier(i)), tail))) =
            (parts.is_empty(), rest.split_first())
        {
            parts.push(i.clone());
            rest = tail;
        }
        let (mut x, mut t) = if rest.len() < chain.len() {
            self.compile(&ast::Expr::CompoundIdentifier(parts), None)?
        } else {
            self.compile(root, None)?
        };
        for access in rest {
            (x, t) = match access {
                ast::AccessExpr::Subscript(ast::Subscript::Index { index }) => self.element_of(x, t, index)?,
                ast::AccessExpr::Dot(ast::Expr::Identifier(field)) => field_of(x, t, &super::ident_name(field))?,
                other => return Err(SqlError::unsupported(&format!("the access {other}"))),
            };
        }
        Ok((x, t))
    }

    /// `x[index]`.
    fn element_of(&mut self, x: Expr, t: SqlType, index: &ast::Expr) -> Result<(Expr, SqlType), SqlError> {
        let (elem, op) = match t {
            SqlType::Array(e) => (*e, &SUBSCRIPT),
            SqlType::Name => (SqlType::QChar, &NAME_SUBSCRIPT),
            // A catalog vector column (`int2vector`, `oidvector`).
            SqlType::Text => (SqlType::Int8, &SUBSCRIPT),
            other => {
                return Err(SqlError::new(
                    turnstile_lock::SqlState::DATATYPE_MISMATCH,
                    format!("cannot subscript type {} because it does not support subscripting", other.name()),
                ))
            }
        };
        let (i, ti) = self.compile(index, Some(SqlType::Int4))?;
        if !(ti.is_integer() || ti == SqlType::Unknown) {
            return Err(SqlError::new(
                turnstile_lock::SqlState::DATATYPE_MISMATCH,
                "array subscript must have type integer",
            ));
        }
        Ok((Expr::Func(op, vec![x, i]), elem))
    }
}

/// `(x).name`: a field of a record (`42809` for another type, `42703`
/// for a field it lacks). A record's value is the array of its fields,
/// so the field is its element `k + 1`.
fn field_of(x: Expr, t: SqlType, name: &str) -> Result<(Expr, SqlType), SqlError> {
    let SqlType::Record(fields) = t else {
        return Err(SqlError::new(
            turnstile_lock::SqlState::WRONG_OBJECT_TYPE,
            format!("column notation .{name} applied to type {}, which is not a composite type", t.name()),
        ));
    };
    let Some(k) = fields.iter().position(|(n, _)| *n == name) else {
        return Err(SqlError::new(
            turnstile_lock::SqlState::UNDEFINED_COLUMN,
            format!("could not identify column \"{name}\" in record data type"),
        ));
    };
    Ok((Expr::Func(&SUBSCRIPT, vec![x, Expr::Const(Datum::Int(k as i64 + 1))]), fields[k].1))
}
