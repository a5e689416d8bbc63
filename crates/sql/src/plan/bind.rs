//! Binding a SELECT: FROM items resolved against the catalog, the scope of
//! columns, joins and `column = value` filters handed to the engine, the
//! select list, GROUP BY, ORDER BY and LIMIT compiled to expressions.

use super::{Catalog, Producer, RowItem, SelectPlan, Source, TableDef};
use crate::error::SqlError;
use crate::expr::{ident_name, object_name, AggSpec, Compiler, Expr, Scope, ScopeCol};
use crate::value::SqlType;
use crate::views::View;
use crate::FieldInfo;
use sqlparser::ast;
use turnstile_engine::query::{Col, Operand, Query};
use turnstile_lock::SqlState;

pub(super) fn field(name: &str, ty: SqlType) -> FieldInfo {
    FieldInfo {
        name: name.to_owned(),
        table_oid: 0,
        column: 0,
        type_oid: ty.oid(),
        type_len: ty.type_len(),
        type_modifier: ty.modifier(),
    }
}

/// The default output name of an expression (PostgreSQL's FigureColname):
/// a column's name, a function's, a cast's type by its internal name
/// (`1::integer` is `int4`), `case`, else `?column?`.
pub(super) fn figure_colname(e: &ast::Expr) -> String {
    figure_colname_strength(e).0
}

/// The name and its strength, as PostgreSQL's `FigureColnameInternal`:
/// 2 for a column or function name, 1 for a cast's type or `case` (an
/// outer cast's type replaces it), 0 for `?column?`.
fn figure_colname_strength(e: &ast::Expr) -> (String, u8) {
    let type_name = |t: &ast::DataType| {
        crate::expr::parse_type_name(&t.to_string())
            .map_or_else(|_| t.to_string().to_ascii_lowercase(), |t| t.internal_name().to_owned())
    };
    match e {
        ast::Expr::Identifier(i) => (ident_name(i), 2),
        ast::Expr::CompoundIdentifier(p) => (p.last().map(ident_name).unwrap_or_default(), 2),
        ast::Expr::Function(f) => match object_name(&f.name) {
            Ok(n) => (n, 2),
            Err(_) => ("?column?".into(), 0),
        },
        ast::Expr::Cast { expr, data_type, .. } => match figure_colname_strength(expr) {
            (_, s) if s <= 1 => (type_name(data_type), 1),
            inner => inner,
        },
        ast::Expr::TypedString(ts) => (type_name(&ts.data_type), 1),
        ast::Expr::Substring { shorthand, .. } => (if *shorthand { "substr" } else { "substring" }.into(), 2),
        ast::Expr::Nested(x) => figure_colname_strength(x),
        // FigureColnameInternal: the ELSE branch's name if it is a strong one.
        ast::Expr::Case { else_result, .. } => match else_result.as_deref().map(figure_colname_strength) {
            Some((name, 2)) => (name, 2),
            _ => ("case".into(), 1),
        },
        _ => ("?column?".into(), 0),
    }
}

/// Splits a condition into its AND-ed parts.
pub(super) fn conjuncts(e: &ast::Expr, out: &mut Vec<ast::Expr>) {
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

pub(super) fn and_all(parts: Vec<Expr>) -> Option<Expr> {
    parts.into_iter().reduce(|a, b| Expr::And(Box::new(a), Box::new(b)))
}

/// A FROM item resolved.
pub(super) enum FromItem {
    Table { name: String, alias: String, def: TableDef },
    View { view: View, alias: String },
    Series { args: Vec<ast::Expr>, alias: String, col: String },
}

pub(super) fn from_item(cat: &Catalog<'_>, f: &ast::TableFactor) -> Result<FromItem, SqlError> {
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
pub(super) fn compiler<'a>(
    scope: &'a Scope,
    params: &'a mut Vec<SqlType>,
    aggs: Option<&'a mut Vec<AggSpec>>,
) -> Compiler<'a> {
    Compiler { scope, params, aggs }
}

