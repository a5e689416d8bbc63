//! [`SYSTEM_RELATIONS`]: every relation of `pg_catalog` and
//! `information_schema` turnstile computes, the list the binder resolves
//! names against ([`lookup`]), and the OIDs of the engine-state views
//! (`pg_locks`, …) that live in [`crate::views`].

use super::relation::{Reader, RowsFn, Schema, SystemRelation};
use super::{
    attribute, class, cluster, constraint, depend, empty, fk_constraint, info_constraints, info_tables, schema,
    sequences, settings, types, unused,
};
use crate::value::{Datum, SqlType};

/// The engine-state views of [`crate::views`]: OID (PostgreSQL 15's;
/// `pg_stat_lock`, which PostgreSQL 15 lacks, one of turnstile's) and name.
pub const STATUS_VIEW_OIDS: &[(u32, &str)] = &[
    (12073, "pg_locks"),
    (12222, "pg_stat_activity"),
    (12400, "pg_stat_lock"),
    (12401, "pg_stat_xact_log"),
    (12402, "pg_stat_version_store"),
    (12293, "pg_stat_wal"),
];

const fn rel(
    oid: u32,
    name: &'static str,
    kind: char,
    columns: &'static [(&'static str, SqlType)],
    rows: RowsFn,
) -> SystemRelation {
    SystemRelation { oid, schema: Schema::Catalog, name, kind, columns, rows }
}

const fn info(
    oid: u32,
    name: &'static str,
    columns: &'static [(&'static str, SqlType)],
    rows: RowsFn,
) -> SystemRelation {
    SystemRelation { oid, schema: Schema::InformationSchema, name, kind: 'v', columns, rows }
}

fn no_rows(_: &Reader<'_>) -> Vec<Vec<Datum>> {
    Vec::new()
}

/// Every system relation turnstile computes (`pg_locks`,
/// `pg_stat_activity` and `pg_stat_lock` are in [`crate::views`]).
pub static SYSTEM_RELATIONS: &[SystemRelation] = &[
    rel(1259, "pg_class", 'r', class::CLASS, class::class_rows),
    rel(2610, "pg_index", 'r', class::INDEX, class::index_rows),
    rel(2611, "pg_inherits", 'r', class::INHERITS, class::inherits_rows),
    rel(3350, "pg_partitioned_table", 'r', class::PARTITIONED_TABLE, class::partitioned_table_rows),
    rel(1249, "pg_attribute", 'r', attribute::ATTRIBUTE, attribute::attribute_rows),
    rel(2604, "pg_attrdef", 'r', attribute::ATTRDEF, attribute::attrdef_rows),
    rel(2606, "pg_constraint", 'r', constraint::CONSTRAINT, fk_constraint::all_constraint_rows),
    rel(1247, "pg_type", 'r', types::TYPE, types::type_rows),
    rel(1262, "pg_database", 'r', cluster::DATABASE, cluster::database_rows),
    rel(1260, "pg_authid", 'r', cluster::AUTHID, cluster::authid_rows),
    rel(12000, "pg_roles", 'v', cluster::ROLES, cluster::roles_rows),
    rel(12014, "pg_user", 'v', cluster::USER, cluster::user_rows),
    rel(1261, "pg_auth_members", 'r', cluster::AUTH_MEMBERS, no_rows),
    rel(1213, "pg_tablespace", 'r', cluster::TABLESPACE, cluster::tablespace_rows),
    rel(2615, "pg_namespace", 'r', schema::NAMESPACE, schema::namespace_rows),
    rel(2601, "pg_am", 'r', schema::AM, schema::am_rows),
    rel(3456, "pg_collation", 'r', schema::COLLATION, schema::collation_rows),
    rel(3079, "pg_extension", 'r', schema::EXTENSION, no_rows),
    rel(2609, "pg_description", 'r', schema::DESCRIPTION, schema::description_rows),
    rel(2612, "pg_language", 'r', schema::LANGUAGE, schema::language_rows),
    rel(12104, "pg_settings", 'v', settings::SETTINGS, settings::settings_rows),
    rel(12048, "pg_sequences", 'v', sequences::SEQUENCES, sequences::sequences_rows),
    rel(2224, "pg_sequence", 'r', sequences::SEQUENCE, sequences::sequence_rows),
    rel(1255, "pg_proc", 'r', settings::PROC, settings::proc_rows),
    rel(3256, "pg_policy", 'r', empty::POLICY, no_rows),
    rel(3381, "pg_statistic_ext", 'r', empty::STATISTIC_EXT, no_rows),
    rel(6104, "pg_publication", 'r', empty::PUBLICATION, no_rows),
    rel(6237, "pg_publication_namespace", 'r', empty::PUBLICATION_NAMESPACE, no_rows),
    rel(6106, "pg_publication_rel", 'r', empty::PUBLICATION_REL, no_rows),
    rel(2620, "pg_trigger", 'r', empty::TRIGGER, no_rows),
    rel(2618, "pg_rewrite", 'r', empty::REWRITE, no_rows),
    rel(2396, "pg_shdescription", 'r', empty::SHDESCRIPTION, no_rows),
    rel(3118, "pg_foreign_table", 'r', empty::FOREIGN_TABLE, no_rows),
    rel(2608, "pg_depend", 'r', depend::DEPEND, depend::depend_rows),
    rel(3394, "pg_init_privs", 'r', empty::INIT_PRIVS, schema::init_privs_rows),
    rel(3596, "pg_seclabel", 'r', empty::SECLABEL, no_rows),
    rel(3466, "pg_event_trigger", 'r', empty::EVENT_TRIGGER, no_rows),
    rel(826, "pg_default_acl", 'r', empty::DEFAULT_ACL, no_rows),
    rel(3501, "pg_enum", 'r', empty::ENUM, no_rows),
    rel(3541, "pg_range", 'r', empty::RANGE, no_rows),
    rel(2964, "pg_db_role_setting", 'r', empty::DB_ROLE_SETTING, no_rows),
    rel(6100, "pg_subscription", 'r', empty::SUBSCRIPTION, no_rows),
    rel(2605, "pg_cast", 'r', unused::CAST, no_rows),
    rel(2617, "pg_operator", 'r', unused::OPERATOR, no_rows),
    rel(2616, "pg_opclass", 'r', unused::OPCLASS, no_rows),
    rel(2753, "pg_opfamily", 'r', unused::OPFAMILY, no_rows),
    rel(2602, "pg_amop", 'r', unused::AMOP, no_rows),
    rel(2603, "pg_amproc", 'r', unused::AMPROC, no_rows),
    rel(2607, "pg_conversion", 'r', unused::CONVERSION, no_rows),
    rel(3576, "pg_transform", 'r', unused::TRANSFORM, no_rows),
    rel(3601, "pg_ts_parser", 'r', unused::TS_PARSER, no_rows),
    rel(3764, "pg_ts_template", 'r', unused::TS_TEMPLATE, no_rows),
    rel(3600, "pg_ts_dict", 'r', unused::TS_DICT, no_rows),
    rel(3602, "pg_ts_config", 'r', unused::TS_CONFIG, no_rows),
    rel(3603, "pg_ts_config_map", 'r', unused::TS_CONFIG_MAP, no_rows),
    rel(2328, "pg_foreign_data_wrapper", 'r', unused::FOREIGN_DATA_WRAPPER, no_rows),
    rel(1417, "pg_foreign_server", 'r', unused::FOREIGN_SERVER, no_rows),
    rel(1418, "pg_user_mapping", 'r', unused::USER_MAPPING, no_rows),
    rel(2995, "pg_largeobject_metadata", 'r', unused::LARGEOBJECT_METADATA, no_rows),
    rel(2613, "pg_largeobject", 'r', unused::LARGEOBJECT, no_rows),
    rel(3592, "pg_shseclabel", 'r', unused::SHSECLABEL, no_rows),
    rel(12099, "pg_seclabels", 'v', unused::SECLABELS, no_rows),
    info(13382, "schemata", info_tables::SCHEMATA, info_tables::schemata_rows),
    info(13425, "tables", info_tables::TABLES, info_tables::tables_rows),
    info(13295, "columns", info_tables::COLUMNS, info_tables::columns_rows),
    info(13411, "table_constraints", info_constraints::TABLE_CONSTRAINTS, info_constraints::table_constraints_rows),
    info(13329, "key_column_usage", info_constraints::KEY_COLUMN_USAGE, info_constraints::key_column_usage_rows),
];

