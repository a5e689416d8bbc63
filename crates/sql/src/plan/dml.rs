//! INSERT, UPDATE and DELETE: compiled once, run through the engine.

use super::from::push_table;
use super::modify_from::{compile_from, FromRows};
use super::predicate::{and_all, conjuncts, pushable};
use super::returning::{atomically, compile_returning, Affected, Returning};
use super::upsert::{compile_on_conflict, OnConflict};
use super::{check_cancel, compiler, series_bounds, Catalog, Producer, RowItem, Run, SelectPlan, Source, TableDef};
use crate::error::SqlError;
use crate::expr::{ident_name, object_name, EvalEnv, Expr, Scope};
use crate::value::{Datum, SqlType};
use crate::views::View;
use sqlparser::ast;
use turnstile_engine::query::{Col, Operand, Query};
use turnstile_engine::types::{ColumnType, Value};
use turnstile_lock::SqlState;

/// A compiled INSERT.
#[derive(Debug)]
pub struct InsertPlan {
    /// Target table.
    pub table: String,
    /// Its column types.
    pub types: Vec<ColumnType>,
    /// Front-end types of its columns.
    pub sql_types: Vec<SqlType>,
    /// Table column of each provided value.
    pub targets: Vec<usize>,
    /// The DEFAULT expressions of the columns not in `targets`, evaluated
    /// for every row (PostgreSQL evaluates a default per row).
    pub defaults: Vec<(usize, Expr)>,
    /// The rows.
    pub source: InsertSource,
    /// `RETURNING`, over the inserted rows.
    pub returning: Option<Returning>,
    /// `ON CONFLICT`.
    pub on_conflict: Option<OnConflict>,
    /// The table's id when it references another (its foreign keys are
    /// checked at the end of the statement).
    pub fk_child: Option<u32>,
}

/// Where an INSERT's rows come from.
#[derive(Debug)]
pub enum InsertSource {
    /// `VALUES (…), (…)`.
    Values(Vec<Vec<Expr>>),
    /// `SELECT …`.
    Select(Box<SelectPlan>),
}

/// Compiles an INSERT.
pub fn compile_insert(cat: &Catalog<'_>, ins: &ast::Insert, params: &mut Vec<SqlType>) -> Result<InsertPlan, SqlError> {
    compile_insert_in(cat, ins, params, &super::QueryCx::default())
}

