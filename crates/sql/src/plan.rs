//! SELECT and INSERT: compiled once (names resolved against the catalog,
//! equality predicates pushed down into the engine's typed [`Query`], the
//! rest compiled to [`Expr`]s), then run many times.
//!
//! The relation access always goes through the engine's planner and
//! executor (`Session::query`, or `prepare`/`execute` for a cached generic
//! plan), so the engine takes PostgreSQL's locks; this layer only
//! evaluates what the engine does not: residual predicates, expressions,
//! aggregates, grouping, ordering and limits.

use crate::error::SqlError;
use crate::expr::{ident_name, object_name, AggSpec, AggState, Compiler, EvalEnv, Expr, Scope, ScopeCol, Services};
use crate::value::{Datum, SqlType};
use crate::views::{self, View};
use crate::FieldInfo;
use sqlparser::ast;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use turnstile_engine::query::{Operand, Query};
use turnstile_engine::session::Prepared;
use turnstile_engine::types::{ColumnType, Value};
use turnstile_engine::Session;
use turnstile_lock::SqlState;

/// How many custom plans before a generic one (`plan_cache_mode = auto`).
const CUSTOM_PLANS: u32 = 5;

/// Where a SELECT's input rows come from.
#[derive(Debug)]
pub enum Source {
    /// No FROM: one empty row.
    One,
    /// Engine tables (joined by the engine), with pushed-down filters.
    Engine {
        /// The typed query (projection: every column of every table).
        query: Query,
        /// Engine parameter `$k+1` = this expression, coerced to the column type.
        pushed: Vec<(Expr, ColumnType)>,
        /// Plan cache state.
        cache: Box<Mutex<PlanCache>>,
    },
    /// Materialised sources (views, `generate_series`) joined in a nested loop.
    Rows(Vec<RowItem>),
}

/// One materialised FROM item and how it joins the ones before it.
#[derive(Debug)]
pub struct RowItem {
    /// What produces its rows.
    pub producer: Producer,
    /// Number of columns.
    pub width: usize,
    /// Join condition (on the combined row so far), if any.
    pub on: Option<Expr>,
    /// LEFT JOIN.
    pub left: bool,
}

/// A materialised row producer.
#[derive(Debug)]
pub enum Producer {
    /// A system view.
    View(View),
    /// `generate_series(start, stop [, step])`.
    Series(Expr, Expr, Option<Expr>),
}

/// A prepared statement's engine plan and how often it ran.
#[derive(Debug, Default)]
pub struct PlanCache {
    runs: u32,
    prepared: Option<Prepared>,
}

/// How the plan cache chooses (`plan_cache_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheMode {
    /// Custom plans for the first five executions, then generic.
    Auto,
    /// Always custom.
    ForceCustom,
    /// Always generic.
    ForceGeneric,
}

/// A compiled SELECT.
#[derive(Debug)]
pub struct SelectPlan {
    /// Input.
    pub source: Source,
    /// The input scope.
    pub scope: Scope,
    /// WHERE, minus what was pushed down.
    pub residual: Option<Expr>,
    /// Aggregate calls.
    pub aggs: Vec<AggSpec>,
    /// GROUP BY keys.
    pub group_by: Vec<Expr>,
    /// Whether the query aggregates (GROUP BY or an aggregate call).
    pub grouped: bool,
    /// HAVING.
    pub having: Option<Expr>,
    /// Output expressions (visible, then hidden sort keys).
    pub outputs: Vec<Expr>,
    /// Output types.
    pub out_types: Vec<SqlType>,
    /// Visible output columns.
    pub fields: Vec<FieldInfo>,
    /// Sort keys: output index, descending, nulls first.
    pub order: Vec<(usize, bool, bool)>,
    /// DISTINCT.
    pub distinct: bool,
    /// LIMIT.
    pub limit: Option<Expr>,
    /// OFFSET.
    pub offset: Option<Expr>,
}

/// What a compile needs from the session.
pub struct Catalog<'a> {
    /// The engine session (catalog look-ups only; no locks).
    pub session: &'a Session,
}

/// A table's definition as the front end sees it.
#[derive(Clone, Debug)]
pub struct TableDef {
    /// Relation id (OID).
    pub oid: u32,
    /// Column names.
    pub names: Vec<String>,
    /// Engine column types.
    pub types: Vec<ColumnType>,
    /// Front-end types.
    pub sql_types: Vec<SqlType>,
}

impl Catalog<'_> {
    /// The table `name`, `42P01` if unknown.
    pub fn table(&self, name: &str) -> Result<TableDef, SqlError> {
        let engine = self.session.engine();
        let rel = engine
            .catalog()
            .relation(self.session.database(), name)
            .map_err(|_| SqlError::new(SqlState::UNDEFINED_TABLE, format!("relation \"{name}\" does not exist")))?;
        Ok(TableDef {
            oid: rel.id,
            names: rel.columns.iter().map(|c| c.name.clone()).collect(),
            types: rel.columns.iter().map(|c| c.ty).collect(),
            sql_types: rel.columns.iter().map(|c| SqlType::of_column(c.ty)).collect(),
        })
    }
}

fn field(name: &str, ty: SqlType) -> FieldInfo {
    FieldInfo {
        name: name.to_owned(),
        table_oid: 0,
        column: 0,
        type_oid: ty.oid(),
        type_len: ty.type_len(),
        type_modifier: ty.modifier(),
    }
}

