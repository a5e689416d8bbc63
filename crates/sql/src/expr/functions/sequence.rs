//! Sequence functions: `nextval`, `currval`, `setval`, `lastval`
//! (PostgreSQL's `sequence.c`). The sequence is named by text, read as
//! PostgreSQL reads a `regclass` (folded to lower case unless quoted), or
//! by a `regclass` value (`nextval('s'::regclass)`, as `pg_get_expr`
//! prints a serial column's default), passed as its name; the
//! work is the session's ([`Services::sequences`](crate::expr::Services)),
//! see [`crate::sequence`].

use super::def::{FuncDef, Volatility};
use super::text::text_arg;
use crate::catalog::deparse::quote_ident;
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

/// `pg_get_serial_sequence(table, column)`: the sequence that a SERIAL or
/// identity column takes its values from, schema-qualified
/// (`public.t_id_seq`), or NULL. The table is read as a `regclass` name
/// (folded unless quoted, `public.` allowed); the column is taken as
/// written, as in PostgreSQL.
pub static GET_SERIAL_SEQUENCE: FuncDef =
    FuncDef::fixed("pg_get_serial_sequence", &[SqlType::Text, SqlType::Text], SqlType::Text, |args, env| {
        let table = text_arg(&args[0]);
        let table = sequence_name(table.strip_prefix("public.").unwrap_or(&table));
        let column = text_arg(&args[1]);
        let (seqs, _, db) = env.services.sequences();
        let owned = seqs.owned_by(db, &table);
        let seq = owned.iter().find(|s| s.owner.as_ref().is_some_and(|o| o.column == column));
        Ok(seq.map_or(Datum::Null, |s| Datum::Text(format!("public.{}", quote_ident(&s.name)))))
    })
    .volatility(Volatility::Stable);

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
