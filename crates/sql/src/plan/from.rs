//! Binding FROM: each item resolved against the catalog (a table, a system
//! view, `generate_series`), its columns added to the scope, and the choice
//! of who joins them. Inner equi-joins of tables go to the engine as one
//! [`Query`] (its planner picks the join method and takes the locks); every
//! other combination — LEFT JOIN, CROSS JOIN and `FROM a, b`, views,
//! `generate_series`, joins on no column equality — is a nested loop here
//! over each item's own (filtered) scan ([`Source::Rows`]). WHERE's
//! `column = value` conjuncts are pushed down as engine filters wherever a
//! table is read, except on the nullable side of a LEFT JOIN.

use super::item::{function_columns, item_alias, FromItem};
use super::predicate::{conjuncts, equi_columns, pushable};
use super::using::Merges;
use super::{compile_query, compiler, Catalog, Producer, QueryCx, RowItem, SelectPlan, SetFunction, Source, TableDef};
use crate::error::SqlError;
use crate::expr::{ident_name, object_name, Scope, ScopeCol};
use crate::value::SqlType;
use crate::views::View;
use sqlparser::ast;
use turnstile_engine::query::{Col, Operand, Query};
use turnstile_lock::SqlState;

/// A FROM item resolved against the catalog: a table, a system view or
/// `generate_series(...)`.
pub(super) fn from_item(
    cat: &Catalog<'_>,
    f: &ast::TableFactor,
    params: &mut Vec<SqlType>,
    cx: &QueryCx,
) -> Result<FromItem, SqlError> {
    match f {
        ast::TableFactor::Table { sample: Some(_), .. } | ast::TableFactor::Derived { sample: Some(_), .. } => {
            Err(SqlError::unsupported("TABLESAMPLE"))
        }
        ast::TableFactor::Table { name, alias, args, with_ordinality, .. } => {
            if let Some(view) = qualified_view(name) {
                let alias = alias.as_ref().map_or_else(|| view.name().to_owned(), |a| ident_name(&a.name));
                return Ok(FromItem::View { view, alias });
            }
            let n = object_name(name)?;
            let alias_name = alias.as_ref().map(|a| ident_name(&a.name));
            if let (Some(d), None, 1) = (cx.dml_cte(&n), args, name.0.len()) {
                let shown = alias_name.clone().unwrap_or_else(|| n.clone());
                let plan = super::over_rows(Producer::Dml(std::sync::Arc::clone(d)), d.scope(&n, &shown)?);
                return derived(plan, shown, &[], alias.as_ref());
            }
            if let (Some(r), None, 1) = (cx.recursive(&n), args, name.0.len()) {
                let shown = alias_name.clone().unwrap_or_else(|| n.clone());
                return derived(r.plan(), shown, &[], alias.as_ref());
            }
            if let (Some((cte, cols, q)), None, 1) = (cx.cte(&n), args, name.0.len()) {
                // A common table expression sees those defined before it.
                let mut before = cx.clone();
                let at = before.ctes.iter().rposition(|(c, _, _)| c == cte).unwrap_or(0);
                before.ctes.truncate(at);
                let plan = compile_query(cat, q, params, &before)?;
                return derived(plan, alias_name.unwrap_or(n), cols, alias.as_ref());
            }
            if let (Some(args), Some(func)) = (args, SetFunction::named(&n)) {
                let [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(arg))] = args.args.as_slice() else {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!("function {n} takes one argument"),
                    ));
                };
                return function_item(func, arg, alias.as_ref(), *with_ordinality);
            }
            if *with_ordinality {
                return Err(SqlError::unsupported(&format!("WITH ORDINALITY on {n}")));
            }
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
            table_or_sequence(cat, n, alias_name)
        }
        ast::TableFactor::UNNEST { alias, array_exprs, with_offset: false, with_ordinality, .. }
            if array_exprs.len() == 1 =>
        {
            function_item(SetFunction::Unnest, &array_exprs[0], alias.as_ref(), *with_ordinality)
        }
        ast::TableFactor::Derived { lateral: true, .. } => Err(SqlError::unsupported("LATERAL")),
        ast::TableFactor::Derived { subquery, alias, .. } => {
            let Some(a) = alias else {
                return Err(SqlError::new(SqlState::SYNTAX_ERROR, "subquery in FROM must have an alias"));
            };
            let plan = compile_query(cat, subquery, params, cx)?;
            derived(plan, ident_name(&a.name), &[], Some(a))
        }
        ast::TableFactor::NestedJoin { .. } => Err(SqlError::unsupported("a parenthesised join in FROM")),
        other => Err(SqlError::unsupported(&format!("the FROM item {other}"))),
    }
}