/// The default output name of an expression (PostgreSQL's FigureColname).
fn figure_colname(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Identifier(i) => ident_name(i),
        ast::Expr::CompoundIdentifier(p) => p.last().map(ident_name).unwrap_or_default(),
        ast::Expr::Function(f) => object_name(&f.name).unwrap_or_else(|_| "?column?".into()),
        ast::Expr::Cast { expr, data_type, .. } => match figure_colname(expr).as_str() {
            "?column?" => data_type.to_string().to_ascii_lowercase(),
            n => n.to_owned(),
        },
        ast::Expr::Nested(x) => figure_colname(x),
        ast::Expr::Case { .. } => "case".into(),
        _ => "?column?".into(),
    }
}

/// Splits a condition into its AND-ed parts.
fn conjuncts(e: &ast::Expr, out: &mut Vec<ast::Expr>) {
    match e {
        ast::Expr::BinaryOp { left, op: ast::BinaryOperator::And, right } => {
            conjuncts(left, out);
            conjuncts(right, out);
        }
        ast::Expr::Nested(x) if matches!(**x, ast::Expr::BinaryOp { op: ast::BinaryOperator::And, .. }) => {
            conjuncts(x, out)
        }
        other => out.push(other.clone()),
    }
}

fn and_all(parts: Vec<Expr>) -> Option<Expr> {
    parts.into_iter().reduce(|a, b| Expr::And(Box::new(a), Box::new(b)))
}

/// A FROM item resolved.
enum FromItem {
    Table { name: String, alias: String, def: TableDef },
    View { view: View, alias: String },
    Series { args: Vec<ast::Expr>, alias: String, col: String },
}

fn from_item(cat: &Catalog<'_>, f: &ast::TableFactor) -> Result<FromItem, SqlError> {
    match f {
        ast::TableFactor::Table { name, alias, args, .. } => {
            let n = object_name(name)?;
            let alias_name = alias.as_ref().map(|a| ident_name(&a.name));
            if let Some(args) = args {
                if n != "generate_series" {
                    return Err(SqlError::new(SqlState::UNDEFINED_FUNCTION, format!("function {n} does not exist")));
                }
                let mut exprs = Vec::new();
                for a in &args.args {
                    match a {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => exprs.push(e.clone()),
                        other => return Err(SqlError::unsupported(&format!("the argument {other}"))),
                    }
                }
                if !(2..=3).contains(&exprs.len()) {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_FUNCTION,
                        "function generate_series needs 2 or 3 arguments",
                    ));
                }
                let col = alias
                    .as_ref()
                    .and_then(|a| a.columns.first().map(|c| ident_name(&c.name)))
                    .or_else(|| alias_name.clone())
                    .unwrap_or_else(|| "generate_series".into());
                return Ok(FromItem::Series {
                    args: exprs,
                    alias: alias_name.unwrap_or_else(|| "generate_series".into()),
                    col,
                });
            }
            if let Some(view) = View::named(&n) {
                return Ok(FromItem::View { view, alias: alias_name.unwrap_or(n) });
            }
            let def = cat.table(&n)?;
            Ok(FromItem::Table { alias: alias_name.unwrap_or_else(|| n.clone()), name: n, def })
        }
        ast::TableFactor::Derived { .. } => Err(SqlError::unsupported("a subquery in FROM")),
        other => Err(SqlError::unsupported(&format!("the FROM item {other}"))),
    }
}

/// Parameter types and an expression compiler over a scope.
fn compiler<'a>(scope: &'a Scope, params: &'a mut Vec<SqlType>, aggs: Option<&'a mut Vec<AggSpec>>) -> Compiler<'a> {
    Compiler { scope, params, aggs }
}