/// [`compile_insert`] with its `SELECT` seeing `cx` (the common table
/// expressions of the `WITH` list around it).
pub fn compile_insert_in(
    cat: &Catalog<'_>,
    ins: &ast::Insert,
    params: &mut Vec<SqlType>,
    cx: &super::QueryCx,
) -> Result<InsertPlan, SqlError> {
    let table = match &ins.table {
        ast::TableObject::TableName(n) => object_name(n)?,
        other => return Err(SqlError::unsupported(&format!("INSERT INTO {other}"))),
    };
    let def = cat.table(&table)?;
    let targets = if ins.columns.is_empty() {
        (0..def.names.len()).collect::<Vec<_>>()
    } else {
        let mut t = Vec::new();
        for c in &ins.columns {
            let n = object_name(c)?;
            let k = def.names.iter().position(|x| *x == n).ok_or_else(|| {
                SqlError::new(
                    SqlState::UNDEFINED_COLUMN,
                    format!("column \"{n}\" of relation \"{table}\" does not exist"),
                )
            })?;
            if t.contains(&k) {
                return Err(SqlError::new(
                    SqlState::DUPLICATE_COLUMN,
                    format!("column \"{n}\" specified more than once"),
                ));
            }
            t.push(k);
        }
        t
    };
    let src = ins.source.as_ref().ok_or_else(|| SqlError::unsupported("INSERT … DEFAULT VALUES"))?;
    check_identity_always(cat, &table, &def, &targets, src)?;
    let source = match src.body.as_ref() {
        ast::SetExpr::Values(v) => {
            let empty = Scope::default();
            let mut rows = Vec::new();
            for r in &v.rows {
                if r.len() > targets.len() {
                    return Err(SqlError::new(
                        SqlState::SYNTAX_ERROR,
                        "INSERT has more expressions than target columns",
                    ));
                }
                let mut row = Vec::new();
                for (e, &t) in r.iter().zip(&targets) {
                    let ty = def.sql_types[t];
                    if is_default_keyword(e) {
                        row.push(default_expr(&def, t, params)?);
                        continue;
                    }
                    let (x, xt) = compiler(&empty, params, None).compile(e, Some(ty))?;
                    check_assignable(xt, ty, &def.names[t])?;
                    row.push(x);
                }
                rows.push(row);
            }
            InsertSource::Values(rows)
        }
        _ => {
            let plan = super::compile_query(cat, src, params, cx)?;
            if plan.fields.len() > targets.len() {
                return Err(SqlError::new(SqlState::SYNTAX_ERROR, "INSERT has more expressions than target columns"));
            }
            for (k, &t) in targets.iter().enumerate().take(plan.fields.len()) {
                check_assignable(plan.out_types[k], def.sql_types[t], &def.names[t])?;
            }
            InsertSource::Select(Box::new(plan))
        }
    };
    let mut defaults = Vec::new();
    for k in 0..def.names.len() {
        if !targets.contains(&k) && def.defaults[k].is_some() {
            defaults.push((k, default_expr(&def, k, params)?));
        }
    }
    let mut scope = Scope::default();
    let qual = ins.table_alias.as_ref().map_or_else(|| table.clone(), |a| ident_name(&a.alias));
    push_table(&mut scope, &qual, &def);
    let returning = compile_returning(ins.returning.as_ref(), &scope, params)?;
    let on_conflict = match &ins.on {
        None => None,
        Some(ast::OnInsert::OnConflict(on)) => Some(compile_on_conflict(cat, (&table, &def, &qual), on, params)?),
        Some(other) => return Err(SqlError::unsupported(&format!("INSERT …{other}"))),
    };
    let fk_child = cat.fk_roles(def.oid, &[]).0.then_some(def.oid);
    Ok(InsertPlan {
        fk_child,
        table,
        types: def.types,
        sql_types: def.sql_types,
        targets,
        defaults,
        source,
        returning,
        on_conflict,
    })
}

/// `428C9` when an INSERT gives a `GENERATED ALWAYS AS IDENTITY` column a
/// value other than `DEFAULT`.
fn check_identity_always(
    cat: &Catalog<'_>,
    table: &str,
    def: &TableDef,
    targets: &[usize],
    src: &ast::Query,
) -> Result<(), SqlError> {
    let always = cat.always_identity(table);
    let given_always = |r: &[ast::Expr]| {
        r.iter().zip(targets).find(|(e, &t)| !is_default_keyword(e) && always.contains(&def.names[t])).map(|(_, &t)| t)
    };
    let named = match src.body.as_ref() {
        ast::SetExpr::Values(v) => v.rows.iter().find_map(|r| given_always(r)),
        _ => targets.iter().copied().find(|&t| always.contains(&def.names[t])),
    };
    if let Some(t) = named {
        let mut e = SqlError::new(
            SqlState::GENERATED_ALWAYS,
            format!("cannot insert a non-DEFAULT value into column \"{}\"", def.names[t]),
        );
        e.detail = Some(format!("Column \"{}\" is an identity column defined as GENERATED ALWAYS.", def.names[t]));
        e.hint = Some("Use OVERRIDING SYSTEM VALUE to override.".into());
        return Err(e);
    }
    Ok(())
}