/// The relation `n` of a FROM item, under `alias` (else its name): a
/// table, else a sequence read as a relation (looked up only then, so a
/// table's planning pays nothing for it).
fn table_or_sequence(cat: &Catalog<'_>, n: String, alias: Option<String>) -> Result<FromItem, SqlError> {
    match cat.table(&n) {
        Ok(def) => Ok(FromItem::Table { alias: alias.unwrap_or_else(|| n.clone()), name: n, def }),
        Err(e) => match cat.sequences.find(cat.session.database(), &n) {
            Some(s) => Ok(FromItem::View { view: View::Sequence(s.oid), alias: alias.unwrap_or(n) }),
            None => Err(e),
        },
    }
}

/// A set-returning function in FROM, under its alias (by default the
/// function's name); `42P10` when the alias lists more columns than it has.
fn function_item(
    func: SetFunction,
    arg: &ast::Expr,
    alias: Option<&ast::TableAlias>,
    ordinality: bool,
) -> Result<FromItem, SqlError> {
    let given: Vec<String> = alias.map(|a| a.columns.iter().map(|c| ident_name(&c.name)).collect()).unwrap_or_default();
    let alias_name = alias.map_or_else(|| func.name().to_owned(), |a| ident_name(&a.name));
    let available = func.column_names().len() + usize::from(ordinality);
    if given.len() > available {
        return Err(SqlError::new(
            SqlState::INVALID_COLUMN_REFERENCE,
            format!("table \"{alias_name}\" has {available} columns available but {} columns specified", given.len()),
        ));
    }
    Ok(FromItem::Function {
        func,
        arg: Box::new(arg.clone()),
        alias: alias_name,
        given,
        named: alias.is_some(),
        ordinality,
    })
}

/// A derived table: `plan`'s rows under `alias`, its columns named by the
/// alias's column list, else `cols`, else the plan's output names.
fn derived(
    plan: SelectPlan,
    alias: String,
    cols: &[String],
    table_alias: Option<&ast::TableAlias>,
) -> Result<FromItem, SqlError> {
    let mut names: Vec<String> = plan.fields.iter().map(|f| f.name.clone()).collect();
    let given: Vec<String> = match table_alias {
        Some(a) if !a.columns.is_empty() => a.columns.iter().map(|c| ident_name(&c.name)).collect(),
        _ => cols.to_vec(),
    };
    if given.len() > names.len() {
        return Err(SqlError::new(
            SqlState::INVALID_COLUMN_REFERENCE,
            format!("table \"{alias}\" has {} columns available but {} columns specified", names.len(), given.len()),
        ));
    }
    for (n, g) in names.iter_mut().zip(given) {
        *n = g;
    }
    Ok(FromItem::Derived { plan: Box::new(plan), alias, cols: names })
}

/// The system relation a schema-qualified name names
/// (`information_schema.columns`, `pg_catalog.pg_class`).
fn qualified_view(name: &ast::ObjectName) -> Option<View> {
    let parts: Vec<String> = name.0.iter().filter_map(|p| p.as_ident().map(ident_name)).collect();
    match parts.as_slice() {
        [schema, rel] => View::qualified(schema, rel),
        _ => None,
    }
}

/// A FROM item and how it joins the ones before it: its ON condition and
/// whether the join is LEFT.
pub(super) type Joined = (FromItem, Option<(ast::Expr, bool)>);

/// What a join turnstile does not run is called in an error message.
fn join_name(op: &ast::JoinOperator) -> String {
    use ast::JoinOperator as J;
    let constraint = match op {
        J::Join(c) | J::Inner(c) | J::Left(c) | J::LeftOuter(c) | J::Right(c) | J::RightOuter(c) => Some(c),
        J::FullOuter(c) | J::CrossJoin(c) => Some(c),
        _ => None,
    };
    let kind = match op {
        J::Join(_) | J::Inner(_) => "JOIN",
        J::Left(_) | J::LeftOuter(_) => "LEFT JOIN",
        J::Right(_) | J::RightOuter(_) => "RIGHT JOIN",
        J::FullOuter(_) => "FULL JOIN",
        J::CrossJoin(_) => "CROSS JOIN",
        _ => return "this kind of join (semi, anti, APPLY or AS OF)".into(),
    };
    match constraint {
        Some(ast::JoinConstraint::Using(_)) => format!("{kind} … USING"),
        Some(ast::JoinConstraint::Natural) => format!("NATURAL {kind}"),
        Some(ast::JoinConstraint::None) if kind != "CROSS JOIN" => format!("{kind} without ON"),
        _ => kind.to_owned(),
    }
}