/// Compiles a SELECT (`query` must be a plain SELECT, VALUES not supported).
pub fn compile_select(cat: &Catalog<'_>, q: &ast::Query, params: &mut Vec<SqlType>) -> Result<SelectPlan, SqlError> {
    if q.with.is_some() {
        return Err(SqlError::unsupported("WITH"));
    }
    if !q.locks.is_empty() {
        return Err(SqlError::unsupported("SELECT … FOR UPDATE/SHARE"));
    }
    if q.fetch.is_some() {
        return Err(SqlError::unsupported("FETCH FIRST"));
    }
    let sel = match q.body.as_ref() {
        ast::SetExpr::Select(s) => s,
        ast::SetExpr::Values(_) => return Err(SqlError::unsupported("a VALUES list as a query")),
        ast::SetExpr::SetOperation { .. } => return Err(SqlError::unsupported("UNION/INTERSECT/EXCEPT")),
        other => return Err(SqlError::unsupported(&format!("the query {other}"))),
    };
    if sel.having.is_some() && sel.group_by == ast::GroupByExpr::Expressions(vec![], vec![]) {
        // HAVING without GROUP BY is still an aggregate query: handled below.
    }
    // FROM.
    let mut items = Vec::new();
    for (i, twj) in sel.from.iter().enumerate() {
        if i > 0 {
            return Err(SqlError::unsupported("a comma-separated FROM list (use JOIN … ON)"));
        }
        items.push((from_item(cat, &twj.relation)?, None::<(ast::Expr, bool)>));
        for j in &twj.joins {
            let (cond, left) = match &j.join_operator {
                ast::JoinOperator::Join(ast::JoinConstraint::On(e))
                | ast::JoinOperator::Inner(ast::JoinConstraint::On(e)) => (Some(e.clone()), false),
                ast::JoinOperator::LeftOuter(ast::JoinConstraint::On(e))
                | ast::JoinOperator::Left(ast::JoinConstraint::On(e)) => (Some(e.clone()), true),
                ast::JoinOperator::CrossJoin(_) => (None, false),
                other => {
                    return Err(SqlError::unsupported(
                        &format!("the join {other:?}").chars().take(60).collect::<String>(),
                    ))
                }
            };
            items.push((from_item(cat, &j.relation)?, cond.map(|c| (c, left))));
        }
    }
    let all_tables = !items.is_empty() && items.iter().all(|(i, _)| matches!(i, FromItem::Table { .. }));
    let any_table = items.iter().any(|(i, _)| matches!(i, FromItem::Table { .. }));
    if any_table && !all_tables {
        return Err(SqlError::unsupported("joining a table with a system view or function"));
    }
    let mut scope = Scope::default();
    let mut where_parts = Vec::new();
    if let Some(w) = &sel.selection {
        conjuncts(w, &mut where_parts);
    }
    let mut residual = Vec::new();
    let source = if items.is_empty() {
        Source::One
    } else if all_tables {
        let mut query: Option<Query> = None;
        let mut names: Vec<(String, String)> = Vec::new(); // (alias, table)
        let mut on_residual = Vec::new();
        for (item, cond) in &items {
            let FromItem::Table { name, alias, def } = item else { continue };
            if names.iter().any(|(a, n)| a == alias || n == name) {
                return Err(SqlError::unsupported("the same table twice in one query"));
            }
            let start = scope.cols.len();
            for (k, (n, t)) in def.names.iter().zip(&def.sql_types).enumerate() {
                scope.cols.push(ScopeCol {
                    qual: alias.clone(),
                    name: n.clone(),
                    ty: *t,
                    table_oid: def.oid,
                    attnum: (k + 1) as i16,
                });
            }
            match (&mut query, cond) {
                (None, _) => query = Some(Query::from(name.clone())),
                (Some(q), Some((on, false))) => {
                    // Find `new.col = earlier.col` among the ON conjuncts.
                    let mut parts = Vec::new();
                    conjuncts(on, &mut parts);
                    let mut join = None;
                    for p in parts {
                        if join.is_none() {
                            if let Some((l, r)) = equi_columns(&scope, &p) {
                                let (new_c, old_c) = if l >= start && r < start {
                                    (l, r)
                                } else if r >= start && l < start {
                                    (r, l)
                                } else {
                                    on_residual.push(p);
                                    continue;
                                };
                                if scope.cols[new_c].ty.to_column()? != scope.cols[old_c].ty.to_column()? {
                                    on_residual.push(p);
                                    continue;
                                }
                                let old_table = table_of(&names, &scope.cols[old_c].qual);
                                join = Some((
                                    format!("{old_table}.{}", scope.cols[old_c].name),
                                    scope.cols[new_c].name.clone(),
                                ));
                                continue;
                            }
                        }
                        on_residual.push(p);
                    }
                    let (left, right) = join.ok_or_else(|| {
                        SqlError::unsupported("a join without an equality between a column of each side")
                    })?;
                    *q = std::mem::replace(q, Query::from("")).join(name.clone(), left, right);
                }
                (Some(_), Some((_, true))) => return Err(SqlError::unsupported("LEFT JOIN of tables")),
                (Some(_), None) => return Err(SqlError::unsupported("CROSS JOIN of tables")),
            }
            names.push((alias.clone(), name.clone()));
        }
        let mut query = query.ok_or_else(|| SqlError::new(SqlState::INTERNAL_ERROR, "empty FROM"))?;
        // Push `col = constant|parameter` down as engine filters.
        let mut pushed = Vec::new();
        for p in where_parts.drain(..) {
            if let Some((col, value)) = pushable(&scope, &p, params)? {
                let ty = scope.cols[col].ty.to_column()?;
                let table = table_of(&names, &scope.cols[col].qual);
                pushed.push((value, ty));
                query = query.filter(format!("{table}.{}", scope.cols[col].name), Operand::Param(pushed.len()));
                continue;
            }
            residual.push(p);
        }
        residual.extend(on_residual);
        Source::Engine { query, pushed, cache: Box::default() }
    } else {
        let mut row_items = Vec::new();
        for (item, cond) in &items {
            let start = scope.cols.len();
            let producer = match item {
                FromItem::View { view, alias } => {
                    for (n, t) in view.columns() {
                        scope.cols.push(ScopeCol {
                            qual: alias.clone(),
                            name: (*n).into(),
                            ty: *t,
                            table_oid: 0,
                            attnum: 0,
                        });
                    }
                    Producer::View(*view)
                }
                FromItem::Series { args, alias, col } => {
                    let empty = Scope::default();
                    let mut c = compiler(&empty, params, None);
                    let (a, ta) = c.compile(&args[0], Some(SqlType::Int4))?;
                    let (b, tb) = c.compile(&args[1], Some(ta))?;
                    let step = args.get(2).map(|s| c.compile(s, Some(ta)).map(|x| x.0)).transpose()?;
                    let ty = if ta == SqlType::Int8 || tb == SqlType::Int8 { SqlType::Int8 } else { SqlType::Int4 };
                    if !(ta.is_integer() || ta == SqlType::Unknown) || !(tb.is_integer() || tb == SqlType::Unknown) {
                        return Err(SqlError::unsupported("generate_series over non-integers"));
                    }
                    scope.cols.push(ScopeCol { qual: alias.clone(), name: col.clone(), ty, table_oid: 0, attnum: 0 });
                    Producer::Series(a, b, step)
                }
                FromItem::Table { .. } => unreachable_table()?,
            };
            let width = scope.cols.len() - start;
            let (on, left) = match cond {
                Some((e, left)) => (Some(compiler(&scope, params, None).boolean(e)?), *left),
                None => (None, false),
            };
            row_items.push(RowItem { producer, width, on, left });
        }
        Source::Rows(row_items)
    };
    let mut c = compiler(&scope, params, None);
    let residual_exprs =
        where_parts.iter().chain(residual.iter()).map(|p| c.boolean(p)).collect::<Result<Vec<_>, _>>()?;
    let residual = and_all(residual_exprs);

    // Projection (aggregates allowed).
    let mut aggs = Vec::new();
    let mut outputs = Vec::new();
    let mut out_types = Vec::new();
    let mut fields = Vec::new();
    let mut proj_ast: Vec<Option<ast::Expr>> = Vec::new();
    for item in &sel.projection {
        match item {
            ast::SelectItem::Wildcard(_) => {
                if scope.cols.is_empty() {
                    return Err(SqlError::new(
                        SqlState::SYNTAX_ERROR,
                        "SELECT * with no tables specified is not valid",
                    ));
                }
                for (i, col) in scope.cols.iter().enumerate() {
                    outputs.push(Expr::Col(i));
                    out_types.push(col.ty);
                    let mut f = field(&col.name, col.ty);
                    f.table_oid = col.table_oid;
                    f.column = col.attnum;
                    fields.push(f);
                    proj_ast.push(None);
                }
            }
            ast::SelectItem::QualifiedWildcard(kind, _) => {
                let q = match kind {
                    ast::SelectItemQualifiedWildcardKind::ObjectName(n) => object_name(n)?,
                    ast::SelectItemQualifiedWildcardKind::Expr(e) => e.to_string(),
                };
                let before = outputs.len();
                for (i, col) in scope.cols.iter().enumerate().filter(|(_, c)| c.qual == q) {
                    outputs.push(Expr::Col(i));
                    out_types.push(col.ty);
                    let mut f = field(&col.name, col.ty);
                    f.table_oid = col.table_oid;
                    f.column = col.attnum;
                    fields.push(f);
                    proj_ast.push(None);
                }
                if outputs.len() == before {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_TABLE,
                        format!("missing FROM-clause entry for table \"{q}\""),
                    ));
                }
            }
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                let name = match item {
                    ast::SelectItem::ExprWithAlias { alias, .. } => ident_name(alias),
                    _ => figure_colname(e),
                };
                let mut c = compiler(&scope, params, Some(&mut aggs));
                let (x, t) = c.compile(e, None)?;
                let t = if t == SqlType::Unknown { SqlType::Text } else { t };
                let mut f = field(&name, t);
                if let Expr::Col(i) = x {
                    f.table_oid = scope.cols[i].table_oid;
                    f.column = scope.cols[i].attnum;
                }
                outputs.push(x);
                out_types.push(t);
                fields.push(f);
                proj_ast.push(Some(e.clone()));
            }
            other => return Err(SqlError::unsupported(&format!("the select item {other}"))),
        }
    }
    // GROUP BY.
    let mut group_by = Vec::new();
    match &sel.group_by {
        ast::GroupByExpr::Expressions(exprs, mods) => {
            if !mods.is_empty() {
                return Err(SqlError::unsupported("GROUP BY modifiers"));
            }
            for g in exprs {
                let target = match g {
                    ast::Expr::Value(v) => match &v.value {
                        ast::Value::Number(n, _) => {
                            let k: usize = n
                                .parse()
                                .map_err(|_| SqlError::new(SqlState::SYNTAX_ERROR, "bad GROUP BY position"))?;
                            let e = proj_ast.get(k.wrapping_sub(1)).cloned().flatten().ok_or_else(|| {
                                SqlError::new(
                                    SqlState::INVALID_COLUMN_REFERENCE,
                                    format!("GROUP BY position {k} is not in select list"),
                                )
                            })?;
                            e
                        }
                        _ => g.clone(),
                    },
                    ast::Expr::Identifier(i) if scope.resolve(None, &ident_name(i)).is_err() => {
                        // An output alias.
                        let n = ident_name(i);
                        match fields.iter().position(|f| f.name == n).and_then(|k| proj_ast[k].clone()) {
                            Some(e) => e,
                            None => g.clone(),
                        }
                    }
                    _ => g.clone(),
                };
                group_by.push(compiler(&scope, params, None).compile(&target, None)?.0);
            }
        }
        ast::GroupByExpr::All(_) => return Err(SqlError::unsupported("GROUP BY ALL")),
    }
    let having = match &sel.having {
        Some(h) => Some(compiler(&scope, params, Some(&mut aggs)).boolean(h)?),
        None => None,
    };
    let visible = outputs.len();
    // ORDER BY.
    let mut order = Vec::new();
    if let Some(ob) = &q.order_by {
        let exprs = match &ob.kind {
            ast::OrderByKind::Expressions(e) => e,
            ast::OrderByKind::All(_) => return Err(SqlError::unsupported("ORDER BY ALL")),
        };
        for o in exprs {
            let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
            let nulls_first = o.options.nulls_first.unwrap_or(desc);
            let idx = match &o.expr {
                ast::Expr::Value(v) if matches!(v.value, ast::Value::Number(..)) => {
                    let k: usize = v.value.to_string().parse().unwrap_or(0);
                    if k == 0 || k > visible {
                        return Err(SqlError::new(
                            SqlState::INVALID_COLUMN_REFERENCE,
                            format!("ORDER BY position {k} is not in select list"),
                        ));
                    }
                    k - 1
                }
                ast::Expr::Identifier(i) if fields.iter().any(|f| f.name == ident_name(i)) => {
                    let n = ident_name(i);
                    fields.iter().position(|f| f.name == n).unwrap_or(0)
                }
                e => {
                    let (x, t) = compiler(&scope, params, Some(&mut aggs)).compile(e, None)?;
                    outputs.push(x);
                    out_types.push(t);
                    outputs.len() - 1
                }
            };
            order.push((idx, desc, nulls_first));
        }
    }
    let grouped = !group_by.is_empty() || !aggs.is_empty() || having.is_some();
    let distinct = match &sel.distinct {
        None => false,
        Some(ast::Distinct::Distinct) => true,
        Some(_) => return Err(SqlError::unsupported("DISTINCT ON")),
    };
    let empty = Scope::default();
    let (limit, offset) = match &q.limit_clause {
        None => (None, None),
        Some(ast::LimitClause::LimitOffset { limit, offset, limit_by }) => {
            if !limit_by.is_empty() {
                return Err(SqlError::unsupported("LIMIT BY"));
            }
            let mut c = compiler(&empty, params, None);
            let l = limit.as_ref().map(|l| c.compile(l, Some(SqlType::Int8)).map(|x| x.0)).transpose()?;
            let o = offset.as_ref().map(|o| c.compile(&o.value, Some(SqlType::Int8)).map(|x| x.0)).transpose()?;
            (l, o)
        }
        Some(ast::LimitClause::OffsetCommaLimit { .. }) => return Err(SqlError::unsupported("LIMIT a, b")),
    };
    Ok(SelectPlan {
        source,
        scope,
        residual,
        aggs,
        group_by,
        grouped,
        having,
        outputs,
        out_types,
        fields,
        order,
        distinct,
        limit,
        offset,
    })
}