/// `DEFAULT` in an INSERT's VALUES (sqlparser reads it as a bare word).
fn is_default_keyword(e: &ast::Expr) -> bool {
    matches!(e, ast::Expr::Identifier(i) if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default"))
}

/// Column `k`'s DEFAULT expression compiled to its type, NULL if it has none.
pub(super) fn default_expr(def: &TableDef, k: usize, params: &mut Vec<SqlType>) -> Result<Expr, SqlError> {
    let ty = def.sql_types[k];
    let Some(text) = &def.defaults[k] else { return Ok(Expr::Const(Datum::Null)) };
    let e = crate::parse::parse_expr(text)?;
    let (x, xt) = compiler(&Scope::default(), params, None).compile(&e, Some(ty))?;
    check_assignable(xt, ty, &def.names[k])?;
    Ok(x)
}

/// `42804` when a value of type `from` cannot be assigned to a column of type `to`.
pub fn check_assignable(from: SqlType, to: SqlType, column: &str) -> Result<(), SqlError> {
    // PostgreSQL's assignment casts: among numbers, anything to a string
    // type, among dates and timestamps.
    let ok = from == SqlType::Unknown
        || from == to
        || std::mem::discriminant(&from) == std::mem::discriminant(&to)
        || (from.is_number() && to.is_number())
        || to.is_string()
        || (matches!(from, SqlType::Timestamp | SqlType::TimestampTz | SqlType::Date)
            && matches!(to, SqlType::Timestamp | SqlType::TimestampTz | SqlType::Date));
    if ok {
        Ok(())
    } else {
        Err(SqlError::new(
            SqlState::DATATYPE_MISMATCH,
            format!("column \"{column}\" is of type {} but expression is of type {}", to.name(), from.name()),
        ))
    }
}

impl InsertPlan {
    /// Builds the full engine row from the provided values.
    pub fn engine_row(&self, vals: Vec<Datum>, env: &mut EvalEnv<'_>) -> Result<Vec<Value>, SqlError> {
        let mut row = vec![Value::Null; self.types.len()];
        for (v, &t) in vals.into_iter().zip(&self.targets) {
            let v = v.cast(self.sql_types[t])?;
            row[t] = v.to_engine(self.types[t])?;
        }
        for (t, x) in &self.defaults {
            let v = x.eval(&[], env)?.cast(self.sql_types[*t])?;
            row[*t] = v.to_engine(self.types[*t])?;
        }
        Ok(row)
    }

    /// Runs the insert: rows inserted and the `RETURNING` rows.
    pub fn run(&self, run: &mut Run<'_>) -> Result<Affected, SqlError> {
        if let Some(on) = &self.on_conflict {
            return atomically(run, |run| {
                let rows = self.rows(run)?;
                let ret = self.returning.as_ref();
                let (count, rows) =
                    on.run(&self.table, (&self.sql_types, &self.types), rows, ret, self.fk_child, run)?;
                Ok(Affected { count, rows })
            });
        }
        if let Some(id) = self.fk_child {
            return atomically(run, |run| self.run_checked(id, run));
        }
        if let Some(ret) = &self.returning {
            return atomically(run, |run| self.run_returning(ret, run));
        }
        let count = self.run_plain(run)?;
        Ok(Affected { count, rows: Vec::new() })
    }

    /// The rows this INSERT inserts, each complete (defaults evaluated).
    fn rows(&self, run: &mut Run<'_>) -> Result<Vec<Vec<Value>>, SqlError> {
        let provided = match &self.source {
            InsertSource::Values(rows) => {
                let mut out = Vec::with_capacity(rows.len());
                for r in rows {
                    out.push(r.iter().map(|x| x.eval(&[], &mut run.env)).collect::<Result<Vec<_>, _>>()?);
                }
                out
            }
            InsertSource::Select(plan) => plan.run(run)?,
        };
        provided.into_iter().map(|r| self.engine_row(r, &mut run.env)).collect()
    }

    /// An INSERT with `RETURNING`: the rows are built first (their keys
    /// generated), inserted one by one, and projected.
    fn run_returning(&self, ret: &Returning, run: &mut Run<'_>) -> Result<Affected, SqlError> {
        let rows = self.rows(run)?;
        let mut out = Affected { count: 0, rows: Vec::with_capacity(rows.len()) };
        for row in rows {
            run.session()?.insert(&self.table, &row)?;
            out.count += 1;
            out.rows.push(ret.project(&row, &mut run.env)?);
        }
        Ok(out)
    }

    /// An INSERT into a table with foreign keys: the rows are built,
    /// inserted, then checked (at the end of the statement, as
    /// PostgreSQL's RI triggers do).
    fn run_checked(&self, id: u32, run: &mut Run<'_>) -> Result<Affected, SqlError> {
        let rows = self.rows(run)?;
        let mut out = Affected { count: 0, rows: Vec::new() };
        for row in &rows {
            run.session()?.insert(&self.table, row)?;
            out.count += 1;
            if let Some(ret) = &self.returning {
                out.rows.push(ret.project(row, &mut run.env)?);
            }
        }
        let written = crate::fk::Written { inserted: rows, ..Default::default() };
        crate::fk::after_statement(run, id, &written)?;
        Ok(out)
    }

    /// Runs an insert without `RETURNING`: rows inserted.
    fn run_plain(&self, run: &mut Run<'_>) -> Result<u64, SqlError> {
        match &self.source {
            InsertSource::Values(rows) if rows.len() == 1 => {
                let mut vals = Vec::with_capacity(rows[0].len());
                for x in &rows[0] {
                    vals.push(x.eval(&[], &mut run.env)?);
                }
                let row = self.engine_row(vals, &mut run.env)?;
                run.session()?.insert(&self.table, &row)?;
                Ok(1)
            }
            InsertSource::Values(rows) => {
                let mut out = Vec::with_capacity(rows.len());
                for r in rows {
                    let mut vals = Vec::with_capacity(r.len());
                    for x in r {
                        vals.push(x.eval(&[], &mut run.env)?);
                    }
                    out.push(self.engine_row(vals, &mut run.env)?);
                }
                run.session()?.insert_many(&self.table, out).map_err(SqlError::from)
            }
            InsertSource::Select(plan) => self.run_select(plan, run),
        }
    }

    fn run_select(&self, plan: &SelectPlan, run: &mut Run<'_>) -> Result<u64, SqlError> {
        // Streaming path: `SELECT exprs FROM generate_series(…)` with no
        // grouping, ordering or limits (pgbench -i's server-side generation).
        if let Source::Rows(items) = &plan.source {
            if let [RowItem { producer: Producer::Series(a, b, step), on: None, filter: None, .. }] = items.as_slice() {
                if !plan.grouped
                    && plan.windows.is_empty()
                    && plan.order.is_empty()
                    && !plan.distinct
                    && plan.limit.is_none()
                    && plan.offset.is_none()
                {
                    let (start, stop, step) = series_bounds(a, b, step.as_ref(), &mut run.env)?;
                    let mut failure: Option<SqlError> = None;
                    let mut i = start;
                    let mut produced: u64 = 0;
                    // The engine session is lent to the insert while the
                    // rows are computed: the rows' expressions run without it.
                    let session = run.env.session.take().ok_or_else(super::no_session)?;
                    let env = &mut run.env;
                    let rows = std::iter::from_fn(|| loop {
                        if failure.is_some() || !((step > 0 && i <= stop) || (step < 0 && i >= stop)) {
                            return None;
                        }
                        let row = [Datum::Int(i)];
                        i = match i.checked_add(step) {
                            Some(n) => n,
                            None => stop.saturating_add(step.signum()),
                        };
                        produced += 1;
                        let result = (|| -> Result<Option<Vec<Value>>, SqlError> {
                            if produced % 65536 == 0 {
                                check_cancel(env.services)?;
                            }
                            if let Some(r) = &plan.residual {
                                if !r.test(&row, env)? {
                                    return Ok(None);
                                }
                            }
                            let mut vals = Vec::with_capacity(plan.fields.len());
                            for x in &plan.outputs {
                                vals.push(x.eval(&row, env)?);
                            }
                            self.engine_row(vals, env).map(Some)
                        })();
                        match result {
                            Ok(Some(r)) => return Some(r),
                            Ok(None) => continue,
                            Err(e) => {
                                failure = Some(e);
                                return None;
                            }
                        }
                    });
                    let n = session.insert_many(&self.table, rows).map_err(SqlError::from);
                    run.env.session = Some(session);
                    if let Some(e) = failure {
                        return Err(e);
                    }
                    return n;
                }
            }
        }
        let rows = plan.run(run)?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            out.push(self.engine_row(r, &mut run.env)?);
        }
        run.session()?.insert_many(&self.table, out).map_err(SqlError::from)
    }
}

