//! What one SQL function is: [`FuncDef`], the single definition that carries
//! its names, its signature (with the implicit casts of its arguments), its
//! NULL behaviour, its result type and its evaluation — as a DataFusion
//! `ScalarUDF` or a `pg_proc` row does.
//!
//! The compiler looks a call's name up in the
//! [registry](super::registry) once, resolves the arguments against the
//! definition's [`Signature`], and stores the `&'static FuncDef` in the
//! compiled [`Expr::Func`]; evaluating a row then calls through the
//! definition's function pointer, with no name lookup, hashing or
//! allocation per call ([`FuncDef::call`]).
//!
//! ```
//! use turnstile_sql::expr::functions::lookup;
//! let repeat = lookup("repeat").unwrap();
//! assert_eq!(repeat.name, "repeat");
//! assert!(lookup("char_length").is_some_and(|f| f.name == "length"));
//! assert!(lookup("no_such_function").is_none());
//! ```

use crate::error::SqlError;
use crate::expr::{Compiler, EvalEnv, Expr};
use crate::value::{Datum, SqlType};
use sqlparser::ast;
use turnstile_lock::SqlState;

/// Most arguments a function evaluated by value ([`Eval::Values`]) takes:
/// its arguments are evaluated into an array of this size on the stack.
pub const MAX_ARGS: usize = 3;

/// One SQL function.
pub struct FuncDef {
    /// Canonical name (`pg_proc.proname` of the first spelling).
    pub name: &'static str,
    /// Other names that call the same function (`char_length` for
    /// `length`); a call's result column is named after the name written.
    pub aliases: &'static [&'static str],
    /// How a call's arguments are typed and the result type chosen.
    pub signature: Signature,
    /// What a NULL argument does.
    pub nulls: Nulls,
    /// Whether a call with constant arguments may be evaluated once for a
    /// whole statement (as a filter pushed into a scan) or must run for
    /// every row.
    pub volatility: Volatility,
    /// How a call is evaluated.
    pub eval: Eval,
    /// Whether the first argument names a relation as text, as
    /// PostgreSQL's `regclass` parameter of the sequence functions does:
    /// a `regclass` value is then accepted too, passed as its name.
    pub relation_arg: bool,
}

/// A function's signature.
#[derive(Clone, Copy)]
pub enum Signature {
    /// Positional parameters of fixed types, the first `required` of them
    /// mandatory. Each argument is compiled with its parameter's type as
    /// the hint (typing `$n` and literals), must cast to it implicitly
    /// (`pg_cast` context `i`: else `42883`), and is cast to it.
    Fixed {
        /// Parameter types, at most [`MAX_ARGS`].
        params: &'static [SqlType],
        /// Arguments that must be given.
        required: usize,
        /// The result type.
        result: SqlType,
    },
    /// Resolved by the function's own rule (a polymorphic result such as
    /// `abs`'s or `coalesce`'s): it compiles the arguments and returns the
    /// call with its type.
    Custom(Resolver),
}

/// A custom resolution rule ([`Signature::Custom`]).
pub type Resolver = fn(&mut Compiler<'_>, &Call<'_>) -> Result<(Expr, SqlType), SqlError>;

/// A call being compiled, as a [`Resolver`] sees it.
pub struct Call<'a> {
    /// The definition called.
    pub def: &'static FuncDef,
    /// The name as written (for messages).
    pub name: &'a str,
    /// The arguments, uncompiled.
    pub args: &'a [ast::Expr],
}

impl Call<'_> {
    /// `42883` for a call whose argument count fits no signature (the
    /// arguments are listed as `unknown`, as PostgreSQL does before it has
    /// typed them).
    pub fn no_such_arity(&self) -> SqlError {
        no_such_function(self.name, self.args.iter().map(|_| "unknown"))
    }

    /// `42883` for arguments of `types`.
    pub fn no_such_types(&self, types: &[SqlType]) -> SqlError {
        no_such_function(self.name, types.iter().map(|t| t.name()))
    }

    /// `Ok` when the call has between `min` and `max` arguments.
    pub fn arity(&self, min: usize, max: usize) -> Result<(), SqlError> {
        if (min..=max).contains(&self.args.len()) {
            Ok(())
        } else {
            Err(self.no_such_arity())
        }
    }
}

/// `42883`: `function name(types) does not exist`.
pub fn no_such_function<'t>(name: &str, types: impl Iterator<Item = &'t str>) -> SqlError {
    SqlError::new(
        SqlState::UNDEFINED_FUNCTION,
        format!("function {name}({}) does not exist", types.collect::<Vec<_>>().join(", ")),
    )
}

