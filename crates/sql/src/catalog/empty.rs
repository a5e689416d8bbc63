//! System relations turnstile has no objects for — policies, extended
//! statistics, publications, triggers, rules, foreign tables, … — with
//! PostgreSQL 15's columns, so that the tools' queries that read them
//! (psql's `\d`, pg_dump) run and find no rows, as they would in a
//! PostgreSQL database without such objects.

use super::datum::{ACL_ARRAY, CHAR_ARRAY, OID_ARRAY, TEXT_ARRAY};
use crate::value::SqlType;
use SqlType::*;

/// `pg_catalog.pg_policy`'s columns.
pub(super) const POLICY: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("polname", Name),
    ("polrelid", Oid),
    ("polcmd", QChar),
    ("polpermissive", Bool),
    ("polroles", OID_ARRAY), /* _oid */
    ("polqual", Text),       /* pg_node_tree */
    ("polwithcheck", Text),  /* pg_node_tree */
];

/// `pg_catalog.pg_statistic_ext`'s columns.
pub(super) const STATISTIC_EXT: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("stxrelid", Oid),
    ("stxname", Name),
    ("stxnamespace", Oid),
    ("stxowner", Oid),
    ("stxstattarget", Int4),
    ("stxkeys", Text),       /* int2vector */
    ("stxkind", CHAR_ARRAY), /* _char */
    ("stxexprs", Text),      /* pg_node_tree */
];

/// `pg_catalog.pg_publication`'s columns.
pub(super) const PUBLICATION: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("pubname", Name),
    ("pubowner", Oid),
    ("puballtables", Bool),
    ("pubinsert", Bool),
    ("pubupdate", Bool),
    ("pubdelete", Bool),
    ("pubtruncate", Bool),
    ("pubviaroot", Bool),
];

/// `pg_catalog.pg_publication_namespace`'s columns.
pub(super) const PUBLICATION_NAMESPACE: &[(&str, SqlType)] = &[("oid", Oid), ("pnpubid", Oid), ("pnnspid", Oid)];

/// `pg_catalog.pg_publication_rel`'s columns.
pub(super) const PUBLICATION_REL: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("prpubid", Oid),
    ("prrelid", Oid),
    ("prqual", Text),  /* pg_node_tree */
    ("prattrs", Text), /* int2vector */
];

/// `pg_catalog.pg_trigger`'s columns.
pub(super) const TRIGGER: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("tgrelid", Oid),
    ("tgparentid", Oid),
    ("tgname", Name),
    ("tgfoid", Oid),
    ("tgtype", Int2),
    ("tgenabled", QChar),
    ("tgisinternal", Bool),
    ("tgconstrrelid", Oid),
    ("tgconstrindid", Oid),
    ("tgconstraint", Oid),
    ("tgdeferrable", Bool),
    ("tginitdeferred", Bool),
    ("tgnargs", Int2),
    ("tgattr", Text), /* int2vector */
    ("tgargs", Text), /* bytea */
    ("tgqual", Text), /* pg_node_tree */
    ("tgoldtable", Name),
    ("tgnewtable", Name),
];

/// `pg_catalog.pg_rewrite`'s columns.
pub(super) const REWRITE: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("rulename", Name),
    ("ev_class", Oid),
    ("ev_type", QChar),
    ("ev_enabled", QChar),
    ("is_instead", Bool),
    ("ev_qual", Text),   /* pg_node_tree */
    ("ev_action", Text), /* pg_node_tree */
];

/// `pg_catalog.pg_shdescription`'s columns.
pub(super) const SHDESCRIPTION: &[(&str, SqlType)] = &[("objoid", Oid), ("classoid", Oid), ("description", Text)];

/// `pg_catalog.pg_foreign_table`'s columns.
pub(super) const FOREIGN_TABLE: &[(&str, SqlType)] =
    &[("ftrelid", Oid), ("ftserver", Oid), ("ftoptions", TEXT_ARRAY) /* _text */];

/// `pg_catalog.pg_init_privs`'s columns.
pub(super) const INIT_PRIVS: &[(&str, SqlType)] = &[
    ("objoid", Oid),
    ("classoid", Oid),
    ("objsubid", Int4),
    ("privtype", QChar),
    ("initprivs", ACL_ARRAY), /* _aclitem */
];

/// `pg_catalog.pg_seclabel`'s columns.
pub(super) const SECLABEL: &[(&str, SqlType)] =
    &[("objoid", Oid), ("classoid", Oid), ("objsubid", Int4), ("provider", Text), ("label", Text)];

/// `pg_catalog.pg_event_trigger`'s columns.
pub(super) const EVENT_TRIGGER: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("evtname", Name),
    ("evtevent", Name),
    ("evtowner", Oid),
    ("evtfoid", Oid),
    ("evtenabled", QChar),
    ("evttags", TEXT_ARRAY), /* _text */
];

/// `pg_catalog.pg_default_acl`'s columns.
pub(super) const DEFAULT_ACL: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("defaclrole", Oid),
    ("defaclnamespace", Oid),
    ("defaclobjtype", QChar),
    ("defaclacl", ACL_ARRAY), /* _aclitem */
];

/// `pg_catalog.pg_enum`'s columns.
pub(super) const ENUM: &[(&str, SqlType)] =
    &[("oid", Oid), ("enumtypid", Oid), ("enumsortorder", Float4), ("enumlabel", Name)];

/// `pg_catalog.pg_range`'s columns.
pub(super) const RANGE: &[(&str, SqlType)] = &[
    ("rngtypid", Oid),
    ("rngsubtype", Oid),
    ("rngmultitypid", Oid),
    ("rngcollation", Oid),
    ("rngsubopc", Oid),
    ("rngcanonical", Text),
    ("rngsubdiff", Text),
];

/// `pg_catalog.pg_db_role_setting`'s columns.
pub(super) const DB_ROLE_SETTING: &[(&str, SqlType)] =
    &[("setdatabase", Oid), ("setrole", Oid), ("setconfig", TEXT_ARRAY) /* _text */];

/// `pg_catalog.pg_subscription`'s columns.
pub(super) const SUBSCRIPTION: &[(&str, SqlType)] = &[
    ("oid", Oid),
    ("subdbid", Oid),
    ("subskiplsn", Text), /* pg_lsn */
    ("subname", Name),
    ("subowner", Oid),
    ("subenabled", Bool),
    ("subbinary", Bool),
    ("substream", Bool),
    ("subtwophasestate", QChar),
    ("subdisableonerr", Bool),
    ("subconninfo", Text),
    ("subslotname", Name),
    ("subsynccommit", Text),
    ("subpublications", TEXT_ARRAY), /* _text */
];
