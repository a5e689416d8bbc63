//! DDL: `CREATE TABLE` (with partitions), `CREATE INDEX`, `ALTER TABLE`.

use crate::error::{Severity, SqlError};
use crate::expr;
use crate::expr::{object_name, parse_type_name, Compiler, Scope};
use crate::fk::define::FkSpec;
use crate::sequence::ddl::{seq_options, serial_type, KeySequence};
use crate::sequence::{Identity, SeqType};
use crate::session::SqlSession;
use crate::statement::Outcome;
use crate::value::{Datum, SqlType};
use sqlparser::ast;
use turnstile_engine::catalog::{KeyPartSpec, PartitionBound, PartitionStrategy};
use turnstile_engine::types::ColumnType;
use turnstile_lock::SqlState;

impl SqlSession {
    /// `IF NOT EXISTS`: whether relation `name` exists (then PostgreSQL's
    /// "already exists, skipping" notice is given).
    fn exists_skipping(&mut self, name: &str) -> bool {
        let exists = self.es.engine().catalog().relation(self.es.database(), name).is_ok();
        if exists {
            self.notice(
                Severity::Notice,
                SqlState::DUPLICATE_TABLE,
                format!("relation \"{name}\" already exists, skipping"),
            );
        }
        exists
    }

    /// `base`, or `base1`, `base2`, … : the first that names no relation yet.
    fn free_relation_name(&self, base: &str) -> String {
        let cat = self.es.engine().catalog().snapshot();
        let db = self.es.database();
        let mut candidate = base.to_owned();
        let mut k = 0;
        while cat.find(db, &candidate).is_some() {
            k += 1;
            candidate = format!("{base}{k}");
        }
        candidate
    }

    pub(crate) fn create_table(&mut self, ct: &ast::CreateTable) -> Result<Outcome, SqlError> {
        let name = object_name(&ct.name)?;
        if ct.query.is_some() {
            return Err(SqlError::unsupported("CREATE TABLE … AS"));
        }
        if ct.if_not_exists && self.exists_skipping(&name) {
            return Self::command("CREATE TABLE");
        }
        let fillfactor = table_fillfactor(&ct.table_options)?;
        if let Some(parent) = &ct.partition_of {
            let parent = object_name(parent)?;
            self.es.create_partition(&parent, &name, partition_bound(ct.for_values.as_ref())?)?;
            if fillfactor.is_some() {
                self.es.set_fillfactor(&name, fillfactor)?;
            }
            return Self::command("CREATE TABLE");
        }
        let mut spec = TableSpec::of(ct)?;
        let partition_by = match &ct.partition_by {
            None => None,
            Some(e) => Some(partition_spec(e)?),
        };
        let col_refs: Vec<(&str, ColumnType)> = spec.cols.iter().map(|(n, t)| (n.as_str(), *t)).collect();
        let pb = partition_by.as_ref().map(|(s, c)| (*s, c.as_str()));
        self.es.create_table(&name, &col_refs, pb)?;
        if ct.unlogged {
            self.es.set_unlogged(&name)?;
        }
        if fillfactor.is_some() {
            self.es.set_fillfactor(&name, fillfactor)?;
        }
        let keys = std::mem::take(&mut spec.keys);
        spec.defaults.extend(self.key_sequences(&name, keys)?);
        let fks = std::mem::take(&mut spec.fks);
        self.add_constraints(&name, spec)?;
        for fk in &fks {
            if let Err(e) = self.add_foreign_key(&name, fk, false) {
                // PostgreSQL creates nothing when a constraint fails.
                self.es.drop_relation(&name)?;
                self.drop_owned_sequences(&name)?;
                return Err(e);
            }
        }
        Self::command("CREATE TABLE")
    }