fn unreachable_table() -> Result<Producer, SqlError> {
    Err(SqlError::new(SqlState::INTERNAL_ERROR, "table in a materialised FROM list"))
}

fn table_of(names: &[(String, String)], alias: &str) -> String {
    names.iter().find(|(a, _)| a == alias).map(|(_, n)| n.clone()).unwrap_or_else(|| alias.to_owned())
}

fn column_ref(scope: &Scope, e: &ast::Expr) -> Option<usize> {
    match e {
        ast::Expr::Identifier(i) => scope.resolve(None, &ident_name(i)).ok(),
        ast::Expr::CompoundIdentifier(p) if p.len() == 2 => {
            scope.resolve(Some(&ident_name(&p[0])), &ident_name(&p[1])).ok()
        }
        ast::Expr::Nested(x) => column_ref(scope, x),
        _ => None,
    }
}

fn equi_columns(scope: &Scope, e: &ast::Expr) -> Option<(usize, usize)> {
    match e {
        ast::Expr::Nested(x) => equi_columns(scope, x),
        ast::Expr::BinaryOp { left, op: ast::BinaryOperator::Eq, right } => {
            Some((column_ref(scope, left)?, column_ref(scope, right)?))
        }
        _ => None,
    }
}

/// `col = <row-independent expr>` (either side): the column and the value.
fn pushable(scope: &Scope, e: &ast::Expr, params: &mut Vec<SqlType>) -> Result<Option<(usize, Expr)>, SqlError> {
    let (l, r) = match e {
        ast::Expr::Nested(x) => return pushable(scope, x, params),
        ast::Expr::BinaryOp { left, op: ast::BinaryOperator::Eq, right } => (left, right),
        _ => return Ok(None),
    };
    let (col, other) = match (column_ref(scope, l), column_ref(scope, r)) {
        (Some(c), None) => (c, r),
        (None, Some(c)) => (c, l),
        _ => return Ok(None),
    };
    let ty = scope.cols[col].ty;
    if ty.to_column().is_err() {
        return Ok(None);
    }
    let empty = Scope::default();
    // Compile against an empty scope: fails (→ not pushable) if it reads a column.
    let mut trial = params.clone();
    let compiled = compiler(&empty, &mut trial, None).compile(other, Some(ty));
    match compiled {
        Ok((x, t))
            if x.is_row_independent()
                && (t == ty
                    || (t.is_integer() && ty.is_integer())
                    || t == SqlType::Unknown
                    || (t.is_string() && ty.is_string())) =>
        {
            *params = trial;
            let x = match x {
                Expr::Const(d) => Expr::Const(d.cast(ty)?),
                x => x,
            };
            Ok(Some((col, x)))
        }
        _ => Ok(None),
    }
}