/// A compiled UPDATE or DELETE of one table.
#[derive(Debug)]
pub struct ModifyPlan {
    /// The engine query naming the table and its pushed-down filters.
    pub query: Query,
    /// Engine parameter `$k+1` = this expression.
    pub pushed: Vec<(Expr, ColumnType)>,
    /// WHERE minus what was pushed down.
    pub residual: Option<Expr>,
    /// `SET column = expr` (UPDATE); empty for DELETE.
    pub assignments: Vec<(usize, Expr)>,
    /// Column types (engine and front end).
    pub types: Vec<ColumnType>,
    /// Front-end column types.
    pub sql_types: Vec<SqlType>,
    /// `RETURNING`, over the new rows (UPDATE) or the deleted ones.
    pub returning: Option<Returning>,
    /// The table's id when it takes part in a foreign key (its rows
    /// written are then checked at the end of the statement).
    pub fk: Option<u32>,
    /// Whether the UPDATE assigns a key column (rows locked `FOR UPDATE`).
    pub key_update: bool,
    /// `UPDATE … FROM` / `DELETE … USING`: the other tables.
    pub from: Option<FromRows>,
}

/// What `modify_target` resolves: scope, table, query, pushed filters, residual.
type ModifyTarget = (Scope, TableDef, Query, Vec<(Expr, ColumnType)>, Option<Expr>);