    /// The constraints and defaults of a table just created: NOT NULL,
    /// DEFAULT, PRIMARY KEY, then each UNIQUE as a unique index, named as
    /// PostgreSQL's ChooseConstraintName names it (table_columns_key, then
    /// _key1, …).
    fn add_constraints(&mut self, name: &str, spec: TableSpec) -> Result<(), SqlError> {
        if !spec.not_null.is_empty() {
            let refs: Vec<&str> = spec.not_null.iter().map(String::as_str).collect();
            self.es.set_not_null(name, &refs)?;
        }
        if !spec.defaults.is_empty() {
            let refs: Vec<(&str, Option<&str>)> =
                spec.defaults.iter().map(|(c, d)| (c.as_str(), Some(d.as_str()))).collect();
            self.es.set_defaults(name, &refs)?;
        }
        if let Some(cols) = spec.pk {
            let refs: Vec<&str> = cols.iter().map(String::as_str).collect();
            self.es.add_primary_key(name, &refs)?;
        }
        for (given, cols) in spec.unique {
            let index = match given {
                Some(n) => n,
                None => self.free_relation_name(&format!("{name}_{}_key", cols.join("_"))),
            };
            let refs: Vec<&str> = cols.iter().map(String::as_str).collect();
            self.es.create_index(name, &index, &refs, true)?;
        }
        Ok(())
    }

    pub(crate) fn create_index(&mut self, ci: &ast::CreateIndex) -> Result<Outcome, SqlError> {
        let table = object_name(&ci.table_name)?;
        if ci.predicate.is_some() {
            return Err(SqlError::unsupported("partial indexes"));
        }
        if ci.using.as_ref().is_some_and(|u| !u.to_string().eq_ignore_ascii_case("btree")) {
            return Err(SqlError::unsupported("index methods other than btree"));
        }
        let key = self.index_key(&table, &ci.columns)?;
        let name = match &ci.name {
            Some(n) => object_name(n)?,
            None => {
                // PostgreSQL's ChooseRelationName: table_col_idx (an
                // expression named by its function, else `expr`), then
                // _idx1, …
                let names: Vec<&str> = key
                    .iter()
                    .map(|k| match k {
                        KeyPartSpec::Column(c) => c.as_str(),
                        KeyPartSpec::Expression(e) => e.name.as_str(),
                    })
                    .collect();
                let base = format!("{table}_{}_idx", names.join("_"));
                self.free_relation_name(&base)
            }
        };
        if ci.if_not_exists && self.exists_skipping(&name) {
            return Self::command("CREATE INDEX");
        }
        self.es.create_index(&table, &name, &key, ci.unique)?;
        Self::command("CREATE INDEX")
    }

    /// The key of `CREATE INDEX … ON table (columns)`: column names, and
    /// expressions checked and described ([`crate::index_expr::define`]).
    fn index_key(&self, table: &str, columns: &[ast::IndexColumn]) -> Result<Vec<KeyPartSpec>, SqlError> {
        let mut key = Vec::with_capacity(columns.len());
        for c in columns {
            match &c.column.expr {
                ast::Expr::Identifier(i) => key.push(KeyPartSpec::Column(expr::ident_name(i))),
                ast::Expr::Nested(inner) if matches!(**inner, ast::Expr::Identifier(_)) => {
                    let ast::Expr::Identifier(i) = &**inner else { continue };
                    key.push(KeyPartSpec::Column(expr::ident_name(i)))
                }
                e => {
                    let rel = self.es.engine().catalog().relation(self.es.database(), table).map_err(|_| {
                        SqlError::new(SqlState::UNDEFINED_TABLE, format!("relation \"{table}\" does not exist"))
                    })?;
                    let cols: Vec<(String, ColumnType)> = rel.columns.iter().map(|c| (c.name.clone(), c.ty)).collect();
                    key.push(KeyPartSpec::Expression(crate::index_expr::define(table, &cols, e)?));
                }
            }
        }
        Ok(key)
    }

    pub(crate) fn alter_table(&mut self, at: &ast::AlterTable) -> Result<Outcome, SqlError> {
        self.alter_table_naming(at, None)
    }

