//! Sequence functions: `nextval`, `currval`, `setval`, `lastval`
//! (PostgreSQL's `sequence.c`). The sequence is named by text, read as
//! PostgreSQL reads a `regclass` (folded to lower case unless quoted), or
//! by a `regclass` value (`nextval('s'::regclass)`, as `pg_get_expr`
//! prints a serial column's default), passed as its name; the
//! work is the session's ([`Services::sequences`](crate::expr::Services)),
//! see [`crate::sequence`].

use super::def::{FuncDef, Volatility};
use super::text::text_arg;
use crate::error::SqlError;
use crate::expr::EvalEnv;
use crate::sequence::sequence_name;
use crate::value::{Datum, SqlType};

/// `nextval(regclass)`: the sequence's next value for this session.
pub static NEXTVAL: FuncDef = FuncDef::fixed("nextval", &[SqlType::Text], SqlType::Int8, |args, env| {
    let name = sequence_name(&text_arg(&args[0]));
    let (seqs, session, db) = env.services.sequences();
    Ok(Datum::Int(session.nextval(seqs, db, &name)?))
})
.volatility(Volatility::Volatile)
.names_relation();

/// `currval(regclass)`: the value `nextval` last gave this session (`55000`
/// before the first).
pub static CURRVAL: FuncDef = FuncDef::fixed("currval", &[SqlType::Text], SqlType::Int8, |args, env| {
    let name = sequence_name(&text_arg(&args[0]));
    let (seqs, session, db) = env.services.sequences();
    Ok(Datum::Int(session.currval(seqs, db, &name)?))
})
.volatility(Volatility::Volatile)
.names_relation();

/// `lastval()`: the value the session's last `nextval` gave, of any
/// sequence.
pub static LASTVAL: FuncDef = FuncDef::fixed("lastval", &[], SqlType::Int8, |_, env| {
    let (seqs, session, _) = env.services.sequences();
    Ok(Datum::Int(session.lastval(seqs)?))
})
.volatility(Volatility::Volatile);

/// `setval(regclass, value [, is_called])`.
pub static SETVAL: FuncDef =
    FuncDef::fixed("setval", &[SqlType::Text, SqlType::Int8, SqlType::Bool], SqlType::Int8, setval)
        .required(2)
        .volatility(Volatility::Volatile)
        .names_relation();

fn setval(args: &[Datum], env: &mut EvalEnv<'_>) -> Result<Datum, SqlError> {
    let name = sequence_name(&text_arg(&args[0]));
    let Datum::Int(v) = args[1] else { return Ok(Datum::Null) };
    let called = !matches!(args.get(2), Some(Datum::Bool(false)));
    let (seqs, session, db) = env.services.sequences();
    Ok(Datum::Int(session.setval(seqs, db, &name, v, called)?))
}