/// Compiles a SELECT (`query` must be a plain SELECT, VALUES not supported),
/// in PostgreSQL's order: FROM (and what the engine can filter), WHERE, the
/// select list, GROUP BY and HAVING, ORDER BY, LIMIT/OFFSET.
pub fn compile_select(cat: &Catalog<'_>, q: &ast::Query, params: &mut Vec<SqlType>) -> Result<SelectPlan, SqlError> {
    let sel = select_body(q)?;
    let items = from_list(cat, sel)?;
    let mut scope = Scope::default();
    let mut where_parts = Vec::new();
    if let Some(w) = &sel.selection {
        conjuncts(w, &mut where_parts);
    }
    let (source, residual) = bind_from(&items, &mut scope, where_parts, params)?;
    let mut c = compiler(&scope, params, None);
    let residual = and_all(residual.iter().map(|p| c.boolean(p)).collect::<Result<Vec<_>, _>>()?);
    let mut aggs = Vec::new();
    let mut out = select_list(sel, &scope, params, &mut aggs)?;
    let group_by = group_by(sel, &scope, params, &out)?;
    let having = match &sel.having {
        Some(h) => Some(compiler(&scope, params, Some(&mut aggs)).boolean(h)?),
        None => None,
    };
    let order = order_by(q, &scope, params, &mut aggs, &mut out)?;
    let grouped = !group_by.is_empty() || !aggs.is_empty() || having.is_some();
    if grouped {
        let dependent = grouped_by_primary_key(cat, &group_by, &scope);
        for x in out.outputs.iter().chain(having.iter()) {
            check_grouped(x, &group_by, &scope, &dependent)?;
        }
    }
    let distinct = match &sel.distinct {
        None => false,
        Some(ast::Distinct::Distinct) => true,
        Some(_) => return Err(SqlError::unsupported("DISTINCT ON")),
    };
    let (limit, offset) = limit_offset(q, params)?;
    Ok(SelectPlan {
        source,
        scope,
        residual,
        aggs,
        group_by,
        grouped,
        having,
        outputs: out.outputs,
        out_types: out.out_types,
        fields: out.fields.into(),
        order,
        distinct,
        limit,
        offset,
    })
}

/// The tables (by their qualifier in `scope`) whose every primary-key
/// column is a plain GROUP BY key: each of their columns is functionally
/// dependent on the grouping, so PostgreSQL lets a grouped query read any of
/// them (`check_functional_grouping`).
fn grouped_by_primary_key(cat: &Catalog<'_>, keys: &[Expr], scope: &Scope) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in &scope.cols {
        if c.table_oid == 0 || out.contains(&c.qual) {
            continue;
        }
        let pk = cat.primary_key(c.table_oid);
        let grouped = |attnum: &i16| {
            keys.iter().any(|k| {
                matches!(k, Expr::Col(j) if scope.cols[*j].qual == c.qual
                    && scope.cols[*j].table_oid == c.table_oid
                    && scope.cols[*j].attnum == *attnum)
            })
        };
        if !pk.is_empty() && pk.iter().all(grouped) {
            out.push(c.qual.clone());
        }
    }
    out
}

/// PostgreSQL's grouping rule (`42803`): in a grouped query, the select
/// list, HAVING and ORDER BY read a column only inside an aggregate, inside
/// an expression that is a GROUP BY key, or of a table whose primary key is
/// grouped (`dependent`, by qualifier).
fn check_grouped(x: &Expr, keys: &[Expr], scope: &Scope, dependent: &[String]) -> Result<(), SqlError> {
    if keys.iter().any(|k| k == x) {
        return Ok(());
    }
    let check_grouped = |x: &Expr, keys: &[Expr], scope: &Scope| check_grouped(x, keys, scope, dependent);
    match x {
        Expr::Col(c) if scope.cols[*c].table_oid != 0 && dependent.contains(&scope.cols[*c].qual) => Ok(()),
        Expr::Col(c) => {
            let col = &scope.cols[*c];
            Err(SqlError::new(
                SqlState::GROUPING_ERROR,
                format!(
                    "column \"{}.{}\" must appear in the GROUP BY clause or be used in an aggregate function",
                    col.qual, col.name
                ),
            ))
        }
        Expr::Const(_) | Expr::Param(_) | Expr::Agg(_) => Ok(()),
        Expr::Bin(_, _, a, b) | Expr::And(a, b) | Expr::Or(a, b) | Expr::Like(a, b, _) => {
            check_grouped(a, keys, scope)?;
            check_grouped(b, keys, scope)
        }
        Expr::Not(a) | Expr::Neg(a, _) | Expr::IsNull(a, _) | Expr::IsBool(a, _, _) | Expr::Cast(a, _, _) => {
            check_grouped(a, keys, scope)
        }
        Expr::Func(_, args) => args.iter().try_for_each(|a| check_grouped(a, keys, scope)),
        Expr::InList(a, list, _) => {
            check_grouped(a, keys, scope)?;
            list.iter().try_for_each(|a| check_grouped(a, keys, scope))
        }
        Expr::Case(op, whens, els) => {
            op.iter().try_for_each(|o| check_grouped(o, keys, scope))?;
            for (c, r) in whens {
                check_grouped(c, keys, scope)?;
                check_grouped(r, keys, scope)?;
            }
            els.iter().try_for_each(|e| check_grouped(e, keys, scope))
        }
    }
}