/// Input to a SELECT's execution.
pub struct Run<'a, 'b> {
    /// The engine session.
    pub session: &'a mut Session,
    /// Evaluation environment (parameters, services).
    pub env: EvalEnv<'b>,
    /// The plan cache mode.
    pub cache_mode: CacheMode,
    /// Force a fresh (custom) plan: the statement is not a saved one.
    pub one_shot: bool,
}

fn engine_err(e: turnstile_engine::EngineError) -> SqlError {
    SqlError::from_engine(e)
}

impl SelectPlan {
    /// Input rows (after the residual filter).
    pub fn input(&self, run: &mut Run<'_, '_>) -> Result<Vec<Vec<Datum>>, SqlError> {
        let rows = match &self.source {
            Source::One => vec![Vec::new()],
            Source::Engine { query, pushed, cache } => {
                let mut eparams = Vec::with_capacity(pushed.len());
                for (x, ty) in pushed {
                    eparams.push(x.eval(&[], &mut run.env)?.to_engine(*ty)?);
                }
                let out = {
                    let mut cache =
                        cache.lock().map_err(|_| SqlError::new(SqlState::INTERNAL_ERROR, "plan cache poisoned"))?;
                    cache.runs = cache.runs.saturating_add(1);
                    let generic = !run.one_shot
                        && match run.cache_mode {
                            CacheMode::ForceGeneric => true,
                            CacheMode::ForceCustom => false,
                            CacheMode::Auto => cache.runs > CUSTOM_PLANS,
                        };
                    if generic {
                        if cache.prepared.is_none() {
                            cache.prepared = Some(run.session.prepare(query).map_err(engine_err)?);
                        }
                        match cache.prepared.as_mut() {
                            Some(p) => run.session.execute(p, &eparams).map_err(engine_err)?,
                            None => Vec::new(),
                        }
                    } else {
                        run.session.query(query, &eparams).map_err(engine_err)?
                    }
                };
                out.into_iter().map(|r| r.into_iter().map(Datum::from_engine_owned).collect()).collect()
            }
            Source::Rows(items) => {
                let mut rows: Vec<Vec<Datum>> = vec![Vec::new()];
                for item in items {
                    let produced = match &item.producer {
                        Producer::View(v) => views::rows(*v, run.session, run.env.services)?,
                        Producer::Series(a, b, step) => {
                            let (start, stop, step) = series_bounds(a, b, step.as_ref(), &mut run.env)?;
                            let mut v = Vec::new();
                            let mut i = start;
                            while (step > 0 && i <= stop) || (step < 0 && i >= stop) {
                                v.push(vec![Datum::Int(i)]);
                                if v.len() % 65536 == 0 {
                                    check_cancel(run.env.services)?;
                                }
                                i = match i.checked_add(step) {
                                    Some(n) => n,
                                    None => break,
                                };
                            }
                            v
                        }
                    };
                    let mut joined = Vec::new();
                    for left in &rows {
                        let mut matched = false;
                        for right in &produced {
                            let mut row = left.clone();
                            row.extend(right.iter().cloned());
                            if let Some(on) = &item.on {
                                // Pad so the condition sees every later column as NULL.
                                if !on.test(&row, &mut run.env)? {
                                    continue;
                                }
                            }
                            matched = true;
                            joined.push(row);
                        }
                        if item.left && !matched {
                            let mut row = left.clone();
                            row.extend(std::iter::repeat_n(Datum::Null, item.width));
                            joined.push(row);
                        }
                    }
                    rows = joined;
                }
                rows
            }
        };
        match &self.residual {
            None => Ok(rows),
            Some(r) => {
                let mut out = Vec::with_capacity(rows.len());
                for row in rows {
                    if r.test(&row, &mut run.env)? {
                        out.push(row);
                    }
                }
                Ok(out)
            }
        }
    }

