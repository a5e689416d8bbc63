//! A walk over a parsed expression's nodes, for the planning steps that
//! look for something in a query level's expressions before compiling
//! them (`sublink.rs`'s subqueries, `window.rs`'s window calls). The
//! visitor sees each node before its children and says whether to go
//! into them; subqueries are not entered (each level is planned on its
//! own).
//!
//! ```ignore
//! let mut functions = 0;
//! walk(&expr, &mut |e| { functions += matches!(e, ast::Expr::Function(_)) as usize; true });
//! ```

use sqlparser::ast;

/// Calls `visit` on `e` and, while it answers `true`, on the expressions
/// nested in it (function arguments and `FILTER`, operands, `CASE` arms,
/// array elements, an `IN` list's items).
pub(super) fn walk<'e>(e: &'e ast::Expr, visit: &mut dyn FnMut(&'e ast::Expr) -> bool) {
    use ast::Expr as A;
    if !visit(e) {
        return;
    }
    match e {
        A::In { expr, target, .. } => {
            walk(expr, visit);
            if let ast::InTarget::List(l) = target {
                l.iter().for_each(|x| walk(x, visit));
            }
        }
        A::BinaryOp { left, right, .. }
        | A::AnyOp { left, right, .. }
        | A::AllOp { left, right, .. }
        | A::IsDistinctFrom(left, right)
        | A::IsNotDistinctFrom(left, right) => {
            walk(left, visit);
            walk(right, visit);
        }
        A::Like { expr, pattern, .. } | A::ILike { expr, pattern, .. } | A::SimilarTo { expr, pattern, .. } => {
            walk(expr, visit);
            walk(pattern, visit);
        }
        A::Between { expr, low, high, .. } => {
            walk(expr, visit);
            walk(low, visit);
            walk(high, visit);
        }
        A::UnaryOp { expr, .. }
        | A::Nested(expr)
        | A::Cast { expr, .. }
        | A::IsNull(expr)
        | A::IsNotNull(expr)
        | A::IsTrue(expr)
        | A::IsNotTrue(expr)
        | A::IsFalse(expr)
        | A::IsNotFalse(expr)
        | A::Collate { expr, .. } => walk(expr, visit),
        A::CompoundFieldAccess { root, .. } => walk(root, visit),
        A::Case { operand, conditions, else_result, .. } => {
            operand.iter().for_each(|x| walk(x, visit));
            for w in conditions {
                walk(&w.condition, visit);
                walk(&w.result, visit);
            }
            else_result.iter().for_each(|x| walk(x, visit));
        }
        A::Function(f) => {
            if let ast::FunctionArguments::List(l) = &f.args {
                for a in &l.args {
                    let (ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x))
                    | ast::FunctionArg::Named { arg: ast::FunctionArgExpr::Expr(x), .. }) = a
                    else {
                        continue;
                    };
                    walk(x, visit);
                }
            }
            if let Some(x) = &f.filter {
                walk(x, visit);
            }
        }
        A::Array(a) => a.elem.iter().for_each(|x| walk(x, visit)),
        A::Tuple(l) => l.iter().for_each(|x| walk(x, visit)),
        _ => {}
    }
}