pub(super) fn modify_target(
    cat: &Catalog<'_>,
    name: &ast::ObjectName,
    alias: Option<String>,
    selection: Option<&ast::Expr>,
    params: &mut Vec<SqlType>,
) -> Result<ModifyTarget, SqlError> {
    let table = object_name(name)?;
    if View::named(&table).is_some() {
        return Err(SqlError::new(SqlState::WRONG_OBJECT_TYPE, format!("cannot change system view \"{table}\"")));
    }
    let def = cat.table(&table)?;
    let qual = alias.unwrap_or_else(|| table.clone());
    let mut scope = Scope::default();
    push_table(&mut scope, &qual, &def);
    let mut parts = Vec::new();
    if let Some(w) = selection {
        conjuncts(w, &mut parts);
    }
    let mut query = Query::from(table.clone());
    let mut pushed = Vec::new();
    let mut residual = Vec::new();
    for p in parts {
        if let Some((col, value)) = pushable(&scope, &p, params)? {
            let ty = scope.cols[col].ty.to_column()?;
            pushed.push((value, ty));
            query = query.filter(Col::at(0, col), Operand::Param(pushed.len()));
        } else {
            residual.push(compiler(&scope, params, None).boolean(&p)?);
        }
    }
    Ok((scope, def, query, pushed, and_all(residual)))
}

/// [`modify_target`] with the FROM (USING) list `from`: its columns follow
/// the target's in the scope, and the whole WHERE is evaluated on the
/// joined row (nothing pushed down).
fn modify_target_from(
    cat: &Catalog<'_>,
    name: &ast::ObjectName,
    alias: Option<String>,
    selection: Option<&ast::Expr>,
    from: Option<&[ast::TableWithJoins]>,
    params: &mut Vec<SqlType>,
) -> Result<(ModifyTarget, Option<FromRows>), SqlError> {
    let Some(from) = from else {
        return Ok((modify_target(cat, name, alias, selection, params)?, None));
    };
    let (mut scope, def, query, pushed, _) = modify_target(cat, name, alias, None, params)?;
    let rows = compile_from(cat, from, &mut scope, params)?;
    let residual = match selection {
        Some(w) => Some(compiler(&scope, params, None).boolean(w)?),
        None => None,
    };
    Ok(((scope, def, query, pushed, residual), Some(rows)))
}