    /// Runs the query: output rows (visible columns only), typed values.
    pub fn run(&self, run: &mut Run<'_, '_>) -> Result<Vec<Vec<Datum>>, SqlError> {
        let input = self.input(run)?;
        let mut out: Vec<Vec<Datum>> = Vec::new();
        if self.grouped {
            let mut groups: Vec<(Vec<Datum>, Vec<AggState>)> = Vec::new();
            let mut index: HashMap<Vec<Datum>, usize> = HashMap::new();
            let mut reps: Vec<Vec<Datum>> = Vec::new();
            for row in &input {
                let mut key = Vec::with_capacity(self.group_by.len());
                for g in &self.group_by {
                    key.push(g.eval(row, &mut run.env)?);
                }
                let gi = match index.get(&key) {
                    Some(&i) => i,
                    None => {
                        groups.push((key.clone(), self.aggs.iter().map(AggState::new).collect()));
                        reps.push(row.clone());
                        index.insert(key, groups.len() - 1);
                        groups.len() - 1
                    }
                };
                for (state, spec) in groups[gi].1.iter_mut().zip(&self.aggs) {
                    state.add(spec, row, &mut run.env)?;
                }
            }
            if groups.is_empty() && self.group_by.is_empty() {
                groups.push((Vec::new(), self.aggs.iter().map(AggState::new).collect()));
                reps.push(vec![Datum::Null; self.scope.cols.len()]);
            }
            for ((_, states), rep) in groups.iter().zip(&reps) {
                let results =
                    states.iter().zip(&self.aggs).map(|(s, spec)| s.finish(spec)).collect::<Result<Vec<_>, _>>()?;
                let mut env = EvalEnv { params: run.env.params, aggs: &results, services: &mut *run.env.services };
                if let Some(h) = &self.having {
                    if !h.test(rep, &mut env)? {
                        continue;
                    }
                }
                let mut row = Vec::with_capacity(self.outputs.len());
                for o in &self.outputs {
                    row.push(o.eval(rep, &mut env)?);
                }
                out.push(row);
            }
        } else {
            // Fast path: SELECT * keeps the input rows as they are.
            let identity = self.outputs.len() == self.scope.cols.len()
                && self.outputs.iter().enumerate().all(|(i, o)| matches!(o, Expr::Col(c) if *c == i));
            if identity {
                out = input;
            } else {
                out.reserve(input.len());
                for row in &input {
                    let mut o = Vec::with_capacity(self.outputs.len());
                    for x in &self.outputs {
                        o.push(x.eval(row, &mut run.env)?);
                    }
                    out.push(o);
                }
            }
        }
        if self.distinct {
            let mut seen = HashSet::new();
            out.retain(|r| seen.insert(r[..self.fields.len()].to_vec()));
        }
        if !self.order.is_empty() {
            out.sort_by(|a, b| {
                for &(i, desc, nulls_first) in &self.order {
                    let (x, y) = (&a[i], &b[i]);
                    let o = match (x.is_null(), y.is_null()) {
                        (true, true) => std::cmp::Ordering::Equal,
                        (true, false) => {
                            if nulls_first {
                                std::cmp::Ordering::Less
                            } else {
                                std::cmp::Ordering::Greater
                            }
                        }
                        (false, true) => {
                            if nulls_first {
                                std::cmp::Ordering::Greater
                            } else {
                                std::cmp::Ordering::Less
                            }
                        }
                        _ => {
                            let o = x.cmp_sql(y);
                            if desc {
                                o.reverse()
                            } else {
                                o
                            }
                        }
                    };
                    if o.is_ne() {
                        return o;
                    }
                }
                std::cmp::Ordering::Equal
            });
        }
        let offset = match &self.offset {
            Some(o) => count_arg(o, &mut run.env, "OFFSET")?,
            None => 0,
        };
        let limit = match &self.limit {
            Some(l) => Some(count_arg(l, &mut run.env, "LIMIT")?),
            None => None,
        };
        if offset > 0 || limit.is_some() {
            out = out.into_iter().skip(offset).take(limit.unwrap_or(usize::MAX)).collect();
        }
        let visible = self.fields.len();
        if self.outputs.len() > visible {
            for r in &mut out {
                r.truncate(visible);
            }
        }
        Ok(out)
    }
}

