//! Compiling a function call: the call's form is checked (no window, no
//! clauses), aggregates go to [`Compiler::aggregate`], and any other name is
//! looked up in the [registry](super::registry) and its arguments resolved
//! against the definition's [`Signature`].
//!
//! A name the registry lacks is `0A000` when it is one of PostgreSQL's
//! functions (turnstile lacks it) and `42883` otherwise, as PostgreSQL
//! answers for a function that does not exist.

use super::def::{no_such_function, Call, FuncDef, Signature};
use super::registry::{aggregate, lookup};
use super::regtype::{reg_cast_in, reg_cast_out};
use crate::error::SqlError;
use crate::expr::{builtin, implicit_cast, object_name, syntax, Compiler, Expr};
use crate::value::{RegKind, SqlType};
use sqlparser::ast;
use turnstile_lock::SqlState;

/// A call's arguments as written.
struct Args {
    list: Vec<ast::Expr>,
    distinct: bool,
    /// `f(*)`.
    star: bool,
    /// An aggregate's own ORDER BY (`array_agg(x ORDER BY y)`).
    order: Vec<ast::OrderByExpr>,
}

fn call_args(name: &str, args: &ast::FunctionArguments) -> Result<Args, SqlError> {
    let list = match args {
        ast::FunctionArguments::None => {
            return Ok(Args { list: Vec::new(), distinct: false, star: false, order: Vec::new() })
        }
        ast::FunctionArguments::List(list) => list,
        ast::FunctionArguments::Subquery(_) => return Err(SqlError::unsupported("a subquery")),
    };
    let mut out = Args {
        list: Vec::with_capacity(list.args.len()),
        distinct: matches!(list.duplicate_treatment, Some(ast::DuplicateTreatment::Distinct)),
        star: false,
        order: Vec::new(),
    };
    for a in &list.args {
        match a {
            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => out.list.push(e.clone()),
            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard) => out.star = true,
            other => return Err(SqlError::unsupported(&format!("the function argument {other}"))),
        }
    }
    for clause in &list.clauses {
        match clause {
            ast::FunctionArgumentClause::OrderBy(keys) if out.order.is_empty() => out.order.clone_from(keys),
            _ => return Err(SqlError::unsupported(&format!("{name}(…) with the clause {clause}"))),
        }
    }
    Ok(out)
}

impl Compiler<'_> {
    /// Compiles a function call (aggregates included).
    pub(crate) fn function(&mut self, f: &ast::Function) -> Result<(Expr, SqlType), SqlError> {
        if crate::expr::expand_array::is_expand_array(&f.name) && f.over.is_none() {
            return self.expand_array_call(&call_args("_pg_expandarray", &f.args)?.list);
        }
        let name = object_name(&f.name)?;
        if name == "generate_subscripts" && f.over.is_none() {
            return self.generate_subscripts_call(&call_args(&name, &f.args)?.list);
        }
        if let (ast::FunctionArguments::Subquery(q), "array") = (&f.args, name.as_str()) {
            return self.sublink(q, crate::expr::SubLinkKind::Array, None);
        }
        let args = call_args(&name, &f.args)?;
        if f.over.is_some() {
            return match self.scope.windows.iter().find(|(call, _)| call == f) {
                Some(&(_, c)) => Ok((Expr::Col(c), self.scope.cols[c].ty)),
                None => Err(SqlError::new(SqlState::WINDOWING_ERROR, "window functions are not allowed here")),
            };
        }
        if let Some(kind) = aggregate(&name, args.star) {
            return self.aggregate(kind, &name, &args.list, args.distinct, f.filter.as_deref(), &args.order);
        }
        if !args.order.is_empty() {
            return Err(SqlError::new(
                SqlState::WRONG_OBJECT_TYPE,
                format!("ORDER BY specified, but {name} is not an aggregate function"),
            ));
        }
        if f.filter.is_some() {
            return Err(SqlError::new(
                SqlState::WRONG_OBJECT_TYPE,
                format!("FILTER specified, but {name} is not an aggregate function"),
            ));
        }
        if args.star {
            return Err(syntax(format!("syntax error at or near \"*\" in {name}(*)")));
        }
        let Some(def) = lookup(&name) else {
            return Err(unknown_function(&name, args.list.len()));
        };
        self.call(&Call { def, name: &name, args: &args.list })
    }

    /// Compiles a call of `call.def`.
    pub(crate) fn call(&mut self, call: &Call<'_>) -> Result<(Expr, SqlType), SqlError> {
        match call.def.signature {
            Signature::Custom(resolve) => resolve(self, call),
            Signature::Fixed { params, required, result } => {
                Ok((Expr::Func(call.def, self.fixed_args(call, params, required)?), result))
            }
        }
    }

    /// Arguments of a [`Signature::Fixed`] call: each compiled with its
    /// parameter's type as the hint, checked to cast to it implicitly (as
    /// PostgreSQL resolves a function by its arguments' types), and cast.
    fn fixed_args(&mut self, call: &Call<'_>, params: &[SqlType], required: usize) -> Result<Vec<Expr>, SqlError> {
        call.arity(required, params.len())?;
        let mut compiled = Vec::with_capacity(call.args.len());
        for (k, (a, t)) in call.args.iter().zip(params).enumerate() {
            if k == 0 && call.def.relation_arg {
                compiled.push(match self.compile(a, Some(*t))? {
                    (x, SqlType::Reg(RegKind::Class)) => (Expr::Func(reg_cast_out(RegKind::Class), vec![x]), *t),
                    other => other,
                });
                continue;
            }
            // An untyped literal for a `regclass` (or kin) parameter is a
            // name, read against the catalog when the call runs.
            let SqlType::Reg(kind) = *t else {
                compiled.push(self.compile(a, Some(*t))?);
                continue;
            };
            compiled.push(match self.compile(a, None)? {
                (x, SqlType::Unknown) => (Expr::Func(reg_cast_in(kind), vec![x]), *t),
                other => other,
            });
        }
        if compiled.iter().zip(params).any(|((_, at), pt)| !implicit_cast(*at, *pt)) {
            let types: Vec<SqlType> = compiled.iter().map(|(_, t)| *t).collect();
            return Err(call.no_such_types(&types));
        }
        let mut out = Vec::with_capacity(compiled.len());
        for ((x, at), pt) in compiled.into_iter().zip(params) {
            out.push(self.coerce(x, at, *pt)?);
        }
        Ok(out)
    }

    /// A call of `def`, a [`Signature::Fixed`] function, with arguments
    /// already compiled and cast (`SUBSTRING(… FROM … FOR …)`).
    pub(crate) fn fixed_call(def: &'static FuncDef, args: Vec<Expr>) -> Result<(Expr, SqlType), SqlError> {
        match def.signature {
            Signature::Fixed { result, .. } => Ok((Expr::Func(def, args), result)),
            Signature::Custom(_) => {
                Err(SqlError::new(SqlState::INTERNAL_ERROR, format!("{} has no fixed signature", def.name)))
            }
        }
    }
}

/// The error for a name the registry lacks.
fn unknown_function(name: &str, nargs: usize) -> SqlError {
    if name == "generate_series" {
        return SqlError::unsupported("generate_series() outside FROM");
    }
    // `ROW(a, b)` is PostgreSQL's row constructor, which sqlparser reads
    // as a call: valid SQL turnstile lacks, not an unknown function.
    if name == "row" {
        return SqlError::unsupported("row constructors");
    }
    if builtin::is_postgres_function(name) {
        return SqlError::unsupported(&format!("function {name}()"));
    }
    no_such_function(name, std::iter::repeat_n("unknown", nargs))
}
