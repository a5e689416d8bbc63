//! System relations for object kinds a turnstile user cannot define —
//! operators and operator classes, casts, conversions, transforms, text
//! search configurations, foreign-data wrappers and servers, large
//! objects, security labels — with PostgreSQL 15's columns and types.
//! pg_dump scans each of them and dumps only the rows a user created
//! (OID ≥ 16384); turnstile's built-in operators, casts and encodings are
//! fixed in the binary, not catalog objects a dump could recreate, so the
//! relations hold no rows, as in a PostgreSQL database where the user
//! created no such object.
//!
//! `regproc` columns are [`SqlType::Reg`]`(`[`RegKind::Proc`]`)`, so that
//! `prsstart::oid` and `fdwhandler::regproc` read as in PostgreSQL.

use super::datum::{ACL_ARRAY, TEXT_ARRAY};
use crate::value::{RegKind, SqlType};
use SqlType::*;

/// `regproc`.
const REGPROC: SqlType = Reg(RegKind::Proc);

/// `pg_catalog.pg_cast`'s columns.
pub(super) const CAST: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("castsource", Oid),
    ("casttarget", Oid),
    ("castfunc", Oid),
    ("castcontext", QChar),
    ("castmethod", QChar),
];

/// `pg_catalog.pg_operator`'s columns.
pub(super) const OPERATOR: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("oprname", Name),
    ("oprnamespace", Oid),
    ("oprowner", Oid),
    ("oprkind", QChar),
    ("oprcanmerge", Bool),
    ("oprcanhash", Bool),
    ("oprleft", Oid),
    ("oprright", Oid),
    ("oprresult", Oid),
    ("oprcom", Oid),
    ("oprnegate", Oid),
    ("oprcode", REGPROC),
    ("oprrest", REGPROC),
    ("oprjoin", REGPROC),
];

/// `pg_catalog.pg_opclass`'s columns.
pub(super) const OPCLASS: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("opcmethod", Oid),
    ("opcname", Name),
    ("opcnamespace", Oid),
    ("opcowner", Oid),
    ("opcfamily", Oid),
    ("opcintype", Oid),
    ("opcdefault", Bool),
    ("opckeytype", Oid),
];

/// `pg_catalog.pg_opfamily`'s columns.
pub(super) const OPFAMILY: &[(&str, SqlType)] =
    &[("oid", Oid), ("opfmethod", Oid), ("opfname", Name), ("opfnamespace", Oid), ("opfowner", Oid)];

/// `pg_catalog.pg_amop`'s columns.
pub(super) const AMOP: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("amopfamily", Oid),
    ("amoplefttype", Oid),
    ("amoprighttype", Oid),
    ("amopstrategy", Int2),
    ("amoppurpose", QChar),
    ("amopopr", Oid),
    ("amopmethod", Oid),
    ("amopsortfamily", Oid),
];

/// `pg_catalog.pg_amproc`'s columns.
pub(super) const AMPROC: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("amprocfamily", Oid),
    ("amproclefttype", Oid),
    ("amprocrighttype", Oid),
    ("amprocnum", Int2),
    ("amproc", REGPROC),
];

/// `pg_catalog.pg_conversion`'s columns.
pub(super) const CONVERSION: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("conname", Name),
    ("connamespace", Oid),
    ("conowner", Oid),
    ("conforencoding", Int4),
    ("contoencoding", Int4),
    ("conproc", REGPROC),
    ("condefault", Bool),
];

/// `pg_catalog.pg_transform`'s columns.
pub(super) const TRANSFORM: &[(&str, SqlType)] =
    &[("oid", Oid), ("trftype", Oid), ("trflang", Oid), ("trffromsql", REGPROC), ("trftosql", REGPROC)];

/// `pg_catalog.pg_ts_parser`'s columns.
pub(super) const TS_PARSER: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("prsname", Name),
    ("prsnamespace", Oid),
    ("prsstart", REGPROC),
    ("prstoken", REGPROC),
    ("prsend", REGPROC),
    ("prsheadline", REGPROC),
    ("prslextype", REGPROC),
];

/// `pg_catalog.pg_ts_template`'s columns.
pub(super) const TS_TEMPLATE: &[(&str, SqlType)] =
    &[("oid", Oid), ("tmplname", Name), ("tmplnamespace", Oid), ("tmplinit", REGPROC), ("tmpllexize", REGPROC)];

/// `pg_catalog.pg_ts_dict`'s columns.
pub(super) const TS_DICT: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("dictname", Name),
    ("dictnamespace", Oid),
    ("dictowner", Oid),
    ("dicttemplate", Oid),
    ("dictinitoption", Text),
];

/// `pg_catalog.pg_ts_config`'s columns.
pub(super) const TS_CONFIG: &[(&str, SqlType)] =
    &[("oid", Oid), ("cfgname", Name), ("cfgnamespace", Oid), ("cfgowner", Oid), ("cfgparser", Oid)];

/// `pg_catalog.pg_ts_config_map`'s columns.
pub(super) const TS_CONFIG_MAP: &[(&str, SqlType)] =
    &[("mapcfg", Oid), ("maptokentype", Int4), ("mapseqno", Int4), ("mapdict", Oid)];

/// `pg_catalog.pg_foreign_data_wrapper`'s columns.
pub(super) const FOREIGN_DATA_WRAPPER: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("fdwname", Name),
    ("fdwowner", Oid),
    ("fdwhandler", Oid),
    ("fdwvalidator", Oid),
    ("fdwacl", ACL_ARRAY),
    ("fdwoptions", TEXT_ARRAY),
];

/// `pg_catalog.pg_foreign_server`'s columns.
pub(super) const FOREIGN_SERVER: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("srvname", Name),
    ("srvowner", Oid),
    ("srvfdw", Oid),
    ("srvtype", Text),
    ("srvversion", Text),
    ("srvacl", ACL_ARRAY),
    ("srvoptions", TEXT_ARRAY),
];

/// `pg_catalog.pg_user_mapping`'s columns.
pub(super) const USER_MAPPING: &[(&str, SqlType)] =
    &[("oid", Oid), ("umuser", Oid), ("umserver", Oid), ("umoptions", TEXT_ARRAY)];

/// `pg_catalog.pg_largeobject_metadata`'s columns.
pub(super) const LARGEOBJECT_METADATA: &[(&str, SqlType)] = &[("oid", Oid), ("lomowner", Oid), ("lomacl", ACL_ARRAY)];

/// `pg_catalog.pg_largeobject`'s columns.
pub(super) const LARGEOBJECT: &[(&str, SqlType)] = &[("loid", Oid), ("pageno", Int4), ("data", Bytea)];

/// `pg_catalog.pg_shseclabel`'s columns.
pub(super) const SHSECLABEL: &[(&str, SqlType)] =
    &[("objoid", Oid), ("classoid", Oid), ("provider", Text), ("label", Text)];

/// `pg_catalog.pg_seclabels`' columns (a view over `pg_seclabel` and
/// `pg_shseclabel`).
pub(super) const SECLABELS: &[(&str, SqlType)] = &[
    ("objoid", Oid),
    ("classoid", Oid),
    ("objsubid", Int4),
    ("objtype", Text),
    ("objnamespace", Oid),
    ("objname", Text),
    ("provider", Text),
    ("label", Text),
];