    /// `ALTER TABLE`, `sequence` the `SEQUENCE NAME` its `ADD GENERATED …
    /// AS IDENTITY` gives (`sequence/column.rs`).
    pub(crate) fn alter_table_naming(
        &mut self,
        at: &ast::AlterTable,
        sequence: Option<&str>,
    ) -> Result<Outcome, SqlError> {
        let table = object_name(&at.name)?;
        for op in &at.operations {
            match op {
                ast::AlterTableOperation::AlterColumn { column_name, op } => {
                    self.alter_column(&table, &expr::ident_name(column_name), op, sequence)?;
                }
                ast::AlterTableOperation::AddColumn { column_def, if_not_exists, .. } => {
                    let ty = parse_type_name(&column_def.data_type.to_string())?.to_column()?;
                    if !column_def.options.is_empty() {
                        return Err(SqlError::unsupported("column options in ADD COLUMN"));
                    }
                    let cname = expr::ident_name(&column_def.name);
                    match self.es.add_column(&table, &cname, ty) {
                        Err(turnstile_engine::EngineError::Catalog(
                            turnstile_engine::catalog::CatalogError::DuplicateColumn { .. },
                        )) if *if_not_exists => {
                            self.notice(
                                Severity::Notice,
                                SqlState::DUPLICATE_COLUMN,
                                format!("column \"{cname}\" of relation \"{table}\" already exists, skipping"),
                            );
                        }
                        r => r?,
                    }
                }
                ast::AlterTableOperation::AddConstraint { constraint: ast::TableConstraint::PrimaryKey(p), .. } => {
                    let cols: Vec<String> =
                        p.columns.iter().map(|c| c.to_string().trim_matches('"').to_ascii_lowercase()).collect();
                    let refs: Vec<&str> = cols.iter().map(String::as_str).collect();
                    let given = p.name.as_ref().map(expr::ident_name);
                    if given.as_ref().is_some_and(|n| *n != format!("{table}_pkey")) {
                        return Err(SqlError::unsupported("a primary key constraint not named <table>_pkey"));
                    }
                    // A partition's, made by its parent's (pg_dump adds the
                    // parent's first, then each partition's), as for UNIQUE.
                    if self.has_key(&table, &cols, Some(&format!("{table}_pkey")), true) {
                        continue;
                    }
                    self.es.add_primary_key(&table, &refs)?;
                }
                ast::AlterTableOperation::AddConstraint { constraint: ast::TableConstraint::Unique(u), .. }
                    if plain_unique(u) =>
                {
                    let cols: Vec<String> =
                        u.columns.iter().map(|c| c.to_string().trim_matches('"').to_ascii_lowercase()).collect();
                    let given = u.name.as_ref().map(expr::ident_name);
                    if self.has_key(&table, &cols, given.as_deref(), false) {
                        continue;
                    }
                    let refs: Vec<&str> = cols.iter().map(String::as_str).collect();
                    let index = match given {
                        Some(n) => n,
                        None => self.free_relation_name(&format!("{table}_{}_key", cols.join("_"))),
                    };
                    self.es.create_index(&table, &index, &refs, true)?;
                }
                ast::AlterTableOperation::AddConstraint {
                    constraint: ast::TableConstraint::ForeignKey(fk), ..
                } => {
                    self.add_foreign_key(&table, &FkSpec::of(fk, None, None)?, true)?;
                }
                ast::AlterTableOperation::DropConstraint { if_exists, name, .. } => {
                    self.drop_constraint(&table, name, *if_exists)?;
                }
                ast::AlterTableOperation::OwnerTo { new_owner } => self.owner_to(&table, new_owner)?,
                ast::AlterTableOperation::AttachPartitionOf { partition, for_values } => {
                    let bound = partition_bound(Some(for_values))?;
                    self.attach_partition_checked(&table, &object_name(partition)?, bound)?;
                }
                other => return Err(SqlError::unsupported(&format!("ALTER TABLE … {other}"))),
            }
        }
        Self::command("ALTER TABLE")
    }
}

impl SqlSession {
    /// `ALTER TABLE table OWNER TO role`: turnstile has one role, which
    /// owns every table (as the dumps of a single-role PostgreSQL say), and
    /// every sequence (PostgreSQL 15's pg_dump writes `ALTER TABLE s OWNER
    /// TO` for a sequence).
    fn owner_to(&self, table: &str, new_owner: &ast::Owner) -> Result<(), SqlError> {
        let owner = new_owner.to_string();
        let owner = owner.trim_matches('"');
        if !matches!(owner, "postgres" | "CURRENT_USER" | "CURRENT_ROLE" | "SESSION_USER") {
            return Err(SqlError::new(SqlState::UNDEFINED_OBJECT, format!("role \"{owner}\" does not exist")));
        }
        let db = self.es.database();
        if self.es.engine().catalog().relation(db, table).is_err()
            && self.ctx.shared.sequences.find(db, table).is_none()
        {
            return Err(SqlError::new(SqlState::UNDEFINED_TABLE, format!("relation \"{table}\" does not exist")));
        }
        Ok(())
    }

