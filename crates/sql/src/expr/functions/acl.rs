//! `acldefault(objtype, owner)`: the privileges an object of a kind has
//! when its ACL column is NULL — PostgreSQL's hard-wired defaults
//! (`acldefault()` in `acl.c`), as `aclitem[]` text (turnstile shows
//! `aclitem[]` as `text[]`, [`crate::catalog::datum`]). pg_dump compares
//! each object's ACL with it to decide whether to dump `GRANT`s.
//!
//! Each item is `grantee=privileges/grantor`; an empty grantee is
//! `PUBLIC`; a role turnstile does not know is shown by its OID, as
//! PostgreSQL shows a dropped role.

use super::def::{FuncDef, Volatility};
use crate::catalog::cluster::role_name;
use crate::error::SqlError;
use crate::value::{Datum, SqlType};
use turnstile_lock::SqlState;

/// `aclitem[]`, shown as `text[]`.
const ACL_ARRAY: SqlType = SqlType::Array(&SqlType::Text);

/// `acldefault("char", oid)`: immutable and strict, as in PostgreSQL.
pub static ACLDEFAULT: FuncDef = FuncDef::fixed("acldefault", &[SqlType::QChar, SqlType::Oid], ACL_ARRAY, |a, _| {
    let kind = a[0].to_text(SqlType::QChar).unwrap_or_default();
    let owner = match a[1] {
        Datum::Int(v) => u32::try_from(v).unwrap_or(0),
        _ => 0,
    };
    let owner = role_name(owner).map_or_else(|| owner.to_string(), str::to_owned);
    let items = default_acl(&kind, &owner)?;
    Ok(Datum::Array(items.into_iter().map(Datum::Text).collect()))
})
.volatility(Volatility::Immutable);

/// The default ACL of an object of kind `kind` (`acldefault`'s object
/// type letters) owned by `owner`: `PUBLIC`'s privileges (if any), then
/// the owner's, each granted by the owner.
///
/// ```
/// use turnstile_sql::expr::functions::acl::default_acl;
/// assert_eq!(default_acl("r", "postgres").unwrap(), ["postgres=arwdDxt/postgres"]);
/// assert_eq!(default_acl("f", "postgres").unwrap(), ["=X/postgres", "postgres=X/postgres"]);
/// assert!(default_acl("x", "postgres").is_err());
/// ```
pub fn default_acl(kind: &str, owner: &str) -> Result<Vec<String>, SqlError> {
    // (PUBLIC's privileges, the owner's), PostgreSQL 15's ACL_ALL_RIGHTS_*.
    let (public, own) = match kind {
        "c" => ("", ""),
        "r" => ("", "arwdDxt"),
        "s" => ("", "rwU"),
        "d" => ("Tc", "CTc"),
        "f" => ("X", "X"),
        "l" | "T" => ("U", "U"),
        "L" => ("", "rw"),
        "n" => ("", "UC"),
        "t" => ("", "C"),
        "F" | "S" => ("", "U"),
        _ => return Err(SqlError::new(SqlState::INTERNAL_ERROR, format!("unrecognized objtype abbreviation: {kind}"))),
    };
    let mut items = Vec::new();
    if !public.is_empty() {
        items.push(format!("={public}/{owner}"));
    }
    if !own.is_empty() {
        items.push(format!("{owner}={own}/{owner}"));
    }
    Ok(items)
}
