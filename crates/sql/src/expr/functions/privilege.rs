//! Access privilege inquiry functions: `has_table_privilege`,
//! `has_schema_privilege`, `has_database_privilege`,
//! `has_function_privilege`, `has_column_privilege`,
//! `has_any_column_privilege`, each as `f(object, privilege)` or
//! `f(user, object, privilege)`.
//!
//! turnstile has one role, the superuser, who holds every privilege: the
//! answer is `true` for an object that exists and a privilege the object
//! type has (a privilege name it lacks is `22023`, an unknown object
//! named by name `42P01`/`3F000`/`3D000`/`42883`, by OID NULL), as
//! PostgreSQL answers for a superuser.

use super::def::{Call, Eval, FuncDef, Volatility};
use crate::catalog::reg::reg_in;
use crate::error::SqlError;
use crate::expr::{Compiler, EvalEnv, Expr};
use crate::value::{Datum, RegKind, SqlType};
use turnstile_lock::SqlState;

/// One inquiry function: its privileges, and how its object is found.
struct Inquiry {
    privileges: &'static [&'static str],
    /// The catalog kind whose name the object argument is, if any.
    kind: Option<RegKind>,
    /// Whether a column follows the table (`has_column_privilege`).
    column: bool,
}

const TABLE: Inquiry = Inquiry {
    privileges: &["SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER"],
    kind: Some(RegKind::Class),
    column: false,
};
const SCHEMA: Inquiry = Inquiry { privileges: &["CREATE", "USAGE"], kind: Some(RegKind::Namespace), column: false };
const DATABASE: Inquiry =
    Inquiry { privileges: &["CREATE", "CONNECT", "TEMPORARY", "TEMP"], kind: None, column: false };
const FUNCTION: Inquiry = Inquiry { privileges: &["EXECUTE"], kind: Some(RegKind::Proc), column: false };
const COLUMN_PRIVILEGES: &[&str] = &["SELECT", "INSERT", "UPDATE", "REFERENCES"];
const COLUMN: Inquiry = Inquiry { privileges: COLUMN_PRIVILEGES, kind: Some(RegKind::Class), column: true };
const ANY_COLUMN: Inquiry = Inquiry { privileges: COLUMN_PRIVILEGES, kind: Some(RegKind::Class), column: false };

fn resolve(c: &mut Compiler<'_>, call: &Call<'_>) -> Result<(Expr, SqlType), SqlError> {
    call.arity(2, 3)?;
    let mut args = Vec::with_capacity(call.args.len());
    for a in call.args {
        args.push(c.compile(a, None)?.0);
    }
    Ok((Expr::Func(call.def, args), SqlType::Bool))
}

fn check(q: &Inquiry, args: &[Datum], env: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    if args.iter().any(Datum::is_null) {
        return Ok(Datum::Null);
    }
    // `(object, privilege)` or `(user, object, privilege)`; a column
    // inquiry `(table, column, privilege)` names its table first.
    let (object, privilege) = (&args[args.len() - 2], &args[args.len() - 1]);
    let object = if q.column && args.len() == 3 { &args[0] } else { object };
    let Datum::Text(privilege) = privilege else {
        return Err(SqlError::new(SqlState::INVALID_PARAMETER_VALUE, "privilege type must be text"));
    };
    for p in privilege.split(',') {
        let p = p.trim().to_ascii_uppercase();
        let p = p.strip_suffix(" WITH GRANT OPTION").unwrap_or(&p);
        if !q.privileges.contains(&p) {
            return Err(SqlError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                format!("unrecognized privilege type: \"{p}\""),
            ));
        }
    }
    match (object, q.kind) {
        (Datum::Text(name), Some(kind)) => reg_in(kind, name, &*env.services).map(|_| Datum::Bool(true)),
        (Datum::Text(name), None) => {
            let exists = env.services.shared().engine.catalog().database(name).is_ok();
            if exists {
                Ok(Datum::Bool(true))
            } else {
                Err(SqlError::new(SqlState::INVALID_CATALOG_NAME, format!("database \"{name}\" does not exist")))
            }
        }
        _ => Ok(Datum::Bool(true)),
    }
}

macro_rules! inquiry {
    ($($static:ident $name:literal $q:ident;)*) => {$(
        #[doc = concat!("`", $name, "([user,] object, privilege)`.")]
        pub static $static: FuncDef = FuncDef::custom($name, resolve, Eval::Lazy(|args, row, env| {
            let mut vals = Vec::with_capacity(args.len());
            for a in args {
                vals.push(a.eval(row, env)?);
            }
            check(&$q, &vals, env)
        }))
        .called_on_null()
        .volatility(Volatility::Stable);
    )*};
}

inquiry! {
    HAS_TABLE "has_table_privilege" TABLE;
    HAS_SCHEMA "has_schema_privilege" SCHEMA;
    HAS_DATABASE "has_database_privilege" DATABASE;
    HAS_FUNCTION "has_function_privilege" FUNCTION;
    HAS_COLUMN "has_column_privilege" COLUMN;
    HAS_ANY_COLUMN "has_any_column_privilege" ANY_COLUMN;
}