fn count_arg(e: &Expr, env: &mut EvalEnv<'_>, what: &str) -> Result<usize, SqlError> {
    match e.eval(&[], env)? {
        Datum::Null => Ok(usize::MAX),
        d => match d.cast(SqlType::Int8)? {
            Datum::Int(n) if n >= 0 => Ok(n as usize),
            _ => {
                Err(SqlError::new(SqlState::INVALID_ROW_COUNT_IN_LIMIT_CLAUSE, format!("{what} must not be negative")))
            }
        },
    }
}

/// Checks the session's cancel flag (57014).
pub fn check_cancel(s: &dyn Services) -> Result<(), SqlError> {
    if s.cancel_flag().swap(false, crate::sync::atomic::Ordering::AcqRel) {
        return Err(SqlError::new(SqlState::QUERY_CANCELED, "canceling statement due to user request"));
    }
    Ok(())
}

fn series_bounds(a: &Expr, b: &Expr, step: Option<&Expr>, env: &mut EvalEnv<'_>) -> Result<(i64, i64, i64), SqlError> {
    let int = |d: Datum| -> Result<i64, SqlError> {
        match d.cast(SqlType::Int8)? {
            Datum::Int(v) => Ok(v),
            _ => Err(SqlError::new(SqlState::NULL_VALUE_NOT_ALLOWED, "generate_series argument is NULL")),
        }
    };
    let start = int(a.eval(&[], env)?)?;
    let stop = int(b.eval(&[], env)?)?;
    let step = match step {
        Some(s) => int(s.eval(&[], env)?)?,
        None => 1,
    };
    if step == 0 {
        return Err(SqlError::new(SqlState::INVALID_PARAMETER_VALUE, "step size cannot equal zero"));
    }
    Ok((start, stop, step))
}

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
    /// The rows.
    pub source: InsertSource,
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
    let table = match &ins.table {
        ast::TableObject::TableName(n) => object_name(n)?,
        other => return Err(SqlError::unsupported(&format!("INSERT INTO {other}"))),
    };
    if ins.on.is_some() {
        return Err(SqlError::unsupported("INSERT … ON CONFLICT"));
    }
    if ins.returning.is_some() {
        return Err(SqlError::unsupported("INSERT … RETURNING"));
    }
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
                    let (x, xt) = compiler(&empty, params, None).compile(e, Some(ty))?;
                    check_assignable(xt, ty, &def.names[t])?;
                    row.push(x);
                }
                rows.push(row);
            }
            InsertSource::Values(rows)
        }
        _ => {
            let plan = compile_select(cat, src, params)?;
            if plan.fields.len() > targets.len() {
                return Err(SqlError::new(SqlState::SYNTAX_ERROR, "INSERT has more expressions than target columns"));
            }
            for (k, &t) in targets.iter().enumerate().take(plan.fields.len()) {
                check_assignable(plan.out_types[k], def.sql_types[t], &def.names[t])?;
            }
            InsertSource::Select(Box::new(plan))
        }
    };
    Ok(InsertPlan { table, types: def.types, sql_types: def.sql_types, targets, source })
}

