//! The casts of the object-identifier alias types: `text::regclass` reads
//! a name against the catalog (`regclassin`), `regclass::text` prints one
//! (`regclassout`); likewise `regtype`, `regproc`, `regnamespace`,
//! `regrole`. The compiler calls these for a cast
//! ([`reg_cast_in`]/[`reg_cast_out`]); they are not callable by name.

use super::def::{FuncDef, Volatility};
use super::text::text_arg;
use crate::catalog::reg::{reg_in, reg_out};
use crate::error::SqlError;
use crate::expr::EvalEnv;
use crate::value::{Datum, RegKind, SqlType};

fn read(kind: RegKind, args: &[Datum], env: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    reg_in(kind, &text_arg(&args[0]), &*env.services)
}

fn print(kind: RegKind, args: &[Datum], env: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    let Datum::Int(v) = args[0] else { return Ok(Datum::Null) };
    let oid = u32::try_from(v).map_err(|_| crate::value::out_of_range(SqlType::Reg(kind)))?;
    Ok(Datum::Text(reg_out(kind, oid, &*env.services)?))
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
