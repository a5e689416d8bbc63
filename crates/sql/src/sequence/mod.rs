//! Sequences: `CREATE`/`ALTER`/`DROP SEQUENCE`, `nextval`, `currval`,
//! `setval`, `lastval`, and the columns that use them (`SERIAL`,
//! `BIGSERIAL`, `GENERATED … AS IDENTITY`).
//!
//! A sequence is a hot shared object: every insert into a table with a
//! generated key takes its next value. PostgreSQL serialises `nextval` on
//! the sequence page's buffer content lock and logs 32 values ahead;
//! turnstile's `classic` profile does the same, and `scalable` hands each
//! session a block of values (`txn.sequence_block`) taken by one
//! compare-and-swap, so a `nextval` takes no shared lock in the common
//! case. Both keep PostgreSQL's guarantees: values are unique, increasing
//! within a session, never handed out twice after a restart or a crash,
//! and not transactional (a rolled-back `nextval` is not given again).
//!
//! - [`options`]: the definition and its `22023` checks;
//! - [`state`]: the shared state word, the reservation, logging ahead;
//! - [`registry`]: every sequence by database and name, and its file;
//! - [`session`]: a session's blocks, `currval` and `lastval`;
//! - `syntax`: the options as written, and `ALTER SEQUENCE`'s text;
//! - `ddl`: the statements, and the sequences of `SERIAL` and identity
//!   columns;
//! - `column`: a sequence attached to an existing column (`ALTER TABLE …
//!   ALTER COLUMN … SET DEFAULT` / `ADD GENERATED … AS IDENTITY`).

pub(crate) mod column;
pub(crate) mod ddl;
mod file;
pub mod options;
pub mod registry;
pub mod session;
pub mod state;
pub(crate) mod syntax;

pub use options::{SeqDef, SeqOption, SeqType};
pub use registry::Sequences;
pub use session::{sequence_name, SeqSession};
pub use state::{Block, Identity, Owner, Sequence};
