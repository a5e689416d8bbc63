//! The casts of the object-identifier alias types: `text::regclass` reads
//! a name against the catalog (`regclassin`), `regclass::text` prints one
//! (`regclassout`); likewise `regtype`, `regproc`, `regnamespace`,
//! `regrole`. The compiler calls these for a cast
//! ([`reg_cast_in`]/[`reg_cast_out`]); they are not callable by name.
//!
//! `to_regclass`, `to_regtype`, `to_regproc`, `to_regnamespace` and
//! `to_regrole` are: they read a name as the cast does but answer NULL
//! where it raises "does not exist", as in PostgreSQL; unlike the cast
//! they take no OID written as a number (`to_regclass('1259')` looks for
//! a relation of that name).
//!
//! ```
//! use turnstile_sql::expr::functions::lookup;
//! assert!(lookup("to_regtype").is_some() && lookup("to_regclass").is_some());
//! ```

use super::def::{FuncDef, Volatility};
use super::text::text_arg;
use crate::catalog::reg::{reg_in, reg_out};
use crate::error::SqlError;
use crate::expr::EvalEnv;
use crate::value::{Datum, RegKind, SqlType};
use turnstile_lock::SqlState;

fn read(kind: RegKind, args: &[Datum], env: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    reg_in(kind, &text_arg(&args[0]), &*env.services)
}

fn print(kind: RegKind, args: &[Datum], env: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    let Datum::Int(v) = args[0] else { return Ok(Datum::Null) };
    let oid = u32::try_from(v).map_err(|_| crate::value::out_of_range(SqlType::Reg(kind)))?;
    Ok(Datum::Text(reg_out(kind, oid, &*env.services)?))
}

/// `to_reg…(name)`: the OID, or NULL when nothing has that name.
fn read_or_null(kind: RegKind, args: &[Datum], env: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    let name = text_arg(&args[0]);
    if name.trim().parse::<u32>().is_ok() {
        return Ok(Datum::Null);
    }
    match reg_in(kind, &name, &*env.services) {
        Err(e)
            if matches!(
                e.code,
                SqlState::UNDEFINED_TABLE
                    | SqlState::UNDEFINED_OBJECT
                    | SqlState::UNDEFINED_FUNCTION
                    | SqlState::INVALID_SCHEMA_NAME
            ) =>
        {
            Ok(Datum::Null)
        }
        other => other,
    }
}

macro_rules! to_reg_defs {
    ($($kind:ident: $name:literal $static:ident;)*) => {$(
        #[doc = concat!("`", $name, "(text)`: see the module header.")]
        pub static $static: FuncDef = FuncDef::fixed($name, &[SqlType::Text], SqlType::Reg(RegKind::$kind), |a, env| {
            read_or_null(RegKind::$kind, a, env)
        })
        .volatility(Volatility::Stable);
    )*};
}

to_reg_defs! {
    Class: "to_regclass" TO_REGCLASS;
    Type: "to_regtype" TO_REGTYPE;
    Proc: "to_regproc" TO_REGPROC;
    Namespace: "to_regnamespace" TO_REGNAMESPACE;
    Role: "to_regrole" TO_REGROLE;
}

macro_rules! reg_defs {
    ($($kind:ident: $in_name:literal $in_static:ident, $out_name:literal $out_static:ident;)*) => {$(
        static $in_static: FuncDef = FuncDef::fixed($in_name, &[SqlType::Text], SqlType::Reg(RegKind::$kind), |a, env| {
            read(RegKind::$kind, a, env)
        })
        .volatility(Volatility::Stable);
        static $out_static: FuncDef = FuncDef::fixed($out_name, &[SqlType::Reg(RegKind::$kind)], SqlType::Text, |a, env| {
            print(RegKind::$kind, a, env)
        })
        .volatility(Volatility::Stable);
    )*};
}

reg_defs! {
    Class: "regclassin" CLASS_IN, "regclassout" CLASS_OUT;
    Type: "regtypein" TYPE_IN, "regtypeout" TYPE_OUT;
    Proc: "regprocin" PROC_IN, "regprocout" PROC_OUT;
    Namespace: "regnamespacein" NAMESPACE_IN, "regnamespaceout" NAMESPACE_OUT;
    Role: "regrolein" ROLE_IN, "regroleout" ROLE_OUT;
}

/// The input function of `kind` (text in, OID out).
pub fn reg_cast_in(kind: RegKind) -> &'static FuncDef {
    match kind {
        RegKind::Class => &CLASS_IN,
        RegKind::Type => &TYPE_IN,
        RegKind::Proc => &PROC_IN,
        RegKind::Namespace => &NAMESPACE_IN,
        RegKind::Role => &ROLE_IN,
    }
}

/// The output function of `kind` (OID in, name out).
pub fn reg_cast_out(kind: RegKind) -> &'static FuncDef {
    match kind {
        RegKind::Class => &CLASS_OUT,
        RegKind::Type => &TYPE_OUT,
        RegKind::Proc => &PROC_OUT,
        RegKind::Namespace => &NAMESPACE_OUT,
        RegKind::Role => &ROLE_OUT,
    }
}