/// NULL behaviour (`pg_proc.proisstrict`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nulls {
    /// Any NULL argument makes the result NULL without calling the
    /// function.
    Strict,
    /// The function sees NULL arguments and decides.
    CalledOnNull,
}

/// Volatility (`pg_proc.provolatile`), as far as turnstile acts on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Volatility {
    /// Depends on its arguments only.
    Immutable,
    /// Fixed within a statement (`now()`, session settings).
    Stable,
    /// Must run once per row: it returns a new value (`random()`) or
    /// has an effect (`pg_sleep`, `set_config`).
    Volatile,
}

/// How a call is evaluated.
#[derive(Clone, Copy)]
pub enum Eval {
    /// On the values of its arguments (at most [`MAX_ARGS`]), evaluated
    /// first; [`Nulls::Strict`] is applied before the call.
    Values(ValuesFn),
    /// On the argument expressions, which it evaluates itself, as far as
    /// it needs (`coalesce` stops at the first non-NULL).
    Lazy(LazyFn),
}

/// [`Eval::Values`]: the argument values in, the result out.
pub type ValuesFn = fn(&[Datum], &mut EvalEnv<'_>) -> Result<Datum, SqlError>;

/// [`Eval::Lazy`]: the argument expressions, the row and the environment
/// in, the result out.
pub type LazyFn = fn(&[Expr], &[Datum], &mut EvalEnv<'_>) -> Result<Datum, SqlError>;

impl FuncDef {
    /// A strict, immutable function without aliases, of fixed parameters
    /// `params` (all required), evaluated on its argument values.
    pub const fn fixed(name: &'static str, params: &'static [SqlType], result: SqlType, eval: ValuesFn) -> FuncDef {
        FuncDef {
            name,
            aliases: &[],
            signature: Signature::Fixed { params, required: params.len(), result },
            nulls: Nulls::Strict,
            volatility: Volatility::Immutable,
            eval: Eval::Values(eval),
            relation_arg: false,
        }
    }

    /// A strict, immutable function without aliases, resolved by `resolve`.
    pub const fn custom(name: &'static str, resolve: Resolver, eval: Eval) -> FuncDef {
        FuncDef {
            name,
            aliases: &[],
            signature: Signature::Custom(resolve),
            nulls: Nulls::Strict,
            volatility: Volatility::Immutable,
            eval,
            relation_arg: false,
        }
    }

    /// With other names.
    pub const fn aliases(mut self, aliases: &'static [&'static str]) -> FuncDef {
        self.aliases = aliases;
        self
    }

    /// With only the first `required` fixed parameters required.
    pub const fn required(mut self, required: usize) -> FuncDef {
        if let Signature::Fixed { params, result, .. } = self.signature {
            self.signature = Signature::Fixed { params, required, result };
        }
        self
    }

    /// Not strict: it sees NULL arguments.
    pub const fn called_on_null(mut self) -> FuncDef {
        self.nulls = Nulls::CalledOnNull;
        self
    }

    /// Of volatility `v`.
    pub const fn volatility(mut self, v: Volatility) -> FuncDef {
        self.volatility = v;
        self
    }

    /// Its first argument names a relation ([`FuncDef::relation_arg`]).
    pub const fn names_relation(mut self) -> FuncDef {
        self.relation_arg = true;
        self
    }

    /// Whether `name` calls this function.
    pub fn is_called(&self, name: &str) -> bool {
        self.name == name || self.aliases.contains(&name)
    }

    /// Evaluates a call with argument expressions `args` on `row`.
    #[inline]
    pub fn call(&self, args: &[Expr], row: &[Datum], env: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
        match self.eval {
            Eval::Lazy(f) => f(args, row, env),
            Eval::Values(f) => {
                let mut vals: [Datum; MAX_ARGS] = std::array::from_fn(|_| Datum::Null);
                let vals = vals.get_mut(..args.len()).ok_or_else(|| {
                    SqlError::new(
                        SqlState::INTERNAL_ERROR,
                        format!("{} called with {} arguments", self.name, args.len()),
                    )
                })?;
                for (v, a) in vals.iter_mut().zip(args) {
                    *v = a.eval(row, env)?;
                }
                if self.nulls == Nulls::Strict && vals.iter().any(Datum::is_null) {
                    return Ok(Datum::Null);
                }
                f(vals, env)
            }
        }
    }
}

// A definition is a unique static: its name (unique in the registry, which
// a test checks) identifies it.
impl PartialEq for FuncDef {
    fn eq(&self, other: &FuncDef) -> bool {
        self.name == other.name
    }
}

impl std::fmt::Debug for FuncDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}()", self.name)
    }
}