/// Compiles an UPDATE.
pub fn compile_update(cat: &Catalog<'_>, u: &ast::Update, params: &mut Vec<SqlType>) -> Result<ModifyPlan, SqlError> {
    if !u.table.joins.is_empty() {
        return Err(SqlError::unsupported("UPDATE of a join"));
    }
    let (name, alias) = match &u.table.relation {
        ast::TableFactor::Table { name, alias, args: None, .. } => (name, alias.as_ref().map(|a| ident_name(&a.name))),
        other => return Err(SqlError::unsupported(&format!("UPDATE of {other}"))),
    };
    let from_list = match &u.from {
        None => None,
        Some(ast::UpdateTableFromKind::AfterSet(f) | ast::UpdateTableFromKind::BeforeSet(f)) => Some(f.as_slice()),
    };
    let ((scope, def, query, pushed, residual), from) =
        modify_target_from(cat, name, alias, u.selection.as_ref(), from_list, params)?;
    let mut assignments = Vec::new();
    for a in &u.assignments {
        let col = match &a.target {
            ast::AssignmentTarget::ColumnName(n) => object_name(n)?,
            ast::AssignmentTarget::Tuple(_) => return Err(SqlError::unsupported("UPDATE SET (a, b) = …")),
        };
        let k = def.names.iter().position(|n| *n == col).ok_or_else(|| {
            SqlError::new(
                SqlState::UNDEFINED_COLUMN,
                format!("column \"{col}\" of relation \"{}\" does not exist", query.tables()[0]),
            )
        })?;
        if is_default_keyword(&a.value) {
            // `SET c = DEFAULT`: the column's default, NULL when it has none.
            assignments.push((k, default_expr(&def, k, params)?));
            continue;
        }
        let (x, t) = compiler(&scope, params, None).compile(&a.value, Some(def.sql_types[k]))?;
        check_assignable(t, def.sql_types[k], &col)?;
        assignments.push((k, x));
    }
    let returning = compile_returning(u.returning.as_ref(), &scope, params)?;
    let set: Vec<usize> = assignments.iter().map(|(k, _)| *k).collect();
    let (child, parent, key_update) = cat.fk_roles(def.oid, &set);
    Ok(ModifyPlan {
        query,
        pushed,
        residual,
        assignments,
        types: def.types,
        sql_types: def.sql_types,
        returning,
        fk: (child || parent).then_some(def.oid),
        key_update,
        from,
    })
}

/// Compiles a DELETE.
pub fn compile_delete(cat: &Catalog<'_>, d: &ast::Delete, params: &mut Vec<SqlType>) -> Result<ModifyPlan, SqlError> {
    if !d.tables.is_empty() {
        return Err(SqlError::unsupported("DELETE of several tables"));
    }
    let from = match &d.from {
        ast::FromTable::WithFromKeyword(f) | ast::FromTable::WithoutKeyword(f) => f,
    };
    let [twj] = from.as_slice() else { return Err(SqlError::unsupported("DELETE from several tables")) };
    if !twj.joins.is_empty() {
        return Err(SqlError::unsupported("DELETE with a join"));
    }
    let (name, alias) = match &twj.relation {
        ast::TableFactor::Table { name, alias, args: None, .. } => (name, alias.as_ref().map(|a| ident_name(&a.name))),
        other => return Err(SqlError::unsupported(&format!("DELETE from {other}"))),
    };
    let ((scope, def, query, pushed, residual), from) =
        modify_target_from(cat, name, alias, d.selection.as_ref(), d.using.as_deref(), params)?;
    let returning = compile_returning(d.returning.as_ref(), &scope, params)?;
    let (_, parent, _) = cat.fk_roles(def.oid, &[]);
    Ok(ModifyPlan {
        query,
        pushed,
        residual,
        assignments: Vec::new(),
        types: def.types,
        sql_types: def.sql_types,
        returning,
        fk: parent.then_some(def.oid),
        key_update: false,
        from,
    })
}

impl ModifyPlan {
    /// The row the expressions see for target row `row` (joined with the
    /// first FROM row that satisfies the WHERE, with `from`), or `None`
    /// when it is left alone.
    fn decide(
        &self,
        row: &[Value],
        from: Option<&[Vec<Datum>]>,
        env: &mut EvalEnv<'_>,
    ) -> Result<Option<Vec<Datum>>, SqlError> {
        let datums: Vec<Datum> = row.iter().map(Datum::from_engine).collect();
        let Some(from) = from else {
            if let Some(r) = &self.residual {
                if !r.test(&datums, env)? {
                    return Ok(None);
                }
            }
            return Ok(Some(datums));
        };
        for other in from {
            let mut joined = datums.clone();
            joined.extend(other.iter().cloned());
            if self.residual.as_ref().map_or(Ok(true), |r| r.test(&joined, env))? {
                return Ok(Some(joined));
            }
        }
        Ok(None)
    }