/// The plain SELECT inside `q`, or `0A000` for what turnstile does not run.
fn select_body(q: &ast::Query) -> Result<&ast::Select, SqlError> {
    if q.with.is_some() {
        return Err(SqlError::unsupported("WITH"));
    }
    if !q.locks.is_empty() {
        return Err(SqlError::unsupported("SELECT … FOR UPDATE/SHARE"));
    }
    if q.fetch.is_some() {
        return Err(SqlError::unsupported("FETCH FIRST"));
    }
    match q.body.as_ref() {
        ast::SetExpr::Select(s) => Ok(s),
        ast::SetExpr::Values(_) => Err(SqlError::unsupported("a VALUES list as a query")),
        ast::SetExpr::SetOperation { .. } => Err(SqlError::unsupported("UNION/INTERSECT/EXCEPT")),
        other => Err(SqlError::unsupported(&format!("the query {other}"))),
    }
}

/// A FROM item and how it joins the ones before it: its ON condition and
/// whether the join is LEFT.
type Joined = (FromItem, Option<(ast::Expr, bool)>);

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

/// The FROM list, resolved: one item, then its joins.
fn from_list(cat: &Catalog<'_>, sel: &ast::Select) -> Result<Vec<Joined>, SqlError> {
    let mut items = Vec::new();
    // `FROM a, b` is a cross join, filtered by WHERE.
    for twj in &sel.from {
        items.push((from_item(cat, &twj.relation)?, None));
        for j in &twj.joins {
            let (cond, left) = match &j.join_operator {
                ast::JoinOperator::Join(ast::JoinConstraint::On(e))
                | ast::JoinOperator::Inner(ast::JoinConstraint::On(e)) => (Some(e.clone()), false),
                ast::JoinOperator::LeftOuter(ast::JoinConstraint::On(e))
                | ast::JoinOperator::Left(ast::JoinConstraint::On(e)) => (Some(e.clone()), true),
                ast::JoinOperator::CrossJoin(ast::JoinConstraint::None) => (None, false),
                other => return Err(SqlError::unsupported(&join_name(other))),
            };
            items.push((from_item(cat, &j.relation)?, cond.map(|c| (c, left))));
        }
    }
    Ok(items)
}