/// `42804` when a value of type `from` cannot be assigned to a column of type `to`.
pub fn check_assignable(from: SqlType, to: SqlType, column: &str) -> Result<(), SqlError> {
    let ok = from == SqlType::Unknown
        || from == to
        || (from.is_integer() || matches!(from, SqlType::Float8 | SqlType::Numeric))
            && (to.is_integer() || matches!(to, SqlType::Float8 | SqlType::Numeric))
        || to.is_string()
        || (matches!(from, SqlType::Timestamp | SqlType::TimestampTz)
            && matches!(to, SqlType::Timestamp | SqlType::TimestampTz));
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
    pub fn engine_row(&self, vals: Vec<Datum>) -> Result<Vec<Value>, SqlError> {
        let mut row = vec![Value::Null; self.types.len()];
        for (v, &t) in vals.into_iter().zip(&self.targets) {
            let v = v.cast(self.sql_types[t])?;
            row[t] = v.to_engine(self.types[t])?;
        }
        Ok(row)
    }

    /// Runs the insert: rows inserted.
    pub fn run(&self, run: &mut Run<'_, '_>) -> Result<u64, SqlError> {
        match &self.source {
            InsertSource::Values(rows) if rows.len() == 1 => {
                let mut vals = Vec::with_capacity(rows[0].len());
                for x in &rows[0] {
                    vals.push(x.eval(&[], &mut run.env)?);
                }
                let row = self.engine_row(vals)?;
                run.session.insert(&self.table, &row).map_err(engine_err)?;
                Ok(1)
            }
            InsertSource::Values(rows) => {
                let mut out = Vec::with_capacity(rows.len());
                for r in rows {
                    let mut vals = Vec::with_capacity(r.len());
                    for x in r {
                        vals.push(x.eval(&[], &mut run.env)?);
                    }
                    out.push(self.engine_row(vals)?);
                }
                run.session.insert_many(&self.table, out).map_err(engine_err)
            }
            InsertSource::Select(plan) => self.run_select(plan, run),
        }
    }

    fn run_select(&self, plan: &SelectPlan, run: &mut Run<'_, '_>) -> Result<u64, SqlError> {
        // Streaming path: `SELECT exprs FROM generate_series(…)` with no
        // grouping, ordering or limits (pgbench -i's server-side generation).
        if let Source::Rows(items) = &plan.source {
            if let [RowItem { producer: Producer::Series(a, b, step), on: None, .. }] = items.as_slice() {
                if !plan.grouped
                    && plan.order.is_empty()
                    && !plan.distinct
                    && plan.limit.is_none()
                    && plan.offset.is_none()
                {
                    let (start, stop, step) = series_bounds(a, b, step.as_ref(), &mut run.env)?;
                    let mut failure: Option<SqlError> = None;
                    let mut i = start;
                    let mut produced: u64 = 0;
                    let session = &mut *run.session;
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
                            self.engine_row(vals).map(Some)
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
                    let n = session.insert_many(&self.table, rows).map_err(engine_err);
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
            out.push(self.engine_row(r)?);
        }
        run.session.insert_many(&self.table, out).map_err(engine_err)
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
}

/// What `modify_target` resolves: scope, table, query, pushed filters, residual.
type ModifyTarget = (Scope, TableDef, Query, Vec<(Expr, ColumnType)>, Option<Expr>);

fn modify_target(
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
    for (k, (n, t)) in def.names.iter().zip(&def.sql_types).enumerate() {
        scope.cols.push(ScopeCol {
            qual: qual.clone(),
            name: n.clone(),
            ty: *t,
            table_oid: def.oid,
            attnum: (k + 1) as i16,
        });
    }
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
            query = query.filter(format!("{table}.{}", scope.cols[col].name), Operand::Param(pushed.len()));
        } else {
            residual.push(compiler(&scope, params, None).boolean(&p)?);
        }
    }
    Ok((scope, def, query, pushed, and_all(residual)))
}

/// Compiles an UPDATE.
pub fn compile_update(cat: &Catalog<'_>, u: &ast::Update, params: &mut Vec<SqlType>) -> Result<ModifyPlan, SqlError> {
    if u.from.is_some() || !u.table.joins.is_empty() {
        return Err(SqlError::unsupported("UPDATE … FROM"));
    }
    if u.returning.is_some() {
        return Err(SqlError::unsupported("UPDATE … RETURNING"));
    }
    let (name, alias) = match &u.table.relation {
        ast::TableFactor::Table { name, alias, args: None, .. } => (name, alias.as_ref().map(|a| ident_name(&a.name))),
        other => return Err(SqlError::unsupported(&format!("UPDATE of {other}"))),
    };
    let (scope, def, query, pushed, residual) = modify_target(cat, name, alias, u.selection.as_ref(), params)?;
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
        let (x, t) = compiler(&scope, params, None).compile(&a.value, Some(def.sql_types[k]))?;
        check_assignable(t, def.sql_types[k], &col)?;
        assignments.push((k, x));
    }
    Ok(ModifyPlan { query, pushed, residual, assignments, types: def.types, sql_types: def.sql_types })
}

/// Compiles a DELETE.
pub fn compile_delete(cat: &Catalog<'_>, d: &ast::Delete, params: &mut Vec<SqlType>) -> Result<ModifyPlan, SqlError> {
    if d.using.is_some() || d.returning.is_some() || !d.tables.is_empty() {
        return Err(SqlError::unsupported("DELETE … USING/RETURNING"));
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
    let (_, def, query, pushed, residual) = modify_target(cat, name, alias, d.selection.as_ref(), params)?;
    Ok(ModifyPlan { query, pushed, residual, assignments: Vec::new(), types: def.types, sql_types: def.sql_types })
}

impl ModifyPlan {
    fn decide(&self, row: &[Value], env: &mut EvalEnv<'_>) -> Result<Option<Vec<Datum>>, SqlError> {
        let datums: Vec<Datum> = row.iter().map(Datum::from_engine).collect();
        if let Some(r) = &self.residual {
            if !r.test(&datums, env)? {
                return Ok(None);
            }
        }
        Ok(Some(datums))
    }

    /// Runs the UPDATE (or DELETE when there are no assignments): rows affected.
    pub fn run(&self, run: &mut Run<'_, '_>, delete: bool) -> Result<u64, SqlError> {
        let mut eparams = Vec::with_capacity(self.pushed.len());
        for (x, ty) in &self.pushed {
            eparams.push(x.eval(&[], &mut run.env)?.to_engine(*ty)?);
        }
        let mut failure: Option<SqlError> = None;
        let env = &mut run.env;
        let result = if delete {
            run.session.delete_rows(&self.query, &eparams, &mut |row| match self.decide(row, env) {
                Ok(d) => Ok(d.is_some()),
                Err(e) => {
                    failure = Some(e);
                    Err(turnstile_engine::EngineError::State("statement failed".into()))
                }
            })
        } else {
            run.session.update_rows(&self.query, &eparams, &mut |row| {
                let out = (|| -> Result<Option<Vec<Value>>, SqlError> {
                    let Some(datums) = self.decide(row, env)? else { return Ok(None) };
                    let mut new = row.to_vec();
                    for (k, x) in &self.assignments {
                        let v = x.eval(&datums, env)?.cast(self.sql_types[*k])?;
                        new[*k] = v.to_engine(self.types[*k])?;
                    }
                    Ok(Some(new))
                })();
                out.map_err(|e| {
                    failure = Some(e);
                    turnstile_engine::EngineError::State("statement failed".into())
                })
            })
        };
        match (result, failure) {
            (_, Some(e)) => Err(e),
            (r, None) => r.map_err(engine_err),
        }
    }
}