    /// Runs the UPDATE (or DELETE when there are no assignments): rows
    /// affected and the `RETURNING` rows. With foreign keys, the rows
    /// written are checked at the end, and the statement is one
    /// transaction when none is open.
    pub fn run(&self, run: &mut Run<'_>, delete: bool) -> Result<Affected, SqlError> {
        let Some(id) = self.fk else { return self.run_rows(run, delete, None) };
        atomically(run, |run| {
            let mut written = crate::fk::Written::default();
            let out = self.run_rows(run, delete, Some(&mut written))?;
            crate::fk::after_statement(run, id, &written)?;
            Ok(out)
        })
    }

    /// The UPDATE or DELETE itself; `written` collects the rows changed.
    fn run_rows(
        &self,
        run: &mut Run<'_>,
        delete: bool,
        mut written: Option<&mut crate::fk::Written>,
    ) -> Result<Affected, SqlError> {
        let mut eparams = Vec::with_capacity(self.pushed.len());
        for (x, ty) in &self.pushed {
            eparams.push(x.eval(&[], &mut run.env)?.to_engine(*ty)?);
        }
        let from_rows = match &self.from {
            Some(f) => Some(f.plan.run(run)?),
            None => None,
        };
        let from_rows = from_rows.as_deref();
        let mut failure: Option<SqlError> = None;
        let mut returned = Vec::new();
        // The engine session is lent to the scan; the callback's
        // expressions run without it (a subquery there is refused).
        let session = run.env.session.take().ok_or_else(super::no_session)?;
        let env = &mut run.env;
        let result = if delete {
            session.delete_rows(&self.query, &eparams, &mut |row| {
                let out = (|| -> Result<bool, SqlError> {
                    let Some(datums) = self.decide(row, from_rows, env)? else { return Ok(false) };
                    if let Some(ret) = &self.returning {
                        returned.push(ret.project_datums(&datums, env)?);
                    }
                    if let Some(w) = written.as_deref_mut() {
                        w.deleted.push(row.to_vec());
                    }
                    Ok(true)
                })();
                out.map_err(|e| {
                    failure = Some(e);
                    turnstile_engine::EngineError::CallbackFailed
                })
            })
        } else {
            let mut f = |row: &[Value]| {
                let out = (|| -> Result<Option<Vec<Value>>, SqlError> {
                    let Some(datums) = self.decide(row, from_rows, env)? else { return Ok(None) };
                    let mut new = row.to_vec();
                    for (k, x) in &self.assignments {
                        let v = x.eval(&datums, env)?.cast(self.sql_types[*k])?;
                        new[*k] = v.to_engine(self.types[*k])?;
                    }
                    if let Some(ret) = &self.returning {
                        // The new row, then the FROM row it was joined with.
                        let mut out: Vec<Datum> = new.iter().map(Datum::from_engine).collect();
                        out.extend(datums.iter().skip(new.len()).cloned());
                        returned.push(ret.project_datums(&out, env)?);
                    }
                    if let Some(w) = written.as_deref_mut() {
                        w.updated.push((row.to_vec(), new.clone()));
                    }
                    Ok(Some(new))
                })();
                out.map_err(|e| {
                    failure = Some(e);
                    turnstile_engine::EngineError::CallbackFailed
                })
            };
            if self.key_update {
                session.update_key_rows(&self.query, &eparams, &mut f)
            } else {
                session.update_rows(&self.query, &eparams, &mut f)
            }
        };
        run.env.session = Some(session);
        match (result, failure) {
            (_, Some(e)) => Err(e),
            (r, None) => Ok(Affected { count: r.map_err(SqlError::from)?, rows: returned }),
        }
    }
}