/// The FROM list, resolved: one item, then its joins (a USING or NATURAL
/// join as its ON condition, the columns it merges in `Merges`).
pub(super) fn from_list(
    cat: &Catalog<'_>,
    from: &[ast::TableWithJoins],
    params: &mut Vec<SqlType>,
    cx: &QueryCx,
) -> Result<(Vec<Joined>, Merges), SqlError> {
    use ast::JoinConstraint as C;
    use ast::JoinOperator as J;
    let mut items: Vec<Joined> = Vec::new();
    let mut merges = Merges::default();
    // `FROM a, b` is a cross join, filtered by WHERE.
    for twj in from {
        let first = from_item(cat, &twj.relation, params, cx)?;
        merges.start_group(item_alias(&first));
        let group_start = items.len();
        items.push((first, None));
        for j in &twj.joins {
            let (constraint, left) = match &j.join_operator {
                J::Join(c) | J::Inner(c) => (c, false),
                J::Left(c) | J::LeftOuter(c) => (c, true),
                J::CrossJoin(C::None) => (&C::None, false),
                other => return Err(SqlError::unsupported(&join_name(other))),
            };
            let right = from_item(cat, &j.relation, params, cx)?;
            let cond = match constraint {
                C::On(e) => {
                    merges.add(item_alias(&right));
                    Some(e.clone())
                }
                C::Using(_) | C::Natural => {
                    let before: Vec<&FromItem> = items[group_start..].iter().map(|(i, _)| i).collect();
                    let on = merges.condition(&before, &right, constraint)?;
                    // NATURAL JOIN without a common column is a cross join.
                    Some(on.unwrap_or_else(|| ast::Expr::value(ast::Value::Boolean(true))))
                }
                C::None if matches!(j.join_operator, J::CrossJoin(_)) => {
                    merges.add(item_alias(&right));
                    None
                }
                _ => return Err(SqlError::unsupported(&join_name(&j.join_operator))),
            };
            items.push((right, cond.map(|c| (c, left))));
        }
    }
    Ok((items, merges))
}

/// The input: engine tables, or materialised views and functions, or one
/// empty row. Fills `scope` with the input's columns; returns the source
/// and the WHERE/ON parts left to evaluate here.
pub(super) fn bind_from(
    items: Vec<Joined>,
    scope: &mut Scope,
    where_parts: Vec<ast::Expr>,
    params: &mut Vec<SqlType>,
) -> Result<(Source, Vec<ast::Expr>), SqlError> {
    let all_tables = !items.is_empty() && items.iter().all(|(i, _)| matches!(i, FromItem::Table { .. }));
    let mut aliases: Vec<&str> = Vec::new();
    for (item, _) in &items {
        let alias = item_alias(item);
        if aliases.contains(&alias) {
            return Err(SqlError::new(
                SqlState::DUPLICATE_ALIAS,
                format!("table name \"{alias}\" specified more than once"),
            ));
        }
        aliases.push(alias);
    }
    if items.is_empty() {
        Ok((Source::One, where_parts))
    } else if all_tables && engine_joinable(&items) {
        bind_tables(&items, scope, where_parts, params)
    } else {
        bind_rows(items, scope, where_parts, params)
    }
}

/// Whether the engine can join `items` itself: inner joins, each with an
/// `ON` that has an equality between a column of the new table and one of
/// the tables before it, of types the engine compares alike (the same
/// type, or `text` with `varchar`). Anything else is joined here, in a
/// nested loop over each table's own (filtered) scan.
fn engine_joinable(items: &[Joined]) -> bool {
    let mut scope = Scope::default();
    for (k, (item, cond)) in items.iter().enumerate() {
        let FromItem::Table { alias, def, .. } = item else { return false };
        let start = scope.cols.len();
        push_table(&mut scope, alias, def);
        if k == 0 {
            continue;
        }
        let Some((on, false)) = cond else { return false };
        let mut parts = Vec::new();
        conjuncts(on, &mut parts);
        let found = parts.iter().any(|p| {
            equi_columns(&scope, p).is_some_and(|(l, r)| {
                (l >= start) != (r >= start) && engine_comparable(scope.cols[l].ty, scope.cols[r].ty)
            })
        });
        if !found {
            return false;
        }
    }
    true
}