    /// `ALTER TABLE table DROP CONSTRAINT [IF EXISTS] name`: a foreign key
    /// (a primary key or unique constraint is `0A000`).
    fn drop_constraint(&mut self, table: &str, name: &ast::Ident, if_exists: bool) -> Result<(), SqlError> {
        let cname = expr::ident_name(name);
        if !self.drop_fk_constraint(table, &cname)? {
            let tid = self.es.engine().catalog().relation(self.es.database(), table).map(|r| r.id);
            let missing = SqlError::new(
                SqlState::UNDEFINED_OBJECT,
                format!("constraint \"{cname}\" of relation \"{table}\" does not exist"),
            );
            match tid {
                Ok(id) if self.es.engine().catalog().has_constraint(self.es.database(), id, &cname) => {
                    return Err(SqlError::unsupported("DROP CONSTRAINT of a primary key or unique constraint"))
                }
                _ if if_exists => self.notice(
                    Severity::Notice,
                    SqlState::SUCCESSFUL_COMPLETION,
                    format!("{}, skipping", missing.message),
                ),
                _ => return Err(missing),
            }
        }
        Ok(())
    }

    /// Whether `table` has a unique index on exactly `cols`, named `name`
    /// when a name is given (a partition's, made by its parent's
    /// constraint), or its primary key when `primary`.
    fn has_key(&self, table: &str, cols: &[String], name: Option<&str>, primary: bool) -> bool {
        let cat = self.es.engine().catalog().snapshot();
        let Some(t) = cat.find(self.es.database(), table) else { return false };
        let found = cat.indexes_of(t.id).any(|ix| {
            ix.index.as_ref().is_some_and(|d| {
                d.unique
                    && d.primary == primary
                    && t.column_names(&d.columns) == cols
                    && name.is_none_or(|n| n == ix.name)
            })
        });
        found
    }
}

/// A table's columns and constraints, as `CREATE TABLE` declares them
/// (column options and table constraints alike).
struct TableSpec {
    /// Columns, in order.
    cols: Vec<(String, ColumnType)>,
    /// PRIMARY KEY columns.
    pk: Option<Vec<String>>,
    /// NOT NULL columns.
    not_null: Vec<String>,
    /// DEFAULT expressions (column, expression text).
    defaults: Vec<(String, String)>,
    /// UNIQUE constraints: (constraint name if given, columns).
    unique: Vec<(Option<String>, Vec<String>)>,
    /// The `SERIAL` and identity columns' sequences.
    keys: Vec<crate::sequence::ddl::KeySequence>,
    /// Foreign keys (`REFERENCES`, `FOREIGN KEY`).
    fks: Vec<FkSpec>,
}

impl TableSpec {
    /// Reads the columns, column options and table constraints of `ct`.
    fn of(ct: &ast::CreateTable) -> Result<TableSpec, SqlError> {
        let mut spec = TableSpec {
            cols: Vec::new(),
            pk: None,
            not_null: Vec::new(),
            defaults: Vec::new(),
            unique: Vec::new(),
            keys: Vec::new(),
            fks: Vec::new(),
        };
        for c in &ct.columns {
            spec.column(c)?;
        }
        for con in &ct.constraints {
            match con {
                ast::TableConstraint::PrimaryKey(p) => {
                    spec.pk =
                        Some(p.columns.iter().map(|c| c.to_string().trim_matches('"').to_ascii_lowercase()).collect())
                }
                ast::TableConstraint::Unique(u) if plain_unique(u) => {
                    let mut cols = Vec::with_capacity(u.columns.len());
                    for c in &u.columns {
                        match &c.column.expr {
                            ast::Expr::Identifier(i) => cols.push(expr::ident_name(i)),
                            other => return Err(SqlError::unsupported(&format!("a UNIQUE constraint on {other}"))),
                        }
                    }
                    spec.unique.push((u.name.as_ref().map(expr::ident_name), cols));
                }
                ast::TableConstraint::ForeignKey(fk) => spec.fks.push(FkSpec::of(fk, None, None)?),
                other => return Err(SqlError::unsupported(&format!("the constraint {other}"))),
            }
        }
        Ok(spec)
    }

