//! The index-expression compiler the SQL layer registers with the
//! engine's catalog, and the services an index expression evaluates with.
//!
//! An index expression calls only `IMMUTABLE` functions (checked by
//! `CREATE INDEX`), which read nothing of a session: it is evaluated with
//! [`KeyServices`], which answers the session questions no immutable
//! function asks with the defaults of a fresh session.

use super::define::{compile, scope_of};
use crate::error::SqlError;
use crate::expr::{EvalEnv, Expr, Services};
use crate::shared::Shared;
use crate::sync::atomic::AtomicBool;
use crate::value::SqlType;
use std::sync::{Arc, Weak};
use turnstile_engine::catalog::{IndexExprCompiler, IndexKeyExpr};
use turnstile_engine::types::{ColumnType, Value};
use turnstile_engine::EngineError;
use turnstile_lock::SqlState;

/// Registers the compiler with `shared`'s engine catalog.
pub(crate) fn register(shared: &Arc<Shared>) {
    let compiler = SqlIndexExprs { shared: Arc::downgrade(shared) };
    shared.engine.catalog().set_index_expr_compiler(Arc::new(compiler));
}

fn engine_error(e: SqlError) -> EngineError {
    EngineError::IndexExpression { code: e.code, message: e.message }
}

/// Compiles index expressions from their catalog text.
struct SqlIndexExprs {
    /// Weak: the catalog that holds the compiler belongs to the engine
    /// that `Shared` holds.
    shared: Weak<Shared>,
}

impl IndexExprCompiler for SqlIndexExprs {
    fn compile(
        &self,
        columns: &[(String, ColumnType)],
        sql: &str,
        ty: ColumnType,
    ) -> Result<Arc<dyn IndexKeyExpr>, EngineError> {
        let shared = self.shared.upgrade().ok_or_else(|| EngineError::IndexExpression {
            code: SqlState::ADMIN_SHUTDOWN,
            message: "the SQL engine is shutting down".into(),
        })?;
        let ast = crate::parse::parse_expr(sql).map_err(engine_error)?;
        let (expr, _) = compile(&scope_of("", columns), &ast).map_err(engine_error)?;
        let types = columns.iter().map(|(_, t)| SqlType::of_column(*t)).collect();
        Ok(Arc::new(CompiledKeyExpr { expr, ty, types, shared }))
    }
}

/// One compiled index expression.
struct CompiledKeyExpr {
    expr: Expr,
    /// The index column's type.
    ty: ColumnType,
    /// The row's column types (SQL).
    types: Vec<SqlType>,
    shared: Arc<Shared>,
}

impl IndexKeyExpr for CompiledKeyExpr {
    fn eval(&self, row: &[Value]) -> Result<Value, EngineError> {
        let datums: Vec<_> = row.iter().map(crate::value::Datum::from_engine).collect();
        debug_assert_eq!(datums.len(), self.types.len());
        let mut services = KeyServices::new(&self.shared);
        let mut env = EvalEnv { params: &[], aggs: &[], services: &mut services, outer: &[], session: None };
        let v = self.expr.eval(&datums, &mut env).map_err(engine_error)?;
        v.cast(SqlType::of_column(self.ty)).and_then(|d| d.to_engine(self.ty)).map_err(engine_error)
    }
}

/// The services of an index expression's evaluation: a fresh session's.
struct KeyServices<'a> {
    shared: &'a Shared,
    cancel: AtomicBool,
    sequences: crate::sequence::SeqSession,
}

impl<'a> KeyServices<'a> {
    fn new(shared: &'a Shared) -> KeyServices<'a> {
        KeyServices { shared, cancel: AtomicBool::new(false), sequences: crate::sequence::SeqSession::default() }
    }
}

fn not_in_index(what: &str) -> SqlError {
    SqlError::new(SqlState::INVALID_OBJECT_DEFINITION, format!("{what} cannot be used in an index expression"))
}

impl Services for KeyServices<'_> {
    fn pid(&self) -> i32 {
        0
    }

    fn statement_timestamp(&self) -> i64 {
        self.shared.started
    }

    fn random(&mut self) -> f64 {
        0.0
    }

    fn setting(&self, _name: &str) -> Result<Option<String>, SqlError> {
        Err(not_in_index("current_setting"))
    }

    fn set_setting(&mut self, _name: &str, _value: &str, _local: bool) -> Result<String, SqlError> {
        Err(not_in_index("set_config"))
    }

    fn signal_backend(&mut self, _pid: i32, _terminate: bool, _timeout_ms: i64) -> Result<bool, SqlError> {
        Err(not_in_index("signalling a backend"))
    }

    fn cancel_flag(&self) -> &AtomicBool {
        &self.cancel
    }

    fn database(&self) -> &str {
        ""
    }

    fn relation_size(&self, _name: &str) -> Result<i64, SqlError> {
        Err(not_in_index("a relation's size"))
    }

    fn user(&self) -> &str {
        ""
    }

    fn shared(&self) -> &Shared {
        self.shared
    }

    fn settings(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    fn sequences(&mut self) -> (&crate::sequence::Sequences, &mut crate::sequence::SeqSession, u32) {
        (&self.shared.sequences, &mut self.sequences, 0)
    }

    fn functions(&self) -> &'static [&'static crate::expr::FuncDef] {
        crate::expr::functions::registry::FUNCTIONS
    }
}