/// Whether the engine's equality on stored values is SQL's `=` for
/// columns of these types: the same type (a `char(n)` with the same
/// padding), or text with unpadded text.
fn engine_comparable(a: SqlType, b: SqlType) -> bool {
    let unpadded = |t: SqlType| matches!(t, SqlType::Text | SqlType::Varchar(_));
    match (a.to_column(), b.to_column()) {
        (Ok(x), Ok(y)) => x == y || (unpadded(a) && unpadded(b)),
        _ => false,
    }
}

/// Engine tables: joined by the engine on one column equality each, with
/// `column = value` conjuncts pushed down as engine filters.
fn bind_tables(
    items: &[Joined],
    scope: &mut Scope,
    where_parts: Vec<ast::Expr>,
    params: &mut Vec<SqlType>,
) -> Result<(Source, Vec<ast::Expr>), SqlError> {
    let mut query: Option<Query> = None;
    let mut names: Vec<(String, String)> = Vec::new(); // (alias, table)
    let mut residual = Vec::new();
    let mut on_residual = Vec::new();
    for (item, cond) in items {
        let FromItem::Table { name, alias, def } = item else { continue };
        let start = scope.cols.len();
        push_table(scope, alias, def);
        match (&mut query, cond) {
            (None, _) => query = Some(Query::from(name.clone())),
            (Some(q), Some((on, false))) => {
                let (left, right) = join_columns(scope, &names, on, start, &mut on_residual)?;
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
    for p in where_parts {
        if let Some((col, value)) = pushable(scope, &p, params)? {
            let ty = scope.cols[col].ty.to_column()?;
            pushed.push((value, ty));
            query = query.filter(column_of(&names, &scope.cols[col])?, Operand::Param(pushed.len()));
            continue;
        }
        residual.push(p);
    }
    residual.extend(on_residual);
    Ok((Source::Engine { query, pushed, cache: Box::default() }, residual))
}

/// The engine's join columns for a table joined `ON on`: the first
/// `new.col = earlier.col` conjunct of equal column types, resolved
/// (earlier column, new column); every other conjunct goes to `rest`.
fn join_columns(
    scope: &Scope,
    names: &[(String, String)],
    on: &ast::Expr,
    start: usize,
    rest: &mut Vec<ast::Expr>,
) -> Result<(Col, Col), SqlError> {
    let mut parts = Vec::new();
    conjuncts(on, &mut parts);
    let mut join = None;
    for p in parts {
        if join.is_some() {
            rest.push(p);
            continue;
        }
        let Some((l, r)) = equi_columns(scope, &p) else {
            rest.push(p);
            continue;
        };
        let (new_c, old_c) = match (l >= start, r >= start) {
            (true, false) => (l, r),
            (false, true) => (r, l),
            _ => {
                rest.push(p);
                continue;
            }
        };
        if !engine_comparable(scope.cols[new_c].ty, scope.cols[old_c].ty) {
            rest.push(p);
            continue;
        }
        let right = scope.cols[new_c].attnum as usize - 1;
        join = Some((column_of(names, &scope.cols[old_c])?, Col::at(names.len(), right)));
    }
    join.ok_or_else(|| SqlError::unsupported("a join without an equality between a column of each side"))
}

/// Sources joined here in a nested loop: system views, `generate_series`,
/// and tables the engine cannot join (each read by its own engine query,
/// with the WHERE clause's `column = value` conjuncts on it pushed down,
/// unless it is the nullable side of a LEFT JOIN). Returns the source and
/// the WHERE conjuncts left to evaluate.
fn bind_rows(
    items: Vec<Joined>,
    scope: &mut Scope,
    where_parts: Vec<ast::Expr>,
    params: &mut Vec<SqlType>,
) -> Result<(Source, Vec<ast::Expr>), SqlError> {
    let mut row_items = Vec::new();
    let mut starts = Vec::new();
    for (item, cond) in items {
        let start = scope.cols.len();
        starts.push(start);
        let producer = match item {
            FromItem::Table { name, alias, def } => {
                push_table(scope, &alias, &def);
                Producer::Table { query: Query::from(name), pushed: Vec::new() }
            }
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
                if view.has_tableoid() {
                    scope.system.push(scope.cols.len());
                    scope.cols.push(ScopeCol {
                        qual: alias.clone(),
                        name: "tableoid".into(),
                        ty: SqlType::Oid,
                        table_oid: 0,
                        attnum: 0,
                    });
                }
                Producer::View(view)
            }
            FromItem::Series { args, alias, col } => {
                // The arguments see the enclosing query (a correlated reference), not this FROM.
                let outer = Scope { outer: scope.outer.clone(), ..Scope::default() };
                let mut c = compiler(&outer, params, None);
                let (a, ta) = c.compile(&args[0], Some(SqlType::Int4))?;
                let (b, tb) = c.compile(&args[1], Some(ta))?;
                let step = args.get(2).map(|s| c.compile(s, Some(ta)).map(|x| x.0)).transpose()?;
                let ty = if ta == SqlType::Int8 || tb == SqlType::Int8 { SqlType::Int8 } else { SqlType::Int4 };
                if !(ta.is_integer() || ta == SqlType::Unknown) || !(tb.is_integer() || tb == SqlType::Unknown) {
                    return Err(SqlError::unsupported("generate_series over non-integers"));
                }
                scope.cols.push(ScopeCol { qual: alias, name: col, ty, table_oid: 0, attnum: 0 });
                Producer::Series(a, b, step)
            }
            FromItem::Function { func, arg, alias, given, named, ordinality } => {
                // The argument sees the enclosing query (a correlated reference), not this FROM.
                let outer = Scope { outer: scope.outer.clone(), ..Scope::default() };
                let (x, t) = compiler(&outer, params, None).compile(&func.typed_arg(*arg)?, Some(func.arg_hint()))?;
                let mut types = func.column_types(t)?;
                if ordinality {
                    types.push(SqlType::Int8);
                }
                let names = function_columns(func, &alias, &given, named, ordinality);
                for (name, ty) in names.into_iter().zip(types) {
                    scope.cols.push(ScopeCol { qual: alias.clone(), name, ty, table_oid: 0, attnum: 0 });
                }
                Producer::Function(func, x, ordinality)
            }
            FromItem::Derived { plan, alias, cols } => {
                for (n, t) in cols.iter().zip(&plan.out_types) {
                    scope.cols.push(ScopeCol { qual: alias.clone(), name: n.clone(), ty: *t, table_oid: 0, attnum: 0 });
                }
                Producer::Query(plan)
            }
        };
        let width = scope.cols.len() - start;
        let (on, left) = match cond {
            Some((e, left)) => (Some(compiler(scope, params, None).boolean(&e)?), left),
            None => (None, false),
        };
        row_items.push(RowItem { producer, width, on, left, filter: None });
    }
    let mut residual = Vec::new();
    for p in where_parts {
        if let Some((col, value)) = pushable(scope, &p, params)? {
            let k = starts.iter().rposition(|&s| s <= col).unwrap_or(0);
            let item = &mut row_items[k];
            if let (Producer::Table { query, pushed }, false) = (&mut item.producer, item.left) {
                let ty = scope.cols[col].ty.to_column()?;
                pushed.push((value, ty));
                let q = std::mem::replace(query, Query::from(""));
                *query = q.filter(Col::at(0, col - starts[k]), Operand::Param(pushed.len()));
                continue;
            }
        }
        residual.push(p);
    }
    Ok((Source::Rows(row_items), residual))
}

/// A scope column of an engine table, resolved for the engine's query:
/// its table's position in the query (`names`, in join order) and its
/// column number.
pub(super) fn column_of(names: &[(String, String)], col: &ScopeCol) -> Result<Col, SqlError> {
    let table = names
        .iter()
        .position(|(alias, _)| *alias == col.qual)
        .ok_or_else(|| SqlError::new(SqlState::INTERNAL_ERROR, format!("no table \"{}\" in the query", col.qual)))?;
    Ok(Col::at(table, col.attnum as usize - 1))
}

/// Adds every column of table `def`, qualified by `qual`, to `scope`.
pub(super) fn push_table(scope: &mut Scope, qual: &str, def: &TableDef) {
    for (k, (n, t)) in def.names.iter().zip(&def.sql_types).enumerate() {
        scope.cols.push(ScopeCol {
            qual: qual.to_owned(),
            name: n.clone(),
            ty: *t,
            table_oid: def.oid,
            attnum: (k + 1) as i16,
        });
    }
}