    /// One column and its options (NULL, NOT NULL, PRIMARY KEY, DEFAULT,
    /// UNIQUE).
    fn column(&mut self, c: &ast::ColumnDef) -> Result<(), SqlError> {
        let cname = expr::ident_name(&c.name);
        let serial = serial_type(&c.data_type.to_string());
        let sql_ty = match serial {
            Some(t) => parse_type_name(t.name())?,
            None => parse_type_name(&c.data_type.to_string())?,
        };
        let ty = sql_ty.to_column()?;
        if let Some(t) = serial {
            self.keys.push(KeySequence {
                column: cname.clone(),
                ty: t,
                options: Vec::new(),
                identity: Identity::Serial,
                name: None,
            });
            self.not_null.push(cname.clone());
        }
        for o in &c.options {
            match &o.option {
                ast::ColumnOption::Generated {
                    generated_as: g @ (ast::GeneratedAs::Always | ast::GeneratedAs::ByDefault),
                    sequence_options,
                    generation_expr: None,
                    ..
                } => {
                    let ty = SeqType::named(sql_ty.internal_name()).ok_or_else(|| {
                        SqlError::new(
                            SqlState::INVALID_PARAMETER_VALUE,
                            "identity column type must be smallint, integer, or bigint",
                        )
                    })?;
                    let options = seq_options(sequence_options.as_deref().unwrap_or_default())?;
                    let identity =
                        if matches!(g, ast::GeneratedAs::Always) { Identity::Always } else { Identity::ByDefault };
                    self.keys.push(KeySequence { column: cname.clone(), ty, options, identity, name: None });
                    self.not_null.push(cname.clone());
                }
                ast::ColumnOption::Null => {}
                ast::ColumnOption::NotNull => self.not_null.push(cname.clone()),
                ast::ColumnOption::PrimaryKey(_) => self.pk = Some(vec![cname.clone()]),
                ast::ColumnOption::Default(e) => {
                    // Checked now (PostgreSQL's cookDefault): it must
                    // compile without columns and be assignable.
                    let (_, xt) = Compiler { scope: &Scope::default(), params: &mut Vec::new(), aggs: None }
                        .compile(e, Some(sql_ty))?;
                    crate::plan::check_assignable(xt, sql_ty, &cname)?;
                    self.defaults.push((cname.clone(), e.to_string()));
                }
                ast::ColumnOption::Unique(u) if plain_unique(u) => {
                    self.unique.push((u.name.as_ref().or(o.name.as_ref()).map(expr::ident_name), vec![cname.clone()]))
                }
                ast::ColumnOption::ForeignKey(fk) => self.fks.push(FkSpec::of(fk, Some(&cname), o.name.as_ref())?),
                other => return Err(SqlError::unsupported(&format!("the column option {other}"))),
            }
        }
        self.cols.push((cname, ty));
        Ok(())
    }
}

/// A partition's bound: `FOR VALUES FROM (a) TO (b)`, `WITH (MODULUS m,
/// REMAINDER r)` or `IN (a, …)`.
fn partition_bound(v: Option<&ast::ForValues>) -> Result<PartitionBound, SqlError> {
    match v {
        Some(ast::ForValues::From { from, to }) if from.len() == 1 && to.len() == 1 => {
            Ok(PartitionBound::Range { from: bound_value(&from[0], i64::MIN)?, to: bound_value(&to[0], i64::MAX)? })
        }
        Some(ast::ForValues::With { modulus, remainder }) => Ok(PartitionBound::Hash {
            modulus: u32::try_from(*modulus)
                .map_err(|_| SqlError::new(SqlState::INVALID_PARAMETER_VALUE, "modulus out of range"))?,
            remainder: u32::try_from(*remainder)
                .map_err(|_| SqlError::new(SqlState::INVALID_PARAMETER_VALUE, "remainder out of range"))?,
        }),
        Some(ast::ForValues::Default) => Err(SqlError::unsupported("DEFAULT partitions")),
        Some(ast::ForValues::In(values)) => {
            let mut keys = Vec::with_capacity(values.len());
            for v in values {
                if matches!(v, ast::Expr::Value(x) if matches!(x.value, ast::Value::Null)) {
                    return Err(SqlError::unsupported("a NULL in a list partition's bound"));
                }
                keys.push(bound_value(&ast::PartitionBoundValue::Expr(v.clone()), i64::MIN)?);
            }
            Ok(PartitionBound::list(keys))
        }
        _ => Err(SqlError::unsupported("multi-column partition bounds")),
    }
}