/// The input: engine tables, or materialised views and functions, or one
/// empty row. Fills `scope` with the input's columns; returns the source
/// and the WHERE/ON parts left to evaluate here.
fn bind_from(
    items: &[Joined],
    scope: &mut Scope,
    where_parts: Vec<ast::Expr>,
    params: &mut Vec<SqlType>,
) -> Result<(Source, Vec<ast::Expr>), SqlError> {
    let all_tables = !items.is_empty() && items.iter().all(|(i, _)| matches!(i, FromItem::Table { .. }));
    let mut aliases: Vec<&str> = Vec::new();
    for (item, _) in items {
        let alias = match item {
            FromItem::Table { alias, .. } | FromItem::View { alias, .. } | FromItem::Series { alias, .. } => alias,
        };
        if aliases.contains(&alias.as_str()) {
            return Err(SqlError::new(
                SqlState::DUPLICATE_ALIAS,
                format!("table name \"{alias}\" specified more than once"),
            ));
        }
        aliases.push(alias);
    }
    if items.is_empty() {
        Ok((Source::One, where_parts))
    } else if all_tables && engine_joinable(items) {
        bind_tables(items, scope, where_parts, params)
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
    items: &[Joined],
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
                push_table(scope, alias, def);
                Producer::Table { query: Query::from(name.clone()), pushed: Vec::new() }
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
        };
        let width = scope.cols.len() - start;
        let (on, left) = match cond {
            Some((e, left)) => (Some(compiler(scope, params, None).boolean(e)?), *left),
            None => (None, false),
        };
        row_items.push(RowItem { producer, width, on, left });
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

/// The select list, compiled: output expressions, their types, the
/// RowDescription fields, and each item's AST (for GROUP BY positions and
/// aliases).
struct Outputs {
    outputs: Vec<Expr>,
    out_types: Vec<SqlType>,
    fields: Vec<FieldInfo>,
    proj_ast: Vec<Option<ast::Expr>>,
}

impl Outputs {
    /// Column `i` of the scope as an output (`*`, `t.*`).
    fn push_column(&mut self, i: usize, col: &ScopeCol) {
        self.outputs.push(Expr::Col(i));
        self.out_types.push(col.ty);
        let mut f = field(&col.name, col.ty);
        f.table_oid = col.table_oid;
        f.column = col.attnum;
        self.fields.push(f);
        self.proj_ast.push(None);
    }
}

fn select_list(
    sel: &ast::Select,
    scope: &Scope,
    params: &mut Vec<SqlType>,
    aggs: &mut Vec<AggSpec>,
) -> Result<Outputs, SqlError> {
    let mut out = Outputs { outputs: Vec::new(), out_types: Vec::new(), fields: Vec::new(), proj_ast: Vec::new() };
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
                    out.push_column(i, col);
                }
            }
            ast::SelectItem::QualifiedWildcard(kind, _) => {
                let q = match kind {
                    ast::SelectItemQualifiedWildcardKind::ObjectName(n) => object_name(n)?,
                    ast::SelectItemQualifiedWildcardKind::Expr(e) => e.to_string(),
                };
                let before = out.outputs.len();
                for (i, col) in scope.cols.iter().enumerate().filter(|(_, c)| c.qual == q) {
                    out.push_column(i, col);
                }
                if out.outputs.len() == before {
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
                let (x, t) = compiler(scope, params, Some(aggs)).compile(e, None)?;
                let t = if t == SqlType::Unknown { SqlType::Text } else { t };
                let mut f = field(&name, t);
                if let Expr::Col(i) = x {
                    f.table_oid = scope.cols[i].table_oid;
                    f.column = scope.cols[i].attnum;
                }
                out.outputs.push(x);
                out.out_types.push(t);
                out.fields.push(f);
                out.proj_ast.push(Some(e.clone()));
            }
            other => return Err(SqlError::unsupported(&format!("the select item {other}"))),
        }
    }
    Ok(out)
}

/// GROUP BY keys: expressions, select-list positions or output aliases.
fn group_by(sel: &ast::Select, scope: &Scope, params: &mut Vec<SqlType>, out: &Outputs) -> Result<Vec<Expr>, SqlError> {
    let exprs = match &sel.group_by {
        ast::GroupByExpr::Expressions(exprs, mods) => {
            if !mods.is_empty() {
                return Err(SqlError::unsupported("GROUP BY modifiers"));
            }
            exprs
        }
        ast::GroupByExpr::All(_) => return Err(SqlError::unsupported("GROUP BY ALL")),
    };
    let mut keys = Vec::new();
    for g in exprs {
        let target = match g {
            ast::Expr::Value(v) => match &v.value {
                ast::Value::Number(n, _) => {
                    let k: usize =
                        n.parse().map_err(|_| SqlError::new(SqlState::SYNTAX_ERROR, "bad GROUP BY position"))?;
                    out.proj_ast.get(k.wrapping_sub(1)).cloned().flatten().ok_or_else(|| {
                        SqlError::new(
                            SqlState::INVALID_COLUMN_REFERENCE,
                            format!("GROUP BY position {k} is not in select list"),
                        )
                    })?
                }
                _ => g.clone(),
            },
            ast::Expr::Identifier(i) if scope.resolve(None, &ident_name(i)).is_err() => {
                // An output alias.
                let n = ident_name(i);
                out.fields.iter().position(|f| f.name == n).and_then(|k| out.proj_ast[k].clone()).unwrap_or(g.clone())
            }
            _ => g.clone(),
        };
        keys.push(compiler(scope, params, None).compile(&target, None)?.0);
    }
    Ok(keys)
}

