//! The session's schema search path (`search_path`), as the catalog
//! functions read it: `current_schema()`, `current_schemas()`, and whether
//! `pg_get_indexdef` qualifies a table with its schema.
//!
//! The path is the setting's comma-separated list, each name unquoted and
//! kept when such a schema exists (`"$user"` names the session user's
//! schema, which turnstile never has); `pg_catalog` is searched first when
//! the list does not name it (an implicit schema, as in PostgreSQL).
//! Name resolution itself finds a user's relation with or without
//! `public.` whatever the path (turnstile has one user schema).
//!
//! ```
//! use turnstile_sql::catalog::search_path::schemas_of;
//! assert_eq!(schemas_of("\"$user\", public"), ["public"]);
//! assert_eq!(schemas_of(""), Vec::<&str>::new());
//! assert_eq!(schemas_of("information_schema, nope, PUBLIC"), ["information_schema", "public"]);
//! ```

use super::schema::namespace_oid;
use crate::expr::Services;

/// The schemas a `search_path` value names that exist, in order.
pub fn schemas_of(setting: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    for item in setting.split(',') {
        let item = item.trim();
        let name = match item.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
            Some(quoted) => quoted.replace("\"\"", "\""),
            None => item.to_ascii_lowercase(),
        };
        let known = namespace_oid(&name).and_then(super::schema::namespace_name);
        if let Some(schema) = known.filter(|s| !out.contains(s)) {
            out.push(schema);
        }
    }
    out
}

/// The session's search path (explicit schemas only).
pub fn search_path(services: &dyn Services) -> Vec<&'static str> {
    let setting = services.setting("search_path").ok().flatten().unwrap_or_default();
    schemas_of(&setting)
}

/// Whether `public` is on the session's search path (so that its
/// relations print unqualified).
pub fn public_visible(services: &dyn Services) -> bool {
    search_path(services).contains(&"public")
}