/// The system relation `name` of `schema`.
pub fn lookup(schema: Schema, name: &str) -> Option<&'static SystemRelation> {
    // About 65 names, looked up once per FROM item when a statement is
    // bound: a scan is cheaper than building an index.
    SYSTEM_RELATIONS.iter().find(|r| r.schema == schema && r.name == name)
}

fn is_status_view(name: &str) -> bool {
    STATUS_VIEW_OIDS.iter().any(|v| v.1 == name)
}

/// Whether `name` (`pg_proc`, `pg_catalog.pg_proc`,
/// `information_schema.tables`) names a system relation, computed rather
/// than stored (`VACUUM` and `REINDEX` have nothing to do for one).
pub fn is_system_name(name: &str) -> bool {
    match name.split_once('.') {
        Some(("pg_catalog", n)) => lookup(Schema::Catalog, n).is_some() || is_status_view(n),
        Some(("information_schema", n)) => lookup(Schema::InformationSchema, n).is_some(),
        Some(_) => false,
        None => lookup(Schema::Catalog, name).is_some() || is_status_view(name),
    }
}

/// The system relation with OID `oid`.
pub fn by_oid(oid: u32) -> Option<&'static SystemRelation> {
    SYSTEM_RELATIONS.iter().find(|r| r.oid == oid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_oids_are_unique() {
        let mut oids = std::collections::HashSet::new();
        let mut names = std::collections::HashSet::new();
        for r in SYSTEM_RELATIONS {
            assert!(oids.insert(r.oid), "{r:?}: OID {} twice", r.oid);
            assert!(names.insert((r.schema, r.name)), "{r:?} twice");
            let mut cols = std::collections::HashSet::new();
            assert!(r.columns.iter().all(|(c, _)| cols.insert(*c)), "{r:?}: a column twice");
        }
    }
}
