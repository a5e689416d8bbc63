//! The target list: `*`, `t.*` and expressions compiled to outputs, with
//! their types and RowDescription fields, each named as PostgreSQL names it
//! (an alias, else `FigureColname`'s choice).

use super::compiler;
use crate::error::SqlError;
use crate::expr::{ident_name, object_name, AggSpec, Expr, Scope, ScopeCol};
use crate::value::SqlType;
use crate::FieldInfo;
use sqlparser::ast;
use turnstile_lock::SqlState;

/// A RowDescription field of type `ty` that names no table column.
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
    // A cast is named by its type's last name, an array's by its element's.
    let type_name = |t: &ast::DataType| {
        crate::expr::parse_type_name(&t.to_string()).map_or_else(
            |_| t.to_string().to_ascii_lowercase(),
            |t| t.element().unwrap_or(t).internal_name().to_owned(),
        )
    };
    match e {
        ast::Expr::Identifier(i) => (ident_name(i), 2),
        ast::Expr::CompoundIdentifier(p) => (p.last().map(ident_name).unwrap_or_default(), 2),
        ast::Expr::Function(f) if matches!(f.args, ast::FunctionArguments::Subquery(_)) => ("array".into(), 2),
        ast::Expr::Function(f) => match object_name(&f.name) {
            Ok(n) => (n, 2),
            // A function of another schema (`information_schema.…`).
            Err(_) => f.name.0.last().and_then(|p| p.as_ident()).map_or(("?column?".into(), 0), |i| (ident_name(i), 2)),
        },
        ast::Expr::Cast { expr, data_type, .. } => match figure_colname_strength(expr) {
            (_, s) if s <= 1 => (type_name(data_type), 1),
            inner => inner,
        },
        ast::Expr::TypedString(ts) => (type_name(&ts.data_type), 1),
        ast::Expr::Substring { shorthand, .. } => (if *shorthand { "substr" } else { "substring" }.into(), 2),
        ast::Expr::Nested(x) => figure_colname_strength(x),
        // A subscripted value is named as the value is.
        // A subscripted value is named as the value is: the last name
        // in the chain (`c.conkey[1]` is `conkey`, `(f(x)).n` is `n`),
        // else the root's.
        ast::Expr::CompoundFieldAccess { root, access_chain } => {
            let last_name = access_chain.iter().rev().find_map(|a| match a {
                ast::AccessExpr::Dot(ast::Expr::Identifier(i)) => Some(ident_name(i)),
                _ => None,
            });
            last_name.map_or_else(|| figure_colname_strength(root), |n| (n, 2))
        }
        ast::Expr::Array(_) => ("array".into(), 2),
        ast::Expr::Trim { trim_where, .. } => (
            match trim_where {
                Some(ast::TrimWhereField::Leading) => "ltrim",
                Some(ast::TrimWhereField::Trailing) => "rtrim",
                _ => "btrim",
            }
            .into(),
            2,
        ),
        ast::Expr::Position { .. } => ("position".into(), 2),
        ast::Expr::Exists { .. } => ("exists".into(), 2),
        ast::Expr::Subquery(q) => match q.body.as_ref() {
            // A scalar subquery is named by its one output's name.
            ast::SetExpr::Select(s) => match s.projection.as_slice() {
                [ast::SelectItem::ExprWithAlias { alias, .. }] => (ident_name(alias), 2),
                [ast::SelectItem::UnnamedExpr(e)] => figure_colname_strength(e),
                _ => ("?column?".into(), 0),
            },
            _ => ("?column?".into(), 0),
        },
        // FigureColnameInternal: the ELSE branch's name if it is a strong one.
        ast::Expr::Case { else_result, .. } => match else_result.as_deref().map(figure_colname_strength) {
            Some((name, 2)) => (name, 2),
            _ => ("case".into(), 1),
        },
        _ => ("?column?".into(), 0),
    }
}

/// The select list, compiled: output expressions, their types, the
/// RowDescription fields, and each item's AST (for GROUP BY positions and
/// aliases).
pub(super) struct Outputs {
    pub(super) outputs: Vec<Expr>,
    pub(super) out_types: Vec<SqlType>,
    pub(super) fields: Vec<FieldInfo>,
    pub(super) proj_ast: Vec<Option<ast::Expr>>,
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

/// The select list (`*`, `t.*`, expressions with their output names),
/// compiled against `scope`.
pub(super) fn select_list(
    sel: &ast::Select,
    scope: &Scope,
    params: &mut Vec<SqlType>,
    aggs: &mut Vec<AggSpec>,
) -> Result<Outputs, SqlError> {
    item_list(&sel.projection, scope, params, aggs)
}

/// A list of select items (a select list, or a `RETURNING` list),
/// compiled against `scope`.
pub(super) fn item_list(
    items: &[ast::SelectItem],
    scope: &Scope,
    params: &mut Vec<SqlType>,
    aggs: &mut Vec<AggSpec>,
) -> Result<Outputs, SqlError> {
    let mut out = Outputs { outputs: Vec::new(), out_types: Vec::new(), fields: Vec::new(), proj_ast: Vec::new() };
    for item in items {
        match item {
            ast::SelectItem::Wildcard(_) => {
                if scope.cols.is_empty() {
                    return Err(SqlError::new(
                        SqlState::SYNTAX_ERROR,
                        "SELECT * with no tables specified is not valid",
                    ));
                }
                scope.star_columns().into_iter().for_each(|i| out.push_column(i, &scope.cols[i]));
            }
            ast::SelectItem::QualifiedWildcard(kind, _) => {
                let q = match kind {
                    ast::SelectItemQualifiedWildcardKind::ObjectName(n) => object_name(n)?,
                    ast::SelectItemQualifiedWildcardKind::Expr(e) => e.to_string(),
                };
                let before = out.outputs.len();
                let listed = |i: &usize, c: &ScopeCol| c.qual == q && !scope.system.contains(i);
                for (i, col) in scope.cols.iter().enumerate().filter(|(i, c)| listed(i, c)) {
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
                let mut c = compiler(scope, params, Some(aggs));
                let (x, t) = match super::select_srf::unnest_arg(e) {
                    Some(arg) => super::select_srf::compile_unnest(&mut c, arg)?,
                    None => c.compile(e, None)?,
                };
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