/// ORDER BY: sort keys as (output index, descending, nulls first); a key
/// that is not a visible output is added as a hidden one.
fn order_by(
    q: &ast::Query,
    scope: &Scope,
    params: &mut Vec<SqlType>,
    aggs: &mut Vec<AggSpec>,
    out: &mut Outputs,
) -> Result<Vec<(usize, bool, bool)>, SqlError> {
    let Some(ob) = &q.order_by else { return Ok(Vec::new()) };
    let exprs = match &ob.kind {
        ast::OrderByKind::Expressions(e) => e,
        ast::OrderByKind::All(_) => return Err(SqlError::unsupported("ORDER BY ALL")),
    };
    let visible = out.outputs.len();
    let mut order = Vec::new();
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
            ast::Expr::Identifier(i) if out.fields.iter().any(|f| f.name == ident_name(i)) => {
                let n = ident_name(i);
                out.fields.iter().position(|f| f.name == n).unwrap_or(0)
            }
            e => {
                let (x, t) = compiler(scope, params, Some(aggs)).compile(e, None)?;
                out.outputs.push(x);
                out.out_types.push(t);
                out.outputs.len() - 1
            }
        };
        order.push((idx, desc, nulls_first));
    }
    Ok(order)
}

/// LIMIT and OFFSET, as `int8` expressions.
fn limit_offset(q: &ast::Query, params: &mut Vec<SqlType>) -> Result<(Option<Expr>, Option<Expr>), SqlError> {
    let empty = Scope::default();
    match &q.limit_clause {
        None => Ok((None, None)),
        Some(ast::LimitClause::LimitOffset { limit, offset, limit_by }) => {
            if !limit_by.is_empty() {
                return Err(SqlError::unsupported("LIMIT BY"));
            }
            let mut c = compiler(&empty, params, None);
            let l = limit.as_ref().map(|l| c.compile(l, Some(SqlType::Int8)).map(|x| x.0)).transpose()?;
            let o = offset.as_ref().map(|o| c.compile(&o.value, Some(SqlType::Int8)).map(|x| x.0)).transpose()?;
            Ok((l, o))
        }
        Some(ast::LimitClause::OffsetCommaLimit { .. }) => Err(SqlError::unsupported("LIMIT a, b")),
    }
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

pub(super) fn column_ref(scope: &Scope, e: &ast::Expr) -> Option<usize> {
    match e {
        ast::Expr::Identifier(i) => scope.resolve(None, &ident_name(i)).ok(),
        ast::Expr::CompoundIdentifier(p) if p.len() == 2 => {
            scope.resolve(Some(&ident_name(&p[0])), &ident_name(&p[1])).ok()
        }
        ast::Expr::Nested(x) => column_ref(scope, x),
        _ => None,
    }
}

pub(super) fn equi_columns(scope: &Scope, e: &ast::Expr) -> Option<(usize, usize)> {
    match e {
        ast::Expr::Nested(x) => equi_columns(scope, x),
        ast::Expr::BinaryOp { left, op: ast::BinaryOperator::Eq, right } => {
            Some((column_ref(scope, left)?, column_ref(scope, right)?))
        }
        _ => None,
    }
}

/// `col = <row-independent expr>` (either side): the column and the value.
pub(super) fn pushable(
    scope: &Scope,
    e: &ast::Expr,
    params: &mut Vec<SqlType>,
) -> Result<Option<(usize, Expr)>, SqlError> {
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
            let x = match x {
                // A constant the column's type cannot hold (`int4_col =
                // 5000000000`, a string longer than `varchar(n)`) matches
                // no row, but is not an error: the comparison stays here.
                Expr::Const(d) => match d.cast(ty) {
                    Ok(v) => Expr::Const(v),
                    Err(_) => return Ok(None),
                },
                x => x,
            };
            *params = trial;
            Ok(Some((col, x)))
        }
        _ => Ok(None),
    }
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