pub(crate) fn bound_value(v: &ast::PartitionBoundValue, inf: i64) -> Result<i64, SqlError> {
    match v {
        ast::PartitionBoundValue::MinValue | ast::PartitionBoundValue::MaxValue => {
            let min = matches!(v, ast::PartitionBoundValue::MinValue);
            if (inf == i64::MIN) != min {
                // MAXVALUE as a lower bound or MINVALUE as an upper one: an empty range.
                return Ok(if min { i64::MIN } else { i64::MAX });
            }
            Ok(inf)
        }
        ast::PartitionBoundValue::Expr(e) => {
            let empty = Scope::default();
            let mut p = Vec::new();
            let (x, _) = Compiler { scope: &empty, params: &mut p, aggs: None }.compile(e, Some(SqlType::Int8))?;
            match x {
                expr::Expr::Const(d) => match d.cast(SqlType::Int8)? {
                    Datum::Int(v) => Ok(v),
                    _ => Err(SqlError::new(SqlState::NULL_VALUE_NOT_ALLOWED, "partition bound is NULL")),
                },
                _ => Err(SqlError::new(SqlState::INVALID_OBJECT_DEFINITION, "partition bound must be a constant")),
            }
        }
    }
}

pub(crate) fn partition_spec(e: &ast::Expr) -> Result<(PartitionStrategy, String), SqlError> {
    // sqlparser keeps `PARTITION BY RANGE (aid)` as an expression; read it from its text.
    let text = e.to_string().to_ascii_lowercase();
    let (strategy, rest) = if let Some(r) = text.strip_prefix("range") {
        (PartitionStrategy::Range, r)
    } else if let Some(r) = text.strip_prefix("hash") {
        (PartitionStrategy::Hash, r)
    } else if let Some(r) = text.strip_prefix("list") {
        (PartitionStrategy::List, r)
    } else {
        return Err(SqlError::unsupported(&format!("PARTITION BY {text}")));
    };
    let col = rest.trim().trim_start_matches('(').trim_end_matches(')').trim().trim_matches('"').to_owned();
    if col.is_empty() || col.contains(',') || col.contains('(') {
        return Err(SqlError::unsupported("a partition key other than one column"));
    }
    Ok((strategy, col))
}

pub(crate) fn table_fillfactor(o: &ast::CreateTableOptions) -> Result<Option<u8>, SqlError> {
    let opts = match o {
        ast::CreateTableOptions::None => return Ok(None),
        ast::CreateTableOptions::With(v) => v,
        other => return Err(SqlError::unsupported(&format!("table options {other}"))),
    };
    let mut ff = None;
    for opt in opts {
        let text = opt.to_string().to_ascii_lowercase().replace(' ', "");
        match text.strip_prefix("fillfactor=") {
            Some(v) => {
                let n: u8 = v.parse().ok().filter(|n| (10..=100).contains(n)).ok_or_else(|| {
                    SqlError::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        format!("value {v} out of bounds for option \"fillfactor\""),
                    )
                })?;
                ff = Some(n);
            }
            None => return Err(SqlError::unsupported(&format!("the storage parameter {text}"))),
        }
    }
    Ok(ff)
}

/// A UNIQUE constraint as turnstile builds it: a plain btree unique index,
/// NULLs distinct, not deferrable, no INCLUDE columns.
fn plain_unique(u: &ast::UniqueConstraint) -> bool {
    u.characteristics.is_none()
        && u.include.is_empty()
        && u.index_type.is_none()
        && u.index_options.is_empty()
        && !matches!(u.nulls_distinct, ast::NullsDistinctOption::NotDistinct)
}
